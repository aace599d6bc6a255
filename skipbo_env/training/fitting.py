"""The fitting loop both network recipes share (:mod:`.turn_recipe`, :mod:`.value_recipe`).

A recipe prepares its rows and hands over what differs as a :class:`FitPlan` (the batch loss, the
held-out figures, the sizes). :func:`split_holdout` holds out whole games; :func:`fit_mlp` fits a
ReLU network with Adam, seeded, writing a ``fit.csv`` row per epoch, and keeps the epoch with the
lowest held-out figure ``keep`` (or the last). A fit that stops being finite is refused with a
:class:`~skipbo_env.rules.ConfigError` naming ``fit.learning_rate``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..records import write_bytes_atomic
from ..rules import ConfigError
from .threads import torch_threads

if TYPE_CHECKING:
    import torch

Layers = list[tuple[np.ndarray, np.ndarray]]
"""A network's linear layers, (weight, bias) each, as the network files store them."""

BatchLoss = Callable[["torch.nn.Module", np.ndarray], tuple["torch.Tensor", int]]
"""``(net, rows) -> (mean loss, weight)``: the loss to step on, and the weight of the batch in
the epoch's reported train loss (its rows, or 1 for a mean over batches)."""

HeldOut = Callable[["torch.nn.Module"], dict[str, float]]
"""``net -> figures`` on the held-out rows (called in evaluation mode, without gradients)."""


@dataclass(frozen=True)
class FitPlan:
    """How a recipe's network is fitted (the shared loop's settings)."""

    inputs: int
    """Input size of the network."""
    hidden: tuple[int, ...]
    """Hidden layer sizes (ReLU); the output is one number."""
    epochs: int
    batch_size: int
    learning_rate: float
    weight_decay: float
    seed: int
    """Seeds torch (the initial weights, dropout)."""
    threads: int = 1
    """Torch threads: same seed and threads, same network (on CPU)."""
    dropout: float | None = None
    """A dropout layer of this rate after each hidden layer; ``None``: no dropout layers."""
    cosine: bool = False
    """Cosine decay of the step size over the epochs."""
    keep: str | None = None
    """The held-out figure whose lowest epoch is kept; ``None``: the last epoch's network."""
    columns: tuple[tuple[str, str], ...] = ()
    """``fit.csv`` columns after ``epoch,seconds,train_loss``: (column, held-out figure)."""
    init: Layers | None = None
    """Starting weights (one (weight, bias) per linear layer, of the plan's sizes); ``None``: torch's
    seeded initialisation."""


@dataclass(frozen=True)
class Fitted:
    """A fit's outcome: the chosen epoch's layers and held-out figures."""

    layers: Layers
    epoch: int
    figures: dict[str, float]


