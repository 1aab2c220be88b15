"""Episodes of a softmax policy, as every policy-gradient learner samples them.

REINFORCE, actor-critic and PPO (:mod:`tabular.pg.learners`), TRPO, and the RLHF
learners that sample (:mod:`tabular.rlhf`) draw their episodes with
:func:`sample_episode`: the policy ``pi(a|s) = softmax(theta[row_of_state[s]])``
(Sutton & Barto, section 13.1), the dynamics through
:func:`~tabular.model.sampling.sample_step`, and the reward the learner sees (floored,
with the KL penalty to a reference folded in) recorded next to the environment's own
return. The records below are the kernel arguments these learners share: a driver
takes ``(model, params, rollout, rng_states, out)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular.model.sampling import sample_start, sample_step
from tabular.rules.policy_gradient import kl_shaped_reward, log_softmax, sample_softmax


class Rollout(NamedTuple):
    """How a learner samples an episode and which reward it learns from.

    ``row_of_state`` (int64 ``[S]``): the row of logits each state reads;
    ``max_steps``: the step limit of an episode; ``reward_floor``: the learner sees
    ``max(r, reward_floor)`` (``-inf``: ``r`` itself); the KL penalty
    ``beta (log pi(a|s) - log pi_ref(a|s))`` with the reference's log-probabilities
    ``ref_log_probs [R_ref, A]`` by row and its row map ``ref_row [S]`` (no penalty:
    ``beta = 0``, and one row of zeros that every state reads: one kernel serves both).
    """

    row_of_state: np.ndarray
    max_steps: int
    reward_floor: float
    beta: float
    ref_log_probs: np.ndarray | None
    ref_row: np.ndarray | None


class PolicyGradientOutputs(NamedTuple):
    """What the policy-gradient kernels write, each with a leading run axis: ``logits``
    ``[runs, R, A]`` (trained in place from copies of the initial policy's), ``V``
    ``[runs, S]`` (the critic or baseline; ``None`` for a learner without one),
    ``returns`` and ``lengths`` ``[runs, episodes]``."""

    logits: np.ndarray
    V: np.ndarray | None
    returns: np.ndarray
    lengths: np.ndarray


@njit(cache=True)
def kl_penalised(reward, log_pi, rollout, s, a):
    """``reward`` with the KL penalty of ``rollout`` (a :class:`Rollout`) folded in by
    :func:`~tabular.rules.policy_gradient.kl_shaped_reward`: ``reward`` itself when
    ``rollout.beta = 0``."""
    return kl_shaped_reward(reward, log_pi, rollout.ref_log_probs[rollout.ref_row[s], a],
                            rollout.beta)


@njit(cache=True, inline="always")
def episode_buffers(n, max_steps, n_actions):
    """Buffers for :func:`sample_episode`, for ``n`` episodes of at most ``L = max_steps``
    steps: ``(path, seen, dones, dist)`` with ``path`` int64 ``[n, 2, L + 1]`` (the states,
    then the actions), ``seen`` ``[n, 2, L]`` (the rewards the learner sees, then
    ``log pi(a_t|s_t)``), ``dones`` bool ``[n, L]`` and ``dist`` ``[2, A]`` scratch (pi and
    log pi of one state). Plain arrays, not a record: the sampler writes into them
    (``docs/decisions/2026-12-02-kernel-records.md``)."""
    return (np.empty((n, 2, max_steps + 1), dtype=np.int64), np.empty((n, 2, max_steps)),
            np.empty((n, max_steps), dtype=np.bool_), np.empty((2, n_actions)))


@njit(cache=True, inline="always")
def sample_episode(model, rollout, theta, rng, path, seen, dones, dist):
    """Sample one episode of ``pi = softmax(theta[row_of_state[s]])`` from a start state
    drawn from the model; returns its length ``T`` and its environment return.

    ``model`` is a :class:`~tabular.model.mdp.ModelArrays`, ``rollout`` a
    :class:`Rollout`, ``theta`` the policy's logits ``[R, A]`` (read only), ``rng`` the
    run's xoshiro state. Fills
    ``path[0, :T + 1]`` with the states (``path[0, T]``: where the episode stopped) and
    ``path[1, :T]`` with the actions, ``dones[:T]``, ``seen[1, :T]`` with
    ``log pi(a_t|s_t)`` and ``seen[0, :T]`` with the reward the learner sees:
    ``max(r, reward_floor)`` minus the KL penalty ``beta (log pi(a_t|s_t) -
    log pi_ref(a_t|s_t))`` (:func:`kl_penalised`). The environment return sums the
    rewards as the model pays them (``-inf`` for a trap). ``dist[0]`` and ``dist[1]``
    are scratch (they end holding pi and log pi of the last state that acted).

    Eight positional arguments, the one exception to the library's six: the sampler is
    inlined into every episode loop, where a record would cost time and could lose the
    writes into its buffers (``docs/decisions/2026-12-02-kernel-records.md``).
    """
    path[0, 0] = sample_start(model, rng)
    return continue_episode(model, rollout, theta, rng, path, seen, dones, dist)


@njit(cache=True, inline="always")
def continue_episode(model, rollout, theta, rng, path, seen, dones, dist):
    """:func:`sample_episode` from the state given in ``path[0, 0]`` instead of a start
    drawn from the model: a completion of a prefix, or another response to the same
    prompt."""
    probs, log_probs = dist[0], dist[1]
    s = path[0, 0]
    env_return = 0.0
    T = rollout.max_steps
    for t in range(rollout.max_steps):
        row = rollout.row_of_state[s]
        a = sample_softmax(theta[row], probs, rng)
        log_softmax(theta[row], log_probs)
        s_next, r, d = sample_step(model, s, a, rng)
        env_return += r
        path[0, t], path[1, t], dones[t], seen[1, t] = s, a, d, log_probs[a]
        seen[0, t] = kl_penalised(max(r, rollout.reward_floor), log_probs[a], rollout, s, a)
        s = s_next
        if d:
            T = t + 1
            break
    path[0, T] = s
    return T, env_return
