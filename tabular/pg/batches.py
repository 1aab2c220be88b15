"""A batch of episodes, flattened sample by sample, as PPO and TRPO learn from it.

:func:`collect_batch` samples ``M`` episodes with :func:`~tabular.pg.rollout.sample_episode`
and lays their steps end to end: sample ``k`` has a state, an action, ``log pi_old(a|s)``,
a GAE(lambda) advantage and the critic's target ``A + V_old(s)``. It also lists the
distinct rows of logits the batch visits and how many samples each has, so that the
learners touch only those rows: a step costs ``O(samples * A)``, however many rows
the policy has (the token MDP's tree can have a million).

Batch averages are per episode, ``(1/M) sum_episodes sum_t``, as in
:func:`tabular.ppo`: the weight of a visited row is ``count / M``, and the KL of a step,
:func:`batch_kl`, is ``(1/M) sum_t KL(pi_old(.|s_t) || pi(.|s_t))``, an unbiased estimate
of ``E_{pi_old}[sum_t KL(pi_old(.|s_t) || pi(.|s_t))]`` (on a token tree: the KL between
the two policies' distributions over whole responses).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular.pg.rollout import episode_buffers, sample_episode
from tabular.rules.policy_gradient import log_softmax, softmax, softmax_kl
from tabular.rules.returns import gae


class TrustRegionOutputs(NamedTuple):
    """What the batch learners' kernels write, each with a leading run axis: the four
    fields of :class:`~tabular.pg.rollout.PolicyGradientOutputs`, then per iteration
    ``step_kl`` (:func:`batch_kl` of the update), ``kl_penalty`` (PPO's adaptive KL
    penalty coefficient; ``None`` otherwise) and ``backtracks`` (TRPO's line search;
    ``None`` otherwise)."""

    logits: np.ndarray
    V: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray
    step_kl: np.ndarray
    kl_penalty: np.ndarray | None
    backtracks: np.ndarray | None


class RunState(NamedTuple):
    """One run of a batch learner as its iterations update it: the policy's logits
    ``theta`` ``[R, A]``, the critic ``V`` ``[S]`` and the run's xoshiro stream ``rng``."""

    theta: np.ndarray
    V: np.ndarray
    rng: np.ndarray


class BatchIteration(NamedTuple):
    """Iteration ``it`` (counted from 0) on a batch of ``N`` samples that visit ``n_rows``
    distinct rows of logits (what :func:`collect_batch` returns)."""

    N: int
    n_rows: int
    it: int


class Batch(NamedTuple):
    """The buffers of :func:`collect_batch` (capacity ``M * L`` samples, ``L = max_steps``).

    Per sample: ``states``, ``actions`` (int64), ``old_log_pi``, ``advantages``,
    ``targets``. Per visited row, in order of first visit: ``rows`` (int64), ``counts``
    (samples in the row); ``slot`` (int64 ``[R]``) maps a row to its index in ``rows``
    (-1: not visited; reset by :func:`release_rows`). Per episode: ``returns`` (the
    environment's) and ``lengths``. The rest is one episode's scratch.
    """

    states: np.ndarray
    actions: np.ndarray
    old_log_pi: np.ndarray
    advantages: np.ndarray
    targets: np.ndarray
    rows: np.ndarray
    counts: np.ndarray
    slot: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray
    path: np.ndarray
    seen: np.ndarray
    dones: np.ndarray
    dist: np.ndarray
    values: np.ndarray


@njit(cache=True)
def batch_buffers(episodes, max_steps, n_rows, n_actions):
    """Empty :class:`Batch` buffers for ``episodes`` episodes of at most ``max_steps`` steps
    of a policy with ``n_rows`` rows of ``n_actions`` logits."""
    n = episodes * max_steps
    path, seen, dones, dist = episode_buffers(1, max_steps, n_actions)
    return Batch(np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n),
                 np.empty(n), np.empty(n), np.empty(n, dtype=np.int64), np.empty(n),
                 np.full(n_rows, -1, dtype=np.int64), np.empty(episodes),
                 np.empty(episodes, dtype=np.int64), path[0], seen[0], dones[0], dist,
                 np.empty(max_steps + 1))


