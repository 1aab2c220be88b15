"""Figure 4.1: iterative policy evaluation of the random policy on the 4x4 gridworld (Ex. 4.1)."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    bellman_expectation,
    optimal_actions,
    policy_evaluation,
    q_from_v,
)
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check
from tabular.experiments.harness.settings import Settings

ENV_ID = "tabzoo/Gridworld4x4-v0"

#: Figure 4.1 of Sutton & Barto: v_k of the random policy after k synchronous sweeps.
BOOK = {
    1: [[0.0, -1.0, -1.0, -1.0], [-1.0, -1.0, -1.0, -1.0],
        [-1.0, -1.0, -1.0, -1.0], [-1.0, -1.0, -1.0, 0.0]],
    2: [[0.0, -1.7, -2.0, -2.0], [-1.7, -2.0, -2.0, -2.0],
        [-2.0, -2.0, -2.0, -1.7], [-2.0, -2.0, -1.7, 0.0]],
    3: [[0.0, -2.4, -2.9, -3.0], [-2.4, -2.9, -3.0, -2.9],
        [-2.9, -3.0, -2.9, -2.4], [-3.0, -2.9, -2.4, 0.0]],
    10: [[0.0, -6.1, -8.4, -9.0], [-6.1, -7.7, -8.4, -8.4],
         [-8.4, -8.4, -7.7, -6.1], [-9.0, -8.4, -6.1, 0.0]],
    -1: [[0.0, -14.0, -20.0, -22.0], [-14.0, -18.0, -20.0, -20.0],
         [-20.0, -20.0, -18.0, -14.0], [-22.0, -20.0, -14.0, 0.0]],
}


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 4.1, Figure 4.1"


@dataclass(frozen=True)
class Config(Settings):
    """Figure 4.1: the equiprobable random policy, undiscounted, reward -1 per step."""

    snapshots: tuple[int, ...] = (0, 1, 2, 3, 10)
    """Numbers of synchronous sweeps k at which v_k is drawn (v_inf is added last)."""
    gamma: float = 1.0
    """Discount rate (the book's undiscounted episodic task)."""

    QUICK = {}  # already instant at full size


def run(config: Config, executor) -> dict:
    """``v_{k+1} = T_pi v_k`` from ``v_0 = 0`` (eq. 4.5), and ``v_pi`` by the exact solve."""
    mdp = TabularMDP.from_gymnasium(gym.make(ENV_ID))
    uniform = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    V = np.zeros(mdp.n_states)
    values = []
    for k in range(max(config.snapshots) + 1):
        if k in config.snapshots:
            values.append(V)
        V = bellman_expectation(mdp, V, uniform, config.gamma)
    values.append(policy_evaluation(mdp, uniform, gamma=config.gamma).V)
    values = np.array(values)
    return {
        "k": np.array([*sorted(set(config.snapshots)), -1]),  # -1 stands for k = infinity
        "V": values,
        "greedy": np.array([optimal_actions(q_from_v(mdp, v, config.gamma), tol=1e-9)
                            for v in values]),
        "grid_shape": np.array(mdp.grid_shape),
        "state_cells": mdp.state_cells,
        "terminal": style.terminal_states(mdp),
        "action_names": np.array(mdp.action_names),
    }


def plot(results: dict, out_dir, config: Config) -> list:
    shape = tuple(results["grid_shape"])
    cells = results["state_cells"]
    names = [str(a) for a in results["action_names"]]
    n = len(results["k"])
    fig, axes = style.figure(n, 2, width=2.6, height=2.7,
                             title="Figure 4.1: iterative policy evaluation of the random "
                                   "policy (4x4 gridworld, reward -1 per step)")
    lo = float(results["V"].min())
    for i, k in enumerate(results["k"]):
        label = "k = \u221e" if k < 0 else f"k = {k}"
        top, bottom = axes[0, i], axes[1, i]
        image = style.heatmap(top, style.grid_image(results["V"][i], cells, shape), vmin=lo,
                              vmax=0.0, cmap="magma")
        top.set_title(f"$v_k$, {label}")
        top.set_xlabel("column")
        top.set_ylabel("row")
        style.grid_axes(bottom, shape, f"greedy policy, {label}")
        style.policy_arrows(bottom, cells, results["greedy"][i], names, scale=0.32,
                            mask=~results["terminal"])
    # one scale for every k, so one colour bar for the row
    fig.colorbar(image, ax=list(axes[0]), shrink=0.8, label="$v_k(s)$", pad=0.01)
    return [style.save(fig, out_dir / "policy_evaluation.png")]


@check("gamma")
def book_values(results: dict) -> list[Measure]:
    """Every snapshot the book prints, to its one decimal."""
    shape = tuple(results["grid_shape"])
    measures = []
    for i, k in enumerate(results["k"]):
        if int(k) not in BOOK:
            continue
        ours = np.nan_to_num(style.grid_image(results["V"][i], results["state_cells"], shape))
        worst = float(np.max(np.abs(ours - np.array(BOOK[int(k)]))))
        sweep = "inf" if k < 0 else int(k)
        measures.append(below(f"v_k, k = {sweep}: largest |ours - Figure 4.1| over the cells",
                              measured=worst, bound=0.05 + 1e-9,
                              failure=f"v_k for k = {sweep} differs from Figure 4.1 by {worst:.3f}",
                              why="the book's one decimal"))
    return measures


@check()
def values_fall_with_sweeps(results: dict) -> list[Measure]:
    """At any gamma, ``v_k`` falls in every state with each sweep from ``v_0 = 0`` down to
    ``v_pi`` (every reward is -1, so ``v_1 <= v_0`` and ``T_pi`` is monotone)."""
    rise = float(np.max(np.diff(results["V"], axis=0)))  # rows: sweeps in order, then v_pi
    return [below("largest rise of v(s) from one snapshot to the next", measured=rise, bound=1e-9,
                  failure=f"a state's value rises by {rise:.3g} from one snapshot to the next",
                  why="float rounding")]
