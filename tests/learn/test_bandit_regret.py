"""The regret-measured bandit algorithms against exact answers: the pseudo-regret is the
sum of the gaps of the pulls, hand-computed two-arm cases, KL-UCB's index against a
reference root finder, Thompson sampling's choices against the exact posterior
probability of optimality, and the seeds behave as everywhere else."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from scipy import integrate, optimize, stats

import tabular
from tabular import BanditArms, lai_robbins_constant
from tabular._numba.rng import beta, gamma, seed_states
from tabular.rules import bandit_indices

BERNOULLI_METHODS = [getattr(tabular, name) for name in (
    "thompson_sampling", "kl_ucb", "bayes_ucb", "moss", "ucb_v", "explore_then_commit", "exp3")]
GAUSSIAN_METHODS = [getattr(tabular, name) for name in (
    "thompson_sampling", "kl_ucb", "bayes_ucb", "explore_then_commit")]
ARMS = BanditArms((0.3, 0.5, 0.45, 0.1))


def _kl(p: float, q: float) -> float:
    """The Bernoulli KL in plain Python (0 log 0 = 0)."""
    return sum(x * math.log(x / y) for x, y in ((p, q), (1 - p, 1 - q)) if x > 0)


def test_lai_robbins_constant_by_hand():
    # (0.9 - 0.8) / (0.8 log(0.8/0.9) + 0.2 log(0.2/0.1))
    by_hand = 0.1 / (0.8 * math.log(0.8 / 0.9) + 0.2 * math.log(2.0))
    assert lai_robbins_constant(BanditArms((0.9, 0.8))) == pytest.approx(by_hand, rel=1e-14)
    # Gaussian: gap / (gap^2 / (2 sd^2)) = 2 sd^2 / gap, summed: 2*4/1 + 2*4/2
    gauss = BanditArms((1.0, 0.0, -1.0), law="gaussian", sd=2.0)
    assert lai_robbins_constant(gauss) == pytest.approx(8.0 + 4.0, rel=1e-14)
    assert lai_robbins_constant(BanditArms((0.5, 0.5))) == 0.0
    assert lai_robbins_constant(BanditArms((1.0, 0.5))) == 0.0  # KL(0.5, 1) = inf


@pytest.mark.parametrize("method", BERNOULLI_METHODS)
def test_pseudo_regret_is_the_sum_of_the_gaps_of_the_pulls(method):
    res = method(ARMS, steps=500, runs=6, seed=1)
    gaps = 0.5 - np.asarray(ARMS.means)
    assert (res.pulls.sum(axis=1) == 500).all()
    # a sum of 500 gaps, each rounded once: |error| <= 500 * eps * 0.4 per step
    np.testing.assert_allclose(res.pseudo_regret[:, -1], res.pulls @ gaps, rtol=0, atol=1e-12)
    increments = np.diff(res.pseudo_regret, axis=1, prepend=0.0)
    for gap in np.unique(increments.round(12)):  # every step adds one arm's gap
        assert np.isclose(gap, gaps, atol=1e-12).any()


@pytest.mark.parametrize("method", GAUSSIAN_METHODS)
def test_realised_regret_is_unbiased_for_the_pseudo_regret(method):
    """``E[regret_T - pseudo_T] = 0``, with variance ``T sd^2``: 5 standard errors."""
    arms = BanditArms((0.0, -0.5, 0.2), law="gaussian", sd=1.0)
    res = method(arms, steps=400, runs=400, seed=2)
    gaps = 0.2 - np.asarray(arms.means)
    np.testing.assert_allclose(res.pseudo_regret[:, -1], res.pulls @ gaps, atol=1e-12)
    noise = res.regret[:, -1] - res.pseudo_regret[:, -1]
    assert abs(noise.mean()) < 5 * math.sqrt(400 / 400)


@pytest.mark.parametrize("method", BERNOULLI_METHODS)
def test_a_single_arm_has_no_regret(method):
    """Every policy pulls the best arm when there is one; a sure arm gives exact zeros."""
    res = method(BanditArms((1.0,)), steps=50, runs=2, seed=0)
    assert (res.regret == 0).all() and (res.pseudo_regret == 0).all()
    assert (res.pulls == 50).all()


def test_explore_then_commit_commits_to_the_sure_arm_by_hand():
    """Arms of means 1 and 0, one pull each: pulls 0, 1, then arm 0 forever."""
    res = tabular.explore_then_commit(BanditArms((1.0, 0.0)), explore=1, steps=10, seed=3)
    np.testing.assert_array_equal(res.pseudo_regret, [0.0] + [1.0] * 9)
    np.testing.assert_array_equal(res.regret, res.pseudo_regret)
    np.testing.assert_array_equal(res.pulls, [9, 1])


def test_explore_then_commit_errs_with_the_exact_probability():
    """One pull of Bernoulli(0.7) and Bernoulli(0.4): the wrong commit has probability
    P(X0 < X1) + P(X0 = X1) / 2 = 0.3 * 0.4 + (0.7 * 0.4 + 0.3 * 0.6) / 2 = 0.35."""
    runs = 4000
    res = tabular.explore_then_commit(BanditArms((0.7, 0.4)), explore=1, steps=6, runs=runs, seed=4)
    wrong = (res.pulls[:, 1] == 5).mean()
    assert ((res.pulls[:, 1] == 5) | (res.pulls[:, 1] == 1)).all()
    assert abs(wrong - 0.35) < 5 * math.sqrt(0.35 * 0.65 / runs)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(1e-4, 5.0))
def test_kl_ucb_index_against_a_reference_root(mean, level):
    tol = 1e-9
    index = bandit_indices.kl_ucb_index(mean, level, tol)
    clipped = min(max(mean, bandit_indices.KL_CLIP), 1 - bandit_indices.KL_CLIP)
    top = 1 - bandit_indices.KL_CLIP
    if _kl(clipped, top) <= level:
        assert index == 1.0
        return
    root = optimize.brentq(lambda q: _kl(clipped, q) - level, clipped, top, xtol=1e-14)
    assert root - 1e-12 <= index <= root + tol + 1e-12  # never below, at most tol above


def test_kl_ucb_index_by_hand():
    """KL(0.5, q) = log(1 / (4 q (1 - q))) / 2 = log 2 at q (1 - q) = 1/16, q = (2 + sqrt 3)/4;
    KL(0, q) = -log(1 - q); a mean of 1 has index 1."""
    q = bandit_indices.kl_ucb_index(0.5, math.log(2.0), 1e-12)
    assert (2 + math.sqrt(3)) / 4 - 1e-15 <= q <= (2 + math.sqrt(3)) / 4 + 1e-12
    assert bandit_indices.kl_ucb_index(1.0, 0.1, 1e-9) == 1.0
    q = bandit_indices.kl_ucb_index(0.0, 0.5, 1e-12)
    assert q == pytest.approx(1 - math.exp(-0.5), abs=1e-11)
    assert bandit_indices.bernoulli_kl(0.3, 0.6) == pytest.approx(_kl(0.3, 0.6), rel=1e-14)
    assert bandit_indices.gaussian_kl_ucb_index(0.2, 0.5, 2.0) == pytest.approx(0.2 + 2.0,
                                                                                rel=1e-15)


def test_moss_and_ucb_v_indices_by_hand():
    assert bandit_indices.moss_index(0.5, 4, 100, 5) == pytest.approx(
        0.5 + math.sqrt(math.log(5) / 4))
    assert bandit_indices.moss_index(0.5, 40, 100, 5) == 0.5  # log(T / (k n)) < 0: no bonus
    expected = 0.25 + math.sqrt(2 * 0.1 * math.log(9) / 3) + 3 * math.log(9) / 3
    assert bandit_indices.ucb_v_index(0.25, 0.1, 3, 9) == pytest.approx(expected, rel=1e-14)


@njit(cache=True)
def _first_wins(s0, f0, s1, f1, draws, rng):
    wins = 0
    for _ in range(draws):
        first = bandit_indices.beta_posterior_draw(s0, f0, rng)
        if first > bandit_indices.beta_posterior_draw(s1, f1, rng):
            wins += 1
    return wins


@pytest.mark.parametrize("counts", [(3, 1, 1, 2), (0, 0, 5, 5), (10, 4, 20, 9)])
def test_thompson_picks_an_arm_with_its_posterior_probability_of_being_best(counts):
    """P(theta_0 > theta_1) = int f_0(x) F_1(x) dx of the two Beta posteriors."""
    s0, f0, s1, f1 = counts
    first, second = stats.beta(s0 + 1, f0 + 1), stats.beta(s1 + 1, f1 + 1)
    exact = integrate.quad(lambda x: first.pdf(x) * second.cdf(x), 0, 1, epsabs=1e-12)[0]
    draws = 200_000
    wins = _first_wins(float(s0), float(f0), float(s1), float(f1), draws, seed_states(5)[0])
    assert abs(wins / draws - exact) < 5 * math.sqrt(exact * (1 - exact) / draws)


def test_thompson_first_pull_is_uniform():
    """Under uniform priors every arm is the posterior's best with probability 1/k."""
    runs = 4000
    res = tabular.thompson_sampling(ARMS, steps=1, runs=runs, seed=6)
    share = res.pulls.mean(axis=0)
    assert np.abs(share - 0.25).max() < 5 * math.sqrt(0.25 * 0.75 / runs)


