"""Fill numba's on-disk cache with the kernels of the main entry points.

``python -m tabular.warm`` (``make warm``; ``make`` runs it once after installing)
calls each entry point once on a small model of the stored form every model has
(:mod:`tabular.model.compact`), so that a user's first call loads compiled code instead
of compiling it: from an empty cache the first ``value_iteration`` and
``q_learning`` take seconds of compilation, from a warm one milliseconds
(``python -m benchmarks startup``). Kernels are cached per argument type, and every
model built the usual way has the same types, so what is warmed here serves every
model. The entry points are warmed in parallel, one process per core.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np

from tabular import (
    TabularMDP,
    double_q_learning,
    expected_sarsa,
    mc_control,
    mc_prediction,
    policy_evaluation,
    policy_iteration,
    q_learning,
    reinforce,
    sarsa,
    soft_value_iteration,
    td0,
    value_iteration,
)


def _chain() -> TabularMDP:
    """A two-state chain with a slip (``K = 2``): walk right to the end."""
    next_state = np.array([[[0, 1], [1, 0]], [[1, 1], [1, 1]]])
    prob = np.array([[[0.9, 0.1], [0.8, 0.2]], [[1.0, 0.0], [1.0, 0.0]]])
    reward = np.array([[[-1.0, -1.0], [0.0, -1.0]], [[0.0, 0.0], [1.0, 0.0]]])
    done = np.array([[[False, False], [False, False]], [[True, False], [True, False]]])
    return TabularMDP(next_state, prob, reward, done, np.array([1.0, 0.0]))


def _calls(mdp: TabularMDP) -> dict:
    """The entry points warmed, each a call on ``mdp``."""
    uniform = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    return {
        "value_iteration": lambda: value_iteration(mdp, 0.9),
        "policy_evaluation": lambda: policy_evaluation(mdp, uniform, 0.9, method="sync"),
        "policy_iteration": lambda: policy_iteration(mdp, 0.9),
        "soft_value_iteration": lambda: soft_value_iteration(mdp, 0.9, 1.0),
        "q_learning": lambda: q_learning(mdp, episodes=2),
        "sarsa": lambda: sarsa(mdp, episodes=2),
        "expected_sarsa": lambda: expected_sarsa(mdp, episodes=2),
        "double_q_learning": lambda: double_q_learning(mdp, episodes=2),
        "td0": lambda: td0(mdp, uniform, episodes=2),
        "mc_prediction": lambda: mc_prediction(mdp, uniform, episodes=2),
        "mc_control": lambda: mc_control(mdp, episodes=2),
        "reinforce": lambda: reinforce(mdp, gamma=0.9, episodes=2),  # and actor_critic's kernel
    }


def warm(name: str) -> float:
    """Seconds the first call of entry point ``name`` takes (its compilation)."""
    call = _calls(_chain())[name]
    t = time.perf_counter()
    call()
    return time.perf_counter() - t


def main() -> None:
    start = time.perf_counter()
    names = list(_calls(_chain()))
    # one process per core: compilation is single-threaded, and each kernel is its own file
    with ProcessPoolExecutor(os.cpu_count(), mp_context=get_context("spawn")) as pool:
        for name, seconds in zip(names, pool.map(warm, names), strict=True):
            print(f"{name:>22}: {seconds:6.2f} s", flush=True)
    print(f"numba cache warm in {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
