"""The linear learners (:mod:`tabular.linear`) against the loop a user would otherwise
write: Python over ``gymnasium.make("tabular.envs:tabzoo/RandomWalk-v0", ...).step``
with NumPy feature vectors, the same update.

The task is Example 9.1's 1000-state random walk (jumps of up to 100 states, -1 / +1 at
the ends) with state aggregation into 10 groups of 100 (Figure 9.1's features),
``gamma = 1``, one thread. The Python loops read ``x(S)`` as a row of the same ``[S,
d]`` feature matrix and update ``w`` with NumPy vector operations:

- semi-gradient TD(0), ``w += alpha [R + gamma x(S') . w - x(S) . w] x(S)`` (the box
  of section 9.3);
- semi-gradient TD(lambda), ``z = gamma lam z + x(S)``, ``w += alpha delta z`` (the box
  of section 12.2), ``lam = 0.9``.

The walk has 200 outcomes per state: :func:`tabular.model.sampling.sample_step` draws one
by the model's search tables (:func:`tabular.model.compact.search_tables`, a guide table
over the running sums, O(1) reads on average) rather than a scan of all 200, and the
kernel's step is then mostly reading the model's successor and reward of that outcome.

Each round times the Python loop (for about a second) and the kernel (one call, after
a warm-up call before the rounds), one after the other, so that the two sides of a
ratio share the machine's load; the ratios of the rounds are printed as median
[min-max] (:func:`benchmarks.timing.spread`).
"""

from __future__ import annotations

import statistics
import time

import gymnasium as gym
import numba
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from benchmarks.timing import Headline, alternated, ratios, spread
from tabular import TabularMDP
from tabular.linear import semi_gradient_td, semi_gradient_td_lambda, state_aggregation

ENV_ID = "tabular.envs:tabzoo/RandomWalk-v0"
WALK = {"n_states": 1000, "jump": 100, "left_reward": -1.0}
ALPHA, LAM = 2e-4, 0.9
ROUNDS = 5
EPISODES = 20_000  # per kernel call: about 1.7 M steps


def python_loop(env, X: np.ndarray, lam: float | None, seconds: float = 1.0) -> float:
    """Steps per second of semi-gradient TD(0) (``lam=None``) or TD(lambda) over
    ``env.step``, episodes run until ``seconds`` have passed."""
    w = np.zeros(X.shape[1])
    z = np.zeros(X.shape[1])
    steps, episode, start = 0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        s, _ = env.reset(seed=episode)
        z[:] = 0.0
        done = False
        while not done:
            s_next, r, terminated, truncated, _ = env.step(0)
            x = X[s]
            delta = r + (0.0 if terminated else X[s_next] @ w) - x @ w
            if lam is None:
                w += ALPHA * delta * x
            else:
                z *= lam
                z += x
                w += ALPHA * delta * z
            steps += 1
            s, done = s_next, terminated or truncated
        episode += 1
    return steps / (time.perf_counter() - start)


def kernel_rate(learn) -> float:
    """Steps per second of one call of ``learn()`` (compiled already)."""
    t = time.perf_counter()
    result = learn()
    return result.episode_lengths.sum() / (time.perf_counter() - t)


def main() -> list[Headline]:
    env = gym.make(ENV_ID, **WALK)
    mdp = TabularMDP.from_gymnasium(env)
    policy = np.zeros(mdp.n_states, dtype=np.int64)
    groups = state_aggregation(np.r_[0, np.arange(1000) // 100, 9])
    learners = {
        "semi_gradient_td": (None, lambda: semi_gradient_td(
            mdp, policy, groups, alpha=ALPHA, episodes=EPISODES)),
        f"semi_gradient_td_lambda (lam={LAM})": (LAM, lambda: semi_gradient_td_lambda(
            mdp, policy, groups, lam=LAM, alpha=ALPHA, episodes=EPISODES)),
    }
    headlines = []
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        for name, (lam, learn) in learners.items():
            learn()  # compile (or load) before the rounds
            rounds = alternated({"python": lambda lam=lam: python_loop(env, groups, lam),
                                 "kernel": lambda learn=learn: kernel_rate(learn)}, ROUNDS)
            ratio = ratios(rounds["kernel"], rounds["python"])
            kernel, python = (statistics.median(rounds[k]) for k in ("kernel", "python"))
            print(f"{name:>38}: {kernel:14,.0f} steps/s, python + gymnasium {python:10,.0f} "
                  f"steps/s, ratio {spread(ratio, '{:.0f}')} ({ROUNDS} rounds)", flush=True)
            headlines.append(Headline(f"{name}, 1000-state walk, aggregation, 1 thread",
                                      f"{kernel / 1e6:.1f}M steps/s",
                                      f"Python loop {python / 1e3:.0f}k steps/s",
                                      f"{statistics.median(ratio):.0f}x"))
    finally:
        numba.set_num_threads(threads)
    return headlines


if __name__ == "__main__":
    main()
