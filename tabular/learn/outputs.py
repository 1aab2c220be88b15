"""The output records the model-free kernels fill, and the results made of them.

A kernel takes a few named records rather than loose arrays: the model
(:attr:`TabularMDP.arrays <tabular.model.mdp.TabularMDP.arrays>`), the learner's
hyper-parameters (one ``NamedTuple`` per learner, e.g.
:class:`tabular.learn.td.TDControlParams`), ``rng_states`` (one xoshiro stream per
run, :func:`tabular._numba.rng.seed_states`) and the outputs, one ``NamedTuple`` of
arrays with a leading run axis (:class:`PredictionOutputs`, :class:`ControlOutputs`);
a history the caller did not ask for has no episodes (:func:`record_history`), so
that one compiled kernel serves both. Once the kernel has filled them,
:func:`prediction_result` and :func:`control_result` check them for divergence
(:mod:`tabular.learn.divergence`) and make the public result (:mod:`tabular.learn.results`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular.checks import check_fits, check_flag
from tabular.learn.arguments import per_run
from tabular.learn.divergence import check_estimate
from tabular.learn.results import ControlResult, PredictionResult
from tabular.model.mdp import TabularMDP
from tabular.results import with_run_axis


class PredictionOutputs(NamedTuple):
    """What a prediction kernel fills, each with a leading run axis of length ``n``.

    ``V``: the estimate ``[n, S]`` (holding the initial values on entry);
    ``returns``: each episode's undiscounted return ``[n, episodes]``; ``lengths``: its
    number of steps (int64 ``[n, episodes]``); ``history``: ``V`` after each episode
    ``[n, episodes, S]``, or ``[n, 0, S]`` when not asked for (one compiled kernel
    serves both; see :func:`record_history`).
    """

    V: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray
    history: np.ndarray


class ControlOutputs(NamedTuple):
    """What a control kernel fills, each with a leading run axis of length ``n``.

    ``Q``: the estimate ``[n, S, A]`` (holding the initial values on entry);
    ``returns``: each episode's undiscounted return ``[n, episodes]``; ``lengths``: its
    number of steps (int64 ``[n, episodes]``).
    """

    Q: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray


@njit(cache=True, inline="always")
def record_history(history, episode, V):
    """``history[episode] = V``, for a run that records its history (one without has
    ``history`` of length 0). An element loop, not a slice assignment, which would
    compile an error path of its own."""
    if history.shape[0] > 0:
        for s in range(V.shape[0]):
            history[episode, s] = V[s]


@njit(cache=True, inline="always")
def record_totals(out, run, episode, total, length):
    """Record the return ``total`` and the ``length`` of episode ``episode`` of run
    ``run`` in ``out.returns`` and ``out.lengths``."""
    out.returns[run, episode] = total
    out.lengths[run, episode] = length


@njit(cache=True, inline="always")
def close_episode(out, run, episode, total, length, estimate):
    """:func:`record_totals`, and the estimate after the episode (``V`` or ``w``) in
    ``out.history`` (:func:`record_history`)."""
    record_totals(out, run, episode, total, length)
    record_history(out.history[run], episode, estimate)


def history_outputs(runs: int, episodes: int, n_states: int, history: bool) -> np.ndarray:
    """Room for ``V`` after each episode of each run, ``[runs, episodes, S]``, or
    ``[runs, 0, S]`` when ``history`` is not asked for."""
    kept = episodes if check_flag("history", history) else 0
    check_fits("history", 8 * runs * kept * n_states, f"{runs} x {kept:,} x {n_states:,} values")
    return np.zeros((runs, kept, n_states))


def history_result(history: np.ndarray, runs: int | None) -> np.ndarray | None:
    """The public ``V_history`` of :func:`history_outputs`: ``None`` when not asked for."""
    return with_run_axis(history, runs) if history.shape[1] > 0 else None


def prediction_outputs(initial_V: np.ndarray, runs: int, episodes: int,
                       history: bool) -> PredictionOutputs:
    """Outputs of ``runs`` runs starting from ``initial_V`` (``[S]``); ``history`` only
    when asked for."""
    return PredictionOutputs(V=per_run(initial_V, runs), returns=np.zeros((runs, episodes)),
                             lengths=np.zeros((runs, episodes), dtype=np.int64),
                             history=history_outputs(runs, episodes, initial_V.shape[0], history))


def control_outputs(initial_Q: np.ndarray, runs: int, episodes: int) -> ControlOutputs:
    """Outputs of ``runs`` runs starting from ``initial_Q`` (``[S, A]``)."""
    return ControlOutputs(per_run(initial_Q, runs), np.zeros((runs, episodes)),
                          np.zeros((runs, episodes), dtype=np.int64))


def prediction_result(out: PredictionOutputs, runs: int | None, mdp: TabularMDP,
                      limit: float = np.inf) -> PredictionResult:
    """The public result of filled prediction outputs, with the run axis of ``runs``; a
    diverged ``V`` (:func:`check_estimate` with ``limit``) is an error."""
    check_estimate("V", with_run_axis(out.V, runs), mdp, limit)
    return PredictionResult(episode_returns=with_run_axis(out.returns, runs),
                            episode_lengths=with_run_axis(out.lengths, runs),
                            V=with_run_axis(out.V, runs),
                            V_history=history_result(out.history, runs))


def control_result(out: ControlOutputs, runs: int | None, mdp: TabularMDP,
                   limit: float = np.inf, action_mask: np.ndarray | None = None
                   ) -> ControlResult:
    """The public result of filled control outputs, with the run axis of ``runs``; a
    diverged ``Q`` (:func:`check_estimate` with ``limit``) is an error. The pairs
    ``action_mask`` forbids get ``Q = -inf`` (never taken, their estimates mean nothing;
    ``-inf`` keeps them out of ``max`` and ``argmax``)."""
    check_estimate("Q", with_run_axis(out.Q, runs), mdp, limit)
    if action_mask is not None:
        out.Q[..., ~action_mask] = -np.inf
    return ControlResult(episode_returns=with_run_axis(out.returns, runs),
                         episode_lengths=with_run_axis(out.lengths, runs),
                         Q=with_run_axis(out.Q, runs))
