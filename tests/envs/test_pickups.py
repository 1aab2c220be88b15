"""One-time rewards: the pickup gridworld's model is the product of the cell model with
the collected set, its values are the brute-force optimum, and nothing can be farmed."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tabular import ConvergenceError, value_iteration
from tabular.envs import GridWorld, PickupGridWorld

CORRIDOR = "S.$.G"
TWO = """
S.$..
.#.#.
..$.G
"""


def test_state_count_is_cells_times_two_to_the_pickups():
    for layout, m in ((CORRIDOR, 1), (TWO, 2)):
        env = PickupGridWorld(layout, pickups={"$": 5.0}, step_reward=-1.0)
        cells = GridWorld(layout, cell_rewards={"$": -1.0}, step_reward=-1.0).to_mdp()
        assert env.to_mdp().n_states == cells.n_states * 2**m
        assert len(env.pickup_cells) == m


def test_value_iteration_collects_once_and_leaves():
    env = PickupGridWorld(CORRIDOR, pickups={"$": 5.0}, step_reward=-1.0, goal_reward=0.0)
    mdp = env.to_mdp()
    result = value_iteration(mdp, gamma=1.0)
    # -1 (step), -1 + 5 (pick up), -1 (step), 0 (goal): 2, and no more
    assert result.V[env.state_of_cell(0, 0)] == pytest.approx(2.0)
    # once collected the pickup is floor: -1, -1, -1, 0 from the start
    assert result.V[env.state_of_cell(0, 0, collected=1)] == pytest.approx(-3.0)
    farm = GridWorld(CORRIDOR, cell_rewards={"$": 4.0}, step_reward=-1.0, goal_reward=0.0)
    with pytest.raises(ConvergenceError):  # paid on every entry: walking in and out pays
        value_iteration(farm.to_mdp(), gamma=1.0, max_iter=2000)


def test_small_layout_collects_both_pickups_on_the_way():
    layout = "S$.\n.$G"
    env = PickupGridWorld(layout, pickups={"$": 3.0}, step_reward=-1.0, goal_reward=0.0)
    mdp = env.to_mdp()
    result = value_iteration(mdp, gamma=1.0)
    start = env.state_of_cell(0, 0)
    # routes: S -> $ (0,1) -> $ (1,1) -> G (1,2): -1+3, -1+3, 0 = 4; nothing beats it
    assert result.V[start] == pytest.approx(4.0)
    s, total = start, 0.0
    for _ in range(10):  # the greedy policy walks it
        a = int(result.policy[s])
        total += mdp.reward[s, a, 0]
        done = mdp.done[s, a, 0]
        s = int(mdp.next_state[s, a, 0])
        if done:
            break
    assert total == pytest.approx(4.0)


def test_env_steps_are_model_transitions_and_pickups_vanish():
    env = PickupGridWorld(TWO, pickups={"$": 5.0}, step_reward=-1.0, slip=0.2)
    mdp = env.to_mdp()
    rng = np.random.default_rng(0)
    s, _ = env.reset(seed=0)
    seen_collected = set()
    for _ in range(3000):
        a = int(rng.integers(4))
        nxt, r, terminated, _, _ = env.step(a)
        match = ((mdp.prob[s, a] > 0) & (mdp.next_state[s, a] == nxt)
                 & (mdp.reward[s, a] == r) & (mdp.done[s, a] == terminated))
        assert match.any()
        seen_collected.update(env.collected())
        s = env.reset()[0] if terminated else nxt
    assert seen_collected == set(env.pickup_cells)
    text = env.render_text()
    assert "$" not in text or len(env.collected()) < 2


@pytest.mark.parametrize("kwargs, message", [
    ({"pickups": {}}, "non-empty"),
    ({"pickups": {"$": float("nan")}}, "pickups['$']"),
    ({"pickups": {"$": 1.0}, "cell_rewards": {"$": 2.0}}, "also cell_rewards"),
    ({"pickups": {"G": 1.0}}, "outside the legend"),
])
def test_bad_pickups_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        PickupGridWorld(CORRIDOR, **kwargs)


def test_too_many_pickups_are_refused():
    with pytest.raises(ValueError, match="at most 12"):
        PickupGridWorld("S" + "$" * 13 + "G", pickups={"$": 1.0})
