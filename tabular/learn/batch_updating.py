"""Batch updating (Sutton & Barto, section 6.3): TD(0) and constant-alpha MC on all the
episodes seen so far, presented again and again until the estimate stops moving.

After each new episode every stored episode is swept; the increments of a sweep
(eq. 6.2 for TD(0), eq. 6.1 for MC) are summed and applied together, and sweeps repeat
until their total change ``sum |increments|`` falls below ``tol``. Batch MC then
converges to the sample averages of the returns, batch TD(0) to the certainty-equivalence
estimate: the values of the maximum-likelihood model of the episodes (Example 6.4).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import check_flag, check_positive, check_positive_int, policy_matrix
from tabular.learn.arguments import episode_args, initial_values, per_run
from tabular.learn.episodes import record_episode
from tabular.learn.outputs import (
    PredictionOutputs,
    history_outputs,
    prediction_result,
    record_history,
)
from tabular.learn.results import PredictionResult
from tabular.rules.returns import discounted_return
from tabular.rules.values import td_error, td_target
from tabular.solve.bellman import ConvergenceError
from tabular.types import MDPLike, PolicyLike

TD0, MC = 0, 1
METHODS = {"td0": TD0, "mc": MC}


class BatchParams(NamedTuple):
    """Hyper-parameters of batch updating (a kernel argument): ``policy``, the policy
    evaluated ``[S, A]``; ``method`` (``TD0`` or ``MC``), ``gamma``, the constant step
    ``alpha``, the convergence threshold ``tol`` on a sweep's total change,
    ``max_sweeps`` after each episode, ``episodes``, ``max_steps``."""

    policy: np.ndarray
    method: int
    gamma: float
    alpha: float
    tol: float
    max_sweeps: int
    episodes: int
    max_steps: int


class BatchOutputs(NamedTuple):
    """What the kernel fills, each with a leading run axis: ``V``, ``returns``, ``lengths``,
    ``history`` (``V`` after each episode; no episodes when not asked for) and ``sweeps`` (int64
    ``[runs, episodes]``: the sweeps each batch took; ``max_sweeps`` means it did not
    converge)."""

    V: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray
    history: np.ndarray
    sweeps: np.ndarray


class _Batch(NamedTuple):
    """The episodes stored so far: episode ``e`` visits ``states[starts[e] + t]`` and
    receives ``rewards[starts[e] + t]`` for ``t < lengths[e]``, then stands in
    ``states[starts[e] + lengths[e]]``; ``ended[e]``: it terminated there (else it was
    cut)."""

    states: np.ndarray
    rewards: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    ended: np.ndarray


@njit(cache=True, inline="always")
def _sweep(params, batch, n_episodes, V, increments):
    """One presentation of the first ``n_episodes`` of the ``batch``: ``increments``
    receives the summed updates (eq. 6.2 increments for TD(0), eq. 6.1 for MC)."""
    states, rewards, gamma, alpha = batch.states, batch.rewards, params.gamma, params.alpha
    increments[:] = 0.0
    for e in range(n_episodes):
        lo, T, ended = batch.starts[e], batch.lengths[e], batch.ended[e]
        if params.method == TD0:
            for t in range(T):
                s = states[lo + t]
                target = td_target(rewards[lo + t], gamma, V[states[lo + t + 1]],
                                   ended and t == T - 1)
                increments[s] += alpha * td_error(target, V[s])
        else:
            G = 0.0 if ended else V[states[lo + T]]
            for t in range(T - 1, -1, -1):
                G = discounted_return(rewards[lo + t], gamma, G)
                s = states[lo + t]
                increments[s] += alpha * td_error(G, V[s])


@njit(cache=True)
def _batch_run(model, params, rng, out, run):
    """Run ``run``: sample an episode, store it, sweep the batch to convergence, repeat."""
    V, policy, max_steps = out.V[run], params.policy, params.max_steps
    capacity = 256
    states = np.empty(capacity, dtype=np.int64)
    rewards = np.empty(capacity)
    starts = np.empty(params.episodes, dtype=np.int64)
    lengths = np.empty(params.episodes, dtype=np.int64)
    ended = np.empty(params.episodes, dtype=np.bool_)
    actions = np.empty(max_steps, dtype=np.int64)
    increments = np.zeros(V.shape[0])
    used = 0
    for episode in range(params.episodes):
        if used + max_steps + 1 > capacity:  # room for the longest episode
            capacity = 2 * (used + max_steps + 1)
            states = np.concatenate((states[:used], np.empty(capacity - used, np.int64)))
            rewards = np.concatenate((rewards[:used], np.empty(capacity - used)))
        T, done, total = record_episode(model, policy, rng, states[used:used + max_steps + 1],
                                        actions, rewards[used:used + max_steps])
        starts[episode], lengths[episode], ended[episode] = used, T, done
        used += T + 1
        out.returns[run, episode], out.lengths[run, episode] = total, T
        batch = _Batch(states, rewards, starts, lengths, ended)
        sweeps = 0
        while sweeps < params.max_sweeps:
            _sweep(params, batch, episode + 1, V, increments)
            sweeps += 1
            change = 0.0
            for i in range(V.shape[0]):
                V[i] += increments[i]
                change += abs(increments[i])
            if not change < np.inf:  # inf or NaN: the summed increments overshoot
                out.sweeps[run, episode] = -1
                return
            if change < params.tol:
                break
        out.sweeps[run, episode] = sweeps
        record_history(out.history[run], episode, V)


@runs_kernel
def _batch(model, params, rng_states, out):
    """Every run of :func:`_batch_run`."""
    for run in range(rng_states.shape[0]):
        _batch_run(model, params, local_stream(rng_states[run]), out, run)


def batch_prediction(mdp: MDPLike, policy: PolicyLike, *, method: str = "td0", gamma: float = 1.0,
                     episodes: int = 100, alpha: float = 0.001, tol: float = 1e-3,
                     max_sweeps: int = 100_000, initial_V: npt.ArrayLike = 0.0,
                     seed: int | None = 0, runs: int | None = None, max_steps: int | None = None,
                     history: bool = False, strict: bool = True) -> PredictionResult:
    """Estimate ``V^pi`` by batch TD(0) or batch constant-alpha MC (section 6.3).

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table
        (finite rewards: a sweep sums ``-inf`` increments, which never settle).
    policy : the policy evaluated, any form (greedy ``int [S]``, ``[S, A]``, softmax).
    method : ``"td0"`` (eq. 6.2 increments) or ``"mc"`` (eq. 6.1, every visit).
    gamma : discount in [0, 1], default 1.0.
    episodes : episodes per run, default 100 (the batch grows by one each time).
    alpha : the constant step size in (0, 1], default 0.001 (small enough for the
        summed increments of a batch to converge).
    tol : a batch has converged when a sweep's total change ``sum |increments|`` is
        below this, default 1e-3.
    max_sweeps : sweeps allowed per batch, default 100,000.
    initial_V : the initial estimate, a finite number or ``[S]`` array, default 0.0.
    seed, runs, max_steps, history : as in :func:`tabular.td0`.
    strict : raise :class:`~tabular.ConvergenceError` when a batch needs more than
        ``max_sweeps`` sweeps (default True), else return the estimate as it is.

    Returns a :class:`~tabular.learn.results.PredictionResult` (``V``, ``V_history`` with
    ``history=True``, ``episode_returns``, ``episode_lengths``).
    """
    ep = episode_args(mdp, gamma=gamma, episodes=episodes, runs=runs, max_steps=max_steps)
    mdp, n, episodes = ep.mdp, ep.n_runs, ep.episodes
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    if ((mdp.prob > 0.0) & (mdp.reward == -np.inf)).any():
        raise ValueError("batch updating needs finite rewards: the MDP pays -inf")
    alpha = check_positive("alpha", alpha)
    if alpha > 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    params = BatchParams(policy=policy_matrix(mdp, policy), method=METHODS[method],
                         gamma=ep.gamma, alpha=alpha, tol=check_positive("tol", tol),
                         max_sweeps=check_positive_int("max_sweeps", max_sweeps),
                         episodes=episodes, max_steps=ep.max_steps)
    V0 = initial_values("initial_V", initial_V, (mdp.n_states,))
    out = BatchOutputs(per_run(V0, n), np.zeros((n, episodes)),
                       np.zeros((n, episodes), dtype=np.int64),
                       history_outputs(n, episodes, mdp.n_states, history),
                       np.zeros((n, episodes), dtype=np.int64))
    over_runs(_batch, mdp.arrays, params, seed_states(seed, n), out)
    diverged = out.sweeps < 0
    if diverged.any():
        run, episode = np.argwhere(diverged)[0]
        raise FloatingPointError(
            f"batch {method} diverged in episode {episode + 1} of run {run}: the increments "
            f"of a sweep sum over every visit in the batch, and alpha={alpha} times the "
            "visits of a state overshoots; lower alpha (it must shrink as the batch grows)")
    stuck = out.sweeps >= params.max_sweeps
    if check_flag("strict", strict) and stuck.any():
        run, episode = np.argwhere(stuck)[0]
        raise ConvergenceError(f"batch {method} did not settle within max_sweeps="
                               f"{params.max_sweeps} after episode {episode + 1} of run "
                               f"{run}: lower alpha (the summed increments of a batch "
                               "overshoot) or raise max_sweeps")
    return prediction_result(PredictionOutputs(V=out.V, returns=out.returns, lengths=out.lengths,
                                               history=out.history),
                             runs, mdp)
