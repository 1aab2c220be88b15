"""Action selection and updates of the k-armed bandit methods (Sutton & Barto, chapter 2).

The value estimates follow eq. 2.4 (:func:`~tabular.rules.values.update_toward`, with
the sample-average step ``1/n`` of eq. 2.3 or a constant ``alpha``), epsilon-greedy
selection is :func:`~tabular.rules.values.epsilon_greedy_action`, and the gradient
bandit's preference update (eq. 2.12) is the policy-gradient step
:func:`~tabular.rules.policy_gradient.policy_gradient_step` with the step
``alpha (R_t - baseline)``. What is particular to bandits is here.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular.rules.values import greedy_action


@njit(cache=True, inline="always")
def ucb_action(Q, counts, t, c, rng, scores):
    """Upper-confidence-bound selection (eq. 2.10): ``argmax_a Q(a) + c sqrt(ln t / N(a))``
    at time ``t >= 1``; an arm never tried (``N(a) = 0``) counts as maximising, and ties
    are broken uniformly at random (:func:`~tabular.rules.values.greedy_action`).
    ``scores`` is scratch ``[k]``: it receives the upper confidence bounds."""
    log_t = np.log(t)
    for a in range(Q.shape[0]):
        scores[a] = np.inf if counts[a] == 0 else Q[a] + c * np.sqrt(log_t / counts[a])
    return greedy_action(scores, rng)


@njit(cache=True)
def incremental_mean(mean, value, n):
    """The average of ``n`` numbers from that of the first ``n - 1`` (eq. 2.3): the
    gradient bandit's baseline ``R-bar``."""
    return mean + (value - mean) / n
