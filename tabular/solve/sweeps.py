"""Numba kernels of dynamic programming (Sutton & Barto 2nd ed., chapter 4).

Sweeps take the model as it is stored, one :class:`~tabular.model.mdp.ModelArrays` record
``model`` (:attr:`TabularMDP.arrays`), and read it through the accessors of
:mod:`tabular.model.outcomes`, and a value vector ``V`` of length ``S + 1`` whose
last entry is a sentinel state of value 0: an outcome that ends the episode, or is
padding, reads its next value there (:func:`~tabular.model.outcomes.value_index`). A
target is then ``r + gamma * V[index]`` with no test of ``done`` in the inner loop,
which is what ``done`` means (no value flows from the next state); a zero discount
adds nothing.

Synchronous (Jacobi) sweeps write a fresh vector and run their states in
``numba.prange``: each state is written by exactly one thread and the residual
is a ``max`` reduction, so the numbers are bit-identical whatever the thread
count. In-place (Gauss-Seidel) sweeps run sequentially, in state order; blocked
ones (:func:`optimality_sweep_blocks`) run Gauss-Seidel inside blocks of states and
the blocks in parallel, each block reading the others' values of the previous sweep.

``-inf`` rewards follow the maths: an action that risks one has ``q = -inf``,
``max`` ignores such actions unless nothing else is left, and no NaN can form:
padding has probability 0, reward 0 and the sentinel's value 0; a zero discount
never multiplies a value; equal values have distance 0 (``-inf - -inf`` is never
taken).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from tabular.model.outcomes import n_outcomes, outcome, value_index

#: A blocked sweep splits the states into this many blocks (fewer if there are fewer
#: states): a fixed partition, never the thread count, so its numbers are the same on
#: any number of threads.
BLOCKS = 64


@njit(cache=True, inline="always")
def distance(x, y):
    """``|x - y|``, with ``distance(-inf, -inf) = 0`` (never NaN)."""
    if x == y:
        return 0.0
    return abs(x - y)


@njit(cache=True, inline="always")
def discounted(gamma, v):
    """``gamma v``, and 0 when ``gamma = 0`` (even for ``v = -inf``)."""
    return gamma * v if gamma > 0.0 else 0.0


@njit(cache=True, inline="always")
def value_at(V, j, new=None, lo=0, s=0):
    """``V[j]``; with ``new`` (a blocked sweep's state ``s``), ``new[j]`` for the states
    its block ``[lo, ...)`` has already updated in this sweep (``lo <= j < s``)."""
    if new is None:  # pruned at compile time: plain sweeps pay nothing
        return V[j]
    return new[j] if lo <= j < s else V[j]


@njit(cache=True, inline="always")
def q_value(model, V, gamma, s, a, new=None, lo=0):
    """``q(s, a) = sum_k p_k [r_k + gamma V(s'_k)]`` (eq. 3.14 / 4.6), ``V(end) = 0``
    (``new``, ``lo``: the values a blocked sweep reads, see :func:`value_at`)."""
    K = n_outcomes(model)
    # slippery moves (the intended direction or either perpendicular one) get their own
    # copy with a trip count the compiler knows: it unrolls the sum, 1.5x faster sweeps
    if K == 3:
        return outcome_sum(model, V, gamma, s, a, 3, new, lo)
    return outcome_sum(model, V, gamma, s, a, K, new, lo)


@njit(cache=True, inline="always")
def outcome_sum(model, V, gamma, s, a, K, new, lo):
    """The sum of :func:`q_value` over the first ``K`` outcomes of ``(s, a)``."""
    q = 0.0
    for k in range(K):
        p, r = outcome(model, s, a, k)
        q += p * (r + discounted(gamma, value_at(V, value_index(model, s, a, k), new, lo, s)))
    return q


@njit(cache=True, inline="always")
def expected_value(model, V, gamma, pi, s):
    """``sum_a pi(a|s) q(s, a)``: one state of the Bellman expectation operator (eq. 4.5)."""
    v = 0.0
    for a in range(pi.shape[1]):
        w = pi[s, a]
        if w > 0.0:
            v += w * q_value(model, V, gamma, s, a)
    return v


@njit(cache=True, inline="always")
def max_value(model, V, gamma, s, new=None, lo=0):
    """``max_a q(s, a)``: one state of the Bellman optimality operator (eq. 4.10)."""
    best = -np.inf
    for a in range(model.successor.shape[1]):
        q = q_value(model, V, gamma, s, a, new, lo)
        if q > best:
            best = q
    return best


@njit(cache=True, inline="always")
def soft_value(model, V, gamma, beta, ref, s):
    """``beta * log sum_a ref(a|s) exp(q(s, a) / beta)``, a one-pass stable log-sum-exp.

    One update rule rather than an if/else on a new maximum: numba's parfor
    reduction analysis fails on the two-branch form once it is inlined into a
    ``prange``. Actions with ``ref(a|s) = 0`` or ``q = -inf`` contribute nothing;
    if nothing is left the value is ``-inf``.
    """
    m = -np.inf
    total = 0.0
    for a in range(ref.shape[1]):
        w = ref[s, a]
        if w > 0.0:
            q = q_value(model, V, gamma, s, a)
            if q > -np.inf:  # rescale the running sum to the new maximum
                hi = max(m, q)
                total = total * np.exp((m - hi) / beta) + w * np.exp((q - hi) / beta)
                m = hi
    if m == -np.inf:
        return -np.inf
    return m + beta * np.log(total)


@njit(cache=True, parallel=True)
def optimality_sweep(model, V, gamma, out):
    """``out = T* V`` (synchronous value-iteration sweep, eq. 4.10); returns ``||out - V||_inf``."""
    residual = 0.0
    for s in prange(V.shape[0] - 1):
        v = max_value(model, V, gamma, s)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True)
def optimality_sweep_inplace(model, V, gamma):
    """In-place value-iteration sweep (section 4.4, the in-place variant of section 4.1);
    returns the residual."""
    residual = 0.0
    for s in range(V.shape[0] - 1):
        v = max_value(model, V, gamma, s)
        residual = max(residual, distance(v, V[s]))
        V[s] = v
    return residual


@njit(cache=True, parallel=True)
def optimality_sweep_blocks(model, V, gamma, out):
    """``out`` = a blocked value-iteration sweep: the states split into :data:`BLOCKS`
    fixed blocks run in parallel, each block an in-place (Gauss-Seidel) sweep that reads
    the other blocks' values of the previous sweep ``V`` (block Jacobi); returns the
    residual. The same numbers on any number of threads."""
    S = V.shape[0] - 1
    n_blocks = min(BLOCKS, S)
    residual = 0.0
    for b in prange(n_blocks):
        lo, hi = b * S // n_blocks, (b + 1) * S // n_blocks
        block_residual = 0.0
        for s in range(lo, hi):
            v = max_value(model, V, gamma, s, out, lo)
            block_residual = max(block_residual, distance(v, V[s]))
            out[s] = v
        residual = max(residual, block_residual)
    return residual


@njit(cache=True, parallel=True)
def expectation_sweep(model, V, gamma, pi, out):
    """``out = T_pi V`` (synchronous iterative policy evaluation, eq. 4.5); returns the residual."""
    residual = 0.0
    for s in prange(V.shape[0] - 1):
        v = expected_value(model, V, gamma, pi, s)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True)
def expectation_sweep_inplace(model, V, gamma, pi):
    """In-place iterative policy evaluation (the box of section 4.1); returns the residual."""
    residual = 0.0
    for s in range(V.shape[0] - 1):
        v = expected_value(model, V, gamma, pi, s)
        residual = max(residual, distance(v, V[s]))
        V[s] = v
    return residual


@njit(cache=True, parallel=True)
def soft_sweep(model, V, gamma, beta, ref, out):
    """``out = T_beta V``, the soft (KL-regularised) optimality operator; returns the residual."""
    residual = 0.0
    for s in prange(V.shape[0] - 1):
        v = soft_value(model, V, gamma, beta, ref, s)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True)
def soft_sweep_inplace(model, V, gamma, beta, ref):
    """In-place sweep of the soft optimality operator, in state order; returns the residual."""
    residual = 0.0
    for s in range(V.shape[0] - 1):
        v = soft_value(model, V, gamma, beta, ref, s)
        residual = max(residual, distance(v, V[s]))
        V[s] = v
    return residual


@njit(cache=True, parallel=True)
def q_table(model, V, gamma):
    """``Q[s, a] = q(s, a)`` for every pair (eq. 4.6)."""
    S, A = V.shape[0] - 1, model.successor.shape[1]
    Q = np.empty((S, A))
    for s in prange(S):
        for a in range(A):
            Q[s, a] = q_value(model, V, gamma, s, a)
    return Q
