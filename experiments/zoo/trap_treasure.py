"""Trap/treasure grid: the zoo on one grid; REINFORCE learns to avoid a trap."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from tabular import TabularMDP, reinforce
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, below, check, within
from tabular.experiments.harness.settings import Settings
from tabular.experiments.zoo import curves
from tabular.experiments.zoo.curves import nobody_beats_the_optimum  # noqa: F401  (one of this experiment's checks)

ENV_ID = "tabzoo/TrapTreasure-v0"
RIGHT = 1  # the post's action R


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = (
    "no published figure: the exact optimum of the trap/treasure grid (value iteration), "
    "against every learner"
)


@dataclass(frozen=True)
class Config(Settings):
    """The default 5x5 trap/treasure layout, treasure +1, undiscounted."""

    checkpoints: tuple[int, ...] = (5, 10, 20, 40, 80, 160, 320, 640, 1280)
    """Episode counts at which each learner's policy is scored."""
    runs: int = 20
    """Independent runs per algorithm."""
    zoo_step_reward: float = -0.01
    """Reward of every other move in the zoo comparison: without a step cost, bumping
    into a wall is worth as much as walking to the treasure and greedy learners stall."""
    gamma: float = 1.0
    """Discount the zoo's learners optimise (undiscounted, as in the post)."""
    zoo_trap_reward: float = -1.0
    """Trap reward of the zoo comparison: SARSA, expected SARSA and on-policy MC value
    every state from which exploration can reach a -inf trap at -inf, so all learners
    are compared on the finite option."""
    reinforce_alpha: float = 0.1
    """REINFORCE step size of the pi(R | left of trap) run (on the -inf grid)."""
    reward_floor: float = -1.0
    """REINFORCE's floor for the -inf trap reward (its gradient needs a finite return)."""
    reinforce_runs: int = 100
    """Independent REINFORCE runs of the pi(R | left of trap) curve: the runs split into
    those that learn to avoid the cell's R and those whose route leaves the cell early
    (their probability stays where it was), so the mean needs many runs."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {"checkpoints": (10, 40, 160, 640), "runs": 3}
    REFERENCE = "the calibration"


def right_next_to_trap(checkpoints: list, runs: int, alpha: float, floor: float,
                       seed: int) -> dict:
    """REINFORCE on the -inf grid: ``pi(R | left of the trap)`` of each run at each
    checkpoint, ``[runs, C]`` (an executor job)."""
    env = gym.make(ENV_ID)
    mdp = TabularMDP.from_gymnasium(env)
    s = env.unwrapped.left_of_trap
    probs = np.zeros((runs, len(checkpoints)))
    for c, episodes in enumerate(checkpoints):
        result = reinforce(mdp, gamma=1.0, episodes=episodes, alpha=alpha, reward_floor=floor,
                           seed=seed, runs=runs)
        probs[:, c] = [result.run(i).policy.probs()[s, RIGHT] for i in range(runs)]
    return {"p_right": probs}


def run(config: Config, executor) -> dict:
    zoo_env = {"trap_reward": config.zoo_trap_reward, "step_reward": config.zoo_step_reward}
    results = curves.sweep(executor, ENV_ID, zoo_env,
                        config.checkpoints, config.gamma, config.runs, config.seed)
    [trap] = executor.map(right_next_to_trap, [{
        "checkpoints": list(config.checkpoints), "runs": config.reinforce_runs,
        "alpha": config.reinforce_alpha, "floor": config.reward_floor, "seed": config.seed}])
    env = gym.make(ENV_ID)
    results.update({
        "pg_checkpoints": np.array([0, *config.checkpoints]),
        # episode 0: REINFORCE's default initial policy, the uniform softmax (1/4 each)
        "p_right": np.hstack([np.full((config.reinforce_runs, 1), 0.25), trap["p_right"]]),
        "left_of_trap": np.array(env.unwrapped.cell_of(env.unwrapped.left_of_trap)),
    })
    return results


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(3, 1, width=5.0, height=4.2,
                             title="Trap/treasure grid (5x5): the zoo "
                                   f"(trap {config.zoo_trap_reward:g}, "
                                   f"step {config.zoo_step_reward:g}, "
                                   f"{results['success'].shape[1]} runs, bands: 95% CI), and "
                                   "REINFORCE learning to avoid a -inf trap")
    ax = axes[0, 0]
    curves.plot_online(ax, results, smooth=20)
    ax.set_yscale("symlog", linthresh=1.0)  # long wandering episodes cost far below -1
    ax.set_ylim(top=1.2)
    ax.set_yticks([-10, -3, -1, -0.5, 0, 0.5, 1], ["-10", "-3", "-1", "-0.5", "0", "0.5", "1"])
    ax.yaxis.set_minor_locator(style.matplotlib.ticker.NullLocator())
    ax.set_ylabel("return per training episode (symlog scale;\nmean over runs, "
                  "20-episode average)")
    ax = axes[0, 1]
    curves.plot_curves(ax, results)
    ax.set_ylabel("probability of reaching the treasure\n(exact; mean over runs)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(0.0, 0.55))
    ax = axes[0, 2]
    i, j = results["left_of_trap"]
    x = results["pg_checkpoints"]
    p = results["p_right"]
    style.mean_band(ax, x, p, f"REINFORCE: mean of {p.shape[0]} runs",
                    style.color("REINFORCE"))
    ax.plot(x, np.median(p, axis=0), color=style.color("REINFORCE"), linestyle="--",
            label="REINFORCE: median run")
    ax.axhline(0.25, color="0.5", linestyle=":", label="uniform prior (0.25)")
    ax.set_xscale("symlog", linthresh=10)
    ax.set_ylim(0, 0.5)
    ax.set_xlim(0, x[-1] * 1.1)
    ax.set_xlabel("training episodes (symlog scale)")
    ax.set_ylabel(f"$\\pi_\\theta$(R | ({i}, {j})), the cell left of a trap")
    ax.set_title("trap reward -inf (reward floor -1 in the gradient)")
    ax.legend()
    return [style.save(fig, out_dir / "trap_treasure.png")]


@check()
def optimum_is_certain(results: dict) -> list[Measure]:
    """The optimal success probability is 1: the grid is deterministic."""
    best = float(results["optimal_success"])
    return [within("optimal success probability", measured=best, expected=1.0, tolerance=1e-9,
                   failure=f"optimal success {best}, expected 1 on a deterministic grid",
                   why="float rounding")]


@check("checkpoints", "zoo_step_reward", "gamma", "zoo_trap_reward")
def q_learning_finds_the_treasure(results: dict) -> list[Measure]:
    """Q-learning's greedy policy reaches the treasure for sure by the last checkpoint."""
    q = list(results["algorithms"]).index("Q-learning")
    final = float(results["success"][q][:, -1].mean())
    return [above("Q-learning's greedy success probability, last checkpoint", measured=final,
                  bound=0.99 - 1e-12,
                  failure=f"Q-learning's greedy policy reaches the treasure with p = {final:.2f}",
                  why="for sure, to 0.01")]


