"""Update rules of planning with a learned model (Sutton & Barto, chapter 8).

The planned update itself is Q-learning's (eq. 6.8 with
:func:`~tabular.rules.values.q_learning_target` and
:func:`~tabular.rules.values.update_toward`), applied to a transition drawn from the
model instead of the environment. What chapter 8 adds is what a planned transition
pays (Dyna-Q+'s exploration bonus) and which pair to plan next (prioritized
sweeping's priority).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular.rules.values import td_error


@njit(cache=True)
def exploration_bonus(reward, kappa, tau):
    """``r + kappa sqrt(tau)``: the reward of a planned transition in Dyna-Q+ (section
    8.3), ``tau`` the time steps since the pair was last tried in the environment."""
    return reward + kappa * np.sqrt(tau)


@njit(cache=True)
def priority(target, estimate):
    """``P = |R + gamma max_a Q(S', a) - Q(S, A)|``, the size of the update a pair would
    get (the prioritized sweeping box, section 8.4), from its one-step ``target``; a
    ``-inf`` estimate is exact and needs no update (priority 0)."""
    return abs(td_error(target, estimate))
