"""GridWorld layouts: the vectorised model against a cell-by-cell reference, layout
errors, coordinates and rendering."""

import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabular.envs import GridWorld
from tabular.envs.gridworld import AGENT_COLOUR, COLOURS
from tabular.envs.layout import CLIFF, GOAL, START, TRAP, WALL, available_layouts
from tabular.testing import layouts

MOVES = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}


# ------------------------------------------------------- reference model
def reference_outcomes(rows, *, slip=0.0, wind=None, step_reward=0.0, bump_reward=None,
                       goal_reward=1.0, trap_reward=-math.inf, cliff_reward=-100.0,
                       cell_rewards=None, teleports=None):
    """``{(row, col, a): {(row', col', reward, done): prob}}`` computed one cell at a
    time, straight from the rules in the GridWorld docstring."""
    H, W = len(rows), len(rows[0])
    wind = wind or [0] * W
    cell_rewards = cell_rewards or {}
    teleports = teleports or {}
    starts = [(r, c) for r in range(H) for c in range(W) if rows[r][c] == "S"]
    landing = {"G": goal_reward, "T": trap_reward, "C": cliff_reward}

    def landing_reward(r, c):
        if (r, c) in cell_rewards:
            return cell_rewards[(r, c)]
        return cell_rewards.get(rows[r][c], landing.get(rows[r][c]))

    def free(r, c):
        return 0 <= r < H and 0 <= c < W and rows[r][c] != "#"

    def find(ch):
        return next((r, c) for r in range(H) for c in range(W) if rows[r][c] == ch)

    table = {}
    for r0 in range(H):
        for c0 in range(W):
            if rows[r0][c0] == "#":
                continue
            for a in range(4):
                out = {}

                def add(key, p, out=out):
                    out[key] = out.get(key, 0.0) + p

                ch = rows[r0][c0]
                if ch in "GT":
                    add((r0, c0, 0.0, True), 1.0)
                elif ch in teleports:
                    target, reward = teleports[ch]
                    tr, tc = find(target)
                    add((tr, tc, reward, rows[tr][tc] in "GT"), 1.0)
                else:
                    for turn, p in ((0, 1.0 - slip), (1, slip / 2), (3, slip / 2)):
                        if p == 0.0:
                            continue
                        dr, dc = MOVES[(a + turn) % 4]
                        r, c = r0 + dr, c0 + dc
                        bumped = not free(r, c)
                        if bumped:
                            r, c = r0, c0
                        push = wind[c0]
                        for _ in range(abs(push)):
                            if not free(r - np.sign(push), c):
                                break
                            r -= np.sign(push)
                        lr = landing_reward(r, c)
                        if rows[r][c] == "C":
                            for sr, sc in starts:
                                add((sr, sc, lr, False), p / len(starts))
                            continue
                        if (r, c) != (r0, c0) and lr is not None:
                            reward = lr
                        elif bumped and bump_reward is not None:
                            reward = bump_reward
                        else:
                            reward = step_reward
                        add((int(r), int(c), reward, rows[r][c] in "GT"), p)
                table[(r0, c0, a)] = out
    return table


def model_outcomes(env):
    mdp = env.to_mdp()
    table = {}
    for s in range(mdp.n_states):
        r0, c0 = env.cell_of_state(s)
        for a in range(4):
            out = {}
            for k in np.flatnonzero(mdp.prob[s, a] > 0):
                r, c = env.cell_of_state(int(mdp.next_state[s, a, k]))
                key = (r, c, float(mdp.reward[s, a, k]), bool(mdp.done[s, a, k]))
                out[key] = out.get(key, 0.0) + mdp.prob[s, a, k]
            table[(r0, c0, a)] = out
    return table


def assert_same_outcomes(got, expected):
    assert got.keys() == expected.keys()
    for key, outcomes in expected.items():
        assert got[key].keys() == outcomes.keys(), key
        for outcome, p in outcomes.items():
            assert got[key][outcome] == pytest.approx(p, abs=1e-12), (key, outcome)


@settings(max_examples=150, deadline=None)
@given(layouts(), st.integers(0, 2**16))
def test_random_layouts_match_reference_and_stepping(world, seed):
    layout, options = world
    rows = layout.split("\n")
    env = GridWorld(layout, **options)
    mdp = env.to_mdp()  # TabularMDP validates probabilities, indices, start
    assert mdp.n_states == sum(ch != "#" for row in rows for ch in row)
    assert_same_outcomes(model_outcomes(env), reference_outcomes(rows, **options))
    s, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(30):  # the env only takes transitions the model has
        a = int(rng.integers(4))
        nxt, r, term, _, info = env.step(a)
        match = ((mdp.prob[s, a] > 0) & (mdp.next_state[s, a] == nxt)
                 & (mdp.reward[s, a] == r) & (mdp.done[s, a] == term))
        assert match.any()
        s = env.reset()[0] if term else nxt


