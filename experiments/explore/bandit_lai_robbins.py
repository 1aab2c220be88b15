"""Thompson sampling and KL-UCB against the Lai-Robbins asymptote on Bernoulli arms.

Lai and Robbins (1985): every uniformly good policy has
``liminf_T E[R_T] / log T >= C = sum_{a sub-optimal} (mu* - mu_a) / KL(mu_a, mu*)``;
Thompson sampling (Kaufmann, Korda and Munos, 2012) and KL-UCB (Garivier and Cappé,
2011) attain it. The figure draws the mean pseudo-regret against ``log t`` beside the
line ``C log t``, and ``R_t / log t`` rising toward ``C``. The measure itself is exact:
the pseudo-regret of a run is the sum of the gaps of its pulls, checked as such.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, below, check, fact
from tabular.experiments.harness.settings import Settings
from tabular.learn.bandit_arms import BanditArms, lai_robbins_constant
from tabular.learn.bandit_regret import kl_ucb, thompson_sampling

REPRODUCES = ("Lai and Robbins (1985) lower bound; Thompson sampling (Kaufmann et al., "
              "2012) and KL-UCB (Garivier and Cappé, 2011) on Bernoulli arms")
METHODS = {"Thompson sampling": thompson_sampling, "KL-UCB": kl_ucb}


@dataclass(frozen=True)
class Config(Settings):
    """Two Bernoulli arms of means 0.9 and 0.8 (Garivier and Cappé's first scenario's
    gap), 20,000 pulls, 200 runs."""

    best: float = 0.9
    """The best arm's mean."""
    other: float = 0.8
    """The other arm's mean."""
    steps: int = 20_000
    """The horizon T."""
    runs: int = 200
    """Independent runs averaged."""
    seed: int = 0
    """Seed of the runs' random streams (both methods see the same seed)."""

    QUICK = {"steps": 2000, "runs": 50}


def checkpoints(steps: int) -> np.ndarray:
    """About 60 log-spaced steps from 10 to ``steps`` (1-based)."""
    return np.unique(np.geomspace(10, steps, 60).round().astype(np.int64))


def run(config: Config, executor) -> dict:
    arms = BanditArms((config.best, config.other))
    gaps = config.best - np.asarray(arms.means)
    at = checkpoints(config.steps)
    out: dict = {"methods": np.array(list(METHODS)), "t": at,
                 "constant": np.array(lai_robbins_constant(arms))}
    for key, method in zip(("thompson", "kl_ucb"), METHODS.values(), strict=True):
        res = method(arms, steps=config.steps, runs=config.runs, seed=config.seed)
        out[f"{key}_pseudo"] = res.pseudo_regret[:, at - 1]  # [runs, checkpoints]
        out[f"{key}_regret"] = res.regret[:, -1]
        out[f"{key}_exact_error"] = np.array(np.abs(res.pseudo_regret[:, -1]
                                                    - res.pulls @ gaps).max())
    return out


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 2, width=5.0, height=3.6,
                             title=f"Bernoulli arms ({config.best}, {config.other}): "
                                   f"{config.runs} runs, T = {config.steps}")
    axes = np.ravel(axes)
    t, constant = results["t"], float(results["constant"])
    for i, (key, name) in enumerate(zip(("thompson", "kl_ucb"), results["methods"],
                                        strict=True)):
        mean = results[f"{key}_pseudo"].mean(axis=0)
        sem = results[f"{key}_pseudo"].std(axis=0, ddof=1) / np.sqrt(config.runs)
        color = style.PALETTE[i + 1]
        axes[0].plot(t, mean, label=name, color=color)
        axes[0].fill_between(t, mean - 2 * sem, mean + 2 * sem, color=color, alpha=0.2)
        axes[1].plot(t, mean / np.log(t), label=name, color=color)
    axes[0].plot(t, constant * np.log(t), "k--", label=f"C log t, C = {constant:.3f}")
    axes[1].axhline(constant, color="k", ls="--", label="Lai-Robbins C")
    for ax, ylabel in zip(axes, ("mean pseudo-regret (band: 2 s.e.)", "pseudo-regret / log t"),
                          strict=True):
        style.label(ax, "t", ylabel, log="x", legend=9)
    return [style.save(fig, out_dir / "bandit_lai_robbins.png")]


