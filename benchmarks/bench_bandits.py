"""The k-armed bandit methods on the 10-armed testbed (``tabular/learn/bandits.py``).

Reported, from one run of this process:

- compile time of each method's kernel from an empty numba cache and with the cache
  warm (each in a fresh subprocess);
- the time of Figure 2.2's workload (2000 runs x 1000 steps) per method on 1 and 2
  threads, as pulls per second;
- the ratio of each method to the loop a user would otherwise write for it: the same
  method in Python with NumPy's generator, one pull at a time (timed over 10 runs);
- the regret-measured methods (``tabular/learn/bandit_regret.py``) on 10 Bernoulli arms
  and the linear contextual ones (``tabular/learn/contextual_bandits.py``) on 8 contexts
  of 10 arms in ``R^8``, each against its Python loop in alternated rounds (one thread),
  as pulls per second.
"""

from __future__ import annotations

import time

import numba
import numpy as np
from scipy import stats

from benchmarks.timing import Headline, compile_seconds, numba_threads, spread, versus
from tabular import (
    BanditArms,
    ContextualArms,
    bayes_ucb,
    discounted_thompson_sampling,
    discounted_ucb,
    epsilon_greedy_bandit,
    exp3,
    explore_then_commit,
    gradient_bandit,
    kl_ucb,
    lin_ucb,
    linear_thompson_sampling,
    moss,
    sliding_window_ucb,
    thompson_sampling,
    ucb_bandit,
    ucb_v,
)

RUNS, STEPS = 2000, 1000


def python_sample_average(select, runs: int, steps: int, seed: int = 0) -> int:
    """A sample-average bandit on the 10-armed testbed as a Python loop: ``select(Q, N, t,
    rng)`` picks the arm of step ``t`` (from 1), then ``Q(a) <- Q(a) + (R - Q(a)) / N(a)``
    (section 2.4); returns the pulls made."""
    rng = np.random.default_rng(seed)
    for _ in range(runs):
        means = rng.normal(size=10)
        Q, N = np.zeros(10), np.zeros(10)
        for t in range(1, steps + 1):
            a = select(Q, N, t, rng)
            reward = means[a] + rng.normal()
            N[a] += 1
            Q[a] += (reward - Q[a]) / N[a]
    return runs * steps


def python_epsilon_greedy(runs: int, steps: int, epsilon: float = 0.1, seed: int = 0) -> int:
    """Section 2.4's simple bandit algorithm as a Python loop; returns the pulls made."""
    def select(Q, N, t, rng) -> int:
        return int(rng.integers(10)) if rng.random() < epsilon else int(np.argmax(Q))
    return python_sample_average(select, runs, steps, seed)


def python_ucb(runs: int, steps: int, c: float = 2.0, seed: int = 0) -> int:
    """UCB selection (eq. 2.10) with sample averages as a Python loop."""
    def select(Q, N, t, rng) -> int:
        with np.errstate(divide="ignore", invalid="ignore"):
            return int(np.argmax(np.where(N == 0, np.inf, Q + c * np.sqrt(np.log(t) / N))))
    return python_sample_average(select, runs, steps, seed)


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


#: The regret benchmarks' instance: 10 Bernoulli arms, and their runs and horizon.
ARMS = BanditArms(tuple(np.linspace(0.1, 0.55, 10)))
REGRET_RUNS, REGRET_STEPS, PYTHON_RUNS, ROUNDS = 200, 2000, 2, 3


def _bernoulli_kl(p: float, q: float) -> float:
    eps = 1e-15
    p, q = min(max(p, eps), 1 - eps), min(max(q, eps), 1 - eps)
    return p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))


def _kl_ucb_index(mean: float, level: float, tol: float = 1e-6) -> float:
    low, high = mean, min(1.0, mean + np.sqrt(level / 2))
    if _bernoulli_kl(mean, high) <= level:
        return high
    while high - low > tol:
        middle = (low + high) / 2
        if _bernoulli_kl(mean, middle) > level:
            high = middle
        else:
            low = middle
    return high


