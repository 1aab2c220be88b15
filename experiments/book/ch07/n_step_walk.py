"""Figure 7.2: n-step TD on the 19-state random walk, RMS error against alpha for each n."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    td0,
)
from tabular.experiments.book.ch07.walk_errors import early_rms
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact, inside
from tabular.experiments.harness.settings import Settings
from tabular.experiments.harness.sweeps import best_step_sizes

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 7.1, Figure 7.2"


@dataclass(frozen=True)
class Config(Settings):
    """Section 7.1: 19 states, -1 on the left, +1 on the right, gamma = 1, V = 0 at first."""

    n_steps: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
    """The n of each curve (the book's)."""
    alphas: tuple[float, ...] = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    """Constant step sizes (alpha = 0 leaves V at 0: the error of the initial guess)."""
    episodes: int = 10
    """Episodes per run: the error is averaged over the first ten (the book's)."""
    runs: int = 100
    """Independent runs averaged (the book's)."""
    seed: int = 0
    """Seed of the runs' random streams (every curve uses the same seed)."""

    QUICK = {"runs": 30}


def rms_errors(n_step: int, alphas: tuple, episodes: int, runs: int, seed: int) -> dict:
    """:func:`early_rms` of n-step TD per step size: ``[alphas, runs]`` (an executor job)."""
    return {"errors": np.array([early_rms(td0, alpha, episodes, runs, seed, n_step=n_step)
                                for alpha in alphas])}


def run(config: Config, executor) -> dict:
    jobs = [{"n_step": n, "alphas": config.alphas, "episodes": config.episodes,
             "runs": config.runs, "seed": config.seed} for n in config.n_steps]
    results = executor.map(rms_errors, jobs, desc="n")
    return {"n_steps": np.array(config.n_steps), "alphas": np.array(config.alphas),
            "errors": np.array([r["errors"] for r in results])}  # [n, alpha, run]


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 1, width=6.4, height=4.6,
                             title="Figure 7.2: n-step TD on the 19-state random walk")
    ax = axes[0, 0]
    alphas = results["alphas"]
    runs = results["errors"].shape[2]
    for i, n in enumerate(results["n_steps"]):
        style.mean_band(ax, alphas, results["errors"][i].T, f"n = {n}",
                        style.PALETTE[i % len(style.PALETTE)])
    ax.set_ylim(0.2, 0.6)
    ax.set_xlabel(r"$\alpha$")
    ax.set_ylabel(f"average RMS error over 19 states\nand first {config.episodes} episodes")
    ax.set_title(f"{runs} runs per point (band: 95% CI)")
    ax.legend(ncol=2, fontsize=8)
    return [style.save(fig, out_dir / "n_step_walk.png")]


def table(results: dict):
    """The best step size and error of each n."""
    return best_step_sizes(results)


@check("n_steps", "alphas", "episodes")
def intermediate_n_is_best(results: dict) -> list[Measure]:
    """Figure 7.2's findings: an intermediate n is best (about 0.25 at n = 4 or 8), both
    n = 1 and n >= 64 do worse at their best step size, and n = 512 is worst."""
    mean = results["errors"].mean(axis=2)
    best = mean.min(axis=1)
    n = results["n_steps"]
    winner = int(n[best.argmin()])
    measures = [
        fact("n with the lowest error", passed=winner in (4, 8, 16),
             expected="4, 8 or 16 (the book: 4 to 8)", measured=str(winner),
             failure=f"n = {winner} has the lowest error; the book's best n is 4 to 8",
             tolerance="one of three"),
        inside("lowest RMS error over n and alpha", measured=best.min(), low=0.2, high=0.32,
               failure=f"the lowest error {best.min():.3f} is not near the book's 0.25",
               why="near the book's 0.25"),
    ]
    by_n = dict(zip(n.tolist(), best.tolist(), strict=True))
    if 1 in by_n:
        measures.append(fact("n = 1's best error - the lowest", passed=by_n[1] > best.min() + 0.03,
                             expected="> 0.03", measured=f"{by_n[1] - best.min():.3f}",
                             failure=f"n = 1's best error {by_n[1]:.3f} is not clearly above the "
                                     f"best {best.min():.3f}", tolerance="clearly above"))
    large = [v for k, v in by_n.items() if k >= 64]
    if large:
        measures.append(fact("n >= 64's best error - the lowest",
                             passed=min(large) > best.min() + 0.03, expected="> 0.03",
                             measured=f"{min(large) - best.min():.3f}",
                             failure=f"n >= 64 reaches {min(large):.3f}, as low as the best "
                                     f"{best.min():.3f}", tolerance="clearly above"))
    if 512 in by_n:
        others = max(v for k, v in by_n.items() if k < 512)
        measures.append(fact("n = 512's best error against every other n's",
                             passed=by_n[512] >= others - 1e-9, expected="the worst",
                             measured=f"{by_n[512]:.3f} vs "
                                      f"{others:.3f}",
                             failure="n = 512 is not the worst n at its best step size",
                             tolerance="ordering"))
    return measures
