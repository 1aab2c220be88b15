"""Value-based model-free learners (:mod:`tabular.learn.td`, :mod:`tabular.learn.mc`)
against the loop a user would otherwise write: Python over ``gymnasium.make(...).step``
with a NumPy table, the same update rule.

Reported, from one run of this process:

- the first call of each learner from an empty numba cache and with the cache warm
  (each in a fresh subprocess);
- environment steps per second of Q-learning on Gymnasium's ``CliffWalking-v1`` and
  ``FrozenLake-v1`` (8x8, slippery) through their exact models, on one thread, and of
  the same algorithm as a Python loop over ``env.step``; their ratio;
- the same for SARSA, expected SARSA, TD(0) and on-policy MC control on
  ``CliffWalking-v1``, plus double Q-learning, n-step TD (n = 3) and MC prediction
  without a Python counterpart;
- Q-learning with 8 runs on 1 and 2 threads, and the speed-up (independent runs
  spread over the threads: close to the thread count on an idle machine);
- with ``BENCH_BASELINE=/path/to/an/old/tree``, Q-learning (CliffWalking, FrozenLake
  8x8), SARSA and REINFORCE against that version of the library
  (:mod:`benchmarks.baseline`).

Each rate is one timed call after a warm-up call; the Python loop and the kernel run
one after the other, so a ratio is only as steady as the machine between them.
"""

from __future__ import annotations

import os
import time

import gymnasium as gym
import numba
import numpy as np

from benchmarks.baseline import compare_learners
from benchmarks.timing import Headline, compile_seconds, steps_per_second
from tabular import (
    TabularMDP,
    double_q_learning,
    expected_sarsa,
    mc_control,
    mc_prediction,
    q_learning,
    sarsa,
    td0,
)

GAMMA, ALPHA, EPSILON = 1.0, 0.5, 0.1
MAX_STEPS = 10_000
ENVS = {"CliffWalking-v1": {}, "FrozenLake-v1 8x8 slippery": {"map_name": "8x8"}}
COMPILE = {
    "q_learning": "q_learning(m, episodes=2)",
    "sarsa": "sarsa(m, episodes=2)",
    "expected_sarsa": "expected_sarsa(m, episodes=2)",
    "double_q_learning": "double_q_learning(m, episodes=2)",
    "td0": "td0(m, np.zeros(48, dtype=int), episodes=2)",
    "mc_prediction": "mc_prediction(m, np.zeros(48, dtype=int), episodes=2, max_steps=50)",
    "mc_control": "mc_control(m, episodes=2)",
}
SETUP = ("import numpy as np, gymnasium as gym; from tabular import *; "
         "m = TabularMDP.from_gymnasium(gym.make('CliffWalking-v1'))")


def make(name: str):
    env_id = name.split()[0]
    return gym.make(env_id, **ENVS.get(name, {}))


# ------------------------------------------------------------------ Python loops


def epsilon_greedy(q_row, epsilon, rng) -> int:
    if rng.random() < epsilon:
        return int(rng.integers(len(q_row)))
    return int(np.argmax(q_row))


def python_td_control(env, method: str, episodes: int, gamma: float = GAMMA,
                      seed: int = 0) -> int:
    """Q-learning, SARSA or expected SARSA (S&B 6.4-6.6) over ``env.step``; returns steps."""
    rng = np.random.default_rng(seed)
    Q = np.zeros((env.observation_space.n, env.action_space.n))
    steps = 0
    for episode in range(episodes):
        s, _ = env.reset(seed=seed + episode)
        a = epsilon_greedy(Q[s], EPSILON, rng)
        for _ in range(MAX_STEPS):
            s_next, r, terminated, truncated, _ = env.step(a)
            steps += 1
            a_next = epsilon_greedy(Q[s_next], EPSILON, rng)
            if terminated:
                next_value = 0.0
            elif method == "sarsa":
                next_value = Q[s_next, a_next]
            elif method == "expected_sarsa":
                greedy = np.argmax(Q[s_next])
                next_value = EPSILON * Q[s_next].mean() + (1 - EPSILON) * Q[s_next, greedy]
            else:
                next_value = Q[s_next].max()
            Q[s, a] += ALPHA * (r + gamma * next_value - Q[s, a])
            s, a = s_next, a_next
            if terminated or truncated:
                break
    return steps


def python_td0(env, episodes: int, seed: int = 0) -> int:
    """TD(0) prediction of the uniform random policy over ``env.step``; returns steps."""
    rng = np.random.default_rng(seed)
    V = np.zeros(env.observation_space.n)
    steps = 0
    for episode in range(episodes):
        s, _ = env.reset(seed=seed + episode)
        for _ in range(MAX_STEPS):
            s_next, r, terminated, truncated, _ = env.step(int(rng.integers(4)))
            steps += 1
            V[s] += 0.1 * (r + (0.0 if terminated else GAMMA * V[s_next]) - V[s])
            s = s_next
            if terminated or truncated:
                break
    return steps


