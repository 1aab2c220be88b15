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
from tabular._numba.rng import normal, randint, seed_states
from tabular.rules.linear_bandits import (
    EPSILON,
    REORDERED,
    gaussian_draw,
    ldl_rank_one_update,
    lin_ucb_indices,
    ridge_estimate,
    sherman_morrison_factor,
    width,
)

U = EPSILON / 2  # the unit roundoff


def _instance(contexts=4, k=3, d=5, seed=0, sd=0.5):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(contexts, k, d)) / np.sqrt(d)
    return ContextualArms(features, rng.normal(size=d), sd=sd)


def _gamma(n):
    """Higham's ``gamma_n = n u / (1 - n u)``: the relative error of a sum of ``n``
    products, in any order, fused or not (Higham, 2002, section 3.1)."""
    return n * U / (1 - n * U)


@njit(cache=True, fastmath=REORDERED)
def _sherman_morrison(inverse, xs):
    """``inverse`` after the updates by the rows of ``xs``, each applied as the kernel
    does: the factor of one pull, applied by the next :func:`ridge_estimate`."""
    d = inverse.shape[0]
    pending, products, theta_hat, b = np.zeros(d), np.zeros((1, d)), np.zeros(d), np.zeros(d)
    for t in range(xs.shape[0]):
        ridge_estimate(inverse, pending, b, theta_hat)
        sherman_morrison_factor(products[0], width(xs[t:t + 1], 0, inverse, products),
                                pending)
    ridge_estimate(inverse, pending, b, theta_hat)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_sherman_morrison_is_the_inverse_of_the_updated_matrix(d, seed):
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(d, d))
    A = m @ m.T + np.eye(d)
    xs = rng.normal(size=(3, d))
    inverse = np.linalg.inv(A)
    inverse = (inverse + inverse.T) / 2
    _sherman_morrison(inverse, xs)
    exact = np.linalg.inv(A + xs.T @ xs)
    # three updates of (d + 2)-term sums each, amplified by the condition number
    tol = np.linalg.cond(A) * 3 * _gamma(2 * d + 4) * np.abs(exact).max() * d
    np.testing.assert_allclose(inverse, exact, rtol=0, atol=tol)
    np.testing.assert_array_equal(inverse, inverse.T)  # p_i p_j is p_j p_i, bit for bit


@njit(cache=True, fastmath=REORDERED)
def _indices(features, inverse, b, alpha):
    """Every output of :func:`lin_ucb_indices` for one context, and every arm's width."""
    k, d = features.shape
    lengths = np.sqrt((features * features).sum(axis=1))
    products, widths, indices = np.zeros((k, d)), np.zeros(k), np.zeros(k)
    theta_hat, means, bounds, pending = np.zeros(d), np.zeros(k), np.zeros(k), np.zeros(d)
    computed = np.zeros(k, dtype=np.bool_)
    lin_ucb_indices(features, lengths, inverse, pending, b, alpha, theta_hat, means, bounds,
                    products, widths, indices, computed)
    every = np.zeros(k)
    for a in range(k):
        every[a] = width(features, a, inverse, products)
    return indices, computed, means, every


def _ridge_state(rng, d, pulls):
    features = rng.normal(size=(pulls, d)) / np.sqrt(d)
    inverse = np.linalg.inv(np.eye(d) + features.T @ features)
    return (inverse + inverse.T) / 2, features.T @ rng.normal(size=pulls)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.integers(1, 12), st.integers(0, 400),
       st.sampled_from([0.0, 0.3, 1.0, 2.4]), st.integers(0, 2**32 - 1))
