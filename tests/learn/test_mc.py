"""Monte Carlo learners (tabular/learn/mc.py) against exact ground truth.

Tolerances: rewards of the random MDPs lie in [-1, 1]. A sample average of n
returns has standard deviation sd(G) / sqrt(n); the tests average thousands of
returns per state (pair) and several runs, and allow at least five such standard
deviations, as each test's comment works out. Hypothesis examples are
derandomised, so CI sees the same draws every time.
"""

import gymnasium as gym
import numpy as np
import pytest
from conftest import on_one_and_two_threads, slow_examples
from hypothesis import given
from hypothesis import strategies as st

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    mc_control,
    mc_prediction,
    policy_evaluation,
    value_iteration,
)
from tabular.learn.mc import exploring_start_states
from tabular.schedules import inverse, linear
from tabular.testing import acyclic_mdps, mdps

PROPERTY = slow_examples(12)


def model(env_id, **kwargs):
    return TabularMDP.from_gymnasium(gym.make(env_id, **kwargs))


def uniform_policy(mdp):
    return np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)


WALK_POLICY = np.zeros(21, dtype=int)


# --------------------------------------------------------------------- prediction


@pytest.mark.parametrize("first_visit", [True, False])
def test_sample_average_mc_reaches_v_pi_on_the_random_walk(first_visit):
    """19-state walk, rewards -1/+1 (Example 7.1): v(k) = -1 + 2k/20. The centre is
    visited in every episode, the outer states rarely: 4000 episodes x 4 runs give
    each inner state thousands of returns of sd <= 1, so 0.05 is > 5 sd; the two
    end states (visited in ~10% of episodes, sd(G) <= 1) get 0.1."""
    mdp = model("tabzoo/RandomWalk-v0", n_states=19, left_reward=-1.0)
    res = mc_prediction(mdp, WALK_POLICY, episodes=4000, first_visit=first_visit, runs=4,
                        seed=1)
    truth = -1 + 2 * np.arange(1, 20) / 20
    error = np.abs(res.V.mean(axis=0)[1:-1] - truth)
    assert error[1:-1].max() < 0.05 and error.max() < 0.1
    assert (res.V[:, [0, -1]] == 0).all()  # terminal states are never updated


@PROPERTY
@given(mdps(max_states=6, max_actions=3, max_outcomes=3), st.sampled_from([0.5, 0.8]),
       st.booleans())
def test_mc_prediction_converges_on_random_mdps(mdp, gamma, first_visit):
    """Uniform start over all states, 2000 episodes x 16 runs cut after 20 steps (the
    tail bootstraps with weight gamma**20 <= 0.012): every state averages > 5000
    returns of sd <= scale = 1 / (1 - gamma), so the run mean is within 0.05 * scale
    by more than five standard deviations."""
    pi = uniform_policy(mdp)
    v_pi = policy_evaluation(mdp, pi, gamma).V
    res = mc_prediction(mdp, pi, gamma=gamma, episodes=2000, first_visit=first_visit,
                        max_steps=20, runs=16, seed=2)
    scale = np.abs(mdp.reward).max() / (1 - gamma)
    np.testing.assert_allclose(res.V.mean(axis=0), v_pi, atol=0.05 * scale + 1e-12)


def test_constant_alpha_mc_is_eq_6_1():
    """With alpha = 1 every update replaces V(S_t) by G_t (eq. 6.1): after one episode
    of the 5-state walk every visited state holds that episode's return."""
    mdp = model("tabzoo/RandomWalk-v0")
    res = mc_prediction(mdp, np.zeros(7, dtype=int), episodes=1, alpha=1.0, initial_V=0.5,
                        seed=3)
    G = res.episode_returns
    visited = res.V != 0.5
    assert visited[3] and np.all(res.V[visited] == G)
    averaged = mc_prediction(mdp, np.zeros(7, dtype=int), episodes=300, alpha=0.02,
                             initial_V=0.5, runs=20, seed=4)
    # constant alpha forgets the start geometrically: (1 - 0.02)**n for n visits
    np.testing.assert_allclose(averaged.V.mean(axis=0)[1:6], np.arange(1, 6) / 6, atol=0.08)


def test_first_and_every_visit_differ_only_with_revisits():
    mdp = model("tabzoo/RandomWalk-v0", n_states=3)  # the walk revisits states
    first = mc_prediction(mdp, np.zeros(5, dtype=int), episodes=50, seed=5)
    every = mc_prediction(mdp, np.zeros(5, dtype=int), episodes=50, seed=5, first_visit=False)
    np.testing.assert_array_equal(first.episode_returns, every.episode_returns)
    assert not np.array_equal(first.V, every.V)


# --------------------------------------------------------------------- control


