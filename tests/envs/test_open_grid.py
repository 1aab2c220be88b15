"""The open-grid generator builds exactly the model of the layout builder."""

from __future__ import annotations

import numpy as np
import pytest

from tabular.envs import GridWorld
from tabular.envs.open_grid import open_grid_mdp


@pytest.mark.parametrize(("height", "width", "step_reward", "goal_reward"),
                         [(1, 2, -1.0, 0.0), (3, 5, -1.0, 0.0), (4, 1, 0.0, 1.0),
                          (6, 7, -0.5, -0.5), (300, 3, -1.0, 10.0)])
def test_the_generator_builds_the_layout_builders_model(height, width, step_reward,
                                                        goal_reward):
    rows = ["." * width for _ in range(height)]
    rows[0] = "S" + rows[0][1:]
    rows[-1] = rows[-1][:-1] + "G"
    layout = GridWorld("\n".join(rows), step_reward=step_reward,
                       goal_reward=goal_reward).unwrapped.to_mdp()
    generated = open_grid_mdp(height, width, step_reward=step_reward,
                              goal_reward=goal_reward)
    for name in ("next_state", "prob", "reward", "done", "start"):
        np.testing.assert_array_equal(getattr(generated, name), getattr(layout, name))
    for stored, built in zip(generated.arrays, layout.arrays, strict=True):
        np.testing.assert_array_equal(stored, built)  # the same stored form, bit for bit
        assert stored.dtype == built.dtype
    assert generated.grid_shape == layout.grid_shape
    assert generated.action_names == layout.action_names


@pytest.mark.parametrize(("args", "message"), [((0, 3), "height must be an integer >= 1"),
                                               ((2, 2.5), "width must be an integer >= 1"),
                                               ((1, 1), "at least two cells")])
def test_the_generator_refuses_bad_sizes(args, message):
    with pytest.raises(ValueError, match=message):
        open_grid_mdp(*args)


def test_the_generator_refuses_a_non_finite_reward():
    with pytest.raises(ValueError, match="step_reward must be a finite number"):
        open_grid_mdp(2, 2, step_reward=np.nan)