def test_lin_ucb_indices_are_the_exact_indices_and_the_skipped_arms_cannot_win(d, k, pulls,
                                                                              alpha, seed):
    """Each width against float64 ``einsum`` within ``gamma_{2d} x^T |A^{-1}| x``; every arm
    left at ``-inf`` has its exact index below the greedy one's; and the greedy arm is
    the exact indices' (the old kernel's) unless the best two are within their bound."""
    rng = np.random.default_rng(seed)
    inverse, b = _ridge_state(rng, d, pulls)
    features = rng.normal(size=(k, d)) / np.sqrt(d)
    indices, computed, means, widths = _indices(features, inverse, b, alpha)
    exact_widths = np.einsum("ai,ij,aj->a", features, inverse, features)
    bound = _gamma(2 * d) * np.einsum("ai,ij,aj->a", np.abs(features), np.abs(inverse),
                                      np.abs(features))
    assert (np.abs(widths - exact_widths) <= bound).all()
    exact = features @ (inverse @ b) + alpha * np.sqrt(exact_widths)
    # index error: the mean's gamma_{2d} |x|^T |A^{-1}| |b| and the width's through sqrt
    slack = (_gamma(2 * d + 1) * np.abs(features) @ np.abs(inverse) @ np.abs(b)
             + alpha * bound / np.sqrt(np.maximum(exact_widths, bound)) + 2 * U * np.abs(exact))
    assert computed[np.argmax(indices)] and (indices[~computed] == -np.inf).all()
    root = alpha * np.sqrt(widths)  # the index's last two roundings, fused or not
    np.testing.assert_allclose(indices[computed], (means + root)[computed], rtol=0,
                               atol=2 * U * (np.abs(means) + root).max())
    assert (exact[~computed] < indices.max() + slack[~computed]).all()
    top = np.argsort(exact)[::-1]
    if k == 1 or exact[top[0]] - exact[top[1]] > slack[top[0]] + slack[top[1]]:
        assert np.argmax(indices) == top[0]


def _reference_lin_ucb(arms, alpha, steps, state):
    """LinUCB by ``np.linalg.inv`` and ``einsum`` on the kernel's random stream (a context
    drawn, then the reward's normal): its pseudo-regret, and the least gap between the
    best two indices of its steps."""
    features, theta = np.asarray(arms.features), np.asarray(arms.theta)
    means = features @ theta
    A, b = np.eye(features.shape[2]), np.zeros(features.shape[2])
    pseudo, least_gap = np.zeros(steps), np.inf
    for t in range(steps):
        c = randint(state, features.shape[0])
        x, inverse = features[c], np.linalg.inv(A)
        indices = x @ inverse @ b + alpha * np.sqrt(np.einsum("ai,ij,aj->a", x, inverse, x))
        top = np.sort(indices)[::-1]
        least_gap = min(least_gap, top[0] - top[1])
        a = int(np.argmax(indices))
        reward = means[c, a] + arms.sd * normal(state)
        A += np.outer(x[a], x[a])
        b += reward * x[a]
        pseudo[t] = (pseudo[t - 1] if t else 0.0) + means[c].max() - means[c, a]
    return pseudo, least_gap


def test_lin_ucb_pulls_are_those_of_the_exact_indices():
    """Pull for pull the arms of LinUCB computed in float64 by ``np.linalg.inv``, on the
    same random stream, when no two best indices come within the rounding of either
    computation (the least gap, asserted: ``1e-9`` is far above both, ``~1e-14``)."""
    arms, steps = _instance(contexts=3, k=4, d=3, seed=9), 300
    res = lin_ucb(arms, alpha=1.0, steps=steps, runs=2, seed=8)
    for run, state in enumerate(seed_states(8, 2)):
        pseudo, least_gap = _reference_lin_ucb(arms, 1.0, steps, state.copy())
        assert least_gap > 1e-9
        np.testing.assert_allclose(res.pseudo_regret[run], pseudo, rtol=0, atol=1e-9)


@njit(cache=True, fastmath=REORDERED)
def _factor(xs, rewards, regularization):
    """``A = L D L^T`` and ``L^{-1} b`` after the pulls ``xs`` with ``rewards``, from
    ``lambda I``, as the kernel keeps them."""
    n, d = xs.shape
    upper, inverse_diagonal = np.eye(d), np.full(d, 1.0 / regularization)
    deviations = np.sqrt(inverse_diagonal)
    b, solved, scratch = np.zeros(d), np.zeros(d), np.zeros(d)
    for t in range(n):
        for i in range(d):
            b[i] += rewards[t] * xs[t, i]
        ldl_rank_one_update(upper, inverse_diagonal, deviations, xs[t], b, scratch, solved)
    return upper, inverse_diagonal, deviations, b, solved


