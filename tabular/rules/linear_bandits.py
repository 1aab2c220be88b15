"""The pieces of the linear contextual bandits (LinUCB, linear Thompson sampling), on the
ridge-regression statistics ``A = lambda I + sum x x^T`` and ``b = sum r x``, each updated
in ``O(d^2)`` a pull:

- LinUCB keeps ``A^{-1}``, updated by Sherman-Morrison as the next step reads it, and
  computes an arm's width ``x^T A^{-1} x`` only when a bound says the arm may be the
  greedy one;
- linear Thompson sampling keeps ``A = L D L^T`` (a rank-one update a pull) and draws from
  ``N(A^{-1} b, v^2 A^{-1})`` by one triangular solve.

The kernels that compose them are compiled with :data:`REORDERED`: their sums may be
reordered and fused, the same quantities to within rounding errors bounded in
``docs/decisions/2026-12-07-linear-bandits-speed.md``."""

from __future__ import annotations

import numpy as np
from numba import njit

#: The floating-point freedoms of the linear bandits' kernels: reordered sums and fused
#: multiply-adds, never the assumption that no NaN or infinity occurs.
REORDERED = {"reassoc", "contract"}

#: ``np.finfo(float).eps``, twice the unit roundoff ``u``.
EPSILON = float(np.finfo(np.float64).eps)


@njit(cache=True, inline="always")
def ridge_estimate(inverse, pending, b, theta_hat):
    """``inverse <- inverse - pending pending^T`` (the last pull's Sherman-Morrison update,
    :func:`sherman_morrison_factor`), then ``theta_hat = A^{-1} b`` (the ridge estimate),
    all in one pass over ``A^{-1}``; returns ``G``, a bound with ``fl(x^T A^{-1} x) <= G
    |x|^2`` for every ``x``, its sums in any order: ``(1 + 8 (d + 2) eps) max_i sum_j
    |A^{-1}_ij|``.

    ``A^{-1}`` is exactly symmetric (entry ``(i, j)`` and ``(j, i)`` subtract the same
    product ``p_i p_j``), so the largest row sum of ``|A^{-1}|`` bounds the spectral norm
    of ``|A^{-1}|`` (Gershgorin): ``x^T A^{-1} x <= x^T |A^{-1}| x <= G_0 |x|^2``. A width
    computed in any order, fused or not, is within ``gamma_{2d} x^T |A^{-1}| x`` of the
    exact one and ``G_0`` is computed low by at most ``gamma_d`` (Higham, 2002, section
    3.1); ``16 (d + 2) u`` covers these and the few roundings of ``alpha sqrt(G) |x|``
    (the record ``docs/decisions/2026-12-07-linear-bandits-speed.md``)."""
    d = b.shape[0]
    largest = 0.0
    for i in range(d):
        total = size = 0.0
        for j in range(d):
            inverse[i, j] -= pending[i] * pending[j]
            total += inverse[i, j] * b[j]
            size += abs(inverse[i, j])
        theta_hat[i] = total
        largest = max(largest, size)
    return largest * (1.0 + 8.0 * (d + 2) * EPSILON)


@njit(cache=True, inline="always")
def width(features, a, inverse, products):
    """``x_a^T A^{-1} x_a`` of arm ``a`` (row ``a`` of ``features``), leaving ``products[a]
    = A^{-1} x_a`` for :func:`sherman_morrison_factor`."""
    d = inverse.shape[0]
    total = 0.0
    for i in range(d):
        row = 0.0
        for j in range(d):
            row += inverse[i, j] * features[a, j]
        products[a, i] = row
        total += features[a, i] * row
    return total


@njit(cache=True, inline="always")
def lin_ucb_indices(features, lengths, inverse, pending, b, alpha, theta_hat, means, bounds,
                    products, widths, indices, computed):
    """LinUCB's indices (Li et al., 2010, eq. 5; Chu et al., 2011) ``x_a^T theta_hat +
    alpha sqrt(x_a^T A^{-1} x_a)`` of the arms of one context, ``features`` ``[k, d]``
    (``lengths[a] = |x_a|``), into ``indices`` ``[k]``, ``computed[a]`` (bool ``[k]``)
    telling whether arm ``a``'s was: one that cannot be the greedy one is not (left at
    ``-inf``). ``A^{-1}`` is first brought up to date (:func:`ridge_estimate`).

    Each arm's index is at most its bound ``x_a^T theta_hat + alpha sqrt(G) |x_a|`` as
    computed (``G`` of :func:`ridge_estimate`; the same ``x_a^T theta_hat`` in both,
    and rounding is monotone): the arm of the largest bound is computed first, another
    only when its bound is not below the best index so far. An arm skipped is below an
    arm computed, so the greedy arm among the computed ones (``greedy_action(indices,
    rng, computed)``) and its ties are those of all ``k`` indices, and no tie of skipped
    arms draws a random number: at one or two widths a step (``d^2`` multiply-adds
    each) once the estimates settle.
    ``products[a] = A^{-1} x_a`` and ``widths[a]`` of the arms computed are left for
    :func:`sherman_morrison_factor`; ``theta_hat`` ``[d]``, ``means`` and ``bounds``
    ``[k]`` are scratch."""
    k, d = features.shape
    spread = alpha * np.sqrt(ridge_estimate(inverse, pending, b, theta_hat))
    first = 0
    for a in range(k):
        mean = 0.0
        for i in range(d):
            mean += features[a, i] * theta_hat[i]
        means[a] = mean
        bounds[a] = mean + spread * lengths[a]
        if bounds[a] > bounds[first]:
            first = a
    best = -np.inf
    for m in range(k):
        a = first if m == 0 else m - 1 + (m - 1 >= first)  # first, then the others in order
        computed[a] = m == 0 or not bounds[a] < best  # a NaN bound skips nothing
        if not computed[a]:
            indices[a] = -np.inf
            continue
        widths[a] = width(features, a, inverse, products)
        indices[a] = means[a] + alpha * np.sqrt(max(widths[a], 0.0))
        best = max(best, indices[a])


