"""DPO against IPO when every comparison agrees: DPO drives the rejected response's
probability to 0 whatever beta, IPO stops where its target gap says.

Claim (Azar et al., 2024, "A general theoretical paradigm to understand learning from
human preferences", section 4.2): with deterministic (unanimous) preferences the
Bradley-Terry fit puts the reward gap at infinity, so DPO's optimum has
``pi(y_l) = 0`` for every beta and the KL regularisation is ignored; IPO regresses the
log-ratio gap ``h = log pi(y_w)/ref(y_w) - log pi(y_l)/ref(y_l)`` to ``1 / (2 beta)``
and keeps ``pi(y_l) > 0``. Here two responses to one prompt, ``y_w`` preferred in every
comparison, both learners trained by exact full-batch gradient descent from the
reference (a row of logits per prefix), the gap and ``pi(y_l)`` read off exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.envs import TokenMDP
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, number, within
from tabular.experiments.harness.settings import Settings
from tabular.rlhf import dpo

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("no published figure: the claim of Azar et al. (2024), section 4.2: with "
              "unanimous preferences DPO ignores beta (pi(y_l) -> 0) while IPO holds the log-"
              "ratio gap at 1 / (2 beta)")


@dataclass(frozen=True)
class Config(Settings):
    """Two responses, ``y_w`` always preferred."""

    betas: tuple[float, ...] = (0.1, 0.5, 2.0)
    """The KL coefficients."""
    checkpoints: tuple[int, ...] = (100, 1000, 10000)
    """Gradient steps after which the gap is read."""
    dpo_alpha: float = 1.0
    """DPO's step size."""
    ipo_alpha: float = 0.05
    """IPO's step size (its quadratic loss's curvature is 8 here: below 2 / 8)."""

    QUICK = {"checkpoints": (100, 1000, 3000)}
    REFERENCE = "the paper"


def _env():
    env = TokenMDP(("Q",), {}, max_len=1, grammar=["a", "b"])
    ref = np.where(env.legal, 1.0, 0.0) + (~env.legal.any(axis=1))[:, None]
    return env, ref / ref.sum(axis=1, keepdims=True)


def run(config: Config, executor) -> dict:
    env, ref = _env()
    root, a, b = env.state_of("Q"), env.token_id["a"], env.token_id["b"]
    prefs = [(10, "Q", "a", "b")]
    gaps = np.empty((2, len(config.betas), len(config.checkpoints)))
    loser = np.empty_like(gaps)
    for i, (loss, alpha) in enumerate((("sigmoid", config.dpo_alpha),
                                       ("ipo", config.ipo_alpha))):
        for j, beta in enumerate(config.betas):
            for k, steps in enumerate(config.checkpoints):
                p = dpo(env, ref, prefs, beta=beta, loss=loss, steps=steps,
                        alpha=alpha).policy.probs()[root]
                gaps[i, j, k] = np.log(p[a] / ref[root, a]) - np.log(p[b] / ref[root, b])
                loser[i, j, k] = p[b]
    return {"betas": np.array(config.betas), "checkpoints": np.array(config.checkpoints),
            "gap": gaps, "loser_prob": loser}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.0, height=4.0,
                             title="Unanimous preferences: DPO vs IPO")
    steps = results["checkpoints"]
    for j, beta in enumerate(results["betas"]):
        color = style.PALETTE[j + 1]
        axes[0, 0].plot(steps, results["gap"][0, j], "o-", color=color,
                        label=f"DPO, beta={beta:g}")
        axes[0, 0].plot(steps, results["gap"][1, j], "s--", color=color,
                        label=f"IPO, beta={beta:g}")
        axes[0, 0].axhline(1 / (2 * beta), color=color, lw=0.8, ls=":")
        axes[0, 1].plot(steps, results["loser_prob"][0, j], "o-", color=color,
                        label=f"DPO, beta={beta:g}")
        axes[0, 1].plot(steps, results["loser_prob"][1, j], "s--", color=color,
                        label=f"IPO, beta={beta:g}")
    for ax in axes[0]:
        ax.set_xscale("log")
        ax.set_xlabel("gradient steps")
    axes[0, 0].set_yscale("log")
    axes[0, 0].set_ylabel("log-ratio gap h (dotted: 1 / (2 beta))")
    axes[0, 1].set_yscale("log")
    axes[0, 1].set_ylabel("pi(y_l), exact")
    axes[0, 0].legend(fontsize=7)
    return [style.save(fig, out_dir / "dpo_vs_ipo.png")]


@check("dpo_alpha")
def dpo_gap_grows_without_bound(results: dict) -> list[Measure]:
    """DPO's gap keeps growing at every beta (its optimum is at infinity) and ends above
    IPO's target ``1 / (2 beta)``; ``pi(y_l)`` keeps falling."""
    out = []
    for j, beta in enumerate(results["betas"]):
        gap, loser = results["gap"][0, j], results["loser_prob"][0, j]
        out.append(
            fact(
                f"DPO's gap rises at every checkpoint, beta = {beta:g}",
                passed=(np.diff(gap) > 0).all() and (np.diff(loser) < 0).all(),
                expected="rising gap, falling pi(y_l)",
                measured=str(np.round(gap, 3).tolist()),
                failure="DPO's gap stopped",
            )
        )
        out.append(
            fact(
                f"DPO's last gap beyond 1 / (2 beta), beta = {beta:g}",
                passed=gap[-1] > 1 / (2 * beta),
                expected=f"> {1 / (2 * beta):g}",
                measured=number(gap[-1]),
                failure="DPO's gap stays below IPO's target",
            )
        )
    return out


@check("ipo_alpha", "checkpoints")
def ipo_holds_the_target_gap(results: dict) -> list[Measure]:
    """IPO's gap reaches ``1 / (2 beta)`` and ``pi(y_l)`` stays at its closed form
    ``1 / (1 + exp(1 / (2 beta)))``."""
    out = []
    for j, beta in enumerate(results["betas"]):
        out.append(
            within(
                f"IPO's last gap, beta = {beta:g}",
                measured=results["gap"][1, j, -1],
                expected=1 / (2 * beta),
                tolerance=1e-9,
                failure="IPO's gap is off its target",
                why="converged gradient descent on a quadratic",
            )
        )
        target = 1 / (1 + np.exp(1 / (2 * beta)))
        out.append(below(f"|IPO's pi(y_l) - 1 / (1 + e^(1 / (2 beta)))|, beta = {beta:g}",
                         measured=abs(results["loser_prob"][1, j, -1] - target), bound=1e-9,
                         failure="IPO's pi(y_l) is off its closed form"))
    return out
