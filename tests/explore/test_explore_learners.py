"""The exploration learners on cases with answers known by hand, and the zoo's run
conventions (same seed, same numbers; run i of runs=n is run i of runs=m)."""

import math

import numpy as np
import pytest

from tabular import TabularMDP, regret
from tabular._numba.rng import seed_states
from tabular.envs import DeepSea
from tabular.explore import (
    epsilon_greedy_q_learning,
    optimistic_q_learning,
    psrl,
    rlsvi,
    ucbvi,
)
from tabular.rules.exploration import dirichlet_draw, log_gamma_draw


def two_states():
    """State 0: action 0 pays 0.2 and stays, action 1 pays 0 and moves to state 1, where
    every action pays 1 and stays. With H = 2 from state 0: V* = max(0.2 + 0.2, 0 + 1) = 1."""
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[0, 1, 1] = P[1, :, 1] = 1.0
    R = np.array([[0.2, 0.0], [1.0, 1.0]])
    return TabularMDP.from_dense(P, R, start=np.array([1.0, 0.0]))


TWO = two_states()
K = 3
#: L = ln(5 S A T / delta), T = K H
LOG = math.log(5 * 2 * 2 * (K * 2) / 0.1)
#: In episode 2, after two plays of (0, action 0): Q_0(0, 0) = min(2, 0.2 + 1 + b) against
#: Q_0(0, 1) = 2 (untried), with b = scale * 7 H L sqrt(1/2), H = 2, reward span 1:
#: UCBVI keeps action 0 exactly when b >= 0.8.
THRESHOLD = 0.8 / (7 * 2 * LOG / math.sqrt(2))


@pytest.mark.parametrize("factor, second", [(0.99, 1), (1.01, 0)])
def test_ucbvi_first_hoeffding_bonus_by_hand(factor, second):
    result = ucbvi(TWO, horizon=2, episodes=K, bonus="hoeffding", scale=factor * THRESHOLD)
    # episode 1: nothing tried, every Q at its cap, ties to action 0 -> 0.2 + 0.2
    assert result.policy[0, 0, 0] == 0 and result.episode_returns[0] == pytest.approx(0.4)
    assert result.policy[1, 0, 0] == second
    measured = regret(TWO, result)
    assert measured.optimal_value == 1.0
    assert measured.per_episode[0] == pytest.approx(0.6, abs=1e-15)
    assert measured.per_episode[1] == pytest.approx(0.0 if second else 0.6, abs=1e-15)


def test_ucbvi_settles_on_the_optimum_of_the_two_state_mdp():
    # once every pair is tried, the bonuses shrink below the gap 0.6 and the greedy
    # plan on the (deterministic, hence exact) estimates is the optimal one
    measured = regret(TWO, ucbvi(TWO, horizon=2, episodes=60, scale=0.05, runs=4))
    np.testing.assert_array_equal(measured.per_episode[:, -10:], 0.0)
    assert (measured.per_episode >= -1e-15).all()


def test_psrl_second_episode_by_hand():
    """One state, H = 1: action 0 pays 0.2, action 1 pays 1 (r_max = 1, span 0.8, so
    tau = 4 / 0.8^2 = 6.25). Episode 1 draws both means from the prior N(1, 1/tau): each
    action with probability 1/2. After action 0 (reward 0.2) its posterior is
    N(0.6, 1/(2 tau)), so episode 2 takes action 1 with probability
    Phi(0.4 / sqrt(1/tau + 1/(2 tau))) = Phi(0.8165) = 0.7929."""
    P = np.ones((1, 2, 1))
    bandit = TabularMDP.from_dense(P, np.array([[0.2, 1.0]]), start=np.ones(1))
    result = psrl(bandit, horizon=1, episodes=2, runs=4000, seed=11)
    first, second = result.policy[:, 0, 0, 0], result.policy[:, 1, 0, 0]
    n = first.size
    assert abs((first == 1).mean() - 0.5) < 4 * math.sqrt(0.25 / n)
    after_0 = second[first == 0]
    p = 0.5 * (1 + math.erf(0.4 / math.sqrt(1 / 6.25 + 1 / 12.5) / math.sqrt(2)))
    assert p == pytest.approx(0.7929, abs=1e-4)
    assert abs((after_0 == 1).mean() - p) < 4 * math.sqrt(p * (1 - p) / after_0.size)