@njit(cache=True)
def _draws(kind, a, b, n, rng):
    out = np.empty(n)
    for i in range(n):
        if kind == 0:
            out[i] = gamma(rng, a)
        elif kind == 1:
            out[i] = beta(rng, a, b)
        else:
            out[i] = bandit_indices.gaussian_posterior_draw(a, 3, b, rng)  # a: the total, b: sd
    return out


@pytest.mark.parametrize("shape", [0.3, 1.0, 2.5, 40.0])
def test_gamma_draws_are_gamma(shape):
    x = _draws(0, shape, 0.0, 200_000, seed_states(7)[0])
    assert stats.kstest(x, stats.gamma(shape).cdf).pvalue > 1e-4


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (0.5, 3.0), (12.0, 5.0)])
def test_beta_draws_are_beta(a, b):
    x = _draws(1, a, b, 200_000, seed_states(8)[0])
    assert stats.kstest(x, stats.beta(a, b).cdf).pvalue > 1e-4


def test_gaussian_posterior_draws_have_the_posterior_moments():
    """Prior N(0, sd^2), 3 rewards summing to 2.4, sd = 2: posterior N(0.6, 1)."""
    x = _draws(2, 2.4, 2.0, 200_000, seed_states(9)[0])
    assert stats.kstest(x, stats.norm(0.6, 1.0).cdf).pvalue > 1e-4


