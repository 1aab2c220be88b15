"""LinUCB and linear Thompson sampling against exact answers: the ridge statistics'
Sherman-Morrison update against a matrix inverse, the posterior draw's factor, the index
by hand, the exact pseudo-regret, and regret that stops growing once theta is learnt."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from tabular import ContextualArms, lin_ucb, linear_thompson_sampling
from tabular._numba.rng import seed_states
from tabular.rules.linear_bandits import gaussian_draw, lin_ucb_index, sherman_morrison


def _instance(contexts=4, k=3, d=5, seed=0, sd=0.5):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(contexts, k, d)) / np.sqrt(d)
    return ContextualArms(features, rng.normal(size=d), sd=sd)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_sherman_morrison_is_the_inverse_of_the_updated_matrix(d, seed):
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(d, d))
    A = m @ m.T + np.eye(d)
    x = rng.normal(size=d)
    inverse = np.linalg.inv(A)
    sherman_morrison(inverse, x, np.empty(d))
    exact = np.linalg.inv(A + np.outer(x, x))
    np.testing.assert_allclose(inverse, exact, atol=1e-9 * np.abs(exact).max())


@njit(cache=True)
def _factor(mean, inverse, rng):
    d = mean.shape[0]
    factor, out = np.zeros((d, d)), np.zeros(d)
    gaussian_draw(mean, inverse, 1.0, rng, factor, out)
    return factor


@njit(cache=True)
def _draws(mean, inverse, scale, n, rng):
    d = mean.shape[0]
    factor, out = np.zeros((d, d)), np.zeros((n, d))
    for i in range(n):
        gaussian_draw(mean, inverse, scale, rng, factor, out[i])
    return out


def test_posterior_draws_have_the_posterior_covariance():
    rng = np.random.default_rng(1)
    m = rng.normal(size=(3, 3))
    inverse = np.linalg.inv(m @ m.T + np.eye(3))
    mean = np.array([0.5, -1.0, 2.0])
    factor = _factor(mean, inverse, seed_states(0)[0])
    np.testing.assert_allclose(factor @ factor.T, inverse, atol=1e-12)
    x = _draws(mean, inverse, 2.0, 100_000, seed_states(1)[0])
    # each entry of a sample covariance of n draws: s.e. <= sqrt(2 / n) * max variance
    tol = 5 * np.sqrt(2 / 100_000) * 4 * inverse.diagonal().max()
    np.testing.assert_allclose(np.cov(x.T), 4 * inverse, atol=tol)
    np.testing.assert_allclose(x.mean(axis=0), mean, atol=5 * np.sqrt(4 * inverse.max() / 1e5))


def test_lin_ucb_index_by_hand():
    inverse = np.array([[0.5, 0.0], [0.0, 0.25]])
    x, theta = np.array([1.0, 2.0]), np.array([0.3, -0.1])
    # x.theta = 0.1; x^T A^-1 x = 0.5 + 1.0 = 1.5
    assert lin_ucb_index(x, theta, inverse, 2.0) == pytest.approx(0.1 + 2 * np.sqrt(1.5))


@pytest.mark.parametrize("method", [lin_ucb, linear_thompson_sampling])
def test_pseudo_regret_is_the_gaps_of_the_pulls_in_each_context(method):
    arms = _instance()
    res = method(arms, steps=600, runs=4, seed=2)
    means = arms.features @ arms.theta
    np.testing.assert_allclose(res.means, means, rtol=0, atol=1e-15)
    gaps = means.max(axis=1, keepdims=True) - means
    assert res.pulls.shape == (4, 4, 3) and (res.pulls.sum(axis=(1, 2)) == 600).all()
    np.testing.assert_allclose(res.pseudo_regret[:, -1], (res.pulls * gaps).sum(axis=(1, 2)),
                               rtol=0, atol=1e-11)


@pytest.mark.parametrize("method", [lin_ucb, linear_thompson_sampling])
def test_regret_flattens_once_theta_is_learnt(method):
    """Uniform pulls would pay the mean gap every step; after 2000 steps the learners pay
    less than a tenth of it per step over the last 1000 (200 runs)."""
    arms = _instance(seed=3)
    means = arms.features @ arms.theta
    uniform_gap = (means.max(axis=1, keepdims=True) - means).mean()
    res = method(arms, steps=3000, runs=200, seed=4)
    late = (res.pseudo_regret[:, -1] - res.pseudo_regret[:, -1001]).mean() / 1000
    assert late < uniform_gap / 10


def test_one_hot_features_are_the_tabular_associative_search():
    """d = C k one-hot features: each (context, arm) has its own weight, learnt from its
    own pulls alone (A is diagonal), which is section 2.9's tabular associative search.
    With negligible noise, LinUCB's widths shrink as 1 / sqrt(1 + n): each context's most
    pulled arm is its best one after 400 steps."""
    contexts, k = 2, 3
    features = np.eye(contexts * k).reshape(contexts, k, contexts * k)
    theta = np.array([0.2, 0.9, 0.5, 0.7, 0.1, 0.3])
    res = lin_ucb(ContextualArms(features, theta, sd=1e-6), alpha=1.0, steps=400, runs=3,
                  seed=5)
    assert (res.pulls.argmax(axis=2) == [1, 0]).all()  # pulls: [runs, C, k]


@pytest.mark.parametrize("method", [lin_ucb, linear_thompson_sampling])
def test_same_seed_same_numbers_and_runs_are_independent_of_their_count(method):
    arms = _instance()
    a, b = method(arms, steps=100, runs=4, seed=6), method(arms, steps=100, runs=4, seed=6)
    np.testing.assert_array_equal(a.regret, b.regret)
    np.testing.assert_array_equal(method(arms, steps=100, runs=2, seed=6).regret, a.regret[:2])
    single = method(arms, steps=100, seed=6)
    assert single.runs is None and single.pulls.shape == (4, 3)
    np.testing.assert_array_equal(single.regret, a.regret[0])
