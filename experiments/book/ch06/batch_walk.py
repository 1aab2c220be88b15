"""Figure 6.2: batch TD(0) against batch constant-alpha MC on the random walk (section 6.3)."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    policy_evaluation,
)
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact, inside
from tabular.experiments.harness.settings import Settings
from tabular.learn.batch_updating import batch_prediction

ENV_ID = "tabzoo/RandomWalk-v0"
LABELS = {"td0": "batch TD(0)", "mc": "batch constant-alpha MC"}


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), section 6.3, Figure 6.2 (batch updating)"


@dataclass(frozen=True)
class Config(Settings):
    """Example 6.2's walk (V = 0.5 at first); the batch is swept until a sweep changes
    V by less than tol in total."""

    episodes: int = 100
    """Episodes per run (the batch grows by one each)."""
    runs: int = 100
    """Independent runs averaged (the book's 100)."""
    alpha: float = 0.001
    """The constant step size of both methods (small: a batch's increments are summed)."""
    tol: float = 1e-3
    """A batch has converged when a sweep's total change is below this."""
    seed: int = 0
    """Seed of the runs' random streams (both methods see the same episodes)."""

    QUICK = {"episodes": 60, "runs": 20}


def rms_curve(method: str, episodes: int, runs: int, alpha: float, tol: float,
              seed: int) -> dict:
    """RMS error over the five states after each episode, ``[runs, episodes]`` (a job)."""
    mdp = TabularMDP.from_gymnasium(gym.make(ENV_ID))
    walk = np.ones((mdp.n_states, mdp.n_actions))
    true_V = policy_evaluation(mdp, walk, gamma=1.0).V
    inner = ~style.terminal_states(mdp)
    history = batch_prediction(mdp, walk, method=method, episodes=episodes, alpha=alpha,
                               tol=tol, initial_V=0.5, seed=seed, runs=runs,
                               history=True).V_history
    return {"rms": np.sqrt(np.mean((history[:, :, inner] - true_V[inner]) ** 2, axis=2))}


def run(config: Config, executor) -> dict:
    jobs = [{"method": m, "episodes": config.episodes, "runs": config.runs,
             "alpha": config.alpha, "tol": config.tol, "seed": config.seed} for m in LABELS]
    curves = executor.map(rms_curve, jobs, desc="methods")
    return {"methods": np.array(list(LABELS)), "rms": np.array([c["rms"] for c in curves])}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 1, width=5.6, height=4.0,
                             title="Figure 6.2: batch training on the random walk")
    ax = axes[0, 0]
    episodes = np.arange(1, results["rms"].shape[2] + 1)
    for i, method in enumerate(results["methods"]):
        style.mean_band(ax, episodes, results["rms"][i], LABELS[str(method)],
                        style.PALETTE[i + 1])
    ax.set_xlabel("walks / episodes")
    ax.set_ylabel("RMS error over states A-E\n(averaged over runs)")
    ax.set_title(f"alpha = {config.alpha:g}, {results['rms'].shape[1]} runs (band: 95% CI)")
    ax.set_ylim(0, 0.3)
    ax.legend()
    return [style.save(fig, out_dir / "batch_walk.png")]


@check("episodes", "alpha", "tol")
def td_beats_mc(results: dict) -> list[Measure]:
    """Batch TD(0) is below batch MC once a few episodes are in (the book's finding:
    certainty equivalence beats sample averages on Markov data), and both fall."""
    mean = dict(zip(results["methods"].tolist(), results["rms"].mean(axis=1), strict=True))
    td, mc = mean["td0"], mean["mc"]
    later = slice(9, None)
    worst = int(np.argmax(td[later] - mc[later])) + 10
    measures = [fact("batch TD(0) against batch MC, RMS error from episode 10 on",
                     passed=(td[later] < mc[later]).all(),
                     expected="TD(0) below MC at every episode",
                     measured=f"largest TD(0) - MC {np.max(td[later] - mc[later]):.3g} "
                              f"(episode {worst})",
                     failure=f"batch TD(0) is not below batch MC at episode {worst}",
                     tolerance="ordering")]
    for name, curve in (("TD(0)", td), ("MC", mc)):
        measures.append(fact(f"batch {name}: last RMS error / first",
                             passed=curve[-1] < 0.5 * curve[0], expected="< 0.5",
                             measured=f"{curve[-1] / curve[0]:.3g}",
                             failure=f"batch {name}'s error {curve[-1]:.3f} has not halved from "
                                     f"{curve[0]:.3f}", tolerance="the book's curves halve"))
    measures.append(inside("batch TD(0): final RMS error", measured=td[-1], low=0.01, high=0.1,
                           failure=f"batch TD(0) ends at {td[-1]:.3f}, outside (0.01, 0.1)",
                           why="Figure 6.2's range"))
    return measures