def test_exp3_stays_under_its_adversarial_bound():
    """Lattimore and Szepesvári's Theorem 11.2: E[regret_T] <= sqrt(2 T k log k)."""
    res = tabular.exp3(ARMS, steps=2000, runs=200, seed=10)
    bound = math.sqrt(2 * 2000 * 4 * math.log(4))
    assert res.pseudo_regret[:, -1].mean() < bound


def test_the_asymptotic_algorithms_beat_explore_then_commit_on_average():
    """Thompson sampling and KL-UCB's regret grows like log T; explore-then-commit's with a
    fixed m = 10 is linear in the runs that committed wrongly."""
    arms = BanditArms((0.5, 0.4))
    etc = tabular.explore_then_commit(arms, explore=10, steps=5000, runs=200, seed=11)
    for method in (tabular.thompson_sampling, tabular.kl_ucb):
        res = method(arms, steps=5000, runs=200, seed=11)
        assert res.pseudo_regret[:, -1].mean() < etc.pseudo_regret[:, -1].mean()


@pytest.mark.parametrize("method", BERNOULLI_METHODS)
def test_same_seed_same_numbers_and_runs_are_independent_of_their_count(method):
    a, b = method(ARMS, steps=200, runs=5, seed=7), method(ARMS, steps=200, runs=5, seed=7)
    np.testing.assert_array_equal(a.regret, b.regret)
    three = method(ARMS, steps=200, runs=3, seed=7)
    np.testing.assert_array_equal(three.regret, a.regret[:3])
    np.testing.assert_array_equal(three.pulls, a.pulls[:3])
    single = method(ARMS, steps=200, seed=7)
    assert single.regret.shape == (200,) and single.runs is None
    np.testing.assert_array_equal(a.run(0).pseudo_regret, single.pseudo_regret)
    assert a.pulls.shape == (5, 4) and a.means.shape == (4,)


#: Two Bernoulli arms that swap at step 1000 (Garivier and Moulines' abrupt change).
SWAP = BanditArms(((0.8, 0.3), (0.3, 0.8)), changes=(1000,))
NONSTATIONARY = [tabular.discounted_ucb, tabular.sliding_window_ucb,
                 tabular.discounted_thompson_sampling]


