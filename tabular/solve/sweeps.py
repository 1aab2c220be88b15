"""Numba kernels of dynamic programming (Sutton & Barto 2nd ed., chapter 4).

Sweeps take the model as it is stored, one :class:`~tabular.model.mdp.ModelArrays` record
``model`` (:attr:`TabularMDP.arrays`), and read it through the accessors of
:mod:`tabular.model.outcomes`, and a value vector ``V`` of length ``S + 1`` whose
last entry is a sentinel state of value 0: an outcome that ends the episode, or is
padding, reads its next value there (:func:`~tabular.model.outcomes.value_index`). A
target is then ``r + gamma * V[index]`` with no test of ``done`` in the inner loop,
which is what ``done`` means (no value flows from the next state); a zero discount
adds nothing.

Synchronous (Jacobi) sweeps write a fresh vector. Their kernel computes a range of
states sequentially; on one thread it runs over all of them, on more the states split
into one contiguous range per thread under numba's parallel loop
(the ``_parallel`` drivers at the end of this module, compiled only then). Each state is written
by exactly one thread and the residual is the ``max`` over the ranges, so the numbers are
bit-identical whatever the thread count. In-place (Gauss-Seidel) sweeps run
sequentially, in state order; blocked ones (:func:`optimality_sweep_blocks`) run
Gauss-Seidel inside blocks of states and the blocks in parallel, each block reading the
others' values of the previous sweep.

``-inf`` rewards follow the maths: an action that risks one has ``q = -inf``,
``max`` ignores such actions unless nothing else is left, and no NaN can form:
padding has probability 0, reward 0 and the sentinel's value 0; a zero discount
never multiplies a value; equal values have distance 0 (``-inf - -inf`` is never
taken).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import njit, prange

from tabular.model.outcomes import n_outcomes, outcome, value_index

#: A blocked sweep splits the states into this many blocks (fewer if there are fewer
#: states): a fixed partition, never the thread count, so its numbers are the same on
#: any number of threads.
BLOCKS = 64


class Block(NamedTuple):
    """What a state of a blocked sweep reads besides the previous sweep's values ``V``
    (:func:`optimality_sweep_blocks`): ``new``, this sweep's values so far, and ``lo``, the
    first state of its block. State ``s`` reads ``new[j]`` for the states of its block
    already updated in this sweep (``lo <= j < s``), ``V[j]`` for all others."""

    new: np.ndarray
    lo: int


@njit(cache=True, inline="always")
def distance(x, y):
    """``|x - y|``, with ``distance(-inf, -inf) = 0`` (never NaN)."""
    if x == y:
        return 0.0
    return abs(x - y)


@njit(cache=True, inline="always")
def value_at(V, j, s, block=None):
    """``V[j]``, the value of state ``j`` (or of the end sentinel) as state ``s`` reads it;
    with ``block`` (a :class:`Block`: state ``s`` of a blocked sweep), ``block.new[j]`` for
    the states its block has already updated in this sweep."""
    if block is None:  # pruned at compile time: plain sweeps pay nothing
        return V[j]
    return block.new[j] if block.lo <= j < s else V[j]


@njit(cache=True, inline="always")
def q_value(model, V, gamma, s, a, block=None, positive=False):
    """``q(s, a) = sum_k p_k [r_k + gamma V(s'_k)]`` (eq. 3.14 / 4.6), ``V(end) = 0``.

    ``model``: a :class:`~tabular.model.mdp.ModelArrays`; ``V``: the values ``[S + 1]``;
    ``gamma``: the discount; ``s``, ``a``: the pair; ``block``: ``None``, or the
    :class:`Block` of a blocked sweep (see :func:`value_at`); ``positive``: the literal
    ``True`` where ``gamma V(s')`` may be taken without testing ``gamma > 0`` (the
    caller has checked it, or reads its next values from zeros: no ``0 * -inf``). Returns
    ``q(s, a)`` (``-inf`` when an outcome of positive probability pays ``-inf``).
    """
    K = n_outcomes(model)
    # slippery moves (the intended direction or either perpendicular one) get their own
    # copy with a trip count the compiler knows, so that it unrolls the sum; certain ones
    # too, but only where positive (the value-iteration sweep): a copy costs compile time
    if positive:
        if K == 1:
            return outcome_sum(model, V, gamma, (s, a), 1, block, positive)
    if K == 3:
        return outcome_sum(model, V, gamma, (s, a), 3, block, positive)
    return outcome_sum(model, V, gamma, (s, a), K, block, positive)


@njit(cache=True, inline="always")
def outcome_sum(model, V, gamma, pair, K, block, positive):
    """:func:`q_value`'s sum over the first ``K`` outcomes of ``pair = (s, a)`` (the other
    arguments as there)."""
    s, a = pair
    q = 0.0
    for k in range(K):
        prob, reward = outcome(model, s, a, k)
        later = value_at(V, value_index(model, s, a, k), s, block)
        # 0 when gamma = 0, even for later = -inf; a literal positive=True drops the test
        q += prob * (reward + (gamma * later if positive or gamma > 0.0 else 0.0))
    return q


@njit(cache=True, inline="always")
def expected_value(model, V, gamma, pi, s):
    """``sum_a pi(a|s) q(s, a)``: state ``s`` of the Bellman expectation operator (eq. 4.5).

    ``pi``: the policy ``[S, A]``; the other arguments as in :func:`q_value`. Actions of
    probability 0 are skipped (no ``0 * -inf``).
    """
    v = 0.0
    for a in range(pi.shape[1]):
        w = pi[s, a]
        if w > 0.0:
            v += w * q_value(model, V, gamma, s, a)
    return v


@njit(cache=True, inline="always")
def greedy_value(model, V, gamma, s, block=None, positive=False):
    """``max_a q(s, a)``: state ``s`` of the Bellman optimality operator (eq. 4.10), the
    value of acting greedily on ``V`` (the arguments as in :func:`q_value`)."""
    best = -np.inf
    for a in range(model.successor.shape[1]):
        q = q_value(model, V, gamma, s, a, block, positive)
        if q > best:
            best = q
    return best


@njit(cache=True, inline="always")
def soft_value(model, V, gamma, beta, ref, s):
    """``beta log sum_a ref(a|s) exp(q(s, a) / beta)``: state ``s`` of the soft optimality
    operator, by a one-pass stable log-sum-exp.

    ``beta``: the KL coefficient ``> 0``; ``ref``: the reference policy ``[S, A]``; the
    other arguments as in :func:`q_value`. Actions with ``ref(a|s) = 0`` or ``q = -inf``
    contribute nothing; if nothing is left the value is ``-inf``. The running sum is
    rescaled by one update rule, with no branch on a new maximum (a form numba's parallel
    loop once needed; kept for the numbers it gives).
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


def over_states(kernel, n, model, args):
    """``kernel(model, *args, 0, n)`` on one thread; on more, the ``n`` states (or
    blocks) split into one range per thread by ``kernel``'s parallel driver
    (``_PARALLEL``, compiled on first use): the largest residual either way."""
    chunks = min(numba.get_num_threads(), n)
    if chunks <= 1:
        return kernel(model, *args, 0, n)
    return _PARALLEL[kernel](model, args, n, chunks)


# Every sweep takes the model, the values ``V [S + 1]`` (sentinel last) and the discount,
# and returns the residual ``||T V - V||_inf`` over the states; the synchronous ones write
# ``T V`` into ``out``, the in-place ones overwrite ``V``. A synchronous sweep's kernel
# computes the states ``lo <= s < hi``, counted unsigned: a state index that cannot be
# negative spares every array read numba's test for a negative index.
def optimality_sweep(model, V, gamma, out):
    """``out = T* V``, a synchronous value-iteration sweep (eq. 4.10); returns the residual.

    The loop multiplies by ``gamma`` with no test of the discount per outcome. With a zero
    discount it reads its next values from zeros instead of ``V``: each outcome then adds
    ``0 * 0 = 0``, the same bits as a test would give, and no ``0 * -inf``.
    """
    return over_states(_optimality_states, V.shape[0] - 1, model, (V, gamma, out))


@njit(cache=True)
def _optimality_states(model, V, gamma, out, lo, hi):
    """:func:`optimality_sweep` of the states ``lo .. hi - 1``."""
    later = V if gamma > 0.0 else np.zeros_like(V)
    residual = 0.0
    for s in range(np.uint64(lo), np.uint64(hi)):
        v = greedy_value(model, later, gamma, s, None, True)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True)
