"""Figure 6.5: maximization bias, Q-learning against Double Q-learning (Example 6.7)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import double_q_learning, q_learning
from tabular.envs import MaximizationBias

from . import style
from .checks import Measure, above, check, fact, inside
from .settings import Settings

METHODS = {"Q-learning": q_learning, "Double Q-learning": double_q_learning}


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 6.7, Figure 6.5"


@dataclass(frozen=True)
class Config(Settings):
    """Example 6.7: epsilon = 0.1, alpha = 0.1, gamma = 1, Q = 0 at first; B has
    ``n_b_actions`` actions whose rewards have mean -0.1 and variance 1 (the env's
    two-point form of the book's N(-0.1, 1))."""

    episodes: int = 300
    """Episodes per run (the book's x range)."""
    runs: int = 10_000
    """Independent runs averaged (the book's 10,000)."""
    n_b_actions: int = 10
    """Actions in state B."""
    seed: int = 0
    """Seed of the runs' random streams (each method gets the same seed)."""

    QUICK = {"runs": 2_000}


def run(config: Config, executor) -> dict:
    env = MaximizationBias(config.n_b_actions)
    results = {}
    for name, learn in METHODS.items():
        result = learn(env.to_mdp(), gamma=1.0, episodes=config.episodes, alpha=0.1,
                       epsilon=0.1, runs=config.runs, seed=config.seed,
                       action_mask=env.action_mask)
        # an episode that went left from A takes two steps (A -> B -> end), right one
        results[key(name)] = (result.episode_lengths == 2).mean(axis=0)
    return results


def key(name: str) -> str:
    return name.replace("-", "_").replace(" ", "_").lower()


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 1, width=5.2, height=3.8,
                             title=f"Figure 6.5: maximization bias ({config.runs:,} runs)")
    ax = axes[0, 0]
    episodes = np.arange(1, config.episodes + 1)
    for name in METHODS:
        ax.plot(episodes, 100 * results[key(name)], color=style.color(name), label=name)
    ax.axhline(5.0, color="black", linestyle=":", label="optimal (epsilon / 2)")
    ax.set_xlabel("episodes")
    ax.set_ylabel("% left actions from A")
    ax.set_ylim(0, 100)
    ax.legend()
    return [style.save(fig, out_dir / "maximization_bias.png")]


@check("episodes", "n_b_actions")
def book_findings(results: dict) -> list[Measure]:
    """Example 6.7's findings: Q-learning at first takes left far more often than right
    (measured: a peak of 94% near episode 20) and always more often than the 5% that
    epsilon-greedy forces (12% at episode 300), while Double Q-learning is essentially
    unaffected (about 6% over the last 50 episodes, never above Q-learning by more than
    noise after episode 5)."""
    plain, double = results["q_learning"], results["double_q_learning"]
    return [
        above("Q-learning: peak fraction left, first 50 episodes", plain[:50].max(), 0.8,
              f"Q-learning's % left peaks at {100 * plain[:50].max():.0f}% in the "
              "first 50 episodes (expected above 80%: maximization bias)",
              "Figure 6.5's peak"),
        above("Q-learning: fraction left, last 50 episodes", plain[-50:].mean(), 0.08,
              f"Q-learning's % left ends at {100 * plain[-50:].mean():.1f}% (expected "
              "well above the 5% of epsilon-greedy)", "above epsilon-greedy's 0.05"),
        inside("Double Q-learning: fraction left, last 50 episodes", double[-50:].mean(),
               0.04, 0.08, f"Double Q-learning's % left ends at "
               f"{100 * double[-50:].mean():.1f}% (expected near 5%)",
               "near epsilon-greedy's 0.05"),
        fact("Double Q-learning - Q-learning, fraction left after episode 5",
             (plain[5:] > double[5:] - 0.03).all(), "< 0.03 at every episode",
             f"largest {np.max(double[5:] - plain[5:]):.3f}",
             "Double Q-learning goes left more often than Q-learning after "
             "episode 5", "noise 0.03"),
        fact("fraction left over episodes 6-100: Q-learning - Double Q-learning",
             plain[5:100].mean() > double[5:100].mean() + 0.3, "> 0.3",
             f"{plain[5:100].mean() - double[5:100].mean():.3f}",
             f"over episodes 6-100 Q-learning goes left "
             f"{100 * plain[5:100].mean():.0f}% of the time, Double Q-learning "
             f"{100 * double[5:100].mean():.0f}%: no maximization bias", "the bias"),
    ]
