"""Numba kernels of dynamic programming (Sutton & Barto 2nd ed., chapter 4).

Sweeps take the model as one :class:`PlanningArrays` record ``(successor, prob,
reward)``, each ``[S, A, K]`` (they unpack it once; the per-state rules they inline
read the arrays), and a value vector ``V`` of length ``S + 1`` whose
last entry is a sentinel state of value 0: ``successor[s, a, k]`` is
``next_state`` unless the outcome ends the episode, is padding, or the discount
is 0, in which case it points to the sentinel (see :func:`planning_arrays`). A
target is then ``r + gamma * V[successor]`` with no branch in the inner loop,
which is what ``done`` means (no value flows from the next state).

Synchronous (Jacobi) sweeps write a fresh vector and run their states in
``numba.prange``: each state is written by exactly one thread and the residual
is a ``max`` reduction, so the numbers are bit-identical whatever the thread
count. In-place (Gauss-Seidel) sweeps run sequentially, in state order.

``-inf`` rewards follow the maths: an action that risks one has ``q = -inf``,
``max`` ignores such actions unless nothing else is left, and no NaN can form:
padding has probability 0, reward 0 and the sentinel's value 0; a zero discount
only ever meets the sentinel; equal values have distance 0 (``-inf - -inf``
is never taken).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange


class PlanningArrays(NamedTuple):
    """The model as the DP sweeps read it (built by :func:`planning_arrays`).

    ``successor`` int64 ``[S, A, K]``: ``next_state``, or the sentinel ``S`` where no
    value flows; ``prob`` and ``reward`` float64 ``[S, A, K]``: the model's own.
    """

    successor: np.ndarray
    prob: np.ndarray
    reward: np.ndarray


def planning_arrays(mdp, gamma: float) -> PlanningArrays:
    """The :class:`PlanningArrays` of ``mdp`` (a :class:`~tabular.TabularMDP`) for ``gamma``.

    Outcomes that end the episode, padding, and every outcome when ``gamma = 0``
    point to the sentinel state ``S``, whose value the sweeps hold at 0.
    """
    model = mdp.arrays
    no_value = model.done | (model.prob == 0.0) | (gamma == 0.0)
    return PlanningArrays(np.where(no_value, mdp.n_states, model.next_state), model.prob,
                          model.reward)


@njit(cache=True, inline="always")
def distance(x, y):
    """``|x - y|``, with ``distance(-inf, -inf) = 0`` (never NaN)."""
    if x == y:
        return 0.0
    return abs(x - y)


@njit(cache=True, inline="always")
def q_value(successor, prob, reward, V, gamma, s, a):
    """``q(s, a) = sum_k p_k [r_k + gamma V(s'_k)]`` (eq. 3.14 / 4.6), ``V(end) = 0``."""
    q = 0.0
    for k in range(prob.shape[2]):
        q += prob[s, a, k] * (reward[s, a, k] + gamma * V[successor[s, a, k]])
    return q


@njit(cache=True, inline="always")
def expected_value(successor, prob, reward, V, gamma, pi, s):
    """``sum_a pi(a|s) q(s, a)``: one state of the Bellman expectation operator (eq. 4.5)."""
    v = 0.0
    for a in range(prob.shape[1]):
        w = pi[s, a]
        if w > 0.0:
            v += w * q_value(successor, prob, reward, V, gamma, s, a)
    return v


@njit(cache=True, inline="always")
def max_value(successor, prob, reward, V, gamma, s):
    """``max_a q(s, a)``: one state of the Bellman optimality operator (eq. 4.10)."""
    best = -np.inf
    for a in range(prob.shape[1]):
        q = q_value(successor, prob, reward, V, gamma, s, a)
        if q > best:
            best = q
    return best


@njit(cache=True, inline="always")
def soft_value(successor, prob, reward, V, gamma, beta, ref, s):
    """``beta * log sum_a ref(a|s) exp(q(s, a) / beta)``, a one-pass stable log-sum-exp.

    One update rule rather than an if/else on a new maximum: numba's parfor
    reduction analysis fails on the two-branch form once it is inlined into a
    ``prange``. Actions with ``ref(a|s) = 0`` or ``q = -inf`` contribute nothing;
    if nothing is left the value is ``-inf``.
    """
    m = -np.inf
    total = 0.0
    for a in range(prob.shape[1]):
        w = ref[s, a]
        if w > 0.0:
            q = q_value(successor, prob, reward, V, gamma, s, a)
            if q > -np.inf:  # rescale the running sum to the new maximum
                hi = max(m, q)
                total = total * np.exp((m - hi) / beta) + w * np.exp((q - hi) / beta)
                m = hi
    if m == -np.inf:
        return -np.inf
    return m + beta * np.log(total)


@njit(cache=True, parallel=True)
def optimality_sweep(plan, V, gamma, out):
    """``out = T* V`` (synchronous value-iteration sweep, eq. 4.10); returns ``||out - V||_inf``."""
    successor, prob, reward = plan
    residual = 0.0
    for s in prange(prob.shape[0]):
        v = max_value(successor, prob, reward, V, gamma, s)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True)
def optimality_sweep_inplace(plan, V, gamma):
    """In-place value-iteration sweep (section 4.4, the in-place variant of section 4.1);
    returns the residual."""
    successor, prob, reward = plan
    residual = 0.0
    for s in range(prob.shape[0]):
        v = max_value(successor, prob, reward, V, gamma, s)
        residual = max(residual, distance(v, V[s]))
        V[s] = v
    return residual


@njit(cache=True, parallel=True)
def expectation_sweep(plan, V, gamma, pi, out):
    """``out = T_pi V`` (synchronous iterative policy evaluation, eq. 4.5); returns the residual."""
    successor, prob, reward = plan
    residual = 0.0
    for s in prange(prob.shape[0]):
        v = expected_value(successor, prob, reward, V, gamma, pi, s)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True)
def expectation_sweep_inplace(plan, V, gamma, pi):
    """In-place iterative policy evaluation (the box of section 4.1); returns the residual."""
    successor, prob, reward = plan
    residual = 0.0
    for s in range(prob.shape[0]):
        v = expected_value(successor, prob, reward, V, gamma, pi, s)
        residual = max(residual, distance(v, V[s]))
        V[s] = v
    return residual


@njit(cache=True, parallel=True)
def soft_sweep(plan, V, gamma, beta, ref, out):
    """``out = T_beta V``, the soft (KL-regularised) optimality operator; returns the residual."""
    successor, prob, reward = plan
    residual = 0.0
    for s in prange(prob.shape[0]):
        v = soft_value(successor, prob, reward, V, gamma, beta, ref, s)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True)
def soft_sweep_inplace(plan, V, gamma, beta, ref):
    """In-place sweep of the soft optimality operator, in state order; returns the residual."""
    successor, prob, reward = plan
    residual = 0.0
    for s in range(prob.shape[0]):
        v = soft_value(successor, prob, reward, V, gamma, beta, ref, s)
        residual = max(residual, distance(v, V[s]))
        V[s] = v
    return residual


@njit(cache=True, parallel=True)
def q_table(plan, V, gamma):
    """``Q[s, a] = q(s, a)`` for every pair (eq. 4.6)."""
    successor, prob, reward = plan
    S, A = prob.shape[0], prob.shape[1]
    Q = np.empty((S, A))
    for s in prange(S):
        for a in range(A):
            Q[s, a] = q_value(successor, prob, reward, V, gamma, s, a)
    return Q
