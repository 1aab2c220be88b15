"""Likelihood displacement: what DPO does to the probabilities of the responses it
compares, and where the mass goes, on a scenario whose compared responses share no
n-gram row (capital of France) and on one built so that they do (repeated answer).

Claim (huggingface/trl#800; Razin et al., 2024, "Unintentional unalignment: likelihood
displacement in direct preference optimization"): during DPO the log-probability of the
chosen response can fall together with the rejected one's, the probability mass moving
to responses that were never compared, the more so when the preferred and dispreferred
responses are similar, which Razin et al. measure by the centred hidden embedding
similarity (CHES) of the pair. Measured exactly on the prefix tree every few steps:
TRL's ``logps/chosen`` and ``logps/rejected`` (count-weighted means over the
comparisons) and the total probability of the responses no comparison names
(forbidden-token endings, responses outside the grammar, included), for the SFT model as
an n-gram policy (shared rows) and as a per-prefix policy (a row per prefix, the same
starting distribution over the grammar's responses), trained by full-batch DPO from
itself. Capital of France: comparisons of the SFT model's likeliest responses labelled
by Bradley-Terry on the reward model. Repeated answer
(:mod:`~tabular.experiments.rlhf.repeated_answer`): 50 unanimous comparisons of "It is
Paris." over "It is, it is Paris.", a bigram model, so every token of the chosen is read
again by the rejected in the same row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, number
from tabular.experiments.harness.settings import Settings
from tabular.experiments.rlhf.dpo_first_step import first_step
from tabular.experiments.rlhf.repeated_answer import CHOSEN, REJECTED, REPLIES, repeated_answer
from tabular.experiments.rlhf.sft_responses import sft_responses
from tabular.model.policy import SoftmaxPolicy
from tabular.rlhf import (
    dpo,
    ending_probabilities,
    response_distribution,
    response_path,
    train_pipeline,
)
from tabular.types import TokenEnv

SCENARIOS = ("capital of France", "repeated answer")
POLICIES = ("n-gram (shared rows)", "per-prefix")
OUTSIDE = "(outside the grammar)"
#: Two exact computations of one probability differ by float rounding only.
ROUNDING = 1e-12

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("no published figure: the claim of Razin et al. (2024), likelihood displacement: "
              "DPO can lower the chosen response's probability and move mass to responses it "
              "never compared, the more so the more the compared responses share")


@dataclass(frozen=True)
class Config(Settings):
    """DPO from the SFT model toward itself on both scenarios."""

    beta: float = 0.1
    """The KL coefficient."""
    compared: int = 3
    """Capital of France: the SFT model's likeliest responses that the comparisons draw
    from."""
    comparisons: int = 64
    """Capital of France: comparisons of two of them, Bradley-Terry on the reward model."""
    steps: int = 400
    """DPO's full-batch gradient steps."""
    every: int = 20
    """Steps between exact measurements."""
    alpha: float = 0.5
    """DPO's step size."""
    seed: int = 0
    """Capital of France: seed of the simulated comparisons."""

    QUICK = {"every": 40}
    REFERENCE = "the paper"


@dataclass(frozen=True)
class Setup:
    """One scenario as the replay trains on it."""

    env: TokenEnv
    """The token MDP (the reward model's; DPO never reads its reward)."""
    policies: tuple[SoftmaxPolicy, SoftmaxPolicy]
    """The SFT model as an n-gram policy and as a per-prefix one (:data:`POLICIES`)."""
    prefs: list
    """The ``(count, prompt, chosen, rejected)`` comparisons."""
    named: np.ndarray
    """``[S, A]``: the endings of the compared responses."""


def capital_setup(config: Config) -> tuple[Setup, list[str]]:
    """The capital-of-France scenario and the texts of its compared responses."""
    sft = sft_responses()
    ex, top = sft.pipeline, slice(config.compared)
    named = np.zeros(sft.ends.shape, dtype=bool)
    named[sft.states[top], sft.actions[top]] = True
    prefs = sft.comparisons(config.compared, config.comparisons, config.seed)
    return Setup(env=ex.env, policies=(ex.sft.policy(ex.env), ex.reference), prefs=prefs,
                 named=named), sft.texts[top]


