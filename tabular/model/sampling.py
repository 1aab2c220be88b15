"""Sampling kernels: the one door through which learners reach the dynamics.

Learning algorithms are model-free: they draw transitions with :func:`sample_step`,
start states with :func:`sample_start` and actions of a softmax policy with
:func:`~tabular.rules.policy_gradient.sample_softmax`, each from the run's own xoshiro stream
(:mod:`tabular._numba.rng`).
"""

from __future__ import annotations

from numba import njit

from tabular._numba.rng import normal, uniform
from tabular.model.outcomes import (
    n_outcomes,
    outcome_noise,
    outcome_prob,
    outcome_reward,
    outcome_state,
    search_outcome,
    searchable,
)


@njit(cache=True, inline="always")
def sample_step(model, s, a, rng):
    """Sample one transition ``(s', r, done)`` of ``(s, a)`` from ``model`` (a
    :class:`~tabular.model.mdp.ModelArrays`, read through :mod:`tabular.model.outcomes`) by
    inverse CDF.

    The only door through which learning kernels reach the dynamics. With ``K = 1``
    the outcome is certain and nothing is drawn. Otherwise it draws one uniform
    number; the outcome picked is the first of positive probability whose cumulative
    probability exceeds the draw (the last positive one if rounding leaves a gap): by
    :func:`scan_outcome` when K is small, by the search tables of a model with many
    outcomes (:func:`~tabular.model.outcomes.search_outcome`), the same outcome for
    every draw. An outcome with Gaussian reward noise (``reward_sd > 0``) then draws
    one normal number; no other outcome draws anything more, so a model without noise
    keeps its stream.
    """
    k = 0
    if n_outcomes(model) > 1:  # a certain outcome needs no draw
        u = uniform(rng)
        k = search_outcome(model, s, a, u) if searchable(model) else scan_outcome(model, s, a, u)
    where = outcome_state(model, s, a, k)
    r = outcome_reward(model, s, a, k)
    sd = outcome_noise(model, s, a, k)
    if sd > 0.0:
        r += sd * normal(rng)
    return where[0], r, where[1]


@njit(cache=True, inline="always")
def scan_outcome(model, s, a, u):
    """The first outcome of ``(s, a)`` of positive probability whose running sum of
    probabilities exceeds the draw ``u``, or the last of positive probability when
    rounding leaves ``u`` past them all: a scan of all K outcomes without an early exit,
    since branch-free selection avoids the mispredicted exits of a stochastic model."""
    acc = 0.0
    k = 0
    found = False
    for j in range(n_outcomes(model)):
        p = outcome_prob(model, s, a, j)
        live = (p > 0.0) & (not found)
        acc += p
        k = j if live else k
        found = found | (live & (u < acc))
    return k


@njit(cache=True, inline="always")
def sample_start(model, rng):
    """A start state drawn from the model's cumulative start distribution."""
    u = uniform(rng) * model.start_cdf[-1]
    return min(count_at_most(model.start_cdf, u), model.start_cdf.shape[0] - 1)


@njit(cache=True)
def count_at_most(cdf, u):
    """The number of entries of the nondecreasing ``cdf`` that are ``<= u``, by binary
    search: ``np.searchsorted(cdf, u, side="right")`` written out
    (docs/decisions/2026-12-04-sampler-search-tables.md says why)."""
    lo, hi = 0, cdf.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if cdf[mid] <= u:
            lo = mid + 1
        else:
            hi = mid
    return lo