def python_mc_control(env, episodes: int, seed: int = 0) -> int:
    """First-visit on-policy MC control with sample averages (S&B 5.4); returns steps."""
    rng = np.random.default_rng(seed)
    S, A = env.observation_space.n, env.action_space.n
    Q, N = np.zeros((S, A)), np.zeros((S, A))
    steps = 0
    for episode in range(episodes):
        s, _ = env.reset(seed=seed + episode)
        trajectory = []
        for _ in range(MAX_STEPS):
            a = epsilon_greedy(Q[s], EPSILON, rng)
            s_next, r, terminated, truncated, _ = env.step(a)
            trajectory.append((s, a, r))
            s = s_next
            if terminated or truncated:
                break
        steps += len(trajectory)
        first = {}
        for t, (s_t, a_t, _) in enumerate(trajectory):
            first.setdefault((s_t, a_t), t)
        G = 0.0
        for t in range(len(trajectory) - 1, -1, -1):
            s_t, a_t, r = trajectory[t]
            G = r + GAMMA * G
            if first[(s_t, a_t)] == t:
                N[s_t, a_t] += 1
                Q[s_t, a_t] += (G - Q[s_t, a_t]) / N[s_t, a_t]
    return steps


def python_rate(loop, seconds: float = 2.0) -> float:
    """Steps per second of a Python loop, run in growing batches for ``seconds``."""
    total_steps, episodes, start = 0, 5, time.perf_counter()
    while time.perf_counter() - start < seconds:
        total_steps += loop(episodes)
        episodes *= 2
    return total_steps / (time.perf_counter() - start)


# ------------------------------------------------------------------ numba kernels


def report(name: str, rate: float, python: float | None = None) -> None:
    ratio = f"  ({rate / python:7,.0f}x the Python loop)" if python else ""
    print(f"{name:>44}: {rate:14,.0f} steps/s{ratio}", flush=True)


def against_python(what: str, rate: float, python: float) -> Headline:
    """The summary row of a kernel's rate against its Python loop's."""
    return Headline(what, f"{rate / 1e6:.1f}M steps/s", f"Python loop {python / 1e3:.0f}k steps/s",
                    f"{rate / python:.0f}x")


def kernel_against_python(name: str, where: str, python_loop, kernel) -> Headline:
    """Print the steps per second of ``python_loop(episodes)`` and of ``kernel()`` (one
    thread, ``where`` the environment), and return the summary row of the two."""
    python = python_rate(python_loop)
    report(f"python + gymnasium {name}", python)
    rate = steps_per_second(kernel)
    report(f"{name}, 1 thread, {where}", rate, python)
    return against_python(f"{name}, {where}, 1 thread", rate, python)


def main() -> list[Headline]:
    headlines = []
    for name, call in COMPILE.items():
        cold, warm = compile_seconds(SETUP, call)
        print(f"{name:>18}: first call {cold:6.2f} s from an empty cache, "
              f"{warm:5.2f} s with the cache warm", flush=True)

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        for name in ENVS:
            env = make(name)
            mdp = TabularMDP.from_gymnasium(env)
            headlines.append(kernel_against_python(
                "q_learning", name,
                lambda n, env=env: python_td_control(env, "q_learning", n),
                lambda mdp=mdp: q_learning(mdp, episodes=20_000)))

        env = make("CliffWalking-v1")
        mdp = TabularMDP.from_gymnasium(env)
        uniform = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
        pairs = {
            "sarsa": (lambda n: python_td_control(env, "sarsa", n),
                      lambda: sarsa(mdp, episodes=20_000)),
            "expected_sarsa": (lambda n: python_td_control(env, "expected_sarsa", n),
                               lambda: expected_sarsa(mdp, episodes=20_000)),
            "td0 (uniform policy)": (lambda n: python_td0(env, n),
                                     lambda: td0(mdp, uniform, episodes=2_000)),
            "mc_control (on-policy)": (lambda n: python_mc_control(env, n),
                                       lambda: mc_control(mdp, episodes=20_000)),
        }
        headlines += [kernel_against_python(name, "CliffWalking-v1", python_loop, kernel)
                      for name, (python_loop, kernel) in pairs.items()]
        report("double_q_learning, 1 thread, CliffWalking-v1",
               steps_per_second(lambda: double_q_learning(mdp, episodes=20_000)))
        report("td0 n_step=3 (uniform policy), 1 thread",
               steps_per_second(lambda: td0(mdp, uniform, episodes=2_000, n_step=3)))
        report("mc_prediction (uniform policy), 1 thread",
               steps_per_second(lambda: mc_prediction(mdp, uniform, episodes=2_000)))
    finally:
        numba.set_num_threads(threads)

    rates = {}
    for n in sorted({1, min(2, threads)}):
        numba.set_num_threads(n)
        rates[n] = steps_per_second(lambda: q_learning(mdp, episodes=5_000, runs=8))
        report(f"q_learning, 8 runs, {n} thread(s), CliffWalking-v1", rates[n])
    numba.set_num_threads(threads)
    if len(rates) == 2:
        print(f"{'speed-up of 2 threads over 1':>44}: {rates[2] / rates[1]:14.2f}x")
        headlines.append(Headline("Q-learning, 8 runs, 2 threads against 1",
                                  f"{rates[2] / 1e6:.1f}M steps/s",
                                  f"1 thread {rates[1] / 1e6:.1f}M steps/s",
                                  f"{rates[2] / rates[1]:.2f}x"))
    if os.environ.get("BENCH_BASELINE"):
        compare_learners(os.environ["BENCH_BASELINE"])
    return headlines


if __name__ == "__main__":
    main()
