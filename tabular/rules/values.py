"""Value-based update rules (Sutton & Barto, chapters 2 and 6).

The arithmetic of eq. 2.4, ``NewEstimate <- OldEstimate + StepSize [Target -
OldEstimate]``, is made exact for ``-inf`` rewards: an estimate becomes ``-inf``
only when a sampled target is ``-inf``, which happens only when an outcome of
positive probability leads to ``-inf``; the true expectation then *is* ``-inf``,
so a ``-inf`` estimate is absorbing (:func:`td_error` returns 0 for it), and the
products ``0 * -inf`` of zero discounts or zero probabilities count as 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..kernels.rng import randint, uniform

# --------------------------------------------------------------------- arithmetic


@njit(cache=True, inline="always")
def discounted(gamma, value):
    """``gamma * value``, with ``0 * -inf = 0`` (no value flows through a zero discount)."""
    if gamma == 0.0:
        return 0.0
    return gamma * value


@njit(cache=True, inline="always")
def expectation(probs, values):
    """``sum_a probs[a] * values[a]``; actions of probability 0 contribute 0 even at ``-inf``."""
    total = 0.0
    for a in range(probs.shape[0]):
        if probs[a] > 0.0:
            total += probs[a] * values[a]
    return total


@njit(cache=True, inline="always")
def td_error(target, estimate):
    """``Target - OldEstimate`` of eq. 2.4: the TD error (eq. 6.5) for a TD target, the
    Monte Carlo error ``G - V`` (eq. 6.1) for a return. A ``-inf`` estimate is exact and
    absorbing: its error is 0."""
    if estimate == -np.inf:
        return 0.0
    return target - estimate


@njit(cache=True, inline="always")
def update_toward(estimate, target, step):
    """``NewEstimate = OldEstimate + StepSize [Target - OldEstimate]`` (eq. 2.4)."""
    return estimate + step * td_error(target, estimate)


@njit(cache=True, inline="always")
def max_value(q_row):
    """``max_a q_row[a]``."""
    best = q_row[0]
    for a in range(1, q_row.shape[0]):
        if q_row[a] > best:
            best = q_row[a]
    return best


# --------------------------------------------------------------------- action selection


@njit(cache=True, inline="always")
def greedy_action(q_row, rng):
    """``argmax_a q_row[a]``, ties broken uniformly at random (reservoir sampling: a
    random number is drawn only when a tie is met)."""
    best = 0
    best_value = q_row[0]
    ties = 1
    for a in range(1, q_row.shape[0]):
        value = q_row[a]
        if value > best_value:
            best, best_value, ties = a, value, 1
        elif value == best_value:
            ties += 1
            if randint(rng, ties) == 0:
                best = a
    return best


@njit(cache=True, inline="always")
def epsilon_greedy_action(q_row, epsilon, rng):
    """With probability ``epsilon`` a uniformly random action, else a greedy one
    (section 2.2; the random action may be the greedy one)."""
    if epsilon > 0.0 and uniform(rng) < epsilon:
        return randint(rng, q_row.shape[0])
    return greedy_action(q_row, rng)


@njit(cache=True, inline="always")
def epsilon_greedy_probs(q_row, epsilon, out):
    """``out[a] = epsilon / A + (1 - epsilon) [a greedy] / #greedy``: the probabilities
    with which :func:`epsilon_greedy_action` picks each action (section 5.4)."""
    n_actions = q_row.shape[0]
    best_value = q_row[0]
    for a in range(1, n_actions):
        if q_row[a] > best_value:
            best_value = q_row[a]
    ties = 0
    for a in range(n_actions):
        if q_row[a] == best_value:
            ties += 1
    for a in range(n_actions):
        out[a] = epsilon / n_actions
        if q_row[a] == best_value:
            out[a] += (1.0 - epsilon) / ties


# --------------------------------------------------------------------- targets


@njit(cache=True, inline="always")
def td_target(reward, gamma, next_value, done):
    """``R + gamma V(S')`` (eq. 6.2); just ``R`` when the episode ended at ``S'``."""
    if done:
        return reward
    return reward + discounted(gamma, next_value)


@njit(cache=True, inline="always")
def sarsa_target(reward, gamma, q_next_row, next_action, done):
    """``R + gamma Q(S', A')`` with ``A'`` the action the policy takes next (eq. 6.7)."""
    return td_target(reward, gamma, q_next_row[next_action], done)


@njit(cache=True, inline="always")
def q_learning_target(reward, gamma, q_next_row, done):
    """``R + gamma max_a Q(S', a)`` (eq. 6.8)."""
    return td_target(reward, gamma, max_value(q_next_row), done)


@njit(cache=True, inline="always")
def expected_sarsa_target(reward, gamma, q_next_row, epsilon, probs_buf, done):
    """``R + gamma sum_a pi(a|S') Q(S', a)`` with pi epsilon-greedy in Q (eq. 6.9)."""
    epsilon_greedy_probs(q_next_row, epsilon, probs_buf)
    return td_target(reward, gamma, expectation(probs_buf, q_next_row), done)


@njit(cache=True, inline="always")
def double_q_target(reward, gamma, q_select_row, q_eval_row, done, rng):
    """``R + gamma Q2(S', argmax_a Q1(S', a))`` (eq. 6.10): one table picks, the other values."""
    return td_target(reward, gamma, q_eval_row[greedy_action(q_select_row, rng)], done)