# ----------------------------------------------------------- bad layouts
@st.composite
def bad_layouts(draw):
    """``(layout, options, words the error must contain)`` for an invalid gridworld."""
    H, W = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    rows = [list(draw(st.text(".#GTC", min_size=W, max_size=W))) for _ in range(H)]
    sr, sc = draw(st.integers(0, H - 1)), draw(st.integers(0, W - 1))
    rows[sr][sc] = "S"
    kind = draw(st.sampled_from(["ragged", "no start", "unknown", "wind length",
                                 "wind value", "slip", "teleport wall", "reward"]))
    options, words = {}, []
    r = draw(st.integers(0, H - 1))
    if kind == "ragged":
        rows[r] = rows[r] + ["."] * draw(st.integers(1, 3))
        if H == 1:
            rows.append(["."] * W)
        words = ["row", "cells"]
    elif kind == "no start":
        rows[sr][sc] = "."
        words = ["start"]
    elif kind == "unknown":
        c = draw(st.integers(0, W - 1))
        rows[r][c] = draw(st.sampled_from("xyz@!?%0,~"))
        words = [f"row {r}, column {c}"]
    elif kind == "wind length":
        options["wind"] = [0] * draw(st.integers(0, 6).filter(lambda n: n != W))
        words = ["wind"]
    elif kind == "wind value":
        options["wind"] = [0.5] + [0] * (W - 1)
        words = ["wind[0]"]
    elif kind == "slip":
        options["slip"] = draw(st.sampled_from([-0.1, 1.5, math.nan, math.inf]))
        words = ["slip"]
    elif kind == "teleport wall":
        rows.append(["A"] + ["#"] * (W - 1))
        rows.append(["#"] * W)
        options["teleports"] = {"A": ((len(rows) - 1, 0), 1.0)}
        words = ["teleports", "wall"]
    else:
        options[draw(st.sampled_from(["step_reward", "goal_reward", "cliff_reward"]))] = \
            draw(st.sampled_from([math.nan, math.inf, -math.inf]))
        words = ["reward"]
    return "\n".join("".join(row) for row in rows), options, words


@settings(max_examples=150, deadline=None)
@given(bad_layouts())
def test_invalid_layouts_raise_value_error_naming_the_place(case):
    layout, options, words = case
    with pytest.raises(ValueError) as err:
        GridWorld(layout, **options)
    for word in words:
        assert word in str(err.value)


@pytest.mark.parametrize("layout, options, message", [
    ("S.\n...", {}, "layout row 1 has 3 cells, row 0 has 2"),
    ("S.\n.x", {}, "layout row 1, column 1: unknown character 'x'"),
    ("..\n.G", {}, "no start cell 'S'"),
    ("", {}, "layout is empty"),
    ("S.\n\n..", {}, "layout row 1 is empty"),
    ("S.A", {"teleports": {"A": ("b", 1.0)}}, "teleports['A']: target 'b' must appear"),
    ("S#A", {"teleports": {"A": ((0, 1), 1.0)}}, "column 1) is a wall"),
    ("S.A", {"teleports": {"A": ((3, 0), 1.0)}}, "outside the 1x3 layout"),
    ("S.A", {"teleports": {"A": "a"}}, "must be (target, reward)"),
    ("S..", {"teleports": {"G": ("a", 1.0)}}, "outside the legend"),
    ("S..", {"cell_rewards": {(0, 5): 1.0}}, "cell_rewards[(0, 5)]"),
    ("S.#", {"cell_rewards": {(0, 2): 1.0}}, "is a wall"),
    ("S..", {"cell_rewards": {(0, 1): math.nan}}, "cell_rewards[(0, 1)] must be"),
    ("S..", {"wind": [0, 1]}, "the layout has 3 columns"),
    ("S..", {"wind": [0, 1, 1.5]}, "wind[2] = 1.5 (column 2)"),
    ("S..", {"slip": 2.0}, "slip must be in [0, 1]"),
    ("S..", {"bump_reward": "x"}, "bump_reward must be a number"),
    ("nosuchlayout", {}, "no layout file named 'nosuchlayout'"),
    ("nosuch.txt", {}, "layout file 'nosuch.txt' not found"),
])
def test_layout_errors_name_the_row_column_or_option(layout, options, message):
    with pytest.raises(ValueError) as err:
        GridWorld(layout, **options)
    assert message in str(err.value)


