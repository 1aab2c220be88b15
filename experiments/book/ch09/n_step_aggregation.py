"""Figure 9.2 right: n-step semi-gradient TD with state aggregation on the 1000-state
random walk, the RMS error over the first 10 episodes against alpha for each n, above
the exact best estimate the twenty groups allow.

The book's settings (Sutton & Barto 2018, Example 9.2, section 9.4): for this figure
"we switched the state aggregation to 20 groups of 50 states each", so that a typical
jump of 50 states is one group, as one state is in the 19-state walk of Figure 7.2, and
the measure is "an unweighted average of the RMS error over all states and over the
first 10 episodes"; the data are averages over 100 runs (the figure's caption).
Figure 9.1 and Figure 9.2 left use ten groups of 100 states.

The walk's episodes do not depend on the weights (the policy is fixed), so every n and
step size sees the same episodes of each run: differences between curves are paired
by run, and their standard errors are those of the per-run differences.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from tabular.experiments.book.ch09.walk_curves import K_SE, paired_se
from tabular.experiments.book.ch09.walk_setup import walk
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, check, fact, inside, standard_error
from tabular.experiments.harness.settings import Settings
from tabular.experiments.harness.sweeps import best_step_sizes
from tabular.linear import (
    RewardProcess,
    reward_process,
    semi_gradient_td,
    state_aggregation,
    ve_minimiser,
)

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("Sutton & Barto (2018), Figure 9.2 right (n-step semi-gradient TD with state "
              "aggregation into 20 groups of 50 states on the 1000-state walk), above the "
              "exact least RMS error of the twenty groups")
#: The n from which the book's curves leave the top of the plot at large alpha.
LARGE_N = 16
#: Example 9.2's aggregation for this figure: 20 groups of 50 states.
GROUPS, GROUP_STATES = 20, 50
#: The book's y axis for this figure (and Figure 7.2's): every curve's lowest point is
#: drawn inside it.
BOOK_AXIS = (0.25, 0.55)


def twenty_groups():
    """Example 9.1's walk, its policy (one action) and Example 9.2's 20 groups of 50
    states (the end states join their neighbours; their rows are never read)."""
    mdp, policy, _ = walk()
    groups = np.r_[0, np.arange(1000) // GROUP_STATES, GROUPS - 1]
    return mdp, policy, state_aggregation(groups)


@dataclass(frozen=True)
class Config(Settings):
    """Example 9.1's walk and Example 9.2's 20 groups of 50 states, gamma = 1, w = 0 at
    first."""

    n_steps: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
    """The n of each curve (the book's)."""
    alphas: tuple[float, ...] = (0.0, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7,
                                 0.8, 0.9, 1.0)
    """Constant step sizes (the book's axis, 0 to 1; alpha = 0 leaves w at 0: the error of
    the initial guess, computed exactly)."""
    episodes: int = 10
    """Episodes per run: the error is averaged over the first ten (the book's)."""
    runs: int = 100
    """Independent runs averaged (the book's)."""
    seed: int = 0
    """Seed of the runs' random streams (every n and step size uses the same)."""

    QUICK = {"runs": 30}


def rms_errors(n_step: int, alphas: tuple, episodes: int, runs: int, seed: int,
               v: np.ndarray) -> dict:
    """Per step size and run, the RMS error over the 1000 states (unweighted, the book's
    measure) from ``v``, their ``v_pi``, after each of the first ``episodes`` episodes
    of n-step semi-gradient TD, averaged over those episodes: ``[alphas, runs]`` (an
    executor job)."""
    mdp, policy, X = twenty_groups()
    errors = []
    for alpha in alphas:
        if alpha == 0.0:  # w never moves from 0
            errors.append(np.full(runs, np.sqrt(np.mean(v ** 2))))
            continue
        w = semi_gradient_td(mdp, policy, X, episodes=episodes, alpha=alpha, n_step=n_step,
                             runs=runs, seed=seed, history=True).w_history
        V = w @ X[1:-1].T  # [runs, episodes, states]
        errors.append(np.sqrt(np.mean((V - v) ** 2, axis=2)).mean(axis=1))
    return {"errors": np.array(errors)}


def best_rms(process: RewardProcess, X: np.ndarray) -> float:
    """The least RMS error over the 1000 states of any weights of the groups ``X``: the
    VE minimiser (eq. 9.1) under the uniform distribution over the states, the RMS
    error's weighting (each group's weight the mean of ``v_pi`` over its states)."""
    inner = np.r_[0.0, np.ones(process.n_states - 2), 0.0]
    uniform = dataclasses.replace(process, mu=inner / inner.sum())
    w = ve_minimiser(uniform, X)
    return float(np.sqrt(np.mean((X[1:-1] @ w - process.v[1:-1]) ** 2)))


def run(config: Config, executor) -> dict:
    mdp, policy, X = twenty_groups()
    process = reward_process(mdp, policy, gamma=1.0)
    jobs = [{"n_step": n, "alphas": config.alphas, "episodes": config.episodes,
             "runs": config.runs, "seed": config.seed, "v": process.v[1:-1]}
            for n in config.n_steps]
    out = executor.map(rms_errors, jobs, desc="n")
    return {"n_steps": np.array(config.n_steps), "alphas": np.array(config.alphas),
            "errors": np.array([o["errors"] for o in out]),  # [n, alpha, run]
            "best_rms": np.array(best_rms(process, X)),
            "group_sizes": X[1:-1].sum(axis=0)}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 1, width=7.4, height=4.6,
                             title="Figure 9.2 right: n-step semi-gradient TD, 20 groups "
                                   "of 50 states")
    ax = axes[0, 0]
    alphas = results["alphas"]
    runs = results["errors"].shape[2]
    for i, n in enumerate(results["n_steps"]):
        style.mean_band(ax, alphas, results["errors"][i].T, f"n = {n}",
                        style.PALETTE[i % len(style.PALETTE)],
                        linestyle="-" if i < len(style.PALETTE) else "--")  # colours recur
    best = float(results["best_rms"])
    ax.axhline(best, color="0.3", linestyle="--", linewidth=1,
               label=f"exact: least RMS error\nof the 20 groups ({best:.3f})")
    ax.set_ylim(0.0, 0.6)
    ax.set_xlabel(r"$\alpha$")
    ax.set_ylabel(f"average RMS error over 1000 states\nand first {config.episodes} episodes")
    ax.set_title(f"{runs} runs per point (band: 95% CI; the book's axis: 0.25 to 0.55)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return [style.save(fig, out_dir / "n_step_aggregation.png")]


def table(results: dict):
    """The best step size and error of each n."""
    return best_step_sizes(results)


def _best(results: dict) -> tuple[np.ndarray, np.ndarray]:
    """Each n's per-run errors at its best step size ``[n, runs]``, and that mean ``[n]``."""
    errors = results["errors"]
    at = errors.mean(axis=2).argmin(axis=1)
    per_run = errors[np.arange(errors.shape[0]), at]
    return per_run, per_run.mean(axis=1)


@check()
def above_the_best_aggregate(results: dict) -> list[Measure]:
    """No run at any n and step size has an RMS error below the exact least RMS error of
    the 20 groups of 50 states (each group's weight the mean of ``v_pi`` over it, the
    best any weights can do): a hard bound, whatever the settings."""
    lowest = float(results["errors"].min())
    best = float(results["best_rms"])
    return [above("lowest RMS error of any run, n and step size", measured=lowest, bound=best,
                  failure=f"a run's RMS error {lowest:.4f} is below the exact least RMS error "
                  f"{best:.4f} of the groups", why="exact: the best weights' error")]


@check("n_steps", "alphas", "episodes")
def intermediate_n_is_best(results: dict) -> list[Measure]:
    """Figure 9.2 right's finding, as Figure 7.2's: an intermediate n has the lowest
    error at its best step size; n = 1 does worse, and the largest n worse by more
    than 4 standard errors of the paired difference. (n = 1's gap is small here, 0.007
    or about 5 paired standard errors at the book's 100 runs, so it is held to be
    above, without a margin.)"""
    per_run, best = _best(results)
    n = results["n_steps"]
    top = int(best.argmin())
    measures = [
        fact(
            "n with the lowest error",
            passed=0 < top < n.size - 1,
            expected=f"between {n[0]} and {n[-1]}",
            measured=str(n[top]),
            failure=f"n = {n[top]} has the lowest error; the book's best n is intermediate",
            tolerance="intermediate",
        )
    ]
    for i, margin in ((0, 0.0), (n.size - 1, K_SE)):
        gap = float(best[i] - best[top])
        se = paired_se(per_run[i], per_run[top]) if i != top else 0.0
        why = (f"{K_SE:g} standard errors of the paired difference" if margin else
               f"above ({gap / se:.1f} paired standard errors)" if se > 0 else "above")
        measures.append(
            above(
                f"n = {n[i]}'s best error - the lowest (n = {n[top]})",
                measured=gap,
                bound=margin * se,
                failure=f"n = {n[i]}'s best error {best[i]:.4f} is not "
                f"above the lowest {best[top]:.4f}",
                why=why,
            )
        )
    return measures


@check("alphas", "episodes")
def large_steps_blow_up_large_n(results: dict) -> list[Measure]:
    """At the largest step size, every n >= 16 ends above the error of the initial
    weights (alpha = 0, exactly the RMS of ``v_pi``), by more than 4 standard errors:
    its curve leaves the top of the book's plot."""
    errors, alphas = results["errors"], results["alphas"]
    start = int(np.flatnonzero(alphas == 0.0)[0]) if (alphas == 0.0).any() else None
    if start is None:
        return ["alpha = 0 (the error of the initial weights) is not among the step sizes"]
    initial = float(errors[0, start, 0])
    measures = []
    for i, n in enumerate(results["n_steps"]):
        if n < LARGE_N:
            continue
        last = errors[i, -1]
        rise = float(last.mean() - initial)
        measures.append(above(f"n = {n}, alpha = {alphas[-1]:g}: error - the initial error",
                              measured=rise, bound=K_SE * standard_error(last),
                              failure=f"n = {n} at alpha = {alphas[-1]:g} does not blow up: its "
                              f"error {last.mean():.4f} is not above the initial "
                              f"{initial:.4f}", why=f"{K_SE:g} standard errors"))
    return measures


@check()
def the_books_aggregation(results: dict) -> list[Measure]:
    """Example 9.2's setting for this figure: the 1000 states fall into 20 groups of 50
    states each (not Figure 9.1's ten of 100)."""
    sizes = results["group_sizes"]
    return [
        fact(
            "groups of the 1000 states",
            passed=sizes.size == GROUPS,
            expected=str(GROUPS),
            measured=str(sizes.size),
            failure=f"{sizes.size} groups, not the book's {GROUPS}",
            tolerance="the book's",
        ),
        fact(
            "states per group",
            passed=bool((sizes == GROUP_STATES).all()),
            expected=str(GROUP_STATES),
            measured=f"{int(sizes.min())} to {int(sizes.max())}",
            failure=f"groups of {int(sizes.min())} to {int(sizes.max())} states, not the book's "
            f"{GROUP_STATES}",
            tolerance="the book's",
        ),
    ]


@check("n_steps", "alphas", "episodes")
def lowest_points_inside_the_books_axis(results: dict) -> list[Measure]:
    """Figure 9.2 right draws every curve's lowest point inside its y axis, 0.25 to 0.55
    (as Figure 7.2): each n's mean RMS error at its best step size lies there."""
    _, best = _best(results)
    low, high = BOOK_AXIS
    return [
        inside(
            f"n = {n}: mean RMS error at the best step size",
            measured=float(b),
            low=low,
            high=high,
            failure=f"n = {n}'s lowest error {b:.4f} is outside the book's axis {low} to {high}",
            why="the book's y axis",
        )
        for n, b in zip(results["n_steps"], best, strict=True)
    ]
