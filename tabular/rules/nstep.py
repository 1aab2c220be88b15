"""Multistep action-value rules (Sutton & Barto, chapter 7).

Each n-step return of :mod:`tabular.learn.nstep` is the backward recursion ``G_{k-1:h}`` from
``G_{k:h}`` of :mod:`tabular.rules.returns`, one step per reward, started from
``G_{h:h} = Q(S_h, A_h)`` (``R_T`` alone when the episode ended). The rules below are
the steps that differ from ``R_{k} + gamma G_{k:h}`` (n-step SARSA, eq. 7.4): the
tree backup of eq. 7.16, its mixture with the sampled step in Q(sigma) (eq. 7.17),
and the importance-sampled update of eq. 7.11. They are exact for ``-inf`` values in
the sense of :mod:`tabular.rules.values`: a term of weight 0 contributes 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular.rules.returns import discounted_return, importance_weighted_return
from tabular.rules.values import epsilon_greedy_probs, td_error, update_toward


@njit(cache=True)
def importance_ratio(target_prob, behaviour_prob):
    """``rho_k = pi(A_k|S_k) / b(A_k|S_k)``, one factor of eq. 7.10 (``b > 0`` for the
    action taken: it was drawn from ``b``)."""
    return target_prob / behaviour_prob


@njit(cache=True, inline="always")
def target_probs(q_row, action, later_return, epsilon, scratch, out):
    """``out = pi(.|S_k)``, epsilon-greedy on ``Q(S_k, .)`` (section 5.4), where the taken
    action ``A_k`` counts as ``-inf`` when its sampled return ``G_{k:h}`` is: a ``-inf``
    return is exact, so the target policy knows what updating ``Q(S_k, A_k)`` first would
    teach it, and a greedy pi does not follow ``A_k`` into an avoidable trap. ``scratch``:
    a buffer of ``A`` floats."""
    if later_return == -np.inf:
        for a in range(q_row.shape[0]):  # not a slice assignment: no error path to compile
            scratch[a] = q_row[a]
        scratch[action] = -np.inf
        epsilon_greedy_probs(scratch, epsilon, out)
    else:
        epsilon_greedy_probs(q_row, epsilon, out)


@njit(cache=True)
def importance_sampled_update(estimate, target, step, ratio):
    """``Q + alpha rho [G - Q]`` (eq. 7.11): the step scaled by the importance-sampling
    ratio ``rho``; ``rho = 0`` (a return the target policy never produces) leaves the
    estimate as it is, even when ``G = -inf``."""
    if ratio == 0.0:
        return estimate
    return update_toward(estimate, target, step * ratio)


@njit(cache=True, inline="always")
def tree_value(probs, q_row, action, later_return):
    """``sum_{a != A} pi(a|S) Q(S, a) + pi(A|S) G``: the target policy's expectation at
    ``S`` with the taken action ``A`` valued by its sampled return ``G`` (the bracket of
    eq. 7.16); actions of probability 0 contribute 0, even at ``-inf``."""
    total = 0.0
    for a in range(probs.shape[0]):
        if probs[a] > 0.0:
            total += probs[a] * (later_return if a == action else q_row[a])
    return total


@njit(cache=True, inline="always")
def tree_backup_return(reward, gamma, probs, q_row, action, later_return):
    """``G_{t:h} = R_{t+1} + gamma sum_{a != A_{t+1}} pi(a|S_{t+1}) Q(S_{t+1}, a) + gamma
    pi(A_{t+1}|S_{t+1}) G_{t+1:h}`` (eq. 7.16, the n-step tree-backup return), with
    ``probs = pi(.|S_{t+1})`` and ``q_row = Q(S_{t+1}, .)``."""
    return discounted_return(reward, gamma, tree_value(probs, q_row, action, later_return))


@njit(cache=True)
def sigma_mix(sigma, sampled, expected):
    """``sigma sampled + (1 - sigma) expected`` (section 7.6); ``sigma = 1`` is
    ``sampled`` and ``sigma = 0`` is ``expected`` exactly (the other term, even at
    ``-inf``, has weight 0)."""
    if sigma == 1.0:
        return sampled
    if sigma == 0.0:
        return expected
    return sigma * sampled + (1.0 - sigma) * expected


@njit(cache=True)
def control_variate_value(ratio, later_return, q_value, expected_value):
    """``rho (G - Q(S, A)) + V-bar(S)``: the sampled return ``G`` of the taken action ``A``,
    importance-sampled per decision with the control variate of eqs. 7.14 and 7.17 (its
    expectation under the behaviour is ``V-bar(S)``, yet the ratio multiplies only an
    error, not a whole bootstrapped value). A ``-inf`` ``Q(S, A)`` is exact: its error is 0."""
    return importance_weighted_return(ratio, td_error(later_return, q_value)) + expected_value


@njit(cache=True, inline="always")
def q_sigma_return(reward, gamma, sigma, sampled, expected):
    """``G_{t:h} = R_{t+1} + gamma [sigma X + (1 - sigma) T]``, the n-step Q(sigma) return
    (section 7.6): the sampled step ``X`` mixed with the tree-backup step ``T`` of eq.
    7.16, ``expected =`` :func:`tree_value` ``(pi(.|S_{t+1}), Q(S_{t+1}, .), A_{t+1},
    G_{t+1:h})``. ``sampled = X`` is ``G_{t+1:h}`` itself on-policy (the form of De Asis
    et al., 2018: ``sigma = 1`` is then exactly n-step SARSA, eq. 7.4) and
    :func:`control_variate_value` off-policy (eq. 7.17); ``sigma = 0`` is exactly the
    tree-backup return."""
    return discounted_return(reward, gamma, sigma_mix(sigma, sampled, expected))
