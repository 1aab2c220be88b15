"""What the planning learners return: :class:`PlanningResult` (Dyna-Q, Dyna-Q+,
prioritized sweeping) and :class:`ExpectedUpdatesResult` (expected updates spread
uniformly or along trajectories, section 8.6)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tabular.learn.results import ControlResult
from tabular.results import SHARED, RunsResult
from tabular.solve.results import short_repr


@dataclass(frozen=True, eq=False, repr=False)
class PlanningResult(ControlResult):
    """What the planning learners return: a :class:`~tabular.ControlResult` and
    ``episode_updates``.

    ``Q`` ``[S, A]``; ``episode_returns`` (undiscounted sum of rewards) and
    ``episode_lengths`` (steps) ``[episodes]``; ``episode_updates`` (int64
    ``[episodes]``): the updates of ``Q`` made in each episode, real and planned; each
    with a leading run axis when ``runs=n``. ``policy``, ``V``, ``runs``, ``episodes``
    and ``run(i)`` are those of a ``ControlResult``; ``control`` is the result as one.
    """

    episode_updates: np.ndarray

    __repr__ = short_repr

    @property
    def control(self) -> ControlResult:
        """The result without ``episode_updates``, as every control learner returns it."""
        return ControlResult(self.episode_returns, self.episode_lengths, self.Q)


@dataclass(frozen=True, eq=False, repr=False)
class ExpectedUpdatesResult(RunsResult):
    """What :func:`uniform_expected_updates` and :func:`trajectory_sampling` return.

    ``updates``: int64 ``[E]``, the expected updates made before each evaluation
    (``0, evaluate_every, 2 evaluate_every, ...`` and the last, ``updates``; shared by
    the runs); ``start_values``: ``[E]`` or ``[runs, E]``, the value of the start
    distribution under the greedy policy of ``Q`` at each evaluation; ``Q``: ``[S, A]``
    or ``[runs, S, A]``, after the last update. ``policy`` is the greedy policy
    ``argmax_a Q(s, a)`` (lowest action on ties), the one evaluated.
    """

    updates: np.ndarray = field(metadata=SHARED)
    start_values: np.ndarray
    Q: np.ndarray

    __repr__ = short_repr

    @property
    def runs(self) -> int | None:
        """``None`` for a single-run result (no run axis), else the number of runs."""
        return None if self.start_values.ndim == 1 else self.start_values.shape[0]

    @property
    def policy(self) -> np.ndarray:
        """The greedy policy ``argmax_a Q(s, a)`` (int64, lowest action on ties)."""
        return self.Q.argmax(axis=-1)