@njit(cache=True, fastmath=REORDERED)
def _draws(solved, upper, inverse_diagonal, deviations, scale, n, rng):
    d = solved.shape[0]
    z, out = np.zeros(d), np.zeros((n, d))
    for m in range(n):
        for i in range(d):
            z[i] = normal(rng)
        gaussian_draw(solved, upper, inverse_diagonal, deviations, scale, z, out[m])
    return out


def test_the_factor_after_n_updates_is_the_cholesky_factor_of_a():
    """``L D^{1/2}`` after 300 updates against ``np.linalg.cholesky(A)``: each update's
    multiply-adds perturb ``A`` by at most ``gamma_{2d+4}`` of its size, and a perturbation
    ``E`` of ``A`` moves its Cholesky factor by at most ``kappa(A) |E| / |A|`` of its own
    size, to first order (Sun, 1991)."""
    rng = np.random.default_rng(7)
    n, d, regularization = 300, 6, 0.5
    xs, rewards = rng.normal(size=(n, d)) / np.sqrt(d), rng.normal(size=n)
    upper, inverse_diagonal, deviations, b, solved = _factor(xs, rewards, regularization)
    A = regularization * np.eye(d) + xs.T @ xs
    cholesky = np.linalg.cholesky(A)
    tol = np.linalg.cond(A) * n * _gamma(2 * d + 4) * np.abs(cholesky).max()
    np.testing.assert_allclose(upper.T / deviations, cholesky, rtol=0, atol=tol)
    np.testing.assert_allclose(deviations ** 2, inverse_diagonal, rtol=4 * U)
    np.testing.assert_allclose(b, xs.T @ rewards, rtol=0, atol=n * _gamma(1) * np.abs(
        xs.T).dot(np.abs(rewards)).max())
    np.testing.assert_allclose(upper.T @ solved, b, rtol=0,
                               atol=np.linalg.cond(A) * _gamma(2 * d) * np.abs(b).max() * d)


def test_posterior_draws_have_the_posterior_mean_and_covariance():
    """Draws ``L^{-T} (D^{-1} L^{-1} b + v D^{-1/2} z)`` against ``N(A^{-1} b, v^2
    A^{-1})`` (float64 ``np.linalg``): each entry of a sample covariance of ``n`` draws
    has standard error at most ``sqrt(2 / n)`` times the largest variance, each mean
    ``sqrt(variance / n)``; five of them."""
    rng = np.random.default_rng(1)
    d, n = 3, 100_000
    xs, rewards = rng.normal(size=(20, d)), rng.normal(size=20)
    upper, inverse_diagonal, deviations, b, solved = _factor(xs, rewards, 1.0)
    A = np.eye(d) + xs.T @ xs
    covariance, mean = 4 * np.linalg.inv(A), np.linalg.solve(A, b)
    x = _draws(solved, upper, inverse_diagonal, deviations, 2.0, n, seed_states(1)[0])
    tol = 5 * np.sqrt(2 / n) * covariance.diagonal().max()
    np.testing.assert_allclose(np.cov(x.T), covariance, rtol=0, atol=tol)
    assert (np.abs(x.mean(axis=0) - mean) <= 5 * np.sqrt(covariance.diagonal() / n)).all()
    no_noise = _draws(solved, upper, inverse_diagonal, deviations, 0.0, 1, seed_states(1)[0])
    np.testing.assert_allclose(no_noise[0], mean, rtol=0,
                               atol=np.linalg.cond(A) * _gamma(4 * d) * np.abs(mean).max() * d)


def test_lin_ucb_index_by_hand():
    inverse = np.array([[0.5, 0.0], [0.0, 0.25]])
    x = np.array([[1.0, 2.0]])
    b = np.linalg.solve(inverse, [0.3, -0.1])  # theta_hat = (0.3, -0.1)
    # x.theta_hat = 0.1; x^T A^-1 x = 0.5 + 1.0 = 1.5
    indices, _, _, widths = _indices(x, inverse, b, 2.0)
    assert widths[0] == 1.5
    assert indices[0] == pytest.approx(0.1 + 2 * np.sqrt(1.5), rel=4 * U)


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
