"""Numba kernels of dynamic programming (Sutton & Barto 2nd ed., chapter 4).

Sweeps read ``(successor, prob, reward)`` ``[S, A, K]`` and a value vector ``V``
of length ``S + 1`` whose last entry is a sentinel state of value 0:
``successor[s, a, k]`` is ``next_state`` unless the outcome ends the episode,
is padding, or the discount is 0, in which case it points to the sentinel (see
``tabular.dp._planning_arrays``). A target is then ``r + gamma * V[successor]``
with no branch in the inner loop, which is what ``done`` means (no value flows
from the next state).

Synchronous (Jacobi) sweeps write a fresh vector and run their states in
``numba.prange``: each state is written by exactly one thread and the residual
is a ``max`` reduction, so the numbers are bit-identical whatever the thread
count. In-place (Gauss-Seidel) sweeps run sequentially.

``-inf`` rewards follow the maths: an action that risks one has ``q = -inf``,
``max`` ignores such actions unless nothing else is left, and no NaN can form:
padding has probability 0, reward 0 and the sentinel's value 0; a zero discount
only ever meets the sentinel; equal values have distance 0 (``-inf - -inf``
is never taken).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


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

    (One update rule, not an if/else on a new maximum: numba's parfor reduction
    analysis fails on the two-branch form once it is inlined into a ``prange``.)
    Actions with ``ref(a|s) = 0`` or ``q = -inf`` contribute nothing; if nothing
    is left the value is ``-inf``.
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
def optimality_sweep(successor, prob, reward, V, gamma, out):
    """``out = T* V`` (synchronous value-iteration sweep, eq. 4.10); returns ``||out - V||_inf``."""
    residual = 0.0
    for s in prange(prob.shape[0]):
        v = max_value(successor, prob, reward, V, gamma, s)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True)
def optimality_sweep_inplace(successor, prob, reward, V, gamma):
    """Gauss-Seidel value-iteration sweep (section 4.4's in-place variant); returns the residual."""
    residual = 0.0
    for s in range(prob.shape[0]):
        v = max_value(successor, prob, reward, V, gamma, s)
        residual = max(residual, distance(v, V[s]))
        V[s] = v
    return residual


@njit(cache=True, parallel=True)
def expectation_sweep(successor, prob, reward, V, gamma, pi, out):
    """``out = T_pi V`` (synchronous iterative policy evaluation, eq. 4.5); returns the residual."""
    residual = 0.0
    for s in prange(prob.shape[0]):
        v = expected_value(successor, prob, reward, V, gamma, pi, s)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True)
def expectation_sweep_inplace(successor, prob, reward, V, gamma, pi):
    """In-place iterative policy evaluation (the box of section 4.1); returns the residual."""
    residual = 0.0
    for s in range(prob.shape[0]):
        v = expected_value(successor, prob, reward, V, gamma, pi, s)
        residual = max(residual, distance(v, V[s]))
        V[s] = v
    return residual


@njit(cache=True, parallel=True)
def soft_sweep(successor, prob, reward, V, gamma, beta, ref, out):
    """``out = T_beta V``, the soft (KL-regularised) optimality operator; returns the residual."""
    residual = 0.0
    for s in prange(prob.shape[0]):
        v = soft_value(successor, prob, reward, V, gamma, beta, ref, s)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True, parallel=True)
def q_table(successor, prob, reward, V, gamma):
    """``Q[s, a] = q(s, a)`` for every pair (eq. 4.6)."""
    S, A = prob.shape[0], prob.shape[1]
    Q = np.empty((S, A))
    for s in prange(S):
        for a in range(A):
            Q[s, a] = q_value(successor, prob, reward, V, gamma, s, a)
    return Q


@njit(cache=True)
def backward_closure(indptr, sources, targets):
    """States with a path into ``targets``; edge lists in CSR by destination.

    ``sources[indptr[t]:indptr[t + 1]]`` are the states with an edge into ``t``.
    """
    reached = targets.copy()
    stack = np.flatnonzero(targets)
    stack = np.concatenate((stack, np.empty(targets.shape[0], dtype=np.int64)))
    top = np.count_nonzero(targets)
    while top > 0:
        top -= 1
        t = stack[top]
        for e in range(indptr[t], indptr[t + 1]):
            s = sources[e]
            if not reached[s]:
                reached[s] = True
                stack[top] = s
                top += 1
    return reached


@njit(cache=True)
def backward_bfs_actions(indptr, sources, actions, first_action):
    """Breadth-first search backwards from the states with ``first_action[s] >= 0``.

    Edges in CSR by destination: ``sources[e]`` reaches the destination by
    ``actions[e]``. A state met first through an edge takes that edge's action,
    so each state's action leads one level closer to the seeds; ``-1`` where
    the seeds are out of reach.
    """
    chosen = first_action.copy()
    queue = np.flatnonzero(first_action >= 0)
    queue = np.concatenate((queue, np.empty(first_action.shape[0], dtype=np.int64)))
    head, tail = 0, np.count_nonzero(first_action >= 0)
    while head < tail:
        t = queue[head]
        head += 1
        for e in range(indptr[t], indptr[t + 1]):
            s = sources[e]
            if chosen[s] < 0:
                chosen[s] = actions[e]
                queue[tail] = s
                tail += 1
    return chosen
