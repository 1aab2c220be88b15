"""Every result prints as a short summary: its class, fields, and arrays by shape."""

import gymnasium as gym
import numpy as np
import pytest

import tabular
import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
)


@pytest.fixture(scope="module")
def cliff():
    return TabularMDP.from_gymnasium(gym.make("tabzoo/CliffWalking-v0"))


@pytest.mark.parametrize("make", [
    lambda m: tabular.q_learning(m, episodes=20, runs=50, seed=0),
    lambda m: tabular.td0(m, np.full((48, 4), 0.25), episodes=5, runs=50, seed=0),
    lambda m: tabular.dyna_q(m, episodes=3, runs=4, seed=0),
    lambda m: tabular.reinforce(m, gamma=1.0, episodes=3, runs=4, seed=0, max_steps=50),
    lambda m: tabular.value_iteration(m, gamma=0.9),
    lambda m: tabular.epsilon_greedy_bandit(tabular.BanditTestbed(), steps=10, runs=50, seed=0),
], ids=["control", "prediction", "planning", "policy_gradient", "solver", "bandit"])
def test_a_result_prints_its_shapes_not_its_numbers(cliff, make):
    text = repr(make(cliff))
    assert len(text) < 400, text
    assert "float64[" in text and "array(" not in text, text
