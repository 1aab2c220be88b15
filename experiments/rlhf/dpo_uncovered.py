"""DPO against PPO on responses the comparisons never cover: both optimise the same
preferences, but only the reward model's KL-regularised optimum says what happens to a
response no comparison names.

Claim (Xu et al., 2024, "Is DPO superior to PPO for LLM alignment?", theorem 4.1): the
policies that minimise DPO's loss on a data set strictly contain the optimum of RLHF
(PPO) with the reward model fitted to the same data, because DPO's loss does not see
the responses the data leave out; so DPO can move probability to uncovered responses
that PPO's optimum keeps at the reference's share. Here, on the capital-of-France
scenario, the comparisons cover two of the SFT model's responses. PPO's target is
computed exactly: ``pi*(y) ∝ ref(y) exp(r_hat(y) / beta)`` for the Bradley-Terry reward
model ``r_hat`` fitted to the comparisons (an uncovered response scores the covered
ones' reference-weighted mean, 0). DPO is trained by full-batch descent from the SFT
model, with a row per prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, number
from tabular.experiments.harness.settings import Settings
from tabular.experiments.rlhf.sft_responses import sft_responses
from tabular.rlhf import dpo, ending_probabilities, train_reward_model
from tabular.rlhf.reward_model import log_sigmoid

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("no published figure: the claim of Xu et al. (2024), theorem 4.1: DPO's "
              "minimisers contain PPO's optimum and can move mass to responses the data never "
              "cover")


@dataclass(frozen=True)
class Config(Settings):
    """Two covered responses of the capital-of-France SFT model."""

    beta: float = 0.5
    """The KL coefficient."""
    comparisons: int = 64
    """Comparisons of the two covered responses, Bradley-Terry on the reward model."""
    checkpoints: tuple[int, ...] = (10, 100, 1000, 10000)
    """DPO's gradient steps after which the policy is measured."""
    alpha: float = 0.5
    """DPO's step size."""
    seed: int = 0
    """Seed of the simulated comparisons."""

    QUICK = {"checkpoints": (10, 100, 1000)}
    REFERENCE = "the paper"


def run(config: Config, executor) -> dict:
    sft = sft_responses()
    env, mdp, ref = sft.pipeline.env, sft.pipeline.mdp, sft.pipeline.reference
    prompt, s, a, texts = sft.prompt, sft.states, sft.actions, sft.texts
    covered = [0, 1]  # the two likeliest responses
    prefs = sft.comparisons(len(covered), config.comparisons, config.seed)
    rm = train_reward_model(prefs, reference=[(prompt, texts[i]) for i in covered])
    r_hat = np.array([rm.score(prompt, y) for y in texts])
    q = sft.ends[s, a]
    w = q * np.exp(r_hat / config.beta)
    ppo = w / w.sum()
    n = sum(c for c, *_ in prefs)

    def dpo_loss(p):  # the mean DPO loss of a response distribution on the comparisons
        h = np.log(p / q)
        return -sum(c * log_sigmoid(config.beta * (h[texts.index(yw)] - h[texts.index(yl)]))
                    for c, _, yw, yl in prefs) / n

    dists = []
    for steps in config.checkpoints:
        pi = dpo(env, ref, prefs, beta=config.beta, ref_policy=ref, steps=steps,
                 alpha=config.alpha).policy
        dists.append(ending_probabilities(mdp, pi)[s, a])
    dists = np.array(dists)
    wins = sum(c for c, _, yw, _ in prefs if yw == texts[0])
    best = -(wins * np.log(wins / n) + (n - wins) * np.log(1 - wins / n)) / n  # BT MLE
    return {"texts": np.array(texts), "reference": q, "ppo": ppo, "dpo": dists,
            "checkpoints": np.array(config.checkpoints), "covered": np.array(covered),
            "ppo_loss": np.array(dpo_loss(ppo)),
            "dpo_loss": np.array([dpo_loss(p) for p in dists]), "min_loss": np.array(best)}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 1, width=8.0, height=4.2,
                             title="Responses the comparisons never cover: DPO vs PPO's optimum")
    ax = axes[0, 0]
    texts = [str(t) for t in results["texts"]]
    x = np.arange(len(texts))
    width = 0.8 / (2 + len(results["checkpoints"]))
    ax.bar(x, results["reference"], width, color="0.6", label="SFT (reference)")
    ax.bar(x + width, results["ppo"], width, color="0.2", label="PPO's optimum (exact)")
    for k, steps in enumerate(results["checkpoints"]):
        ax.bar(x + (k + 2) * width, results["dpo"][k], width, color=style.PALETTE[k + 1],
               label=f"DPO, {steps} steps")
    labels = [t + (" (covered)" if i in results["covered"] else "") for i, t in enumerate(texts)]
    ax.set_xticks(x + 0.4, labels, rotation=20, ha="right", fontsize=7)
    ax.set_ylabel("pi(y | x), exact")
    ax.legend(fontsize=8)
    return [style.save(fig, out_dir / "dpo_uncovered.png")]