def python_regret(method: str, runs: int, steps: int, seed: int = 0) -> int:
    """The regret-measured methods as Python loops over NumPy's generator (the index
    methods computing each arm's index in Python, Thompson sampling drawing a Beta per
    arm); returns the pulls made."""
    rng = np.random.default_rng(seed)
    means = np.asarray(ARMS.means)
    k, best = means.size, means.max()
    for _ in range(runs):
        counts, sums, squares = np.zeros(k), np.zeros(k), np.zeros(k)
        regret = np.empty(steps)
        total = 0.0
        scores, gamma = np.zeros(k), 1 - 1 / (4 * np.sqrt(steps))
        window = int(np.ceil(2 * np.sqrt(steps * np.log(steps))))
        eta = np.sqrt(2 * np.log(k) / (k * steps))
        history: list[tuple[int, float]] = []
        for t in range(1, steps + 1):
            if method in ("discounted_ucb", "discounted_thompson_sampling"):
                discount = gamma if method == "discounted_ucb" else 0.95
                counts *= discount
                sums *= discount
            if method == "sliding_window_ucb" and len(history) == window:
                old, old_reward = history.pop(0)
                counts[old] -= 1
                sums[old] -= old_reward
            if method in ("thompson_sampling", "discounted_thompson_sampling"):
                a = int(np.argmax(rng.beta(sums + 1, counts - sums + 1)))
            elif method == "exp3":
                p = np.exp(scores - scores.max())
                p /= p.sum()
                a = int(rng.choice(k, p=p))
            elif method == "explore_then_commit":
                a = (t - 1) % k if t <= 10 * k else int(np.argmax(sums / counts))
            elif (counts <= 0).any():
                a = int(np.argmin(counts))
            else:
                mean = sums / counts
                if method == "kl_ucb":
                    index = [_kl_ucb_index(m, np.log(t) / n)
                             for m, n in zip(mean, counts, strict=True)]
                elif method == "bayes_ucb":
                    index = stats.beta.ppf(1 - 1 / t, sums + 1, counts - sums + 1)
                elif method == "discounted_ucb":
                    index = mean + 2 * np.sqrt(0.6 * np.log(max(counts.sum(), 1)) / counts)
                elif method == "sliding_window_ucb":
                    index = mean + np.sqrt(0.6 * np.log(min(t, window)) / counts)
                elif method == "moss":
                    index = mean + np.sqrt(np.maximum(0, np.log(steps / (k * counts))) / counts)
                else:
                    var = np.maximum(squares / counts - mean**2, 0)
                    index = mean + np.sqrt(2 * var * np.log(t) / counts) + 3 * np.log(t) / counts
                a = int(np.argmax(index))
            reward = float(rng.random() < means[a])
            if method == "exp3":
                scores[a] -= eta * (1 - reward) / p[a]
            if method == "sliding_window_ucb":
                history.append((a, reward))
            counts[a] += 1
            sums[a] += reward
            squares[a] += reward * reward
            total += best - means[a]
            regret[t - 1] = total
    return runs * steps


REGRET_METHODS = {"thompson_sampling": thompson_sampling, "kl_ucb": kl_ucb, "moss": moss,
                  "ucb_v": ucb_v, "explore_then_commit": explore_then_commit,
                  "bayes_ucb": bayes_ucb, "exp3": exp3, "discounted_ucb": discounted_ucb,
                  "sliding_window_ucb": sliding_window_ucb,
                  "discounted_thompson_sampling": discounted_thompson_sampling}
#: The contextual benchmarks' instance: 8 contexts, 10 arms, d = 8.
_CONTEXT_RNG = np.random.default_rng(0)
CONTEXTS = ContextualArms(_CONTEXT_RNG.normal(size=(8, 10, 8)) / np.sqrt(8),
                          _CONTEXT_RNG.normal(size=8), sd=0.5)


def python_linear(method: str, runs: int, steps: int, seed: int = 0) -> int:
    """LinUCB (alpha = 1) or linear Thompson sampling (v = sd) as Python loops with NumPy
    (Sherman-Morrison updates, one Cholesky factor per Thompson step)."""
    rng = np.random.default_rng(seed)
    features, theta = CONTEXTS.features, CONTEXTS.theta
    contexts, k, d = features.shape
    for _ in range(runs):
        inverse, b = np.eye(d), np.zeros(d)
        for _ in range(steps):
            x = features[rng.integers(contexts)]
            theta_hat = inverse @ b
            if method == "lin_ucb":
                scores = x @ theta_hat + np.sqrt(np.einsum("ai,ij,aj->a", x, inverse, x))
            else:
                sample = theta_hat + CONTEXTS.sd * np.linalg.cholesky(inverse) @ rng.normal(
                    size=d)
                scores = x @ sample
            a = int(np.argmax(scores))
            reward = x[a] @ theta + CONTEXTS.sd * rng.normal()
            u = inverse @ x[a]
            inverse -= np.outer(u, u) / (1 + x[a] @ u)
            b += reward * x[a]
    return runs * steps


LINEAR_METHODS = {"lin_ucb": lin_ucb, "linear_thompson_sampling": linear_thompson_sampling}


def regret_headlines() -> list[Headline]:
    """Each regret-measured method against its Python loop, alternated rounds, 1 thread."""
    headlines = []
    with numba_threads(1):
        for name, method in {**REGRET_METHODS, **LINEAR_METHODS}.items():
            instance = CONTEXTS if name in LINEAR_METHODS else ARMS
            python_loop = python_linear if name in LINEAR_METHODS else python_regret
            method(instance, steps=10, runs=2)  # compile

            def kernel(method=method, instance=instance) -> float:
                t = time.perf_counter()
                method(instance, steps=REGRET_STEPS, runs=REGRET_RUNS)
                return REGRET_RUNS * REGRET_STEPS / (time.perf_counter() - t)

            def loop(name=name, python_loop=python_loop) -> float:
                t = time.perf_counter()
                return python_loop(name, PYTHON_RUNS, REGRET_STEPS) / (time.perf_counter() - t)

            kernel_rates, loop_rates, ratio = versus(kernel, loop, ROUNDS)
            print(f"{name:>22}: {spread(kernel_rates, '{:,.0f}')} pulls/s, Python loop "
                  f"{spread(loop_rates, '{:,.0f}')}: {spread(ratio, '{:.0f}')}x "
                  f"({ROUNDS} alternated rounds)")
            where = ("8 contexts x 10 arms, d = 8" if name in LINEAR_METHODS
                     else "10 Bernoulli arms")
            headlines.append(Headline(f"{name}, {where}, 1 thread",
                                      f"{np.median(kernel_rates) / 1e6:.2f}M pulls/s",
                                      f"Python loop {np.median(loop_rates) / 1e3:.1f}k pulls/s",
                                      f"{np.median(ratio):.0f}x"))
    return headlines


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
    return headlines + regret_headlines()


if __name__ == "__main__":
    main()