@PROPERTY
@given(mdps(max_states=6, max_actions=3, max_outcomes=3), st.sampled_from([0.5, 0.8]))
def test_on_policy_mc_with_epsilon_one_evaluates_the_uniform_policy(mdp, gamma):
    """epsilon = 1 fixes the behaviour at the uniform policy, so first-visit on-policy MC
    averages returns of Q^uniform; > 2000 returns per pair, 16 runs: 0.05 * scale."""
    q_uniform = policy_evaluation(mdp, uniform_policy(mdp), gamma).Q
    res = mc_control(mdp, gamma=gamma, episodes=2000, epsilon=1.0, max_steps=20, runs=16,
                     seed=6)
    scale = np.abs(mdp.reward).max() / (1 - gamma)
    np.testing.assert_allclose(res.Q.mean(axis=0), q_uniform, atol=0.05 * scale + 1e-12)


@PROPERTY
@given(mdps(max_states=6, max_actions=3, max_outcomes=3), st.sampled_from([0.5, 0.8]))
def test_on_policy_mc_control_reaches_v_star_on_random_mdps(mdp, gamma):
    """GLIE on-policy MC control (epsilon = 1/sqrt(episode), sample averages, 6000
    episodes cut at 20 steps): the greedy policy's exact value is within 0.2 * scale of
    V* in every state and run (worst in a trial over 80 drawn MDPs x 4 runs: 0.093)."""
    v_star = value_iteration(mdp, gamma).V
    scale = np.abs(mdp.reward).max() / (1 - gamma)
    res = mc_control(mdp, gamma=gamma, episodes=6000, epsilon=inverse(1.0, 0.5),
                     max_steps=20, runs=4, seed=12)
    for Q in res.Q:
        v = policy_evaluation(mdp, Q.argmax(axis=1), gamma).V
        assert (v_star - v).max() <= 0.2 * scale + 1e-12


@pytest.mark.parametrize("method, kwargs", [
    ("on_policy", {"epsilon": linear(1.0, 0.0, 1500)}),
    ("exploring_starts", {"alpha": 0.1}),
])
def test_mc_control_finds_the_shortest_paths(method, kwargs):
    """Example 4.1's gridworld (-1 per step): the greedy policy of on-policy MC (GLIE
    exploration) and of MC ES is optimal from every start cell (its exact value equals
    V*). MC ES uses a constant step size: sample averages keep the returns of the early,
    looping policies for thousands of episodes (with them 2 of 12 runs were still 2 steps
    short of optimal in some cell after 6000 episodes in a trial). Off-policy MC control
    is checked on episodic random MDPs below: here it learns only from the rare tails
    that follow its greedy target and stays far from converged for this budget."""
    mdp = model("tabzoo/Gridworld4x4-v0")
    v_star = value_iteration(mdp, 1.0).V
    res = mc_control(mdp, method=method, episodes=2000, runs=4, seed=7, max_steps=200,
                     **kwargs)
    for Q in res.Q:
        v = policy_evaluation(mdp, Q.argmax(axis=1), 1.0).V
        np.testing.assert_allclose(v, v_star, atol=1e-9)


@PROPERTY
@given(acyclic_mdps(max_states=8, max_actions=3, max_outcomes=3))
def test_off_policy_mc_converges_to_q_star(mdp):
    """Off-policy MC control (section 5.7) from an epsilon = 0.5 behaviour on episodic
    random MDPs (gamma = 1, at most 8 steps). Weighted IS: each run's Q at the start
    state is within 0.1 * scale of Q* (scale = largest |reward| x 8 steps; the worst of
    100 drawn MDPs in a trial was 0.043 * scale with 5000 episodes); ordinary IS has
    a larger variance, so only its greedy policy is checked (loss <= 0.05 * scale,
    worst in the trial 0.011)."""
    vi = value_iteration(mdp, 1.0)
    scale = max(np.abs(mdp.reward).max(), 1e-12) * mdp.n_states
    for sampling in ("weighted", "ordinary"):
        res = mc_control(mdp, method="off_policy", importance_sampling=sampling,
                         episodes=5000, epsilon=0.5, runs=8, seed=8)
        for Q in res.Q:
            if sampling == "weighted":
                np.testing.assert_allclose(Q[0], vi.Q[0], atol=0.1 * scale)
            loss = vi.V[0] - policy_evaluation(mdp, Q.argmax(axis=1), 1.0).V[0]
            assert loss <= 0.05 * scale, sampling


def test_exploring_starts_cover_every_live_state():
    mdp = model("tabzoo/CliffWalking-v0")
    starts = exploring_start_states(mdp)
    cliff = [37 + k for k in range(10)]  # never occupied: stepping in sends you home
    assert set(starts) == set(range(48)) - set(cliff) - {47}


