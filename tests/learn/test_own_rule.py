"""A user's own TD control rule through :func:`tabular.learn.custom.td_control`: the
Q-learning target written by hand reproduces :func:`tabular.q_learning` bit for bit
(every field, several seeds, ``runs=n``, run i of runs=n is run i of runs=m), SARSA's
with ``on_policy=True`` reproduces :func:`tabular.sarsa`, and bad rules and bad
arguments get the library's errors."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from conftest import own_q_learning

from tabular import TabularMDP, envs, expected_sarsa, q_learning, sarsa, schedules
from tabular.learn.custom import epsilon_greedy_expectation, max_value, td_control

assert envs  # registers tabzoo/


@td_control(on_policy=True)
def my_sarsa(reward, gamma, q_next, done, next_action, epsilon, legal):
    if done:
        return reward
    return reward + gamma * q_next[next_action]


@pytest.fixture(scope="module")
def cliff():
    return TabularMDP.from_gymnasium(gym.make("tabzoo/CliffWalking-v0"))


def same(a, b):
    for name in ("Q", "episode_returns", "episode_lengths", "policy"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and x.dtype == y.dtype, name
        np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_own_q_learning_is_q_learning_bit_for_bit(cliff, seed):
    args = dict(episodes=60, alpha=0.5, epsilon=0.1, seed=seed)
    same(own_q_learning(cliff, runs=5, **args), q_learning(cliff, runs=5, **args))
    same(own_q_learning(cliff, **args), q_learning(cliff, **args))


def test_run_i_of_n_runs_is_run_i_of_m(cliff):
    three = own_q_learning(cliff, episodes=40, seed=7, runs=3)
    five = own_q_learning(cliff, episodes=40, seed=7, runs=5)
    np.testing.assert_array_equal(three.Q, five.Q[:3])
    np.testing.assert_array_equal(five.run(1).Q, five.Q[1])
    assert own_q_learning(cliff, episodes=5, runs=1).Q.shape == (1, 48, 4)


def test_schedules_masks_and_gamma_as_q_learning(cliff):
    mask = np.ones((cliff.n_states, cliff.n_actions), dtype=bool)
    mask[:, 3] = False  # no left anywhere
    args = dict(episodes=30, gamma=0.9, alpha=schedules.inverse(),
                epsilon=schedules.linear(0.5, 0.0, 30), seed=3, runs=2, action_mask=mask)
    same(own_q_learning(cliff, **args), q_learning(cliff, **args))


def test_on_policy_order_reproduces_sarsa(cliff):
    args = dict(episodes=40, alpha=0.5, epsilon=0.1, seed=2, runs=3)
    same(my_sarsa(cliff, **args), sarsa(cliff, **args))


def test_a_target_reading_epsilon_reproduces_expected_sarsa(cliff):
    """The epsilon argument: expected SARSA's target (eq. 6.9) by hand."""
    @td_control
    def my_expected_sarsa(reward, gamma, q_next, done, next_action, epsilon, legal):
        if done:
            return reward
        return reward + gamma * epsilon_greedy_expectation(q_next, epsilon, legal)

    args = dict(episodes=40, alpha=0.5, epsilon=0.2, seed=4, runs=3)
    same(my_expected_sarsa(cliff, **args), expected_sarsa(cliff, **args))


def test_a_rule_of_its_own_learns_q_star(cliff):
    """Not Q-learning: a target that doubles the reward learns ``2 q*`` (the cliff's
    rewards scaled), by the same loop: exact on a deterministic MDP after enough
    greedy-converging episodes, checked on the start's optimal value, 2 x -13."""
    @td_control
    def doubled(reward, gamma, q_next, done, next_action, epsilon, legal):
        if done:
            return 2.0 * reward
        return 2.0 * reward + gamma * max_value(q_next, legal)

    res = doubled(cliff, episodes=500, alpha=1.0, epsilon=0.2, seed=0)
    start = int(np.argmax(cliff.start))
    assert res.V[start] == -26.0


@pytest.mark.parametrize("target, message", [
    (3, "target must be a function"),
    (lambda r, g: r, "must take the seven arguments"),
])
def test_bad_rules_are_named(target, message):
    with pytest.raises(TypeError, match=message):
        td_control(target)


def test_bad_on_policy_is_named():
    with pytest.raises(ValueError, match="on_policy must be True or False"):
        td_control(on_policy="yes")


@pytest.mark.parametrize("kwargs", [
    dict(alpha=2.0), dict(episodes=0), dict(runs=True), dict(epsilon=float("nan")),
    dict(gamma=1.5), dict(initial_Q=np.zeros(3)), dict(action_mask=np.zeros((48, 4), bool)),
], ids=str)
def test_bad_arguments_get_q_learnings_errors(cliff, kwargs):
    """Every bad argument gets the error ``q_learning`` gives it, word for word."""
    with pytest.raises(Exception) as library:
        q_learning(cliff, **kwargs)
    with pytest.raises(library.type, match=re.escape(str(library.value))):
        own_q_learning(cliff, **kwargs)
