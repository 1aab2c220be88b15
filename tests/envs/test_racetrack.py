"""The racetrack (Exercise 5.12): its exact model, the env against it, and its optimum."""

import numpy as np
import pytest

from tabular import policy_evaluation, value_iteration
from tabular.envs.racetrack import CRASHED, FINISHED, INCREMENTS, Racetrack

ENV = Racetrack()
MDP = ENV.to_mdp()
#: The states that drive (finish cells are absorbing).
DRIVING = ENV.chars[ENV.state_cells[:, 0], ENV.state_cells[:, 1]] != ord("F")
BEST = value_iteration(MDP, 1.0)


def test_sizes_and_probabilities_sum_to_one():
    assert (MDP.n_states, MDP.n_actions, MDP.n_outcomes) == (7158, 9, 12)
    np.testing.assert_allclose(MDP.prob.sum(axis=2), 1.0, atol=1e-12)
    assert (MDP.reward[MDP.prob > 0] <= 0).all()
    np.testing.assert_allclose(MDP.start.sum(), 1.0)


def test_velocities_stay_legal():
    v = ENV.state_velocity
    assert ((v >= 0) & (v <= 4)).all()
    at_rest = (v == 0).all(axis=1)
    cells = ENV.state_cells[at_rest]
    assert (ENV.chars[cells[:, 0], cells[:, 1]] == ord("S")).all()
    # every successor of positive probability is a legal state by construction; at rest
    # only the noise keeps a car standing
    reached = MDP.next_state[MDP.prob > 0]
    assert ((reached >= 0) & (reached < MDP.n_states)).all()
    drove = DRIVING[:, None] & (ENV.outcome != CRASHED)
    assert not at_rest[ENV.next_state[drove]].any(), "an action left a car at rest"


def test_one_step_by_hand():
    """From the leftmost start cell at rest, (0, +1) moves one cell up with 0.9; the
    noise (0.1) leaves the car standing."""
    r, c = ENV.start_cells[0]
    s = ENV.state_index[r, c, 0, 0]
    a = int(np.flatnonzero((INCREMENTS == (0, 1)).all(axis=1))[0])
    up = ENV.state_index[r - 1, c, 0, 1]
    outcomes = {(int(n), float(p)) for n, p in zip(MDP.next_state[s, a], MDP.prob[s, a],
                                                   strict=True) if p > 0}
    assert outcomes == {(up, 0.9), (s, 0.1)}


def test_crash_goes_back_to_the_start_line():
    """Moving right from the rightmost start cell hits the outside: uniform restart."""
    r, c = ENV.start_cells[-1]
    s = ENV.state_index[r, c, 0, 0]
    a = int(np.flatnonzero((INCREMENTS == (1, 0)).all(axis=1))[0])
    assert ENV.outcome[s, a] == CRASHED
    p = np.zeros(MDP.n_states)
    np.add.at(p, MDP.next_state[s, a], MDP.prob[s, a])
    np.testing.assert_allclose(p[MDP.start > 0], 0.9 / 6 + 0.1 * (np.arange(6) == 5))
    assert not MDP.done[s, a][MDP.prob[s, a] > 0].any()


def replay(env, mdp, steps, seed):
    """Random actions through the env; every transition must be one of the model's."""
    rng = np.random.default_rng(seed)
    s, _ = env.reset(seed=seed)
    finished = 0
    for _ in range(steps):
        a = int(rng.integers(mdp.n_actions))
        nxt, r, terminated, truncated, info = env.step(a)
        match = ((mdp.prob[s, a] > 0) & (mdp.next_state[s, a] == nxt)
                 & (mdp.reward[s, a] == r) & (mdp.done[s, a] == terminated))
        assert match.any(), f"({s}, {a}) -> ({nxt}, {r}, {terminated}) not in the model"
        assert info["velocity"] == tuple(env.state_velocity[nxt])
        s = nxt
        if terminated:
            finished += 1
            s, _ = env.reset()
            assert mdp.start[s] > 0
    return finished


