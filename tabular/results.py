"""What the learners return, and numpy's ``size=`` convention for the run axis.

``runs=None`` (the default of every learner) computes one run and returns arrays
without a run axis; ``runs=n`` computes ``n`` independent runs and returns arrays
with a leading axis of length ``n``, also for ``n = 1``. :meth:`LearningResult.run`
picks one run out of a multi-run result, as a result of the same kind without the
axis, so ``res.run(i).policy`` works for every learner.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, Self

import numpy as np

from tabular.checks import check_positive_int


def check_runs(runs: int | None) -> int:
    """The number of runs to compute: 1 for ``runs=None``, else ``runs`` (an int >= 1)."""
    return 1 if runs is None else check_positive_int("runs", runs)


def with_run_axis(array: np.ndarray | None, runs: int | None):
    """A kernel's per-run output ``[n, ...]`` in the public shape: without the run axis
    when ``runs is None``, as it is otherwise."""
    if array is None or runs is not None:
        return array
    return array[0]


#: The metadata of a result field that is the same for every run (it never has a run
#: axis): ``field(metadata=SHARED)``, spelt out so that a type checker sees the field.
SHARED = {"shared": True}


def short_repr(obj) -> str:
    """``Name(field=value, ...)`` of the dataclass instance ``obj``: an array as its dtype
    and shape (``float64[16, 4]``), a NumPy scalar as the Python number it holds, anything
    else by its ``repr``; the positional fields first, then the keyword-only ones."""
    shown = sorted((f for f in dataclasses.fields(obj) if f.repr), key=lambda f: bool(f.kw_only))
    inner = ", ".join(f"{f.name}={_brief(getattr(obj, f.name))}" for f in shown)
    return f"{type(obj).__name__}({inner})"


def _brief(value) -> str:
    """``value`` as :func:`short_repr` shows it."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype}[{', '.join(map(str, value.shape))}]"
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


@dataclass(frozen=True, eq=False, repr=False)
class RunsResult:
    """The base of every result: a frozen dataclass whose array fields share a leading
    run axis when computed with ``runs=n``; a subclass says by ``runs`` whether it has
    one.

    It is shown by :func:`short_repr` (each array by its dtype and shape, not its
    numbers). A subclass keeps that by being declared
    ``@dataclass(frozen=True, eq=False, repr=False)``: ``@dataclass`` writes a
    ``__repr__`` of its own into every class it decorates unless told ``repr=False``.
    """

    __repr__ = short_repr

    #: ``(field, ndim)``: the array field that tells whether there is a run axis, and its
    #: number of dimensions in a single-run result (a subclass may instead override
    #: :attr:`runs`).
    run_axis_of: ClassVar[tuple[str, int] | None] = None

    @property
    def runs(self) -> int | None:
        """``None`` for a single-run result (no run axis), else the number of runs."""
        if self.run_axis_of is None:
            raise NotImplementedError(f"{type(self).__name__} says neither run_axis_of nor runs")
        name, single_ndim = self.run_axis_of
        array = getattr(self, name)
        return None if array.ndim == single_ndim else array.shape[0]

    def run(self, i: int) -> Self:
        """Run ``i`` of a multi-run result, as a single-run result of the same kind."""
        if self.runs is None:
            raise ValueError("this result holds a single run (it has no run axis); "
                             "call the learner with runs=n to get several")
        if not -self.runs <= i < self.runs:
            raise IndexError(f"run {i} is out of range for {self.runs} runs")
        picked = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            shared_field = f.metadata.get("shared", False)
            picked[f.name] = (value if shared_field or value is None
                              else value.run(i) if isinstance(value, RunsResult) else value[i])
        return type(self)(**picked)


@dataclass(frozen=True, eq=False, repr=False)
class LearningResult(RunsResult):
    """What every learner returns: per-episode statistics, with a leading run axis
    when the learner was called with ``runs=n``.

    ``episode_returns``: the undiscounted sum of rewards of each episode
    (``[episodes]`` or ``[runs, episodes]``), the book's "sum of rewards during
    episode"; ``episode_lengths``: its number of steps (int64). An episode cut at
    ``max_steps`` has length ``max_steps``.
    """

    run_axis_of = ("episode_returns", 1)

    episode_returns: np.ndarray
    episode_lengths: np.ndarray

    @property
    def episodes(self) -> int:
        """The number of episodes of each run."""
        return self.episode_returns.shape[-1]
