"""Bernoulli Bayes-UCB's Beta quantiles, each arm's bisection remembered between steps.

Bayes-UCB's index of an arm is the ``1 - 1/t`` quantile of its ``Beta(a, b)`` posterior,
found by bisection on the incomplete beta function from ``[0, 1]``
(:func:`~tabular.rules.bandit_indices.beta_quantile`): some twenty evaluations of the
CDF (a continued fraction, a logarithm and an exponential each) and three ``lgamma``
per arm and step. Between two pulls of an arm its ``a`` and ``b`` do not change, and
only ``p = 1 - 1/t`` moves: the bisection visits the same midpoints as at the last step
until the first one whose CDF lies between the old and the new ``p``. Each arm keeps the
midpoints of its last bisection and the CDF at each, and its normalising constant: a
midpoint equal to the remembered one at the same depth reuses the remembered CDF (the
same function of the same numbers: the same bits), every other is computed and
remembered. The indices, hence the pulls and every draw, are those of the full
bisection. :mod:`tabular.learn.bisected_argmax` takes these halvings only as far as the
greedy choice needs.

``docs/decisions/2026-12-06-explore-speed-2.md`` gives the figures.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular.rules.bandit_indices import beta_cdf_normed, beta_log_norm

#: The deepest bisection remembered: ``tol >= 1e-12`` ends it within 40 halvings.
MAX_DEPTH = 64


class QuantilePaths(NamedTuple):
    """Each arm's last bisection: ``middles[arm, i]`` the midpoint at depth ``i``,
    ``cdfs[arm, i]`` the CDF there, ``known[arm]`` how many depths hold,
    ``log_norms[arm]`` the posterior's ``log(1 / B(a, b))``."""

    middles: np.ndarray
    cdfs: np.ndarray
    known: np.ndarray
    log_norms: np.ndarray


@njit(cache=True, inline="always")
def new_paths(k):
    """The :class:`QuantilePaths` of ``k`` arms, none remembered."""
    return QuantilePaths(np.zeros((k, MAX_DEPTH)), np.zeros((k, MAX_DEPTH)),
                         np.zeros(k, dtype=np.int64), np.zeros(k))


@njit(cache=True)  # a call, not inlined: see the docstring
def forget(paths, arm, alpha, beta):
    """Arm ``arm``'s posterior is now ``Beta(alpha, beta)``: its path is forgotten and its
    normalising constant computed (:func:`~tabular.rules.bandit_indices.beta_log_norm`).
    Compiled apart and called (once per pull): inlined into the regret kernels, whose
    drivers numba's parallel pipeline compiles (:mod:`tabular._numba.runs`), its two
    writes were lost (the log normaliser read back 0, every quantile wrong)."""
    known, log_norms = paths.known, paths.log_norms
    known[arm] = 0
    log_norms[arm] = beta_log_norm(alpha, beta)


@njit(cache=True, inline="always")
def remembered_halve(paths, arm, p, alpha, beta, low, high, depth):
    """One step of :func:`~tabular.rules.bandit_indices.beta_quantile_halve` of arm
    ``arm``'s posterior ``Beta(alpha, beta)`` (as last given to :func:`forget`), the
    ``depth``-th of its bisection: the half of ``(low, high]`` that holds the
    ``p``-quantile, the CDF at the midpoint read from the arm's path if the midpoint is
    the remembered one, else computed and remembered."""
    middles, cdfs, known = paths.middles[arm], paths.cdfs[arm], paths.known
    middle = 0.5 * (low + high)
    if depth < known[arm] and middles[depth] == middle:
        cdf = cdfs[depth]
    else:
        cdf = beta_cdf_normed(middle, alpha, beta, paths.log_norms[arm])
        if depth < MAX_DEPTH:
            middles[depth], cdfs[depth] = middle, cdf
            known[arm] = depth + 1
    if cdf < p:
        return middle, high
    return low, middle
