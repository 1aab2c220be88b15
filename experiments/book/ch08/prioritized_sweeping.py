"""Example 8.4: prioritized sweeping against Dyna-Q on finer and finer mazes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import dyna_q, prioritized_sweeping, value_iteration
from tabular.envs.mazes import DYNA_MAZE, finer_maze, greedy_steps, maze
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact
from tabular.experiments.harness.settings import Settings

GAMMA = 0.95  # Example 8.1
LEARNERS = {"dyna_q": dyna_q, "prioritized_sweeping": prioritized_sweeping}
LABELS = {"dyna_q": "Dyna-Q", "prioritized_sweeping": "prioritized sweeping"}


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 8.4"


@dataclass(frozen=True)
class Config(Settings):
    """Example 8.4: the Dyna maze drawn ``factor`` times finer (47 factor^2 states),
    n = 5 planned updates per real step, alpha = 0.5, epsilon = 0.1, gamma = 0.95,
    theta = 1e-4. A run counts its updates (planned, and Dyna-Q's direct ones) until,
    at the end of an episode, the greedy path from the start reaches the goal in at
    most ``slack`` times the shortest path's steps."""

    factors: tuple[int, ...] = (1, 2, 3, 4, 5)
    """Resolutions of the maze (the book's sizes 47 ... 6,016 are factors 1 ... 11)."""
    runs: int = 10
    """Independent runs per maze and learner."""
    episodes: int = 200
    """Episodes a run may take (a run that has not found the path by then counts as
    never, which only raises the median if it is most runs)."""
    slack: float = 1.2
    """A path within ``slack`` times the shortest counts as found (the book's
    reference code's criterion; at fine resolutions the exact optimum is one of many
    nearly equal paths)."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {"factors": (1, 2), "runs": 8}


def updates_until_found(factor: int, learner: str, config: Config) -> np.ndarray:
    """Each run's updates until its greedy path is within ``slack`` of the shortest,
    ``[runs]``. The learner is rerun for ``k = 1, 2, ...`` episodes on the same streams
    (its first ``k`` episodes do not depend on how many follow) and the path checked
    after each. A run that has not found the path is ``inf``: either it did not within
    ``episodes``, or the search stopped early because its updates so far already
    exceed the upper quartile, which it therefore cannot change (nor the median)."""
    mdp = maze(finer_maze(DYNA_MAZE, factor)).to_mdp()
    limit = int(config.slack * 14 * factor)
    found = np.full(config.runs, np.inf)
    for k in range(1, config.episodes + 1):
        res = LEARNERS[learner](mdp, planning_steps=5, gamma=GAMMA, alpha=0.5, epsilon=0.1,
                                episodes=k, runs=config.runs, seed=config.seed)
        so_far = res.episode_updates.sum(axis=1)
        for i in np.flatnonzero(np.isinf(found)):
            if greedy_steps(mdp, res.Q[i], limit) is not None:
                found[i] = so_far[i]
        if (so_far[np.isinf(found)] > upper_quartile(found)).all():
            break
    return found


def upper_quartile(needed: np.ndarray) -> float:
    """The upper quartile of the runs' updates (a run's own value, not interpolated)."""
    return float(np.percentile(needed, 75, method="nearest"))


def shortest_path(factor: int) -> int:
    """The shortest path's steps in the maze of ``factor`` (from its exact ``Q*``)."""
    mdp = maze(finer_maze(DYNA_MAZE, factor)).to_mdp()
    return greedy_steps(mdp, value_iteration(mdp, GAMMA).Q, 100 * factor)


def run(config: Config, executor) -> dict:
    jobs = [{"factor": f, "learner": name, "config": config}
            for f in config.factors for name in LEARNERS]
    needed = iter(executor.map(updates_until_found, jobs, desc="mazes"))
    results = {"factors": np.array(config.factors),
               "states": np.array([47 * f * f for f in config.factors]),
               "shortest": np.array([shortest_path(f) for f in config.factors])}
    rows = {name: [] for name in LEARNERS}
    for _ in config.factors:
        for name in LEARNERS:
            rows[name].append(next(needed))
    return results | {name: np.array(rows[name]) for name in LEARNERS}


def medians(results: dict, name: str) -> np.ndarray:
    """The median over runs of the updates each maze needed (``inf`` when most runs
    never found the path)."""
    return np.percentile(results[name], 50, axis=1, method="nearest")


def plot(results: dict, out_dir, config: Config) -> list:
    runs = results["dyna_q"].shape[1]
    fig, axes = style.figure(1, 1, width=5.2, height=4.0,
                             title=f"Example 8.4: prioritized sweeping on finer mazes "
                                   f"({runs} runs, median and quartiles)")
    ax = axes[0, 0]
    for i, name in enumerate(LEARNERS):
        low, mid, high = np.percentile(results[name], [25, 50, 75], axis=1, method="nearest")
        ax.plot(results["states"], mid, "o-", color=style.PALETTE[i + 1], label=LABELS[name])
        ax.fill_between(results["states"], low, high, color=style.PALETTE[i + 1], alpha=0.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("gridworld size (states)")
    ax.set_ylabel(f"updates until a path within {config.slack:g}x the shortest")
    ax.legend()
    return [style.save(fig, out_dir / "prioritized_sweeping.png")]


@check()
def shortest_paths(results: dict) -> list[Measure]:
    """The shortest path of the maze drawn ``factor`` times finer is 14 x factor steps
    (value iteration: no setting changes it)."""
    return [fact("shortest path by maze factor", passed=(results["shortest"] == 14 * results[
                 "factors"]).all(), expected=f"14 x factor = {(14 * results['factors']).tolist()}",
                 measured=str(results["shortest"].tolist()),
                 failure=f"the shortest paths {results['shortest']} are not 14 x factor")]


@check("slack", "episodes")
def fewer_updates(results: dict) -> list[Measure]:
    """Example 8.4's finding: on every maze size prioritized sweeping finds the path in
    far fewer updates than Dyna-Q (asserted: the median over runs at most 2/3 of
    Dyna-Q's; measured 2.1-4.2x fewer over 10 runs of factors 1-6), and both need more
    updates on bigger mazes."""
    order = np.argsort(results["states"])  # --set factors may list them in any order
    plain = medians(results, "dyna_q")[order]
    sweeping = medians(results, "prioritized_sweeping")[order]
    measures = [
        fact("mazes where prioritized sweeping found the path in most runs",
             passed=np.isfinite(sweeping).all(), expected="every maze",
             measured=f"{int(np.isfinite(sweeping).sum())} of {len(sweeping)}",
             failure=f"prioritized sweeping did not find the path in most runs on the "
                     f"mazes of {results['states'][order][~np.isfinite(sweeping)]} states"),
        fact("median updates: prioritized sweeping / Dyna-Q, by maze size",
             passed=(1.5 * sweeping <= plain).all(), expected="<= 2/3 on every maze",
             measured=str(np.round(sweeping / plain, 3).tolist()),
             failure=f"prioritized sweeping's median updates {sweeping} are not at most "
                     f"2/3 of Dyna-Q's {plain}", tolerance="Example 8.4: far fewer"),
    ]
    for name, needed in (("Dyna-Q", plain), ("prioritized sweeping", sweeping)):
        measures.append(fact(f"{name}'s median updates, smallest maze to largest",
                             passed=(needed[1:] > needed[:-1]).all(), expected="growing",
                             measured=str(needed.tolist()),
                             failure=f"{name}'s updates {needed} do not grow with the maze",
                             tolerance="ordering"))
    return measures
