"""UCRL2 and the average-reward regret: Jaksch et al.'s episode count, the first
optimistic policy, the regret by hand, and the optimum reached."""

import math

import numpy as np
import pytest

from tabular import TabularMDP, average_regret, hardness, ucrl2
from tabular.envs import RiverSwim
from tabular.experiments.explore.regret_bounds import ucrl2_bound
from tabular.explore import UCRL2Result

RIVER = RiverSwim().to_mdp()


def switch():
    """Action 0 stays, action 1 switches; staying in state 1 pays 1: rho* = 1."""
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[1, 0, 1] = P[0, 1, 1] = P[1, 1, 0] = 1.0
    return TabularMDP.from_dense(P, np.array([[0.0, 0.0], [1.0, 0.0]]),
                                 start=np.array([1.0, 0.0]))


def test_episode_count_is_within_jaksch_proposition_18():
    # m <= S A log2(8 T / (S A)) for T >= S A
    T, S, A = 20_000, RIVER.n_states, RIVER.n_actions
    result = ucrl2(RIVER, steps=T, runs=3, scale=0.1)
    assert (result.episodes <= S * A * math.log2(8 * T / (S * A))).all()
    assert (result.episodes >= 1).all()


def test_regret_is_within_jaksch_theorem_2_at_every_step():
    # with the paper's widths, w.p. 1 - delta, regret(T) <= 34 D S sqrt(A T ln(T / delta))
    # for every T > 1 (rewards in [0, 1]: span 1 on RiverSwim); D from hardness
    T, delta = 5_000, 0.1
    result = average_regret(RIVER, ucrl2(RIVER, steps=T, delta=delta, runs=4))
    steps = np.arange(2, T + 1)
    bound = ucrl2_bound(diameter=hardness(RIVER).diameter, n_states=RIVER.n_states,
                        n_actions=RIVER.n_actions, steps=steps, delta=delta, reward_span=1.0)
    assert (result.cumulative[:, 1:] <= bound).all()
    # the bound by hand at T = delta e, where ln(T / delta) = 1
    at = ucrl2_bound(diameter=2.0, n_states=3, n_actions=4, steps=delta * math.e,
                     delta=delta, reward_span=0.5)
    assert at == pytest.approx(34 * 0.5 * 2 * 3 * math.sqrt(4 * delta * math.e), rel=1e-15)


def test_first_policy_ties_to_action_0_and_rewards_are_the_models():
    result = ucrl2(RIVER, steps=500, scale=0.1)
    assert result.states[0] == 0 and result.actions[0] == 0  # nothing seen: all tie
    # RiverSwim's reward depends on (s, a) only: each recorded reward is r(s, a)
    r = RIVER.expected_reward()
    np.testing.assert_array_equal(result.rewards, r[result.states, result.actions])
    # every step continues from where the last ended
    assert result.states.max() < RIVER.n_states


def test_average_regret_by_hand():
    mdp = switch()
    stay_good = UCRL2Result(np.ones(4, np.int32), np.zeros(4, np.int32), np.ones(4), 1)
    stay_bad = UCRL2Result(np.zeros(4, np.int32), np.zeros(4, np.int32), np.zeros(4), 1)
    assert average_regret(mdp, stay_good).optimal_gain == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(average_regret(mdp, stay_good).cumulative, 0.0, atol=1e-9)
    np.testing.assert_allclose(average_regret(mdp, stay_bad).cumulative, [1, 2, 3, 4],
                               atol=1e-9)


def test_ucrl2_reaches_the_optimal_gain():
    mdp = switch()
    measured = average_regret(mdp, ucrl2(mdp, steps=3000, runs=2, scale=0.1))
    np.testing.assert_allclose(measured.per_step[:, -100:], 0.0, atol=1e-9)


def test_runs_and_seeds_follow_the_zoo():
    three, five = ucrl2(RIVER, steps=300, runs=3, seed=4), ucrl2(RIVER, steps=300, runs=5, seed=4)
    np.testing.assert_array_equal(three.states, five.states[:3])
    np.testing.assert_array_equal(three.actions, five.actions[:3])
    one = ucrl2(RIVER, steps=300, seed=4)
    assert one.runs is None and isinstance(one.episodes, int)
    np.testing.assert_array_equal(one.states, ucrl2(RIVER, steps=300, seed=4).states)
