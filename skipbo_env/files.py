"""Reading files a user hands us: regular files only, never more than a stated size.

Every file the project reads on a user's word (game records, configs, agent and network
files, training shards) goes through :func:`read_bounded` or :func:`check_readable` first, so
that a FIFO or a device (``/dev/zero``) is refused at once instead of blocking or filling
memory, and a file larger than its kind can be is refused before it is read. The standard
library only: the rules core's neighbours import it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

KIB = 1024
MIB = 1024 * KIB


class FileReadError(ValueError):
    """A file that cannot be read as asked: missing, not a regular file, too large, unreadable.

    ``path`` is the file, ``problem`` the reason in words; ``str()`` names both.
    """

    def __init__(self, path: str | os.PathLike, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def _a(what: str) -> str:
    """``what`` with its indefinite article ("a record", "an agent file")."""
    return f"{'an' if what[:1].lower() in 'aeiou' else 'a'} {what}"


def _open_regular(path: str | os.PathLike, what: str) -> tuple[int, int]:
    """An open descriptor of ``path`` and its size, if it is a regular file; else :class:`FileReadError`.

    Opened without blocking (a FIFO opens at once and is then refused), then checked with
    ``fstat`` on the open descriptor, so the file checked is the file read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileReadError(path, f"no such {what}") from None
    except IsADirectoryError:
        raise FileReadError(path, f"is a directory, not {_a(what)}") from None
    except OSError as exc:
        raise FileReadError(path, f"cannot be read as {_a(what)}: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file (a pipe, device or socket)"
        raise FileReadError(path, f"is {kind}; {_a(what)} must be a regular file")
    return fd, info.st_size


def check_readable(path: str | os.PathLike, limit: int, what: str) -> int:
    """The size of ``path`` if it is a regular file of at most ``limit`` bytes; else :class:`FileReadError`.

    For readers that hand the path to a library (safetensors, numpy) after this check.
    """
    fd, size = _open_regular(path, what)
    os.close(fd)
    _check_size(path, size, limit, what)
    return size


def _check_size(path: str | os.PathLike, size: int, limit: int, what: str) -> None:
    if size > limit:
        raise FileReadError(path, f"is {size:,} bytes, more than {_a(what)} can be ({limit:,} bytes at most)")


def read_bounded(path: str | os.PathLike, limit: int, what: str) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes (``what`` names its kind in errors).

    Reads at most ``limit + 1`` bytes whatever the file claims, so a file that grows while it is
    read is refused too.
    """
    fd, size = _open_regular(path, what)
    try:
        _check_size(path, size, limit, what)
        chunks = []
        left = limit + 1
        while left > 0:
            try:
                chunk = os.read(fd, min(left, MIB))
            except OSError as exc:
                raise FileReadError(path, f"cannot be read as {_a(what)}: {exc.strerror or exc}") from None
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    _check_size(path, len(data), limit, what)
    return data


def read_text_bounded(path: str | os.PathLike, limit: int, what: str) -> str:
    """:func:`read_bounded` decoded as UTF-8; a file that is not UTF-8 is a :class:`FileReadError`."""
    data = read_bounded(path, limit, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileReadError(path, f"is not UTF-8 text (byte {exc.start}); is it {_a(what)}?") from None


def read_prefix(path: str | os.PathLike, count: int, what: str) -> bytes:
    """The first ``count`` bytes of ``path`` (fewer if it is shorter), a regular file of any size;
    else :class:`FileReadError`. For telling file formats apart by their first bytes."""
    fd, _ = _open_regular(path, what)
    try:
        return os.read(fd, count)
    except OSError as exc:
        raise FileReadError(path, f"cannot be read as {_a(what)}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def is_regular_file(path: str | os.PathLike) -> bool:
    """True when ``path`` names an existing regular file (never opens it: a FIFO is False)."""
    try:
        return stat.S_ISREG(Path(path).stat().st_mode)
    except (OSError, ValueError):
        return False
