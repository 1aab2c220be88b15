"""Value-based model-free learners (tabular/learn/td.py, tabular/learn/mc.py) against
the loop a user
would otherwise write: Python over ``gymnasium.make(...).step`` with a NumPy table.

Reported, from one run of this process:

- compile time of each kernel from an empty numba cache and with the cache warm
  (each in a fresh subprocess);
- environment steps per second of Q-learning on Gymnasium's ``CliffWalking-v1`` and
  ``FrozenLake-v1`` (8x8, slippery) through their exact models, on one thread, and of
  the same algorithm as a Python loop over ``env.step`` (target >= 300x);
- the same for SARSA, expected SARSA, TD(0) and on-policy MC control on
  ``CliffWalking-v1`` (target >= 100x), plus double Q-learning and MC prediction;
- n-step TD (n = 3) on ``CliffWalking-v1``;
- Q-learning with 8 runs on 1 and 2 threads (target close to 2x);
- with ``BENCH_BASELINE=/path/to/an/old/tree``, Q-learning (CliffWalking, FrozenLake
  8x8), SARSA and REINFORCE against that version of the library
  (:mod:`benchmarks.baseline`).

Why the kernels of tabular/learn/td.py and tabular/learn/mc.py look the way they do (one thread,
``CliffWalking-v1`` unless named; measured on the 2-vCPU machine kind):

- the TD loops are inlined into their runs driver, a sequential loop over the runs
  compiled by numba's parallel pipeline with every transformation off
  (``tabular.learn.setup.SIMPLIFYING_PIPELINE``) and spread over threads by
  ``tabular.learn.setup.over_runs``: Q-learning's first call from an empty cache 6.6 s
  -> 3.2 s against a ``prange`` driver (actor-critic 8.3 -> 4.8 s) at the same speed
  (63.7M vs 66.2M steps/s, same bits); the plain pipeline ran the same driver at
  17.6M steps/s (the reference counting of the rules' array views stays in its loop),
  and as a separate function the loop ran 36M steps/s against 72M;
- the Monte Carlo, n-step and planning loops are not inlined: inlining them more than
  doubled ``mc_control``'s compile time from an empty cache (4.4 s to 10.1 s) for
  1.45x the speed; their drivers keep ``prange`` (from a sequential driver
  ``mc_control`` ran 0.82x, n-step SARSA 0.88x, Dyna-Q 0.81x; measured again for
  the planning driver: 0.82-0.86x on CliffWalking and FrozenLake 8x8, 0.77-0.81x with
  numba's ``noalias`` flag set through a pipeline class);
- MC control's loop is compiled by the simplifying pipeline: 1.5-2.3x the speed of the
  plain pipeline (22M -> 51M steps/s at best in fresh processes), for 2-4 s more
  compile time; the same pipeline ran n-step SARSA 0.45x, MC prediction 0.7x and
  off-policy MC 0.75x. Calling ``sample_step`` instead of inlining it was no rule
  either: n-step SARSA 1.2-1.3x, n-step expected SARSA 0.7-0.85x, Q-learning 0.55x;
- SARSA, expected SARSA and Q-learning get one driver each, with the method a
  compile-time constant: about 10% faster than a run-time switch on the method. One
  driver switching once per run between three inlined copies of the loop saves little
  compiling (the three first calls from an empty cache 11.6-12.6 s against 13.2-13.7 s)
  and makes a lone Q-learning call compile all three (12 s instead of 5 s).
  Elsewhere one kernel serves a family, the method read at run time, where the switch
  costs nothing measurable: the three planning learners; TD(lambda), true online
  TD(lambda) and the offline lambda-return; Sarsa(lambda), true online Sarsa(lambda)
  and Watkins's Q(lambda) (best of 6 fresh processes, 0.97-1.5x one driver each; the
  three compile in 6-7 s from an empty cache instead of 13-15 s); the five n-step
  methods, once the SARSA return got a loop of its own, free of the switch (best of 8
  fresh processes, CliffWalking n = 3: 0.95, 1.00, 1.01, 1.15, 0.96 of one driver
  each; with the switch inside the one loop 0.92-0.94x; the five compile in 10 s
  instead of 40 s);
- 38 small helpers (the scalar rules, ``max_value``, the planners' priority queue, the
  preference losses, the differential updates) are plain jitted functions, compiled
  once and inlined by LLVM (the final IR of every kernel the learners compile keeps no
  call to them), instead of being re-typed in every kernel: the first calls of nine
  learners from an empty cache 66-79 s -> 62-67 s, the test suite's compiling about a
  fifth less in one pair of cold runs on a loaded machine (445 -> 317 s); speed level
  (best of 7-8 fresh processes, 0.97-1.07x over the learners here, the DP sweeps and
  the RLHF learners) and every output bit-identical. Inlined into numba's IR stay the
  helpers LLVM leaves as calls when they are plain (selection over a row of Q, the
  softmax, returns and traces over arrays, the sweeps' ``q_value``: with every rule
  plain, Q-learning ran 0.53x and Sarsa(lambda) 0.46x) and those that ran slower as
  calls although LLVM inlined them: the model accessors (in-place value iteration
  0.69x), ``sample_step`` with them (REINFORCE 0.86x; n-step SARSA ran 1.14-1.7x
  faster), ``_max_logit`` and ``log_prob_grad`` (REINFORCE 0.93x), ``td_error`` and
  ``td_target`` (batch TD(0) 0.71-0.88x);
- n-step TD keeps its last n + 1 steps in ring buffers whose size is a power of two,
  indexed by a mask instead of a modulo: +26% steps/s for TD(0), +34% for n = 3
  (the one-shape refactor; results bit-identical).
"""

from __future__ import annotations

import os
import time

import gymnasium as gym
import numba
import numpy as np

from benchmarks.baseline import compare_learners
from benchmarks.timing import compile_seconds, steps_per_second
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


def main() -> None:
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
            python = python_rate(lambda n, env=env: python_td_control(env, "q_learning", n))
            report(f"python + gymnasium Q-learning, {name}", python)
            rate = steps_per_second(lambda mdp=mdp: q_learning(mdp, episodes=20_000))
            report(f"q_learning, 1 thread, {name}", rate, python)

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
        for name, (python_loop, kernel) in pairs.items():
            python = python_rate(python_loop)
            report(f"python + gymnasium {name}", python)
            report(f"{name}, 1 thread, CliffWalking-v1", steps_per_second(kernel), python)
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
    if os.environ.get("BENCH_BASELINE"):
        compare_learners(os.environ["BENCH_BASELINE"])


if __name__ == "__main__":
    main()
