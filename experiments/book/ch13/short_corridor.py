"""Example 13.1 short corridor: REINFORCE with three step sizes vs v*(s0) (S&B Fig. 13.1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    reinforce,
)
from tabular.experiments.book.ch13.corridor_setup import (
    K_SE,
    MAX_STUCK,
    STUCK,
    draw_returns,
    exact_optimum,  # noqa: F401  (one of this figure's checks)
    mean_se,
    model,
    shared_policy,
    shared_policy_values,
    stuck_runs,
)
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact
from tabular.experiments.harness.settings import Settings

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 13.1, Figure 13.1"


@dataclass(frozen=True)
class Config(Settings):
    """Figure 13.1: one shared pair of logits (the states look alike), gamma = 1."""

    alphas: tuple[float, ...] = (2.0 ** -12, 2.0 ** -13, 2.0 ** -14)
    """REINFORCE step sizes (the book's)."""
    episodes: int = 1000
    """Episodes per run."""
    runs: int = 100
    """Independent runs averaged."""
    initial_right: float = 0.05
    """Initial probability of "right" (the book starts near the left-leaning policy)."""
    seed: int = 0
    """Seed of the runs' random streams (every step size uses the same seed)."""

    QUICK = {"runs": 50}


def learn(alpha: float, episodes: int, runs: int, p_right: float, seed: int) -> dict:
    """REINFORCE's returns per episode, ``[runs, episodes]`` (an executor job)."""
    mdp = model()
    result = reinforce(mdp, shared_policy(mdp, p_right), gamma=1.0, episodes=episodes,
                       alpha=alpha, seed=seed, runs=runs)
    return {"returns": result.episode_returns}


def run(config: Config, executor) -> dict:
    jobs = [{"alpha": a, "episodes": config.episodes, "runs": config.runs,
             "p_right": config.initial_right, "seed": config.seed} for a in config.alphas]
    curves = executor.map(learn, jobs, desc="step sizes")
    return {"alphas": np.array(config.alphas),
            "returns": np.array([c["returns"] for c in curves]), **shared_policy_values()}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.4, height=4.0,
                             title="Example 13.1 short corridor with switched actions")
    ax = axes[0, 0]
    draw_returns(ax, results["returns"],
                 [f"$\\alpha = 2^{{{np.log2(alpha):.0f}}}$" for alpha in results["alphas"]],
                 float(results["v_star"]))
    ax.set_title("Figure 13.1: REINFORCE (no probability floor; bands: 95% CI)")
    ax.legend(loc="lower right")
    ax = axes[0, 1]
    ax.plot(results["p_grid"], results["v_grid"], color=style.PALETTE[0])
    ax.axvline(float(results["p_star"]), color="black", linestyle=":",
               label=f"best: p(right) = {float(results['p_star']):.2f}")
    ax.set_ylim(-100, 0)
    ax.set_xlabel("probability of right (the same in every state)")
    ax.set_ylabel("$v_\\pi(s_0)$, exact (return units)")
    ax.set_title("value of each shared policy")
    ax.legend(loc="lower center", bbox_to_anchor=(0.3, 0.02))  # clear of the line
    return [style.save(fig, out_dir / "short_corridor.png")]


@check()
def nobody_beats_the_optimum(results: dict) -> list[Measure]:
    """No step size's late return (each run's mean over its last 100 episodes, averaged
    over the runs not stuck) lies above the exact v*(s0) by more than K_SE of its
    standard errors, whatever the settings: every policy's expected return is at most
    v*, and the runs are independent. (Leaving out the stuck runs, far below, can only
    raise the mean.)"""
    v_star = float(results["v_star"])
    measures = []
    for alpha, returns in zip(results["alphas"], results["returns"], strict=True):
        late_of_run = returns[:, -100:].mean(axis=1)
        late, se = mean_se(late_of_run[late_of_run >= STUCK])
        measures.append(below(f"alpha = {alpha:g}: late return", measured=late,
                              bound=v_star + K_SE * se,
                              failure=f"the late return {late:.2f} beats v* = {v_star:.2f}: the "
                                      "ground truth is wrong",
                              why=f"v* + {K_SE:g} standard errors"))
    return measures


@check("alphas", "episodes", "initial_right")
def reinforce_climbs(results: dict) -> list[Measure]:
    """REINFORCE with the book's step sizes climbs to within a few units of v*, apart
    from the few runs that got stuck without the book's probability floor."""
    measures = []
    v_star = float(results["v_star"])
    for alpha, returns in zip(results["alphas"], results["returns"], strict=True):
        stuck = stuck_runs(returns)
        measures.append(below(f"alpha = {alpha:g}: fraction of runs stuck", measured=stuck.mean(),
                              bound=MAX_STUCK,
                              failure=f"alpha = {alpha:g}: {stuck.sum()} of {len(stuck)} "
                                      "runs stuck (expected: a few percent at 2^-12)",
                              why="a few percent"))
        first = returns[~stuck, :50].mean()
        last = returns[~stuck, -100:].mean()
        # the mean of 50 runs has a standard error of about 0.2: the smallest step size,
        # still climbing near -15, lies many of them inside v* - 5
        measures.append(fact(f"alpha = {alpha:g}: late return (first 50 episodes)",
                             passed=last > first and last > v_star - 5.0,
                             expected=f"rising, above v* - 5 = {v_star - 5.0:.2f}",
                             measured=f"{last:.2f} ({first:.2f})",
                             failure=f"alpha = {alpha:g}: late return {last:.1f} (first 50 "
                                     f"episodes: {first:.1f}) is not within 5 of v* = {v_star:.1f}",
                             tolerance="5 (Figure 13.1)"))
    return measures