def optimality_sweep_inplace(model, V, gamma):
    """An in-place value-iteration sweep (section 4.4, the in-place variant of section 4.1),
    in state order; returns the residual."""
    residual = 0.0
    for s in range(V.shape[0] - 1):
        v = greedy_value(model, V, gamma, s)
        residual = max(residual, distance(v, V[s]))
        V[s] = v
    return residual


def optimality_sweep_blocks(model, V, gamma, out):
    """``out`` = a blocked value-iteration sweep; returns the residual.

    The states split into :data:`BLOCKS` fixed blocks run in parallel, each block an
    in-place (Gauss-Seidel) sweep that reads the other blocks' values of the previous sweep
    ``V`` (block Jacobi, :class:`Block`): the same numbers on any number of threads.
    """
    return over_states(_optimality_blocks, min(BLOCKS, V.shape[0] - 1), model, (V, gamma, out))


@njit(cache=True)
def _optimality_blocks(model, V, gamma, out, first, stop):
    """:func:`optimality_sweep_blocks` of the blocks ``first .. stop - 1``."""
    S = V.shape[0] - 1
    n_blocks = min(BLOCKS, S)
    residual = 0.0
    for b in range(first, stop):
        lo, hi = b * S // n_blocks, (b + 1) * S // n_blocks
        block = Block(out, lo)
        for s in range(lo, hi):
            v = greedy_value(model, V, gamma, s, block)
            residual = max(residual, distance(v, V[s]))
            out[s] = v
    return residual