def repeated_setup() -> Setup:
    """The repeated-answer scenario, its labellers' comparisons."""
    scenario = repeated_answer()
    ex = train_pipeline(scenario)
    mdp = ex.env.to_mdp()
    named = np.zeros((mdp.n_states, mdp.n_actions), dtype=bool)
    for y in (CHOSEN, REJECTED):
        s, a = response_path(ex.env, scenario.prompt, y)
        named[s[-1], a[-1]] = True
    prefs = [(c, scenario.prompt, w, lo) for c, w, lo in scenario.preferences]
    return Setup(env=ex.env, policies=(ex.sft.policy(ex.env), ex.reference), prefs=prefs,
                 named=named)


def ches(env: TokenEnv, policy: SoftmaxPolicy, prefs: list) -> float:
    """The centred hidden embedding similarity of Razin et al. (2024),
    ``<sum_k h(y+_<k), sum_k h(y-_<k)> - ||sum_k h(y+_<k)||^2``, count-weighted over the
    comparisons, with the hidden embedding ``h`` of a prefix the one-hot vector of the
    row of logits it reads: ``sum_k h`` counts the reads of each row along a response,
    and the score is positive when the rejected response reads the chosen one's rows
    more often than the chosen does itself, the similarity under which Razin et al.
    predict the chosen log-probability to fall."""
    rows = policy.logits.shape[0]

    def reads(x, y):
        s, _ = response_path(env, x, y)
        return np.bincount(policy.row_of_state[s], minlength=rows)

    counts = np.array([c for c, *_ in prefs], dtype=np.float64)
    scores = [reads(x, w) @ (reads(x, lo) - reads(x, w)) for _, x, w, lo in prefs]
    return float(counts @ scores / counts.sum())


def distribution(env: TokenEnv, policy) -> np.ndarray:
    """The probability of each repeated-answer reply, then of the responses outside the
    grammar (forbidden-token endings)."""
    p = {y: v for (_, y), v in response_distribution(env, policy).items()}
    return np.array([p.get(y, 0.0) for y in (*REPLIES, None)])


def trained(setup: Setup, policy: SoftmaxPolicy, config: Config):
    """DPO from ``policy`` toward itself, measured every ``config.every`` steps: its
    result, with ``mass/uncompared`` in the history."""
    mdp = setup.env.to_mdp()

    def outside(it, pi, metrics):
        return {"mass/uncompared": float(ending_probabilities(mdp, pi)[~setup.named].sum())}

    return dpo(setup.env, policy, setup.prefs, beta=config.beta, ref_policy=policy,
               steps=config.steps, alpha=config.alpha, history=True,
               eval_every=config.every, callback=outside)


