"""Policies: deterministic ``int64 [S]``, stochastic ``float64 [S, A]``, and the softmax
policy that bridges gridworlds and the language model.

Every function that takes a policy accepts all three forms: planning functions turn
them into an ``[S, A]`` matrix (:func:`tabular.checks.policy_matrix`), the softmax
learners into a :class:`SoftmaxPolicy` (:func:`as_softmax_policy`).

``SoftmaxPolicy(logits[R, A], row_of_state[S])``: state ``s`` reads its logits from
row ``row_of_state[s]``. For a gridworld, row = state (a tabular softmax); for the
token MDP, row = the n-gram context of the prefix, so the same policy-gradient
kernels train an n-gram language model. ``-inf`` logits mask actions out (a
grammar); every row must keep at least one finite logit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.checks import index_array, policy_matrix, real_array


@dataclass
class SoftmaxPolicy:
    """``pi(a | s) = softmax(logits[row_of_state[s]])[a]``.

    ``logits``: float64 ``[R, A]`` (trainable; kernels update it in place on a copy;
    ``-inf`` masks an action, NaN and ``+inf`` are rejected).
    ``row_of_state``: int64 ``[S]``, which row each state reads.
    """

    logits: np.ndarray
    row_of_state: np.ndarray

    def __post_init__(self):
        self.logits = np.ascontiguousarray(real_array("logits", self.logits))
        self.row_of_state = np.ascontiguousarray(index_array("row_of_state", self.row_of_state))
        if self.logits.ndim != 2:
            raise ValueError(f"logits must be [R, A], got shape {self.logits.shape}")
        if self.row_of_state.ndim != 1:
            raise ValueError(f"row_of_state must be [S], got shape {self.row_of_state.shape}")
        R = self.logits.shape[0]
        bad = (self.row_of_state < 0) | (self.row_of_state >= R)
        if bad.any():
            s = int(np.argmax(bad))
            raise ValueError(f"row_of_state[{s}] = {self.row_of_state[s]} is outside the "
                             f"{R} rows of logits")
        if np.isnan(self.logits).any() or (self.logits == np.inf).any():
            r, a = np.argwhere(np.isnan(self.logits) | (self.logits == np.inf))[0]
            raise ValueError(f"logits[{r}, {a}] = {self.logits[r, a]} (NaN and +inf rejected)")
        dead = ~np.isfinite(self.logits).any(axis=1)
        if dead.any():
            raise ValueError(f"logits row {int(np.argmax(dead))} is -inf everywhere: "
                             "at least one action per row must be allowed")

    @classmethod
    def tabular(cls, n_states: int, n_actions: int, init: float = 0.0) -> SoftmaxPolicy:
        """One row per state: a tabular softmax (uniform when ``init`` is constant)."""
        return cls(np.full((n_states, n_actions), float(init)), np.arange(n_states))

    @property
    def n_states(self) -> int:
        """S, the number of states (entries of ``row_of_state``)."""
        return self.row_of_state.shape[0]

    @property
    def n_actions(self) -> int:
        """A, the number of actions (columns of ``logits``)."""
        return self.logits.shape[1]

    def copy(self) -> SoftmaxPolicy:
        """A policy with copies of ``logits`` and ``row_of_state`` (a learner trains its
        own copy, never the caller's arrays)."""
        return SoftmaxPolicy(self.logits.copy(), self.row_of_state.copy())

    def row_probs(self) -> np.ndarray:
        """``[R, A]`` action probabilities of each row."""
        z = self.logits - self.logits.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def row_log_probs(self) -> np.ndarray:
        """``[R, A]`` log action probabilities of each row (``-inf`` for masked actions)."""
        z = self.logits - self.logits.max(axis=1, keepdims=True)
        with np.errstate(divide="ignore"):
            return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

    def probs(self) -> np.ndarray:
        """``[S, A]``: the stochastic policy every planning function accepts."""
        return self.row_probs()[self.row_of_state]

    def log_probs(self) -> np.ndarray:
        """``[S, A]`` log-probabilities (``-inf`` for masked actions)."""
        return self.row_log_probs()[self.row_of_state]


def as_softmax_policy(mdp, policy, name: str = "policy", *,
                      greedy: bool = True) -> SoftmaxPolicy:
    """Any policy form as a :class:`SoftmaxPolicy` over ``mdp``'s states and actions.

    - a :class:`SoftmaxPolicy` is checked to cover ``mdp`` and returned as it is
      (its rows are kept, shared or not);
    - a stochastic ``[S, A]`` matrix becomes one row per state with logits
      ``log pi(a|s)``: an action of probability 0 gets a ``-inf`` logit (masked);
    - a greedy ``int [S]`` policy becomes the deterministic softmax that masks every
      other action; with ``greedy=False`` (the starting policy of a learner, which
      could never leave it) it is refused.

    Errors name ``name`` (and the offending state).
    """
    S, A = mdp.n_states, mdp.n_actions
    if isinstance(policy, SoftmaxPolicy):
        if policy.n_states != S or policy.n_actions != A:
            raise ValueError(f"{name} covers {policy.n_states} states and {policy.n_actions} "
                             f"actions; the MDP has {S} states and {A}")
        return policy
    if not greedy and np.shape(policy) == (S,):
        raise ValueError(f"{name} must be a SoftmaxPolicy or an [S, A] matrix of "
                         "probabilities: a greedy int [S] policy masks every other action, "
                         "so a softmax learner could never move away from it")
    with np.errstate(divide="ignore"):
        logits = np.log(policy_matrix(mdp, policy, name))
    return SoftmaxPolicy(logits, np.arange(S))