def test_env_steps_only_through_model_transitions():
    env = Racetrack(render_mode="ansi")
    replay(env, MDP, steps=3000, seed=3)
    assert "@" in env.render()
    # the optimal policy finishes often in 3000 steps
    finished = 0
    s, _ = env.reset(seed=1)
    for _ in range(3000):
        s, _, terminated, _, _ = env.step(int(BEST.policy[s]))
        if terminated:
            finished += 1
            s, _ = env.reset()
    assert finished > 150


def test_optimal_start_value_is_finite_and_negative():
    value = float(MDP.start @ BEST.V)
    assert -20.0 < value < -5.0
    evaluated = policy_evaluation(MDP, BEST.policy, 1.0, method="sync", max_iter=3000,
                                  strict=False).V
    assert float(MDP.start @ evaluated) == pytest.approx(value, abs=1e-6)


@pytest.mark.parametrize("start_cell", range(6))
def test_optimal_policy_finishes_without_noise(start_cell):
    quiet = Racetrack(noise=0.0)
    for seed in range(3):
        cells, crashes, finished = quiet.trajectory(BEST.policy, start_cell, seed=seed)
        assert finished
        assert len(cells) - 1 <= 15
        assert crashes <= 3  # only the deliberate re-draws of a poor start cell
    # exactly: the policy's noise-free value is finite from every start state
    mdp = quiet.to_mdp()
    V = policy_evaluation(mdp, BEST.policy, 1.0, method="sync", max_iter=3000, strict=False).V
    assert (V[mdp.start > 0] > -20.0).all()


def test_the_right_track_of_figure_5_5():
    """The second track: 30 x 32 cells, a start line of 23 cells along the bottom and a
    finish line of 9 along the right edge; every noise-free optimal drive finishes."""
    env = Racetrack("racetrack_2")
    assert env.chars.shape == (30, 32)
    assert len(env.start_cells) == 23 and (env.chars[:, -1] == ord("F")).sum() == 9
    mdp = env.to_mdp()
    np.testing.assert_allclose(mdp.prob.sum(axis=2), 1.0, atol=1e-12)
    best = value_iteration(mdp, 1.0)
    assert -20.0 < float(mdp.start @ best.V) < -5.0
    quiet = Racetrack("racetrack_2", noise=0.0)
    for start_cell in range(23):
        _, _, finished = quiet.trajectory(best.policy, start_cell)
        assert finished


def test_noise_free_model_is_deterministic_off_crashes():
    mdp = Racetrack(noise=0.0).to_mdp()
    kept = DRIVING[:, None] & (ENV.outcome != CRASHED)
    assert (mdp.prob[..., 0][kept] == 1.0).all()
    assert (mdp.next_state[..., 0][kept] == ENV.next_state[kept]).all()
    assert (mdp.done[..., 0][kept] == (ENV.outcome == FINISHED)[kept]).all()


def test_small_track():
    env = Racetrack(["....F", "....F", "SS###"], noise=0.0, max_speed=2)
    best = value_iteration(env.to_mdp(), 1.0)
    cells, crashes, finished = env.trajectory(best.policy, 0)
    assert finished and crashes == 0


@pytest.mark.parametrize("kwargs, fragment", [
    ({"noise": 1.5}, "noise"),
    ({"noise": float("nan")}, "noise"),
    ({"max_speed": 0}, "max_speed"),
    ({"max_speed": 2.5}, "max_speed"),
    ({"layout": "..F\nSS#\nGG#"}, "layout"),
    ({"layout": "..#\nSS#"}, "finish"),
    ({"layout": "..F\n..#"}, "start"),
    ({"layout": "..F\n.S"}, "layout row 1"),
    ({"render_mode": "human"}, "render_mode"),
])
def test_bad_constructor_inputs_name_the_parameter(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        Racetrack(**kwargs)


def test_bad_trajectory_inputs():
    with pytest.raises(ValueError, match="start_cell"):
        ENV.trajectory(BEST.policy, 6)
    with pytest.raises(ValueError, match="policy"):
        ENV.trajectory(BEST.policy[:5], 0)
