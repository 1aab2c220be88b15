"""Differential SARSA (section 10.3) and R-learning against the exact average-reward
solutions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabular import TabularMDP, average_reward_solve, relative_value_iteration
from tabular.learn.differential import differential_sarsa, r_learning
from tabular.schedules import inverse
from tabular.testing import random_mdp


def communicating_mdp(seed: int, S: int = 8, A: int = 3) -> TabularMDP:
    """A random continuing MDP in which every transition may reach every state (so every
    policy is unichain and aperiodic)."""
    rng = np.random.default_rng(seed)
    return TabularMDP.from_dense(rng.dirichlet(np.ones(S), size=(S, A)),
                                 np.round(rng.uniform(-1, 1, (S, A)), 3))


def epsilon_greedy(Q, epsilon):
    """The epsilon-greedy policy of ``Q`` as ``[S, A]`` (ties to the lowest action)."""
    S, A = Q.shape
    pi = np.full((S, A), epsilon / A)
    pi[np.arange(S), Q.argmax(axis=1)] += 1.0 - epsilon
    return pi


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**16))
def test_the_greedy_policy_earns_the_optimal_gain_and_rbar_tracks_the_behaviour(seed):
    mdp = communicating_mdp(seed)
    best = relative_value_iteration(mdp).rho
    result = differential_sarsa(mdp, steps=200_000, alpha=0.05, alpha_average=inverse(),
                                epsilon=0.05, runs=4, seed=seed)
    gains = [average_reward_solve(mdp, result.run(i).policy).rho for i in range(4)]
    scale = np.abs(mdp.reward).max()
    assert np.median(gains) >= best - 0.05 * scale
    behaviour = [average_reward_solve(mdp, epsilon_greedy(result.Q[i], 0.05)).rho
                 for i in range(4)]
    # Rbar averages the whole run (1/t steps), when the behaviour was still learning
    assert np.abs(result.average_reward - np.array(behaviour)).mean() < 0.1 * scale
    np.testing.assert_allclose(result.average_reward, result.reward_rate, atol=0.05 * scale)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**16))
def test_r_learning_finds_the_optimal_gain_off_policy(seed):
    """R-learning's ``Rbar`` estimates the greedy policy's gain, not the behaviour's: it
    ends near the optimal gain ``rho*`` (relative value iteration) although the
    behaviour explores (epsilon = 0.2), and its greedy policy earns ``rho*``."""
    mdp = communicating_mdp(seed)
    best = relative_value_iteration(mdp).rho
    result = r_learning(mdp, steps=200_000, alpha=0.05, alpha_average=0.01, epsilon=0.2,
                        runs=4, seed=seed)
    gains = [average_reward_solve(mdp, result.run(i).policy).rho for i in range(4)]
    scale = np.abs(mdp.reward).max()
    assert np.median(gains) >= best - 0.05 * scale
    assert np.abs(np.median(result.average_reward) - best) < 0.05 * scale


@pytest.mark.parametrize("learn", [differential_sarsa, r_learning])
def test_same_seed_same_numbers_and_shapes(learn):
    mdp = random_mdp(np.random.default_rng(0), 5, 2, 2, done_rate=0.0)
    a = learn(mdp, steps=5000, runs=3, seed=4)
    b = learn(mdp, steps=5000, runs=3, seed=4)
    np.testing.assert_array_equal(a.Q, b.Q)
    single = learn(mdp, steps=5000, seed=4)
    assert single.Q.shape == (5, 2) and single.runs is None
    np.testing.assert_array_equal(single.Q, a.Q[0])
    assert a.average_reward.shape == (3,) and (a.reward_rate != 0.0).any()


@pytest.mark.parametrize("learn", [differential_sarsa, r_learning])
def test_episodic_tasks_are_refused(learn):
    mdp = random_mdp(np.random.default_rng(0), 5, 2, 2, done_rate=0.3)
    with pytest.raises(ValueError, match="continuing task"):
        learn(mdp)
