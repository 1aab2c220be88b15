"""Published numbers: Sutton & Barto 2nd ed. (Figures 3.2, 3.5, 4.1, Example 4.3) and Gymnasium.

The book prints values rounded to one decimal (two for Figure 4.3), so a match
"to one decimal" is ``|V - printed| <= 0.05`` (resp. 0.005).
"""

import gymnasium as gym
import numpy as np
import pytest

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    SoftmaxPolicy,
    TabularMDP,
    bellman_expectation,
    optimal_actions,
    policy_evaluation,
    policy_iteration,
    value_iteration,
)


def model(env_id, **kwargs):
    return TabularMDP.from_gymnasium(gym.make(env_id, **kwargs))


def equiprobable(mdp):
    return np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)


FIGURE_3_2 = [[3.3, 8.8, 4.4, 5.3, 1.5],
              [1.5, 3.0, 2.3, 1.9, 0.5],
              [0.1, 0.7, 0.7, 0.4, -0.4],
              [-1.0, -0.4, -0.4, -0.6, -1.2],
              [-1.9, -1.3, -1.2, -1.4, -2.0]]

FIGURE_3_5 = [[22.0, 24.4, 22.0, 19.4, 17.5],
              [19.8, 22.0, 19.8, 17.8, 16.0],
              [17.8, 19.8, 17.8, 16.0, 14.4],
              [16.0, 17.8, 16.0, 14.4, 13.0],
              [14.4, 16.0, 14.4, 13.0, 11.7]]

FIGURE_4_1 = {
    1: [[0, -1, -1, -1], [-1, -1, -1, -1], [-1, -1, -1, -1], [-1, -1, -1, 0]],
    2: [[0, -1.7, -2.0, -2.0], [-1.7, -2.0, -2.0, -2.0], [-2.0, -2.0, -2.0, -1.7],
        [-2.0, -2.0, -1.7, 0]],
    3: [[0, -2.4, -2.9, -3.0], [-2.4, -2.9, -3.0, -2.9], [-2.9, -3.0, -2.9, -2.4],
        [-3.0, -2.9, -2.4, 0]],
    10: [[0, -6.1, -8.4, -9.0], [-6.1, -7.7, -8.4, -8.4], [-8.4, -8.4, -7.7, -6.1],
         [-9.0, -8.4, -6.1, 0]],
}

FIGURE_4_1_CONVERGED = [[0, -14, -20, -22], [-14, -18, -20, -20], [-20, -20, -18, -14],
                        [-22, -20, -14, 0]]


@pytest.mark.parametrize("method", ["exact", "sync", "inplace"])
def test_figure_3_2_random_policy_on_the_5x5_gridworld(method):
    mdp = model("tabzoo/Gridworld5x5-v0")
    V = policy_evaluation(mdp, equiprobable(mdp), 0.9, method=method).V
    np.testing.assert_allclose(V.reshape(5, 5), FIGURE_3_2, rtol=0, atol=0.05)
    # the same policy as a SoftmaxPolicy whose states all read one row of equal logits
    shared = SoftmaxPolicy(np.full((1, 4), 0.3), np.zeros(mdp.n_states, dtype=np.int64))
    np.testing.assert_allclose(policy_evaluation(mdp, shared, 0.9, method=method).V, V,
                               rtol=0, atol=1e-12)


def test_figure_3_5_optimal_values_on_the_5x5_gridworld():
    mdp = model("tabzoo/Gridworld5x5-v0")
    for V in (value_iteration(mdp, 0.9).V, value_iteration(mdp, 0.9, method="inplace").V,
              policy_iteration(mdp, 0.9).V, policy_iteration(mdp, 0.9, eval_sweeps=3).V):
        np.testing.assert_allclose(V.reshape(5, 5), FIGURE_3_5, rtol=0, atol=0.05)
    assert value_iteration(mdp, 0.9).V[1] == pytest.approx(24.4, abs=0.05)  # v*(A)


def test_figure_4_1_synchronous_sweeps_and_the_converged_values():
    mdp = model("tabzoo/Gridworld4x4-v0")
    pi = equiprobable(mdp)
    V = np.zeros(mdp.n_states)
    for k in range(1, 11):
        V = bellman_expectation(mdp, V, pi, 1.0)
        if k in FIGURE_4_1:
            # the book prints k=2's exact -1.75 as -1.7: allow the half-way case itself
            np.testing.assert_allclose(V.reshape(4, 4), FIGURE_4_1[k], rtol=0, atol=0.05 + 1e-12)
            truncated = policy_evaluation(mdp, pi, 1.0, method="sync", max_iter=k, strict=False)
            np.testing.assert_array_equal(truncated.V, V)
            assert not truncated.converged
    for method in ("exact", "sync", "inplace"):
        V = policy_evaluation(mdp, pi, 1.0, method=method).V
        np.testing.assert_allclose(V.reshape(4, 4), FIGURE_4_1_CONVERGED, rtol=0, atol=1e-6)
    # the greedy policy of Figure 4.1's last row is optimal: -1 per step to the nearest corner
    V_star = value_iteration(mdp, 1.0).V.reshape(4, 4)
    rows, cols = np.indices((4, 4))
    steps = np.minimum(rows + cols, 6 - rows - cols)
    np.testing.assert_array_equal(V_star, -steps)


def test_example_4_3_gamblers_problem():
    mdp = model("tabzoo/Gambler-v0")
    res = value_iteration(mdp, 1.0, tol=1e-12)
    for capital, printed in ((25, 0.16), (50, 0.40), (75, 0.64)):
        assert res.V[capital] == pytest.approx(printed, abs=0.005)
    # Figure 4.3's policy up to ties: stake everything at 50, 25 at 25 and at 75
    best = optimal_actions(res.Q, 1e-9)
    assert best[50, 50] and best[25, 25] and best[75, 25]
    assert not best[50, 1:50].any()  # at 50 the bold stake is the only optimal positive one
    # stake 0 loops in place and ties (q = v*); the returned policy is optimal and ends
    states = np.arange(mdp.n_states)
    assert best[states, res.policy].all() and (res.policy[1:100] > 0).all()
    assert res.policy[50] == 50
    np.testing.assert_allclose(policy_evaluation(mdp, res.policy, 1.0).V, res.V, rtol=0,
                               atol=1e-9)


def test_frozen_lake_4x4_slippery():
    mdp = model("FrozenLake-v1", map_name="4x4", is_slippery=True)
    for V in (value_iteration(mdp, 0.99, tol=1e-10).V, policy_iteration(mdp, 0.99).V):
        assert mdp.start @ V == pytest.approx(0.5420, abs=5e-5)


@pytest.mark.parametrize("env_id", ["CliffWalking-v1", "tabzoo/CliffWalking-v0"])
def test_cliff_walking_optimal_return(env_id):
    mdp = model(env_id)
    res = value_iteration(mdp, 1.0)
    assert mdp.start @ res.V == -13.0
    # following the greedy policy from the start reaches the goal in 13 steps
    s = int(np.argmax(mdp.start))
    for _ in range(13):
        k = int(np.argmax(mdp.prob[s, res.policy[s]]))
        done = mdp.done[s, res.policy[s], k]
        s = mdp.next_state[s, res.policy[s], k]
    assert done
