"""Process against outcome rewards on the running example: the same exact optimum, and how
fast REINFORCE gets there when every token is credited against the reference's
expectation (potential-based process rewards), with the exact prefix values or with a
process reward model fitted to Monte Carlo step labels."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import reinforce
from tabular.envs import load_scenario
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, number
from tabular.experiments.harness.settings import Settings
from tabular.rlhf import kl_objective, kl_optimum, train_pipeline, visit_probabilities
from tabular.rlhf.process import fit_process_reward_model, prefix_values, process_rewards

REWARDS = ("outcome", "process", "fitted PRM")


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = (
    "no published figure: outcome against potential-based process rewards (Ng, Harada and "
    "Russell, 1999) on the token MDP, against its exact optimum"
)


@dataclass(frozen=True)
class Config(Settings):
    """The capital-of-France scenario, SFT reference, REINFORCE without a baseline."""

    beta: float = 0.5
    """The KL coefficient."""
    checkpoints: tuple[int, ...] = (100, 300, 1000, 3000)
    """Episodes after which the exact objective gap is measured."""
    runs: int = 16
    """Independent runs per curve."""
    alpha: float = 0.5
    """REINFORCE's step size."""
    prm_responses: int = 200
    """Sampled responses whose prefixes label the fitted process reward model."""
    prm_completions: int = 4
    """Completions (Monte Carlo labels) per prefix."""
    seed: int = 0
    """Seed of the runs' random streams (every reward sees the same seeds) and of the
    fitted process reward model's sampled labels."""

    QUICK = {"checkpoints": (100, 300, 1000), "runs": 8}
    REFERENCE = "the calibration"


def run(config: Config, executor) -> dict:
    ex = train_pipeline(load_scenario())
    mdp, ref = ex.mdp, ex.reference
    gold = prefix_values(mdp, ref)
    prm = fit_process_reward_model(mdp, ref, responses=config.prm_responses,
                                   completions=config.prm_completions, seed=config.seed)
    mu = visit_probabilities(mdp, ref)
    prm_error = np.sqrt(np.sum(mu * (prm.values - gold) ** 2) / mu.sum())
    models = (mdp, process_rewards(mdp, gold), process_rewards(mdp, prm.values))
    optimum = kl_optimum(mdp, ref, config.beta)
    moved = max(np.abs(kl_optimum(m, ref, config.beta).endings - optimum.endings).max()
                for m in models[1:])
    gaps = np.empty((len(REWARDS), len(config.checkpoints), config.runs))
    for i, model in enumerate(models):
        for j, episodes in enumerate(config.checkpoints):  # a run's start is its own
            result = reinforce(model, ref, ref_policy=ref, beta=config.beta,
                               episodes=episodes, alpha=config.alpha, seed=config.seed,
                               runs=config.runs)
            gaps[i, j] = [optimum.value - kl_objective(mdp, result.run(r).policy, ref,
                                                       config.beta)
                          for r in range(config.runs)]
    return {"rewards": np.array(REWARDS), "checkpoints": np.array(config.checkpoints),
            "gaps": gaps, "optimum_moved": np.array(moved), "prm_error": np.array(prm_error),
            "prm_labels": np.array(prm.labels.sum())}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 1, width=5.4, height=4.0,
                             title=f"Process vs outcome rewards, REINFORCE, beta = "
                                   f"{config.beta:g}")
    ax = axes[0, 0]
    for i, name in enumerate(results["rewards"]):
        median = np.median(results["gaps"][i], axis=1)
        low, high = np.percentile(results["gaps"][i], [25, 75], axis=1)
        ax.plot(results["checkpoints"], median, "o-", color=style.PALETTE[i + 1],
                label=f"{name} reward")
        ax.fill_between(results["checkpoints"], low, high, color=style.PALETTE[i + 1],
                        alpha=0.2, linewidth=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("episodes")
    ax.set_ylabel("J(pi*) - J(pi), exact\n(median; band: quartiles)")
    ax.set_title(f"{results['gaps'].shape[2]} runs, the same optimum for all; fitted PRM: "
                 f"{int(results['prm_labels'])} step labels", fontsize=9)
    ax.legend()
    return [style.save(fig, out_dir / "process_rewards.png")]


@check()
def optimum_unmoved(results: dict) -> list[Measure]:
    """Potential-based process rewards leave the optimum where it is (Ng et al., 1999),
    whatever the potential."""
    moved = float(results["optimum_moved"])
    return [fact("distance the process rewards moved the optimum", passed=moved < 1e-12,
                 expected="0", measured=number(moved),
                 failure=f"the process rewards moved the optimum by {moved}",
                 tolerance="< 1e-12 (float rounding)")]


@check("beta", "alpha", "prm_responses", "prm_completions")
def process_rewards_are_faster(results: dict) -> list[Measure]:
    """By crediting each token against the reference's expectation, process rewards
    close the gap several times faster than the outcome reward from a few hundred
    episodes on; so does a process reward model fitted to Monte Carlo step labels."""
    outcome, process, fitted = np.median(results["gaps"], axis=2)
    late = results["checkpoints"] >= 1000
    return [fact(f"median gap with {name} / with the outcome reward, from 1000 episodes",
                 passed=(gaps[late] * 2 < outcome[late]).all(),
                 expected="< 0.5 at every checkpoint",
                 measured=str(np.round(gaps[late] / outcome[late], 3).tolist()),
                 failure=f"median gaps with {name} {np.round(gaps, 4)} are not half those "
                         f"with the outcome reward {np.round(outcome, 4)}",
                 tolerance="several times faster")
            for name, gaps in (("process rewards", process), ("the fitted PRM", fitted))]


@check("prm_responses", "prm_completions")
def fitted_prm_is_close(results: dict) -> list[Measure]:
    """The fitted process reward model's prefix values are off by a few hundredths."""
    error = float(results["prm_error"])
    return [below("fitted PRM's largest error on the prefix values", measured=error, bound=0.1,
                  failure=f"the fitted PRM is off the prefix values by {error:.3f}",
                  why="a few hundredths, from Monte Carlo labels")]
