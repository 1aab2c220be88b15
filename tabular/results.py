"""What the learners return, and numpy's ``size=`` convention for the run axis.

``runs=None`` (the default of every learner) computes one run and returns arrays
without a run axis; ``runs=n`` computes ``n`` independent runs and returns arrays
with a leading axis of length ``n``, also for ``n = 1``. :meth:`LearningResult.run`
picks one run out of a multi-run result, as a result of the same kind without the
axis, so ``res.run(i).policy`` works for every learner.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from .checks import check_positive_int
from .policy import SoftmaxPolicy


def check_runs(runs: int | None) -> int:
    """The number of runs to compute: 1 for ``runs=None``, else ``runs`` (an int >= 1)."""
    return 1 if runs is None else check_positive_int("runs", runs)


def with_run_axis(array: np.ndarray | None, runs: int | None):
    """A kernel's per-run output ``[n, ...]`` in the public shape: without the run axis
    when ``runs is None``, as it is otherwise."""
    if array is None or runs is not None:
        return array
    return array[0]


def shared(**kwargs):
    """A result field that is the same for every run (it never has a run axis)."""
    return field(metadata={"shared": True}, **kwargs)


class RunsResult:
    """A result whose array fields share a leading run axis when computed with
    ``runs=n``; a subclass says by ``runs`` whether it has one."""

    @property
    def runs(self) -> int | None:
        """``None`` for a single-run result (no run axis), else the number of runs."""
        raise NotImplementedError

    def run(self, i: int):
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
            picked[f.name] = value if shared_field or value is None else value[i]
        return type(self)(**picked)


@dataclass(frozen=True, eq=False)
class LearningResult(RunsResult):
    """What every learner returns: per-episode statistics, with a leading run axis
    when the learner was called with ``runs=n``.

    ``episode_returns``: the undiscounted sum of rewards of each episode
    (``[episodes]`` or ``[runs, episodes]``), the book's "sum of rewards during
    episode"; ``episode_lengths``: its number of steps (int64). An episode cut at
    ``max_steps`` has length ``max_steps``.
    """

    episode_returns: np.ndarray
    episode_lengths: np.ndarray

    @property
    def runs(self) -> int | None:
        """``None`` for a single-run result (no run axis), else the number of runs."""
        return None if self.episode_returns.ndim == 1 else self.episode_returns.shape[0]

    @property
    def episodes(self) -> int:
        return self.episode_returns.shape[-1]


@dataclass(frozen=True, eq=False)
class PredictionResult(LearningResult):
    """A state-value estimate ``V`` (``[S]`` or ``[runs, S]``).

    ``V_history`` (only when asked for): ``V`` after each episode,
    ``[episodes, S]`` or ``[runs, episodes, S]``.
    """

    V: np.ndarray
    V_history: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class ControlResult(LearningResult):
    """An action-value estimate ``Q`` (``[S, A]`` or ``[runs, S, A]``).

    ``policy`` is the greedy policy ``argmax_a Q(s, a)`` (int64 ``[S]`` or
    ``[runs, S]``, lowest action on ties); ``V`` is ``max_a Q(s, a)``.
    """

    Q: np.ndarray

    @property
    def V(self) -> np.ndarray:
        """``max_a Q(s, a)``: the greedy policy's value as the learner estimates it."""
        return self.Q.max(axis=-1)

    @property
    def policy(self) -> np.ndarray:
        """The greedy policy ``argmax_a Q(s, a)`` (int64, lowest action on ties)."""
        return self.Q.argmax(axis=-1)


def trained_policy(result) -> SoftmaxPolicy:
    """The :class:`~tabular.SoftmaxPolicy` of a single-run result's ``logits`` and
    ``row_of_state`` (copies); a multi-run result names ``result.run(i).policy``."""
    if result.runs is not None:
        raise ValueError(f"this result holds {result.runs} runs: pick one with "
                         "result.run(i).policy")
    return SoftmaxPolicy(result.logits.copy(), result.row_of_state.copy())


@dataclass(frozen=True, eq=False)
class PolicyGradientResult(LearningResult):
    """A trained softmax policy.

    ``logits``: ``[R, A]`` or ``[runs, R, A]``; ``row_of_state``: the policy's row
    map ``[S]`` (shared by the runs); ``V``: the critic or baseline ``[S]`` or
    ``[runs, S]`` (``None`` without one). ``episode_returns`` sum the environment's
    rewards, without the KL term or the floor (``-inf`` for an episode that fell
    into a trap). ``policy`` is the trained :class:`~tabular.SoftmaxPolicy` of a
    single-run result (use ``run(i).policy`` on a multi-run one).
    """

    logits: np.ndarray
    row_of_state: np.ndarray = shared()
    V: np.ndarray | None = None

    @property
    def policy(self) -> SoftmaxPolicy:
        return trained_policy(self)


@dataclass(frozen=True, eq=False)
class TrustRegionResult(PolicyGradientResult):
    """A softmax policy trained by a learner that bounds each policy update (PPO, TRPO),
    with statistics of its updates, one per iteration (``[iterations]`` or ``[runs,
    iterations]``).

    ``step_kl``: the KL divergence the iteration's update moved the policy, averaged
    over the batch's samples per episode, ``(1/M) sum_t KL(pi_old(.|s_t) ||
    pi_new(.|s_t))``; ``kl_coef``: the coefficient of PPO's adaptive KL penalty used in
    the iteration (``None`` for the clipped objective and TRPO); ``backtracks`` (int64):
    the halvings of TRPO's step before the line search accepted it, ``-1`` when it
    accepted none and the policy stayed (``None`` for PPO).
    """

    step_kl: np.ndarray | None = None
    kl_coef: np.ndarray | None = None
    backtracks: np.ndarray | None = None
