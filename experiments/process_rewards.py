"""Process against outcome rewards on the running example: the same exact optimum, and how
fast REINFORCE gets there when every token is credited against the reference's
expectation (potential-based process rewards)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs import load_scenario
from tabular import reinforce
from tabular.rlhf import kl_objective, kl_optimum, train_pipeline
from tabular.rlhf.process import prefix_values, process_rewards

from . import style

REWARDS = ("outcome", "process")


@dataclass(frozen=True)
class Config:
    """The capital-of-France scenario, SFT reference, REINFORCE without a baseline."""

    beta: float = 0.5
    """The KL coefficient."""
    checkpoints: tuple = (100, 300, 1000, 3000)
    """Episodes after which the exact objective gap is measured."""
    runs: int = 16
    """Independent runs per curve."""
    alpha: float = 0.5
    """REINFORCE's step size."""
    seed: int = 0
    """Seed of the runs' random streams (both rewards see the same seeds)."""

    @classmethod
    def quick(cls) -> Config:
        return cls(checkpoints=(100, 300, 1000), runs=8)

    def __post_init__(self):
        object.__setattr__(self, "checkpoints", tuple(int(n) for n in self.checkpoints))


def run(config: Config, executor) -> dict:
    ex = train_pipeline(load_scenario())
    mdp, ref = ex.mdp, ex.reference
    shaped = process_rewards(mdp, prefix_values(mdp, ref))
    optimum = kl_optimum(mdp, ref, config.beta)
    moved = np.abs(kl_optimum(shaped, ref, config.beta).endings - optimum.endings).max()
    gaps = np.empty((len(REWARDS), len(config.checkpoints), config.runs))
    for i, model in enumerate((mdp, shaped)):
        for j, episodes in enumerate(config.checkpoints):  # a run's start is its own
            result = reinforce(model, ref, ref_policy=ref, beta=config.beta,
                               episodes=episodes, alpha=config.alpha, seed=config.seed,
                               runs=config.runs)
            gaps[i, j] = [optimum.value - kl_objective(mdp, result.run(r).policy, ref,
                                                       config.beta)
                          for r in range(config.runs)]
    return {"rewards": np.array(REWARDS), "checkpoints": np.array(config.checkpoints),
            "gaps": gaps, "optimum_moved": np.array(moved)}


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
    ax.set_title(f"{results['gaps'].shape[2]} runs, the same optimum for both")
    ax.legend()
    return [style.save(fig, out_dir / "process_rewards.png")]


def check(results: dict) -> list[str]:
    """Potential-based process rewards leave the optimum where it is and, by crediting
    each token against the reference's expectation, close the gap several times faster
    than the outcome reward from a few hundred episodes on."""
    failures = []
    if not float(results["optimum_moved"]) < 1e-12:
        failures.append(f"the process rewards moved the optimum by {results['optimum_moved']}")
    outcome, process = np.median(results["gaps"], axis=2)
    late = results["checkpoints"] >= 1000
    if not (process[late] * 2 < outcome[late]).all():
        failures.append(f"median gaps with process rewards {np.round(process, 4)} are not "
                        f"half those with the outcome reward {np.round(outcome, 4)}")
    return failures
