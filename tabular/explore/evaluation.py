"""Exact finite-horizon values: of the time-dependent policies learners followed, and of
the best and worst policies.

A time-dependent policy ``pi = (pi_0, ..., pi_{H-1})`` has values ``V^pi_h``, computed
backwards from ``V^pi_H = 0`` by ``V^pi_h(s) = sum_a pi_h(a|s) sum_k p_k [r_k +
V^pi_{h+1}(s'_k)]`` (no value after an outcome that ends the episode; Puterman, 1994,
section 4.2). The value of an episode is ``V^pi_0(s0)`` averaged over the start
distribution. Nothing is sampled: these are the exact expectations.
"""

from __future__ import annotations

import numpy as np

from tabular.model.mdp import TabularMDP
from tabular.solve.average_reward import finite_horizon

#: Episodes evaluated together (bounds the temporaries at ``chunk x S x A x K`` floats).
CHUNK_ENTRIES = 4_000_000


def action_values(mdp: TabularMDP, V_next: np.ndarray) -> np.ndarray:
    """``Q[e, s, a] = sum_k p_k [r_k + V_next[e, s'_k]]`` for a batch of next-step values
    ``V_next [E, S]`` (0 after an outcome that ends the episode)."""
    live = mdp.prob > 0.0
    reward = np.where(live, mdp.reward, 0.0)
    following = V_next[:, mdp.next_state] * ~mdp.done  # [E, S, A, K]
    return (mdp.prob * (reward + following)).sum(axis=-1)


def policy_values(mdp: TabularMDP, policy: np.ndarray, epsilon: float = 0.0) -> np.ndarray:
    """``V^{pi_k}_0(s0)`` of each policy ``policy[..., H, S]`` (int actions), the policy
    taking a uniformly random action with probability ``epsilon`` instead, averaged
    over ``mdp.start``: an array of the leading shape ``policy.shape[:-2]``."""
    *lead, H, S = policy.shape
    flat = policy.reshape(-1, H, S)
    E = flat.shape[0]
    chunk = max(1, CHUNK_ENTRIES // (S * mdp.n_actions * mdp.n_outcomes))
    values = np.empty(E)
    for first in range(0, E, chunk):
        part = flat[first:first + chunk].astype(np.int64)
        V = np.zeros((part.shape[0], S))
        for h in range(H - 1, -1, -1):
            Q = action_values(mdp, V)
            greedy = np.take_along_axis(Q, part[:, h, :, None], axis=2)[:, :, 0]
            V = (1.0 - epsilon) * greedy + epsilon * Q.mean(axis=-1)
        values[first:first + chunk] = V @ mdp.start
    return values.reshape(lead)


def optimal_value(mdp: TabularMDP, horizon: int) -> float:
    """``V*_0(s0)``: the best expected return of ``horizon`` steps from the start
    distribution, by :func:`~tabular.finite_horizon` (backward induction)."""
    return float(finite_horizon(mdp, horizon).V[0] @ mdp.start)


def worst_value(mdp: TabularMDP, horizon: int) -> float:
    """The worst expected return of ``horizon`` steps from the start distribution:
    backward induction with ``min`` in place of ``max``."""
    V = np.zeros((1, mdp.n_states))
    for _ in range(horizon):
        V = action_values(mdp, V).min(axis=-1)
    return float(V[0] @ mdp.start)