def test_minus_infinity_rewards_in_mc():
    """The trap's -inf is exact: off-policy MC's greedy policy is optimal from the start,
    no estimate is NaN, and a -inf estimate appears only where Q* is -inf."""
    mdp = model("tabzoo/TrapTreasure-v0")
    vi = value_iteration(mdp, 0.9)
    res = mc_control(mdp, method="off_policy", gamma=0.9, episodes=4000, epsilon=0.3,
                     runs=4, seed=9)
    start = np.flatnonzero(mdp.start)
    for Q in res.Q:
        assert not np.isnan(Q).any()
        assert (vi.Q[Q == -np.inf] == -np.inf).all()
        v = policy_evaluation(mdp, Q.argmax(axis=1), 0.9).V
        np.testing.assert_allclose(v[start], vi.V[start], atol=1e-9)
    for method in ("on_policy", "exploring_starts"):
        other = mc_control(mdp, method=method, gamma=0.9, episodes=300, runs=2, seed=9)
        assert not np.isnan(other.Q).any()
    pred = mc_prediction(mdp, uniform_policy(mdp), gamma=0.9, episodes=300, seed=9)
    assert not np.isnan(pred.V).any() and pred.V[start[0]] == -np.inf  # v_uniform = -inf
    assert policy_evaluation(mdp, uniform_policy(mdp), 0.9).V[start[0]] == -np.inf


# --------------------------------------------------------------------- reproducibility


@pytest.mark.parametrize("method", ["on_policy", "exploring_starts", "off_policy"])
def test_mc_same_seed_same_numbers_whatever_the_threads(method):
    mdp = TabularMDP.from_gymnasium(gym.make("FrozenLake-v1"))
    one, two = on_one_and_two_threads(lambda: mc_control(mdp, method=method, gamma=0.95,
                                                         episodes=300, runs=4, seed=10))
    np.testing.assert_array_equal(one.Q, two.Q)
    np.testing.assert_array_equal(one.episode_lengths, two.episode_lengths)
    alone = mc_control(mdp, method=method, gamma=0.95, episodes=300, seed=10)
    np.testing.assert_array_equal(alone.Q, one.Q[0])
    assert alone.Q.shape == (16, 4) and alone.episode_lengths.shape == (300,)
    first = mc_control(mdp, method=method, gamma=0.95, episodes=300, seed=10, runs=1)
    assert first.Q.shape == (1, 16, 4) and first.episode_lengths.shape == (1, 300)
    np.testing.assert_array_equal(first.Q[0], alone.Q)


def test_mc_prediction_same_seed_same_numbers_whatever_the_threads():
    mdp = TabularMDP.from_gymnasium(gym.make("FrozenLake-v1"))
    one, two = on_one_and_two_threads(lambda: mc_prediction(mdp, uniform_policy(mdp),
                                                            episodes=100, runs=3, seed=11))
    np.testing.assert_array_equal(one.V, two.V)
    np.testing.assert_array_equal(one.episode_returns, two.episode_returns)
    other = mc_prediction(mdp, uniform_policy(mdp), episodes=100, runs=3, seed=12)
    assert not np.array_equal(one.episode_returns, other.episode_returns)


def test_mc_prediction_run_axis_and_optional_history():
    """runs=None: no run axis and no history unless asked; runs=1: a leading axis of
    length 1 holding the same run."""
    mdp = model("tabzoo/RandomWalk-v0")
    single = mc_prediction(mdp, WALK_POLICY[:7], episodes=20, seed=13)
    assert single.V.shape == (7,) and single.V_history is None
    assert single.episode_returns.shape == single.episode_lengths.shape == (20,)
    one = mc_prediction(mdp, WALK_POLICY[:7], episodes=20, seed=13, runs=1, history=True)
    assert one.V.shape == (1, 7) and one.V_history.shape == (1, 20, 7)
    np.testing.assert_array_equal(one.V[0], single.V)
    np.testing.assert_array_equal(one.V_history[0, -1], single.V)
    three = mc_prediction(mdp, WALK_POLICY[:7], episodes=20, seed=13, runs=3)
    assert three.V.shape == (3, 7) and three.V_history is None
    np.testing.assert_array_equal(three.run(0).V, single.V)


# --------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs, name", [
    ({"method": "sarsa"}, "method"), ({"importance_sampling": "both"}, "importance_sampling"),
    ({"method": "off_policy", "epsilon": 0.0}, "epsilon"),
    ({"method": "off_policy", "alpha": 0.1}, "alpha"),
    ({"alpha": 0.0}, "alpha"), ({"epsilon": 2.0}, "epsilon"), ({"gamma": -0.5}, "gamma"),
    ({"episodes": -1}, "episodes"), ({"runs": 1.5}, "runs"), ({"max_steps": 0}, "max_steps"),
    ({"initial_Q": np.zeros(3)}, "initial_Q"),
])
def test_bad_mc_control_arguments_are_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        mc_control(model("tabzoo/Gridworld4x4-v0"), **kwargs)


def test_bad_mc_prediction_arguments_are_named():
    mdp = model("tabzoo/Gridworld4x4-v0")
    with pytest.raises(ValueError, match="policy"):
        mc_prediction(mdp, np.zeros((16, 3)))
    with pytest.raises(ValueError, match="alpha"):
        mc_prediction(mdp, uniform_policy(mdp), alpha=-0.1)
    with pytest.raises(TypeError, match="transition table"):
        mc_prediction(gym.make("CartPole-v1"), uniform_policy(mdp))