# ------------------------------------------------------------ semantics
def test_slip_wind_cliff_and_teleport_by_hand():
    env = GridWorld("S..\n.A.\nC.G", slip=0.2, wind=[1, 0, 0], step_reward=-1.0,
                    teleports={"A": ((0, 2), 5.0)})
    mdp = env.to_mdp()
    s = env.state_of_cell(1, 0)
    # down from (1, 0), with the wind of column 0 (1 up) after every move: down (0.8)
    # reaches the cliff (2, 0) but is blown back to (1, 0), and only the final cell
    # counts; the slip to the right (0.1) reaches A and is blown to (0, 1); the slip
    # to the left (0.1) bumps into the edge and is blown to (0, 0)
    got = {(env.cell_of_state(int(n)), float(r)): p
           for n, r, p in zip(mdp.next_state[s, 2], mdp.reward[s, 2], mdp.prob[s, 2],
                              strict=True) if p > 0}
    assert got == {((1, 0), -1.0): pytest.approx(0.8), ((0, 1), -1.0): pytest.approx(0.1),
                   ((0, 0), -1.0): pytest.approx(0.1)}
    a = env.state_of_cell(1, 1)
    assert (mdp.next_state[a, :, 0] == env.state_of_cell(0, 2)).all()
    assert (mdp.reward[a, :, 0] == 5.0).all() and (mdp.prob[a, :, 0] == 1.0).all()
    below = env.state_of_cell(2, 1)
    assert mdp.next_state[below, 3, 0] == env.state_of_cell(0, 0)  # left into the cliff
    assert mdp.reward[below, 3, 0] == -100.0 and not mdp.done[below, 3, 0]
    goal = env.state_of_cell(2, 2)
    assert (mdp.next_state[goal] == goal).all() and (mdp.prob[goal, :, 0] == 1).all()
    assert mdp.done[goal, :, 0].all() and (mdp.reward[goal] == 0).all()


def test_wind_stronger_than_the_grid_is_clipped_not_looped():
    strong = GridWorld("...\nS.G", wind=[0, 1e300, -(10**12)]).to_mdp()
    weak = GridWorld("...\nS.G", wind=[0, 2, -2]).to_mdp()
    np.testing.assert_array_equal(strong.next_state, weak.next_state)


def test_coordinates_round_trip_and_metadata():
    env = GridWorld("S.#\n#.G")
    mdp = env.to_mdp()
    assert mdp.grid_shape == (2, 3)
    np.testing.assert_array_equal(mdp.state_cells, [[0, 0], [0, 1], [1, 1], [1, 2]])
    assert mdp.state_cells.dtype == np.int64
    assert mdp.action_names == ("up", "right", "down", "left")
    assert mdp.state_labels[2] == "(1, 1)"
    for s in range(mdp.n_states):
        assert env.state_of_cell(*env.cell_of_state(s)) == s
    with pytest.raises(ValueError, match="wall"):
        env.state_of_cell(0, 2)
    with pytest.raises(ValueError, match="outside"):
        env.state_of_cell(2, 0)
    with pytest.raises(ValueError, match="outside"):
        env.cell_of_state(4)


def test_layout_sources_text_rows_name_and_path(tmp_path):
    text = "S..\n.#.\n..G"
    path = tmp_path / "small.txt"
    path.write_text("\n  S..\n  .#.\n  ..G\n\n")
    models = [GridWorld(x).to_mdp() for x in (text, text.split("\n"), str(path), path)]
    for mdp in models[1:]:
        np.testing.assert_array_equal(mdp.next_state, models[0].next_state)
    assert {"trap_treasure", "cliff_walking", "windy_gridworld"} <= set(available_layouts())
    assert GridWorld("cliff_walking").to_mdp().grid_shape == (4, 12)


def test_large_open_layout_model_is_right():
    n = 300
    env = GridWorld("S" + "." * (n - 1) + "\n" + ("." * n + "\n") * (n - 2) + "." * (n - 1) + "G")
    mdp = env.to_mdp()
    assert (mdp.n_states, mdp.n_outcomes) == (n * n, 1)
    s = np.arange(n * n)
    up = np.where(s >= n, s - n, s)
    up[-1] = n * n - 1  # the goal is absorbing
    np.testing.assert_array_equal(mdp.next_state[:, 0, 0], up)
    assert mdp.done[:-1, 1, 0].sum() == 1 and mdp.done[-1, :, 0].all()
    assert mdp.reward.sum() == 2.0  # right and down into the goal


# ------------------------------------------------------------------ render
def test_rgb_render_colours_cells_and_agent():
    env = gym.make("tabzoo/TrapTreasure-v0", render_mode="rgb_array").unwrapped
    env.reset(seed=0)
    image = env.render()
    H, W = env.grid_shape
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    px = image.shape[0] // H
    assert image.shape[:2] == (H * px, W * px) and px >= 6

    def centre(r, c):
        return tuple(image[r * px + px // 2, c * px + px // 2])

    def corner(r, c):
        return tuple(image[r * px + 1, c * px + 1])

    for kind in (WALL, GOAL, TRAP):
        r, c = np.argwhere(env.kinds == kind)[0]
        assert centre(r, c) == COLOURS[kind]
    r, c = env.cell_of_state(env.s)
    assert centre(r, c) == AGENT_COLOUR and corner(r, c) == COLOURS[START]
    env.step(2)  # down: the agent moves, the start cell gets its colour back
    image = env.render()
    assert centre(r, c) == COLOURS[START] and centre(r + 1, c) == AGENT_COLOUR
    cliff = GridWorld("SCG", render_mode="rgb_array").render()
    assert tuple(cliff[cliff.shape[0] // 2, cliff.shape[1] // 2]) == COLOURS[CLIFF]


def test_ansi_render_shows_layout_and_agent():
    env = GridWorld("S.#\n..G", render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == "@.#\n..G\n"
    env.step(2)
    assert env.render() == "(down)\nS.#\n@.G\n"
