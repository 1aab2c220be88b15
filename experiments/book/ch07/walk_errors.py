"""Example 7.1's 19-state random walk and the early RMS error of a prediction learner on
it: the measure of Figures 7.2 (n-step TD) and 12.3, 12.6 and 12.8 (the lambda methods)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import TabularMDP, policy_evaluation
from tabular.experiments.harness import style

ENV_ID = "tabzoo/RandomWalk-v0"


def model() -> TabularMDP:
    return TabularMDP.from_gymnasium(gym.make(ENV_ID, n_states=19, left_reward=-1.0))


def early_rms(learn, alpha: float, episodes: int, runs: int, seed: int,
              **kwargs) -> np.ndarray:
    """Per run, the RMS error over the 19 states after each of the first ``episodes``
    episodes of the prediction learner ``learn`` (the uniform walk, step ``alpha``,
    ``kwargs`` its own arguments), averaged over those episodes: ``[runs]``."""
    mdp = model()
    walk = np.ones((mdp.n_states, mdp.n_actions))
    true_V = policy_evaluation(mdp, walk, gamma=1.0).V
    inner = ~style.terminal_states(mdp)
    if alpha == 0.0:  # V never moves from 0
        return np.full(runs, np.sqrt(np.mean(true_V[inner] ** 2)))
    history = learn(mdp, walk, gamma=1.0, episodes=episodes, alpha=alpha, seed=seed,
                    runs=runs, history=True, **kwargs).V_history
    return np.sqrt(np.mean((history[:, :, inner] - true_V[inner]) ** 2, axis=2)).mean(axis=1)

