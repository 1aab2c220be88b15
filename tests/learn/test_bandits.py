"""The k-armed bandit methods against exact ground truth: the gradient bandit's expected
update is the exact gradient, sample averages are the means, UCB with exact rewards
settles on the best arm, and the seeds behave as everywhere else."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from scipy import stats

from tabular._numba.rng import normal, seed_states
from tabular.learn.bandits import (
    BanditTestbed,
    epsilon_greedy_bandit,
    gradient_bandit,
    ucb_bandit,
)
from tabular.rules.bandits import incremental_mean, ucb_action
from tabular.rules.policy_gradient import policy_gradient_step, softmax


@njit(cache=True)
def _expected_update(H, q, alpha, baseline):
    """``sum_a pi(a) * (the eq. 2.12 update after pulling a with reward q(a))``."""
    probs = np.empty(H.shape[0])
    softmax(H, probs)
    pi = probs.copy()
    total = np.zeros(H.shape[0])
    for a in range(H.shape[0]):
        after = H.copy()
        policy_gradient_step(after, a, alpha * (q[a] - baseline), probs)
        total += pi[a] * (after - H)
    return total


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 8), st.integers(0, 2**32 - 1), st.floats(-3, 3))
def test_gradient_bandit_expected_update_is_the_exact_gradient(k, seed, baseline):
    """Section 2.8: E[H_{t+1} - H_t] = alpha d E[R_t] / d H, whatever the baseline."""
    rng = np.random.default_rng(seed)
    H, q, alpha = rng.normal(size=k), rng.normal(size=k), 0.1
    pi = np.exp(H - H.max()) / np.exp(H - H.max()).sum()
    exact = alpha * pi * (q - pi @ q)  # d(sum_a pi(a) q(a)) / dH(b)
    np.testing.assert_allclose(_expected_update(H, q, alpha, baseline), exact, atol=1e-12)


def test_sample_averages_are_the_arm_means():
    res = epsilon_greedy_bandit(epsilon=1.0, steps=20_000, runs=4, seed=3)
    pulls = 20_000 / 10
    error = np.abs(res.estimates - res.means)
    assert error.max() < 5 / np.sqrt(pulls)  # 5 standard errors of a mean of N(q, 1)


def test_ucb_with_exact_rewards_pulls_the_best_arm_once_every_arm_is_tried():
    testbed = BanditTestbed(k=6, reward_sd=0.0)
    res = ucb_bandit(testbed, c=0.0, steps=50, runs=20, seed=1)
    assert res.optimal[:, 6:].all()
    np.testing.assert_array_equal(res.estimates, res.means)  # one exact sample each


def test_ucb_tries_every_arm_first():
    Q, counts = np.zeros(5), np.array([1, 1, 0, 1, 1])
    assert ucb_action(Q, counts, 5, 2.0, seed_states(0)[0], np.empty(5)) == 2


def test_incremental_mean_is_the_mean():
    values, mean = np.random.default_rng(0).normal(size=100), 0.0
    for n, v in enumerate(values, start=1):
        mean = incremental_mean(mean, v, n)
    assert mean == pytest.approx(values.mean(), abs=1e-12)


@njit(cache=True)
def _normals(n, state):
    return np.array([normal(state) for _ in range(n)])


def test_normal_draws_are_standard_normal():
    """The ziggurat's three paths (layer rectangles, wedges under the curve, the tail
    beyond 3.44) together give N(0, 1): a Kolmogorov-Smirnov test on 10^6 draws (its
    statistic detects a CDF error above ~0.002), the moments, and the tail's mass
    (5.76e-4: ~576 draws, asserted within 5 standard deviations)."""
    x = _normals(1_000_000, seed_states(0)[0])
    assert stats.kstest(x, "norm").pvalue > 1e-3
    assert abs(x.mean()) < 0.005 and abs(x.std() - 1.0) < 0.005
    assert abs(np.mean(x**4) - 3.0) < 0.05  # the kurtosis of a normal
    tail = 2.0 * stats.norm.sf(3.442619855899)
    assert abs((np.abs(x) > 3.442619855899).sum() - tail * x.size) < 5 * np.sqrt(tail * x.size)
    assert (x[np.abs(x) > 3.442619855899] > 0).mean() == pytest.approx(0.5, abs=0.1)


def test_constant_alpha_tracks_a_drifting_testbed_better_than_sample_averages():
    """Exercise 2.5: with random-walk values, constant alpha = 0.1 beats sample averages."""
    drifting = BanditTestbed(spread=0.0, walk_sd=0.01)
    averages = epsilon_greedy_bandit(drifting, steps=5000, runs=200, seed=2)
    constant = epsilon_greedy_bandit(drifting, alpha=0.1, steps=5000, runs=200, seed=2)
    assert constant.optimal[:, -1000:].mean() > averages.optimal[:, -1000:].mean() + 0.1


@pytest.mark.parametrize("method", [epsilon_greedy_bandit, ucb_bandit, gradient_bandit])
def test_same_seed_same_numbers_and_runs_are_independent_of_their_count(method):
    a, b = method(steps=200, runs=5, seed=7), method(steps=200, runs=5, seed=7)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    three = method(steps=200, runs=3, seed=7)
    np.testing.assert_array_equal(three.rewards, a.rewards[:3])
    single = method(steps=200, seed=7)
    assert single.rewards.shape == (200,) and single.runs is None
    np.testing.assert_array_equal(a.run(0).rewards, single.rewards)
    assert a.rewards.shape == (5, 200) and a.estimates.shape == (5, 10)


def test_the_book_figure_2_2_numbers():
    """Figure 2.2 after 1000 steps (2000 runs): greedy ~1.0 and ~35% optimal; epsilon =
    0.1 ~1.4 and ~80%; epsilon = 0.01 in between."""
    late = {eps: epsilon_greedy_bandit(epsilon=eps, runs=2000, seed=0)
            for eps in (0.0, 0.01, 0.1)}
    reward = {e: r.rewards[:, -100:].mean() for e, r in late.items()}
    optimal = {e: r.optimal[:, -100:].mean() for e, r in late.items()}
    assert 0.9 < reward[0.0] < 1.15 and 0.3 < optimal[0.0] < 0.42
    assert 1.3 < reward[0.1] < 1.45 and 0.75 < optimal[0.1] < 0.85
    assert reward[0.0] < reward[0.01] < reward[0.1]
