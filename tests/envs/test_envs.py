"""The registered ``tabzoo/`` envs: their models against the book's numbers and
against Gymnasium's own toy-text envs, replays of the real envs against their
models, and Gymnasium's env checker over the whole namespace."""

import subprocess
import sys
from collections import deque
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

from tabular import TabularMDP, envs, relative_value_iteration
from tabular.envs import GridWorld, TrapTreasure
from tabular.envs.base import draw_outcome

# ---------------------------------------------------------------- oracles
# Independent of the library's planners: dense linear algebra on the model.


def dense_model(mdp):
    """``P[s, a, s']`` over outcomes that do NOT end the episode, and ``r[s, a]``."""
    S, A, K = mdp.prob.shape
    P = np.zeros((S, A, S))
    s_idx, a_idx = np.meshgrid(np.arange(S), np.arange(A), indexing="ij")
    for k in range(K):
        np.add.at(P, (s_idx, a_idx, mdp.next_state[:, :, k]),
                  mdp.prob[:, :, k] * ~mdp.done[:, :, k])
    return P, mdp.expected_reward()


def evaluate(mdp, pi, gamma):
    """``v_pi`` by the exact linear solve ``(I - gamma P_pi) v = r_pi`` (S&B eq. 4.4)."""
    P, r = dense_model(mdp)
    P_pi = np.einsum("sa,sat->st", pi, P)
    r_pi = (pi * r).sum(axis=1)
    return np.linalg.solve(np.eye(mdp.n_states) - gamma * P_pi, r_pi)


def optimal_values(mdp, gamma, sweeps=2000):
    """``v*`` by repeated Bellman optimality backups on the dense model (S&B eq. 4.10)."""
    P, r = dense_model(mdp)
    v = np.zeros(mdp.n_states)
    for _ in range(sweeps):
        v = (r + gamma * P @ v).max(axis=1)
    return v


def uniform_policy(mdp):
    return np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)


def make_model(env_id, **kwargs):
    return gym.make(env_id, **kwargs).unwrapped.to_mdp()


# ----------------------------------------------- Sutton & Barto's numbers
def test_gridworld5x5_random_policy_matches_figure_3_2():
    mdp = make_model("tabzoo/Gridworld5x5-v0")
    v = evaluate(mdp, uniform_policy(mdp), 0.9).reshape(5, 5)
    book = [[3.3, 8.8, 4.4, 5.3, 1.5],
            [1.5, 3.0, 2.3, 1.9, 0.5],
            [0.1, 0.7, 0.7, 0.4, -0.4],
            [-1.0, -0.4, -0.4, -0.6, -1.2],
            [-1.9, -1.3, -1.2, -1.4, -2.0]]
    np.testing.assert_allclose(v, book, atol=0.05 + 1e-9)  # the book rounds to 0.1


def test_gridworld5x5_optimal_values_match_figure_3_5():
    mdp = make_model("tabzoo/Gridworld5x5-v0")
    v = optimal_values(mdp, 0.9, sweeps=400).reshape(5, 5)  # 0.9**400 * 25 < 1e-16
    book = [[22.0, 24.4, 22.0, 19.4, 17.5],
            [19.8, 22.0, 19.8, 17.8, 16.0],
            [17.8, 19.8, 17.8, 16.0, 14.4],
            [16.0, 17.8, 16.0, 14.4, 13.0],
            [14.4, 16.0, 14.4, 13.0, 11.7]]
    np.testing.assert_allclose(v, book, atol=0.05 + 1e-9)
    assert not mdp.done.any()  # a continuing task


def test_gridworld4x4_random_policy_matches_figure_4_1():
    env = gym.make("tabzoo/Gridworld4x4-v0").unwrapped
    mdp = env.to_mdp()
    assert mdp.n_states == 16 and env.state_of_cell(2, 1) == 9
    v = evaluate(mdp, uniform_policy(mdp), 1.0).reshape(4, 4)
    book = [[0, -14, -20, -22], [-14, -18, -20, -20], [-20, -20, -18, -14], [-22, -20, -14, 0]]
    np.testing.assert_allclose(v, book, atol=1e-9)
    np.testing.assert_allclose(mdp.start, np.r_[0, np.full(14, 1 / 14), 0])


