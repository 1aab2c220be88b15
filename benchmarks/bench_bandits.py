"""The k-armed bandit methods on the 10-armed testbed (``tabular/bandits.py``).

Reported, from one run of this process:

- compile time of each method's kernel from an empty numba cache and with the cache
  warm (each in a fresh subprocess);
- the time of Figure 2.2's workload (2000 runs x 1000 steps) per method on 1 and 2
  threads, as pulls per second;
- the ratio to the loop a user would otherwise write: epsilon-greedy sample averages
  in Python with NumPy's generator, one pull at a time.
"""

from __future__ import annotations

import time

import numba
import numpy as np

from benchmarks.timing import compile_seconds
from tabular import epsilon_greedy_bandit, gradient_bandit, ucb_bandit

RUNS, STEPS = 2000, 1000
METHODS = {"epsilon_greedy_bandit": epsilon_greedy_bandit, "ucb_bandit": ucb_bandit,
           "gradient_bandit": gradient_bandit}


def python_epsilon_greedy(runs: int, steps: int, epsilon: float = 0.1, seed: int = 0) -> int:
    """Section 2.4's simple bandit algorithm as a Python loop; returns the pulls made."""
    rng = np.random.default_rng(seed)
    for _ in range(runs):
        means = rng.normal(size=10)
        Q, N = np.zeros(10), np.zeros(10)
        for _ in range(steps):
            a = int(rng.integers(10)) if rng.random() < epsilon else int(np.argmax(Q))
            reward = means[a] + rng.normal()
            N[a] += 1
            Q[a] += (reward - Q[a]) / N[a]
    return runs * steps


def pulls_per_second(method) -> float:
    method(steps=STEPS, runs=RUNS)  # compile, and warm the caches
    t = time.perf_counter()
    method(steps=STEPS, runs=RUNS)
    return RUNS * STEPS / (time.perf_counter() - t)


def main() -> None:
    for name in METHODS:
        cold, warm = compile_seconds(f"from tabular import {name} as f", "f(steps=10)")
        print(f"{name:>22}: first call {cold:5.2f} s from an empty cache, {warm:5.2f} s warm")
    t = time.perf_counter()
    pulls = python_epsilon_greedy(20, STEPS)
    python_rate = pulls / (time.perf_counter() - t)
    print(f"{'python epsilon-greedy':>22}: {python_rate:13,.0f} pulls/s")
    threads = numba.get_num_threads()
    for name, method in METHODS.items():
        rates = []
        for n in (1, threads):
            numba.set_num_threads(n)
            rates.append(pulls_per_second(method))
        numba.set_num_threads(threads)
        seconds = RUNS * STEPS / rates[-1]
        print(f"{name:>22}: {rates[0]:13,.0f} pulls/s on 1 thread ({rates[0] / python_rate:5.0f}x "
              f"the Python loop), {rates[-1]:13,.0f} on {threads}: Figure 2.2's "
              f"{RUNS} x {STEPS} in {seconds:.2f} s")


if __name__ == "__main__":
    main()
