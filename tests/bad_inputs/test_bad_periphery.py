"""Random bad inputs to the periphery: every plot helper and hypothesis strategy, given a
wrong value of the wrong kind for one of its parameters, raises a ValueError or TypeError
that names that parameter, and draws nothing that warns."""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import TabularMDP, plot, testing

NAN, INF = math.nan, math.inf
GRID = TabularMDP.from_gymnasium(gym.make("tabzoo/Gridworld4x4-v0"))
S = GRID.n_states
RNG = np.random.default_rng(0)

#: Wrong values by the kind of parameter they are wrong for.
BAD = {
    "count": [0, -1, 2.5, "3", True, None, NAN, INF, 10**12],
    "positive": [0.0, -1.0, NAN, INF, "1", True, None, 1 + 1j],
    "finite": [NAN, INF, -INF, "1", True, None, 1j],
    "bound": [NAN, INF, -INF, "1", True, 1j],  # None is valid: no bound
    "rate": [-0.1, 1.5, NAN, "0.5", True, None],
    "nonnegative": [-1e-9, NAN, INF, "0", True, None],
    "flag": ["yes", "False", 1, 0, None, 1.0],
    "text": [5, 1.0, True, ["a"]],
    "values": ["abc", [True, False], [[1.0, 2.0], [3.0]], [1j, 2j], None],
    # per-episode numbers [T] or [runs, T]: none, or a third axis, is not a curve
    "curve": [np.zeros(0), np.zeros((2, 0)), np.zeros((2, 2, 2)), [True, 1.0],
              [np.complex128(1.0)], "abc"],
}


def axes():
    return plot.figure()[1][0, 0]


#: ``(function, valid keyword arguments, {parameter: kind})``: each call is valid as it
#: stands, and wrong once one parameter takes a value of BAD[kind].
CALLS = [
    (plot.figure, {}, {"ncols": "count", "nrows": "count", "width": "positive",
                       "height": "positive", "title": "text"}),
    (plot.heatmap, {"ax": None, "image": np.zeros((2, 3))},
     {"image": "values", "annotate": "flag", "vmin": "bound", "colorbar_label": "text"}),
    (plot.grid_image, {"values": [1.0], "cells": [[0, 0]], "shape": (2, 2)},
     {"values": "values", "shape": "values"}),
    (plot.grid_axes, {"ax": None, "shape": (2, 2)}, {"title": "text", "shape": "count"}),
    (plot.best_actions, {"policy": np.zeros(3, dtype=int), "n_actions": 2},
     {"n_actions": "count", "tol": "nonnegative", "policy": "values"}),
    (plot.value_map, {"mdp": GRID, "V": np.zeros(S), "Q": np.zeros((S, 4))},
     {"V": "values", "Q": "values", "tol": "nonnegative", "title": "text"}),
    (plot.mean_band, {"ax": None, "x": None, "runs": np.ones((3, 5))},
     {"runs": "values", "smooth": "count", "band_alpha": "rate", "label": "text"}),
    (plot.learning_curve, {"result": np.ones((3, 5))},
     {"smooth": "count", "label": "text", "result": "curve"}),
    (plot.frontier, {"kl": [0.0, 1.0], "reward": [0.0, 1.0]},
     {"kl": "values", "reward": "values", "label": "text"}),
    (plot.draw_path, {"ax": None, "cells": [[0, 0], [0, 1]], "color": "red"},
     {"cells": "values", "offset": "finite", "label": "text"}),
    (plot.greedy_path, {"mdp": GRID, "policy": np.zeros(S, dtype=int)},
     {"max_steps": "count", "policy": "values"}),
    (testing.property_settings, {"max_examples": 5}, {"max_examples": "count"}),
    (testing.gammas, {}, {"max_gamma": "rate"}),
    (testing.random_policy, {"rng": RNG, "S": 3, "A": 2},
     {"S": "count", "A": "count", "zero_rate": "rate"}),
    (testing.random_mdp, {"rng": RNG, "S": 3, "A": 2, "K": 2},
     {"S": "count", "A": "count", "K": "count", "done_rate": "rate", "trap_rate": "rate",
      "reward_scale": "nonnegative"}),
    (testing.mdps, {}, {"max_states": "count", "max_actions": "count",
                        "max_outcomes": "count", "traps": "flag",
                        "reward_scale": "nonnegative"}),
    (testing.acyclic_mdps, {}, {"max_states": "count", "traps": "flag"}),
    (testing.policies, {"mdp": GRID}, {"zero_rate": "rate"}),
    (testing.layouts, {}, {"max_rows": "count", "max_cols": "count"}),
]

CASES = [(function, kwargs, name, kind) for function, kwargs, params in CALLS
         for name, kind in params.items()]


def call(function, kwargs):
    kwargs = {k: axes() if k == "ax" else v for k, v in kwargs.items()}
    return function(**kwargs)


@pytest.mark.parametrize("function, kwargs", [(f, k) for f, k, _ in CALLS],
                         ids=[f.__name__ for f, _, _ in CALLS])
def test_each_call_is_valid_as_it_stands(function, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call(function, kwargs)
    plt.close("all")


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(CASES), st.data())
def test_a_wrong_value_is_an_error_that_names_its_parameter(case, data):
    function, kwargs, name, kind = case
    bad = data.draw(st.sampled_from(BAD[kind]), label=f"{function.__name__}({name}=...)")
    with pytest.raises((ValueError, TypeError)) as info:
        call(function, {**kwargs, name: bad})
    plt.close("all")
    assert name in str(info.value), str(info.value)


def test_a_trap_episode_is_marked_and_the_finite_part_drawn_without_a_warning():
    runs = np.ones((3, 6))
    runs[1, 2] = -INF
    ax = axes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        line = plot.mean_band(ax, None, runs, "returns")
    mean = line.get_ydata()
    assert np.isnan(mean[2]) and np.isfinite(np.delete(mean, 2)).all()
    marks = [m for m in ax.get_lines() if m is not line]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [3]
    assert "-\\infty" in marks[0].get_label()
    plt.close("all")


def test_a_trap_value_is_blank_and_marked_on_a_value_map():
    V = np.zeros(S)
    V[5] = -INF
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = plot.value_map(GRID, V)
    assert sum(text.get_text() == "$-\\infty$" for text in ax.texts) == 1
    plt.close("all")
