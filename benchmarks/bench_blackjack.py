"""Monte Carlo on Blackjack (chapter 5) against the loop a user would otherwise write:
Python over Gymnasium's ``Blackjack-v1`` (``sab=True``, the book's rules) with NumPy
tables.

Reported, from one run of this process, on one thread, as environment steps per
second and their ratio:

- on-policy first-visit MC prediction of Example 5.1's stick-on-20 policy (Figure 5.1),
  :func:`tabular.mc_prediction` on :func:`tabular.envs.blackjack.blackjack_model`;
- off-policy MC prediction of the same policy with weighted importance sampling and a
  uniformly random behaviour policy (Figure 5.3), :func:`tabular.off_policy_mc_prediction`.
"""

from __future__ import annotations

import gymnasium as gym
import numba
import numpy as np

from benchmarks.bench_model_free import kernel_against_python
from benchmarks.timing import Headline
from tabular import mc_prediction, off_policy_mc_prediction
from tabular.envs.blackjack import blackjack_model
from tabular.experiments.book.ch05.blackjack import stick_on_20

STICK, HIT = 0, 1  # Gymnasium's actions


def python_mc_prediction(env, episodes: int, weighted: bool, seed: int = 0) -> int:
    """Every hand of an episode is a distinct state, so first-visit MC averages each
    hand's return: on-policy (sample averages) when ``weighted`` is False, otherwise the
    stick-on-20 policy evaluated from uniformly random play by weighted importance
    sampling (S&B section 5.6, incremental form); returns the steps taken."""
    rng = np.random.default_rng(seed)
    V, C = np.zeros((32, 11, 2)), np.zeros((32, 11, 2))
    steps = 0
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed if episode == 0 else None)  # seeded once
        visited = []
        while True:
            target = STICK if obs[0] >= 20 else HIT
            action = int(rng.integers(2)) if weighted else target
            visited.append((obs, 2.0 * (action == target) if weighted else 1.0))
            obs, reward, terminated, truncated, _ = env.step(action)
            steps += 1
            if terminated or truncated:
                break
        W = 1.0  # rewards come only at the end, undiscounted: the return is the reward
        for (total, dealer, ace), ratio in reversed(visited):
            W *= ratio
            if W == 0.0:
                break
            C[total, dealer, ace] += W
            V[total, dealer, ace] += W / C[total, dealer, ace] * (reward - V[total, dealer, ace])
    return steps


def main() -> list[Headline]:
    env = gym.make("Blackjack-v1", sab=True)
    mdp = blackjack_model()
    target = stick_on_20(mdp.n_states)
    behaviour = np.full((mdp.n_states, mdp.n_actions), 0.5)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        pairs = {
            "mc_prediction (on-policy)": (
                lambda n: python_mc_prediction(env, n, weighted=False),
                lambda: mc_prediction(mdp, target, episodes=500_000)),
            "off_policy_mc_prediction (weighted)": (
                lambda n: python_mc_prediction(env, n, weighted=True),
                lambda: off_policy_mc_prediction(mdp, target, behaviour, episodes=500_000,
                                                 importance_sampling="weighted")),
        }
        headlines = [kernel_against_python(name, "Blackjack", python_loop, kernel)
                     for name, (python_loop, kernel) in pairs.items()]
    finally:
        numba.set_num_threads(threads)
    return headlines


if __name__ == "__main__":
    main()
