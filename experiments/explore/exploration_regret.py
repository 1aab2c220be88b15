"""Regret against T for the tabular explorers on RiverSwim and DeepSea, exact: each
episode's regret is V*(s0) - V^{pi_k}(s0) of the policy the learner followed, by
policy evaluation. Fitted log-log slopes against the sqrt(T) order of the bounds and the
linear regret of epsilon-greedy Q-learning; PSRL against UCBVI."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import average_regret, hardness, regret
from tabular.envs import DeepSea, RiverSwim
from tabular.experiments.explore.regret_bounds import (
    smallest_vacuous_constant,
    ucbvi_lower_order_term,
    ucrl2_bound,
)
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, number
from tabular.experiments.harness.settings import Settings
from tabular.explore import (
    epsilon_greedy_q_learning,
    optimistic_q_learning,
    psrl,
    rlsvi,
    ucbvi,
    ucrl2,
)

#: The learners, by the label of the figure; the constants each was run with are in the
#: label (``x c``: the paper's bonus times ``c``; see each learner's docstring).
LEARNERS = ("UCBVI-BF (paper)", "UCBVI-BF x 0.03", "UCBVI-CH x 0.01", "PSRL", "RLSVI",
            "opt. Q-learning c = 0.003", "opt. Q-learning Bernstein c = 0.003",
            "eps-greedy Q-learning 0.1")
#: Per env, the learners whose regret is checked sub-linear: those with a sqrt(T) bound
#: whose constants here leave the linear regime within T. Not UCBVI with the paper's
#: constants (its bonus, 7 H L / sqrt(N) or 14 H L / (3 N), stays above the value cap H
#: for hundreds of visits per pair: linear at every T here), nor UCBVI-CH x 0.01 on
#: DeepSea (slope 0.994 at T = 16,000 in the calibration run: its Hoeffding bonus
#: 10.4 / sqrt(N) needs about 110 visits of each of the 72 reachable pairs first).
SUBLINEAR = {"RiverSwim": ("UCBVI-BF x 0.03", "UCBVI-CH x 0.01", "PSRL", "RLSVI",
                           "opt. Q-learning c = 0.003", "opt. Q-learning Bernstein c = 0.003"),
             "DeepSea": ("UCBVI-BF x 0.03", "PSRL", "RLSVI", "opt. Q-learning c = 0.003",
                         "opt. Q-learning Bernstein c = 0.003")}
ENVS = ("RiverSwim", "DeepSea")
#: UCRL2's confidence widths times this (1: the paper's): average-reward regret, one
#: continuing trajectory of as many steps as the episodic learners took.
UCRL2_SCALE = 0.1
#: The confidence level of UCRL2's and UCBVI's runs (their default), which their bounds hold at.
DELTA = 0.1

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = (
    "the regret orders of Azar et al. (2017), Jin et al. (2018), Jaksch et al. (2010) and "
    "Osband et al. (2013, PSRL against optimism on RiverSwim; 2016, RLSVI), and the "
    "dithering failure on DeepSea (Osband et al., 2019), with exact regret"
)


@dataclass(frozen=True)
class Config(Settings):
    """RiverSwim of 6 states with H = 20 (Osband et al., 2013) and DeepSea of size
    ``sea_size`` with H = size; every learner from the same seeds."""

    river_episodes: int = 3000
    """Episodes on RiverSwim (T = 20 x episodes steps)."""
    sea_size: int = 8
    """DeepSea's N (and H)."""
    sea_episodes: int = 2000
    """Episodes on DeepSea."""
    runs: int = 8
    """Independent runs per learner and env."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {"river_episodes": 1500, "sea_size": 5, "sea_episodes": 300, "runs": 3}
    REFERENCE = "the calibration"


def learn(label: str, mdp, horizon: int, episodes: int, runs: int, seed: int):
    """The learner ``label`` with its constants."""
    common = dict(horizon=horizon, episodes=episodes, runs=runs, seed=seed)
    if label == "UCBVI-BF (paper)":
        return ucbvi(mdp, **common)
    if label == "UCBVI-BF x 0.03":
        return ucbvi(mdp, scale=0.03, **common)
    if label == "UCBVI-CH x 0.01":
        return ucbvi(mdp, bonus="hoeffding", scale=0.01, **common)
    if label == "PSRL":
        return psrl(mdp, **common)
    if label == "RLSVI":
        return rlsvi(mdp, **common)
    if label == "opt. Q-learning c = 0.003":
        return optimistic_q_learning(mdp, scale=0.003, **common)
    if label == "opt. Q-learning Bernstein c = 0.003":
        return optimistic_q_learning(mdp, bonus="bernstein", scale=0.003, **common)
    return epsilon_greedy_q_learning(mdp, epsilon=0.1, **common)


def slopes(cumulative: np.ndarray, horizon: int) -> np.ndarray:
    """Per run, the least-squares slope of log cumulative regret against log T over 12
    log-spaced episodes from a tenth of the run to its end."""
    K = cumulative.shape[-1]
    k = np.unique(np.geomspace(max(K // 10, 1), K, 12).astype(int)) - 1
    x = np.log((k + 1) * horizon)
    return np.array([np.polyfit(x, np.log(np.maximum(run[k], 1e-300)), 1)[0]
                     for run in cumulative])


def run(config: Config, executor) -> dict:
    models = {"RiverSwim": (RiverSwim().to_mdp(), 20, config.river_episodes),
              "DeepSea": (DeepSea(config.sea_size).to_mdp(), config.sea_size,
                          config.sea_episodes)}
    out: dict = {"learners": np.array(LEARNERS), "envs": np.array(ENVS)}
    for env, (mdp, H, K) in models.items():
        cumulative = np.empty((len(LEARNERS), config.runs, K))
        drift = np.empty((len(LEARNERS), 2))  # mean and SE of return - exact value
        for i, label in enumerate(LEARNERS):
            result = learn(label, mdp, H, K, config.runs, config.seed)
            measured = regret(mdp, result)
            cumulative[i] = measured.cumulative
            difference = (result.episode_returns - measured.values).ravel()
            drift[i] = difference.mean(), difference.std(ddof=1) / np.sqrt(difference.size)
        continuing = average_regret(mdp, ucrl2(mdp, steps=K * H, scale=UCRL2_SCALE,
                                               runs=config.runs, seed=config.seed))
        # the regret of a step may be negative (a pair paying more than rho*): the slope
        # is fitted to the regret from the first step on, floored at 1
        out[f"{env}_ucrl2"] = continuing.cumulative
        out[f"{env}_ucrl2_slopes"] = slopes(np.maximum(continuing.cumulative, 1.0)[:, H - 1::H],
                                            H)
        report = hardness(mdp, horizon=H)
        largest = K * (measured.optimal_value - measured.worst_value)
        out.update(bound_numbers(env, mdp, report, H, K, largest, config))
        out[f"{env}_cumulative"] = cumulative
        out[f"{env}_slopes"] = np.stack([slopes(c, H) for c in cumulative])
        out[f"{env}_drift"] = drift
        out[f"{env}_horizon"] = np.array(H)
        out[f"{env}_hardness"] = np.array([report.diameter, report.gap_min, report.span_h])
    return out


def bound_numbers(env: str, mdp, report, H: int, K: int, largest: float,
                  config: Config) -> dict:
    """What :func:`regret_against_published_bounds` holds: on RiverSwim (communicating,
    so UCRL2's Theorem 2 applies; DeepSea seen as continuing is only weakly
    communicating, its diameter infinite in Jaksch et al.'s sense), UCRL2 with the
    paper's widths, its regret and the bound at 12 log-spaced ``T``, and the largest
    regret any learner can have by then, ``T (rho* - r_min)``; on both, the constant
    above which UCBVI's ``H^2 S^2 A L^2`` term alone exceeds ``largest``, the regret of
    the worst policy played in all ``K`` episodes."""
    span = float(mdp.reward.max() - mdp.reward.min())
    term = ucbvi_lower_order_term(horizon=H, n_states=mdp.n_states, n_actions=mdp.n_actions,
                                  steps=K * H, delta=DELTA, reward_span=span)
    out = {f"{env}_ucbvi_vacuous": np.array(smallest_vacuous_constant(term, largest))}
    if report.communication not in ("ergodic", "communicating"):
        return out
    T = np.unique(np.geomspace(K * H / 100, K * H, 12).astype(int))
    paper = average_regret(mdp, ucrl2(mdp, steps=K * H, delta=DELTA, runs=config.runs,
                                      seed=config.seed))
    out[f"{env}_ucrl2_T"] = T
    out[f"{env}_ucrl2_paper"] = paper.cumulative[:, T - 1]
    out[f"{env}_ucrl2_bound"] = ucrl2_bound(diameter=report.diameter, n_states=mdp.n_states,
                                            n_actions=mdp.n_actions, steps=T, delta=DELTA,
                                            reward_span=span)
    out[f"{env}_ucrl2_largest"] = T * (paper.optimal_gain - mdp.reward.min())
    return out


def slope_summary(results: dict, env: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean slope of each learner and its standard error over the runs."""
    s = results[f"{env}_slopes"]
    return s.mean(axis=1), s.std(axis=1, ddof=1) / np.sqrt(s.shape[1])


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(4, 1, width=5.0, height=4.6,
                             title="Exact regret of the tabular explorers")
    for ax, env in zip(axes[0, :2], ENVS, strict=True):
        H = int(results[f"{env}_horizon"])
        cumulative = results[f"{env}_cumulative"]
        T = np.arange(1, cumulative.shape[-1] + 1) * H
        mean_slope, se = slope_summary(results, env)
        for i, label in enumerate(results["learners"]):
            ax.plot(T, cumulative[i].mean(axis=0), color=style.PALETTE[i % len(style.PALETTE)],
                    label=f"{label}: slope {mean_slope[i]:.3f} ± {se[i]:.3f}")
        top = cumulative.mean(axis=1)[:, -1].max()
        ax.plot(T, top * np.sqrt(T / T[-1]), "k:", linewidth=1, label="sqrt(T)")
        ax.plot(T, top * T / T[-1], "k--", linewidth=1, label="T")
        D, gap, span = results[f"{env}_hardness"]
        style.label(ax, "T (steps)", "cumulative regret (exact, mean of runs)", log="xy",
                    title=f"{env}, H = {H}: D = {D:.1f}, min gap {gap:.3g}, sp(h*) = {span:.2f}",
                    legend=6.5)
    ax = axes[0, 2]
    cumulative = results["RiverSwim_cumulative"]
    T = np.arange(1, cumulative.shape[-1] + 1) * 20
    for i, label in enumerate(results["learners"]):
        if label.startswith(("PSRL", "UCBVI")):
            low, high = np.percentile(cumulative[i], [25, 75], axis=0)
            color = style.PALETTE[i % len(style.PALETTE)]
            ax.plot(T, np.median(cumulative[i], axis=0), color=color, label=label)
            ax.fill_between(T, low, high, color=color, alpha=0.2, linewidth=0)
    style.label(ax, "T (steps)", "cumulative regret (median; band: quartiles)",
                title="PSRL against UCBVI on RiverSwim", legend=7)
    ax = axes[0, 3]
    for i, env in enumerate(ENVS):
        cumulative = results[f"{env}_ucrl2"]
        T = np.arange(1, cumulative.shape[-1] + 1)
        s = results[f"{env}_ucrl2_slopes"]
        ax.plot(T, np.maximum(cumulative.mean(axis=0), 1e-3), color=style.PALETTE[i],
                label=f"{env}: slope {s.mean():.3f} ± {s.std(ddof=1) / np.sqrt(s.size):.3f}")
    style.label(ax, "T (steps)", "sum_t rho* - r(s_t, a_t) (mean of runs)", log="xy",
                title=f"UCRL2 (widths x {UCRL2_SCALE:g}), average reward", legend=7)
    return [style.save(fig, out_dir / "exploration_regret.png")]


def table(results: dict):
    header = ["env", "learner", "slope", "SE", "final regret"]
    rows = []
    for env in ENVS:
        mean_slope, se = slope_summary(results, env)
        finals = results[f"{env}_cumulative"][:, :, -1].mean(axis=1)
        rows += [[env, label, f"{m:.3f}", f"{s:.3f}", f"{f:.1f}"]
                 for label, m, s, f in zip(results["learners"], mean_slope, se, finals,
                                           strict=True)]
        s = results[f"{env}_ucrl2_slopes"]
        rows.append([env, f"UCRL2 x {UCRL2_SCALE:g} (average reward)", f"{s.mean():.3f}",
                     f"{s.std(ddof=1) / np.sqrt(s.size):.3f}",
                     f"{results[f'{env}_ucrl2'][:, -1].mean():.1f}"])
        if f"{env}_ucrl2_paper" in results:
            rows.append([env, "UCRL2 (paper's widths; Theorem 2 bound "
                         f"{results[f'{env}_ucrl2_bound'][-1]:.4g})", "", "",
                         f"{results[f'{env}_ucrl2_paper'][:, -1].mean():.1f}"])
    return header, rows


@check()
def exact_regret_matches_sampled_returns(results: dict) -> list[Measure]:
    """Given the policy of episode k, its return is an unbiased draw of V^{pi_k}(s0): the
    returns minus the exact values average to 0 within 4 standard errors, plus 1e-12 for
    the rounding of sums of H rewards (deterministic DeepSea has no sampling noise)."""
    measures = []
    for env in ENVS:
        for label, (mean, se) in zip(results["learners"], results[f"{env}_drift"],
                                     strict=True):
            measures.append(below(f"{env}, {label}: |mean(return - V^pi_k)|", measured=abs(mean),
                                  bound=4.0 * se + 1e-12,
                                  failure=f"{env} {label}: returns drift {mean:.4g} from the exact "
                                  f"values (SE {se:.3g})",
                                  why="4 SE (a false alarm 6e-5) + 1e-12 rounding"))
    return measures


@check("river_episodes", "sea_size", "sea_episodes", "runs")
def regret_is_sublinear(results: dict) -> list[Measure]:
    """The bounds are of order sqrt(T) (Azar et al., 2017; Jin et al., 2018; Osband et
    al., 2013; UCRL2's D S sqrt(A T), Jaksch et al., 2010): with the constants here UCRL2
    on RiverSwim (on DeepSea, seen as continuing, it stays linear at the T here: slope
    0.995 in the calibration run) and each learner of :data:`SUBLINEAR` has a fitted
    log-log slope below 1 by more than 2 standard errors (the runs' spread; 0 for a
    deterministic learner on deterministic DeepSea, whose runs are identical)."""
    s = results["RiverSwim_ucrl2_slopes"]  # on DeepSea: 0.995 at T = 16,000, not claimed
    mean, error = s.mean(), s.std(ddof=1) / np.sqrt(s.size)
    measures = [below(f"RiverSwim, UCRL2 x {UCRL2_SCALE:g}: log-log slope + 2 SE",
                      measured=mean + 2 * error, bound=1.0,
                      failure=f"RiverSwim UCRL2: slope {mean:.3f} ± {error:.3f} is not below 1",
                      why="sub-linear")]
    for env, claimed in SUBLINEAR.items():
        mean_slope, se = slope_summary(results, env)
        for i, label in enumerate(results["learners"]):
            if label in claimed:
                measures.append(below(f"{env}, {label}: log-log slope + 2 SE",
                                      measured=mean_slope[i] + 2 * se[i], bound=1.0,
                                      failure=f"{env} {label}: slope {mean_slope[i]:.3f} ± "
                                      f"{se[i]:.3f} is not below 1", why="sub-linear"))
    return measures


@check("sea_size", "sea_episodes", "runs")
def dithering_is_linear_on_deepsea(results: dict) -> list[Measure]:
    """Epsilon-greedy Q-learning reaches DeepSea's treasure with probability about
    (epsilon / 2)^N per episode, so its regret grows linearly: slope 1 within 0.02."""
    mean_slope, se = slope_summary(results, "DeepSea")
    i = list(results["learners"]).index("eps-greedy Q-learning 0.1")
    return [fact("DeepSea, eps-greedy Q-learning: log-log slope",
                 passed=abs(mean_slope[i] - 1.0) < 0.02, expected="1 (linear)",
                 measured=f"{number(mean_slope[i])} ± {number(se[i])}",
                 failure=f"slope {mean_slope[i]:.3f} is not 1", tolerance="0.02")]


@check("river_episodes", "runs")
def psrl_beats_ucbvi_on_riverswim(results: dict) -> list[Measure]:
    """Osband et al. (2013, Figure 2) found PSRL's regret on RiverSwim far below that of
    optimistic UCRL2; here PSRL's final cumulative regret is below UCBVI's, both with the
    paper's constants and with UCBVI's bonus scaled by 0.03, in every run."""
    finals = results["RiverSwim_cumulative"][:, :, -1]
    learners = list(results["learners"])
    ours = finals[learners.index("PSRL")]
    measures = []
    for label in ("UCBVI-BF (paper)", "UCBVI-BF x 0.03"):
        theirs = finals[learners.index(label)]
        measures.append(
            fact(
                f"RiverSwim final regret, PSRL / {label}",
                passed=bool((ours < theirs).all()),
                expected="< 1 in every run",
                measured=number(ours.mean() / theirs.mean()),
                failure=f"PSRL {ours} is not below {label} {theirs}",
                tolerance="every run",
            )
        )
    return measures


@check()
def regret_against_published_bounds(results: dict) -> list[Measure]:
    """Jaksch et al. (2010, Theorem 2): with probability 1 - delta, UCRL2's regret after
    any ``T > 1`` steps is at most ``34 D S sqrt(A T ln(T / delta))`` (times the reward
    span; :func:`~tabular.experiments.explore.regret_bounds.ucrl2_bound`), ``D`` the
    diameter :func:`~tabular.hardness` computes. On RiverSwim, UCRL2 with the paper's
    widths: the largest ratio of regret to bound over the runs and 12 log-spaced ``T``
    is at most 1 (the claim), and the verdict on the bound itself: vacuous where it
    exceeds ``T (rho* - r_min)``, the most regret any learner can have. The regret here
    is the pseudo-regret (the pairs' mean rewards), equal to the paper's since both
    models' rewards are fixed given the pair. UCBVI's bound (Azar et al., 2017) states
    no constant in the material read: reported is the constant above which its
    ``H^2 S^2 A L^2`` term alone exceeds the worst policy's regret over the run."""
    measures = []
    for env in ENVS:
        if f"{env}_ucrl2_paper" in results:
            ratio = results[f"{env}_ucrl2_paper"] / results[f"{env}_ucrl2_bound"]
            measures.append(below(f"{env}, UCRL2 (paper's widths): max regret / Theorem 2 bound",
                                  measured=ratio.max(), bound=1.0,
                                  failure=f"{env}: UCRL2's regret exceeds Jaksch et al.'s "
                                  f"Theorem 2 bound (ratio {ratio.max():.3g})",
                                  why="Jaksch et al. (2010), Theorem 2, w.p. 1 - delta"))
            bound, largest = results[f"{env}_ucrl2_bound"], results[f"{env}_ucrl2_largest"]
            vacuous = bool((bound > largest).all())
            measures.append(fact(f"{env}, UCRL2 Theorem 2 bound / largest possible regret "
                                 f"at T = {int(results[f'{env}_ucrl2_T'][-1])}",
                                 passed=True, expected="> 1: vacuous; < 1: informative",
                                 measured=f"{number(bound[-1] / largest[-1])} "
                                 f"({'vacuous' if vacuous else 'informative'} at every T)",
                                 failure="", tolerance="a verdict, not a test"))
        c = float(results[f"{env}_ucbvi_vacuous"])
        measures.append(fact(f"{env}, UCBVI: constant above which c H^2 S^2 A L^2 exceeds "
                             f"the worst policy's regret", passed=True,
                             expected="the paper's constant (not read)", measured=number(c),
                             failure="", tolerance="a verdict, not a test"))
    return measures
