"""Every preference loss of the library against two exact answers: the KL-regularised
optimum ``pi*`` of the reward model, and the loss's own population optimum.

On the capital-of-France scenario (and, for the gap to ``pi*``, on the grammar
scenario), comparisons of two responses of the SFT model are
labelled by Bradley-Terry on the reward model, so DPO's population optimum is ``pi*``
itself; every other loss has its own optimum (:func:`~tabular.rlhf.loss_optimum`:
IPO's least-squares point, cDPO's smoothed target, ...). For each loss the experiment
reports the exact gap ``J* - J`` of that own optimum, and, for the learner trained on
sampled comparisons (full-batch descent from the SFT model, each budget its own data),
its gap to ``pi*`` and its KL from the loss's own optimum, both exact over the
responses. A learner can be far from ``pi*`` because its loss aims elsewhere (its own
optimum's gap) or because its data are few (its KL to its own optimum): the two
columns tell them apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.envs import load_grammar_scenario, load_scenario
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, number
from tabular.experiments.harness.settings import Settings
from tabular.experiments.rlhf.loss_family import LOSSES, QUADRATIC
from tabular.rlhf import (
    bradley_terry_preference,
    dpo,
    ending_probabilities,
    kl_optimum,
    loss_optimum,
    path_returns,
    train_pipeline,
)

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("no published figure: TRL's preference losses against pi* and against each "
              "loss's own exact population optimum")


@dataclass(frozen=True)
class Config(Settings):
    """The capital-of-France scenario, comparisons of the SFT model's responses."""

    beta: float = 1.0
    """The KL coefficient (SimPO's, CPO's and ORPO's beta too)."""
    budgets: tuple[int, ...] = (64, 1024)
    """Sampled responses (two per comparison)."""
    runs: int = 8
    """Independent data sets per budget."""
    grammar_budgets: tuple[int, ...] = (256,)
    """Sampled responses on the grammar scenario (gap to pi* only: its responses are too
    many for the own optimum's dense solver); empty: the capital of France only."""
    grammar_runs: int = 2
    """Independent data sets on the grammar scenario."""
    steps: int = 400
    """Full-batch gradient steps."""
    alpha: float = 0.5
    """Step size (a fifth of it for the quadratic losses)."""
    seed: int = 0
    """Seed of the sampled comparisons."""

    QUICK = {"runs": 4, "grammar_budgets": ()}
    REFERENCE = "the calibration"


def _comparisons(env, draws, rewards, n, rng):
    """``n`` comparisons of two distinct responses of the SFT model to one prompt (the
    first from ``P(x, y)``, the second from ``P(y | x)``; ``draws``: ``(texts, prompt,
    probs)`` of its responses), the first winning with probability ``sigma(r_1 - r_2)``,
    as ``(count, prompt, winner, loser)``."""
    texts, prompt, probs = draws
    counts: dict = {}
    cdf = np.cumsum(probs)
    while sum(counts.values()) < n:
        i = min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")),
                len(probs) - 1)
        mine = np.flatnonzero(prompt == prompt[i])
        c = np.cumsum(probs[mine])
        j = mine[min(int(np.searchsorted(c, rng.random() * c[-1], side="right")),
                     len(mine) - 1)]
        if i == j:
            continue
        w, lo = (i, j) if rng.random() < 1 / (1 + np.exp(rewards[j] - rewards[i])) else (j, i)
        counts[(w, lo)] = counts.get((w, lo), 0) + 1
    return [(c, env.prompts[prompt[w]], texts[w], texts[lo]) for (w, lo), c in counts.items()]