@check("checkpoints", "reinforce_alpha", "reward_floor")
def reinforce_avoids_the_trap(results: dict) -> list[Measure]:
    """REINFORCE drives pi(R | left of trap) to ~0 in most runs and far below the prior
    0.25 on average."""
    p = results["p_right"]
    mean, learned = p.mean(axis=0), np.mean(p[:, -1] < 0.05)
    # Each trap visit costs the floor's full gradient, so a run that keeps visiting the cell
    # drives pi(R) to ~0, while a run whose route leaves the cell early stops updating it:
    # about two thirds of runs end below 0.05, with a mean near 0.08. Both thresholds sit
    # about 5 standard errors of a 100-run fraction (or mean) away from that.
    return [
        above("fraction of runs ending with pi(R | left of trap) < 0.05", measured=learned,
              bound=0.4 - 1e-12,
              failure=f"only {learned:.0%} of runs end with pi(R | left of trap) below 0.05 "
                      "(expected: about two thirds)", why="5 standard errors below 2/3"),
        below("mean final pi(R | left of trap)", measured=mean[-1], bound=0.15 - 1e-12,
              failure=f"pi(R | left of trap) goes {np.round(mean, 3).tolist()} on average: "
                      "it should end below 0.15 (prior 0.25)", why="5 standard errors above 0.08"),
    ]