def test_windy_gridworld_shortest_path_is_15_steps():
    env = gym.make("tabzoo/WindyGridworld-v0").unwrapped
    mdp = env.to_mdp()
    assert (mdp.prob[:, :, 0] == 1).all()  # deterministic
    start, goal = env.state_of_cell(3, 0), env.state_of_cell(3, 7)
    assert mdp.start[start] == 1
    depth = {start: 0}
    queue = deque([start])
    while queue:  # breadth-first search over the model
        s = queue.popleft()
        for a in range(4):
            nxt = int(mdp.next_state[s, a, 0])
            if nxt not in depth:
                depth[nxt] = depth[s] + 1
                queue.append(nxt)
    assert depth[goal] == 15
    v = optimal_values(mdp, 1.0, sweeps=200)
    assert v[start] == -15.0
    # wind of the column left: from (3, 6) (wind 2) moving right lands two rows up in column 7
    assert mdp.next_state[env.state_of_cell(3, 6), 1, 0] == env.state_of_cell(1, 7)
    # moving up from the top row under wind stays in the top row
    assert mdp.next_state[env.state_of_cell(0, 6), 0, 0] == env.state_of_cell(0, 6)


def test_cliff_walking_equals_gymnasium_cliffwalking_v1():
    ours = make_model("tabzoo/CliffWalking-v0")
    theirs = TabularMDP.from_gymnasium(gym.make("CliffWalking-v1"))
    goal = 47  # Gymnasium lets the goal state move on; ours is absorbing
    np.testing.assert_allclose(np.delete(ours.transition_matrix(), goal, axis=0),
                               np.delete(theirs.transition_matrix(), goal, axis=0))
    for arr in ("reward", "done"):
        np.testing.assert_array_equal(np.delete(getattr(ours, arr)[:, :, 0], goal, axis=0),
                                      np.delete(getattr(theirs, arr)[:, :, 0], goal, axis=0))
    np.testing.assert_array_equal(ours.start, theirs.start)
    assert (ours.next_state[goal] == goal).all() and ours.done[goal].all()
    # the safe path (up, 11 x right, down) takes 13 steps: v* = -13 (Example 6.6)
    assert optimal_values(ours, 1.0, sweeps=200)[36] == -13.0


def test_frozen_lake_as_a_gridworld_equals_gymnasium():
    """FrozenLake is a GridWorld with slip 2/3, holes as zero-reward traps, and its
    actions (left, down, right, up) permuted to ours (up, right, down, left)."""
    for map_name, layout in (("4x4", "SFFF FHFH FFFH HFFG"),
                             ("8x8", "SFFFFFFF FFFFFFFF FFFHFFFF FFFFFHFF FFFHFFFF FHHFFFHF "
                                     "FHFFHFHF FFFHFFFG")):
        rows = layout.replace("F", ".").replace("H", "T").split()
        ours = GridWorld(rows, slip=2 / 3, trap_reward=0.0).to_mdp()
        theirs = TabularMDP.from_gymnasium(gym.make("FrozenLake-v1", map_name=map_name))
        to_ours = [3, 2, 1, 0]  # FrozenLake action a is our action to_ours[a]
        np.testing.assert_allclose(ours.transition_matrix()[:, to_ours],
                                   theirs.transition_matrix(), atol=1e-12)
        np.testing.assert_allclose(ours.expected_reward()[:, to_ours],
                                   theirs.expected_reward(), atol=1e-12)
        np.testing.assert_array_equal(ours.start, theirs.start)


