"""Figure 9.10: gradient Monte Carlo with one tiling and with 50 tilings of 200-state
tiles on the 1000-state random walk, sqrt(VE) against episodes, above each feature
set's exact minimum."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.book.ch09.walk_curves import (
    K_SE,
    above_floors,
    close_most_of_the_gap,
    draw,
    ends_below,
    final,
    learn,
    nested_floors,
)
from tabular.experiments.book.ch09.walk_setup import walk
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, standard_error
from tabular.experiments.harness.settings import Settings
from tabular.linear import reward_process

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("Sutton & Barto (2018), Figure 9.10 (one tiling against 50 tilings on the "
              "1000-state walk, gradient MC), with each feature set's exact VE minimum")


@dataclass(frozen=True)
class Config(Settings):
    """Section 9.5.4's example: the 1000 states as one continuous dimension, tiles 200
    states wide; the multiple tilings are offset from each other by 200 / tilings (4)
    states; w = 0 at first, gamma = 1."""

    tilings: int = 50
    """Tilings of the multiple-tiling learner (the book's)."""
    alpha: float = 1e-4
    """Gradient MC's step size with one tiling (the book's); the multiple tilings use
    alpha / tilings, the same initial learning rate (every state has one active
    feature per tiling)."""
    episodes: int = 5000
    """Episodes per run (the book's)."""
    runs: int = 30
    """Independent runs averaged (the book's; ``--quick`` keeps the book's episodes, which
    the findings need, with fewer runs)."""
    seed: int = 0
    """Seed of the runs' random streams (both learners see the same episodes)."""

    QUICK = {"runs": 10}


def labels(results: dict) -> list[str]:
    return ["one tiling (state aggregation)", f"{int(results['tilings'])} tilings"]


def run(config: Config, executor) -> dict:
    mdp, policy, _ = walk()
    process = reward_process(mdp, policy, gamma=1.0)
    specs = [("tilings", 1, config.alpha),
             ("tilings", config.tilings, config.alpha / config.tilings)]
    results = learn(process, specs, config.episodes, config.runs, config.seed, executor)
    return {**results, "tilings": np.array(config.tilings)}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 1, width=7.4, height=4.6,
                             title="Figure 9.10: one tiling against many, gradient MC "
                                   "on the 1000-state walk")
    ax = axes[0, 0]
    draw(ax, results, labels(results), [style.PALETTE[0], style.PALETTE[1]], ["-", "-"])
    ax.set_ylim(0.0, 0.45)
    ax.set_title(f"{results['curves'].shape[1]} runs (band: 95% CI); tiles of 200 states; "
                 f"alpha = {config.alpha:g} and {config.alpha:g} / {config.tilings}")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return [style.save(fig, out_dir / "tile_coding_walk.png")]


@check()
def above_the_exact_minima(results: dict) -> list[Measure]:
    """No run ever has a value error below the exact VE minimum of its features (a hard
    bound), and the tilings' exact minimum is at most one tiling's: the first tiling,
    not offset, is the single one."""
    names = labels(results)
    return above_floors(results, names) + [nested_floors(results, 0, 1, names)]


@check("tilings", "alpha", "episodes")
def many_tilings_end_lower(results: dict) -> list[Measure]:
    """Figure 9.10's finding: the multiple tilings end with the lower value error
    (averaged over the last tenth of the episodes), by more than 4 standard errors of
    the paired difference; and below the exact minimum of one tiling, which no learner
    with one tiling can reach, by more than 4 standard errors."""
    names = labels(results)
    many = final(results["curves"][1])
    floor = float(results["floor"][0])
    se = standard_error(many)
    return [ends_below(results, 1, 0, names),
            below(f"{names[1]}: final sqrt(VE)", measured=many.mean(), bound=floor - K_SE * se,
                  failure=f"{names[1]} end at {many.mean():.4f}, not below one tiling's exact "
                          f"minimum {floor:.4f}",
                  why=f"one tiling's exact minimum - {K_SE:g} standard "
                      "errors")]


@check("tilings", "alpha", "episodes")
def curves_approach_their_minima(results: dict) -> list[Measure]:
    """Both curves end nearer their exact floors than their start: each has closed more
    than half the gap, by more than 4 standard errors."""
    return close_most_of_the_gap(results, labels(results))
