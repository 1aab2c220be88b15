"""Argument checks shared by every public function: each error names the parameter."""

from __future__ import annotations

import numpy as np


def check_gamma(gamma: float) -> float:
    """The discount must be a number in ``[0, 1]``."""
    return check_unit_interval("gamma", gamma)


def check_unit_interval(name: str, value: float) -> float:
    value = float(value)
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return value


def check_positive(name: str, value: float) -> float:
    value = float(value)
    if not value > 0.0 or value == np.inf:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def check_positive_int(name: str, value: int) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def policy_matrix(mdp, policy, name: str = "policy") -> np.ndarray:
    """A policy as a stochastic ``float64 [S, A]`` matrix.

    Accepts a deterministic ``int [S]`` array of actions, a stochastic ``[S, A]``
    array whose rows are distributions, or anything with a ``probs()`` method
    (a :class:`~tabular.SoftmaxPolicy`). Errors name the offending state.
    """
    S, A = mdp.n_states, mdp.n_actions
    if hasattr(policy, "probs"):
        policy = policy.probs()
    pi = np.asarray(policy)
    if pi.shape == (S,):
        if not np.issubdtype(pi.dtype, np.integer):
            raise ValueError(f"{name} of shape [{S}] must hold integer actions, got {pi.dtype}")
        bad = (pi < 0) | (pi >= A)
        if bad.any():
            s = int(np.argmax(bad))
            raise ValueError(f"{name}[{s}] = {pi[s]} is not an action in [0, {A}) "
                             f"(state {mdp.state_name(s)})")
        return np.eye(A)[pi]
    if pi.shape != (S, A):
        raise ValueError(f"{name} must have shape [{S}] (actions) or [{S}, {A}] "
                         f"(probabilities), got {pi.shape}")
    pi = pi.astype(np.float64)
    bad = ~np.isfinite(pi).all(axis=1) | (pi < 0).any(axis=1) | (np.abs(pi.sum(axis=1) - 1) > 1e-9)
    if bad.any():
        s = int(np.argmax(bad))
        raise ValueError(f"{name}[{s}] = {pi[s]} is not a probability distribution "
                         f"(state {mdp.state_name(s)})")
    return np.ascontiguousarray(pi)
