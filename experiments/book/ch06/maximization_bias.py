"""Figure 6.5: maximization bias, Q-learning against Double Q-learning (Example 6.7).

B's rewards are the book's ``N(-0.1, 1)`` (the model's Gaussian reward noise, the
env's default), or with ``rewards="two_point"`` ``-0.1 +- 1``. Both curves are held against
a reference band: the same learners written again here in NumPy, over their own runs
with NumPy's normal draws, as the book's procedure describes them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import double_q_learning, q_learning
from tabular.envs import MaximizationBias
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import (
    Measure,
    above,
    check,
    fact,
    inside,
    standard_error,
    within,
)
from tabular.experiments.harness.settings import Settings

METHODS = {"Q-learning": q_learning, "Double Q-learning": double_q_learning}


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = "Sutton & Barto (2018), Example 6.7, Figure 6.5"


@dataclass(frozen=True)
class Config(Settings):
    """Example 6.7: epsilon = 0.1, alpha = 0.1, gamma = 1, Q = 0 at first; B has
    ``n_b_actions`` actions whose rewards are N(-0.1, 1)."""

    episodes: int = 300
    """Episodes per run (the book's x range)."""
    runs: int = 10_000
    """Independent runs averaged (the book's 10,000)."""
    n_b_actions: int = 10
    """Actions in state B."""
    rewards: str = "gaussian"
    """B's rewards: ``"gaussian"``, N(-0.1, 1) (the book's), or ``"two_point"``, -0.1 +- 1
    with probability 1/2 each (the same mean and variance)."""
    reference_runs: int = 10_000
    """Runs of the NumPy reference that the curves are held against (with N(-0.1, 1))."""
    seed: int = 0
    """Seed of the runs' random streams (each method gets the same seed; the reference
    draws from NumPy's generator seeded with it)."""

    QUICK = {"runs": 2_000, "reference_runs": 2_000}


#: Example 6.7's step size and exploration rate.
ALPHA, EPSILON = 0.1, 0.1
#: The episode blocks ``[first, stop)`` whose per-run fractions left are held against
#: the reference's: finer where the curves move fastest. A run's episodes are not
#: independent, its block mean is; so the standard errors are exact.
BLOCKS = ((0, 1), (1, 5), (5, 10), (10, 20), (20, 50), (50, 100), (100, 300))
#: Standard errors of the difference a block mean may lie from the reference's (a
#: normal difference falls outside 4 with probability 6e-5).
K_SE = 4.0


def block_means(left: np.ndarray) -> np.ndarray:
    """Each run's fraction of episodes that went left in each of :data:`BLOCKS` that
    ``left [runs, episodes]`` covers: ``[runs, blocks]``."""
    return np.array([left[:, a:b].mean(axis=1) for a, b in BLOCKS
                     if b <= left.shape[1]]).T


def run(config: Config, executor) -> dict:
    env = MaximizationBias(config.n_b_actions, rewards=config.rewards)
    results = {}
    for name, learn in METHODS.items():
        result = learn(env.to_mdp(), gamma=1.0, episodes=config.episodes, alpha=ALPHA,
                       epsilon=EPSILON, runs=config.runs, seed=config.seed,
                       action_mask=env.action_mask)
        # an episode that went left from A takes two steps (A -> B -> end), right one
        left = result.episode_lengths == 2
        reference = reference_left(name == "Double Q-learning", config.n_b_actions,
                                   config.episodes, config.reference_runs, config.seed)
        results |= {key(name): left.mean(axis=0), f"{key(name)}_blocks": block_means(left),
                    f"reference_{key(name)}": reference.mean(axis=0),
                    f"reference_{key(name)}_blocks": block_means(reference)}
    return results


def reference_left(double: bool, n_b_actions: int, episodes: int, runs: int,
                   seed: int) -> np.ndarray:
    """Whether each run goes left from A in each episode, ``[runs, episodes]``, by Q-learning (eq.
    6.8) or Double Q-learning (eq. 6.10, acting on ``Q1 + Q2``) written in NumPy over
    the runs at once: epsilon-greedy with ties split at random, B's rewards
    ``N(-0.1, 1)`` from NumPy's generator. An independent implementation of Example
    6.7, not the library's kernels."""
    rng = np.random.default_rng(seed)
    runs_ = np.arange(runs)
    tables = 2 if double else 1
    QA = np.zeros((tables, runs, 2))  # A: left, right
    QB = np.zeros((tables, runs, n_b_actions))
    left = np.empty((runs, episodes), dtype=bool)

    def act(q: np.ndarray) -> np.ndarray:
        """Epsilon-greedy on ``q [runs, n]``, the greedy ties split uniformly."""
        best = q == q.max(axis=1, keepdims=True)
        greedy = np.argmax(best * rng.random(q.shape), axis=1)
        explore = rng.random(runs) < EPSILON
        return np.where(explore, rng.integers(0, q.shape[1], runs), greedy)

    for episode in range(episodes):
        a = act(QA.sum(axis=0))
        went = a == MaximizationBias.LEFT
        left[:, episode] = went
        b = act(QB.sum(axis=0))
        reward = rng.normal(-0.1, 1.0, runs)
        table = (rng.random(runs) < 0.5).astype(int) if double else np.zeros(runs, int)
        # A -> B bootstraps from B (Double Q: the other table values this table's argmax)
        own, other = QB[table, runs_], QB[(1 - table) if double else table, runs_]
        chosen = np.argmax((own == own.max(axis=1, keepdims=True)) * rng.random(own.shape),
                           axis=1)
        target_A = np.where(went, other[runs_, chosen], 0.0)
        QA[table, runs_, a] += ALPHA * (target_A - QA[table, runs_, a])
        # B -> end: only the runs that went left, towards the reward
        i = runs_[went]
        QB[table[i], i, b[i]] += ALPHA * (reward[i] - QB[table[i], i, b[i]])
    return left


def key(name: str) -> str:
    return name.replace("-", "_").replace(" ", "_").lower()


def plot(results: dict, out_dir, config: Config) -> list:
    rewards = "N(-0.1, 1)" if config.rewards == "gaussian" else "-0.1 +- 1"
    fig, axes = style.figure(1, 1, width=5.2, height=3.8,
                             title=f"Figure 6.5: maximization bias ({config.runs:,} runs, "
                                   f"B pays {rewards})")
    ax = axes[0, 0]
    episodes = np.arange(1, config.episodes + 1)
    for name in METHODS:
        ax.plot(episodes, 100 * results[key(name)], color=style.color(name), label=name)
        ax.plot(episodes, 100 * results[f"reference_{key(name)}"], color="black",
                linewidth=0.6, linestyle="--")
    ax.plot([], [], color="black", linewidth=0.6, linestyle="--",
            label=f"NumPy reference, N(-0.1, 1), {config.reference_runs:,} runs")
    ax.axhline(5.0, color="black", linestyle=":", label="optimal (epsilon / 2)")
    ax.set_xlabel("episodes")
    ax.set_ylabel("% left actions from A")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8)
    return [style.save(fig, out_dir / "maximization_bias.png")]