def test_psrl_on_deepsea_finds_the_treasure_that_dithering_misses():
    sea = DeepSea(5).to_mdp()
    found = regret(sea, psrl(sea, horizon=5, episodes=600, runs=4))
    dithered = regret(sea, epsilon_greedy_q_learning(sea, horizon=5, episodes=600, runs=4))
    # dithering finds the path with probability about 0.05^5 per episode and keeps a
    # regret near 0.99 per episode; PSRL's posterior sends it down the unexplored path
    assert found.per_episode[:, -100:].mean() < 0.2
    assert dithered.per_episode[:, -100:].mean() > 0.9


@pytest.mark.parametrize("learn", [
    lambda **kw: ucbvi(TWO, horizon=2, episodes=30, **kw),
    lambda **kw: psrl(TWO, horizon=2, episodes=30, **kw),
    lambda **kw: optimistic_q_learning(TWO, horizon=2, episodes=30, **kw),
    lambda **kw: epsilon_greedy_q_learning(TWO, horizon=2, episodes=30, **kw),
    lambda **kw: rlsvi(TWO, horizon=2, episodes=30, **kw)])
def test_runs_and_seeds_follow_the_zoo(learn):
    three, five = learn(seed=7, runs=3), learn(seed=7, runs=5)
    np.testing.assert_array_equal(three.policy, five.policy[:3])
    np.testing.assert_array_equal(three.episode_returns, five.episode_returns[:3])
    single = learn(seed=7)
    assert single.policy.shape == (30, 2, 2) and single.runs is None
    np.testing.assert_array_equal(single.episode_returns, learn(seed=7).episode_returns)


def test_posterior_draws_have_the_right_means():
    """Gamma(a) has mean a and variance a; a Dirichlet coordinate has mean a_i / sum a:
    averages over n draws within 4 standard errors."""
    from numba import njit

    @njit
    def draws(rng, shape, n):
        out = np.empty(n)
        for i in range(n):
            out[i] = np.exp(log_gamma_draw(rng, shape))
        return out

    @njit
    def dirichlets(rng, concentration, n):
        out = np.empty((n, concentration.shape[0]))
        for i in range(n):
            dirichlet_draw(rng, concentration, out[i])
        return out

    n = 20_000
    for shape in (0.05, 0.7, 1.0, 3.5):
        x = draws(seed_states(1)[0], shape, n)
        assert abs(x.mean() - shape) < 4 * math.sqrt(shape / n)
    alpha = np.array([0.1, 1.0, 2.5])
    d = dirichlets(seed_states(2)[0], alpha, n)
    mean = alpha / alpha.sum()
    sd = np.sqrt(mean * (1 - mean) / (alpha.sum() + 1))
    np.testing.assert_array_less(np.abs(d.mean(axis=0) - mean), 4 * sd / math.sqrt(n))
    np.testing.assert_allclose(d.sum(axis=1), 1.0, atol=1e-12)


def test_rlsvi_second_episode_by_hand():
    """One state, H = 1, action 0 pays 0.2, action 1 pays 1; sigma = 0.1, sigma_0 = 1.
    Episode 1 draws both values from the prior N(0, 1): each action with probability 1/2.
    After action 0 (target 0.2) its posterior has precision 1 + 100 = 101 and mean
    20 / 101, so episode 2 takes action 1 with probability
    Phi(-(20/101) / sqrt(1 + 1/101)) = 0.4219."""
    P = np.ones((1, 2, 1))
    bandit = TabularMDP.from_dense(P, np.array([[0.2, 1.0]]), start=np.ones(1))
    result = rlsvi(bandit, horizon=1, episodes=2, runs=4000, seed=13)
    first, second = result.policy[:, 0, 0, 0], result.policy[:, 1, 0, 0]
    assert abs((first == 1).mean() - 0.5) < 4 * math.sqrt(0.25 / first.size)
    after_0 = second[first == 0]
    p = 0.5 * (1 + math.erf(-(20 / 101) / math.sqrt(1 + 1 / 101) / math.sqrt(2)))
    assert p == pytest.approx(0.4219, abs=1e-4)
    assert abs((after_0 == 1).mean() - p) < 4 * math.sqrt(p * (1 - p) / after_0.size)


def test_rlsvi_explores_deepsea():
    sea = DeepSea(5).to_mdp()
    measured = regret(sea, rlsvi(sea, horizon=5, episodes=400, runs=4))
    assert measured.per_episode[:, -100:].mean() < 0.2  # dithering stays near 0.99