def test_gambler_bold_play_is_optimal_for_p_h_below_half():
    mdp = make_model("tabzoo/Gambler-v0", p_h=0.4, goal=100)
    assert (mdp.n_states, mdp.n_actions) == (101, 51)
    s = np.arange(101)
    bold = np.eye(51)[np.minimum(s, 100 - s)]
    v = evaluate(mdp, bold, 1.0)
    assert v[50] == pytest.approx(0.4, abs=1e-12)
    assert v[25] == pytest.approx(0.4 * 0.4, abs=1e-12)
    assert v[75] == pytest.approx(0.4 + 0.6 * 0.4, abs=1e-12)
    np.testing.assert_allclose(optimal_values(mdp, 1.0, sweeps=300), v, atol=1e-10)
    # a stake above min(s, goal - s) is clipped: in state 10 every stake >= 10 is all-in
    np.testing.assert_array_equal(mdp.next_state[10, 10:, 0], 20)
    np.testing.assert_array_equal(mdp.next_state[10, 10:, 1], 0)
    assert mdp.done[10, 10, 1] and not mdp.done[10, 9, 1]
    assert mdp.reward[60, 40, 0] == 1.0 and mdp.done[60, 40, 0]
    assert mdp.prob[30, 0, 0] == 1.0 and mdp.next_state[30, 0, 0] == 30  # stake 0


