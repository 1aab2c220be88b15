"""Planning with a learned model: Figures 8.2, 8.4 and 8.5 (Dyna-Q, Dyna-Q+ on mazes)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import dyna_q, dyna_q_plus
from tabular.envs.mazes import BLOCKING_MAZE, DYNA_MAZE, SHORTCUT_MAZE, changing_maze, maze
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, above, check, fact, standard_error
from tabular.experiments.harness.settings import Settings

GAMMA = 0.95  # Example 8.1


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Examples 8.1-8.3, Figures 8.2, 8.4 and 8.5"


@dataclass(frozen=True)
class Config(Settings):
    """Examples 8.1-8.3: reward 1 at the goal, epsilon = 0.1, gamma = 0.95."""

    planning_steps: tuple[int, ...] = (0, 5, 50)
    """Figure 8.2: the planning steps n of each curve."""
    episodes: int = 50
    """Figure 8.2: episodes per run."""
    runs: int = 30
    """Independent runs averaged (Figures 8.2, 8.4 and 8.5)."""
    kappa: float = 1e-3
    """Dyna-Q+'s exploration bonus (section 8.3)."""
    seed: int = 0
    """Seed of the runs' random streams."""

    QUICK = {"runs": 10}


def cumulative_reward(lengths: np.ndarray, steps: int) -> np.ndarray:
    """The reward collected by each time step ``1..steps`` (one per episode ended),
    ``[runs, steps]``, from the runs' episode lengths."""
    ends = np.cumsum(lengths, axis=1)
    t = np.arange(1, steps + 1)
    return (ends[:, None, :] <= t[None, :, None]).sum(axis=2)


def changing(layouts, switch_at: int, steps: int, config: Config) -> dict:
    """Cumulative reward of Dyna-Q and Dyna-Q+ on a maze whose walls change."""
    before, after = changing_maze(*layouts)
    common = dict(planning_steps=10, gamma=GAMMA, alpha=1.0, epsilon=0.1, episodes=steps,
                  switch=(switch_at, after), runs=config.runs, seed=config.seed,
                  max_steps=steps)
    plain = dyna_q(before, **common)
    plus = dyna_q_plus(before, kappa=config.kappa, **common)
    return {"dyna_q": cumulative_reward(plain.episode_lengths, steps),
            "dyna_q_plus": cumulative_reward(plus.episode_lengths, steps)}


def run(config: Config, executor) -> dict:
    mdp = maze(DYNA_MAZE).to_mdp()
    lengths = np.array([dyna_q(mdp, planning_steps=n, gamma=GAMMA, alpha=0.1, epsilon=0.1,
                               episodes=config.episodes, runs=config.runs,
                               seed=config.seed).episode_lengths
                        for n in config.planning_steps])
    blocking = changing(BLOCKING_MAZE, 1000, 3000, config)
    shortcut = changing(SHORTCUT_MAZE, 3000, 6000, config)
    return {"planning_steps": np.array(config.planning_steps), "lengths": lengths,
            **{f"blocking_{key}": curve for key, curve in blocking.items()},
            **{f"shortcut_{key}": curve for key, curve in shortcut.items()}}


def plot(results: dict, out_dir, config: Config) -> list:
    runs = results["lengths"].shape[1]
    fig, axes = style.figure(3, 1, width=4.6, height=3.6,
                             title=f"Chapter 8, Dyna on mazes ({runs} runs, band: 95% CI)")
    ax = axes[0, 0]
    episodes = np.arange(2, results["lengths"].shape[2] + 1)
    for i, n in enumerate(results["planning_steps"]):
        style.mean_band(ax, episodes, results["lengths"][i][:, 1:], f"{n} planning steps",
                        style.PALETTE[i + 1])
    ax.set_ylim(0, 800)
    ax.set_xlabel("episodes")
    ax.set_ylabel("steps per episode")
    ax.set_title("Figure 8.2: the Dyna maze (alpha = 0.1)")
    ax.legend()
    for ax, name, title in ((axes[0, 1], "blocking", "Figure 8.4: the blocking maze"),
                            (axes[0, 2], "shortcut", "Figure 8.5: the shortcut maze")):
        for i, (key, label) in enumerate((("dyna_q", "Dyna-Q"), ("dyna_q_plus", "Dyna-Q+"))):
            curve = results[f"{name}_{key}"]
            style.mean_band(ax, np.arange(1, curve.shape[1] + 1), curve, label,
                            style.PALETTE[i + 1])
        ax.set_xlabel("time steps")
        ax.set_ylabel("cumulative reward")
        ax.set_title(title)
        ax.legend()
    return [style.save(fig, out_dir / "dyna_maze.png")]


