"""Exercise 5.12: the racetrack, solved by value iteration and learned by off-policy MC control."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from envs.racetrack import Racetrack
from tabular import mc_control, policy_evaluation, value_iteration

from . import style


@dataclass(frozen=True)
class Config:
    """Figure 5.5's left track, noise 0.1, -1 per step, gamma = 1."""

    episodes: tuple = (10_000, 30_000, 100_000, 300_000, 1_000_000, 2_000_000)
    """Episodes of off-policy MC control at which the learned greedy policy is evaluated
    (a run's random stream does not depend on its length, so each is one learning curve)."""
    epsilon: float = 0.3
    """Exploration of the epsilon-greedy behaviour policy."""
    initial_Q: float = -100.0
    """Pessimistic start values: a pair never updated is never the greedy choice (with 0,
    untried actions, crashes included, stay greedy and the greedy policy may never end)."""
    max_steps: int = 1000
    """Step limit of one learning episode."""
    seed: int = 0
    """Seed of the learner and of the crash re-draws of the trajectories."""

    @classmethod
    def quick(cls) -> Config:
        return cls(episodes=(10_000, 30_000, 100_000, 300_000))

    def __post_init__(self):
        object.__setattr__(self, "episodes", tuple(int(n) for n in self.episodes))


def start_value(mdp, policy) -> float:
    """The exact value of ``policy`` from the start distribution. Iterative evaluation
    (gamma = 1, V0 = 0): after ``k`` sweeps ``V`` is the expected return of the first
    ``k`` steps, so a policy that never finishes shows as about ``-max_iter``."""
    result = policy_evaluation(mdp, policy, 1.0, method="sync", tol=1e-9, max_iter=3000,
                               strict=False)
    return float(mdp.start @ result.V)


def padded(paths: list) -> np.ndarray:
    """The cell paths as one ``int [n, longest, 2]`` array (results are plain arrays); each
    path repeats its last cell after its end (``path_lengths`` says where)."""
    longest = max(len(cells) for cells in paths)
    return np.array([np.concatenate([cells, np.repeat(cells[-1:], longest - len(cells), 0)])
                     for cells in paths])


def run(config: Config, executor) -> dict:
    began = time.perf_counter()
    env = Racetrack()
    quiet = Racetrack(noise=0.0)  # same states and actions, for the noise-free drives
    mdp = env.to_mdp()
    build = time.perf_counter() - began
    began = time.perf_counter()
    best = value_iteration(mdp, 1.0)
    solve = time.perf_counter() - began
    drives = [quiet.trajectory(best.policy, i, seed=config.seed)
              for i in range(len(env.start_cells))]
    began = time.perf_counter()
    learned = []
    for n in config.episodes:
        result = mc_control(mdp, method="off_policy", importance_sampling="weighted",
                            episodes=n, epsilon=config.epsilon, initial_Q=config.initial_Q,
                            max_steps=config.max_steps, seed=config.seed)
        learned.append(start_value(mdp, result.policy))
    learn = time.perf_counter() - began
    return {"chars": env.chars, "optimum": np.array(float(mdp.start @ best.V)),
            "optimum_evaluated": np.array(start_value(mdp, best.policy)),
            "start_values": best.V[mdp.start > 0],
            "paths": padded([cells for cells, _, _ in drives]),
            "path_lengths": np.array([len(cells) for cells, _, _ in drives]),
            "crashes": np.array([crashes for _, crashes, _ in drives]),
            "finished": np.array([done for _, _, done in drives]),
            "episodes": np.array(config.episodes), "learned": np.array(learned),
            "sizes": np.array([mdp.n_states, mdp.n_actions, mdp.n_outcomes]),
            "seconds": np.array([build, solve, learn])}


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(2, 1, width=5.0, height=6.0,
                             title="Exercise 5.12: the racetrack (Figure 5.5, left track)")
    ax = axes[0, 0]
    chars = results["chars"]
    picture = np.select([chars == ord("#"), chars == ord("S"), chars == ord("F")],
                        [0.0, 0.6, 0.8], 1.0)
    ax.imshow(picture, cmap="gray", vmin=0, vmax=1)
    for i, (cells, n) in enumerate(zip(results["paths"], results["path_lengths"],
                                       strict=True)):
        ax.plot(cells[:n, 1], cells[:n, 0], "o-", ms=3, lw=1.2,
                color=style.PALETTE[i % len(style.PALETTE)], label=f"start {i}")
    ax.set_title("optimal policy, noise off", fontsize=9)
    ax.legend(fontsize=7, loc="lower right", frameon=True, framealpha=1.0)
    ax = axes[0, 1]
    ax.plot(results["episodes"], -results["learned"], "o-", color=style.color("MC"),
            label="off-policy MC (weighted IS), greedy")
    ax.axhline(-float(results["optimum"]), color="black", linestyle=":",
               label="optimal (value iteration)")
    ax.set_xscale("log")
    ax.set_xlabel("episodes (log scale)")
    ax.set_ylabel("expected steps to finish from the start line")
    ax.set_title(f"epsilon = {config.epsilon}, Q0 = {config.initial_Q}", fontsize=9)
    ax.legend(fontsize=8)
    return [style.save(fig, out_dir / "racetrack.png")]


def table(results: dict):
    """The learned policy's expected steps against the optimum, per episode count."""
    optimum = -float(results["optimum"])
    return (["episodes", "expected steps", "gap to optimum"],
            [[int(n), round(-float(v), 3), round(-float(v) - optimum, 3)]
             for n, v in zip(results["episodes"], results["learned"], strict=True)])


def check(results: dict) -> list[str]:
    """Every noise-free optimal drive finishes, crashing only to re-draw its start cell;
    value iteration's start value agrees with evaluating its policy; off-policy MC's
    greedy policy ends within 1.5 steps of the optimum (about 0.5 after two million
    episodes) and improves on its first checkpoint."""
    failures = []
    if not results["finished"].all():
        failures.append(f"noise-free optimal drives from start cells "
                        f"{np.flatnonzero(~results['finished']).tolist()} do not finish")
    optimum = float(results["optimum"])
    if not (-30.0 < optimum < 0.0 and abs(float(results["optimum_evaluated"]) - optimum) < 1e-6):
        failures.append(f"value iteration's start value {optimum:.4f} is not finite and "
                        f"negative, or its policy is worth {results['optimum_evaluated']}")
    learned = results["learned"]
    gap = optimum - float(learned[-1])
    if not -1e-6 < gap < 1.5:
        failures.append(f"off-policy MC's greedy policy is {gap:.3f} steps from the optimum "
                        "(expected within 1.5)")
    if not learned[-1] > learned[0]:
        failures.append(f"off-policy MC did not improve: {learned[0]:.3f} -> {learned[-1]:.3f}")
    return failures
