"""Example 9.1 1000-state random walk: gradient MC and semi-gradient TD(0) with state
aggregation, against their exact fixed points (S&B Figs. 9.1 and 9.2 left)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.book.ch09.walk_setup import walk
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import check
from tabular.experiments.harness.settings import Settings
from tabular.linear import (
    gradient_mc,
    reward_process,
    semi_gradient_td,
    td_fixed_point,
    value_error,
    ve_minimiser,
)

REPRODUCES = ("Sutton & Barto (2018), Example 9.1: Figure 9.1 (gradient MC) and Figure 9.2 "
              "left (semi-gradient TD(0)), with the exact VE minimiser and TD fixed point")
LEARNERS = {"MC": gradient_mc, "TD(0)": semi_gradient_td}
#: How far off the fixed points the probe must see a nonzero mean update.
OFFSET = 0.06
#: Figure 9.1's distribution axis: mu at the start state 500 and at its neighbours.
BOOK_MU = {"start": 0.0137, "beside": 0.0017}


@dataclass(frozen=True)
class Config(Settings):
    """Example 9.1: 1000 states, jumps of up to 100 either way, -1 left, +1 right, ten
    groups of 100 states (one weight each)."""

    episodes: int = 100_000
    """Episodes per run (the book's 100,000)."""
    alpha_mc: float = 2e-5
    """Gradient MC's step size (Figure 9.1's)."""
    alpha_td: float = 2e-4
    """Semi-gradient TD(0)'s step size (Figure 9.2 left)."""
    runs: int = 8
    """Independent runs; the figure shows their mean, the checks use their spread."""
    probe_runs: int = 100
    """Runs of the expected-update probe (see the check exact_fixed_points)."""
    probe_episodes: int = 2000
    """Episodes of each probe run."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {"episodes": 10_000, "alpha_mc": 2e-4, "alpha_td": 2e-3, "runs": 2,
             "probe_runs": 20, "probe_episodes": 1000}


def learn(method: str, alpha: float, episodes: int, runs: int, seed: int,
          initial_w=0.0) -> dict:
    """The weights of every run of ``method`` (an executor job)."""
    mdp, policy, X = walk()
    result = LEARNERS[method](mdp, policy, X, episodes=episodes, alpha=alpha, runs=runs,
                              seed=seed, initial_w=initial_w)
    return {"w": result.w}


def run(config: Config, executor) -> dict:
    mdp, policy, X = walk()
    process = reward_process(mdp, policy, gamma=1.0)
    exact = {"MC": ve_minimiser(process, X), "TD(0)": td_fixed_point(process, X)}
    alphas = {"MC": config.alpha_mc, "TD(0)": config.alpha_td}
    # the probe: started at the fixed point (and OFFSET off it) with a step too small to
    # move the weights, (w - w0) / alpha sums each run's update direction at w0
    probe_alpha, offsets = 1e-9, (0.0, OFFSET)
    jobs = [{"method": m, "alpha": alphas[m], "episodes": config.episodes, "runs": config.runs,
             "seed": config.seed} for m in LEARNERS]
    jobs += [{"method": m, "alpha": probe_alpha, "episodes": config.probe_episodes,
              "runs": config.probe_runs,
              "seed": config.seed + 1, "initial_w": exact[m] + off}
             for m in LEARNERS for off in offsets]
    out = executor.map(learn, jobs, desc="learners")
    learned = {m: out[i]["w"] for i, m in enumerate(LEARNERS)}
    z = []
    for i, job in enumerate(jobs[len(LEARNERS):], start=len(LEARNERS)):
        g = (out[i]["w"] - job["initial_w"]) / probe_alpha
        z.append(g.mean(axis=0) / (g.std(axis=0, ddof=1) / np.sqrt(g.shape[0])))
    inner = slice(1, -1)
    return {
        "v": process.v[inner], "mu": process.mu[inner],
        "w_mc": learned["MC"], "w_td": learned["TD(0)"],
        "w_ve": exact["MC"], "w_fixed_td": exact["TD(0)"],
        "ve": np.array([value_error(process, X, exact["MC"]),
                        value_error(process, X, exact["TD(0)"]),
                        value_error(process, X, learned["MC"].mean(axis=0)),
                        value_error(process, X, learned["TD(0)"].mean(axis=0))]),
        "probe_z": np.array(z).reshape(len(LEARNERS), len(offsets), -1),
    }


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.6, height=4.0,
                             title="Example 9.1: state aggregation on the 1000-state walk")
    states = np.arange(1, results["v"].size + 1)
    groups = np.repeat(np.arange(10), 100)
    for ax, method, learned, exact, figure in (
            (axes[0, 0], "MC", results["w_mc"], results["w_ve"], "Figure 9.1"),
            (axes[0, 1], "TD(0)", results["w_td"], results["w_fixed_td"], "Figure 9.2 left")):
        ax.plot(states, results["v"], color="#000000", label="true value $v_\\pi$")
        ax.plot(states, learned.mean(axis=0)[groups], color=style.color(method),
                label=f"learned ({learned.shape[0]} runs' mean)")
        ax.plot(states, exact[groups], "--", color="#999999", label=(
            "exact VE minimiser" if method == "MC" else "exact TD fixed point (eq. 9.12)"))
        ax.set_xlabel("state")
        ax.set_ylabel("value scale")
        name = "gradient MC" if method == "MC" else "semi-gradient TD(0)"
        ax.set_title(f"{figure}: {name}")
        ax.legend(loc="upper left", fontsize=9)
    ax = axes[0, 0].twinx()
    ax.fill_between(states, results["mu"], color="#CCCCCC", alpha=0.5, step="mid")
    ax.set_ylabel("distribution $\\mu$ (eq. 9.2-9.3)")
    ax.set_ylim(0, 3 * results["mu"].max())
    axes[0, 0].set_zorder(ax.get_zorder() + 1)
    axes[0, 0].patch.set_visible(False)
    return [style.save(fig, out_dir / "state_aggregation.png")]


@check()
def exact_fixed_points(results: dict) -> list[str]:
    """At the exact VE minimiser (for gradient MC) and TD fixed point (for TD(0)), the
    mean sampled update over independent runs is 0 within 5 standard errors in every
    weight; OFFSET away from them it is not (the probe can tell)."""
    failures = []
    for i, method in enumerate(LEARNERS):
        at, off = np.abs(results["probe_z"][i])
        if at.max() >= 5.0:
            failures.append(f"{method}'s mean update at its exact fixed point is "
                            f"{at.max():.1f} standard errors from 0")
        if off.max() <= 5.0:
            failures.append(f"{method}'s probe cannot see weights {OFFSET} off the fixed point "
                            f"({off.max():.1f} standard errors)")
    return failures


@check()
def distribution(results: dict) -> list[str]:
    """The on-policy distribution (eq. 9.2-9.3) is a distribution over the 1000 states,
    peaked at the start state 500 with the values Figure 9.1's axis marks: 0.0137 there
    and 0.0017 beside it (to the 4 decimals printed)."""
    mu = results["mu"]
    failures = []
    if abs(mu.sum() - 1.0) > 1e-12:
        failures.append(f"mu sums to {mu.sum()!r}")
    start = int(np.argmax(mu))
    if start + 1 != 500:
        failures.append(f"mu peaks at state {start + 1}, not at the start 500")
    for what, value in (("start", mu[start]), ("beside", mu[start + 1])):
        if abs(value - BOOK_MU[what]) > 5e-5:
            failures.append(f"mu {what} the start is {value:.5f}, the book's {BOOK_MU[what]}")
    return failures


@check("episodes", "alpha_mc", "alpha_td", "runs")
def learned_values(results: dict) -> list[str]:
    """The VE ordering of section 9.4 at the book's settings: VE(w_VE) < VE(w_TD) exactly,
    and of the learned estimates gradient MC's has the lower VE (the asymptotic TD
    values of Figure 9.2 are flatter than MC's). The learned weights are drawn beside
    their exact fixed points; constant step sizes leave each a bias of order alpha, so
    their distance is shown, not checked (exact_fixed_points checks the fixed points)."""
    ve_min, ve_td, ve_mc_learned, ve_td_learned = results["ve"]
    failures = []
    if not ve_min < ve_td:
        failures.append(f"VE(w_VE) = {ve_min:.5f} is not below VE(w_TD) = {ve_td:.5f}")
    if not ve_mc_learned < ve_td_learned:
        failures.append(f"gradient MC's VE {ve_mc_learned:.5f} is not below TD(0)'s "
                        f"{ve_td_learned:.5f}")
    return failures
