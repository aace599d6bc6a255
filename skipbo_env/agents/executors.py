"""Where chunks of games run: this process, a local pool of processes, or Ray tasks on a cluster.

A :class:`ChunkRunner` (:class:`InProcess`, :class:`LocalPool`, :class:`RayTasks`) runs chunks whose
results do not depend on where or in which order they run and hands back each result as its chunk
finishes; :func:`open_runner` picks one. Ray is imported only for ``ray`` (docs/scaling.md).
"""

from __future__ import annotations

import atexit
import ctypes
import os
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from ..extras import missing_extra

MAX_RETRIES = 3
"""Times Ray runs a chunk again when its worker process or node dies (not when the chunk raises)."""


class ChunkRunner:
    """Runs chunks ``fn(args)`` (``fn`` a picklable top-level function) and yields
    ``(chunk index, result)`` as each finishes, every chunk exactly once."""

    width: int
    """How many chunks run at once (callers split their games into at least this many chunks)."""

    def run(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        raise NotImplementedError

    def prepare(self, fn: Callable[[Any], Any], arg: Any) -> None:
        """Have each worker run ``fn(arg)`` before the next chunks, and return at once: a warm-up that
        loads what the first chunks need while the caller does other work (local pools; nothing for
        :class:`InProcess` and Ray). Its result, or its error, is dropped: a real problem meets the
        chunks again, which raise it."""

    def close(self) -> None:
        """Release the workers (nothing for :class:`InProcess`)."""

    def __enter__(self) -> ChunkRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InProcess(ChunkRunner):
    """Every chunk in this process, in order."""

    width = 1

    def run(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        for i, chunk in enumerate(chunks):
            yield i, fn(chunk)


class LocalPool(ChunkRunner):
    """Chunks in ``workers`` spawned processes of this machine (one torch thread each; they end with
    this process, however it ends). Keep one open across several runs to start the processes, and
    load the agents in them, once."""

    def __init__(self, workers: int) -> None:
        self.width = workers
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"),
                                         initializer=_init_worker, initargs=(os.getpid(),))

    def prepare(self, fn: Callable[[Any], Any], arg: Any) -> None:
        for _ in range(self.width):  # one each: a task takes far longer than a free worker needs to pick one up
            self._pool.submit(fn, arg)

    def run(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        index: dict[Future, int] = {self._pool.submit(fn, chunk): i for i, chunk in enumerate(chunks)}
        pending = set(index)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield index[future], future.result()
        finally:
            for future in pending:  # an error or Ctrl-C here: the queued chunks never start
                future.cancel()

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


class RayTasks(ChunkRunner):
    """Chunks as Ray tasks (1 CPU each) on the cluster at ``address`` (``auto``: the one that
    ``ray start`` made on this machine; else ``HOST:PORT`` or ``ray://HOST:PORT``). Connects when
    made (unless this process is already connected) and disconnects on :meth:`close` if it
    connected. :attr:`nodes` records the node that ran each chunk of the last :meth:`run`."""

    def __init__(self, address: str) -> None:
        check_ray_address(address)
        ray = _import_ray()
        self._connected_here = not ray.is_initialized()
        if self._connected_here:
            _check_listening(address)
            try:
                ray.init(address=address, logging_level="WARNING")
            except ConnectionError as exc:
                raise ConnectionError(
                    f"cannot join a Ray cluster at {address!r} ({exc}): start one with `ray start --head`; "
                    "a cluster with token authentication (Ray's default for `ray start` on one machine) "
                    "also needs RAY_AUTH_MODE=token and its token here (docs/scaling.md)") from None
        self.address = address
        self.width = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.nodes: dict[int, str] = {}

    def run(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        ray = _import_ray()
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False,
                          scheduling_strategy="SPREAD")(_ray_chunk)
        fn_ref = ray.put(fn)
        index = {task.remote(fn_ref, chunk): i for i, chunk in enumerate(chunks)}
        pending = list(index)
        self.nodes = {}
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    node, result = _ray_result(ray, ref, index[ref], len(chunks))
                    self.nodes[index[ref]] = node
                    yield index[ref], result
        finally:
            for ref in pending:  # an error or Ctrl-C here: stop the cluster's work on this run
                ray.cancel(ref, force=True)

    def close(self) -> None:
        if self._connected_here:
            _import_ray().shutdown()
            self._connected_here = False


RAY_ADDRESS = re.compile(r"auto|(ray://)?[A-Za-z0-9._-]+:[0-9]{1,5}")
"""What a Ray address may be: ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``."""


def check_ray_address(address: object) -> str:
    """``address`` if it is a Ray address (:data:`RAY_ADDRESS`), else ValueError saying what is."""
    if not isinstance(address, str) or not RAY_ADDRESS.fullmatch(address):
        shown = repr(address) if len(repr(address)) <= 80 else repr(address)[:60] + "..."
        raise ValueError(f"a Ray address is auto, HOST:PORT or ray://HOST:PORT, got {shown}")
    return address


MAX_WORKERS = 1024
"""Most local worker processes a runner starts."""


def open_runner(workers: int, ray: str | None = None) -> ChunkRunner:
    """Ray tasks on the cluster at ``ray`` when given, else ``workers`` local processes
    (:class:`InProcess` for 1). Close it when done (it is a context manager)."""
    if ray is not None:
        return RayTasks(ray)
    if type(workers) is not int or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers must be an int in 1..{MAX_WORKERS}, got {workers!r}")
    return InProcess() if workers == 1 else LocalPool(workers)


def run_chunks(fn: Callable[[Any], Any], chunks: Sequence[Any], runner: ChunkRunner | None, workers: int,
               ray: str | None = None) -> Iterator[tuple[int, Any]]:
    """``runner.run(fn, chunks)``; with no ``runner``, one opened by :func:`open_runner` for this run
    (at most as many local processes as chunks) and closed after it."""
    if runner is not None:
        yield from runner.run(fn, chunks)
        return
    with open_runner(max(1, min(workers, len(chunks))), ray) as own:
        yield from own.run(fn, chunks)


# ------------------------------------------------------------------ the workers
def _import_ray() -> Any:
    try:
        import ray  # the ray extra: chunks as tasks on a Ray cluster
    except ImportError as exc:
        raise missing_extra(exc, "ray", "running on a Ray cluster (--ray)") from exc
    return ray


CONNECT_TIMEOUT_S = 10.0
"""Seconds to wait for a cluster's ``HOST:PORT`` to accept a connection and answer before Ray is asked to join it."""
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
"""An HTTP/2 client's opening (the preface and an empty SETTINGS frame); Ray's GCS and Ray Client speak gRPC."""


def _check_listening(address: str) -> None:
    """ConnectionError unless a gRPC server (Ray's GCS or Ray Client) answers at ``address``
    (``HOST:PORT``, with or without ``ray://``; ``auto``: the address Ray would use, from
    ``RAY_ADDRESS`` or the cluster ``ray start`` made on this machine). Where nothing listens, or
    something else does, ``ray.init`` retries for many minutes before it gives up."""
    source = ""
    if address == "auto":
        resolved, source = _auto_address()
        if resolved is None:
            return  # no cluster recorded here: ray.init says so at once
        address = resolved
    host, port = address.removeprefix("ray://").rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S) as conn:
            conn.sendall(_HTTP2_PREFACE)
            answer = _read_some(conn, 9)
    except OSError as exc:
        raise ConnectionError(f"no Ray cluster at {address!r}{source}: nothing accepts connections there "
                              f"({exc.strerror or exc}); start one with `ray start --head` (docs/scaling.md)") from None
    if len(answer) < 9 or answer[3] != 0x04:  # an HTTP/2 server answers with its SETTINGS frame
        raise ConnectionError(f"no Ray cluster at {address!r}{source}: the server there does not speak Ray's "
                              "protocol (gRPC); give the address `ray start --head` printed (docs/scaling.md)")


def _read_some(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _auto_address() -> tuple[str | None, str]:
    """The address ``ray.init(address="auto")`` would join, and where it came from (for messages)."""
    env = os.environ.get("RAY_ADDRESS", "")
    if env and env != "auto":
        if not RAY_ADDRESS.fullmatch(env):
            raise ValueError(f"RAY_ADDRESS must be HOST:PORT or ray://HOST:PORT, got {env[:80]!r}")
        return env, " (from RAY_ADDRESS)"
    recorded = Path(os.environ.get("RAY_TMPDIR", "/tmp")) / "ray" / "ray_current_cluster"
    try:
        text = recorded.read_text(encoding="utf-8", errors="replace").strip()[:200]
    except OSError:
        return None, ""
    if not RAY_ADDRESS.fullmatch(text) or text == "auto":
        return None, ""
    return text, f" (the cluster recorded in {recorded})"


def _ray_result(ray: Any, ref: Any, chunk: int, chunks: int) -> tuple[str, Any]:
    """The node and result of chunk ``chunk``'s finished task. A chunk's own exception is raised
    as it is (Ray's error is also an instance of the chunk's exception type); a chunk whose worker
    or node died more often than Ray runs it again is a RuntimeError naming the chunk."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError:
        raise
    except ray.exceptions.RayError as exc:
        raise RuntimeError(f"chunk {chunk} of {chunks} was lost (its worker or node died, "
                           f"{MAX_RETRIES} retries spent): {exc}") from exc


def _ray_chunk(fn: Callable[[Any], Any], chunk: Any) -> tuple[str, Any]:
    """One chunk in a Ray worker process: the node it ran on and ``fn(chunk)``."""
    _limit_threads()
    import ray  # the ray extra (this runs in a Ray worker)

    return ray.get_runtime_context().get_node_id(), fn(chunk)


_THREADS_LIMITED = False


def _limit_threads() -> None:
    """One worker per core: torch must not start threads of its own (once per process)."""
    global _THREADS_LIMITED
    if _THREADS_LIMITED:
        return
    _THREADS_LIMITED = True
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    try:
        import torch  # the train extra; without it there is nothing to limit
    except ImportError:
        return
    torch.set_num_threads(1)


def _init_worker(parent: int) -> None:
    """A local pool's worker: one torch thread, it ends with its ``parent`` process, however
    that ends (:func:`_die_with_parent`), and it ends at once when the pool closes (:func:`end_quickly`)."""
    _die_with_parent(parent)
    _limit_threads()
    atexit.register(end_quickly)


def end_quickly(code: int = 0) -> None:
    """End this worker process now, without Python's teardown of its modules: with torch loaded that
    teardown takes half a second to a second, and a worker has nothing to save (its results went
    back through its pipe). Flushes stdout and stderr first. A pool worker runs it at exit (registered
    by :func:`_init_worker`: exit handlers of modules its chunks load later still run before it, those
    registered earlier and the module teardown do not); the rollout worker calls it when told to stop."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # closed or replaced streams
            pass
    os._exit(code)


_PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal a process gets when the thread that started it ends."""


def _die_with_parent(parent: int) -> None:
    """End this process when process ``parent`` ends, even by ``kill -9`` (else a worker lives on,
    idle, forever): on Linux the kernel sends it SIGKILL (``prctl(PR_SET_PDEATHSIG)``; a parent
    gone before the request is seen by its id), elsewhere a daemon thread polls the parent's id."""
    if sys.platform.startswith("linux"):
        try:
            armed = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) == 0
        except (OSError, AttributeError):
            armed = False
        if armed:
            if os.getppid() != parent:
                os._exit(1)
            return
    threading.Thread(target=_watch_parent, args=(parent,), name="watch-parent", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


__all__ = ["MAX_RETRIES", "RAY_ADDRESS", "check_ray_address", "ChunkRunner", "InProcess", "LocalPool", "RayTasks",
           "open_runner", "run_chunks"]
