"""Bernoulli Bayes-UCB's certified argmax against SciPy's Beta quantiles: every pull is
the arm of the largest ``1 - 1/t`` quantile unless the two largest are within ``tol``;
the certificates (the incomplete beta function, its recurrences on a pull) against
``scipy.stats.beta``, with error bounds derived from the arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from scipy import stats

import tabular
from tabular import BanditArms
from tabular.learn.quantile_certificates import (
    CAP,
    FLOOR,
    GUESS,
    HIGH,
    LOG_NORM,
    LOW,
    MAX_RECURRENCES,
    expire,
    new_certificates,
    probe,
    renew,
)
from tabular.rules.bandit_indices import beta_cdf, beta_cdf_and_density, beta_log_norm

EPS = np.finfo(float).eps


def cdf_error(x, a, b):
    """A bound on the error of :func:`beta_cdf_and_density`'s CDF. Its front factor is
    ``exp(L)``, ``L = log(1 / B(a, b)) + a log x + b log(1 - x)``, five terms each
    rounded (``lgamma``, ``log``, a product, a sum) to at most 2 ulps of its magnitude: a
    relative error of 8 eps times their absolute sum. The continued fraction stops at a
    relative change of 1e-15 (Lentz), each of its steps rounding ~4 times (at most 1000
    steps for shapes up to 2000: 4000 eps). The tail (at most 1) carries these relative
    errors, plus one rounding of ``1 - tail``."""
    terms = (abs(math.lgamma(a + b)) + abs(math.lgamma(a)) + abs(math.lgamma(b))
             + abs(a * math.log(x)) + abs(b * math.log1p(-x)))
    return 8 * EPS * terms + 1e-15 + 4000 * EPS + EPS


@settings(max_examples=60, deadline=None)
@given(st.floats(0.001, 0.999), st.floats(1.0, 2000.0), st.floats(1.0, 2000.0))
def test_beta_cdf_and_density_against_scipy(x, a, b):
    """The CDF within :func:`cdf_error`; the density, the same front factor over
    ``x (1 - x)``, within that relative error."""
    error = cdf_error(x, a, b)
    cdf, density = beta_cdf_and_density(x, a, b, beta_log_norm(a, b))
    assert abs(cdf - stats.beta.cdf(x, a, b)) <= error
    assert beta_cdf(x, a, b) == cdf
    assert density == pytest.approx(stats.beta.pdf(x, a, b), rel=error, abs=1e-300)


@njit(cache=True)
def _carry(x, a, b, outcomes, p):
    """Arm 0 of fresh certificates probed at ``x`` under ``Beta(a, b)`` (its lower end
    if ``I_x < p``, else its upper end), then carried through ``outcomes`` (1: a success,
    0: a failure): ``I`` at its ends after each pull ``[pulls, 2]`` (floor, cap)."""
    c = new_certificates(1)
    c[LOG_NORM, 0] = beta_log_norm(a, b)
    probe(c, 0, x, p, a, b)
    out = np.empty((outcomes.shape[0], 2))
    for i in range(outcomes.shape[0]):
        success = outcomes[i] == 1
        a, b = (a + 1.0, b) if success else (a, b + 1.0)
        renew(c, 0, a, b, success, p)
        out[i, 0], out[i, 1] = c[FLOOR, 0], c[CAP, 0]
    return out, c[LOW, 0], c[HIGH, 0]


@settings(max_examples=30, deadline=None)
@given(st.floats(0.01, 0.99), st.integers(1, 1500), st.integers(1, 1500),
       st.lists(st.integers(0, 1), min_size=1, max_size=MAX_RECURRENCES))
def test_a_pull_carries_the_cdf_by_recurrence(x, a, b, outcomes):
    """DLMF 8.17.20-21 carry ``I`` at both ends of the bracket: each step within the
    fresh CDF's error (:func:`cdf_error`) plus the front factor's, at most the error of
    the posterior it came from, so ``k`` pulls within ``k + 1`` times the largest."""
    carried, low, high = _carry(x, float(a), float(b), np.array(outcomes), 0.5)
    shapes = np.array([a, b], dtype=float)
    bound = cdf_error(x, a, b)
    for i, outcome in enumerate(outcomes):
        shapes += (1, 0) if outcome else (0, 1)
        bound += cdf_error(x, *shapes)
        exact = stats.beta.cdf(x, *shapes)
        at_x = carried[i, 0] if low == x else carried[i, 1]
        assert abs(at_x - exact) <= bound
    assert (low, high) in ((x, 1.0), (0.0, x))


@settings(max_examples=60, deadline=None)
@given(st.floats(0.01, 0.99), st.integers(1, 1500), st.integers(1, 1500),
       st.floats(0.5, 1 - 1e-5))
def test_a_probe_is_a_certificate_of_scipys_quantile(x, a, b, p):
    """``I_x < p`` makes ``x`` a lower end (``q(p) > x``), else an upper end with cap
    ``I_x``; up to the CDF's error over the density at ``x``."""
    c = new_certificates(1)
    c[LOG_NORM, 0] = beta_log_norm(float(a), float(b))
    probe(c, 0, x, p, float(a), float(b))
    q = stats.beta.ppf(p, a, b)
    slack = cdf_error(x, a, b) / max(stats.beta.pdf(x, a, b), 1e-300)
    if c[LOW, 0] == x:
        assert q > x - slack and c[HIGH, 0] == 1.0
    else:
        assert c[HIGH, 0] == x and c[LOW, 0] == 0.0 and q <= x + slack
        assert abs(c[CAP, 0] - stats.beta.cdf(x, a, b)) <= cdf_error(x, a, b)
    assert c[LOW, 0] <= c[GUESS, 0] <= c[HIGH, 0]  # the guess stays within the bracket


