"""What the model-free learners share: argument checks, per-run tables, output records.

Every learner (:mod:`tabular.learn.td`, :mod:`tabular.learn.mc`, :mod:`tabular.pg.learners`)
is a thin
Python function in front of one Numba kernel. The Python side checks the
arguments, builds the kernel's records and turns the filled outputs into a result
(:mod:`tabular.results`). A kernel takes a few named records rather than loose
arrays:

- the model, :attr:`TabularMDP.arrays <tabular.model.mdp.TabularMDP.arrays>` (a
  :class:`~tabular.model.mdp.ModelArrays`), reached only through
  :func:`~tabular.model.sampling.sample_step` and
  :func:`~tabular.model.sampling.sample_start`;
- the learner's hyper-parameters, one ``NamedTuple`` per learner (e.g.
  :class:`tabular.learn.td.TDControlParams`);
- ``rng_states``, one xoshiro stream per run (:func:`tabular._numba.rng.seed_states`);
- the outputs, one ``NamedTuple`` of arrays with a leading run axis
  (:class:`PredictionOutputs`, :class:`ControlOutputs`); a history the caller did
  not ask for has no episodes (:func:`record_history`), so that one compiled kernel
  serves both.

The runs driver (every learner's kernel follows it)::

    @njit(cache=True, inline="always")
    def _x_run(model, params, rng, Q, returns, lengths):
        ...  # the episode loop of one run, composed of tabular.rules

    @runs_kernel
    def _x(model, params, rng_states, out):
        for run in range(rng_states.shape[0]):
            _x_run(model, params, rng_states[run].copy(), out.Q[run], out.returns[run],
                   out.lengths[run])

    over_runs(_x, model, params, rng_states, out)  # the runs, split over threads

Drivers are module-level functions, never closures built by a factory, so that
numba's on-disk cache serves them in a new process. Where a method's branches sit in
the inner loop (SARSA, expected SARSA, Q-learning) each method has one tiny driver
that passes it as a constant, so the other methods' branches compile away: read at
run time they cost 5-12% of the speed. Where they do not (the TD(lambda) and
Sarsa(lambda) methods, whose steps cost ``O(S)``; the three planning methods,
dominated by their planning updates; the five n-step methods, whose SARSA return has
a loop of its own) the method is a field of the parameters and one kernel, compiled
once, serves them all. An optional
argument that the inner loop reads (an action mask) is ``None`` when absent and
compiles away (:mod:`tabular._numba.optional`). The short
TD and policy-gradient loops are inlined into the driver (``inline="always"``). A
driver runs its runs one after another and releases the GIL; :func:`over_runs` gives
each of numba's threads a contiguous chunk of the runs, as numba's ``prange`` would,
without compiling a parallel loop (the larger part of a kernel's compile time).

The longer Monte Carlo, n-step and planning loops are compiled as separate functions,
which keeps their compile time from an empty cache short, and their drivers keep
``prange``: called from numba's parallel loop, whose arguments it knows not to alias,
they run faster than from a sequential driver (:mod:`benchmarks.bench_model_free`
measures both). Such a driver stores a per-run scalar into an array taken out of the
output record before the loop: numba drops writes made through a record's field
inside a parallel loop.

Run ``i`` draws only from its own stream ``rng_states[i]`` and writes only its own
output rows, so the numbers do not depend on the thread count or on ``runs``: run
``i`` of ``runs=n`` equals run ``i`` of ``runs=m``. Each run advances a private copy
of its 32-byte stream state: two rows share a 64-byte cache line, and threads
writing neighbouring rows on every draw would contend for it (false sharing).

``-inf`` rewards (a trap that ends the episode) are handled exactly by the rules of
:mod:`tabular.rules.values`: an estimate becomes ``-inf`` only when a sampled target
is ``-inf``, which happens only when an outcome of positive probability (under the
policy being evaluated) leads to ``-inf``; then the true expectation *is* ``-inf``,
so a ``-inf`` estimate is absorbing and no NaN can appear. Methods that learn the
value of an epsilon-soft policy (SARSA, expected SARSA, on-policy MC) therefore value
every state from which the trap is reachable by exploration at ``-inf`` (which is
exact for that policy, but leaves nothing to choose between); for them use a finite
trap reward, e.g. ``gymnasium.make("tabzoo/TrapTreasure-v0", trap_reward=-10.0)``.
Q-learning, double Q-learning and off-policy MC learn the greedy policy's values,
which stay finite wherever the trap can be avoided.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular.checks import check_positive_int
from tabular.learn.results import ControlResult, PredictionResult
from tabular.results import check_runs, with_run_axis

# --------------------------------------------------------------------- arguments


#: The longest episode a learner accepts: Monte Carlo and the policy-gradient learners
#: keep a whole episode in buffers of ``max_steps`` entries per run (tens of bytes
#: each), so a longer limit would ask for gigabytes before the first step.
MAX_STEPS = 10**8


#: The step limit of a value-based learner's episode when neither the call nor the
#: model (its env's time limit) sets one.
DEFAULT_MAX_STEPS = 10_000


def check_episode_args(mdp, episodes: int, runs: int | None, max_steps: int | None,
                       default: int = DEFAULT_MAX_STEPS) -> tuple[int, int, int]:
    """``(episodes, n, max_steps)``: ``episodes`` is an int >= 1; ``n`` is the number of
    runs the kernel computes (:func:`~tabular.results.check_runs`: 1 for
    ``runs=None``); ``max_steps``, the step limit per episode, is an int in
    ``[1, MAX_STEPS]``, and ``None`` means the model's time limit
    (:attr:`TabularMDP.max_episode_steps <tabular.model.mdp.TabularMDP>`, Gymnasium's
    ``max_episode_steps`` of the env it was read from) or, without one, ``default``."""
    if max_steps is None:
        max_steps = default if mdp.max_episode_steps is None else mdp.max_episode_steps
    return (check_positive_int("episodes", episodes), check_runs(runs),
            check_positive_int("max_steps", max_steps, high=MAX_STEPS))


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


# --------------------------------------------------------------------- output records


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
    ``history`` of length 0). An element loop: numba compiles a slice assignment's
    shape-mismatch message, seconds of the first compile in a process."""
    if history.shape[0] > 0:
        for s in range(V.shape[0]):
            history[episode, s] = V[s]


