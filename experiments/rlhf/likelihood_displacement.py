"""Likelihood displacement: what DPO does to the probabilities of the responses it
compares, and where the mass goes, on the capital-of-France scenario.

Claim (huggingface/trl#800; Razin et al., 2024, "Unintentional unalignment: likelihood
displacement in direct preference optimization"): during DPO the log-probability of the
chosen response can fall together with the rejected one's, the probability mass moving
to responses that were never compared, the more so when responses share the parameters
(here: n-gram contexts) that DPO moves. Measured exactly on the prefix tree every few
steps: TRL's ``logps/chosen`` and ``logps/rejected`` (count-weighted means over the
comparisons) and the total probability of the responses no comparison names, for the
SFT model as an n-gram policy (shared rows) and as a per-prefix policy (a row per
prefix), trained by full-batch DPO on comparisons of the SFT model's likeliest responses
labelled by Bradley-Terry on the reward model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact, number
from tabular.experiments.harness.settings import Settings
from tabular.experiments.rlhf.sft_responses import sft_responses
from tabular.rlhf import dpo, ending_probabilities

POLICIES = ("n-gram (shared rows)", "per-prefix")

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("no published figure: the claim of Razin et al. (2024), likelihood displacement: "
              "DPO can lower the chosen response's probability and move mass to responses it "
              "never compared")


@dataclass(frozen=True)
class Config(Settings):
    """The capital-of-France scenario; DPO from the SFT model toward itself."""

    beta: float = 0.1
    """The KL coefficient."""
    compared: int = 3
    """The SFT model's likeliest responses that the comparisons draw from."""
    comparisons: int = 64
    """Comparisons of two of them, Bradley-Terry on the reward model."""
    steps: int = 400
    """DPO's full-batch gradient steps."""
    every: int = 20
    """Steps between exact measurements."""
    alpha: float = 0.5
    """DPO's step size."""
    seed: int = 0
    """Seed of the simulated comparisons."""

    QUICK = {"every": 40}
    REFERENCE = "the paper"


def run(config: Config, executor) -> dict:
    sft = sft_responses()
    ex, top = sft.pipeline, slice(config.compared)
    env, mdp, texts = ex.env, ex.mdp, sft.texts[top]
    prefs = sft.comparisons(config.compared, config.comparisons, config.seed)
    named = np.zeros(sft.ends.shape, dtype=bool)
    named[sft.states[top], sft.actions[top]] = True
    curves = {}
    for name, policy in zip(POLICIES, (ex.sft.policy(env), ex.reference), strict=True):

        def outside(it, pi, metrics):
            return {"mass/uncompared": float(ending_probabilities(mdp, pi)[~named].sum())}

        h = dpo(env, policy, prefs, beta=config.beta, ref_policy=policy, steps=config.steps,
                alpha=config.alpha, history=True, eval_every=config.every,
                callback=outside).history
        curves[name] = np.array([h["logps/chosen"], h["logps/rejected"],
                                 h["mass/uncompared"]])
        steps = np.asarray(h.iteration)
    return {"policies": np.array(POLICIES), "steps": steps,
            "curves": np.array([curves[n] for n in POLICIES]),
            "compared": np.array(texts), "comparisons": np.array(
                [[c, texts.index(w), texts.index(lo)] for c, _, w, lo in prefs])}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.0, height=4.0,
                             title=f"Likelihood displacement under DPO, beta = {config.beta:g}")
    steps = results["steps"]
    for i, name in enumerate(results["policies"]):
        chosen, rejected, mass = results["curves"][i]
        color = style.PALETTE[i + 1]
        axes[0, 0].plot(steps, chosen, "-", color=color, label=f"{name}: logps/chosen")
        axes[0, 0].plot(steps, rejected, "--", color=color, label=f"{name}: logps/rejected")
        axes[0, 1].plot(steps, mass, "-", color=color, label=name)
    axes[0, 0].set_xlabel("DPO steps")
    axes[0, 0].set_ylabel("mean log pi(y|x), exact")
    axes[0, 0].legend(fontsize=7)
    axes[0, 1].set_xlabel("DPO steps")
    axes[0, 1].set_ylabel("probability of the responses never compared")
    axes[0, 1].legend(fontsize=8)
    return [style.save(fig, out_dir / "likelihood_displacement.png")]


@check("beta", "compared", "comparisons", "alpha", "seed", "steps")
def displacement_verdict(results: dict) -> list[Measure]:
    """The claim, measured: does the chosen responses' mean log-probability end below
    its start while the rejected ones' falls, and do the never-compared responses gain
    mass? On this scenario the answer is no (the verdict the docs report): the chosen
    log-probability ends above its start, the uncompared mass rises for a while and
    then falls back below its start; and the n-gram policy behaves exactly as the
    per-prefix one, because the compared responses read no row another response
    shares. The check holds these findings, so a change that alters them shows."""
    chosen, rejected, mass = results["curves"][0]
    same = float(np.abs(results["curves"][0] - results["curves"][1]).max())
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
            passed=same < 1e-12,
            expected="0",
            measured=number(same),
            failure="the shared rows changed the outcome",
            tolerance="float rounding",
        ),
    ]