@check("planning_steps", "episodes")
def planning_pays(results: dict) -> list[Measure]:
    """Figure 8.2: more planning steps reach the 14-step path in far fewer episodes."""
    steps = results["lengths"][:, :, 1:10].mean(axis=(1, 2))  # episodes 2-10
    final = results["lengths"][:, :, -5:].mean(axis=(1, 2))
    return [
        fact("steps per episode over episodes 2-10, by planning steps",
             passed=all(later * 1.5 < earlier
                        for earlier, later in zip(steps, steps[1:], strict=False)),
             expected="each below 2/3 of the one with less planning",
             measured=str(np.round(steps, 1)),
             failure=f"steps per episode over episodes 2-10 are {np.round(steps, 1)}, "
                     "not falling with more planning", tolerance="factor 1.5"),
        fact("steps of the last 5 episodes, by planning steps", passed=(final < 14 + 10).all(),
             expected="< 24 (the shortest path: 14)", measured=str(np.round(final, 1)),
             failure=f"the last episodes take {np.round(final, 1)} steps, not near 14",
             tolerance="10 steps of exploration"),
    ]


@check("kappa")
def dyna_q_plus_explores(results: dict) -> list[Measure]:
    """After the shortcut opens, Dyna-Q+ collects reward faster than Dyna-Q (Figure 8.5).
    After the block (Figure 8.4) both find the new path, and Dyna-Q+ sooner. A run that
    never finds it collects no reward after the block, so one run that collects some
    shows the path found: that check is exact. Dyna-Q's runs split (with epsilon = 0.1
    many find no path within 2,000 steps), so its mean is compared with Dyna-Q+'s by
    the standard error of their difference, one-sided at 3 (a false pass below 0.2%)."""
    plain, plus = (gained_after(results[f"shortcut_{key}"], 3000).mean()
                   for key in ("dyna_q", "dyna_q_plus"))
    measures = [fact("reward after the shortcut opens: Dyna-Q+ against Dyna-Q",
                     passed=plus > 1.1 * plain, expected="Dyna-Q+ above 1.1 x Dyna-Q",
                     measured=f"{plus:.1f} vs {plain:.1f}",
                     failure=f"after the shortcut opens Dyna-Q+ gains {plus:.1f}, Dyna-Q "
                             f"{plain:.1f}: Dyna-Q+ should find the shortcut", tolerance="10%")]
    blocked = {key: gained_after(results[f"blocking_{key}"], 1500)
               for key in ("dyna_q", "dyna_q_plus")}
    for key, gained in blocked.items():
        found = int((gained > 0).sum())
        measures.append(fact(f"blocking_{key}: runs that collect reward after the block",
                             passed=found > 0, expected="at least one (the new path found)",
                             measured=f"{found} of {gained.size}",
                             failure=f"blocking_{key}: no run found the new path"))
    plain, plus = blocked["dyna_q"], blocked["dyna_q_plus"]
    gap = plus.mean() - plain.mean()
    se = float(np.hypot(standard_error(plain), standard_error(plus)))
    measures.append(above("reward after the block: Dyna-Q+ less Dyna-Q, in standard errors",
                          measured=gap / se if se > 0 else (np.inf if gap > 0 else 0.0), bound=3,
                          failure=f"after the block Dyna-Q+ gains {plus.mean():.1f}, Dyna-Q "
                                  f"{plain.mean():.1f}: Dyna-Q+ should find the new path sooner",
                          why="3 standard errors, one-sided"))
    return measures


def gained_after(curve: np.ndarray, t: int) -> np.ndarray:
    """The reward each run collected after time step ``t`` (of ``[runs, steps]`` curves)."""
    return curve[:, -1] - curve[:, t]
