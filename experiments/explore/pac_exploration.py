"""The PAC explorers in their own setting, exactly: MBIE-EB, R-max and Delayed
Q-learning on RiverSwim and a small Garnet, discounted, one continuing trajectory each;
their sample complexity (the steps whose policy is not epsilon-optimal from the state it
was in, Kakade, 2003) is counted by exact policy evaluation of every policy followed.

Checks hold the measure against an independent evaluation and the optimal values, and
each learner against what its algorithm box implies (how often R-max and Delayed
Q-learning can change their policy). Strehl & Littman's (2008) RiverSwim and SixArms
numbers are not compared: their RiverSwim has other swim probabilities and rewards
(this one is Osband et al.'s, 2013), and their table was not in the material read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import hardness
from tabular.envs import RandomMDP, RiverSwim
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, number
from tabular.experiments.harness.settings import Settings
from tabular.explore import delayed_q_learning, mbie_eb, rmax, sample_complexity
from tabular.explore.communication import continuing_kernel
from tabular.solve.dp import value_iteration

#: The learners with their default constants (each docstring says which they are).
LEARNERS = ("MBIE-EB", "R-max (m = 10)", "Delayed Q-learning (m = 5)")
ENVS = ("RiverSwim", "Garnet")
#: epsilon, the value gap that counts as a mistake, as a fraction of max_s V*(s).
EPSILON_FRACTION = 0.1
#: Delayed Q-learning's epsilon_1 as a fraction of r_max / (1 - gamma) (its default).
EPSILON1_FRACTION = 0.01
#: How many distinct policies of each run the independent evaluation re-evaluates.
AUDITED = 5

REPRODUCES = (
    "the sample complexity of exploration (Kakade, 2003) of MBIE-EB (Strehl & Littman, "
    "2008), R-max (Brafman & Tennenholtz, 2002) and Delayed Q-learning (Strehl et al., "
    "2006), counted exactly"
)


@dataclass(frozen=True)
class Config(Settings):
    """RiverSwim of 6 states (Osband et al.'s probabilities) and a Garnet of 10 states,
    2 actions and 3 successors (``RandomMDP`` seed ``garnet_seed``), gamma 0.95."""

    steps: int = 5000
    """Steps of each trajectory (Strehl & Littman's runs were 5000 steps)."""
    gamma: float = 0.95
    """The discount."""
    garnet_seed: int = 0
    """The Garnet's seed."""
    runs: int = 8
    """Independent runs per learner and env."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {"steps": 2000, "runs": 3}
    REFERENCE = "the algorithms' definitions"


def learn(label: str, mdp, config: Config):
    """The learner ``label`` with its default constants."""
    common = dict(gamma=config.gamma, steps=config.steps, runs=config.runs, seed=config.seed)
    if label == "MBIE-EB":
        return mbie_eb(mdp, **common)
    if label == "R-max (m = 10)":
        return rmax(mdp, known=10, **common)
    return delayed_q_learning(mdp, attempts=5, **common)


def policy_changes(policy: np.ndarray) -> np.ndarray:
    """Per run, the steps at which the greedy table differs from the step before."""
    return (np.diff(policy, axis=1) != 0).any(axis=2).sum(axis=1)


def iterated_value(P: np.ndarray, r: np.ndarray, table: np.ndarray, gamma: float,
                   sweeps: int) -> np.ndarray:
    """``V^pi`` by ``sweeps`` applications of ``T^pi V = r_pi + gamma P_pi V`` from 0:
    an evaluation independent of the exact linear solve that ``sample_complexity``
    uses, within ``gamma^sweeps max|V^pi|`` of it."""
    S = P.shape[0]
    P_pi, r_pi = P[np.arange(S), table], r[np.arange(S), table]
    V = np.zeros(S)
    for _ in range(sweeps):
        V = r_pi + gamma * P_pi @ V
    return V


def audit(mdp, result, measured, gamma: float, best: np.ndarray) -> float:
    """The largest difference between ``sample_complexity``'s gaps and gaps recomputed
    by :func:`iterated_value` at the first step each of the first :data:`AUDITED`
    distinct policies of run 0 was followed."""
    P, r = continuing_kernel(mdp)
    sweeps = int(np.ceil(np.log(1e-16) / np.log(gamma)))
    policy, states, gaps = result.policy[0], result.states[0], measured.gaps[0]
    _, first = np.unique(policy, axis=0, return_index=True)
    worst = 0.0
    for t in np.sort(first)[:AUDITED]:
        V = iterated_value(P, r, policy[t].astype(np.int64), gamma, sweeps)
        worst = max(worst, abs(best[states[t]] - V[states[t]] - gaps[t]))
    return worst


def run(config: Config, executor) -> dict:
    models = {"RiverSwim": RiverSwim().to_mdp(),
              "Garnet": RandomMDP(10, 2, 3, seed=config.garnet_seed).to_mdp()}
    out: dict = {"learners": np.array(LEARNERS), "envs": np.array(ENVS)}
    for env, mdp in models.items():
        best = value_iteration(mdp, gamma=config.gamma, tol=1e-12).V
        epsilon = EPSILON_FRACTION * best.max()
        L = len(LEARNERS)
        cumulative = np.empty((L, config.runs, config.steps))
        mistakes, changes = np.empty((L, config.runs)), np.empty((L, config.runs))
        gap_low, audit_error = np.empty(L), np.empty(L)
        for i, label in enumerate(LEARNERS):
            result = learn(label, mdp, config)
            measured = sample_complexity(mdp, result, gamma=config.gamma, epsilon=epsilon)
            cumulative[i] = np.cumsum(measured.gaps > epsilon, axis=-1)
            mistakes[i], changes[i] = measured.mistakes, policy_changes(result.policy)
            gap_low[i] = measured.gaps.min()
            audit_error[i] = audit(mdp, result, measured, config.gamma, best)
        report = hardness(mdp, gamma=config.gamma)
        out |= {f"{env}_cumulative": cumulative, f"{env}_mistakes": mistakes,
                f"{env}_changes": changes, f"{env}_gap_low": gap_low,
                f"{env}_audit": audit_error, f"{env}_epsilon": np.array(epsilon),
                f"{env}_v_scale": np.array(np.abs(best).max()),
                f"{env}_pairs": np.array(mdp.n_states * mdp.n_actions),
                f"{env}_value_cap": np.array(mdp.reward.max() / (1.0 - config.gamma)),
                f"{env}_hardness": np.array([report.gap_min, report.span_v, report.diameter])}
    return out


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.5, height=4.4,
                             title="Sample complexity of exploration, counted exactly")
    for ax, env in zip(axes[0], ENVS, strict=True):
        cumulative = results[f"{env}_cumulative"]
        for i, label in enumerate(results["learners"]):
            style.mean_band(ax, None, cumulative[i], color=style.PALETTE[i % len(style.PALETTE)],
                            label=f"{label}: {results[f'{env}_mistakes'][i].mean():.0f} mistakes")
        gap, span, D = results[f"{env}_hardness"]
        ax.set_title(f"{env}: epsilon = {float(results[f'{env}_epsilon']):.3g}, min gap "
                     f"{gap:.3g}, sp(V*) = {span:.3g}, D = {D:.3g}", fontsize=9)
        ax.set_xlabel("step t")
        ax.set_ylabel("mistakes so far: V*(s_t) - V^pi_t(s_t) > epsilon\n(mean of runs, 95% band)")
        ax.legend(fontsize=7)
    return [style.save(fig, out_dir / "pac_exploration.png")]


def table(results: dict):
    header = ["env", "learner", "mistakes (mean)", "SE", "policy changes (max)"]
    rows = []
    for env in ENVS:
        for i, label in enumerate(results["learners"]):
            m = results[f"{env}_mistakes"][i]
            rows.append([env, label, f"{m.mean():.1f}",
                         f"{m.std(ddof=1) / np.sqrt(m.size):.1f}",
                         f"{int(results[f'{env}_changes'][i].max())}"])
    return header, rows


@check()
def sample_complexity_is_exact(results: dict) -> list[Measure]:
    """The measure: (1) no policy is worth more than ``V*``, so every gap is >= 0 up to
    the rounding of value iteration (stopped at 1e-12) and of the linear solve, 1e-9
    times ``1 + max |V*|``; (2) the gaps of the first distinct policies of a run,
    recomputed by iterating the policy's Bellman operator ``ln(1e-16) / ln(gamma)``
    times (an error below ``1e-16 max |V^pi|``), agree with the linear solve's within
    the same 1e-9 rounding."""
    measures = []
    for env in ENVS:
        tol = 1e-9 * (1.0 + float(results[f"{env}_v_scale"]))
        for i, label in enumerate(results["learners"]):
            low = float(results[f"{env}_gap_low"][i])
            measures.append(below(f"{env}, {label}: -min_t (V*(s_t) - V^pi_t(s_t))",
                                  measured=-low, bound=tol,
                                  failure=f"{env} {label}: a policy beats V* by {-low:.3g}",
                                  why="1e-9 (1 + max|V*|) rounding"))
            error = float(results[f"{env}_audit"][i])
            measures.append(below(f"{env}, {label}: |gap - iterated evaluation's gap|",
                                  measured=error, bound=tol,
                                  failure=f"{env} {label}: the exact gaps differ from an "
                                  f"independent evaluation by {error:.3g}",
                                  why="1e-9 (1 + max|V*|) rounding"))
    return measures


@check()
def rmax_replans_only_when_a_pair_becomes_known(results: dict) -> list[Measure]:
    """R-max (Brafman & Tennenholtz, 2002) plans only when a pair reaches ``m`` visits
    and acts on that plan until the next: its greedy table changes at most ``S A``
    times in a run, whatever the seed."""
    i = list(results["learners"]).index("R-max (m = 10)")
    return [fact(f"{env}, R-max: policy changes in a run", passed=bool(
                 results[f"{env}_changes"][i].max() <= results[f"{env}_pairs"]),
                 expected=f"<= S A = {int(results[f'{env}_pairs'])}",
                 measured=number(results[f"{env}_changes"][i].max()),
                 failure=f"{env}: R-max changed its policy more often than it has pairs")
            for env in ENVS]


@check()
def delayed_q_updates_are_finite(results: dict) -> list[Measure]:
    """Delayed Q-learning (Strehl et al., 2006) starts every ``Q(s, a)`` at
    ``r_max / (1 - gamma)``; a successful update lowers it by at least ``epsilon_1``
    (it needs ``Q - U / m >= 2 epsilon_1`` and sets ``U / m + epsilon_1``) and never below
    0 (rewards >= 0), and only a successful update moves the greedy table: at most
    ``S A (r_max / (1 - gamma)) / epsilon_1 = 100 S A`` policy changes in a run."""
    i = list(results["learners"]).index("Delayed Q-learning (m = 5)")
    measures = []
    for env in ENVS:
        limit = float(results[f"{env}_pairs"]) / EPSILON1_FRACTION
        measures.append(below(f"{env}, Delayed Q-learning: policy changes in a run",
                              measured=results[f"{env}_changes"][i].max(), bound=limit,
                              failure=f"{env}: Delayed Q-learning changed its policy more "
                              f"often than its successful updates allow",
                              why="S A r_max / ((1 - gamma) epsilon_1)"))
    return measures
