"""Torch threads for a training process, with results that do not depend on the run."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run torch on ``threads`` intra-op threads with deterministic algorithms (restored after).

    With two threads and the cores busy, the same behaviour-cloning fit gave different weights
    from run to run; with ``torch.use_deterministic_algorithms(True)`` every run gave the same
    bits, and at one thread the same bits as without it (docs/research/training.md).
    """
    import torch  # the train extra (this module is imported by the trainer only)

    before = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before)
