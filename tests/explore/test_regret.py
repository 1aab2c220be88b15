"""Exact regret: zero for the optimal policy, ``V* - V^pi`` for a fixed policy, the epsilon
mixture by hand, the normalisation, and the exact measure against the sampled returns."""

import numpy as np
import pytest

from tabular import finite_horizon, regret
from tabular.envs import Chain, DeepSea, RiverSwim
from tabular.explore import epsilon_greedy_q_learning, psrl, ucbvi

RIVER = RiverSwim().to_mdp()


def dense_optimum(mdp, horizon):
    """``V*_0(s0)`` by a dense backward recursion written here (no library planner)."""
    S = mdp.n_states
    P = np.zeros((S, mdp.n_actions, S))
    for k in range(mdp.n_outcomes):
        np.add.at(P, (np.arange(S)[:, None], np.arange(mdp.n_actions)[None, :],
                      mdp.next_state[:, :, k]), mdp.prob[:, :, k] * ~mdp.done[:, :, k])
    v = np.zeros(S)
    for _ in range(horizon):
        v = (mdp.expected_reward() + P @ v).max(axis=1)
    return v @ mdp.start


def test_the_optimal_policy_has_zero_regret():
    H, K = 20, 7
    best = finite_horizon(RIVER, H).policy
    result = regret(RIVER, np.broadcast_to(best, (K, H, RIVER.n_states)))
    np.testing.assert_allclose(result.per_episode, 0.0, atol=1e-13)
    assert result.optimal_value == pytest.approx(dense_optimum(RIVER, H), abs=1e-13)
    np.testing.assert_allclose(result.cumulative, 0.0, atol=1e-12)


def test_a_fixed_policy_has_regret_v_star_minus_its_value():
    # always left: stays on the bank and collects 0.005 per step, 0.1 in 20 steps
    H = 20
    left = np.zeros((3, H, RIVER.n_states), dtype=int)
    result = regret(RIVER, left)
    np.testing.assert_allclose(result.values, 0.1, rtol=0, atol=1e-15)
    best = dense_optimum(RIVER, H)
    np.testing.assert_allclose(result.per_episode, best - 0.1, atol=1e-13)
    np.testing.assert_allclose(result.cumulative, (best - 0.1) * np.arange(1, 4), atol=1e-12)


def test_epsilon_mixture_and_normalisation_by_hand():
    # DeepSea of size 1: right pays 1 - 0.01, left pays 0; V* = 0.99, the worst is 0
    sea = DeepSea(1, mapping_seed=None)
    left = np.zeros((2, 1, 2), dtype=int)
    plain = regret(sea, left)
    np.testing.assert_allclose(plain.per_episode, 0.99, atol=1e-15)
    assert plain.worst_value == 0.0
    np.testing.assert_allclose(plain.normalised, [1.0, 2.0], atol=1e-15)
    half = regret(sea, left, epsilon=0.5)  # 0.5 * 0 + 0.5 * (0.99 + 0) / 2
    np.testing.assert_allclose(half.values, 0.2475, atol=1e-15)
    uniform = regret(sea, left, epsilon=1.0)
    np.testing.assert_allclose(uniform.per_episode, 0.495, atol=1e-15)


def test_regret_keeps_the_run_axis():
    result = ucbvi(RIVER, horizon=5, episodes=4, runs=3)
    measured = regret(RIVER, result)
    assert measured.per_episode.shape == (3, 4) and measured.runs == 3
    one = regret(RIVER, result.run(1))
    np.testing.assert_array_equal(one.per_episode, measured.per_episode[1])


@pytest.mark.parametrize("learn, mdp, horizon", [
    (lambda m, H: psrl(m, horizon=H, episodes=150, runs=40, seed=3), RIVER, 20),
    (lambda m, H: epsilon_greedy_q_learning(m, horizon=H, episodes=150, epsilon=0.3, runs=40,
                                            seed=4), Chain().to_mdp(), 10)])
def test_exact_values_agree_with_the_sampled_returns(learn, mdp, horizon):
    """Given the policy of episode k, its return is an unbiased draw of V^{pi_k}(s0): the
    differences average to 0 within their standard error (4 SE: a false alarm 6e-5)."""
    result = learn(mdp, horizon)
    exact = regret(mdp, result).values
    difference = (result.episode_returns - exact).ravel()
    se = difference.std(ddof=1) / np.sqrt(difference.size)
    assert se > 0.0
    assert abs(difference.mean()) < 4.0 * se, (difference.mean(), se)
