"""Example 6.6 cliff walking: SARSA's safe path against Q-learning's optimal one (S&B Fig. 6.4)."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    q_learning,
    sarsa,
)
from tabular.envs.layout import CLIFF
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact
from tabular.experiments.harness.settings import Settings

ENV_ID = "tabzoo/CliffWalking-v0"
METHODS = {"SARSA": sarsa, "Q-learning": q_learning}


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 6.6 (its figure of reward per episode)"


@dataclass(frozen=True)
class Config(Settings):
    """Example 6.6: epsilon-greedy SARSA and Q-learning, undiscounted (the book: epsilon
    0.1, step size 0.5)."""

    episodes: int = 500
    """Episodes per run."""
    runs: int = 100
    """Independent runs averaged (the band is the 95% interval of the mean)."""
    alpha: float = 0.5
    """Step size."""
    epsilon: float = 0.1
    """Exploration rate of the epsilon-greedy behaviour policy."""
    seed: int = 0
    """Seed of the runs' random streams (each method gets the same seed)."""

    QUICK = {"episodes": 300, "runs": 20}


def learn(method: str, episodes: int, runs: int, alpha: float, epsilon: float,
          seed: int) -> dict:
    """One method's runs (an executor job): returns per episode and the final Q tables."""
    mdp = TabularMDP.from_gymnasium(gym.make(ENV_ID))
    result = METHODS[method](mdp, gamma=1.0, episodes=episodes, alpha=alpha, epsilon=epsilon,
                             seed=seed, runs=runs)
    return {"returns": result.episode_returns, "Q": result.Q}


def run(config: Config, executor) -> dict:
    jobs = [{"method": m, "episodes": config.episodes, "runs": config.runs,
             "alpha": config.alpha, "epsilon": config.epsilon, "seed": config.seed}
            for m in METHODS]
    out = executor.map(learn, jobs, desc="methods")
    env = gym.make(ENV_ID)
    mdp = TabularMDP.from_gymnasium(env)
    results = {"methods": np.array(list(METHODS)), "grid_shape": np.array(mdp.grid_shape),
               "state_cells": mdp.state_cells}
    for name, o in zip(METHODS, out, strict=True):
        key = name.replace("-", "_").lower()
        results[f"returns_{key}"] = o["returns"]
        # the greedy policy of the run-averaged action values: the typical learned route
        path = style.greedy_path(mdp, o["Q"].mean(axis=0).argmax(axis=1), max_steps=100)
        results[f"path_{key}"] = path
    results["cliff_cells"] = np.argwhere(env.unwrapped.kinds == CLIFF)
    return results


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.6, height=3.9,
                             title="Example 6.6 cliff walking: SARSA vs Q-learning "
                                   f"(epsilon = {config.epsilon:g}, alpha = {config.alpha:g})")
    ax = axes[0, 0]
    for name in results["methods"]:
        runs = results[f"returns_{str(name).replace('-', '_').lower()}"]
        episodes = np.arange(1, runs.shape[1] + 1)
        style.mean_band(ax, episodes, runs, f"{name} ({runs.shape[0]} runs)",
                        style.color(str(name)), smooth=style.window(10, runs))
    ax.set(ylim=(-100, 0), xlabel="episode", title="online performance",
           ylabel="sum of rewards during episode\n(mean over runs, 10-episode average)")
    ax.legend(loc="lower right")

    ax = axes[0, 1]
    shape = tuple(results["grid_shape"])
    style.grid_axes(ax, shape, "greedy route of the run-averaged Q")
    for r, c in results["cliff_cells"]:
        ax.add_patch(style.plt.Rectangle((c - 0.5, r - 0.5), 1, 1, color="#8B1A1A", alpha=0.7))
    ax.text((shape[1] - 1) / 2, shape[0] - 1, "the cliff (-100)", ha="center", va="center",
            color="white", fontsize=9)
    for i, name in enumerate(results["methods"]):
        path = results[f"path_{str(name).replace('-', '_').lower()}"]
        style.draw_path(ax, path, style.color(str(name)), f"{name} ({len(path) - 1} steps)",
                        offset=0.08 * (i - 0.5))
    for label, col in (("S", 0), ("G", shape[1] - 1)):
        ax.text(col - 0.3, shape[0] - 1.25, label, ha="center", va="center", fontweight="bold")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)
    return [style.save(fig, out_dir / "cliff_walking.png")]


@check("episodes", "alpha", "epsilon")
def safe_against_optimal(results: dict) -> list[Measure]:
    """SARSA earns more online; Q-learning's greedy route is the 13-step edge path."""
    tail = slice(-100, None)
    sarsa_online = float(results["returns_sarsa"][:, tail].mean())
    q_online = float(results["returns_q_learning"][:, tail].mean())
    q_steps = len(results["path_q_learning"]) - 1
    sarsa_steps = len(results["path_sarsa"]) - 1
    return [
        # the book's gap is ~25 (about -25 vs -50); over >= 20 runs x 100 episodes the
        # standard error of each mean is < 2 (runs spread by ~7), so the order is not luck
        fact("online return, last 100 episodes: SARSA against Q-learning",
             passed=sarsa_online > q_online,
             expected="SARSA above Q-learning (book: about -25 vs -50)",
             measured=f"{sarsa_online:.1f} vs {q_online:.1f}",
             failure=f"SARSA's online return {sarsa_online:.1f} is not above "
                     f"Q-learning's {q_online:.1f} over the last 100 episodes",
             tolerance="ordering (standard error < 2)"),
        fact("Q-learning's greedy route, steps", passed=q_steps == 13,
             expected="13 (the optimal edge path)", measured=str(q_steps),
             failure=f"Q-learning's greedy route takes {q_steps} steps, not the "
                     "optimal 13"),
        fact("SARSA's greedy route, steps", passed=13 < sarsa_steps < 100,
             expected="a longer safe route: in (13, 100)", measured=str(sarsa_steps),
             failure=f"SARSA's greedy route takes {sarsa_steps} steps; expected the longer "
                     "safe route that still reaches the goal", tolerance="the range"),
    ]
