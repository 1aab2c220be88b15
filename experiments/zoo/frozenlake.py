"""Gymnasium FrozenLake 8x8 (slippery): every algorithm's success probability vs steps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, check, within
from tabular.experiments.harness.settings import Settings
from tabular.experiments.zoo import curves
from tabular.experiments.zoo.curves import nobody_beats_the_optimum  # noqa: F401  (one of this experiment's checks)

ENV_ID = "FrozenLake-v1"
ENV_KWARGS = {"map_name": "8x8"}


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = (
    "no published figure: Gymnasium's FrozenLake-v1 8x8, against its exact optimal "
    "success probability (value iteration)"
)


@dataclass(frozen=True)
class Config(Settings):
    """The real Gymnasium env read through ``TabularMDP.from_gymnasium``, gamma = 0.99."""

    checkpoints: tuple[int, ...] = (25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800)
    """Episode counts at which each learner's policy is scored."""
    runs: int = 16
    """Independent runs per algorithm."""
    gamma: float = 0.99
    """Discount the learners optimise (success is scored undiscounted)."""
    seed: int = 0
    """Seed of the runs' random streams."""
    pg_alpha: float = 1.0
    """Actor step size of REINFORCE and actor-critic (the zoo's 0.1 elsewhere): the
    uniform policy reaches the goal in 0.19% of episodes, and only those move
    REINFORCE, so at 0.1 neither learner leaves the start within 12,800 episodes."""
    critic_alpha: float = 0.5
    """Actor-critic's critic step size (the zoo's 0.1 elsewhere): a faster critic
    spreads the rare goal reward back along the path before the actor needs it."""

    # Q-learning needs a few thousand episodes here: at 800 most runs have never
    # reached the goal, at 3200 nearly all succeed; actor-critic needs 12,800
    QUICK = {"checkpoints": (50, 400, 3200, 12800), "runs": 4}
    REFERENCE = "the calibration"


def run(config: Config, executor) -> dict:
    options = {"REINFORCE": {"alpha": config.pg_alpha},
               "Actor-critic": {"alpha": config.pg_alpha, "alpha_value": config.critic_alpha}}
    results = curves.sweep(executor, ENV_ID, ENV_KWARGS, config.checkpoints, config.gamma,
                        config.runs, config.seed, options=options)
    success = curves.success_model(curves.make_model(ENV_ID, ENV_KWARGS))
    uniform = np.full(success.next_state.shape[:2], 1.0 / success.next_state.shape[1])
    results["uniform_success"] = np.array(curves.success_probability(success, uniform))
    return results


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.6, height=4.4,
                             title="FrozenLake 8x8 (slippery, Gymnasium): the zoo, "
                                   f"gamma = {config.gamma:g}, "
                                   f"{results['success'].shape[1]} runs each (bands: 95% CI)\n"
                                   "the uniform policy succeeds with probability "
                                   f"{float(results['uniform_success']):.4f}, and "
                                   f"REINFORCE and actor-critic step at {config.pg_alpha:g}")
    ax = axes[0, 0]
    curves.plot_online(ax, results, smooth=50)
    ax.set_ylim(-0.02, 1.0)
    ax.set_ylabel("return per training episode = success\n(mean over runs, 50-episode "
                  "average)")
    curves.plot_curves(axes[0, 1], results)
    axes[0, 1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return [style.save(fig, out_dir / "frozenlake.png")]


@check()
def optimum_is_certain(results: dict) -> list[Measure]:
    """The optimal success probability is 1: undiscounted, a policy can wait out every
    slip (the success model is scored at gamma = 1, whatever the learners' discount)."""
    best = float(results["optimal_success"])
    return [within("optimal success probability", measured=best, expected=1.0, tolerance=1e-6,
                   failure=f"optimal success probability {best:.6f}, expected 1",
                   why="value iteration's tolerance")]


@check("checkpoints", "runs", "gamma", "pg_alpha", "critic_alpha")
def actor_critic_learns(results: dict) -> list[Measure]:
    """Actor-critic's policy succeeds in at least half the episodes at the last
    checkpoint (mean over runs), against the uniform policy's 0.19%."""
    ac = list(results["algorithms"]).index("Actor-critic")
    last = float(results["success"][ac][:, -1].mean())
    # measured (16 runs) at 12,800 episodes: every run at 0.981 to 0.987; a run that
    # has not yet found the path sits near 0.005 (3,200 episodes), so a mean of 4 runs
    # under 0.5 means two runs or more did not learn
    return [above("actor-critic's success at the last checkpoint", measured=last, bound=0.5,
                  failure=f"actor-critic's success is {last:.3f}", why="half of the 4 or 16 runs")]


@check("checkpoints", "runs", "gamma", "pg_alpha")
def reinforce_leaves_the_uniform_policy(results: dict) -> list[Measure]:
    """REINFORCE's policy succeeds at least ten times as often as the uniform policy it
    starts from at the last checkpoint (mean over runs): it learns, slowly, because only
    the rare successful episodes carry a gradient."""
    rf = list(results["algorithms"]).index("REINFORCE")
    last = float(results["success"][rf][:, -1].mean())
    floor = 10.0 * float(results["uniform_success"])
    # measured (16 runs) at 12,800 episodes: 0.04 to 0.59, mean 0.28, 10x the uniform
    # policy is 0.019
    return [above("REINFORCE's success at the last checkpoint", measured=last, bound=floor,
                  failure=f"REINFORCE's success is {last:.3f}", why="10 x the uniform policy's")]


@check("checkpoints", "gamma")
def q_learning_learns(results: dict) -> list[Measure]:
    """Q-learning's greedy policy succeeds far more often at the last checkpoint than at
    the first."""
    q = list(results["algorithms"]).index("Q-learning")
    first, last = results["success"][q][:, 0].mean(), results["success"][q][:, -1].mean()
    # measured (200 runs) at 3200 episodes: mean 0.72 with a spread of 0.26 between runs,
    # so the mean of 4 runs has a standard error of 0.13 and +0.2 lies 4 of them below;
    # the last checkpoint (12,800) is later and higher (0.85 for 16 runs, 0.88 for 4)
    return [above("Q-learning's success: last checkpoint - first", measured=last - first, bound=0.2,
                  failure=f"Q-learning's success went from {first:.2f} to {last:.2f}",
                  why="4 standard errors of a 4-run mean")]
