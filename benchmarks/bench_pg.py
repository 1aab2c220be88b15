"""Policy-gradient learners on Example 4.1's 4x4 gridworld (``tabzoo/Gridworld4x4-v0``,
gamma 0.9).

Reported, from one run of this process:

- the first call of each learner from an empty numba cache and with the cache warm
  (each in a fresh subprocess);
- environment steps per second of REINFORCE, actor-critic (lambda = 0 and 0.9),
  PPO and TRPO on one thread, and of REINFORCE with 4 runs on 1 and 2 threads;
- the ratio of each to the REINFORCE loop a user would otherwise write: Python over
  ``gymnasium.make(...).step`` with a NumPy softmax policy, the same update rule (for
  actor-critic, PPO and TRPO the ratio compares different amounts of work per step:
  read it as the price of their extra arithmetic against that loop);
- episodes per second of TRPO against PPO (batches of 8 episodes, PPO's 4 epochs
  against TRPO's conjugate gradient and line search), on the gridworld and on the
  RLHF running example (the token MDP with the KL penalty to SFT), one thread, and
  the share of TRPO's batches whose line search kept the policy unchanged.
"""

from __future__ import annotations

import time

import gymnasium as gym
import numba
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from benchmarks.timing import Headline, compile_seconds, steps_per_second
from tabular import (
    actor_critic,
    ppo,
    reinforce,
    trpo,
)
from tabular.envs import load_scenario
from tabular.rlhf.pipeline import train_pipeline

GAMMA = 0.9
ALPHA = 0.1
ENV_ID = "tabzoo/Gridworld4x4-v0"
SETUP = ("import gymnasium as gym, tabular.envs; from tabular import {name} as f; "
         f"mdp = gym.make('{ENV_ID}').unwrapped.to_mdp()")
CALLS = {"reinforce": "episodes=2", "actor_critic": "episodes=2",
         "ppo": "iterations=1, episodes_per_batch=2", "trpo": "iterations=1, episodes_per_batch=2"}


def python_reinforce(env, episodes: int, seed: int = 0) -> int:
    """REINFORCE (S&B 13.3) as a plain Python loop over ``env.step``; returns the steps."""
    rng = np.random.default_rng(seed)
    S, A = env.observation_space.n, env.action_space.n
    theta = np.zeros((S, A))
    steps = 0
    for episode in range(episodes):
        s, _ = env.reset(seed=seed + episode)
        states, actions, rewards = [], [], []
        for _ in range(1000):
            z = np.exp(theta[s] - theta[s].max())
            a = int(rng.choice(A, p=z / z.sum()))
            s_next, r, terminated, truncated, _ = env.step(a)
            states.append(s)
            actions.append(a)
            rewards.append(r)
            s = s_next
            if terminated or truncated:
                break
        steps += len(rewards)
        G = 0.0
        returns = np.empty(len(rewards))
        for t in range(len(rewards) - 1, -1, -1):
            G = rewards[t] + GAMMA * G
            returns[t] = G
        for t, (s_t, a_t) in enumerate(zip(states, actions, strict=True)):
            z = np.exp(theta[s_t] - theta[s_t].max())
            grad = -z / z.sum()
            grad[a_t] += 1.0
            theta[s_t] += ALPHA * GAMMA**t * returns[t] * grad
    return steps


def episodes_per_second(run):
    """``(episodes per second, result)`` of ``run()`` (a learner call), timed on its
    second call."""
    run()
    t = time.perf_counter()
    result = run()
    return result.episode_lengths.size / (time.perf_counter() - t), result


def main() -> list[Headline]:
    for name, args in CALLS.items():
        cold, warm = compile_seconds(SETUP.format(name=name), f"f(mdp, gamma=0.9, {args})")
        print(f"{name:>13}: first call {cold:6.2f} s from an empty cache, "
              f"{warm:5.2f} s with the cache warm")

    env = gym.make(ENV_ID)
    mdp = env.unwrapped.to_mdp()
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    learners = {
        "reinforce": lambda: reinforce(mdp, gamma=GAMMA, episodes=200_000, alpha=ALPHA),
        "actor-critic": lambda: actor_critic(mdp, gamma=GAMMA, episodes=200_000),
        "actor-critic GAE(0.9)": lambda: actor_critic(mdp, gamma=GAMMA, episodes=200_000,
                                                      lam=0.9),
        "ppo": lambda: ppo(mdp, gamma=GAMMA, iterations=25_000, episodes_per_batch=8),
        "trpo": lambda: trpo(mdp, gamma=GAMMA, iterations=25_000, episodes_per_batch=8),
    }
    rates = {name: steps_per_second(run) for name, run in learners.items()}
    numba.set_num_threads(threads)

    python_episodes = 3000
    t = time.perf_counter()
    python_steps = python_reinforce(env, python_episodes)
    python_rate = python_steps / (time.perf_counter() - t)
    print(f"python + gymnasium REINFORCE: {python_rate:12,.0f} steps/s "
          f"({python_steps} steps)")
    headlines = []
    for name, rate in rates.items():
        print(f"{name:>27}: {rate:12,.0f} steps/s on 1 thread "
              f"({rate / python_rate:6,.0f}x the Python loop)")
        headlines.append(Headline(f"{name}, 4x4 gridworld, 1 thread", f"{rate / 1e6:.1f}M steps/s",
                                  f"Python REINFORCE {python_rate / 1e3:.0f}k steps/s",
                                  f"{rate / python_rate:.0f}x"))

    numba.set_num_threads(1)
    ex = train_pipeline(load_scenario())
    tasks = {"gridworld": dict(mdp=mdp, gamma=GAMMA),
             "RLHF example": dict(mdp=ex.mdp, policy=ex.reference, ref_policy=ex.reference,
                                  beta=1.0)}
    for name, task in tasks.items():
        (ppo_rate, _), (trpo_rate, res) = (episodes_per_second(
            lambda f=f, task=task: f(**task, iterations=25_000, episodes_per_batch=8))
            for f in (ppo, trpo))
        # a batch whose line search accepts no step costs line_search_steps evaluations
        print(f"{name:>27}: ppo {ppo_rate:10,.0f} episodes/s, trpo {trpo_rate:10,.0f} "
              f"episodes/s ({trpo_rate / ppo_rate:.2f}x), 1 thread; TRPO kept "
              f"{np.mean(res.backtracks < 0):.0%} of its batches' policies unchanged")
    numba.set_num_threads(threads)

    for n in (1, 2):
        numba.set_num_threads(min(n, threads))
        rate = steps_per_second(lambda: reinforce(mdp, gamma=GAMMA, episodes=100_000,
                                                  alpha=ALPHA, runs=4))
        print(f"  reinforce, 4 runs, {min(n, threads)} thread(s): {rate:12,.0f} steps/s")
    numba.set_num_threads(threads)
    return headlines


if __name__ == "__main__":
    main()