def _scenario(ex, config: Config, budgets, runs, own_optima: bool) -> dict:
    """Every loss on one scenario: its own optimum's gap (``own_optima``) and the
    learner's gap to ``pi*`` and KL to that optimum, ``[loss, budget, run]``."""
    env, mdp, ref = ex.env, ex.mdp, ex.reference
    beta = config.beta
    star = kl_optimum(mdp, ref, beta)
    returns = path_returns(mdp)
    ends_ref = ending_probabilities(mdp, ref)
    s, a = np.nonzero(ends_ref > 0)
    texts = [env.text(int(mdp.next_state[i, j, 0])) for i, j in zip(s, a, strict=True)]
    probs = ends_ref[s, a]
    prompt = env.state_prompt[s]
    pref = bradley_terry_preference(env, ref) if own_optima else None

    def objective(p):  # J = E[r] - beta KL over the responses (p: joint P(x, y))
        on = p > 0
        return float(p @ returns[s, a] - beta * np.sum(p[on] * np.log(p[on] / probs[on])))

    names = list(LOSSES)
    own_gap = np.full(len(names), np.nan)
    gap = np.full((len(names), len(budgets), runs), np.nan)
    own_kl = np.full_like(gap, np.nan)
    streams = [np.random.default_rng(q) for q in np.random.SeedSequence(config.seed).spawn(
        runs)]
    data = [[_comparisons(env, (texts, prompt, probs), returns[s, a], b // 2, rng)
             for rng in streams] for b in budgets]
    for i, name in enumerate(names):
        options = LOSSES[name]
        own = None
        if own_optima:
            try:
                found = loss_optimum(env, ref, pref, beta=beta, **options)
                own = found.endings[s, a]
                own_gap[i] = star.value - objective(own)
            except (RuntimeError, ValueError):  # hinge's set, a boundary infimum
                pass
        alpha = config.alpha / 5 if name in QUADRATIC else config.alpha
        for k in range(len(budgets)):
            for r in range(runs):
                pi = dpo(env, ref, data[k][r], beta=beta, ref_policy=ref, steps=config.steps,
                         alpha=alpha, **options).policy
                p = ending_probabilities(mdp, pi)[s, a]
                gap[i, k, r] = star.value - objective(p)
                if own is not None:
                    on = p > 0
                    own_kl[i, k, r] = float(np.sum(p[on] * np.log(p[on] / own[on])))
    return {"own_gap": own_gap, "gap": gap, "own_kl": own_kl, "budgets": np.array(budgets)}


def run(config: Config, executor) -> dict:
    out = {"losses": np.array(list(LOSSES))}
    capital = _scenario(train_pipeline(load_scenario()), config, config.budgets, config.runs,
                        True)
    out.update(capital)
    if config.grammar_budgets:
        grammar = _scenario(train_pipeline(load_grammar_scenario("assistant")), config,
                            config.grammar_budgets, config.grammar_runs, False)
        out.update({f"grammar_{k}": v for k, v in grammar.items()})
    return out


def table(results: dict):
    grammar = "grammar_gap" in results
    header = ["loss", "own optimum's J* - J"] + [
        f"{h}, {b} responses" for b in results["budgets"]
        for h in ("J* - J", "KL(pi || own optimum)")] + (
        [f"grammar: J* - J, {b} responses" for b in results["grammar_budgets"]]
        if grammar else [])
    rows = []
    for i, name in enumerate(results["losses"]):
        row = [str(name), number(results["own_gap"][i])]
        for k in range(len(results["budgets"])):
            row += [number(results["gap"][i, k].mean()), number(results["own_kl"][i, k].mean())]
        if grammar:
            row += [number(results["grammar_gap"][i, k].mean())
                    for k in range(len(results["grammar_budgets"]))]
        rows.append(row)
    return header, rows


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 1, width=9.0, height=4.6,
                             title=f"Preference losses: gap to pi* and its own optimum's, "
                                   f"beta = {config.beta:g}")
    ax = axes[0, 0]
    names = [str(n) for n in results["losses"]]
    x = np.arange(len(names))
    ax.bar(x - 0.3, np.maximum(results["own_gap"], 1e-6), 0.2, color="0.3",
           label="its own optimum (exact)")
    for k, b in enumerate(results["budgets"]):
        ax.bar(x - 0.1 + 0.2 * k, results["gap"][:, k].mean(axis=1), 0.2,
               color=style.PALETTE[k + 1], label=f"learner, {b} responses (mean)")
    ax.set_yscale("log")
    ax.set_xticks(x, names, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("J* - J, exact")
    ax.legend(fontsize=8)
    return [style.save(fig, out_dir / "loss_optima.png")]


@check()
def dpo_aims_at_pi_star(results: dict) -> list[Measure]:
    """DPO's own optimum is ``pi*`` (Bradley-Terry labels, every pair of the SFT model's
    responses compared): its gap is 0 to rounding, and IPO's is not (it aims at its
    least-squares point)."""
    names = list(results["losses"])
    dpo_gap = results["own_gap"][names.index("DPO")]
    ipo_gap = results["own_gap"][names.index("IPO")]
    return [
        below(
            "DPO's own optimum: |J* - J|",
            measured=abs(dpo_gap),
            bound=1e-12,
            failure=f"DPO's own optimum is {dpo_gap:.3g} from pi*",
            why="float rounding",
        ),
        fact(
            "IPO's own optimum: J* - J",
            passed=ipo_gap > 1e-6,
            expected="> 0",
            measured=number(ipo_gap),
            failure="IPO's own optimum is pi*",
        ),
    ]


@check("beta", "budgets", "steps", "alpha")
def more_data_nears_the_own_optimum(results: dict) -> list[Measure]:
    """For DPO, IPO and cDPO, more comparisons bring the learner closer to its own
    optimum (mean KL over runs falls from the smallest budget to the largest)."""
    names = list(results["losses"])
    out = []
    for name in ("DPO", "IPO", "cDPO (eps 0.1)"):
        kl = results["own_kl"][names.index(name)].mean(axis=1)
        out.append(
            fact(
                f"{name}: mean KL(pi || own optimum) by budget",
                passed=kl[-1] < kl[0],
                expected="falls",
                measured=str(np.round(kl, 4).tolist()),
                failure=f"{name} did not near its own optimum with more data",
            )
        )
    return out