def expectation_sweep(model, V, gamma, pi, out):
    """``out = T_pi V``, a synchronous sweep of iterative policy evaluation (eq. 4.5), for
    the policy ``pi [S, A]``; returns the residual."""
    return over_states(_expectation_states, V.shape[0] - 1, model, (V, gamma, pi, out))


@njit(cache=True)
def _expectation_states(model, V, gamma, pi, out, lo, hi):
    """:func:`expectation_sweep` of the states ``lo .. hi - 1``."""
    residual = 0.0
    for s in range(np.uint64(lo), np.uint64(hi)):
        v = expected_value(model, V, gamma, pi, s)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True)
def expectation_sweep_inplace(model, V, gamma, pi):
    """An in-place sweep of iterative policy evaluation (the box of section 4.1), in state
    order, for the policy ``pi [S, A]``; returns the residual."""
    residual = 0.0
    for s in range(V.shape[0] - 1):
        v = expected_value(model, V, gamma, pi, s)
        residual = max(residual, distance(v, V[s]))
        V[s] = v
    return residual


def soft_sweep(model, V, gamma, beta, ref, out):
    """``out = T_beta V``, a synchronous sweep of the soft (KL-regularised) optimality
    operator with coefficient ``beta`` and reference policy ``ref [S, A]``; returns the
    residual."""
    return over_states(_soft_states, V.shape[0] - 1, model, (V, gamma, beta, ref, out))


@njit(cache=True)
def _soft_states(model, V, gamma, beta, ref, out, lo, hi):
    """:func:`soft_sweep` of the states ``lo .. hi - 1``."""
    residual = 0.0
    for s in range(np.uint64(lo), np.uint64(hi)):
        v = soft_value(model, V, gamma, beta, ref, s)
        out[s] = v
        residual = max(residual, distance(v, V[s]))
    return residual


