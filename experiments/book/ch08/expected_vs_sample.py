"""Figure 8.7: expected against sample updates, RMS error against max computations, by b."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact, within
from tabular.experiments.harness.settings import Settings

#: The error of the initial estimate (the book's assumption: every curve starts at 1).
INITIAL_ERROR = 1.0


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), section 8.5, Figure 8.7"


@dataclass(frozen=True)
class Config(Settings):
    """Section 8.5: one state-action pair whose b next states are equally likely; their
    values are drawn from N(0, 1) for each run and are correct, so the pair's true value
    is their mean. An expected update gets it exactly after b max computations (one per
    next state); a sample update costs one, with the sample-average step 1/t."""

    branchings: tuple[int, ...] = (2, 10, 100, 1000, 10000)
    """The branching factors b of the curves (the book's)."""
    horizon: int = 2
    """Each curve runs to this many times b computations (the book's 2b)."""
    runs: int = 100
    """Independent runs per b, each with its own next-state values."""
    seed: int = 0
    """Seed of the runs' draws (each b its own stream)."""

    QUICK = {"runs": 30}


def closed_form(branching: int, t) -> np.ndarray:
    """The RMS error of sample updates after ``t >= 1`` of them, ``sqrt((b - 1) / (b t))``
    (section 8.5): the variance of one sampled next-state value around the mean of the
    ``b`` values is ``(b - 1) / b`` in expectation, and a sample average of ``t`` of them
    divides it by ``t``."""
    return np.sqrt((branching - 1) / (branching * np.asarray(t, dtype=np.float64)))


def sample_errors(branching: int, updates: int, runs: int, seed: int) -> dict:
    """Sample updates with step ``1/t`` on ``runs`` independent pairs of ``branching`` next
    states: the squared error after ``t = 0 .. updates`` of them, its mean over runs
    ``mse [updates + 1]`` and the standard error of that mean ``mse_se`` (an executor
    job; same seed, same numbers)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, branching]))
    values = rng.standard_normal((runs, branching))  # max_a' Q(s', a') of each next state
    true_value = values.mean(axis=1)
    picks = rng.integers(0, branching, (updates, runs))  # the next state each update samples
    estimate = true_value + INITIAL_ERROR
    squared = np.empty((updates + 1, runs))
    squared[0] = (estimate - true_value) ** 2
    for t in range(1, updates + 1):
        target = values[np.arange(runs), picks[t - 1]]
        estimate = estimate + (target - estimate) / t  # Q <- Q + alpha [target - Q], alpha = 1/t
        squared[t] = (estimate - true_value) ** 2
    return {"mse": squared.mean(axis=1),
            "mse_se": squared.std(axis=1, ddof=1) / np.sqrt(runs)}


def run(config: Config, executor) -> dict:
    jobs = [{"branching": b, "updates": config.horizon * b, "runs": config.runs,
             "seed": config.seed} for b in config.branchings]
    errors = executor.map(sample_errors, jobs, desc="b")
    results = {"branchings": np.array(config.branchings), "runs": np.array(config.runs)}
    for b, e in zip(config.branchings, errors, strict=True):
        results[f"mse_{b}"] = e["mse"]
        results[f"mse_se_{b}"] = e["mse_se"]
    return results


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 1, width=6.4, height=4.6,
                             title="Figure 8.7: expected vs sample updates")
    ax = axes[0, 0]
    horizon = config.horizon
    for i, b in enumerate(results["branchings"]):
        t = np.arange(results[f"mse_{b}"].shape[0])
        color = style.PALETTE[i % len(style.PALETTE)]
        ax.plot(t / b, np.sqrt(results[f"mse_{b}"]), color=color,
                label=f"sample updates, b = {b}")
        ax.plot(t[1:] / b, closed_form(int(b), t[1:]), color=color, linestyle=":",
                linewidth=1.0)
    ax.plot([0.0, 1.0, 1.0, horizon], [INITIAL_ERROR, INITIAL_ERROR, 0.0, 0.0],
            color="black", linewidth=2.0, label="expected updates (any b)")
    ax.set_xlim(0.0, horizon)
    ax.set_ylim(0.0, 1.05)
    ax.set_xticks(range(horizon + 1), ["0"] + [f"{k}b" for k in range(1, horizon + 1)])
    ax.set_xlabel(r"number of $\max_{a'} Q(s', a')$ computations")
    ax.set_ylabel("RMS error in value estimate")
    ax.set_title(f"{int(results['runs'])} runs per b; dotted: "
                 r"$\sqrt{(b-1)/(b\,t)}$ after $t$ sample updates")
    ax.legend(fontsize=8)
    return [style.save(fig, out_dir / "expected_vs_sample.png")]


def checkpoints(branching: int, updates: int) -> list[int]:
    """The sample-update counts ``t >= 1`` at b/10, b/2, b and 2b computations (those
    within ``updates``), without repeats."""
    wanted = (max(1, round(f * branching)) for f in (0.1, 0.5, 1.0, 2.0))
    return sorted({t for t in wanted if t <= updates})


def table(results: dict):
    """The simulated and closed-form RMS errors at a few fractions of b."""
    rows = []
    for b in results["branchings"]:
        mse = results[f"mse_{b}"]
        for t in checkpoints(int(b), mse.shape[0] - 1):
            rows.append([int(b), t, round(float(t / b), 3), round(float(np.sqrt(mse[t])), 4),
                         round(float(closed_form(int(b), t)), 4)])
    return ["b", "sample updates t", "t / b", "RMS error (simulated)",
            "sqrt((b-1)/(b t))"], rows


@check()
def closed_form_error(results: dict) -> list[Measure]:
    """Sample updates follow ``sqrt((b - 1) / (b t))`` (section 8.5), for any b."""
    measures = []
    for b in (int(b) for b in results["branchings"]):
        mse, se = results[f"mse_{b}"], results[f"mse_se_{b}"]
        for t in checkpoints(b, mse.shape[0] - 1):
            theory = (b - 1) / (b * t)
            # 4 standard errors of the mean over runs, at 4 correlated points per curve
            measures.append(within(f"b = {b}: mean squared error after {t} sample updates",
                                   measured=mse[t], expected=theory, tolerance=4.0 * se[t] + 1e-12,
                                   failure=f"b = {b}: mean squared error {mse[t]:.4g} after "
                                           f"{t} sample updates is not within 4 standard "
                                           f"errors ({se[t]:.2g}) of (b - 1) / (b t) = "
                                           f"{theory:.4g}",
                                   why="4 standard errors"))
    return measures


@check()
def samples_against_expected(results: dict) -> list[Measure]:
    """Section 8.5's findings: for large b a small fraction of b sample updates brings
    the error far below the initial one, while an expected update needs all b
    computations; for b = 2 the expected update, exact after b, is far better than the
    2b samples of the same cost."""
    measures = []
    for b in (int(b) for b in results["branchings"]):
        rms = np.sqrt(results[f"mse_{b}"])
        if b >= 100:
            measures.append(fact(f"b = {b}: RMS error after b/5 = {b // 5} sample updates / "
                                 "initial error",
                                 passed=rms[b // 5] < 0.3 * INITIAL_ERROR, expected="< 0.3",
                                 measured=f"{rms[b // 5] / INITIAL_ERROR:.3g}",
                                 failure=f"b = {b}: the RMS error after b/5 = {b // 5} sample "
                                         f"updates is {rms[b // 5]:.3f}, not below 0.3 of the "
                                         "initial error",
                                 tolerance="Figure 8.7"))
        last = min(2 * b, rms.shape[0] - 1)
        if b == 2:
            measures.append(fact(
                f"b = 2: RMS error after {last} sample updates", passed=rms[last] > 0.25,
                expected="> 0.25 (the expected update is exact)", measured=f"{rms[last]:.3f}",
                failure=f"b = 2: the RMS error after {last} sample updates is "
                        f"{rms[last]:.3f}; they should still be far from the exact "
                        "expected update", tolerance="Figure 8.7"))
    return measures
