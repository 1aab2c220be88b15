"""What the value-based learners return: a state-value or an action-value estimate."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.results import LearningResult


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
