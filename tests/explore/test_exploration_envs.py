"""The exploration benchmarks of ``tabular.envs.exploration``: their models against the
papers' descriptions and their optimal values against numbers computed by hand (or by
an independent dense solve where no hand value exists)."""

import gymnasium as gym
import numpy as np
import pytest

from tabular import finite_horizon, policy_evaluation, value_iteration
from tabular.envs import Chain, DeepSea, FourRoom, NRoom, RandomMDP, RiverSwim


def dense(mdp):
    """``P[s, a, s']`` of the outcomes that do not end the episode, and ``r[s, a]``."""
    S, A, K = mdp.prob.shape
    P = np.zeros((S, A, S))
    for k in range(K):
        np.add.at(P, (np.arange(S)[:, None], np.arange(A)[None, :], mdp.next_state[:, :, k]),
                  mdp.prob[:, :, k] * ~mdp.done[:, :, k])
    return P, mdp.expected_reward()


def backward_induction(mdp, horizon):
    """``V*_0`` of ``horizon`` steps by the dense recursion, independent of the library."""
    P, r = dense(mdp)
    v = np.zeros(mdp.n_states)
    for _ in range(horizon):
        v = (r + P @ v).max(axis=1)
    return v


def test_riverswim_model_is_osband_2013():
    mdp = RiverSwim().to_mdp()
    P, r = dense(mdp)
    assert P.shape == (6, 2, 6)
    np.testing.assert_allclose(P[:, 0].argmax(axis=1), [0, 0, 1, 2, 3, 4])
    np.testing.assert_allclose(P[0, 1, [0, 1]], [0.4, 0.6])
    np.testing.assert_allclose(P[3, 1, [2, 3, 4]], [0.05, 0.6, 0.35])
    np.testing.assert_allclose(P[5, 1, [4, 5]], [0.4, 0.6])
    assert r[0, 0] == 0.005 and r[5, 1] == 1.0 and r.sum() == 1.005


def test_riverswim_optimal_values():
    mdp = RiverSwim().to_mdp()
    # one step: the small reward; the large one is at least 5 steps away
    assert finite_horizon(mdp, 1).V[0, 0] == 0.005
    assert finite_horizon(mdp, 5).V[0, 0] == pytest.approx(5 * 0.005, abs=1e-15)
    fh = finite_horizon(mdp, 20)
    np.testing.assert_allclose(fh.V[0], backward_induction(mdp, 20), rtol=0, atol=1e-12)
    # at H = 20 swimming right from the bank beats collecting 20 x 0.005 = 0.1
    assert fh.policy[0, 0] == 1 and fh.V[0, 0] > 0.1
    vi = value_iteration(mdp, gamma=0.95, tol=1e-12)
    right = policy_evaluation(mdp, np.ones(6, dtype=int), gamma=0.95, method="exact")
    np.testing.assert_array_equal(vi.policy, np.ones(6))
    np.testing.assert_allclose(vi.V, right.V, atol=1e-9)


def test_chain_model_and_optimal_value():
    mdp = Chain().to_mdp()
    P, r = dense(mdp)
    np.testing.assert_allclose(P[2, 0, [3, 0]], [0.8, 0.2])
    np.testing.assert_allclose(r[4], [0.8 * 10 + 0.2 * 2, 0.8 * 2 + 0.2 * 10])
    np.testing.assert_allclose(r[1], [0.2 * 2, 0.8 * 2])
    gamma = 0.99
    vi = value_iteration(mdp, gamma=gamma, tol=1e-12)
    assert vi.policy.tolist() == [0, 0, 0, 0, 0]  # forward everywhere
    # v = r_pi + gamma P_pi v for the forward policy, solved densely
    v = np.linalg.solve(np.eye(5) - gamma * P[:, 0], r[:, 0])
    np.testing.assert_allclose(vi.V, v, atol=1e-8)


@pytest.mark.parametrize("size, seed", [(1, None), (5, None), (10, 42), (7, 3)])
def test_deepsea_optimal_value_is_one_minus_move_cost(size, seed):
    env = DeepSea(size, mapping_seed=seed)
    mdp = env.to_mdp()
    fh = finite_horizon(mdp, size)
    assert fh.V[0, 0] == pytest.approx(0.99, abs=1e-12)
    assert value_iteration(mdp, gamma=1.0).V[0] == pytest.approx(0.99, abs=1e-12)
    # the optimal path takes the right action of each diagonal cell
    right = env.right_action()
    assert [fh.policy[t, t * size + t] for t in range(size)] == [right[t, t]
                                                               for t in range(size)]
    if size > 1:  # a first move left (to cell (1, 0)) forfeits the treasure: at best 0
        assert fh.V[1, size] == 0.0


def test_deepsea_mapping_is_bsuites_draw():
    right = DeepSea(4, mapping_seed=0).right_action()
    np.testing.assert_array_equal(right, np.random.RandomState(0).binomial(1, 0.5, [4, 4]))
    assert DeepSea(4, mapping_seed=None).right_action().min() == 1


def test_deepsea_episode_lasts_size_steps():
    env = gym.make("tabzoo/DeepSea-v0", size=6)
    env.reset(seed=0)
    steps, terminated = 0, False
    while not terminated:
        _, _, terminated, _, _ = env.step(0)
        steps += 1
    assert steps == 6


@pytest.mark.parametrize("make, steps", [(FourRoom, 20), (lambda: NRoom(3, 4), 16),
                                         (lambda: NRoom(1, 5), 8)])
def test_rooms_optimal_value_is_gamma_to_the_shortest_path(make, steps):
    # the only reward, 1, comes on the step that enters the goal
    mdp = make().to_mdp()
    gamma = 0.9
    v = value_iteration(mdp, gamma=gamma, tol=1e-13).V
    start = int(np.argmax(mdp.start))
    assert v[start] == pytest.approx(gamma ** (steps - 1), abs=1e-10)
    assert finite_horizon(mdp, steps).V[0, start] == 1.0
    assert finite_horizon(mdp, steps - 1).V[0, start] == 0.0


def test_random_mdp_is_a_seeded_garnet():
    env = RandomMDP(12, 3, branching=4, seed=5)
    mdp = env.to_mdp()
    assert mdp.prob.shape == (12, 3, 4)
    assert (mdp.prob > 0).sum(axis=2).min() == 4
    for s in range(12):
        for a in range(3):
            assert len(set(mdp.next_state[s, a])) == 4
    np.testing.assert_allclose(mdp.prob.sum(axis=2), 1.0, atol=1e-12)
    assert (mdp.reward.min(axis=2) == mdp.reward.max(axis=2)).all()
    same = RandomMDP(12, 3, branching=4, seed=5).to_mdp()
    np.testing.assert_array_equal(same.prob, mdp.prob)
    assert not np.array_equal(RandomMDP(12, 3, branching=4, seed=6).to_mdp().prob, mdp.prob)
    P, r = dense(mdp)
    v = np.zeros(12)
    for _ in range(3000):
        v = (r + 0.9 * P @ v).max(axis=1)
    np.testing.assert_allclose(value_iteration(mdp, gamma=0.9, tol=1e-12).V, v, atol=1e-9)