@njit(cache=True, inline="always")
def sherman_morrison_factor(product, width, pending):
    """``pending = A^{-1} x / sqrt(1 + x^T A^{-1} x)`` from ``product = A^{-1} x`` and
    ``width = x^T A^{-1} x`` (:func:`width`): Sherman-Morrison's ``(A + x x^T)^{-1} =
    A^{-1} - pending pending^T``, which the next :func:`ridge_estimate` applies as it
    reads ``A^{-1}`` (one pass over it a step, not two)."""
    scale = 1.0 / np.sqrt(1.0 + width)
    for i in range(product.shape[0]):
        pending[i] = product[i] * scale


@njit(cache=True, inline="always")
def ldl_rank_one_update(upper, inverse_diagonal, deviations, x, b, scratch, solved):
    """``A <- A + x x^T`` on ``A = L D L^T`` (``L`` unit lower triangular, held transposed:
    ``upper = L^T``, row ``j`` of ``upper`` column ``j`` of ``L``), in ``O(d^2)``, and
    ``solved = L^{-1} b`` for the new ``L`` and ``b`` (the pulls' ``sum r x``, this one's
    included).

    Gill, Golub, Murray and Saunders (1974), method C1, for ``+ x x^T``: with ``w = x``
    and ``p_j = w_j`` once columns ``< j`` are eliminated (``p = L^{-1} x``), ``d_j' = d_j
    + alpha_j p_j^2``, ``beta_j = alpha_j p_j / d_j'``, ``alpha_{j+1} = alpha_j d_j / d_j'``,
    ``alpha_0 = 1``, and for ``r > j`` ``w_r <- w_r - p_j L_rj``, ``L_rj <- L_rj + beta_j
    w_r``. Written with ``tau_j = 1 / alpha_j = 1 + sum_{m<j} p_m^2 / d_m`` (from the
    recursion), ``d_j' = d_j tau_{j+1} / tau_j`` and ``beta_j = (p_j / d_j) / tau_{j+1}``:
    the loop's chain is the multiply-adds of ``p`` and ``tau``, its divisions and square
    roots off it. The update only adds (``d_j' >= d_j``: no downdate, every ``tau >= 1``),
    and the Cholesky factor is ``L D^{1/2}``. Kept: ``inverse_diagonal = D^{-1}`` and
    ``deviations = D^{-1/2}`` for :func:`gaussian_draw`; ``scratch`` ``[d]``."""
    d = x.shape[0]
    for i in range(d):
        scratch[i] = x[i]
        solved[i] = b[i]
    tau = 1.0
    for j in range(d):
        p = scratch[j]
        quotient = p * inverse_diagonal[j]
        following = tau + p * quotient
        step = 1.0 / following
        beta = quotient * step
        inverse_diagonal[j] *= tau * step
        deviations[j] = np.sqrt(inverse_diagonal[j])
        tau = following
        y = solved[j]
        for r in range(j + 1, d):
            scratch[r] -= p * upper[j, r]
            upper[j, r] += beta * scratch[r]
            solved[r] -= upper[j, r] * y


@njit(cache=True, inline="always")
def gaussian_draw(solved, upper, inverse_diagonal, deviations, scale, z, out):
    """``out ~ N(A^{-1} b, scale^2 A^{-1})`` from ``A = L D L^T`` (``upper = L^T`` unit
    upper triangular), ``solved = L^{-1} b`` (:func:`ldl_rank_one_update`) and ``z``
    ``[d]`` standard normal (drawn by the caller):
    ``out = L^{-T} (D^{-1} L^{-1} b + scale D^{-1/2} z)``, which is ``A^{-1} b + scale
    L^{-T} D^{-1/2} z``, of covariance ``scale^2 L^{-T} D^{-1} L^{-1} = scale^2 A^{-1}``
    exactly. One unit triangular solve, ``O(d^2)``, no division, by columns of ``L^T``:
    a chain of one multiply-add a row, where the solve by rows (contiguous dot
    products) chains their sums (176 against 191 ns a pull, the record)."""
    d = solved.shape[0]
    for i in range(d):
        out[i] = solved[i] * inverse_diagonal[i] + scale * deviations[i] * z[i]
    for i in range(d - 1, -1, -1):  # L^T theta = out, by columns of upper: each entry
        theta = out[i]               # final, its multiples leave the ones above it
        for r in range(i):
            out[r] -= upper[r, i] * theta