@njit(cache=True)
def soft_sweep_inplace(model, V, gamma, beta, ref):
    """An in-place sweep of the soft optimality operator, in state order (the arguments of
    :func:`soft_sweep`); returns the residual."""
    residual = 0.0
    for s in range(V.shape[0] - 1):
        v = soft_value(model, V, gamma, beta, ref, s)
        residual = max(residual, distance(v, V[s]))
        V[s] = v
    return residual


def q_table(model, V, gamma):
    """``Q [S, A]``, ``Q[s, a] = q(s, a)`` of the values ``V [S + 1]`` for every pair
    (eq. 4.6)."""
    Q = np.empty((V.shape[0] - 1, model.successor.shape[1]))
    over_states(_q_rows, Q.shape[0], model, (V, gamma, Q))
    return Q


@njit(cache=True)
def _q_rows(model, V, gamma, Q, lo, hi):
    """:func:`q_table`'s rows ``lo .. hi - 1``, written into ``Q``; returns 0 (the
    residual :func:`over_states` asks of a kernel: ``Q`` is no iterate)."""
    for s in range(np.uint64(lo), np.uint64(hi)):
        for a in range(Q.shape[1]):
            Q[s, a] = q_value(model, V, gamma, s, a)
    return 0.0


# The parallel drivers: each range kernel over numba's parallel loop, ``[0, n)`` split
# into ``chunks`` contiguous ranges (one per thread), the largest residual returned. The
# caller reads the thread count (read in the kernel, it would keep numba from caching
# it), and the model comes apart from the tuple of the other arguments: a parallel loop
# takes a record, but not a tuple that holds one.


@njit(inline="always")
def _largest_over_chunks(kernel, model, args, n, chunks):
    """The parallel loop of a driver: ``kernel(model, *args, lo, hi)`` on each of the
    ``chunks`` ranges, the largest residual returned. ``kernel`` is the range kernel the
    driver names; inlined into the driver before typing (and before the parallel loop is
    made), so the driver compiles and caches as with the loop written out in it
    (docs/decisions/2026-12-06-duplicates-2.md)."""
    residual = 0.0
    for chunk in prange(chunks):
        residual = max(residual, kernel(model, *args, chunk * n // chunks,
                                        (chunk + 1) * n // chunks))
    return residual


@njit(cache=True, parallel=True)
def _optimality_states_parallel(model, args, n, chunks):
    """:func:`_optimality_states` over numba's parallel loop."""
    return _largest_over_chunks(_optimality_states, model, args, n, chunks)


@njit(cache=True, parallel=True)
def _optimality_blocks_parallel(model, args, n, chunks):
    """:func:`_optimality_blocks` over numba's parallel loop."""
    return _largest_over_chunks(_optimality_blocks, model, args, n, chunks)


@njit(cache=True, parallel=True)
def _expectation_states_parallel(model, args, n, chunks):
    """:func:`_expectation_states` over numba's parallel loop."""
    return _largest_over_chunks(_expectation_states, model, args, n, chunks)


@njit(cache=True, parallel=True)
def _soft_states_parallel(model, args, n, chunks):
    """:func:`_soft_states` over numba's parallel loop."""
    return _largest_over_chunks(_soft_states, model, args, n, chunks)


@njit(cache=True, parallel=True)
def _q_rows_parallel(model, args, n, chunks):
    """:func:`_q_rows` over numba's parallel loop."""
    return _largest_over_chunks(_q_rows, model, args, n, chunks)


#: Each range kernel's parallel driver.
_PARALLEL = {
    _optimality_states: _optimality_states_parallel,
    _optimality_blocks: _optimality_blocks_parallel,
    _expectation_states: _expectation_states_parallel,
    _soft_states: _soft_states_parallel,
    _q_rows: _q_rows_parallel,
}
