"""The pieces of the linear contextual bandits (LinUCB, linear Thompson sampling): the
ridge-regression statistics kept as ``A^{-1}`` and ``b`` and updated in ``O(d^2)`` per
pull (Sherman-Morrison), the index, and a draw from ``N(mean, scale^2 A^{-1})``."""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular._numba.rng import normal


@njit(cache=True, inline="always")
def sherman_morrison(inverse, x, scratch):
    """``inverse <- (A + x x^T)^{-1}`` from ``inverse = A^{-1}`` (A symmetric):
    ``A^{-1} - (A^{-1} x)(A^{-1} x)^T / (1 + x^T A^{-1} x)``; ``scratch`` ``[d]``."""
    d = x.shape[0]
    for i in range(d):
        total = 0.0
        for j in range(d):
            total += inverse[i, j] * x[j]
        scratch[i] = total
    denominator = 1.0
    for i in range(d):
        denominator += x[i] * scratch[i]
    for i in range(d):
        for j in range(d):
            inverse[i, j] -= scratch[i] * scratch[j] / denominator


@njit(cache=True, inline="always")
def lin_ucb_index(x, theta, inverse, alpha):
    """LinUCB's index (Li et al., 2010, eq. 5; Chu et al., 2011): ``x^T theta +
    alpha sqrt(x^T A^{-1} x)``."""
    d = x.shape[0]
    mean, width = 0.0, 0.0
    for i in range(d):
        mean += x[i] * theta[i]
        row = 0.0
        for j in range(d):
            row += inverse[i, j] * x[j]
        width += x[i] * row
    return mean + alpha * np.sqrt(max(width, 0.0))


@njit(cache=True, inline="always")
def gaussian_draw(mean, inverse, scale, rng, factor, out):
    """``out ~ N(mean, scale^2 A^{-1})``: ``mean + scale L z``, ``L`` the Cholesky factor of
    ``A^{-1}`` (written into ``factor`` ``[d, d]``), ``z`` standard normal."""
    d = mean.shape[0]
    for j in range(d):
        total = inverse[j, j]
        for m in range(j):
            total -= factor[j, m] * factor[j, m]
        factor[j, j] = np.sqrt(max(total, 0.0))
        for i in range(j + 1, d):
            total = inverse[i, j]
            for m in range(j):
                total -= factor[i, m] * factor[j, m]
            factor[i, j] = total / factor[j, j] if factor[j, j] > 0.0 else 0.0
    for i in range(d):
        out[i] = mean[i]
    for j in range(d):
        z = normal(rng)
        for i in range(j, d):
            out[i] += scale * factor[i, j] * z