def history_outputs(runs: int, episodes: int, n_states: int, history: bool) -> np.ndarray:
    """Room for ``V`` after each episode of each run, ``[runs, episodes, S]``, or
    ``[runs, 0, S]`` when ``history`` is not asked for."""
    return np.zeros((runs, episodes if history else 0, n_states))


def history_result(history: np.ndarray, runs: int | None) -> np.ndarray | None:
    """The public ``V_history`` of :func:`history_outputs`: ``None`` when not asked for."""
    return with_run_axis(history, runs) if history.shape[1] > 0 else None


def prediction_outputs(initial_V: np.ndarray, runs: int, episodes: int,
                       history: bool) -> PredictionOutputs:
    """Outputs of ``runs`` runs starting from ``initial_V`` (``[S]``); ``history`` only
    when asked for."""
    return PredictionOutputs(per_run(initial_V, runs), np.zeros((runs, episodes)),
                             np.zeros((runs, episodes), dtype=np.int64),
                             history_outputs(runs, episodes, initial_V.shape[0], history))


def control_outputs(initial_Q: np.ndarray, runs: int, episodes: int) -> ControlOutputs:
    """Outputs of ``runs`` runs starting from ``initial_Q`` (``[S, A]``)."""
    return ControlOutputs(per_run(initial_Q, runs), np.zeros((runs, episodes)),
                          np.zeros((runs, episodes), dtype=np.int64))


def prediction_result(out: PredictionOutputs, runs: int | None) -> PredictionResult:
    """The public result of filled prediction outputs, with the run axis of ``runs``."""
    return PredictionResult(episode_returns=with_run_axis(out.returns, runs),
                            episode_lengths=with_run_axis(out.lengths, runs),
                            V=with_run_axis(out.V, runs),
                            V_history=history_result(out.history, runs))


def control_result(out: ControlOutputs, runs: int | None) -> ControlResult:
    """The public result of filled control outputs, with the run axis of ``runs``."""
    return ControlResult(episode_returns=with_run_axis(out.returns, runs),
                         episode_lengths=with_run_axis(out.lengths, runs),
                         Q=with_run_axis(out.Q, runs))
