"""What the value-based learners return: a state-value or an action-value estimate
(:class:`PredictionResult`, :class:`ControlResult`), the bandit methods' rewards
(:class:`BanditResult`) and the average-reward learners' values (:class:`DifferentialResult`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.results import LearningResult, RunsResult


@dataclass(frozen=True, eq=False, repr=False)
class PredictionResult(LearningResult):
    """A state-value estimate ``V`` (``[S]`` or ``[runs, S]``).

    ``V_history`` (only when asked for): ``V`` after each episode,
    ``[episodes, S]`` or ``[runs, episodes, S]``.
    """

    V: np.ndarray
    V_history: np.ndarray | None = None


@dataclass(frozen=True, eq=False, repr=False)
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


@dataclass(frozen=True, eq=False, repr=False)
class BanditResult(RunsResult):
    """What a bandit method returns, with a leading run axis when called with ``runs=n``.

    ``rewards``: the reward of each step (``[steps]`` or ``[runs, steps]``);
    ``optimal``: whether that step pulled an arm of the highest true value at the time;
    ``estimates``: the final action values ``Q`` (or preferences ``H``) ``[k]``;
    ``means``: the final true values ``q*`` ``[k]``.
    """

    run_axis_of = ("rewards", 1)

    rewards: np.ndarray
    optimal: np.ndarray
    estimates: np.ndarray
    means: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class DifferentialResult(RunsResult):
    """What :func:`differential_sarsa` and :func:`r_learning` return, with a leading run
    axis for ``runs=n``.

    ``Q``: the differential action values ``[S, A]``; ``average_reward``: the learned
    ``Rbar``; ``reward_rate``: the average reward the behaviour collected over the run;
    ``policy``: greedy in ``Q`` (int64 ``[S]``).
    """

    run_axis_of = ("Q", 2)

    Q: np.ndarray
    average_reward: np.ndarray
    reward_rate: np.ndarray

    @property
    def policy(self) -> np.ndarray:
        """The greedy policy ``argmax_a Q(s, a)`` (int64, lowest action on ties)."""
        return self.Q.argmax(axis=-1)
