"""Speed: environment steps per second of each learning kernel vs a Python Gymnasium loop."""

from __future__ import annotations

import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

import tabular
from tabular import TabularMDP
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, check, fact
from tabular.experiments.harness.settings import Settings

ENV_ID = "CliffWalking-v1"  # Gymnasium's own env: both sides step the same dynamics
BASELINE = "Python + Gymnasium"

#: name -> (function, keyword arguments besides the MDP, size and seed, episodes per call
#: relative to Config.episodes). Value learners soon walk ~15-step episodes, while a
#: near-uniform softmax policy wanders to the 1000-step limit, so they get 25x more episodes.
KERNELS = {
    "SARSA": (tabular.sarsa, {"alpha": 0.5, "epsilon": 0.1}, 25),
    "Expected SARSA": (tabular.expected_sarsa, {"alpha": 0.5, "epsilon": 0.1}, 25),
    "Q-learning": (tabular.q_learning, {"alpha": 0.5, "epsilon": 0.1}, 25),
    "Double Q-learning": (tabular.double_q_learning, {"alpha": 0.5, "epsilon": 0.1}, 25),
    "MC control": (tabular.mc_control, {"epsilon": 0.1}, 25),
    "REINFORCE": (tabular.reinforce, {"alpha": 0.01}, 1),
    "Actor-critic": (tabular.actor_critic, {"alpha": 0.01, "alpha_value": 0.1}, 1),
    "PPO": (tabular.ppo, {}, 1),
}
PPO_BATCH = 8


#: What the experiment reproduces, as the gallery names it.
REPRODUCES = (
    "no published figure: the library's own speed, kernels against a Python Gymnasium "
    "loop"
)


@dataclass(frozen=True)
class Config(Settings):
    """Cliff walking (Gymnasium's CliffWalking-v1), one run per kernel, best of repeats: a
    learner's speed is the steps of its fastest call over that call's seconds."""

    episodes: int = 2000
    """Episodes per timed call of the policy-gradient kernels (25x that for the others)."""
    python_steps: int = 100_000
    """Steps of the plain Python Q-learning loop."""
    repeats: int = 3
    """Timed calls per kernel; the fastest counts (the others absorb OS noise)."""
    seed: int = 0
    """Seed of the learners' streams and of the Python loop's generator."""

    QUICK = {"episodes": 40, "python_steps": 5_000, "repeats": 1}


def python_q_learning(env_id: str, steps: int, seed: int, alpha: float = 0.5,
                      epsilon: float = 0.1) -> tuple[int, float]:
    """The loop a user would write: epsilon-greedy Q-learning over ``env.step``.

    Returns ``(steps, seconds)``.
    """
    env = gym.make(env_id)
    rng = np.random.default_rng(seed)
    n_actions = env.action_space.n
    Q = np.zeros((env.observation_space.n, n_actions))
    s, _ = env.reset(seed=seed)
    began = time.perf_counter()
    for _ in range(steps):
        a = int(rng.integers(n_actions)) if rng.random() < epsilon else int(np.argmax(Q[s]))
        s_next, r, terminated, truncated, _ = env.step(a)
        target = r if terminated else r + Q[s_next].max()
        Q[s, a] += alpha * (target - Q[s, a])
        s = s_next
        if terminated or truncated:
            s, _ = env.reset()
    return steps, time.perf_counter() - began


def sized(fn, episodes: int) -> dict:
    """The size argument of a learner: episodes, or PPO's batches of 8 episodes."""
    if fn is tabular.ppo:
        return {"iterations": max(1, episodes // PPO_BATCH), "episodes_per_batch": PPO_BATCH}
    return {"episodes": episodes}


def time_kernel(fn, kwargs, mdp, episodes: int, repeats: int, seed: int):
    """``(steps, best seconds, first-call seconds)``; the first call includes compiling."""
    began = time.perf_counter()
    fn(mdp, seed=seed, **sized(fn, PPO_BATCH), **kwargs)
    first = time.perf_counter() - began
    best, steps = np.inf, 0
    for _ in range(repeats):
        began = time.perf_counter()
        result = fn(mdp, seed=seed, **sized(fn, episodes), **kwargs)
        best = min(best, time.perf_counter() - began)
        steps = int(result.episode_lengths.sum())
    return steps, best, first


def run(config: Config, executor) -> dict:
    """Time every kernel and the Python loop in this process (never on an executor:
    a timing must not share its cores with other jobs)."""
    mdp = TabularMDP.from_gymnasium(gym.make(ENV_ID))
    names, steps, seconds, first_call = [], [], [], []
    for name, (fn, kwargs, scale) in KERNELS.items():
        n, best, first = time_kernel(fn, kwargs, mdp, config.episodes * scale, config.repeats,
                                     config.seed)
        names.append(name)
        steps.append(n)
        seconds.append(best)
        first_call.append(first)
    n, t = python_q_learning(ENV_ID, config.python_steps, config.seed)
    names.append(BASELINE)
    steps.append(n)
    seconds.append(t)
    first_call.append(t)
    steps, seconds = np.array(steps), np.array(seconds)
    return {"names": np.array(names), "steps": steps, "seconds": seconds,
            "steps_per_second": steps / seconds, "first_call_seconds": np.array(first_call)}


def table(results: dict):
    """One row per learner: steps, seconds, steps per second and the speed-up."""
    names = [str(n) for n in results["names"]]
    baseline = results["steps_per_second"][names.index(BASELINE)]
    rows = [(n, int(s), f"{t:.6f}", f"{r:.0f}", f"{r / baseline:.1f}", f"{f:.4f}")
            for n, s, t, r, f in zip(names, results["steps"], results["seconds"],
                                     results["steps_per_second"],
                                     results["first_call_seconds"], strict=True)]
    header = ("learner", "steps", "seconds", "steps_per_second", "speedup_vs_python",
              "first_call_seconds")
    return header, rows


def plot(results: dict, out_dir, config: Config) -> list:
    names = [str(n) for n in results["names"]]
    rate = results["steps_per_second"]
    baseline = rate[names.index(BASELINE)]
    fig, axes = style.figure(1, 1, width=7.5, height=3.8,
                             title="Environment steps per second on Gymnasium's "
                                   "CliffWalking-v1 (one run = one thread, best call)")
    ax = axes[0, 0]
    colors = [style.color(n, i) for i, n in enumerate(names)]
    bars = ax.barh(names, rate, color=colors)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel("environment steps per second (log scale)")
    ax.set_ylabel("learner")
    for bar, r in zip(bars, rate, strict=True):
        ax.text(r * 1.1, bar.get_y() + bar.get_height() / 2,
                f"{r:,.0f}/s  ({r / baseline:,.0f}x)", va="center", fontsize=8)
    ax.set_xlim(right=rate.max() * 30)
    ax.grid(axis="y", visible=False)
    ax.legend(handles=[style.plt.Rectangle((0, 0), 1, 1, color=style.color(BASELINE))],
              labels=["plain Python loop over env.step (the 1x reference)"],
              loc="lower right")
    return [style.save(fig, out_dir / "speed.png")]


@check()
def measured(results: dict) -> list[Measure]:
    """Every measurement counted steps and took time (timings themselves are not judged)."""
    return [fact(f"{name}: steps, seconds", passed=n > 0 and np.isfinite(t) and t > 0,
                 expected="> 0 steps in a finite time > 0", measured=f"{n} steps in {t:.3g} s",
                 failure=f"{name}: {n} steps in {t} s is not a measurement", tolerance="not judged")
            for name, n, t in zip(results["names"], results["steps"], results["seconds"],
                                  strict=True)]