@pytest.mark.parametrize("n_states, left", [(5, 0.0), (19, -1.0)])
def test_random_walk_true_values(n_states, left):
    mdp = make_model("tabzoo/RandomWalk-v0", n_states=n_states, left_reward=left)
    assert (mdp.n_states, mdp.n_actions) == (n_states + 2, 1)
    v = evaluate(mdp, np.ones((n_states + 2, 1)), 1.0)
    k = np.arange(1, n_states + 1)
    np.testing.assert_allclose(v[1:-1], left + (1.0 - left) * k / (n_states + 1), atol=1e-12)
    assert mdp.start[(n_states + 1) // 2] == 1.0
    assert mdp.state_labels[1] == "A"


def test_maximization_bias_gaussian_rewards_are_the_books():
    """The default, ``rewards="gaussian"`` (Example 6.7 as the book states it): one outcome
    per action, B pays mean -0.1 with sd 1 (a planner reads the mean: going left is
    worth -0.1, as with the two-point rewards); the env draws them: 20,000 draws have
    mean -0.1 and sd 1 to 5 standard errors."""
    mdp = envs.MaximizationBias().to_mdp()
    assert mdp.reward_sd is not None and envs.MaximizationBias().rewards == "gaussian"
    two_point = envs.MaximizationBias(rewards="two_point").to_mdp()
    assert mdp.n_outcomes == 1 and (mdp.reward[1] == -0.1).all() and (mdp.reward_sd[1] == 1).all()
    np.testing.assert_allclose(mdp.expected_reward(), two_point.expected_reward(), atol=1e-15)
    env = gym.make("tabzoo/MaximizationBias-v0")
    env.reset(seed=1)
    n, draws = 20_000, []
    while len(draws) < n:
        env.reset()
        if env.step(0)[2]:  # left from A never ends the episode
            continue
        draws.append(env.step(1)[1])
    assert np.mean(draws) == pytest.approx(-0.1, abs=5 / np.sqrt(n))
    assert np.std(draws) == pytest.approx(1.0, abs=5 / np.sqrt(2 * n))


def test_short_corridor_best_shared_policy():
    mdp = make_model("tabzoo/ShortCorridor-v0")
    p_right = np.linspace(0.01, 0.99, 981)
    values = [evaluate(mdp, np.tile([1 - p, p], (4, 1)), 1.0)[0] for p in p_right]
    best = int(np.argmax(values))
    assert p_right[best] == pytest.approx(2 - np.sqrt(2), abs=0.001)  # grid step 0.001
    assert values[best] == pytest.approx(-11.657, abs=0.001)  # Figure 13.1: about -11.6
    assert mdp.next_state[1, 0, 0] == 2 and mdp.next_state[1, 1, 0] == 0  # reversed


# --------------------------------------------------------- trap / treasure
def test_trap_treasure_conventions():
    env = gym.make("tabzoo/TrapTreasure-v0").unwrapped
    mdp = env.to_mdp()
    assert mdp.action_names == ("U", "R", "D", "L")
    s = env.left_of_trap
    i, j = env.cell_of(s)
    assert env.state_of(i, j) == s
    right = int(mdp.next_state[s, 1, 0])
    assert env.cell_of(right) == (i + 1, j)  # R: (i, j) -> (i + 1, j)
    assert mdp.reward[s, 1, 0] == -np.inf and mdp.done[s, 1, 0]
    assert env.cell_of(int(mdp.next_state[s, 0, 0])) == (i, j - 1)  # U: (i, j - 1)
    assert env.cell_of(int(mdp.next_state[s, 2, 0])) == (i, j + 1)  # D: (i, j + 1)
    assert env.cell_of(int(mdp.next_state[s, 3, 0])) == (i - 1, j)  # L: (i - 1, j)
    assert mdp.state_labels[s] == f"({i}, {j})"
    assert env.cell_of(int(np.flatnonzero(mdp.start)[0])) == (1, 1)
    # the left-of-trap cell is reachable, and the treasure is worth reaching
    v = optimal_values(mdp, 0.9, sweeps=300)
    assert np.isfinite(v[s]) and v[s] > 0
    finite = gym.make("tabzoo/TrapTreasure-v0", trap_reward=-10.0).unwrapped.to_mdp()
    assert finite.reward[s, 1, 0] == -10.0


def test_trap_treasure_cells_outside_or_on_walls_raise():
    env = TrapTreasure()
    with pytest.raises(ValueError, match="outside"):
        env.state_of(6, 1)
    with pytest.raises(ValueError, match="wall"):
        env.state_of(2, 2)


# ------------------------------------------------------------------ replay
def replay(env, mdp, steps, seed):
    """Random actions through the real env (among those its ``info["action_mask"]``
    allows, when it has one); every transition must be one of the model's (its reward
    exactly, where the outcome has no reward noise)."""
    rng = np.random.default_rng(seed)
    s, info = env.reset(seed=seed)
    assert mdp.start[s] > 0
    for _ in range(steps):
        allowed = np.flatnonzero(info.get("action_mask", np.ones(mdp.n_actions, dtype=bool)))
        a = int(rng.choice(allowed))
        nxt, r, terminated, truncated, info = env.step(a)
        # an outcome with Gaussian reward noise (reward_sd > 0) may pay any reward
        noisy = mdp.reward_sd[s, a] > 0 if mdp.reward_sd is not None else False
        match = ((mdp.prob[s, a] > 0) & (mdp.next_state[s, a] == nxt)
                 & ((mdp.reward[s, a] == r) | noisy) & (mdp.done[s, a] == terminated))
        assert match.any(), f"{env.spec.id}: ({s}, {a}) -> ({nxt}, {r}, {terminated}) not in model"
        s = nxt
        if terminated or truncated:
            s, info = env.reset()
            assert mdp.start[s] > 0


GYMNASIUM_ENVS = [("FrozenLake-v1", {"map_name": "4x4", "is_slippery": True}),
                  ("FrozenLake-v1", {"map_name": "4x4", "is_slippery": False}),
                  ("FrozenLake-v1", {"map_name": "8x8", "is_slippery": True}),
                  ("FrozenLake-v1", {"map_name": "8x8", "is_slippery": False}),
                  ("CliffWalking-v1", {}),
                  ("Taxi-v4", {})]
OWN_IDS = [f"tabzoo/{name}" for name in envs.registration.BUILTINS]
TABULAR_IDS = sorted(k for k in gym.registry if k.startswith("tabzoo/"))


@pytest.mark.parametrize("env_id, kwargs", GYMNASIUM_ENVS + [(k, {}) for k in OWN_IDS])
def test_replay_real_env_against_model(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    replay(env, TabularMDP.from_gymnasium(env), steps=3000, seed=7)


@pytest.mark.parametrize("env_id, kwargs", GYMNASIUM_ENVS + [(k, {}) for k in OWN_IDS])
def test_model_probabilities_equal_gymnasium_P(env_id, kwargs):
    """Gymnasium's ``P`` tables read into models, and our envs' ``P`` (toy-text's
    format, derived from the model) read back into the same model."""
    env = gym.make(env_id, **kwargs)
    mdp = TabularMDP.from_gymnasium(env)
    P = env.unwrapped.P
    states = range(mdp.n_states)
    if mdp.prob.size > 100_000:  # a dense model (car rental): a sample of its states
        states = np.random.default_rng(0).choice(mdp.n_states, 25, replace=False)
    for s in states:
        for a in range(mdp.n_actions):
            expected = {}
            for p, nxt, r, term in P[s][a]:
                key = (int(nxt), float(r), bool(term))
                expected[key] = expected.get(key, 0.0) + p
            got = {}
            for k in np.flatnonzero(mdp.prob[s, a] > 0):
                key = (int(mdp.next_state[s, a, k]), float(mdp.reward[s, a, k]),
                       bool(mdp.done[s, a, k]))
                got[key] = got.get(key, 0.0) + mdp.prob[s, a, k]
            assert got.keys() == expected.keys(), (s, a)
            for key, p in expected.items():
                assert got[key] == pytest.approx(p, abs=1e-12), (s, a, key)
    np.testing.assert_allclose(mdp.start, env.unwrapped.initial_state_distrib)


def test_replay_slippery_windy_gridworld_with_cliff_and_teleport():
    """A user gridworld using every option at once, replayed through gymnasium.make."""
    envs.register_gridworld("tabzoo/TestEverything-v0", "S.#.a\n..A.G\nCC.T.",
                            slip=0.3, wind=[0, 1, -1, 2, 0], step_reward=-1, bump_reward=-2,
                            teleports={"A": ("a", 3.0)}, cell_rewards={(0, 1): 0.5},
                            max_episode_steps=50)
    try:
        env = gym.make("tabzoo/TestEverything-v0")
        mdp = env.unwrapped.to_mdp()
        assert mdp.n_outcomes == 3
        replay(env, mdp, steps=4000, seed=3)
    finally:
        del gym.registry["tabzoo/TestEverything-v0"]


# ------------------------------------------------------------- env checker
@pytest.mark.parametrize("env_id", TABULAR_IDS)
def test_every_registered_tabular_env_passes_env_checker(env_id):
    env = gym.make(env_id)
    check_env(env.unwrapped)
    assert TabularMDP.from_gymnasium(env).n_states == env.observation_space.n
    for mode in env.unwrapped.metadata.get("render_modes", []):
        check_env(gym.make(env_id, render_mode=mode).unwrapped, skip_render_check=False)


def test_user_registered_gridworld_passes_env_checker(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("S..\n.#.\n..G\n")
    envs.register_gridworld("tabzoo/Mine-v0", str(path), step_reward=-1.0, slip=0.1)
    try:
        env = gym.make("tabzoo/Mine-v0")
        check_env(env.unwrapped)
        assert env.unwrapped.to_mdp().n_states == 8
        for mode in ("ansi", "rgb_array"):
            check_env(gym.make("tabzoo/Mine-v0", render_mode=mode).unwrapped,
                      skip_render_check=False)
    finally:
        del gym.registry["tabzoo/Mine-v0"]


def test_namespace_is_ours():
    for env_id in TABULAR_IDS:
        assert not str(gym.registry[env_id].entry_point).startswith("gymnasium.")
    assert str(gym.registry["tabular/Blackjack-v0"].entry_point).startswith("gymnasium.")
    assert set(OWN_IDS) <= set(TABULAR_IDS)


def test_reset_seed_reproduces_episode():
    def episode(seed):
        env = gym.make("tabzoo/Gambler-v0")
        s, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        out = [s]
        for _ in range(50):
            s, r, term, trunc, _ = env.step(env.action_space.sample())
            out.append((s, r, term))
            if term:
                break
        return out
    assert episode(5) == episode(5)
    assert episode(5) != episode(6)


def test_ansi_render_of_a_non_grid_env_names_state_and_action():
    env = gym.make("tabzoo/RandomWalk-v0", render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == "state 3 (C)\n"
    s, *_ = env.step(0)
    assert env.render() == f"state {s} ({'BD'[s > 3]}) after action 0 (walk)\n"


def test_env_steps_draw_outcomes_with_the_model_probabilities():
    env = GridWorld("S..\n...\n..G", slip=0.5)
    mdp = env.to_mdp()
    n = 20_000
    counts = {}
    env.reset(seed=11)
    for _ in range(n):
        env.reset()
        s, *_ = env.step(1)  # right from (0, 0): right 0.5, up (bump) 0.25, down 0.25
        counts[env.cell_of_state(s)] = counts.get(env.cell_of_state(s), 0) + 1
    assert counts.keys() == {(0, 1), (0, 0), (1, 0)}
    expected = {(0, 1): 0.5, (0, 0): 0.25, (1, 0): 0.25}
    for cell, p in expected.items():  # 5 sigma of a binomial proportion
        assert counts[cell] / n == pytest.approx(p, abs=5 * np.sqrt(p * (1 - p) / n))
    assert mdp.prob[0, 1].sum() == pytest.approx(1.0)


def test_draw_outcome_never_selects_padding():
    prob = np.array([0.0, 0.3, 0.0, 0.7 - 1e-12, 0.0])
    cumulative = np.cumsum(prob)
    assert draw_outcome(cumulative, prob, 0.0) == 1
    assert draw_outcome(cumulative, prob, 0.3) == 3
    assert draw_outcome(cumulative, prob, 1.0 - 2**-53) == 3  # u above the last sum


# ------------------------------------------------------------- Gymnasium citizenship
def run_fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter (from the repository root) and return stdout."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_fresh_interpreter_makes_every_env_importing_only_gymnasium():
    out = run_fresh(
        "import sys, gymnasium as gym\n"
        f"ids = {OWN_IDS!r}\n"
        "for env_id in ids:\n"
        "    env = gym.make('tabular.envs:' + env_id)\n"
        "    env.reset(seed=0)\n"
        "    assert env.spec.max_episode_steps, env_id\n"
        "print(len(ids), 'tabular.envs' in sys.modules)\n")
    assert out.split() == [str(len(OWN_IDS)), "True"]


def test_gymnasium_registrations_are_unchanged_by_importing_the_project():
    code = ("import gymnasium as gym\n"
            "before = {k: str(v.entry_point) for k, v in gym.registry.items()}\n"
            "import tabular.envs, tabular.experiments.harness.cli\n"
            "after = {k: str(v.entry_point) for k, v in gym.registry.items()}\n"
            "changed = [k for k in before if after.get(k) != before[k]]\n"
            "added = sorted(set(after) - set(before))\n"
            "print(changed, all(k.split('/')[0] in ('tabzoo', 'tabular') for k in added))\n"
            "print(before['tabular/CliffWalking-v0'])\n")
    changes, gymnasium_entry = run_fresh(code).splitlines()
    assert changes == "[] True"  # nothing of Gymnasium's changed; ours in our namespaces
    assert gymnasium_entry.startswith("gymnasium.envs.tabular")


def test_an_old_id_names_its_new_one():
    with pytest.raises(envs.registration.RenamedEnvError, match="tabzoo/TrapTreasure-v0"):
        gym.make("tabular/TrapTreasure-v0")


@pytest.mark.parametrize("env_id", OWN_IDS)
def test_every_env_declares_a_time_limit(env_id):
    limit = gym.spec(env_id).max_episode_steps
    assert isinstance(limit, int) and limit >= 100
    assert TabularMDP.from_gymnasium(gym.make(env_id)).max_episode_steps == limit


def test_a_learner_respects_the_env_time_limit():
    from tabular import mc_control, q_learning, reinforce

    taxi = gym.make("Taxi-v4")
    assert taxi.spec.max_episode_steps == 200
    for result in (q_learning(taxi, episodes=200, epsilon=0.5),
                   mc_control(taxi, episodes=50, epsilon=0.5),
                   reinforce(taxi, episodes=50)):
        assert result.episode_lengths.max() <= 200
    assert q_learning(taxi, episodes=50, epsilon=1.0, max_steps=300).episode_lengths.max() > 200


def test_access_control_model_is_example_10_2():
    """Each row is a distribution; accepting with f free servers pays the priority and
    leaves f - 1 free plus the busy servers that free up, binomially with p = 0.06, so the
    expected next free count is f - 1 + (n - f + 1) p; with no free server accepting is
    rejecting; the optimal policy always accepts priority 8 and rejects priority 1 when
    few servers are free (Figure 10.5)."""
    env = gym.make("tabzoo/AccessControl-v0").unwrapped
    mdp = env.to_mdp()
    n, m = 10, 4
    assert mdp.n_states == m * (n + 1) and not mdp.done.any()
    np.testing.assert_allclose(mdp.prob.sum(axis=2), 1.0, atol=1e-12)
    free = np.repeat(np.arange(n + 1), m)
    expected_free = (mdp.prob * (mdp.next_state // m)).sum(axis=2)
    left = free - (free > 0)
    np.testing.assert_allclose(expected_free[:, 1], left + (n - left) * 0.06, atol=1e-12)
    np.testing.assert_allclose(expected_free[:, 0], free + (n - free) * 0.06, atol=1e-12)
    priority = np.tile([1.0, 2.0, 4.0, 8.0], n + 1)
    pays = np.where(free > 0, priority, 0.0)[:, None]  # every outcome pays the same
    np.testing.assert_array_equal(np.where(mdp.prob[:, 1] > 0, mdp.reward[:, 1], pays),
                                  np.broadcast_to(pays, mdp.prob[:, 1].shape))
    assert not mdp.reward[:, 0].any()
    policy = relative_value_iteration(mdp).policy.reshape(n + 1, m)
    assert (policy[1:, 3] == 1).all() and (policy[1:3, 0] == 0).all()


@settings(max_examples=25, deadline=None)
@given(positions=st.integers(2, 60), half=st.integers(1, 30))
def test_mountain_car_lands_where_the_dynamics_say_on_average(positions, half):
    """Every outcome's bilinear weights put the expected grid point at the exact landing
    point of section 10.1's dynamics (to rounding), the goal's outcome ends the episode
    with -1, and the start is velocity 0 with the positions of [-0.6, -0.4)."""
    env = envs.MountainCar(positions, 2 * half + 1)
    mdp = env.model()
    xs, vs = env.grid()
    x, v = np.tile(xs, vs.size)[:, None], np.repeat(vs, xs.size)[:, None]
    v_next = np.clip(v + 0.001 * (np.arange(3) - 1.0) - 0.0025 * np.cos(3.0 * x), -0.07, 0.07)
    x_next = np.clip(x + v_next, -1.2, 0.5)
    v_next[x_next == -1.2] = 0.0
    goal = x_next >= 0.5
    assert (mdp.done.any(axis=2) == goal).all() and (mdp.reward == -1.0).all()
    landed_x = (mdp.prob * xs[mdp.next_state % xs.size]).sum(axis=2)
    landed_v = (mdp.prob * vs[mdp.next_state // xs.size]).sum(axis=2)
    np.testing.assert_allclose(landed_x[~goal], x_next[~goal], atol=1e-12)
    np.testing.assert_allclose(landed_v[~goal], v_next[~goal], atol=1e-12)
    begins = np.flatnonzero(mdp.start)
    assert np.isclose(mdp.start.sum(), 1.0) and (vs[begins // xs.size] == 0.0).all()
    inside = (xs[begins % xs.size] >= -0.6) & (xs[begins % xs.size] < -0.4)
    assert inside.all() or begins.size == 1  # a grid coarser than the interval: its midpoint
