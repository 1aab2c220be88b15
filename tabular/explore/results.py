"""What the exploration learners return: the episodes' sampled returns and, for exact
regret, the policy each episode followed."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tabular.results import SHARED, LearningResult


@dataclass(frozen=True, eq=False, repr=False)
class ExplorationResult(LearningResult):
    """What an episodic exploration learner returns (a leading run axis with ``runs=n``).

    ``episode_returns``: the sampled undiscounted return of each episode ``[K]``;
    ``episode_lengths``: its steps (at most ``horizon``; fewer where the model ended the
    episode); ``policy``: int16 ``[K, H, S]``, the greedy action table the learner acted
    on in each episode, ``policy[k, h, s]`` its action at step ``h`` in state ``s``
    (time-dependent: ``pi_h(s)``); ``epsilon``: the probability with which each step
    instead took a uniformly random action (0 for the optimistic and posterior-sampling
    learners), so episode ``k`` followed ``(1 - epsilon) * pi_k + epsilon * uniform``
    exactly; ``horizon``: ``H``. :func:`tabular.explore.regret` evaluates these
    policies exactly.
    """

    policy: np.ndarray
    epsilon: float = field(default=0.0, metadata=SHARED)
    horizon: int = field(default=1, metadata=SHARED)
