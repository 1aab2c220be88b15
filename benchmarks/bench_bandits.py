"""The k-armed bandit methods on the 10-armed testbed (``tabular/learn/bandits.py``).

Reported, from one run of this process:

- compile time of each method's kernel from an empty numba cache and with the cache
  warm (each in a fresh subprocess);
- the time of Figure 2.2's workload (2000 runs x 1000 steps) per method on 1 and 2
  threads, as pulls per second;
- the ratio of each method to the loop a user would otherwise write for it: the same
  method in Python with NumPy's generator, one pull at a time (timed over 10 runs).
"""

from __future__ import annotations

import time

import numba
import numpy as np

from benchmarks.timing import Headline, compile_seconds
from tabular import epsilon_greedy_bandit, gradient_bandit, ucb_bandit

RUNS, STEPS = 2000, 1000


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


def python_ucb(runs: int, steps: int, c: float = 2.0, seed: int = 0) -> int:
    """UCB selection (eq. 2.10) with sample averages as a Python loop."""
    rng = np.random.default_rng(seed)
    for _ in range(runs):
        means = rng.normal(size=10)
        Q, N = np.zeros(10), np.zeros(10)
        for t in range(1, steps + 1):
            with np.errstate(divide="ignore", invalid="ignore"):
                bounds = np.where(N == 0, np.inf, Q + c * np.sqrt(np.log(t) / N))
            a = int(np.argmax(bounds))
            reward = means[a] + rng.normal()
            N[a] += 1
            Q[a] += (reward - Q[a]) / N[a]
    return runs * steps


def python_gradient(runs: int, steps: int, alpha: float = 0.1, seed: int = 0) -> int:
    """The gradient bandit with baseline (eq. 2.12) as a Python loop."""
    rng = np.random.default_rng(seed)
    for _ in range(runs):
        means = rng.normal(size=10)
        H, average = np.zeros(10), 0.0
        for t in range(1, steps + 1):
            pi = np.exp(H - H.max())
            pi /= pi.sum()
            a = int(rng.choice(10, p=pi))
            reward = means[a] + rng.normal()
            average += (reward - average) / t
            H -= alpha * (reward - average) * pi
            H[a] += alpha * (reward - average)
    return runs * steps


METHODS = {"epsilon_greedy_bandit": (epsilon_greedy_bandit, python_epsilon_greedy),
           "ucb_bandit": (ucb_bandit, python_ucb),
           "gradient_bandit": (gradient_bandit, python_gradient)}


def pulls_per_second(method) -> float:
    method(steps=STEPS, runs=RUNS)  # compile, and warm the caches
    t = time.perf_counter()
    method(steps=STEPS, runs=RUNS)
    return RUNS * STEPS / (time.perf_counter() - t)


def main() -> list[Headline]:
    for name in METHODS:
        cold, warm = compile_seconds(f"from tabular import {name} as f", "f(steps=10)")
        print(f"{name:>22}: first call {cold:5.2f} s from an empty cache, {warm:5.2f} s warm")
    threads = numba.get_num_threads()
    headlines = []
    for name, (method, python_loop) in METHODS.items():
        t = time.perf_counter()
        python_rate = python_loop(10, STEPS) / (time.perf_counter() - t)
        rates = []
        for n in (1, threads):
            numba.set_num_threads(n)
            rates.append(pulls_per_second(method))
        numba.set_num_threads(threads)
        seconds = RUNS * STEPS / rates[-1]
        print(f"{name:>22}: {rates[0]:12,.0f} pulls/s on 1 thread ({rates[0] / python_rate:4.0f}x "
              f"its Python loop's {python_rate:9,.0f}), {rates[-1]:12,.0f} on {threads}: "
              f"Figure 2.2's {RUNS} x {STEPS} in {seconds:.2f} s")
        headlines.append(Headline(f"{name}, 10-armed testbed, 1 thread",
                                  f"{rates[0] / 1e6:.1f}M pulls/s",
                                  f"Python loop {python_rate / 1e3:.0f}k pulls/s",
                                  f"{rates[0] / python_rate:.0f}x"))
    return headlines


if __name__ == "__main__":
    main()
