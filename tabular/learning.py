"""Shared pieces of every model-free learner.

Kernel helpers (``@njit(inline="always")``, called inside episode loops):

- :func:`greedy_action` -- argmax with uniformly random tie-breaking;
- :func:`epsilon_greedy_action`, :func:`epsilon_greedy_probs` -- the epsilon-greedy
  policy of Sutton & Barto section 2.2 / 5.4 (a random action with probability
  epsilon, which may be the greedy one);
- :func:`expectation`, :func:`discounted`, :func:`td_error`, :func:`update_toward` --
  the arithmetic of eq. 2.4, ``NewEstimate <- OldEstimate + StepSize [Target -
  OldEstimate]``, made exact for ``-inf`` rewards (below).

The ``runs`` driver pattern (every learner's kernel follows it)::

    @njit(cache=True, inline="always")
    def _one_run(next_state, prob, reward, done, start_cdf, rng, ..., Q, ...):
        ...  # the episode loop of one run

    @njit(cache=True, parallel=True)
    def _kernel(next_state, prob, reward, done, start_cdf, rng_states, ..., out_Q, ...):
        for run in prange(rng_states.shape[0]):
            _one_run(next_state, prob, reward, done, start_cdf, rng_states[run].copy(), ...,
                     out_Q[run], ...)

The TD learners, REINFORCE and actor-critic inline ``_one_run`` into the ``prange``
body: compiled as a separate function instead, the same loop runs about half as
fast (Q-learning on CliffWalking, one thread: 36M against 72M steps/s). Numba compiles a ``prange``
body with its array arguments marked as not aliasing one another, which presumably
lets the compiler keep values in registers across the stores to ``Q`` and to the
random state. The Monte Carlo learners keep ``_one_run`` separate: they are fast
enough without it (about 200x a Python loop), and inlining their larger loops would
more than double their compile time from an empty cache (``mc_control``: 4.4 s to
10.1 s, for 1.45x the speed); PPO likewise (5.7 s to 10.2 s, for 1.12x).

Run ``i`` draws only from its own xoshiro stream ``rng_states[i]`` (from
:func:`tabular.rng.seed_states`) and writes only its own output rows, so the
numbers do not depend on the thread count or on ``runs``: run ``i`` of
``runs=n`` equals run ``i`` of ``runs=m``. Each run advances a private copy of
its 32-byte stream state: two rows share a 64-byte cache line, and threads
writing neighbouring rows on every draw would contend for it (false sharing).

``-inf`` rewards (a trap that ends the episode) are handled exactly: an estimate
becomes ``-inf`` only when a sampled target is ``-inf``, which happens only when an
outcome of positive probability (under the policy being evaluated) leads to
``-inf``; then the true expectation *is* ``-inf``, whatever else can happen, so a
``-inf`` estimate is absorbing (:func:`td_error` returns 0 for it) and the products
``0 * -inf`` that arise for zero discounts or zero probabilities count as 0. No NaN
can appear. Methods that learn the value of an epsilon-soft policy (SARSA,
expected SARSA, on-policy MC) therefore value every state from which the trap
is reachable by exploration at ``-inf`` (which is exact for that policy, but
leaves nothing to choose between); for them use a finite trap reward, e.g.
``gymnasium.make("tabular/TrapTreasure-v0", trap_reward=-10.0)``. Q-learning,
double Q-learning and off-policy MC learn the greedy policy's values, which stay
finite wherever the trap can be avoided.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .checks import check_positive_int
from .mdp import TabularMDP

# --------------------------------------------------------------------- arguments


def as_mdp(env, name: str = "mdp") -> TabularMDP:
    """A :class:`TabularMDP`, or a Gymnasium env compiled to one (its transition table
    is what the sampler draws from); anything else is a clear error naming ``name``."""
    if isinstance(env, TabularMDP):
        return env
    if hasattr(env, "unwrapped") or hasattr(env, "P"):
        return TabularMDP.from_gymnasium(env)
    raise TypeError(f"{name} must be a tabular.TabularMDP or a Gymnasium env with a "
                    f"transition table, got {type(env).__name__}")


def check_episode_args(episodes: int, runs: int, max_steps: int) -> tuple[int, int, int]:
    """``episodes``, ``runs`` and ``max_steps`` (the step limit per episode) are ints >= 1."""
    return (check_positive_int("episodes", episodes), check_positive_int("runs", runs),
            check_positive_int("max_steps", max_steps))


def initial_values(name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """The initial estimate: a finite number or a finite array of ``shape``."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(shape, float(arr))
    if arr.shape != shape:
        raise ValueError(f"{name} must be a number or an array of shape {list(shape)}, "
                         f"got shape {list(arr.shape)}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (a -inf value is learned, not given), "
                         f"got {arr[~np.isfinite(arr)][0]!r}")
    return np.ascontiguousarray(arr)


def per_run(values: np.ndarray, runs: int) -> np.ndarray:
    """``runs`` copies of ``values`` along a new leading axis (each run's own table)."""
    return np.repeat(values[None], runs, axis=0)


def squeeze_runs(array: np.ndarray, runs: int) -> np.ndarray:
    """TRANSITIONAL (removed by the one-shape refactor): old run-axis convention."""
    return array[0] if runs == 1 else array