def table(results: dict):
    """Each method's regret / log T at the horizon and its slope over the last decade."""
    rows = []
    for key, name in zip(("thompson", "kl_ucb"), results["methods"], strict=True):
        ratio, se = _ratio(results, key)
        slope, slope_se = _last_decade_slope(results, key)
        rows.append([name, round(ratio, 3), round(se, 3), round(slope, 3), round(slope_se, 3),
                     round(float(results["constant"]), 3)])
    return ["method", "R_T / log T", "s.e.", "dR / dlog t (last decade)", "s.e.", "C"], rows


def _ratio(results: dict, key: str, column: int = -1) -> tuple[float, float]:
    """Mean pseudo-regret / log t at checkpoint ``column``, and its standard error."""
    values = results[f"{key}_pseudo"][:, column] / np.log(results["t"][column])
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(values.size))


def _last_decade_slope(results: dict, key: str) -> tuple[float, float]:
    """``(R_T - R_{T/10}) / log 10`` averaged over the runs, and its standard error."""
    t = results["t"]
    start = int(np.searchsorted(t, t[-1] / 10))
    per_run = ((results[f"{key}_pseudo"][:, -1] - results[f"{key}_pseudo"][:, start])
               / np.log(t[-1] / t[start]))
    return float(per_run.mean()), float(per_run.std(ddof=1) / np.sqrt(per_run.size))


@check()
def exact_pseudo_regret(results: dict) -> list[Measure]:
    """The pseudo-regret recorded step by step is the sum of the gaps of the pulls (a sum
    of T doubles: its rounding error is below T * 2^-52 * gap)."""
    return [below(f"{name}: |pseudo-regret - sum of gaps x pulls|, worst run",
                  measured=float(results[f"{key}_exact_error"]), bound=1e-9,
                  failure=f"{name}: the recorded pseudo-regret is not the gaps of the pulls",
                  why="float rounding of a sum of T terms")
            for key, name in zip(("thompson", "kl_ucb"), results["methods"], strict=True)]


@check()
def realised_regret_is_unbiased(results: dict) -> list[Measure]:
    """``E[R_T - pseudo_T] = 0`` (the reward noise averages out): the mean difference
    within 5 standard errors of 0."""
    measures = []
    for key, name in zip(("thompson", "kl_ucb"), results["methods"], strict=True):
        diff = results[f"{key}_regret"] - results[f"{key}_pseudo"][:, -1]
        se = diff.std(ddof=1) / np.sqrt(diff.size)
        measures.append(below(f"{name}: |mean (regret - pseudo-regret)| at T",
                              measured=abs(diff.mean()), bound=5 * se,
                              failure=f"{name}: realised and pseudo-regret differ on average",
                              why="5 standard errors"))
    return measures


@check("best", "other")
def approach_to_the_asymptote(results: dict) -> list[Measure]:
    """Lai-Robbins is a liminf: at finite T, R_T / log T may sit on either side of C.
    What the theory does say at these horizons: both regrets grow (slope over the last
    decade above 0 by 5 s.e.), and R_t / log t rises over the last decade (by more than
    2 s.e. of the rise), as it does approaching C from below. The measured ratios, slopes
    and C are in the table."""
    t, constant = results["t"], float(results["constant"])
    start = int(np.searchsorted(t, t[-1] / 10))
    measures = []
    for key, name in zip(("thompson", "kl_ucb"), results["methods"], strict=True):
        slope, slope_se = _last_decade_slope(results, key)
        measures.append(above(f"{name}: dR / dlog t over the last decade",
                              measured=slope, bound=5 * slope_se,
                              failure=f"{name}: the regret stopped growing",
                              why="5 standard errors above 0"))
        pseudo = results[f"{key}_pseudo"]
        rise = pseudo[:, -1] / np.log(t[-1]) - pseudo[:, start] / np.log(t[start])
        rise_se = rise.std(ddof=1) / np.sqrt(rise.size)
        ratio, _ = _ratio(results, key)
        measures.append(fact(f"{name}: R_t / log t from T/10 to T",
                             passed=rise.mean() > 2 * rise_se,
                             expected=f"rising (> 2 s.e.) toward C = {constant:.3f}",
                             measured=f"{ratio - rise.mean():.3f} -> {ratio:.3f} "
                                      f"(s.e. of the rise {rise_se:.3f})",
                             failure=f"{name}: R_t / log t does not approach C from below",
                             tolerance="2 standard errors"))
    return measures
