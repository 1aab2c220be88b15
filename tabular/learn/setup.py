"""What the model-free learners share: argument checks, per-run tables, output records.

Every learner (:mod:`tabular.learn.td`, :mod:`tabular.learn.mc`, :mod:`tabular.pg.learners`)
is a thin Python function in front of one Numba kernel. The Python side checks the
arguments (:func:`episode_args` first), builds the kernel's records and turns the
filled outputs into a result (:mod:`tabular.results`). A kernel takes a few named
records rather than loose arrays:

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

Every kernel is a runs driver of :mod:`tabular._numba.runs` over one run function
``_x_run(model, params, rng, out, run)``: the episode loop of run ``run``, composed of
:mod:`tabular.rules`, reading the model only through the sampling kernels and
filling row ``run`` of ``out``. Where a family's methods differ inside the inner
loop (SARSA, expected SARSA and Q-learning; the bandit methods; differential SARSA and
R-learning) each method has a driver of its own, the method a compile-time constant
(:func:`~tabular._numba.runs.runs_driver`'s ``variant``), so the other methods'
branches compile away; elsewhere the method is a field of the parameters, read at run
time, and one kernel serves the family. An optional argument that the inner loop reads
(an action mask) is ``None`` when absent and compiles away
(:mod:`tabular._numba.optional`). Every kernel is a sequential driver that
:func:`~tabular._numba.runs.over_runs` spreads over threads; the short TD loops are
inlined into it, the longer Monte Carlo and n-step loops are compiled on their own.

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

from tabular._numba.rng import categorical
from tabular.checks import (
    check_fits,
    check_flag,
    check_gamma,
    check_positive_int,
    first_bad,
    real_array,
)
from tabular.learn.results import ControlResult, PredictionResult
from tabular.model.mdp import TabularMDP, as_mdp
from tabular.model.sampling import sample_start, sample_step
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
                       default: int = DEFAULT_MAX_STEPS, made_by: str | None = None
                       ) -> tuple[int, int, int]:
    """``(episodes, n, max_steps)``: ``episodes`` is an int >= 1; ``n`` is the number of
    runs the kernel computes (:func:`~tabular.results.check_runs`: 1 for
    ``runs=None``); ``max_steps``, the step limit per episode, is an int in
    ``[1, MAX_STEPS]``, and ``None`` means the model's time limit
    (:attr:`TabularMDP.max_episode_steps <tabular.model.mdp.TabularMDP>`, Gymnasium's
    ``max_episode_steps`` of the env it was read from) or, without one, ``default``.

    Before anything is allocated, the runs' episode records and ``[S, A]`` tables are
    checked to fit (:func:`~tabular.checks.check_fits`); the error names the arguments
    the user passed: ``runs``, and ``episodes`` or, when another count makes the
    episodes, ``made_by`` (e.g. ``"iterations=100 x episodes_per_batch=8"``)."""
    if max_steps is None:
        max_steps = default if mdp.max_episode_steps is None else mdp.max_episode_steps
    if made_by is None:  # else a product of counts checked already, maybe beyond int64
        episodes = check_positive_int("episodes", episodes)
    n = check_runs(runs)
    counts = ([] if runs is None else [f"runs={n:,}"]) + [made_by or f"episodes={episodes:,}"]
    table = mdp.n_states * mdp.n_actions
    check_fits(" x ".join(counts), n * (16 * episodes + 8 * table),
               f"{n:,} run(s) of {episodes:,} episode returns and lengths and an "
               f"[{mdp.n_states:,}, {mdp.n_actions:,}] table")
    return episodes, n, check_positive_int("max_steps", max_steps, high=MAX_STEPS)


class EpisodeArgs(NamedTuple):
    """The arguments every episodic learner checks first (:func:`episode_args`)."""

    mdp: TabularMDP
    gamma: float
    episodes: int
    n_runs: int
    max_steps: int


def episode_args(mdp, *, gamma: float, episodes: int, runs: int | None,
                 max_steps: int | None, default_max_steps: int = DEFAULT_MAX_STEPS
                 ) -> EpisodeArgs:
    """``mdp`` as a :class:`~tabular.TabularMDP` (:func:`~tabular.model.mdp.as_mdp`: a
    Gymnasium env is read through its transition table), ``gamma`` checked
    (:func:`~tabular.checks.check_gamma`) and the episode counts of
    :func:`check_episode_args`, in one record."""
    mdp = as_mdp(mdp)
    gamma = check_gamma(gamma)
    episodes, n_runs, max_steps = check_episode_args(mdp, episodes, runs, max_steps,
                                                     default_max_steps)
    return EpisodeArgs(mdp, gamma, episodes, n_runs, max_steps)


def initial_values(name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """The initial estimate: a finite number or a finite array of ``shape``."""
    arr = real_array(name, value)
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


# --------------------------------------------------------------------- episodes


@njit(cache=True, inline="always")
def record_episode(model, policy, rng, states, actions, rewards):
    """Follow ``policy`` (``[S, A]``) from a start state for at most ``L =
    states.shape[0] - 1`` steps, recording ``S_t`` in ``states[t]`` (``t <= T``), ``A_t``
    in ``actions[t]`` and ``R_{t+1}`` in ``rewards[t]`` (``t < T``). Returns ``(T,
    terminated, the sum of the rewards)``; an episode cut at ``L`` steps has
    ``terminated`` False (the Monte Carlo learners then bootstrap from ``S_T``)."""
    max_steps = states.shape[0] - 1
    s = sample_start(model, rng)
    terminated = False
    T = 0
    total = 0.0
    while not terminated and T < max_steps:
        states[T] = s
        a = categorical(rng, policy[s])
        actions[T] = a
        s, r, terminated = sample_step(model, s, a, rng)
        rewards[T] = r
        total += r
        T += 1
    states[T] = s
    return T, terminated, total


@njit(cache=True, inline="always")
def mark_first_visits(states, T, first_time):
    """``first_time[s]``: the first ``t < T`` with ``states[t] = s``, for the states the
    episode visits (``first_time`` holds -1 for every state on entry)."""
    for t in range(T):
        if first_time[states[t]] < 0:
            first_time[states[t]] = t


@njit(cache=True)
def ring_mask(n):
    """The index mask of the smallest ring buffer whose size, a power of two, exceeds
    ``n``: step ``t`` lives in slot ``t & mask`` (a mask, not a division)."""
    mask = 1
    while mask < n:
        mask = 2 * mask + 1
    return mask


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
    ``history`` of length 0). An element loop, not a slice assignment, which would
    compile an error path of its own."""
    if history.shape[0] > 0:
        for s in range(V.shape[0]):
            history[episode, s] = V[s]


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
    return PredictionOutputs(per_run(initial_V, runs), np.zeros((runs, episodes)),
                             np.zeros((runs, episodes), dtype=np.int64),
                             history_outputs(runs, episodes, initial_V.shape[0], history))


def control_outputs(initial_Q: np.ndarray, runs: int, episodes: int) -> ControlOutputs:
    """Outputs of ``runs`` runs starting from ``initial_Q`` (``[S, A]``)."""
    return ControlOutputs(per_run(initial_Q, runs), np.zeros((runs, episodes)),
                          np.zeros((runs, episodes), dtype=np.int64))


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