def split_holdout(keys: np.ndarray, share: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The held-out and the training rows (index arrays): a share ``share`` of the games drawn with
    ``rng`` (``keys``: each row's game; whole games, as the rows of one game are alike)."""
    games = np.unique(keys)
    held = games[:0]
    if share > 0:
        held = games[rng.choice(len(games), max(1, int(len(games) * share)), replace=False)]
    is_held = np.isin(keys, held)
    val, train = np.flatnonzero(is_held), np.flatnonzero(~is_held)
    if len(train) == 0:
        raise ConfigError("fit.holdout", "holds out every game: nothing left to fit")
    return val, train


def fit_mlp(plan: FitPlan, train: np.ndarray, val: np.ndarray, rng: np.random.Generator, batch_loss: BatchLoss,
            held_out: HeldOut, log: Path | None = None, progress: bool = True) -> Fitted:
    """Fit the plan's network on the rows ``train`` (shuffled by ``rng``), measuring ``held_out`` on
    ``val`` after each epoch; ``fit.csv`` rows go to ``log``."""
    with torch_threads(plan.threads):
        return _fit(plan, train, val, rng, batch_loss, held_out, log, progress)


def _fit(plan: FitPlan, train: np.ndarray, val: np.ndarray, rng: np.random.Generator, batch_loss: BatchLoss,
         held_out: HeldOut, log: Path | None, progress: bool) -> Fitted:
    import torch  # the train extra, loaded when a fit runs (the command line's --help stays quick)

    torch.manual_seed(plan.seed)
    net = _network(plan)
    opt = torch.optim.Adam(net.parameters(), lr=plan.learning_rate, weight_decay=plan.weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, plan.epochs) if plan.cosine else None
    lines = [",".join(["epoch", "seconds", "train_loss", *(column for column, _ in plan.columns)])]
    chosen: Fitted | None = None
    chosen_score = math.nan
    start = time.monotonic()

    def record(epoch: int, seconds: float, train_loss: float, figures: dict[str, float]) -> str:
        """Append the epoch's ``fit.csv`` line; its held-out figures as the progress line shows them."""
        shown = [figures.get(key, math.nan) for _, key in plan.columns]
        lines.append(",".join([str(epoch), f"{seconds:.1f}", *(f"{x:.4f}" for x in [train_loss, *shown])]))
        return ", ".join(f"{column} {x:.4f}" for (column, _), x in zip(plan.columns, shown, strict=True))

    if plan.init is not None and len(val):  # the starting network's figures, as epoch 0
        text = record(0, 0.0, math.nan, _measure(net, held_out))
        if progress:
            print(f"fit start: {text}", flush=True)
    for epoch in range(1, plan.epochs + 1):
        t0 = time.monotonic()
        train_loss = _epoch(net, opt, rng.permutation(train), plan, batch_loss, epoch if progress else 0)
        _check_finite(net, train_loss, epoch, plan)
        if sched is not None:
            sched.step()
        figures = _measure(net, held_out) if len(val) else {}
        text = record(epoch, time.monotonic() - t0, train_loss, figures)
        if progress:
            eta = (time.monotonic() - start) / epoch * (plan.epochs - epoch)
            print(f"fit epoch {epoch}/{plan.epochs}: train loss {train_loss:.4f}, {text}, ETA {eta:.0f} s", flush=True)
        if plan.keep is not None:
            score = figures.get(plan.keep, math.nan)
            if chosen is None or math.isnan(score) or score < chosen_score:
                chosen, chosen_score = Fitted(_layers(net), epoch, figures), score
        elif epoch == plan.epochs:
            chosen = Fitted(_layers(net), epoch, figures)
    assert chosen is not None  # epochs >= 1 (the recipes' settings check it)
    if log is not None:
        write_bytes_atomic(log, ("\n".join(lines) + "\n").encode())
    return chosen


def _check_finite(net: torch.nn.Module, train_loss: float, epoch: int, plan: FitPlan) -> None:
    """Refuse a diverged fit: a non-finite train loss or weight after ``epoch`` is a
    :class:`ConfigError` naming the step size (the setting that makes a fit diverge)."""
    import torch  # the train extra (see fit_mlp)

    finite = math.isfinite(train_loss) and all(bool(torch.isfinite(p).all()) for p in net.parameters())
    if not finite:
        raise ConfigError("fit.learning_rate", f"the fit diverged in epoch {epoch} (train loss {train_loss}, "
                                               f"non-finite weights or loss) at learning rate {plan.learning_rate:g}; "
                                               "lower fit.learning_rate")


def _network(plan: FitPlan) -> torch.nn.Sequential:
    import torch  # the train extra (see fit_mlp)

    sizes = [plan.inputs, *plan.hidden]
    layers: list[torch.nn.Module] = []
    for a, b in zip(sizes, sizes[1:], strict=False):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        if plan.dropout is not None:
            layers.append(torch.nn.Dropout(plan.dropout))
    layers.append(torch.nn.Linear(sizes[-1], 1))
    net = torch.nn.Sequential(*layers)
    if plan.init is not None:
        linear = [m for m in net if isinstance(m, torch.nn.Linear)]
        shapes = [(tuple(m.weight.shape), tuple(m.bias.shape)) for m in linear]
        given = [(tuple(np.shape(weight)), tuple(np.shape(bias))) for weight, bias in plan.init]
        if given != shapes:
            raise ConfigError("fit.init", f"the starting network's layers {given} are not the plan's {shapes} "
                                          "(set fit.hidden to its hidden sizes)")
        with torch.no_grad():
            for m, (weight, bias) in zip(linear, plan.init, strict=True):
                m.weight.copy_(torch.as_tensor(np.asarray(weight, np.float32)))
                m.bias.copy_(torch.as_tensor(np.asarray(bias, np.float32)))
    return net


def _epoch(net: torch.nn.Module, opt: torch.optim.Optimizer, order: np.ndarray, plan: FitPlan,
           batch_loss: BatchLoss, epoch: int) -> float:
    """One pass over ``order`` in batches; the mean train loss (weighted as ``batch_loss`` says).
    With ``epoch`` (0: quiet), a progress line every 100 steps."""
    total, count = 0.0, 0
    steps = math.ceil(len(order) / plan.batch_size)
    t0 = time.monotonic()
    for k, j in enumerate(range(0, len(order), plan.batch_size)):
        loss, weight = batch_loss(net, order[j:j + plan.batch_size])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += float(loss.item()) * weight
        count += weight
        if epoch and (k + 1) % 100 == 0:
            per_step = (time.monotonic() - t0) / (k + 1)
            eta = (steps - k - 1) * per_step + (plan.epochs - epoch) * steps * per_step
            print(f"fit epoch {epoch}/{plan.epochs}: step {k + 1}/{steps}, train loss {total / count:.4f}, "
                  f"ETA {eta:.0f} s", flush=True)
    return total / count


def _measure(net: torch.nn.Module, held_out: HeldOut) -> dict[str, float]:
    import torch  # the train extra (see fit_mlp)

    net.eval()
    with torch.no_grad():
        figures = held_out(net)
    net.train()
    return figures


def _layers(net: torch.nn.Module) -> Layers:
    import torch  # the train extra (see fit_mlp)

    return [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy())
            for m in net.modules() if isinstance(m, torch.nn.Linear)]


__all__ = ["FitPlan", "Fitted", "Layers", "fit_mlp", "split_holdout"]
