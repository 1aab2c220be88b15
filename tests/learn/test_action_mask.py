"""Action masks (Gymnasium's ``action_mask``) for the one-step TD control learners, and
Example 6.7's maximization-bias env that needs them."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    double_q_learning,
    expected_sarsa,
    q_learning,
    sarsa,
    value_iteration,
)
from tabular.envs import MaximizationBias
from tabular.schedules import inverse
from tabular.testing import mdps

LEARNERS = [q_learning, double_q_learning, sarsa, expected_sarsa]


def random_mask(mdp: TabularMDP, seed: int) -> np.ndarray:
    """About half the pairs available, at least one action in every state."""
    rng = np.random.default_rng(seed)
    mask = rng.random((mdp.n_states, mdp.n_actions)) < 0.5
    mask[np.arange(mdp.n_states), rng.integers(mdp.n_actions, size=mdp.n_states)] = True
    return mask


def poisoned(mdp: TabularMDP, mask: np.ndarray) -> TabularMDP:
    """``mdp`` whose unavailable pairs end the episode paying -1000: one taken shows."""
    off = ~mask[:, :, None] & np.ones(mdp.next_state.shape, dtype=bool)
    return TabularMDP(mdp.next_state, mdp.prob, np.where(off, -1000.0, mdp.reward),
                      mdp.done | off, mdp.start)


@settings(max_examples=15, deadline=None)
@given(mdps(max_states=6, max_actions=4, max_outcomes=2), st.integers(0, 2**16))
def test_no_learner_takes_an_unavailable_action(mdp, seed):
    mask = random_mask(mdp, seed)
    trap = poisoned(mdp, mask)
    for learn in LEARNERS:
        res = learn(trap, gamma=0.9, episodes=300, epsilon=0.5, max_steps=20, runs=3,
                    seed=seed, action_mask=mask)
        assert (res.episode_returns > -1000.0 + 1e-6 * 20).all(), learn.__name__
        assert np.isneginf(res.Q[:, ~mask]).all() and np.isfinite(res.Q[:, mask]).all()
        assert mask[np.arange(mdp.n_states), res.policy].all()


@settings(max_examples=8, deadline=None)
@given(mdps(max_states=5, max_actions=3, max_outcomes=2), st.integers(0, 2**16))
def test_masked_q_learning_reaches_the_restricted_optimum(mdp, seed):
    """Q-learning with a mask converges to ``Q*`` of the MDP restricted to the available
    actions (value iteration with the unavailable pairs paying -inf)."""
    mask = random_mask(mdp, seed)
    off = ~mask[:, :, None] & np.ones(mdp.next_state.shape, dtype=bool)
    restricted = TabularMDP(mdp.next_state, mdp.prob, np.where(off, -np.inf, mdp.reward),
                            mdp.done, mdp.start)
    truth = value_iteration(restricted, 0.5).Q
    scale = max(np.abs(mdp.reward[mdp.prob > 0]).max(), 1e-12) / 0.5
    for learn in (q_learning, double_q_learning):
        res = learn(mdp, gamma=0.5, episodes=2000, alpha=inverse(1.0, 0.6), epsilon=1.0,
                    max_steps=20, runs=16, seed=3, action_mask=mask)
        np.testing.assert_allclose(res.Q.mean(axis=0)[mask], truth[mask], atol=0.1 * scale,
                                   err_msg=learn.__name__)


@pytest.mark.parametrize("learn", LEARNERS)
def test_a_full_mask_is_no_mask_bit_for_bit(learn):
    mdp = TabularMDP.from_gymnasium(gym.make("FrozenLake-v1"))
    full = np.ones((mdp.n_states, mdp.n_actions), dtype=bool)
    plain = learn(mdp, gamma=0.95, episodes=200, runs=2, seed=5)
    masked = learn(mdp, gamma=0.95, episodes=200, runs=2, seed=5, action_mask=full)
    np.testing.assert_array_equal(plain.Q, masked.Q)
    np.testing.assert_array_equal(plain.episode_returns, masked.episode_returns)


# --------------------------------------------------------------------- Example 6.7


def test_the_maximization_bias_env():
    env = MaximizationBias(rewards="two_point")
    mdp = env.to_mdp()
    best = value_iteration(mdp, 1.0)
    np.testing.assert_allclose(best.Q[0, :2], [-0.1, 0.0], atol=1e-12)  # right is optimal
    np.testing.assert_allclose(best.Q[1], -0.1, atol=1e-12)
    rewards, probs = mdp.reward[1], mdp.prob[1]  # B's two-point rewards: mean and variance
    np.testing.assert_allclose((probs * rewards).sum(axis=1), -0.1, atol=1e-15)
    np.testing.assert_allclose((probs * (rewards + 0.1) ** 2).sum(axis=1), 1.0, atol=1e-15)
    gym_env = gym.make("tabzoo/MaximizationBias-v0", rewards="two_point")
    state, info = gym_env.reset(seed=0)
    assert state == 0 and info["action_mask"].tolist() == [True, True] + [False] * 8
    assert gym_env.step(5)[1:3] == (0.0, True)  # an unavailable action acts as right
    gym_env.reset(seed=0)
    state, reward, terminated, _, info = gym_env.step(0)
    assert (state, reward, terminated) == (1, 0.0, False) and info["action_mask"].all()
    _, reward, terminated, _, _ = gym_env.step(7)
    assert terminated and reward in (0.9, -1.1)
    with pytest.raises(ValueError, match="n_b_actions"):
        MaximizationBias(1)


def gaussian_q_learning_left(runs: int, episodes: int, n_b_actions: int, seed: int):
    """Q-learning on Example 6.7 with the book's N(-0.1, 1) rewards, vectorised over
    runs in NumPy (an independent implementation): the fraction of runs going left
    from A in each episode."""
    rng = np.random.default_rng(seed)
    QA, QB = np.zeros((runs, 2)), np.zeros((runs, n_b_actions))
    all_runs = np.arange(runs)
    left = np.zeros(episodes)

    def epsilon_greedy(Q):
        tie_break = np.where(Q == Q.max(axis=1, keepdims=True), rng.random(Q.shape), -1.0)
        explore = rng.random(len(Q)) < 0.1
        return np.where(explore, rng.integers(Q.shape[1], size=len(Q)), tie_break.argmax(1))

    for episode in range(episodes):
        a, b = epsilon_greedy(QA), epsilon_greedy(QB)
        went_left = a == 0
        left[episode] = went_left.mean()
        target = np.where(went_left, QB.max(axis=1), 0.0)
        QA[all_runs, a] += 0.1 * (target - QA[all_runs, a])
        runs_b = all_runs[went_left]
        reward = rng.normal(-0.1, 1.0, size=len(runs_b))
        QB[runs_b, b[went_left]] += 0.1 * (reward - QB[runs_b, b[went_left]])
    return left


def test_the_two_point_rewards_give_the_gaussian_curve():
    """The env's two-point rewards keep N(-0.1, 1)'s mean and variance, and Figure 6.5's
    Q-learning curve with them matches an independent NumPy Q-learning with Gaussian
    rewards: over 20,000 runs the curves differ by at most 0.04 in any episode (the
    measured gap is ~0.025, standard error of each point ~0.0035)."""
    env = MaximizationBias(rewards="two_point")
    ours = q_learning(env.to_mdp(), gamma=1.0, episodes=150, alpha=0.1, epsilon=0.1,
                      runs=20_000, seed=1, action_mask=env.action_mask)
    left = (ours.episode_lengths == 2).mean(axis=0)
    gaussian = gaussian_q_learning_left(20_000, 150, 10, seed=2)
    assert np.abs(left - gaussian).max() < 0.04
    assert left.max() > 0.9 and gaussian.max() > 0.9
