"""Exercise 5.12: both racetracks, solved by value iteration and by off-policy MC control."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tabular import mc_control, policy_evaluation, value_iteration
from tabular.envs.racetrack import Racetrack
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact
from tabular.experiments.harness.settings import Settings

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Exercise 5.12 (Figure 5.5's two tracks)"


@dataclass(frozen=True)
class Config(Settings):
    """Figure 5.5's two tracks, noise 0.1, -1 per step, gamma = 1."""

    tracks: tuple[str, ...] = ("racetrack_1", "racetrack_2")
    """The layouts (files of ``envs/layouts/``): Figure 5.5's left and right tracks."""
    episodes: tuple[int, ...] = (10_000, 30_000, 100_000, 300_000, 1_000_000, 2_000_000)
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

    QUICK = {"tracks": ("racetrack_1",), "episodes": (10_000, 30_000, 100_000, 300_000)}


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


def solve_track(layout: str, config: Config) -> dict:
    """One track: its exact optimum by value iteration, the optimal policy's noise-free
    drive from every start cell, and off-policy MC control's greedy policy at each
    episode count, evaluated exactly."""
    began = time.perf_counter()
    env = Racetrack(layout)
    quiet = Racetrack(layout, noise=0.0)  # same states and actions, for the noise-free drives
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
            "learned": np.array(learned),
            "sizes": np.array([mdp.n_states, mdp.n_actions, mdp.n_outcomes]),
            "seconds": np.array([build, solve, learn])}


def run(config: Config, executor) -> dict:
    tracks = executor.map(solve_track, [{"layout": t, "config": config} for t in config.tracks],
                          desc="tracks")
    return {"episodes": np.array(config.episodes)} | {
        f"{key}_{t}": value for t, track in enumerate(tracks) for key, value in track.items()}


def track_results(results: dict, t: int) -> dict:
    """The numbers of track ``t`` (keys without their ``_t`` suffix)."""
    suffix = f"_{t}"
    return {key[:-len(suffix)]: value for key, value in results.items()
            if key.endswith(suffix)}


def n_tracks(results: dict) -> int:
    return sum(key.startswith("optimum_") and key[len("optimum_"):].isdigit()
               for key in results)


def plot(results: dict, out_dir, config: Config) -> list:
    tracks = n_tracks(results)
    fig, axes = style.figure(2, tracks, width=5.0, height=5.0,
                             title="Exercise 5.12: the racetracks of Figure 5.5")
    for t in range(tracks):
        track = track_results(results, t)
        ax = axes[t, 0]
        chars = track["chars"]
        picture = np.select([chars == ord("#"), chars == ord("S"), chars == ord("F")],
                            [0.0, 0.6, 0.8], 1.0)
        ax.imshow(picture, cmap="gray", vmin=0, vmax=1)
        for i, (cells, n) in enumerate(zip(track["paths"], track["path_lengths"],
                                           strict=True)):
            ax.plot(cells[:n, 1], cells[:n, 0], "o-", ms=3, lw=1.2,
                    color=style.PALETTE[i % len(style.PALETTE)])
        ax.set_title(f"{config.tracks[t] if t < len(config.tracks) else t}: optimal "
                     f"policy from each of {len(track['paths'])} start cells, noise off",
                     fontsize=9)
        ax = axes[t, 1]
        ax.plot(results["episodes"], -track["learned"], "o-", color=style.color("MC"),
                label="off-policy MC (weighted IS), greedy")
        ax.axhline(-float(track["optimum"]), color="black", linestyle=":",
                   label="optimal (value iteration)")
        style.label(ax, "episodes (log scale)", "expected steps to finish from the start line",
                    log="x", title=f"epsilon = {config.epsilon}, Q0 = {config.initial_Q}",
                    legend=8)
    return [style.save(fig, out_dir / "racetrack.png")]


def table(results: dict):
    """Per track, the learned policy's expected steps against the optimum, per episode
    count."""
    rows = []
    for t in range(n_tracks(results)):
        track = track_results(results, t)
        optimum = -float(track["optimum"])
        rows += [[t, int(n), round(-float(v), 3), round(-float(v) - optimum, 3)]
                 for n, v in zip(results["episodes"], track["learned"], strict=True)]
    return ["track", "episodes", "expected steps", "gap to optimum"], rows


@check()
def optimal_drives(results: dict) -> list[Measure]:
    """On each track: every noise-free optimal drive finishes, crashing only to re-draw
    its start cell; value iteration's start value agrees with evaluating its policy;
    no learned policy beats it."""
    measures = []
    for t in range(n_tracks(results)):
        track = track_results(results, t)
        optimum = float(track["optimum"])
        evaluated = float(track["optimum_evaluated"])
        measures += [
            fact(f"track {t}: noise-free optimal drives that finish",
                 passed=track["finished"].all(), expected="every start cell",
                 measured=f"{int(track['finished'].sum())} of "
                          f"{track['finished'].size}",
                 failure=f"track {t}: noise-free optimal drives from start cells "
                         f"{np.flatnonzero(~track['finished']).tolist()} do not finish"),
            fact(f"track {t}: start value, value iteration and its policy evaluated",
                 passed=-30.0 < optimum < 0.0 and abs(evaluated - optimum) < 1e-6,
                 expected="equal, in (-30, 0)", measured=f"{optimum:.6f} and {evaluated:.6f}",
                 failure=f"track {t}: value iteration's start value {optimum:.4f} is not "
                         "finite and negative, or its policy is worth "
                         f"{track['optimum_evaluated']}",
                 tolerance="1e-6 (solver tolerance)"),
            fact(f"track {t}: best learned policy's start value",
                 passed=(track["learned"] <= optimum
                 + 1e-6).all(), expected=f"<= the optimum {optimum:.4f}",
                 measured=f"{track['learned'].max():.4f}",
                 failure=f"track {t}: a learned policy is worth {track['learned'].max()}, "
                         f"more than the optimum {optimum:.4f}", tolerance="1e-6"),
        ]
    return measures


@check("tracks", "episodes", "epsilon", "initial_Q", "max_steps")
def off_policy_mc_learns(results: dict) -> list[Measure]:
    """On each track, off-policy MC's greedy policy ends within 1.5 steps of the optimum
    (after two million episodes about 0.5 on the left track, 1.0 on the right) and
    improves on its first checkpoint."""
    measures = []
    for t in range(n_tracks(results)):
        track = track_results(results, t)
        learned = track["learned"]
        gap = float(track["optimum"]) - float(learned[-1])
        measures += [
            fact(f"track {t}: optimum - off-policy MC's final greedy value", passed=gap < 1.5,
                 expected="< 1.5 steps", measured=f"{gap:.3f}",
                 failure=f"track {t}: off-policy MC's greedy policy is {gap:.3f} steps "
                         "from the optimum (expected within 1.5)",
                 tolerance="the exercise's budget"),
            fact(f"track {t}: greedy value, first checkpoint -> last",
                 passed=learned[-1] > learned[0], expected="rising",
                 measured=f"{learned[0]:.3f} -> {learned[-1]:.3f}",
                 failure=f"track {t}: off-policy MC did not improve: {learned[0]:.3f} -> "
                         f"{learned[-1]:.3f}", tolerance="ordering"),
        ]
    return measures
