"""SimPO's drift: without a reference, how far does the length-normalised reward with a
margin take the policy from the SFT model, and does it keep reward and likelihood in the
same order?

Claims (Meng et al., 2024, "SimPO: simple preference optimization with a reference-free
reward", sections 2-3): DPO's implicit reward ``beta log pi(y|x) / ref(y|x)`` can rank
a compared pair against the policy's own (average) likelihood, while SimPO's reward,
the average log-likelihood ``log pi(y|x) / |y|``, ranks them as the likelihood does by
construction; SimPO has no KL anchor. Measured exactly, every few steps, for DPO and
SimPO trained from the SFT model of the capital-of-France scenario on the same
comparisons: the share of compared pairs whose reward order agrees with their average
log-likelihood order, ``KL(pi || pi_SFT)`` over whole responses, and the expected
response length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, check, fact
from tabular.experiments.harness.settings import Settings
from tabular.experiments.rlhf.sft_responses import sft_responses
from tabular.rlhf import dpo, ending_probabilities, response_path, sequence_kl

LEARNERS = ("DPO", "SimPO")

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("no published figure: the claim of Meng et al. (2024), sections 2-3: SimPO's "
              "reward agrees with the likelihood order; without a reference, how far it drifts "
              "from the SFT model")


@dataclass(frozen=True)
class Config(Settings):
    """The capital-of-France scenario, comparisons among the SFT model's likeliest
    responses."""

    beta: float = 0.5
    """DPO's KL coefficient."""
    simpo_beta: float = 2.0
    """SimPO's reward scale (TRL's default for SimPO)."""
    simpo_gamma: float = 1.0
    """SimPO's target margin (gamma / beta = 0.5, TRL's default ratio)."""
    compared: int = 4
    """The SFT model's likeliest responses the comparisons draw from."""
    comparisons: int = 64
    """Comparisons, Bradley-Terry on the reward model."""
    checkpoints: tuple[int, ...] = (10, 100, 1000, 4000)
    """Gradient steps after which the exact measures are taken."""
    alpha: float = 0.5
    """Step size of both."""
    seed: int = 0
    """Seed of the simulated comparisons."""

    QUICK = {"checkpoints": (10, 100, 1000)}
    REFERENCE = "the paper"


def run(config: Config, executor) -> dict:
    sft = sft_responses()
    env, mdp, ref, ends = sft.pipeline.env, sft.pipeline.mdp, sft.pipeline.reference, sft.ends
    prompt, texts = sft.prompt, sft.texts[: config.compared]
    prefs = sft.comparisons(config.compared, config.comparisons, config.seed)
    paths = {y: response_path(env, prompt, y) for y in texts}
    lengths = np.array([len(paths[y][1]) for y in texts], dtype=float)
    counts = np.array([c for c, *_ in prefs], dtype=float)
    pairs = np.array([[texts.index(w), texts.index(lo)] for _, _, w, lo in prefs])
    with np.errstate(divide="ignore"):
        ref_lp = np.log(ref.probs())
    ref_logp = np.array([ref_lp[paths[y]].sum() for y in texts])
    all_s, all_a = np.nonzero(ends > 0)
    all_len = np.array([len(env.state_response[int(q)]) + 1 for q in all_s])
    agree = np.empty((2, len(config.checkpoints)))
    kl = np.empty_like(agree)
    length = np.empty_like(agree)
    for i, name in enumerate(LEARNERS):
        for k, steps in enumerate(config.checkpoints):
            options = ({"loss": "sigmoid", "beta": config.beta} if name == "DPO" else
                       {"loss": "simpo", "beta": config.simpo_beta,
                        "simpo_gamma": config.simpo_gamma})
            pi = dpo(env, ref, prefs, ref_policy=ref, steps=steps, alpha=config.alpha,
                     **options).policy
            with np.errstate(divide="ignore"):  # the masked tokens: log 0
                lp = np.log(pi.probs())
            logp = np.array([lp[paths[y]].sum() for y in texts])
            average = logp / lengths
            reward = average if name == "SimPO" else config.beta * (logp - ref_logp)
            same = np.sign(reward[pairs[:, 0]] - reward[pairs[:, 1]]) == np.sign(
                average[pairs[:, 0]] - average[pairs[:, 1]])
            agree[i, k] = counts @ same / counts.sum()
            kl[i, k] = sequence_kl(mdp, pi, ref)
            length[i, k] = ending_probabilities(mdp, pi)[all_s, all_a] @ all_len
    return {"learners": np.array(LEARNERS), "checkpoints": np.array(config.checkpoints),
            "agreement": agree, "kl": kl, "length": length,
            "sft_length": np.array(ends[all_s, all_a] @ all_len)}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(3, 1, width=4.2, height=3.8, title="SimPO without a reference")
    steps = results["checkpoints"]
    for i, name in enumerate(results["learners"]):
        color = style.PALETTE[i + 1]
        axes[0, 0].plot(steps, results["agreement"][i], "o-", color=color, label=name)
        axes[0, 1].plot(steps, results["kl"][i], "o-", color=color, label=name)
        axes[0, 2].plot(steps, results["length"][i], "o-", color=color, label=name)
    axes[0, 2].axhline(float(results["sft_length"]), color="0.5", ls=":", label="SFT")
    for ax, label in zip(axes[0], ("share of pairs: reward order = average\nlikelihood order",
                                   "KL(pi || pi_SFT), exact", "expected length (tokens)"),
                         strict=True):
        style.label(ax, "gradient steps", label, log="x", legend=8)
    return [style.save(fig, out_dir / "simpo_drift.png")]


@check()
def simpo_reward_follows_likelihood(results: dict) -> list[Measure]:
    """SimPO's reward is the average log-likelihood, so every compared pair's reward
    order is its likelihood order (an identity, checked as one)."""
    share = results["agreement"][1]
    return [
        fact(
            "SimPO: share of pairs whose reward order is the likelihood order",
            passed=(share == 1.0).all(),
            expected="1 at every checkpoint",
            measured=str(share.tolist()),
            failure="SimPO's reward disagreed with its likelihood",
        )
    ]


@check("beta", "simpo_beta", "simpo_gamma", "compared", "comparisons", "alpha", "seed")
def simpo_drifts_further(results: dict) -> list[Measure]:
    """The drift, as measured: SimPO's KL to the SFT model keeps growing over the
    checkpoints and ends above DPO's (DPO's KL term holds it near its optimum)."""
    kl = results["kl"]
    return [
        fact(
            "SimPO's KL(pi || pi_SFT) rises at every checkpoint",
            passed=(np.diff(kl[1]) > 0).all(),
            expected="rising",
            measured=str(np.round(kl[1], 4).tolist()),
            failure="SimPO's KL stopped rising",
        ),
        above(
            "SimPO's last KL / DPO's last KL",
            measured=kl[1, -1] / kl[0, -1],
            bound=1.0,
            failure=f"SimPO's KL {kl[1, -1]:.4f} is not above DPO's {kl[0, -1]:.4f}",
            why="no anchor against a KL penalty",
        ),
    ]
