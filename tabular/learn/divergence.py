"""Divergence checks on learned estimates: a learner whose updates overshoot raises a
``FloatingPointError`` naming the estimate and the knob to turn, never returns a NaN.

``-inf`` rewards (a trap that ends the episode) are handled exactly by the rules of
:mod:`tabular.rules.values`: an estimate becomes ``-inf`` only when a sampled target
is ``-inf``, which happens only when an outcome of positive probability (under the
policy being evaluated) leads to ``-inf``; then the true expectation *is* ``-inf``,
so a ``-inf`` estimate is absorbing and no NaN can appear, and :func:`check_estimate`
accepts it where the model pays a ``-inf`` reward. Methods that learn the value of an
epsilon-soft policy (SARSA, expected SARSA, on-policy MC) therefore value every state
from which the trap is reachable by exploration at ``-inf`` (which is exact for that
policy, but leaves nothing to choose between); for them use a finite trap reward, e.g.
``gymnasium.make("tabzoo/TrapTreasure-v0", trap_reward=-10.0)``. Q-learning, double
Q-learning and off-policy MC learn the greedy policy's values, which stay finite
wherever the trap can be avoided.
"""

from __future__ import annotations

import numpy as np

from tabular.checks import first_bad
from tabular.model.mdp import TabularMDP


def value_limit(mdp: TabularMDP, gamma: float, initial: np.ndarray, lengths: np.ndarray
                ) -> float:
    """The largest magnitude an estimate can reach while every step moves it toward a
    target no further than one reward and one discounted estimate away: ``max|initial|``
    plus ``r_max`` times ``min(1 / (1 - gamma), the steps of the longest run)`` (a
    return's bound, eq. 3.8; ``r_max`` the largest finite reward magnitude).
    ``lengths``: the episode lengths ``[runs, episodes]`` the runs took."""
    rewards = mdp.arrays.reward  # the stored table: zero-probability rows only widen it
    finite = np.abs(rewards[np.isfinite(rewards)])
    r_max = float(finite.max()) if finite.size else 0.0
    steps = float(lengths.sum(axis=-1).max())
    horizon = steps if gamma == 1.0 else min(steps, 1.0 / (1.0 - gamma))
    return float(np.abs(initial).max(initial=0.0)) + r_max * horizon


def check_estimate(name: str, values: np.ndarray, mdp: TabularMDP,
                   limit: float = np.inf) -> None:
    """A ``FloatingPointError`` when a learned estimate diverged: it holds NaN or
    ``+inf``, a ``-inf`` though ``mdp`` pays no ``-inf`` reward (a trap is the one way to
    a true ``-inf`` value), or a magnitude above ``limit`` (:func:`value_limit`, with a
    relative slack for rounding)."""
    bound = limit * (1.0 + 1e-9)
    if values.size == 0:
        return
    low, high = values.min(), values.max()  # no temporary array; a NaN fails below
    if -bound <= low and high <= bound and np.isfinite(low) and np.isfinite(high):
        return
    ok = (np.abs(values) <= bound) & np.isfinite(values)
    if ok.all():
        return
    traps = bool(np.isneginf(mdp.arrays.reward).any())
    if traps:
        ok |= values == -np.inf
        if ok.all():
            return
    bad = ~ok
    v = values[bad][0]
    why = ("a value beyond the largest the rewards and gamma allow, "
           f"|{name}| <= {limit:.6g}" if np.isfinite(v)
           else "a -inf, though no reward of the MDP is -inf" if v == -np.inf else "not a number"
           if np.isnan(v) else "+inf")
    raise FloatingPointError(f"the learned {name} diverged: {name}{first_bad(bad)} = {v}, {why}; "
                             "the updates overshoot their targets: lower alpha")
