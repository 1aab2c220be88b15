"""Bayes-UCB's remembered bisections give the full bisection's quantile, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from tabular.learn.quantile_paths import forget, new_paths, remembered_halve
from tabular.rules.bandit_indices import beta_quantile


@njit(cache=True)
def _remembered_quantile(paths, p, alpha, beta, tol):
    """Arm 0's bisection to ``tol`` by :func:`remembered_halve`."""
    low, high, depth = 0.0, 1.0, 0
    while high - low > tol:
        low, high = remembered_halve(paths, 0, p, alpha, beta, low, high, depth)
        depth += 1
    return high


@njit(cache=True)
def _mismatches(posteriors, steps, tol):
    """Arm 0 through ``posteriors`` ``[m, 2]`` in turn, each held for ``steps``
    steps ``t = 2, 3, ...`` (``p = 1 - 1/t``, as Bayes-UCB's): the steps whose remembered
    quantile is not the full bisection's, and how many CDFs were read from the path."""
    paths = new_paths(1)
    bad, reused, t = 0, 0, 2
    for i in range(posteriors.shape[0]):
        alpha, beta = posteriors[i, 0], posteriors[i, 1]
        forget(paths, 0, alpha, beta)
        for _ in range(steps):
            p = 1.0 - 1.0 / t
            known = paths.known[0]
            if _remembered_quantile(paths, p, alpha, beta, tol) != beta_quantile(
                    p, alpha, beta, tol):
                bad += 1
            reused += known  # an upper bound on the reads; 0 when nothing is kept
            t += 1
    return bad, reused


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), min_size=1, max_size=4),
       st.sampled_from([1e-3, 1e-6, 1e-12]))
def test_remembered_quantile_is_the_full_bisection(counts, tol):
    posteriors = np.array([[s + 1.0, f + 1.0] for s, f in counts])
    bad, reused = _mismatches(posteriors, 40, tol)
    assert bad == 0
    assert reused > 0
