"""Value-based update rules (Sutton & Barto, chapters 2 and 6).

The arithmetic of eq. 2.4, ``NewEstimate <- OldEstimate + StepSize [Target -
OldEstimate]``, is made exact for ``-inf`` rewards: an estimate becomes ``-inf``
only when a sampled target is ``-inf``, which happens only when an outcome of
positive probability leads to ``-inf``; the true expectation then *is* ``-inf``,
so a ``-inf`` estimate is absorbing (:func:`td_error` returns 0 for it), and the
products ``0 * -inf`` of zero discounts or zero probabilities count as 0.

Action selection and the targets take an optional ``legal`` row (bool ``[A]``, the
actions available in the state, as in Gymnasium's ``action_mask``): ``None`` means
every action, and compiles to the unmasked code.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from tabular._numba.rng import bernoulli, randint

# --------------------------------------------------------------------- legal actions


def is_legal(legal, a):
    """Whether action ``a`` is available: ``legal[a]``, or True when ``legal`` is None."""
    return True if legal is None else bool(legal[a])


def random_legal_action(legal, n_actions, rng):
    """A uniformly random available action among ``n_actions`` (rejection sampling on
    ``legal``; one draw when ``legal`` is None)."""
    while True:
        a = randint(rng, n_actions)
        if legal is None or legal[a]:
            return a


def first_legal(legal):
    """The first available action (0 when ``legal`` is None)."""
    return 0 if legal is None else int(np.argmax(legal))


def count_legal(legal, n_actions):
    """The number of available actions among ``n_actions``."""
    return n_actions if legal is None else int(np.count_nonzero(legal[:n_actions]))


def _absent(legal):
    return isinstance(legal, types.NoneType | types.Omitted)


# The Python bodies above serve a call from Python; in a kernel, numba compiles these
# overloads instead, one per type of ``legal``. Plain overloads, not inlined into
# numba's IR: see
# docs/decisions/2026-12-02-inlining-of-rules.md.


@overload(is_legal)
def _is_legal(legal, a):
    if _absent(legal):
        return lambda legal, a: True
    return lambda legal, a: legal[a]


@overload(random_legal_action)
def _random_legal_action(legal, n_actions, rng):
    if _absent(legal):
        return lambda legal, n_actions, rng: randint(rng, n_actions)

    def impl(legal, n_actions, rng):
        while True:
            a = randint(rng, n_actions)
            if legal[a]:
                return a

    return impl


@overload(first_legal)
def _first_legal(legal):
    if _absent(legal):
        return lambda legal: 0

    def impl(legal):
        a = 0
        while not legal[a]:
            a += 1
        return a

    return impl


@overload(count_legal)
def _count_legal(legal, n_actions):
    if _absent(legal):
        return lambda legal, n_actions: n_actions

    def impl(legal, n_actions):
        n = 0
        for a in range(n_actions):
            n += legal[a]
        return n

    return impl


# --------------------------------------------------------------------- arithmetic


@njit(cache=True)
def discounted(gamma, value):
    """``gamma * value``, with ``0 * -inf = 0`` (no value flows through a zero discount)."""
    if gamma == 0.0:
        return 0.0
    return gamma * value


@njit(cache=True)
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


@njit(cache=True)
def update_toward(estimate, target, step):
    """``NewEstimate = OldEstimate + StepSize [Target - OldEstimate]`` (eq. 2.4)."""
    return estimate + step * td_error(target, estimate)


@njit(cache=True)
def max_value(q_row, legal=None):
    """``max_a q_row[a]`` over the legal actions."""
    first = first_legal(legal)
    best = q_row[first]
    for a in range(first + 1, q_row.shape[0]):
        if is_legal(legal, a) and q_row[a] > best:
            best = q_row[a]
    return best


# --------------------------------------------------------------------- action selection


@njit(cache=True, inline="always")
def greedy_action(q_row, rng, legal=None):
    """``argmax_a q_row[a]`` over the legal actions, ties broken uniformly at random
    (reservoir sampling: a random number is drawn only when a tie is met)."""
    best = first_legal(legal)
    best_value = q_row[best]
    ties = 1
    for a in range(best + 1, q_row.shape[0]):
        if not is_legal(legal, a):
            continue
        value = q_row[a]
        if value > best_value:
            best, best_value, ties = a, value, 1
        elif value == best_value:
            ties += 1
            if randint(rng, ties) == 0:
                best = a
    return best


@njit(cache=True, inline="always")
def epsilon_greedy_action(q_row, epsilon, rng, legal=None):
    """With probability ``epsilon`` a uniformly random legal action, else a greedy one
    (section 2.2; the random action may be the greedy one)."""
    if epsilon > 0.0 and bernoulli(rng, epsilon):
        return random_legal_action(legal, q_row.shape[0], rng)
    return greedy_action(q_row, rng, legal)


@njit(cache=True, inline="always")
def epsilon_greedy_probs(q_row, epsilon, out, legal=None):
    """``out[a] = epsilon / A + (1 - epsilon) [a greedy] / #greedy``: the probabilities
    with which :func:`epsilon_greedy_action` picks each action (section 5.4); with
    ``legal``, ``A`` counts the legal actions and an illegal one has probability 0."""
    n_actions = q_row.shape[0]
    n_legal = count_legal(legal, n_actions)
    best_value = max_value(q_row, legal)
    ties = 0
    for a in range(n_actions):
        if is_legal(legal, a) and q_row[a] == best_value:
            ties += 1
    for a in range(n_actions):
        if not is_legal(legal, a):
            out[a] = 0.0
            continue
        out[a] = epsilon / n_legal
        if q_row[a] == best_value:
            out[a] += (1.0 - epsilon) / ties


@njit(cache=True, inline="always")
def epsilon_greedy_expectation(q_row, epsilon, legal=None):
    """``sum_a pi(a) q_row[a]`` for the epsilon-greedy ``pi`` of
    :func:`epsilon_greedy_probs`, as ``epsilon / A sum_a q_row[a] + (1 - epsilon) max_a
    q_row[a]`` (the greedy actions share ``1 - epsilon`` and all have the max): one
    pass over the row, no buffer of probabilities. A weight of 0 hides a ``-inf``, as
    :func:`expectation` does (:func:`~tabular.rules.values.discounted`)."""
    first = first_legal(legal)
    best = q_row[first]
    total = best
    for a in range(first + 1, q_row.shape[0]):
        if is_legal(legal, a):
            value = q_row[a]
            total += value
            best = max(best, value)
    return (discounted(epsilon / count_legal(legal, q_row.shape[0]), total)
            + discounted(1.0 - epsilon, best))


# --------------------------------------------------------------------- targets


@njit(cache=True, inline="always")
def td_target(reward, gamma, next_value, done):
    """``R + gamma V(S')`` (eq. 6.2); just ``R`` when the episode ended at ``S'``."""
    if done:
        return reward
    return reward + discounted(gamma, next_value)


@njit(cache=True)
def sarsa_target(reward, gamma, q_next_row, next_action, done):
    """``R + gamma Q(S', A')`` with ``A'`` the action the policy takes next (eq. 6.7)."""
    return td_target(reward, gamma, q_next_row[next_action], done)


@njit(cache=True, inline="always")
def q_learning_target(reward, gamma, q_next_row, done, legal=None):
    """``R + gamma max_a Q(S', a)`` (eq. 6.8), the max over the actions legal in ``S'``."""
    return td_target(reward, gamma, max_value(q_next_row, legal), done)


@njit(cache=True, inline="always")
def expected_sarsa_target(reward, gamma, q_next_row, epsilon, done, legal=None):
    """``R + gamma sum_a pi(a|S') Q(S', a)`` (eq. 6.9), ``pi`` the epsilon-greedy policy
    on ``Q(S', .)`` over the legal actions (:func:`epsilon_greedy_expectation`)."""
    return td_target(reward, gamma, epsilon_greedy_expectation(q_next_row, epsilon, legal),
                     done)


@njit(cache=True, inline="always")
def double_q_target(reward, gamma, q_eval_row, selected, done):
    """``R + gamma Q2(S', A*)`` with ``A* = argmax_a Q1(S', a)`` (eq. 6.10): the action
    ``selected`` by one table (:func:`greedy_action` on ``Q1(S', .)``) is valued by the
    other, ``q_eval_row = Q2(S', .)``, so that the maximisation bias of one table's
    noise does not enter the target (section 6.7)."""
    return td_target(reward, gamma, q_eval_row[selected], done)
