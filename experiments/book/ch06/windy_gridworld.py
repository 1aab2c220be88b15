"""Example 6.5 windy gridworld: SARSA episodes vs time steps and its learned path (S&B Fig. 6.3)."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    sarsa,
    value_iteration,
)
from tabular.envs.layout import GOAL
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, check, fact, inside
from tabular.experiments.harness.settings import Settings

ENV_ID = "tabzoo/WindyGridworld-v0"


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 6.5 (its figure of episodes against time steps)"


@dataclass(frozen=True)
class Config(Settings):
    """Example 6.5: epsilon-greedy SARSA (epsilon 0.1, alpha 0.5), reward -1 per step."""

    episodes: int = 170
    """Episodes per run (the book's plot ends at 170)."""
    runs: int = 100
    """Independent runs averaged."""
    alpha: float = 0.5
    """Step size."""
    epsilon: float = 0.1
    """Exploration rate."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {}  # already cheap; the check counts runs, and 10 were too few


def run(config: Config, executor) -> dict:
    env = gym.make(ENV_ID)
    mdp = TabularMDP.from_gymnasium(env)
    result = sarsa(mdp, gamma=1.0, episodes=config.episodes, alpha=config.alpha,
                   epsilon=config.epsilon, seed=config.seed, runs=config.runs)
    lengths, Q = result.episode_lengths, result.Q
    paths = [style.greedy_path(mdp, q.argmax(axis=1), max_steps=100) for q in Q]
    optimal = value_iteration(mdp, gamma=1.0, tol=1e-10)
    best = style.greedy_path(mdp, optimal.policy, max_steps=100)
    shortest = int(np.argmin([len(p) for p in paths]))
    return {
        "lengths": lengths,
        "greedy_steps": np.array([len(p) - 1 for p in paths]),
        "path": paths[shortest],
        "optimal_steps": np.array(len(best) - 1),
        "grid_shape": np.array(mdp.grid_shape),
        "wind": np.asarray(env.unwrapped.WIND),
        "goal": np.argwhere(env.unwrapped.kinds == GOAL)[0],
    }


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.4, height=4.0,
                             title="Example 6.5 windy gridworld: SARSA "
                                   f"(epsilon = {config.epsilon:g}, alpha = {config.alpha:g})")
    ax = axes[0, 0]
    lengths = results["lengths"]
    steps = np.cumsum(lengths, axis=1)
    episodes = np.arange(1, lengths.shape[1] + 1)
    for r in range(lengths.shape[0]):
        ax.plot(steps[r], episodes, color=style.color("SARSA"), alpha=0.12, linewidth=0.8)
    ax.plot(steps.mean(axis=0), episodes, color=style.color("SARSA"), linewidth=2.2,
            label=f"mean of {lengths.shape[0]} runs (thin: each run)")
    ax.set(xlabel="time steps (cumulative)", ylabel="episodes completed",
           title="episodes vs time steps")
    ax.legend(loc="lower right")

    ax = axes[0, 1]
    shape = tuple(results["grid_shape"])
    style.grid_axes(ax, shape, "greedy path of the best run")
    path = results["path"]
    style.draw_path(ax, path, style.color("SARSA"),
                    f"SARSA greedy path ({len(path) - 1} steps; "
                    f"optimal {int(results['optimal_steps'])})")
    g = results["goal"]
    ax.text(g[1], g[0], "G", ha="center", va="center", fontweight="bold", fontsize=12)
    for c, w in enumerate(results["wind"]):
        if w:
            ax.axvspan(c - 0.5, c + 0.5, color="#56B4E9", alpha=0.12 * w, linewidth=0)
    ax.set_xticks(range(shape[1]), [str(w) for w in results["wind"]])
    ax.set_xlabel("column, labelled by its upward wind (cells per step)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return [style.save(fig, out_dir / "windy_gridworld.png")]


@check()
def optimal_path(results: dict) -> list[Measure]:
    """The optimal path takes the book's 15 steps (value iteration: no setting changes
    it)."""
    optimal = int(results["optimal_steps"])
    return [fact("optimal path, steps", passed=optimal == 15, expected="15 (the book)",
                 measured=str(optimal),
                 failure=f"the optimal path takes {optimal} steps, the book's takes 15")]


@check("episodes", "alpha", "epsilon")
def book_slope(results: dict) -> list[Measure]:
    """The book's slope: ~170 episodes in ~8,000 steps; the best run's greedy path is the
    15-step optimum, and a good share of runs end within 2 steps of it."""
    total = float(results["lengths"].sum(axis=1).mean())
    optimal = int(results["optimal_steps"])
    steps = results["greedy_steps"]
    near = float(np.mean(steps <= optimal + 2))
    return [
        # single runs spread with a standard deviation of ~250 steps, so a mean of >= 10
        # runs lies far inside this band around the book's ~8,000
        inside(f"time steps of {results['lengths'].shape[1]} episodes (mean over runs)",
               measured=total, low=6_000, high=11_000,
               failure=f"{results['lengths'].shape[1]} episodes took "
                       f"{total:.0f} steps on average; the book shows about 8,000",
               why="around the book's ~8,000"),
        fact("best run's greedy path, steps", passed=steps.min() == optimal,
             expected=f"{optimal} (optimal)", measured=str(steps.min()),
             failure=f"no run's greedy path is optimal: the best takes {steps.min()} steps"),
        # About 44% of runs end with a greedy path within 2 steps of the optimum (a fifth
        # exactly optimal); many others loop, as 170 episodes leave many Q values at their
        # initial 0. At 100 runs 0.25 lies ~4 binomial standard errors below 44%.
        above("fraction of runs whose greedy path is within 2 steps of optimal", measured=near,
              bound=0.25 - 1e-12,
              failure=f"only {near:.0%} of runs learned a greedy path within 2 steps of "
                      "the optimum (expected about 44%)", why="4 standard errors below 0.44"),
    ]
