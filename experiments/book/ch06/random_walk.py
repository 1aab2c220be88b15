"""Example 6.2 random walk: TD(0) vs constant-alpha MC, RMS error per episode (S&B Fig. 6.2)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import gymnasium as gym
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    mc_prediction,
    policy_evaluation,
    td0,
)
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, inside
from tabular.experiments.harness.settings import Settings

ENV_ID = "tabzoo/RandomWalk-v0"
#: Constant-alpha MC is the book's every-visit rule (eq. 6.1): first-visit MC updates each
#: state once per walk, so a walk that revisits a state moves its value less, and its
#: curves end far below the book's.
METHODS = {"TD(0)": td0, "MC": partial(mc_prediction, first_visit=False)}


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 6.2 (its figure of RMS error per episode)"


@dataclass(frozen=True)
class Config(Settings):
    """Example 6.2: five states A-E, start in C, +1 on the right; V initialised to 0.5."""

    td_alphas: tuple[float, ...] = (0.15, 0.1, 0.05)
    """Constant step sizes of TD(0) (the book's)."""
    mc_alphas: tuple[float, ...] = (0.01, 0.02, 0.03, 0.04)
    """Constant step sizes of every-visit constant-alpha MC, eq. 6.1 (the book's)."""
    episodes: int = 100
    """Episodes per run."""
    runs: int = 100
    """Independent runs averaged per curve."""
    seed: int = 0
    """Seed of the runs' random streams (every curve uses the same seed)."""

    QUICK = {}  # already cheap; the check's MC range needs the runs


def model() -> TabularMDP:
    return TabularMDP.from_gymnasium(gym.make(ENV_ID))


def value_history(method: str, alpha: float, episodes: int, runs: int, seed: int) -> dict:
    """``V`` after each episode of every run, ``[runs, episodes + 1, S]`` (an executor job)."""
    mdp = model()
    walk = np.ones((mdp.n_states, mdp.n_actions))
    result = METHODS[method](mdp, walk, gamma=1.0, episodes=episodes, alpha=alpha,
                             initial_V=0.5, seed=seed, runs=runs, history=True)
    history = result.V_history
    start = np.full((runs, 1, mdp.n_states), 0.5)
    return {"V": np.concatenate([start, history], axis=1)}


def run(config: Config, executor) -> dict:
    mdp = model()
    walk = np.ones((mdp.n_states, mdp.n_actions))
    true_V = policy_evaluation(mdp, walk, gamma=1.0).V
    inner = ~style.terminal_states(mdp)
    curves = [("TD(0)", a) for a in config.td_alphas] + [("MC", a) for a in config.mc_alphas]
    jobs = [{"method": m, "alpha": a, "episodes": config.episodes, "runs": config.runs,
             "seed": config.seed} for m, a in curves]
    histories = executor.map(value_history, jobs, desc="step sizes")
    rms = np.array([np.sqrt(np.mean((h["V"][:, :, inner] - true_V[inner]) ** 2, axis=2))
                    for h in histories])  # [curve, run, episode]
    shown = int(np.argmin(np.abs(np.array(config.td_alphas) - 0.1)))  # the book's left panel
    return {
        "methods": np.array([m for m, _ in curves]),
        "alphas": np.array([a for _, a in curves]),
        "rms": rms,
        "true_V": true_V[inner],
        "labels": np.array(mdp.state_labels)[inner],
        "td_alpha_shown": np.array(config.td_alphas[shown]),
        "td_run0": histories[shown]["V"][0][:, inner],
    }


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.4, height=4.0,
                             title="Example 6.2 random walk: TD(0) vs constant-alpha MC "
                                   "(every-visit, eq. 6.1)")
    ax = axes[0, 0]
    x = np.arange(len(results["labels"]))
    for i, ep in enumerate((0, 1, 10, 100)):
        if ep < results["td_run0"].shape[0]:
            # the first walk changes one state, so "after 0" is dashed and drawn on top
            ax.plot(x, results["td_run0"][ep], marker="o", linestyle="--" if ep == 0 else "-",
                    color=style.PALETTE[i + 1], label=f"after {ep} episodes", markersize=4,
                    zorder=4 - i)
    ax.plot(x, results["true_V"], "k--", label="true values")
    ax.set_xticks(x, [str(s) for s in results["labels"]])
    ax.set_xlabel("state")
    ax.set_ylabel("estimated value (probability of ending right)")
    ax.set_title(f"TD(0) estimates of one run ($\\alpha$ = {float(results['td_alpha_shown']):g})")
    ax.legend()

    ax = axes[0, 1]
    runs = results["rms"].shape[1]
    episodes = np.arange(results["rms"].shape[2])
    shades = {"TD(0)": ("#0072B2", "#56B4E9", "#003F66"),
              "MC": ("#D55E00", "#E69F00", "#8C3B00", "#F4A582")}
    seen = {"TD(0)": 0, "MC": 0}
    for method, alpha, curve in zip(results["methods"], results["alphas"], results["rms"],
                                    strict=True):
        method = str(method)
        c = shades[method][seen[method] % len(shades[method])]
        seen[method] += 1
        name = "every-visit MC" if method == "MC" else method
        style.mean_band(ax, episodes, curve, f"{name}, $\\alpha$ = {alpha:g}", c)
    ax.set_xlabel("walks / episodes")
    ax.set_ylabel("RMS error over states A-E\n(averaged over runs)")
    ax.set_title(f"empirical RMS error, {runs} runs (band: 95% CI)")
    ax.set_ylim(0, 0.3)  # headroom above the curves for the legend
    ax.legend(ncol=2, fontsize=8, loc="upper right")
    return [style.save(fig, out_dir / "random_walk.png")]


