"""Figures 12.3, 12.6, 12.8: the lambda-return, TD(lambda) and true online TD(lambda) on
the 19-state random walk, RMS error against alpha for each lambda.

The offline lambda-return bootstraps from the estimate as its end-of-episode sweep has
left it (``targets="sweep"``, the book's reference code), not as the episode began: its
lambda = 0 curve is then TD(0), the n = 1 curve of Figure 7.2, and its best error lies
below n-step TD's, as the book says ("slightly better at the best values of alpha and
lambda"); with the frozen targets the two bests are equal to within the noise.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from tabular import offline_lambda_return, td_lambda, true_online_td_lambda
from tabular.experiments.book.ch07.walk_errors import early_rms
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact
from tabular.experiments.harness.settings import Settings

METHODS = {"offline lambda-return (Fig. 12.3)": functools.partial(offline_lambda_return,
                                                                 targets="sweep"),
           "TD(lambda), accumulating traces (Fig. 12.6)": td_lambda,
           "true online TD(lambda) (Fig. 12.8)": true_online_td_lambda}
#: Errors above this are drawn at the top of the plot (accumulating traces diverge).
CLIP = 0.6


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), sections 12.1, 12.2 and 12.5, Figures 12.3, 12.6 and 12.8"


@dataclass(frozen=True)
class Config(Settings):
    """Section 7.1's walk (19 states, -1 left, +1 right, gamma = 1, V = 0 at first)."""

    lams: tuple[float, ...] = (0.0, 0.4, 0.8, 0.9, 0.95, 0.975, 0.99, 1.0)
    """The lambda of each curve (the book's)."""
    alphas: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    """Constant step sizes."""
    episodes: int = 10
    """Episodes per run: the error is averaged over the first ten (the book's)."""
    runs: int = 100
    """Independent runs averaged."""
    seed: int = 0
    """Seed of the runs' random streams (every curve sees the same walks)."""

    QUICK = {"runs": 30}


def rms_errors(method: str, lam: float, alphas: tuple, episodes: int, runs: int,
               seed: int) -> dict:
    """The mean over runs of
    :func:`~tabular.experiments.book.ch07.walk_errors.early_rms` per step size (inf when a
    run diverged; an executor job)."""
    errors = []
    for alpha in alphas:
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                mean = float(early_rms(METHODS[method], alpha, episodes, runs, seed,
                                       lam=lam).mean())
        except FloatingPointError:  # a run's values left float64: the learner says so
            mean = np.inf
        errors.append(mean if np.isfinite(mean) else np.inf)
    return {"errors": np.array(errors)}


def run(config: Config, executor) -> dict:
    jobs = [{"method": m, "lam": lam, "alphas": config.alphas, "episodes": config.episodes,
             "runs": config.runs, "seed": config.seed} for m in METHODS for lam in config.lams]
    results = executor.map(rms_errors, jobs, desc="methods x lambdas")
    errors = np.array([r["errors"] for r in results]).reshape(len(METHODS), len(config.lams),
                                                              len(config.alphas))
    return {"methods": np.array(list(METHODS)), "lams": np.array(config.lams),
            "alphas": np.array(config.alphas), "errors": errors}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(3, 1, width=4.6, height=3.8,
                             title="The 19-state random walk, first 10 episodes: Figures "
                                   "12.3, 12.6 and 12.8")
    for i, method in enumerate(results["methods"]):
        ax = axes[0, i]
        for j, lam in enumerate(results["lams"]):
            ax.plot(results["alphas"], np.minimum(results["errors"][i, j], CLIP),
                    label=f"lambda = {lam:g}", color=style.PALETTE[j % len(style.PALETTE)])
        ax.set_ylim(0.2, CLIP)
        ax.set_xlabel(r"$\alpha$")
        ax.set_ylabel("average RMS error over 19 states")
        ax.set_title(str(method), fontsize=9)
    axes[0, 0].legend(fontsize=7)
    return [style.save(fig, out_dir / "lambda_walk.png")]


@check("lams", "alphas", "episodes")
def book_findings(results: dict) -> list[Measure]:
    """The chapter's findings: each method's best error is near the n-step methods'
    0.25 at an intermediate lambda; true online TD(lambda) matches the offline
    lambda-return's best; accumulating traces blow up at large alpha when lambda is
    near 1, where the other two stay bounded."""
    measures = []
    offline, accumulating, true_online = results["errors"]
    lams = results["lams"]
    for name, errors in zip(results["methods"], results["errors"], strict=True):
        best = errors.min()
        lam = lams[np.unravel_index(errors.argmin(), errors.shape)[0]]
        measures.append(fact(f"{name}: best RMS error, at lambda",
                             passed=0.2 < best < 0.3 and 0.4 <= lam <= 0.95,
                             expected="in (0.2, 0.3), at lambda in [0.4, 0.95]",
                             measured=f"{best:.3f} at lambda = {lam:g}",
                             failure=f"{name}: best error {best:.3f} at lambda = {lam:g}, "
                                     "not about 0.25 at an intermediate lambda",
                             tolerance="the book's figures"))
    measures.append(fact("best error: true online TD(lambda) against the offline lambda-return",
                         passed=true_online.min() <= offline.min() + 0.01, expected="not above",
                         measured=f"{true_online.min():.3f} vs "
                                  f"{offline.min():.3f}",
                         failure=f"true online TD(lambda)'s best {true_online.min():.3f} is "
                                 f"above the offline lambda-return's {offline.min():.3f}",
                         tolerance="+ 0.01"))
    near_one = lams >= 0.9
    measures.append(fact("accumulating traces at alpha = 1, lambda >= 0.9: largest error",
                         passed=(accumulating[near_one, -1] > CLIP).any(),
                         expected=f"> {CLIP} (blows up)",
                         measured=f"{accumulating[near_one, -1].max():.3g}",
                         failure="accumulating traces do not blow up at alpha = 1 for "
                                 "lambda >= 0.9",
                         tolerance="the clip"))
    measures.append(fact("true online TD(lambda): largest error over the sweep",
                         passed=np.isfinite(true_online).all() and true_online.max() < 1.0,
                         expected="finite, < 1", measured=f"{true_online.max():.3g}",
                         failure="true online TD(lambda) is not bounded over the sweep",
                         tolerance="bounded"))
    return measures


@check("lams", "alphas", "episodes")
def lambda_0_is_td0(results: dict) -> list[Measure]:
    """The offline lambda-return with lambda = 0 is TD(0) number for number, as TD(lambda)
    with lambda = 0 is: each target ``R + V(S')`` reads ``V`` as TD(0) would, the
    episode's earlier updates in (the reading of the book's code)."""
    offline, accumulating = results["errors"][:2, list(results["lams"]).index(0.0)]
    gap = float(np.abs(offline - accumulating).max())
    return [fact("lambda = 0: offline lambda-return - TD(lambda), largest over alpha",
                 passed=gap == 0.0, expected="0 (bit for bit)", measured=f"{gap:.3g}",
                 failure=f"the offline lambda-return at lambda = 0 is {gap:.3g} from TD(0)")]