@njit(cache=True)
def collect_batch(model, rollout, state, batch, gamma, lam):
    """Sample as many episodes of ``softmax(state.theta)`` as ``batch`` holds and fill it;
    returns ``(N, n_rows)``, the numbers of samples and of distinct rows visited.

    ``state`` is a :class:`RunState`. Advantages are GAE(``lam``) with discount ``gamma``
    and the critic ``state.V`` as it is now (Schulman et al., 2016, eq. 16); an episode
    cut at ``max_steps`` bootstraps from ``V`` at the state where it stopped.
    """
    path, seen, dones, values = batch.path, batch.seen, batch.dones, batch.values
    theta, V, rng = state.theta, state.V, state.rng
    N, n_rows = 0, 0
    for m in range(batch.returns.shape[0]):
        T, batch.returns[m] = sample_episode(model, rollout, theta, rng, path, seen, dones,
                                             batch.dist)
        batch.lengths[m] = T
        for t in range(T + 1):
            values[t] = V[path[0, t]]
        gae(seen[0, :T], values[:T + 1], dones[:T], gamma, lam, batch.advantages[N:N + T])
        for t in range(T):
            k = N + t
            s = path[0, t]
            batch.states[k], batch.actions[k], batch.old_log_pi[k] = s, path[1, t], seen[1, t]
            batch.targets[k] = batch.advantages[k] + values[t]
            row = rollout.row_of_state[s]
            if batch.slot[row] < 0:
                batch.slot[row] = n_rows
                batch.rows[n_rows] = row
                batch.counts[n_rows] = 0.0
                n_rows += 1
            batch.counts[batch.slot[row]] += 1.0
        N += T
    return N, n_rows


@njit(cache=True)
def record_episodes(batch, returns, lengths, iteration):
    """Copy the batch's episode returns and lengths into a run's outputs, as episodes
    ``iteration * M, ..., iteration * M + M - 1``."""
    M = batch.returns.shape[0]
    for m in range(M):
        returns[iteration * M + m], lengths[iteration * M + m] = (batch.returns[m],
                                                                  batch.lengths[m])


@njit(cache=True)
def release_rows(batch, n_rows):
    """Mark the batch's visited rows unvisited again (``slot = -1``), for the next batch."""
    for i in range(n_rows):
        batch.slot[batch.rows[i]] = -1


@njit(cache=True)
def save_rows(theta, batch, n_rows, old):
    """``old[i] = theta[rows[i]]``: the visited rows' logits before the update."""
    for i in range(n_rows):
        for b in range(theta.shape[1]):
            old[i, b] = theta[batch.rows[i], b]


@njit(cache=True)
def restore_rows(theta, batch, n_rows, old):
    """``theta[rows[i]] = old[i]``: undo an update of the visited rows."""
    for i in range(n_rows):
        for b in range(theta.shape[1]):
            theta[batch.rows[i], b] = old[i, b]


@njit(cache=True)
def batch_kl(old, theta, batch, n_rows, episodes, dist):
    """``(1/M) sum_t KL(pi_old(.|s_t) || pi(.|s_t))`` over the batch's samples, row by row:
    ``sum_i counts[i] / M * KL(softmax(old[i]) || softmax(theta[rows[i]]))``; ``dist``
    ``[3, A]`` is scratch. NaN when ``theta`` holds a NaN or ``+inf``."""
    total = 0.0
    for i in range(n_rows):
        softmax(old[i], dist[0])
        log_softmax(old[i], dist[1])
        log_softmax(theta[batch.rows[i]], dist[2])
        total += batch.counts[i] / episodes * softmax_kl(dist[0], dist[1], dist[2])
    return total
