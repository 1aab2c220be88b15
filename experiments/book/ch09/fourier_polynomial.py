"""Figure 9.5: gradient Monte Carlo with polynomial and Fourier bases of order 5, 10 and
20 on the 1000-state random walk, sqrt(VE) against episodes, above each basis' exact
minimum."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.book.ch09.walk_curves import (
    above_floors,
    close_most_of_the_gap,
    draw,
    ends_below,
    learn,
    nested_floors,
)
from tabular.experiments.book.ch09.walk_setup import walk
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check
from tabular.experiments.harness.settings import Settings
from tabular.linear import reward_process

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("Sutton & Barto (2018), Figure 9.5 (Fourier basis against polynomials on the "
              "1000-state walk, gradient MC), with each basis' exact VE minimum")
KINDS = ("polynomial", "fourier")


@dataclass(frozen=True)
class Config(Settings):
    """Section 9.5.2's comparison: each state's position scaled to [0, 1], one weight
    per basis function, w = 0 at first, gamma = 1."""

    orders: tuple[int, ...] = (5, 10, 20)
    """Orders of both bases (the book's): order n has n + 1 features."""
    alpha_polynomial: float = 1e-4
    """Gradient MC's step size with the polynomial basis (the book's, roughly optimised)."""
    alpha_fourier: float = 5e-5
    """Gradient MC's step size with the Fourier basis (the book's, roughly optimised)."""
    episodes: int = 5000
    """Episodes per run (the book's)."""
    runs: int = 30
    """Independent runs averaged (the book's; ``--quick`` keeps the book's episodes, which
    the findings need, with fewer runs)."""
    seed: int = 0
    """Seed of the runs' random streams (every basis sees the same episodes)."""

    QUICK = {"runs": 5}


def specs(config: Config) -> list[tuple[str, int, float]]:
    """``(kind, order, alpha)`` of every curve: the polynomials, then the Fourier bases."""
    alphas = {"polynomial": config.alpha_polynomial, "fourier": config.alpha_fourier}
    return [(kind, order, alphas[kind]) for kind in KINDS for order in config.orders]


def labels(results: dict) -> list[str]:
    return [f"{kind} order {order}" for kind in KINDS for order in results["orders"]]


def run(config: Config, executor) -> dict:
    mdp, policy, _ = walk()
    process = reward_process(mdp, policy, gamma=1.0)
    results = learn(process, specs(config), config.episodes, config.runs, config.seed,
                    executor)
    return {**results, "orders": np.array(config.orders)}


def plot(results: dict, out_dir, config: Config) -> list:
    n = len(results["orders"])
    colors = [style.PALETTE[i % len(style.PALETTE)] for i in range(n)] * 2
    fig = draw(results, labels(results), colors, ["--"] * n + ["-"] * n,
               title="Figure 9.5: Fourier basis against polynomials, gradient MC on the "
                     "1000-state walk",
               settings=f"alpha = {config.alpha_polynomial:g} (polynomial), "
                        f"{config.alpha_fourier:g} (Fourier)")
    return [style.save(fig, out_dir / "fourier_polynomial.png")]


@check()
def above_the_exact_minima(results: dict) -> list[Measure]:
    """No run of any basis ever has a value error below the exact VE minimum of its
    features (a hard bound), and a higher order's exact minimum is at most a lower
    order's (its basis contains the lower one)."""
    names = labels(results)
    measures = above_floors(results, names)
    n = len(results["orders"])
    for k in range(2):
        for i in range(n - 1):
            if results["orders"][i] <= results["orders"][i + 1]:
                measures.append(nested_floors(results, k * n + i, k * n + i + 1, names))
    return measures


@check("orders", "alpha_polynomial", "alpha_fourier", "episodes")
def fourier_ends_below_polynomial(results: dict) -> list[Measure]:
    """Figure 9.5's finding: at each order the Fourier basis ends with the lower value
    error (averaged over the last tenth of the episodes), by more than 4 standard
    errors of the paired difference."""
    n = len(results["orders"])
    names = labels(results)
    return [ends_below(results, n + i, i, names) for i in range(n)]


@check("alpha_polynomial", "alpha_fourier", "episodes")
def curves_approach_their_minima(results: dict) -> list[Measure]:
    """Each curve ends nearer its exact floor than its start: it has closed more than
    half the gap, by more than 4 standard errors (the floors are at most 0.008, so
    this says the final value errors are below about 0.2)."""
    return close_most_of_the_gap(results, labels(results))