@check("comparisons", "seed")
def ppo_optimum_minimises_dpo_loss(results: dict) -> list[Measure]:
    """PPO's optimum is one of DPO's minimisers: its DPO loss equals the Bradley-Terry
    fit's minimum (the reward model is that fit), to the reward model's convergence."""
    gap = float(results["ppo_loss"] - results["min_loss"])
    return [below("DPO loss at PPO's optimum - its minimum", measured=abs(gap), bound=1e-9,
                  failure=f"PPO's optimum is {gap:.3g} above DPO's minimum",
                  why="the reward model's 20,000 Bradley-Terry steps")]


@check("beta", "comparisons", "alpha", "seed")
def dpo_moves_uncovered_mass(results: dict) -> list[Measure]:
    """The claim as measured: DPO's loss approaches the same minimum, while the mass on
    the uncovered responses ends away from PPO's (which keeps their reference shares
    up to normalisation), and DPO raises an uncovered response above its reference
    probability (one that shares the chosen response's prefix) where PPO's optimum
    lowers every uncovered one."""
    covered = results["covered"]
    mask = np.ones(len(results["texts"]), dtype=bool)
    mask[covered] = False
    dpo_mass = results["dpo"][:, mask].sum(axis=1)
    ppo_mass = float(results["ppo"][mask].sum())
    ratio = (results["dpo"][-1, mask] / results["reference"][mask]).max()
    ppo_ratio = (results["ppo"][mask] / results["reference"][mask]).max()
    return [
        fact(
            "uncovered mass: reference, PPO's optimum, DPO by checkpoint",
            passed=True,
            expected="reported",
            measured=f"{results['reference'][mask].sum():.4f}, {ppo_mass:.4f}, "
            f"{np.round(dpo_mass, 4).tolist()}",
            failure="",
            tolerance="no claim",
        ),
        fact(
            "DPO's last uncovered mass differs from PPO's optimum's",
            passed=abs(dpo_mass[-1] - ppo_mass) > 1e-3,
            expected="|difference| > 1e-3",
            measured=number(dpo_mass[-1] - ppo_mass),
            failure="DPO ends where PPO's optimum does",
        ),
        fact(
            "largest pi(y) / ref(y) over uncovered y: DPO's last, PPO's optimum's",
            passed=ratio > 1.0 > ppo_ratio,
            expected="DPO > 1 > PPO (the claim)",
            measured=f"{ratio:.4f}, {ppo_ratio:.4f}",
            failure="DPO raised no uncovered response above "
            "its reference probability, or PPO's optimum did",
        ),
        fact(
            "DPO's loss by checkpoint, and its minimum",
            passed=True,
            expected="reported",
            measured=f"{np.round(results['dpo_loss'], 5).tolist()}; min "
            f"{float(results['min_loss']):.5f}",
            failure="",
            tolerance="no claim",
        ),
    ]
