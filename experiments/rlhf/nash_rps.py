"""Nash-MD against Bradley-Terry RLHF on a rock-paper-scissors preference: the last
iterate of exact Nash mirror descent reaches the regularised Nash equilibrium, while the
Bradley-Terry fit of the same comparisons, and its RLHF optimum, ends elsewhere.

Claim (Munos et al., 2024, "Nash learning from human feedback", sections 3 and 6):
preferences need not be transitive, and then the Bradley-Terry reward that RLHF and DPO
fit misrepresents them; the regularised Nash equilibrium of the preference game is the
policy no other beats (to the KL penalty), and Nash-MD's last iterate converges to it.
The preference here is rock-paper-scissors, compared on two responses of a skewed
reference; everything is exact: the equilibrium (:func:`~tabular.rlhf.nash_equilibrium`,
duality gap <= 1e-12), the Bradley-Terry RLHF optimum (DPO's population optimum,
:func:`~tabular.rlhf.loss_optimum`, which is ``pi*`` of the population's Bradley-Terry
fit) and every Nash-MD iterate (:func:`~tabular.rlhf.nash_md`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.envs import TokenMDP
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, below, check, fact, number
from tabular.experiments.harness.settings import Settings
from tabular.rlhf import loss_optimum, nash_equilibrium, nash_md, preference_gap, preference_table

MOVES = ("rock", "paper", "scissors")
RPS = np.array([[0.5, 0.0, 1.0], [1.0, 0.5, 0.0], [0.0, 1.0, 0.5]])

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("no published figure: the claim of Munos et al. (2024), sections 3 and 6: Nash-MD"
              " reaches the regularised Nash equilibrium, which an intransitive preference sets"
              " apart from the Bradley-Terry RLHF optimum")


@dataclass(frozen=True)
class Config(Settings):
    """One prompt, three responses, rock-paper-scissors preferences."""

    reference: tuple[float, ...] = (0.6, 0.3, 0.1)
    """The reference's probabilities of rock, paper and scissors (also the data's)."""
    betas: tuple[float, ...] = (0.05, 0.2, 1.0)
    """The KL coefficients (the game's regularisation)."""
    iterations: int = 2000
    """Nash-MD iterations (the paper's steps ``1 / (beta (t + 2))``)."""

    QUICK = {"iterations": 400}
    REFERENCE = "the paper"


def _env_and_ref(probs):
    env = TokenMDP(("Play.",), {}, max_len=2, grammar=list(MOVES))
    ref = np.where(env.legal, 1.0, 0.0) + (~env.legal.any(axis=1))[:, None]
    ref /= ref.sum(axis=1, keepdims=True)
    root = env.state_of("Play.")
    ref[root] = 0.0
    ref[root, [env.token_id[m] for m in MOVES]] = probs
    return env, ref


def run(config: Config, executor) -> dict:
    env, ref = _env_and_ref(config.reference)
    game = preference_table(env, {"Play.": (list(MOVES), RPS)})
    order = [MOVES.index(y) for _, y in game.texts]  # the model's order -> MOVES
    back = np.argsort(order)
    nash, bt, md, bt_gap, kl_last = [], [], [], [], []
    for beta in config.betas:
        eq = nash_equilibrium(env, ref, game, beta=beta).probs
        fit = loss_optimum(env, ref, game, beta=beta)  # DPO = RLHF on the BT fit
        run_ = nash_md(env, ref, game, beta=beta, iterations=config.iterations)
        nash.append(eq[back])
        bt.append(fit.probs[back])
        md.append(run_.gap)
        kl_last.append(float(eq @ np.log(eq / run_.probs[-1])))
        bt_policy = np.zeros_like(ref)
        bt_policy[:] = ref
        root = env.state_of("Play.")
        bt_policy[root, [env.token_id[m] for m in MOVES]] = fit.probs[back]
        bt_gap.append(preference_gap(env, bt_policy, ref, game, beta=beta))
    return {"betas": np.array(config.betas), "nash": np.array(nash), "bradley_terry":
            np.array(bt), "nash_md_gap": np.array(md), "nash_md_kl": np.array(kl_last),
            "bradley_terry_gap": np.array(bt_gap), "reference": np.array(config.reference)}


def plot(results: dict, out_dir, config: Config) -> list:
    betas = results["betas"]
    fig, axes = style.figure(2, 1, width=5.2, height=4.0,
                             title="Rock-paper-scissors preferences: Nash vs Bradley-Terry")
    ax = axes[0, 0]
    x = np.arange(len(MOVES))
    width = 0.8 / (2 * len(betas) + 1)
    ax.bar(x, results["reference"], width, color="0.6", label="reference")
    for i, beta in enumerate(betas):
        ax.bar(x + (2 * i + 1) * width, results["nash"][i], width, color=style.PALETTE[i + 1],
               label=f"Nash, beta={beta:g}")
        ax.bar(x + (2 * i + 2) * width, results["bradley_terry"][i], width,
               color=style.PALETTE[i + 1], alpha=0.4, hatch="//",
               label=f"Bradley-Terry RLHF, beta={beta:g}")
    ax.set_xticks(x + 0.4, MOVES)
    ax.set_ylabel("pi(y)")
    ax.legend(fontsize=7)
    ax = axes[0, 1]
    for i, beta in enumerate(betas):
        gap = results["nash_md_gap"][i]
        ax.plot(np.arange(1, gap.size + 1), np.maximum(gap, 1e-17), color=style.PALETTE[i + 1],
                label=f"Nash-MD, beta={beta:g}")
        ax.axhline(results["bradley_terry_gap"][i], color=style.PALETTE[i + 1], ls="--")
    style.label(ax, "iteration t + 1",
                "duality gap of the regularised game, exact\n(dashed: Bradley-Terry RLHF)",
                log="xy", legend=8)
    return [style.save(fig, out_dir / "nash_rps.png")]


@check("iterations")
def nash_md_reaches_the_equilibrium(results: dict) -> list[Measure]:
    """Nash-MD's last iterate is within theorem 1's ``KL(pi*, pi_T) <= 8 / (beta^2 (T + 1))``
    of the equilibrium, at every beta."""
    T = results["nash_md_gap"].shape[1] - 1
    return [
        below(
            f"KL(Nash, Nash-MD's last iterate), beta = {beta:g}",
            measured=kl,
            bound=8 / (beta**2 * (T + 1)),
            failure=f"Nash-MD is {kl:.3g} from the equilibrium",
            why="theorem 1's bound 8 / (beta^2 (T + 1))",
        )
        for beta, kl in zip(results["betas"], results["nash_md_kl"], strict=True)
    ]


@check("reference")
def bradley_terry_misses_the_equilibrium(results: dict) -> list[Measure]:
    """The Bradley-Terry RLHF optimum of the same comparisons is not the equilibrium: its
    exact duality gap is positive (a policy beats it), at every beta."""
    out = []
    for beta, gap, bt, eq in zip(results["betas"], results["bradley_terry_gap"],
                                 results["bradley_terry"], results["nash"], strict=True):
        out.append(
            above(
                f"duality gap of the Bradley-Terry optimum, beta = {beta:g}",
                measured=gap,
                bound=1e-3,
                failure=f"the Bradley-Terry optimum is an equilibrium (gap {gap:.3g})",
                why="0 only at the equilibrium",
            )
        )
        tv = 0.5 * np.abs(bt - eq).sum()
        out.append(fact(f"total variation Bradley-Terry vs Nash, beta = {beta:g}", passed=tv > 1e-3,
                        expected="> 0", measured=number(tv), failure="the two coincide"))
    return out
