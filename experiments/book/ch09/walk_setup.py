"""Example 9.1's 1000-state random walk as the chapter-9 figures set it up."""

from __future__ import annotations

import numpy as np

from tabular.envs import RandomWalk
from tabular.linear import state_aggregation


def walk():
    """Example 9.1's model, its policy (one action) and ten groups of 100 states."""
    mdp = RandomWalk(1000, jump=100, left_reward=-1.0).model()
    groups = np.r_[0, np.arange(1000) // 100, 9]  # the end states' rows are never read
    return mdp, np.zeros(mdp.n_states, dtype=np.int64), state_aggregation(groups)