@pytest.mark.parametrize("method", NONSTATIONARY + [tabular.thompson_sampling, tabular.kl_ucb])
def test_pseudo_regret_of_changing_arms_is_the_gaps_of_each_segments_pulls(method):
    res = method(SWAP, steps=2000, runs=4, seed=12)
    assert res.pulls.shape == (4, 2, 2) and res.means.shape == (2, 2)
    np.testing.assert_array_equal(res.pulls.sum(axis=2), [[1000, 1000]] * 4)
    gaps = res.means.max(axis=1, keepdims=True) - res.means
    np.testing.assert_allclose(res.pseudo_regret[:, -1], (res.pulls * gaps).sum(axis=(1, 2)),
                               rtol=0, atol=1e-12)


def test_discounted_thompson_without_discount_is_thompson_sampling_draw_for_draw():
    a = tabular.discounted_thompson_sampling(ARMS, discount=1.0, steps=300, runs=3, seed=13)
    b = tabular.thompson_sampling(ARMS, steps=300, runs=3, seed=13)
    np.testing.assert_array_equal(a.regret, b.regret)
    np.testing.assert_array_equal(a.pulls, b.pulls)


def test_the_forgetting_methods_track_a_change_the_stationary_ones_miss():
    """After 4000 steps on the arm of mean 0.8, it drops to 0.3 and the other rises to 0.8.
    Thompson sampling's posterior of the old best arm holds ~3200 successes in ~4000
    pulls: its mean falls below the other arm's only after thousands of pulls at 0.3;
    KL-UCB's index likewise. A method that forgets (memory ~300 steps for discounted UCB's
    default gamma, a window of ~460 steps, gamma = 0.95) switches within its memory: mean
    pseudo-regret over the last 2000 steps lower for each (100 runs each)."""
    arms = BanditArms(((0.8, 0.3), (0.3, 0.8)), changes=(4000,))

    def after_change(method):
        res = method(arms, steps=6000, runs=100, seed=14)
        return (res.pseudo_regret[:, -1] - res.pseudo_regret[:, 3999]).mean()

    stationary = min(after_change(tabular.thompson_sampling), after_change(tabular.kl_ucb))
    for method in NONSTATIONARY:
        assert after_change(method) < stationary, method.__name__


def test_sliding_window_sees_only_the_window():
    """A window of 1: the statistics hold one pull, so every arm but the last pulled is
    unseen and pulled next: the arms alternate exactly."""
    res = tabular.sliding_window_ucb(BanditArms((0.9, 0.1)), window=1, steps=10, seed=15)
    np.testing.assert_array_equal(res.pulls, [5, 5])


def test_non_stationary_indices_by_hand():
    # 2 sqrt(0.6 log 4 / 2) above the mean 1.5 / 2
    assert bandit_indices.discounted_ucb_index(1.5, 2.0, 4.0, 0.6) == pytest.approx(
        0.75 + 2 * math.sqrt(0.6 * math.log(4) / 2), rel=1e-14)
    assert bandit_indices.discounted_ucb_index(1.0, 0.5, 0.8, 0.6) == 2.0  # n < 1: no bonus
    assert bandit_indices.sliding_window_ucb_index(2.0, 4.0, 100, 10, 0.6) == pytest.approx(
        0.5 + math.sqrt(0.6 * math.log(10) / 4), rel=1e-14)


@pytest.mark.parametrize("p", [1e-6, 0.01, 0.5, 0.9, 1 - 1e-9])
def test_normal_quantile_against_scipy(p):
    """Within the bisection's 1e-12 plus the CDF's rounding (one ulp of p, ~1.1e-16)
    divided by the density there."""
    exact = stats.norm.ppf(p)
    slack = 1e-12 + 4 * np.spacing(p) / stats.norm.pdf(exact)
    assert abs(bandit_indices.normal_quantile(p, 1e-12) - exact) <= slack


def test_bayes_ucb_index_is_the_posterior_quantile():
    """Two Bernoulli arms, three steps: after one pull each (a success on arm 0, a
    failure on arm 1, made certain by means 1 and 0), step 3 compares the 2/3-quantiles of
    Beta(2, 1) and Beta(1, 2): sqrt(2/3) against 1 - sqrt(1/3); arm 0 is pulled."""
    res = tabular.bayes_ucb(BanditArms((1.0, 0.0)), steps=3, seed=0)
    np.testing.assert_array_equal(res.pulls, [2, 1])
