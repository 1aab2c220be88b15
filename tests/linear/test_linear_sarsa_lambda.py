"""Linear Sarsa(lambda) and true online Sarsa(lambda) (tabular/linear/control.py, Sutton &
Barto section 12.7), against their tabular counterparts and an exact optimum.

- One-hot state-action features make semi_gradient_sarsa_lambda the tabular
  sarsa_lambda (accumulating, replacing and clearing traces) and true_online_linear_sarsa_lambda
  the tabular true_online_sarsa_lambda, bit for bit, for lambda in {0, 0.5, 0.9},
  runs > 1: the same draws in the same order and the same arithmetic.
- lambda = 0 is semi_gradient_sarsa, bit for bit, with one-hot and with tile-coded
  (shared, binary) features, for every trace: z = 0 * z + x = x, and with binary
  features the replacing trace is x too (clearing the zero trace changes nothing).
- The clearing trace zeroes the traces of the features of (S, b), b != A, then sets
  those of (S, A) to 1, also where the actions share features; on a gridworld it learns
  otherwise than the replacing trace.
- On a small MDP with shared features, every run's learned greedy policy is value
  iteration's, its exact value v*(0).
"""

import gymnasium as gym
import numpy as np
import pytest
from conftest import assert_learns_the_corridor, corridor, corridor_features, pairs

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import TabularMDP, sarsa_lambda, true_online_sarsa_lambda
from tabular.linear import (
    semi_gradient_sarsa,
    semi_gradient_sarsa_lambda,
    true_online_linear_sarsa_lambda,
)
from tabular.rules.linear import clear_other_actions, replace_features

ENVS = ["tabzoo/CliffWalking-v0", "tabzoo/WindyGridworld-v0"]
TRACES = ["accumulating", "replacing", "clearing"]
ARGS = {"episodes": 30, "alpha": 0.3, "epsilon": 0.1, "runs": 3, "seed": 7}


def assert_same_runs(linear, tabular):
    assert np.array_equal(linear.Q, tabular.Q)
    assert np.array_equal(linear.episode_returns, tabular.episode_returns)
    assert np.array_equal(linear.episode_lengths, tabular.episode_lengths)


@pytest.mark.parametrize("env_id", ENVS)
@pytest.mark.parametrize("lam", [0.0, 0.5, 0.9])
@pytest.mark.parametrize("trace", TRACES)
def test_one_hot_is_tabular_sarsa_lambda_bit_for_bit(env_id, lam, trace):
    mdp = TabularMDP.from_gymnasium(gym.make(env_id))
    assert_same_runs(semi_gradient_sarsa_lambda(mdp, pairs(mdp), lam=lam, trace=trace, **ARGS),
                     sarsa_lambda(mdp, lam=lam, trace=trace, **ARGS))


@pytest.mark.parametrize("env_id", ENVS)
@pytest.mark.parametrize("lam", [0.0, 0.5, 0.9])
def test_one_hot_is_tabular_true_online_sarsa_lambda_bit_for_bit(env_id, lam):
    mdp = TabularMDP.from_gymnasium(gym.make(env_id))
    assert_same_runs(true_online_linear_sarsa_lambda(mdp, pairs(mdp), lam=lam, **ARGS),
                     true_online_sarsa_lambda(mdp, lam=lam, **ARGS))


@pytest.mark.parametrize("trace", TRACES)
def test_lambda_0_is_semi_gradient_sarsa_bit_for_bit(trace):
    mdp = TabularMDP.from_gymnasium(gym.make(ENVS[0]))
    for F in [pairs(mdp), *corridor_features(corridor())[1:]]:
        m = mdp if F.shape[0] == mdp.n_states else corridor()
        one = semi_gradient_sarsa(m, F, **ARGS)
        traced = semi_gradient_sarsa_lambda(m, F, lam=0.0, trace=trace, **ARGS)
        assert np.array_equal(traced.w, one.w)
        assert np.array_equal(traced.episode_lengths, one.episode_lengths)


@pytest.mark.parametrize("learner, options", [
    (semi_gradient_sarsa_lambda, {"trace": "accumulating"}),
    (semi_gradient_sarsa_lambda, {"trace": "replacing"}),
    (semi_gradient_sarsa_lambda, {"trace": "clearing"}),
    (true_online_linear_sarsa_lambda, {}),
])
def test_sarsa_lambda_learns_the_optimal_policy_of_a_small_mdp(learner, options):
    """On the corridor (tests/linear/test_linear.py), with one-hot and with tile-coded features,
    every run's greedy policy is optimal after 300 episodes."""
    mdp = corridor()
    for F in corridor_features(mdp):
        result = learner(mdp, F, lam=0.8, episodes=300, alpha=0.05 / F[0, 0].sum(),
                         epsilon=0.1, runs=3, seed=1, **options)
        assert_learns_the_corridor(mdp, result, 3)


def test_clearing_zeroes_the_other_actions_features_then_replaces():
    """Three actions over four features, the first shared by actions 0 and 1: after the
    decay, the features of (S, 1) and (S, 2) lose their traces, then those of (S, 0)
    -- the shared one included -- are 1; a feature of no action of S keeps its trace."""
    x_rows = np.array([[1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    z = np.array([0.5, 0.25, 0.75, 0.125])
    clear_other_actions(z, x_rows, 0)
    assert z.tolist() == [0.0, 0.25, 0.0, 0.125]
    replace_features(z, x_rows[0])
    assert z.tolist() == [1.0, 1.0, 0.0, 0.125]


def test_clearing_learns_otherwise_than_replacing():
    """The option is not a no-op: on the cliff world, where states are revisited with
    other actions, the weights after 30 episodes differ."""
    mdp = TabularMDP.from_gymnasium(gym.make(ENVS[0]))
    runs = [semi_gradient_sarsa_lambda(mdp, pairs(mdp), lam=0.9, trace=trace, **ARGS).w
            for trace in ("replacing", "clearing")]
    assert not np.array_equal(*runs)
