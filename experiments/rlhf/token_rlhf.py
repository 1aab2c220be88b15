"""Token MDP (capital of France): SFT and RLHF answers, reward-KL frontier, reward hacking."""

from __future__ import annotations

import functools
import textwrap
from dataclasses import dataclass

import numpy as np

from tabular import ppo, reinforce
from tabular.envs import load_scenario
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, below, check, fact
from tabular.experiments.harness.settings import Settings
from tabular.rlhf import RLHFPipeline, dpo, train_pipeline

LEARNERS = ("REINFORCE", "PPO", "DPO")


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = (
    "no published figure: the exact KL-regularised RLHF optimum of the token MDP "
    "(Rafailov et al., 2023), against SFT, PPO and DPO"
)


@dataclass(frozen=True)
class Config(Settings):
    """RLHF of the running example's SFT model against its Bradley-Terry reward model.

    Every learner maximises ``E[r_RM(y)] - beta KL(pi || pi_SFT)`` (DPO implicitly,
    from the same preference pairs); the exact optimum comes from soft value
    iteration on the prefix tree.
    """

    betas: tuple[float, ...] = (0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.5)
    """KL coefficients at which every learner is trained."""
    frontier_betas: int = 60
    """Points of the exact frontier (log-spaced betas from 0.05 to 10)."""
    shown_beta: float = 0.5
    """The beta whose RLHF answer distribution is drawn."""
    runs: int = 16
    """Independent runs of REINFORCE and PPO per beta (DPO is deterministic)."""
    reinforce_episodes: int = 4000
    """REINFORCE episodes (one reply each)."""
    reinforce_alpha: float = 0.05
    """REINFORCE step size."""
    ppo_iterations: int = 200
    """PPO iterations (8 replies per batch, 4 epochs)."""
    dpo_steps: int = 2000
    """Full-batch DPO gradient steps."""
    seed: int = 0
    """Seed of the policy-gradient runs."""

    QUICK = {"betas": (0.35, 1.0, 2.5), "frontier_betas": 25, "shown_beta": 1.0,
             "reinforce_episodes": 2000, "ppo_iterations": 100, "dpo_steps": 1000}
    REFERENCE = "the calibration"


@functools.cache
def running_example() -> RLHFPipeline:
    """The shipped scenario trained end to end (pre-train, SFT, reward model), once per
    process."""
    return train_pipeline(load_scenario())


#: Evaluations of the training history drawn (at the shown beta only).
EVALUATIONS = 50


