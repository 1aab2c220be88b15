"""Example 3.5 gridworld: random-policy values, v* and an optimal policy (S&B Fig. 3.2, 3.5)."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    optimal_actions,
    policy_evaluation,
    value_iteration,
)
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check
from tabular.experiments.harness.settings import Settings

ENV_ID = "tabzoo/Gridworld5x5-v0"

#: Figure 3.2 (right) of Sutton & Barto: v_pi of the equiprobable random policy, gamma 0.9.
BOOK_V_RANDOM = np.array([
    [3.3, 8.8, 4.4, 5.3, 1.5],
    [1.5, 3.0, 2.3, 1.9, 0.5],
    [0.1, 0.7, 0.7, 0.4, -0.4],
    [-1.0, -0.4, -0.4, -0.6, -1.2],
    [-1.9, -1.3, -1.2, -1.4, -2.0],
])

#: Figure 3.5 (middle) of Sutton & Barto: v*, gamma 0.9.
BOOK_V_STAR = np.array([
    [22.0, 24.4, 22.0, 19.4, 17.5],
    [19.8, 22.0, 19.8, 17.8, 16.0],
    [17.8, 19.8, 17.8, 16.0, 14.4],
    [16.0, 17.8, 16.0, 14.4, 13.0],
    [14.4, 16.0, 14.4, 13.0, 11.7],
])


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 3.5, Figures 3.2 and 3.5"


@dataclass(frozen=True)
class Config(Settings):
    """Example 3.5: a 5x5 grid whose cells A and B teleport with rewards +10 and +5."""

    gamma: float = 0.9
    """Discount rate (the book's 0.9)."""
    tol: float = 1e-12
    """Sup-norm change at which value iteration and policy evaluation stop."""

    QUICK = {"tol": 1e-8}


def run(config: Config, executor) -> dict:
    """Evaluate the equiprobable random policy exactly and solve for v* and q*."""
    mdp = TabularMDP.from_gymnasium(gym.make(ENV_ID))
    uniform = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    random = policy_evaluation(mdp, uniform, gamma=config.gamma)
    best = value_iteration(mdp, gamma=config.gamma, tol=config.tol)
    return {
        "V_random": random.V,
        "V_star": best.V,
        "Q_star": best.Q,
        "grid_shape": np.array(mdp.grid_shape),
        "state_cells": mdp.state_cells,
        "action_names": np.array(mdp.action_names),
    }


def plot(results: dict, out_dir, config: Config) -> list:
    shape = tuple(results["grid_shape"])
    cells = results["state_cells"]
    fig, axes = style.figure(3, 1, width=4.2, height=4.0,
                             title=f"Example 3.5 gridworld (gamma = {config.gamma:g}): "
                                   "values and an optimal policy")
    for ax, key, title in ((axes[0, 0], "V_random", "$v_\\pi$ of the random policy"),
                           (axes[0, 1], "V_star", "$v_*$, the optimal values")):
        style.heatmap(ax, style.grid_image(results[key], cells, shape),
                      colorbar_label="state value (expected discounted return)")
        ax.set_title(title)
        ax.set_xlabel("column")
        ax.set_ylabel("row")
    ax = axes[0, 2]
    style.grid_axes(ax, shape, "$\\pi_*$: every optimal action")
    style.policy_arrows(ax, cells, optimal_actions(results["Q_star"], tol=1e-6),
                        [str(a) for a in results["action_names"]])
    for label, (r, c) in (("A", (0, 1)), ("B", (0, 3))):
        ax.text(c - 0.42, r - 0.3, label, fontsize=9, fontweight="bold", color="#D55E00")
    return [style.save(fig, out_dir / "gridworld_values.png")]


@check("gamma")
def book_values(results: dict) -> list[Measure]:
    """The book's one-decimal numbers (Figures 3.2 and 3.5) within rounding."""
    shape = tuple(results["grid_shape"])
    measures = []
    for key, book, name in (("V_random", BOOK_V_RANDOM, "Fig. 3.2 v_pi"),
                            ("V_star", BOOK_V_STAR, "Fig. 3.5 v*")):
        ours = style.grid_image(results[key], results["state_cells"], shape)
        worst = float(np.max(np.abs(ours - book)))
        measures.append(below(  # the book prints one decimal
            f"{name}: largest |ours - book| over the 25 cells", measured=worst, bound=0.05 + 1e-9,
            failure=f"{name} differs from the book by {worst:.3f} (> 0.05 rounding)",
            why="the book's one decimal"))
    return measures


@check()
def optimal_beats_random(results: dict) -> list[Measure]:
    """v* >= v_pi of the random policy in every state, at any gamma (v* is the value of
    the best policy); the margin covers the solvers' stopping tolerance."""
    shortfall = float(np.max(results["V_random"] - results["V_star"]))
    return [below("largest v_pi(s) - v*(s)", measured=shortfall, bound=1e-6,
                  failure=f"v_pi of the random policy exceeds v* by {shortfall:.3g} in some state",
                  why="the solvers' stopping tolerance")]
