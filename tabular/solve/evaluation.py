"""The value of a deterministic policy from a start distribution, summed forwards.

:func:`start_value` pushes the distribution of the state one step at a time and adds
the expected rewards it collects (eq. 3.12 summed over time instead of solved), which
for a tree-like or quickly ending episode touches only the states reached: the exact
evaluation behind :mod:`tabular.plan.expected_updates` on models far larger than a dense
linear solve allows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular.model.outcomes import n_outcomes, outcome_prob, outcome_reward, value_index

#: The evaluation of a greedy policy sums its expected rewards step by step until the
#: (discounted) probability that its episode is still running is at most this.
EVALUATION_TOL = 1e-10
#: The most steps an evaluation sums before it gives up (an error names the update).
MAX_EVALUATION_STEPS = 1_000_000


@njit(cache=True)
def _policy_rows(model, policy, gamma):
    """A deterministic ``policy`` (int ``[S]``) as one row per state: ``(r_pi [S],
    successor [S, K], weight [S, K])``, its expected reward and each outcome's next state
    (the sentinel ``S`` when the episode ends) with ``gamma p``."""
    n_states, K = policy.shape[0], n_outcomes(model)
    r_pi = np.zeros(n_states)
    rows = np.empty((n_states, K), dtype=np.int64)
    weight = np.empty((n_states, K))
    for s in range(n_states):
        a = policy[s]
        for k in range(K):
            p = outcome_prob(model, s, a, k)
            if p > 0.0:  # no 0 * -inf from padding
                r_pi[s] += p * outcome_reward(model, s, a, k)
            rows[s, k] = value_index(model, s, a, k)
            weight[s, k] = gamma * p
    return r_pi, rows, weight


@njit(cache=True, inline="always")
def _move_on(s, mass, next_mass, r_pi, successor, weight):
    """Move the probability of being in ``s`` one step on (into ``next_mass``, the
    sentinel catching what ends) and return the expected reward it collects."""
    m = mass[s]
    if m == 0.0:
        return 0.0
    mass[s] = 0.0
    for k in range(successor.shape[1]):
        next_mass[successor[s, k]] += m * weight[s, k]
    return m * r_pi[s]


@njit(cache=True)
def start_value(model, policy, gamma, start):
    """``(value, left)``: ``value = sum_t gamma^t sum_s P(S_t = s) r_pi(s)``, the expected
    discounted return from the start distribution ``start`` under the deterministic
    ``policy`` (int ``[S]``), i.e. ``sum_s start(s) v_pi(s)`` (eq. 3.12, summed forwards
    over the distribution of the state at each step).

    The sum stops when ``left``, the discounted probability that the episode is still
    running, is at most :data:`EVALUATION_TOL` (the rest of the sum is at most ``left``
    times the largest expected reward, divided by the smallest chance of ending per step),
    when the value is ``-inf``, or after :data:`MAX_EVALUATION_STEPS` steps. While few
    states are reached only those are visited (a deterministic chain costs one state per
    step); once many are, every state is swept.
    """
    r_pi, successor, weight = _policy_rows(model, policy, gamma)
    n_states = policy.shape[0]
    mass = np.zeros(n_states + 1)  # the last entry, the sentinel, is the ended episodes
    next_mass = np.zeros(n_states + 1)
    active = np.empty(n_states, dtype=np.int64)  # the states reached, while they are few
    next_active = np.empty(n_states, dtype=np.int64)
    queued = np.zeros(n_states + 1, dtype=np.bool_)
    queued[n_states] = True  # an ended episode is never visited
    n = 0
    for s in range(n_states):
        if start[s] > 0.0:
            mass[s] = start[s]
            active[n] = s
            n += 1
    value = 0.0
    left = 1.0
    steps = 0
    while left > EVALUATION_TOL and value > -np.inf and steps < MAX_EVALUATION_STEPS:
        left = 0.0
        if n < n_states // 8:
            n_next = 0
            for i in range(n):
                s = active[i]
                value += _move_on(s, mass, next_mass, r_pi, successor, weight)
                for k in range(successor.shape[1]):
                    s_next = successor[s, k]
                    if not queued[s_next]:
                        queued[s_next] = True
                        next_active[n_next] = s_next
                        n_next += 1
            for i in range(n_next):
                queued[next_active[i]] = False
                left += next_mass[next_active[i]]
            active, next_active = next_active, active
            n = n_next
        else:  # once most states are reached, a sweep is cheaper than the bookkeeping
            for s in range(n_states):
                value += _move_on(s, mass, next_mass, r_pi, successor, weight)
            for s in range(n_states):
                left += next_mass[s]
        next_mass[n_states] = 0.0
        mass, next_mass = next_mass, mass
        steps += 1
    return value, left