@check()
def true_values(results: dict) -> list[Measure]:
    """The exact values of A-E are 1/6 ... 5/6 (Example 6.2), and every curve starts at
    the error of the initial guess V = 0.5, whatever its step size."""
    true_V = results["true_V"]
    start = np.sqrt(np.mean((0.5 - true_V) ** 2))
    return [
        below("true values of A-E: largest |v - k/6|",
              measured=np.max(np.abs(true_V - np.arange(1, 6) / 6)), bound=1e-12,
              failure=f"the true values are {np.round(true_V, 4)}, not 1/6 ... 5/6",
              why="float rounding"),
        below(f"every curve's first RMS error: largest |error - {start:.4f}|",
              measured=np.max(np.abs(results["rms"][:, :, 0] - start)), bound=1e-12,
              failure=f"a curve does not start at the initial guess's error {start:.4f}",
              why="float rounding"),
    ]


@check("td_alphas", "mc_alphas", "episodes")
def td_beats_mc(results: dict) -> list[Measure]:
    """TD(0) with its best step size ends below MC with its best (the book's finding), and
    every-visit MC levels off near the book's 0.1."""
    late = results["rms"][:, :, -25:].mean(axis=(1, 2))  # last 25 episodes, all runs
    td = late[results["methods"] == "TD(0)"].min()
    mc = late[results["methods"] == "MC"].min()
    return [
        # the book's gap is ~0.05 vs ~0.1; the run-mean's standard error is < 0.01 at 100 runs
        fact("best late RMS error: TD(0) against MC", passed=td < mc, expected="TD(0) below MC",
             measured=f"{td:.3f} vs {mc:.3f}",
             failure=f"TD(0)'s best late RMS error {td:.3f} is not below MC's {mc:.3f}",
             tolerance="ordering"),
        inside("TD(0)'s best late RMS error", measured=td, low=0.02, high=0.12,
               failure=f"TD(0)'s best late RMS error {td:.3f} is outside the book's range",
               why="the book's figure"),
        # every-visit MC's best (alpha = 0.02) is near 0.09, its 100-run mean within 0.01;
        # first-visit MC's best lies below this range, so the check tells the two apart
        inside("MC's best late RMS error", measured=mc, low=0.07, high=0.13,
               failure=f"MC's best late RMS error {mc:.3f} is outside the book's range",
               why="the book's figure"),
    ]
