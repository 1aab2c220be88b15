"""MBIE-EB, R-max and Delayed Q-learning on the two-state switch, step by step by hand,
and their exact sample complexity."""

import numpy as np
import pytest

from tabular import TabularMDP
from tabular.explore import (
    DiscountedResult,
    delayed_q_learning,
    mbie_eb,
    rmax,
    sample_complexity,
)


def switch():
    """Action 0 stays, action 1 switches; staying in state 1 pays 1. With gamma = 1/2:
    V*(0) = 1 (switch, then stay), V*(1) = 2; r_max / (1 - gamma) = 2."""
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[1, 0, 1] = P[0, 1, 1] = P[1, 1, 0] = 1.0
    return TabularMDP.from_dense(P, np.array([[0.0, 0.0], [1.0, 0.0]]),
                                 start=np.array([1.0, 0.0]))


SWITCH = switch()


def test_rmax_by_hand():
    # stay in 0 (all unknown, ties to 0); (0, stay) known, worth 1/2 x 2 < 2: switch;
    # in 1, stay (ties); (1, stay) known, worth 1 + 1/2 x 2 = 2, a tie kept: stay forever
    result = rmax(SWITCH, gamma=0.5, steps=6, known=1)
    np.testing.assert_array_equal(result.states, [0, 0, 1, 1, 1, 1])
    actions = result.policy[np.arange(6), result.states]
    np.testing.assert_array_equal(actions, [0, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(result.rewards, [0, 0, 1, 1, 1, 1])


@pytest.mark.parametrize("factor, second", [(0.5, 1), (1.5, 0)])
def test_mbie_eb_bonus_by_hand(factor, second):
    # after one stay in 0 (reward 0): Q(0, stay) solves q = beta + 1/2 max(q, 2); with
    # beta below (1 - gamma) x 2 = 1 it is 1 + beta < 2 = Q(0, switch): switch;
    # above, q = 2 beta > 2: stay
    result = mbie_eb(SWITCH, gamma=0.5, steps=2, beta=factor * 1.0)
    assert result.policy[0, 0] == 0 and result.policy[1, 0] == second


def test_sample_complexity_by_hand():
    stay = np.zeros((3, 2), dtype=np.int16)
    best = np.array([[1, 0]] * 3, dtype=np.int16)
    states = np.array([0, 0, 1], dtype=np.int32)
    measured = sample_complexity(SWITCH, DiscountedResult(states, np.zeros(3), stay),
                                 gamma=0.5, epsilon=0.1)
    # staying in 0 is worth 0 against V*(0) = 1; in 1 it is optimal
    np.testing.assert_allclose(measured.gaps, [1.0, 1.0, 0.0], atol=1e-9)
    assert measured.mistakes == 2
    optimal = sample_complexity(SWITCH, DiscountedResult(states, np.zeros(3), best),
                                gamma=0.5)
    np.testing.assert_allclose(optimal.gaps, 0.0, atol=1e-9)
    assert optimal.mistakes == 0


def test_learners_end_optimal_and_follow_the_run_conventions():
    for learn in (lambda **kw: rmax(SWITCH, gamma=0.9, steps=300, known=3, **kw),
                  lambda **kw: mbie_eb(SWITCH, gamma=0.9, steps=300, **kw)):
        three, five = learn(runs=3, seed=2), learn(runs=5, seed=2)
        np.testing.assert_array_equal(three.policy, five.policy[:3])
        measured = sample_complexity(SWITCH, three, gamma=0.9)
        np.testing.assert_allclose(measured.gaps[:, -50:], 0.0, atol=1e-9)
        assert learn().runs is None


def test_delayed_q_learning_by_hand():
    # gamma = 1/2, Q starts at 2, m = 1, epsilon_1 = 0.1. Step 1: stay in 0, target
    # 0 + 1/2 x 2 = 1, 2 - 1 >= 0.2: Q(0, stay) = 1.1, so switch; step 2: target 1 again,
    # Q(0, switch) = 1.1; step 3 in 1: stay (ties), target 1 + 1/2 x 2 = 2: no update
    result = delayed_q_learning(SWITCH, gamma=0.5, steps=5, attempts=1, epsilon1=0.1)
    np.testing.assert_array_equal(result.states, [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(result.policy[np.arange(5), result.states], [0, 1, 0, 0, 0])
    assert result.policy[2, 0] == 0  # Q(0, .) = (1.1, 1.1): the tie goes to stay


def test_delayed_q_learning_ends_optimal():
    measured = sample_complexity(SWITCH, delayed_q_learning(SWITCH, gamma=0.9, steps=3000,
                                                            runs=2), gamma=0.9)
    np.testing.assert_allclose(measured.gaps[:, -50:], 0.0, atol=1e-9)