@check("episodes", "n_b_actions")
def book_findings(results: dict) -> list[Measure]:
    """Example 6.7's findings: Q-learning at first takes left far more often than right
    (measured: a peak of 94% near episode 20) and always more often than the 5% that
    epsilon-greedy forces (12% over the last 50 episodes), while Double Q-learning is
    essentially unaffected (about 7% over the last 50 episodes, never above Q-learning
    by more than noise after episode 5)."""
    plain, double = results["q_learning"], results["double_q_learning"]
    return [
        above("Q-learning: peak fraction left, first 50 episodes", measured=plain[:50].max(),
              bound=0.8,
              failure=f"Q-learning's % left peaks at {100 * plain[:50].max():.0f}% in the "
                      "first 50 episodes (expected above 80%: maximization bias)",
              why="Figure 6.5's peak"),
        above("Q-learning: fraction left, last 50 episodes", measured=plain[-50:].mean(),
              bound=0.08,
              failure=f"Q-learning's % left ends at {100 * plain[-50:].mean():.1f}% (expected "
                      "well above the 5% of epsilon-greedy)", why="above epsilon-greedy's 0.05"),
        inside("Double Q-learning: fraction left, last 50 episodes", measured=double[-50:].mean(),
               low=0.04, high=0.08, failure=f"Double Q-learning's % left ends at "
                                            f"{100 * double[-50:].mean():.1f}% (expected near 5%)",
               why="near epsilon-greedy's 0.05"),
        fact("Double Q-learning - Q-learning, fraction left after episode 5",
             passed=(plain[5:] > double[5:] - 0.03).all(), expected="< 0.03 at every episode",
             measured=f"largest {np.max(double[5:] - plain[5:]):.3f}",
             failure="Double Q-learning goes left more often than Q-learning after "
                     "episode 5", tolerance="noise 0.03"),
        fact("fraction left over episodes 6-100: Q-learning - Double Q-learning",
             passed=plain[5:100].mean() > double[5:100].mean() + 0.3, expected="> 0.3",
             measured=f"{plain[5:100].mean() - double[5:100].mean():.3f}",
             failure=f"over episodes 6-100 Q-learning goes left "
                     f"{100 * plain[5:100].mean():.0f}% of the time, Double Q-learning "
                     f"{100 * double[5:100].mean():.0f}%: no maximization bias",
             tolerance="the bias"),
    ]


@check("episodes", "n_b_actions", "rewards")
def curves_match_the_reference(results: dict) -> list[Measure]:
    """Each method's fraction left, averaged over each block of episodes (1, 2-5, 6-10,
    11-20, 21-50, 51-100, 101-300), is the NumPy reference's with N(-0.1, 1) rewards
    to within 4 standard errors of the difference, from the per-run block means (the
    runs are independent). The two-point rewards miss it: with 10,000 runs each method
    has a block 4.6 to 6.6 standard errors off."""
    measures = []
    for name in METHODS:
        ours, ref = results[f"{key(name)}_blocks"], results[f"reference_{key(name)}_blocks"]
        for j, (a, b) in enumerate(BLOCKS[:ours.shape[1]]):
            o, r = ours[:, j], ref[:, j]
            se = float(np.hypot(standard_error(o), standard_error(r)))
            span = f"episode {b}" if b - a == 1 else f"episodes {a + 1}-{b}"
            measures.append(within(f"{name}: fraction left, {span}", measured=o.mean(),
                                   expected=r.mean(), tolerance=K_SE * se,
                                   failure=f"{name}'s fraction left over {span} is "
                                           f"{o.mean():.4f}, not the reference's {r.mean():.4f}",
                                   why=f"{K_SE:g} standard errors of the difference"))
    return measures