def test_expire_turns_ends_by_hand():
    """An upper end whose cap ``p`` passed is a lower end; a lower end whose ``I``
    reached ``p`` is an upper end; the others stay."""
    c = new_certificates(3)
    c[[LOW, FLOOR, HIGH, CAP], 0] = 0.2, 0.1, 0.6, 0.95   # cap < p: 0.6 a lower end
    c[[LOW, FLOOR, HIGH, CAP], 1] = 0.3, 0.97, 1.0, 1.0   # floor >= p: 0.3 an upper end
    c[[LOW, FLOOR, HIGH, CAP], 2] = 0.4, 0.5, 0.7, 0.99   # both valid
    expire(c, 0.96)
    np.testing.assert_array_equal(c[[LOW, FLOOR, HIGH, CAP]].T,
                                  [[0.6, 0.95, 1.0, 1.0], [0.0, 0.0, 0.3, 0.97],
                                   [0.4, 0.5, 0.7, 0.99]])


def _pulls_and_rewards(res, means):
    """Each run's pulled arm and reward at every step, read back from the cumulative
    pseudo-regret (the pulled arm's gap; the means are distinct) and regret."""
    best = max(means)
    gaps = best - np.asarray(means)
    pseudo = np.diff(res.pseudo_regret, axis=1, prepend=0.0)
    arms = np.abs(pseudo[..., None] - gaps).argmin(-1)
    assert np.allclose(gaps[arms], pseudo, atol=1e-9)
    rewards = np.rint(best - np.diff(res.regret, axis=1, prepend=0.0))
    return arms, rewards


def _quantiles(arms, rewards, k):
    """SciPy's ``1 - 1/t`` quantiles of every arm's posterior before each step ``[runs,
    steps, k]`` (NaN for an arm not yet pulled), and each one's error bound: SciPy's own
    (its residual ``|I_q - p|``) and the kernel's (:func:`cdf_error`, ``MAX_RECURRENCES
    + 1`` times for the recurrences) over the density at the quantile."""
    runs, steps = arms.shape
    onehot = np.eye(k)[arms]
    counts = np.cumsum(onehot, axis=1) - onehot
    wins = np.cumsum(onehot * rewards[..., None], axis=1) - onehot * rewards[..., None]
    a, b = wins + 1, counts - wins + 1
    p = 1 - 1 / np.arange(1, steps + 1)[None, :, None]
    with np.errstate(all="ignore"):
        q = np.where(counts > 0, stats.beta.ppf(p, a, b), np.nan)
        residual = np.abs(stats.beta.cdf(q, a, b) - p)
        terms = (np.abs(np.vectorize(math.lgamma)(a + b)) + np.abs(np.vectorize(math.lgamma)(a))
                 + np.abs(np.vectorize(math.lgamma)(b)) + np.abs(a * np.log(q))
                 + np.abs(b * np.log1p(-q)))
        ours = (MAX_RECURRENCES + 1) * (8 * EPS * terms + 1e-15 + 4000 * EPS + EPS)
        error = (residual + ours) / stats.beta.pdf(q, a, b) + 4 * EPS
    return q, counts, error


@pytest.mark.parametrize("means, tol", [
    (tuple(np.linspace(0.1, 0.55, 10)), 1e-6),
    ((0.3, 0.5, 0.45, 0.1), 1e-3),
    ((0.5, 0.51, 0.52, 0.2, 0.9), 1e-6),
    ((0.05, 0.02, 0.08), 1e-12),
])
def test_every_pull_is_the_argmax_of_scipys_quantiles(means, tol):
    """Untried arms first; then every pull's quantile is above the largest minus ``tol``
    (the module's ``3 tol / 4`` plus the errors), and it is the largest whenever the
    largest exceeds the second by ``tol`` or more (plus the errors)."""
    res = tabular.bayes_ucb(BanditArms(means), steps=400, runs=3, seed=5, tol=tol)
    arms, rewards = _pulls_and_rewards(res, means)
    q, counts, error = _quantiles(arms, rewards, len(means))
    untried = (counts == 0).any(-1)
    pulled_untried = np.take_along_axis(counts, arms[..., None], -1)[..., 0] == 0
    assert (pulled_untried == untried).all()
    run, step = np.nonzero(~untried)
    q, error, pulled = q[run, step], error[run, step], arms[run, step]
    order = np.argsort(q, axis=-1)
    top, second = order[:, -1], order[:, -2]
    rows = np.arange(len(run))
    q_top, q_second, q_pulled = q[rows, top], q[rows, second], q[rows, pulled]
    slack = error[rows, top] + error[rows, pulled]
    assert (q_pulled > q_top - 0.75 * tol - slack).all()
    apart = q_top - q_second >= tol + error[rows, top] + error[rows, second]
    assert (pulled[apart] == top[apart]).all()
    assert apart.mean() > 0.5  # most steps are decided exactly, not by the tie rule