def run(config: Config, executor) -> dict:
    capital, texts = capital_setup(config)
    setups = (capital, repeated_setup())
    curves, scores, firsts, ends = [], [], [], []
    for setup in setups:
        for policy in setup.policies:
            result = trained(setup, policy, config)
            h = result.history
            curves.append([h["logps/chosen"], h["logps/rejected"], h["mass/uncompared"]])
            scores.append(ches(setup.env, policy, setup.prefs))
            firsts.append(first_step(setup.env, policy, setup.prefs, beta=config.beta,
                                     alpha=config.alpha))
            if setup is setups[1]:
                ends.append([distribution(setup.env, policy),
                             distribution(setup.env, result.policy)])
    shape = (len(SCENARIOS), len(POLICIES))
    return {"scenarios": np.array(SCENARIOS), "policies": np.array(POLICIES),
            "steps": np.asarray(h.iteration), "curves": np.array(curves).reshape(*shape, 3, -1),
            "ches": np.array(scores).reshape(shape),
            "first_step": np.array(firsts).reshape(*shape, -1),
            "compared": np.array(texts), "comparisons": np.array(
                [[c, texts.index(w), texts.index(lo)] for c, _, w, lo in capital.prefs]),
            "replies": np.array([*REPLIES, OUTSIDE]), "distribution": np.array(ends)}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 2, width=5.0, height=3.6,
                             title=f"Likelihood displacement under DPO, beta = {config.beta:g}")
    steps = results["steps"]
    for row, scenario in enumerate(results["scenarios"]):
        for i, name in enumerate(results["policies"]):
            chosen, rejected, mass = results["curves"][row, i]
            color = style.PALETTE[i + 1]
            axes[row, 0].plot(steps, chosen, "-", color=color, label=f"{name}: logps/chosen")
            axes[row, 0].plot(steps, rejected, "--", color=color,
                              label=f"{name}: logps/rejected")
            axes[row, 1].plot(steps, mass, "-", color=color,
                              label=f"{name}, CHES {results['ches'][row, i]:+.2f}")
        same = np.abs(results["curves"][row, 0] - results["curves"][row, 1]).max() < ROUNDING
        axes[row, 0].set_title(f"{scenario}{' (the two policies coincide)' if same else ''}",
                               fontsize=9)
        axes[row, 0].set_ylabel("mean log pi(y|x), exact")
        axes[row, 1].set_ylabel("mass never compared")
        axes[row, 0].legend(fontsize=6)
        axes[row, 1].legend(fontsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("DPO steps")
    return [style.save(fig, out_dir / "likelihood_displacement.png")]


@check("beta", "compared", "comparisons", "alpha", "seed", "steps")
def displacement_verdict(results: dict) -> list[Measure]:
    """The claim on the capital of France: does the chosen responses' mean log-probability
    end below its start while the rejected ones' falls, and do the never-compared
    responses gain mass? On this scenario the answer is no (the verdict the docs report):
    the chosen log-probability ends above its start, the uncompared mass rises for a
    while and then falls back below its start; and the n-gram policy behaves exactly as
    the per-prefix one, because the compared responses read no row another response
    shares. The check holds these findings, so a change that alters them shows."""
    chosen, rejected, mass = results["curves"][0, 0]
    same = float(np.abs(results["curves"][0, 0] - results["curves"][0, 1]).max())
    return [
        fact(
            "logps/chosen, start -> end",
            passed=chosen[-1] > chosen[0] and rejected[-1] < rejected[0],
            expected="chosen ends above its start (claim not supported), rejected falls",
            measured=f"{chosen[0]:.4f} -> {chosen[-1]:.4f}; rejected {rejected[0]:.4f} -> "
            f"{rejected[-1]:.4f}",
            failure="the chosen log-probability fell: displacement",
        ),
        fact(
            "uncompared mass: start, peak, end",
            passed=mass.max() > mass[0] > mass[-1],
            expected="rises, then ends below its start",
            measured=f"{mass[0]:.4f}, {mass.max():.4f}, {mass[-1]:.4f}",
            failure="the uncompared mass changed course",
        ),
        fact(
            "n-gram vs per-prefix policy, largest difference",
            passed=same < ROUNDING,
            expected="0",
            measured=number(same),
            failure="the shared rows changed the outcome",
            tolerance="float rounding",
        ),
    ]


def _course(chosen, rejected, mass) -> str:
    return (f"logps/chosen {chosen[0]:.4f} -> {chosen[-1]:.4f}, logps/rejected "
            f"{rejected[0]:.4f} -> {rejected[-1]:.4f}, uncompared mass {mass[0]:.4f} -> "
            f"{mass[-1]:.4f}")


@check("beta", "alpha", "steps")
def shared_rows_verdict(results: dict) -> list[Measure]:
    """The claim on the repeated answer, whose rejected response reads every row the
    chosen one reads: with shared n-gram rows the chosen log-probability falls with the
    rejected one's and the never-compared responses gain the mass (claim supported);
    with a row per prefix, from the same distribution, the chosen log-probability rises
    (no displacement without the sharing); and the CHES score is positive exactly where
    displacement happens (the sign Razin et al.'s analysis predicts). The check holds
    these findings, so a change that alters them shows. Displacement is not first-order
    at the start here: the first step raises the chosen log-probability (in the row of
    "is", ``pi(Paris) + pi(,) > sum_b pi(b)^2``), and it falls once "," has lost enough
    mass; the check holds that too."""
    shared, own = results["curves"][1]
    score = results["ches"][1]
    first = results["first_step"][1, 0, 0]
    return [
        fact(
            "n-gram policy: chosen, rejected, uncompared mass",
            passed=shared[0, -1] < shared[0, 0] and shared[1, -1] < shared[1, 0]
            and shared[2, -1] > shared[2, 0],
            expected="chosen and rejected fall, uncompared mass rises (claim supported)",
            measured=_course(*shared),
            failure="no displacement with shared rows",
        ),
        fact(
            "per-prefix policy: chosen, rejected, uncompared mass",
            passed=own[0, -1] > own[0, 0] and own[1, -1] < own[1, 0],
            expected="chosen rises, rejected falls (no displacement)",
            measured=_course(*own),
            failure="displacement without shared rows",
        ),
        fact(
            "CHES, n-gram and per-prefix",
            passed=score[0] > 0 > score[1],
            expected="> 0 with displacement, < 0 without",
            measured=f"{score[0]:+g}, {score[1]:+g}",
            failure="the CHES sign does not follow displacement",
        ),
        fact(
            "n-gram policy: logps/chosen after the first step, at the end",
            passed=first > 0 and shared[0, -1] < shared[0, 0],
            expected="up at the first step, below its start at the end",
            measured=f"{first:+.3g}, {shared[0, -1] - shared[0, 0]:+.4f}",
            failure="the first step no longer raises the chosen, or it ends above its start",
        ),
    ]


@check()
def first_step_is_first_order(results: dict) -> list[Measure]:
    """DPO's first step from the reference, exactly: the kernel's step is ``alpha d`` with
    ``d = (beta / 2) sum_i w_i (grad log pi(y+_i) - grad log pi(y-_i))`` to float rounding,
    and the change of ``logps/chosen`` it makes is ``alpha <G, d>`` (the gradients' CHES
    for one pair) within Taylor's bound ``(alpha^2 / 4) sum_i w_i sum_t ||d_row_t||^2``
    (:mod:`~tabular.experiments.rlhf.dpo_first_step`), on both scenarios and policies:
    the sign of the first step is the first-order one, not curvature."""
    out = []
    for scenario, row in zip(results["scenarios"], results["first_step"], strict=True):
        for name, (change, predicted, bound, error) in zip(results["policies"], row,
                                                          strict=True):
            out.append(below(f"{scenario}, {name}: |change - alpha <G, d>|",
                             measured=abs(change - predicted), bound=bound,
                             failure="the first step is not first-order",
                             why="Taylor, softmax covariance <= 1/2"))
            out.append(below(f"{scenario}, {name}: |step - alpha d|, largest", measured=error,
                             bound=ROUNDING, failure="DPO's first step is not alpha d",
                             why="float rounding"))
    return out


@check()
def probabilities_add_up(results: dict) -> list[Measure]:
    """On the repeated answer every comparison names the same two responses, so
    ``exp(logps/chosen) + exp(logps/rejected) + uncompared mass = 1`` at every
    measurement: the chain rule's log-probabilities (TRL's metrics) and the prefix
    tree's endings are two exact computations of one distribution, apart by float
    rounding; and the final distribution over the replies and the responses outside
    the grammar sums to 1."""
    out = []
    for name, (chosen, rejected, mass) in zip(results["policies"], results["curves"][1],
                                              strict=True):
        gap = np.abs(np.exp(chosen) + np.exp(rejected) + mass - 1.0).max()
        out.append(below(f"{name}: |P(chosen) + P(rejected) + uncompared - 1|, largest",
                         measured=gap, bound=ROUNDING, failure="the two computations disagree",
                         why="float rounding"))
    total = np.abs(results["distribution"].sum(axis=-1) - 1.0).max()
    out.append(below("distributions over the replies: |sum - 1|, largest", measured=total,
                     bound=ROUNDING, failure="a distribution does not sum to 1",
                     why="float rounding"))
    return out
