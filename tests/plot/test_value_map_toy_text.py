"""``plot.value_map`` draws Gymnasium's own grid envs (FrozenLake, CliffWalking, Taxi)
from their own shape: ``TabularMDP.from_gymnasium`` reads the grid of the env."""

from __future__ import annotations

import gymnasium as gym
import matplotlib
import numpy as np
import pytest

from tabular import TabularMDP, value_iteration

matplotlib.use("Agg")
from tabular import plot  # noqa: E402

ENVS = {"FrozenLake-v1": ((8, 8), dict(map_name="8x8")), "CliffWalking-v1": ((4, 12), {}),
        "Taxi-v4": ((25, 20), {})}


@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_value_map_draws_toy_text_grids(env_id):
    shape, kwargs = ENVS[env_id]
    env = gym.make(env_id, **kwargs)
    mdp = TabularMDP.from_gymnasium(env)
    assert mdp.grid_shape == shape
    cells = mdp.state_cells
    assert len({tuple(c) for c in cells}) == mdp.n_states  # a cell per state
    best = value_iteration(mdp, gamma=0.9)
    ax = plot.value_map(mdp, best.V, Q=best.Q)
    image = ax.images[0].get_array()
    assert image.shape == shape
    s = mdp.n_states - 1
    assert image[tuple(cells[s])] == pytest.approx(best.V[s])
    matplotlib.pyplot.close("all")


def test_cells_follow_the_envs_own_numbering():
    lake = gym.make("FrozenLake-v1", map_name="8x8").unwrapped
    mdp = TabularMDP.from_gymnasium(lake)
    assert tuple(mdp.state_cells[lake.ncol + 3]) == (1, 3)  # row-major, as the env's desc
    taxi = gym.make("Taxi-v4").unwrapped
    mdp = TabularMDP.from_gymnasium(taxi)
    r, c, p, d = taxi.decode(123)
    assert tuple(mdp.state_cells[123]) == (p * 5 + r, d * 5 + c)
    assert mdp.action_names[4:] == ("pickup", "dropoff")
    assert np.asarray(mdp.state_cells).max(axis=0).tolist() == [24, 19]


def test_value_map_takes_the_env_itself():
    ax = plot.value_map(gym.make("FrozenLake-v1"), np.arange(16.0))
    assert ax.images[0].get_array().shape == (4, 4)
    assert ax.images[0].get_array()[1, 2] == 6.0
    matplotlib.pyplot.close("all")