def train(learner: str, beta: float, config: dict, history: bool = False) -> dict:
    """Train one learner at one beta; measure KL, proxy and gold reward and the answer
    distribution of every run exactly (an executor job); with ``history``, also the
    exact gap ``J* - J(pi_t)`` of every run at :data:`EVALUATIONS` points of training
    (``curve_iteration [E]``, ``curve_gap [runs, E]``)."""
    ex = running_example()
    ref = ex.reference
    steps = {"DPO": config["dpo_steps"], "REINFORCE": config["reinforce_episodes"],
             "PPO": config["ppo_iterations"]}[learner]
    trace = {"history": True, "eval_every": max(1, steps // EVALUATIONS)} if history else {}
    if learner == "DPO":
        sc = ex.scenario
        pairs = [(count, sc.prompt, w, lo) for count, w, lo in sc.preferences]
        result = dpo(ex.env, ref, pairs, beta=beta, ref_policy=ref, steps=steps, **trace)
        policies = [result.policy]
    else:
        runs = config["runs"]
        if learner == "REINFORCE":
            result = reinforce(ex.mdp, ref, gamma=1.0, episodes=steps,
                               alpha=config["reinforce_alpha"], ref_policy=ref, beta=beta,
                               seed=config["seed"], runs=runs, **trace)
        else:
            result = ppo(ex.mdp, ref, gamma=1.0, iterations=steps, ref_policy=ref, beta=beta,
                         seed=config["seed"], runs=runs, **trace)
        policies = [result.run(i).policy for i in range(runs)]
    points = [ex.measure(p) for p in policies]
    curve = {} if not history else {
        "curve_iteration": result.history.iteration,
        "curve_gap": np.atleast_2d(result.history["exact/gap"])}
    return {**curve,
        "kl": np.array([p.kl for p in points]),
        "proxy": np.array([p.proxy for p in points]),
        "gold": np.array([p.gold for p in points]),
        "answers": np.array([list(ex.answer_distribution(p).values()) for p in policies]),
    }


def run(config: Config, executor) -> dict:
    ex = running_example()
    sizes = {"runs": config.runs, "reinforce_episodes": config.reinforce_episodes,
             "reinforce_alpha": config.reinforce_alpha, "ppo_iterations": config.ppo_iterations,
             "dpo_steps": config.dpo_steps, "seed": config.seed}
    betas = sorted(set(config.betas) | {config.shown_beta})
    jobs = [{"learner": learner, "beta": b, "config": sizes,
             "history": b == config.shown_beta} for learner in LEARNERS for b in betas]
    out = executor.map(train, jobs, desc="learners x betas")
    frontier = ex.frontier(np.geomspace(0.05, 10.0, config.frontier_betas))
    exact_at = ex.frontier(np.array(betas))
    results = {
        "replies": np.array(ex.scenario.replies),
        "gold_of_reply": np.array(ex.scenario.gold),
        "correct": np.array(ex.scenario.correct),
        "answers_base": np.array(list(ex.answer_distribution(ex.policy(ex.base)).values())),
        "answers_sft": np.array(list(ex.answer_distribution(ex.reference).values())),
        "answers_optimum": np.array(list(ex.answer_distribution(
            ex.optimum(config.shown_beta)).values())),
        "shown_beta": np.array(config.shown_beta),
        "betas": np.array(betas),
        "frontier_betas": frontier.betas,
        "frontier_kl": frontier.kl,
        "frontier_proxy": frontier.proxy,
        "frontier_gold": frontier.gold,
        "optimum_objective": exact_at.objective,
        "sft_proxy": np.array(ex.value(ex.reference, "proxy")),
        "sft_gold": np.array(ex.value(ex.reference, "gold")),
    }
    for learner in LEARNERS:
        mine = [o for (job, o) in zip(jobs, out, strict=True) if job["learner"] == learner]
        key = learner.lower()
        for field in ("kl", "proxy", "gold"):
            results[f"{key}_{field}"] = np.array([o[field] for o in mine])  # [beta, run]
        results[f"{key}_answers"] = np.array([o["answers"].mean(axis=0) for o in mine])
        shown = next(o for job, o in zip(jobs, out, strict=True)
                     if job["learner"] == learner and job["history"])
        results[f"{key}_curve_iteration"] = shown["curve_iteration"]
        results[f"{key}_curve_gap"] = shown["curve_gap"]
    return results


def wrapped(reply: str, gold: float) -> str:
    return textwrap.fill(reply, 24) + f" (gold {gold:+.1f})"


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(4, 1, width=5.0, height=4.3,
                             title="Token MDP \u201cWhat is the capital of France?\u201d: "
                                   "SFT, RLHF and reward hacking")
    ax = axes[0, 0]
    replies = [str(r) for r in results["replies"]]
    beta = float(results["shown_beta"])
    shown = int(np.argmin(np.abs(results["betas"] - beta)))
    stages = [("base (pre-trained)", results["answers_base"], "#999999"),
              ("SFT", results["answers_sft"], style.PALETTE[5]),
              (f"RLHF: PPO, $\\beta$ = {beta:g}", results["ppo_answers"][shown],
               style.color("PPO")),
              (f"exact optimum, $\\beta$ = {beta:g}", results["answers_optimum"], "black")]
    y = np.arange(len(replies))
    height = 0.8 / len(stages)
    for i, (label, dist, c) in enumerate(stages):
        ax.barh(y + (i - 1.5) * height, dist, height, label=label, color=c)
    ax.set_yticks(y, [wrapped(r, g) for r, g in
                      zip(replies, results["gold_of_reply"], strict=True)], fontsize=9)
    ax.invert_yaxis()
    ax.set_xlabel("probability of the reply P(y | x)")
    ax.set_title("answer distributions")
    ax.legend(fontsize=9, loc="lower right")
    ax.grid(axis="y", visible=False)

    ax = axes[0, 1]
    ax.plot(results["frontier_kl"], results["frontier_proxy"], color="black",
            label="exact optimum $\\pi^*_\\beta$ (soft VI)")
    markers = {"REINFORCE": "o", "PPO": "s", "DPO": "^"}
    for learner in LEARNERS:
        key = learner.lower()
        kl, proxy = results[f"{key}_kl"], results[f"{key}_proxy"]
        ax.errorbar(kl.mean(axis=1), proxy.mean(axis=1),
                    xerr=kl.std(axis=1), yerr=proxy.std(axis=1), fmt=markers[learner],
                    color=style.color(learner), label=f"{learner} (one point per $\\beta$)",
                    markersize=5, capsize=2, linewidth=1)
    ax.plot([0], [float(results["sft_proxy"])], "*", color=style.PALETTE[5], markersize=12,
            label="SFT (the reference)")
    ax.set_xlabel("KL($\\pi$ || SFT) over whole replies (nats)")
    ax.set_ylabel("expected reward-model score (proxy)")
    ax.set_title("reward vs KL frontier")
    ax.legend(fontsize=9, loc="lower right")

    ax = axes[0, 2]
    ax.plot(results["frontier_kl"], results["frontier_proxy"], color="black",
            label="proxy (reward model) at $\\pi^*_\\beta$")
    ax.plot(results["frontier_kl"], results["frontier_gold"], color="#D55E00",
            label="gold (human) reward at $\\pi^*_\\beta$")
    for learner in LEARNERS:
        key = learner.lower()
        ax.plot(results[f"{key}_kl"].mean(axis=1), results[f"{key}_gold"].mean(axis=1),
                markers[learner], color=style.color(learner), markersize=4,
                label=f"gold reward of {learner}")
    best = int(np.argmax(results["frontier_gold"]))
    ax.axvline(results["frontier_kl"][best], color="0.5", linestyle=":",
               label="gold peaks: optimising the proxy further hurts")
    ax.set_xlabel("KL($\\pi$ || SFT) over whole replies (nats)")
    ax.set_ylabel("expected reward")
    ax.set_title("proxy vs gold reward: reward hacking")
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)

    ax = axes[0, 3]
    units = {"REINFORCE": "episode", "PPO": "batch of 8", "DPO": "full-batch step"}
    for learner in LEARNERS:
        key = learner.lower()
        x = np.maximum(results[f"{key}_curve_iteration"], 0.5)  # the start, on a log axis
        gap = results[f"{key}_curve_gap"]
        style.mean_band(ax, x, gap, color=style.color(learner),
                        label=f"{learner} (per {units[learner]})"
                              + (f", mean of {len(gap)} runs, 95% CI" if len(gap) > 1 else ""))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training iteration (the start drawn at 0.5)")
    ax.set_ylabel("$J^* - J(\\pi_t)$, exact")
    ax.set_title(f"training histories: the exact gap, $\\beta$ = {beta:g}")
    ax.legend(fontsize=9, loc="lower left")
    return [style.save(fig, out_dir / "token_rlhf.png")]


def objective_over_optimum(results: dict, learner: str) -> np.ndarray:
    """``J(pi) - J(pi*_beta)`` of each of the learner's runs, ``[beta, run]`` (at most 0)."""
    key = learner.lower()
    objective = results[f"{key}_proxy"] - results["betas"][:, None] * results[f"{key}_kl"]
    return objective - results["optimum_objective"][:, None]


@check()
def nobody_beats_the_optimum(results: dict) -> list[Measure]:
    """No learner's objective exceeds the exact optimum's: pi*_beta maximises it exactly."""
    measures = []
    for learner in LEARNERS:
        over = objective_over_optimum(results, learner).max()
        measures.append(below(f"{learner}: largest J(pi) - J(pi*) over betas and runs",
                              measured=over, bound=1e-9,
                              failure=f"{learner} beats the exact optimum by {over:.3g}",
                              why="float rounding"))
    return measures


@check("betas", "ppo_iterations", "dpo_steps")
def ppo_and_dpo_come_close(results: dict) -> list[Measure]:
    """PPO (its median run) and DPO end close to the exact optimum's objective."""
    measures = []
    for learner in ("PPO", "DPO"):
        # A few PPO runs (up to about one in six) settle on a worse mode at small beta,
        # about 0.3 below the optimum; the median run ends within 0.02, so the check on
        # the median fails only if half the runs get stuck (a binomial tail of ~1e-3).
        worst = np.median(objective_over_optimum(results, learner), axis=1).min()
        measures.append(above(f"{learner}: median run's J(pi) - J(pi*), worst beta", measured=worst,
                              bound=-0.05 - 1e-12,
                              failure=f"{learner}'s median run ends {-worst:.3f} "
                                      "below the optimum's objective",
                              why="0.05 below the optimum"))
    return measures


@check()
def sft_and_the_frontier(results: dict) -> list[Measure]:
    """SFT moves mass to correct answers, and the proxy reward of pi*_beta rises as beta
    shrinks (the trained pipeline and the exact solve: no setting changes them)."""
    correct = results["correct"]
    sft, base = results["answers_sft"][correct].sum(), results["answers_base"][correct].sum()
    rise = float(np.max(np.diff(results["frontier_proxy"])))  # betas increase: proxy falls
    return [fact("probability of a correct reply: SFT against the base model", passed=sft > base,
                 expected="SFT above the base", measured=f"{sft:.3f} vs {base:.3f}",
                 failure="SFT did not raise the probability of a correct reply",
                 tolerance="ordering"),
            below("largest rise of pi*_beta's proxy reward as beta grows", measured=rise,
                  bound=1e-9, failure="the proxy reward of pi*_beta does not rise as beta shrinks",
                  why="float rounding")]


@check("frontier_betas")
def reward_hacking(results: dict) -> list[Measure]:
    """Past a point the proxy keeps rising while the gold reward falls."""
    gold = results["frontier_gold"]
    return [above("gold reward: its peak - its value at the smallest beta",
                  measured=gold.max() - gold[0], bound=0.1,
                  failure="no reward hacking: gold reward at the smallest beta is near its peak",
                  why="a clear fall")]
