"""PAC exploration in the discounted setting: MBIE-EB (Strehl & Littman, 2008), R-max
(Brafman & Tennenholtz, 2002) and Delayed Q-learning (Strehl et al., 2006), and their
sample complexity measured exactly.

All three run one continuing trajectory (an outcome that ends the episode restarts it
from the start distribution) and act greedily on optimistic action values: the two
model-based ones keep the counts of what they saw and recompute the values of the
estimated model by value iteration as it changes; Delayed Q-learning lowers its values
from their optimistic start by averages of ``m`` targets. The greedy action table in
force at every step is recorded, so that :func:`sample_complexity` evaluates exactly
the policy followed at each step: the number of steps at which ``V^{pi_t}(s_t) <
V*(s_t) - epsilon`` (Kakade, 2003; the measure of the PAC-MDP analyses).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import (
    check_gamma,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_size,
)
from tabular.explore.setup import MAX_ACTIONS, reward_range
from tabular.model.mdp import as_mdp
from tabular.model.sampling import sample_start, sample_step
from tabular.results import RunsResult, check_runs, with_run_axis
from tabular.rules.exploration import first_argmax
from tabular.solve.dp import policy_evaluation, value_iteration
from tabular.types import MDPLike

MBIE_EB, RMAX, DELAYED = 0, 1, 2
#: The most recorded policy entries ``runs x steps x S`` (int16: 0.2 GB).
MAX_POLICY_ENTRIES = 10**8
#: Value iteration's sweep limit per re-plan (a kernel error past it).
MAX_SWEEPS = 100_000


class DiscountedParams(NamedTuple):
    """``n_states``, ``n_actions``, ``steps``; ``gamma``; ``r_max`` (the largest reward,
    whose value ``r_max / (1 - gamma)`` an unknown pair is given); ``beta`` (MBIE-EB's
    bonus coefficient); ``known`` (R-max's visits to know a pair); ``tol``: value
    iteration's stopping change; ``attempts`` and ``epsilon1``: Delayed Q-learning's
    ``m`` and ``epsilon_1``."""

    n_states: int
    n_actions: int
    steps: int
    gamma: float
    r_max: float
    beta: float
    known: int
    tol: float
    attempts: int
    epsilon1: float


class DiscountedOutputs(NamedTuple):
    """``states`` int32 ``[runs, T]``, ``rewards`` ``[runs, T]`` and ``policy`` int16
    ``[runs, T, S]``, the greedy table in force at each step."""

    states: np.ndarray
    rewards: np.ndarray
    policy: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class DiscountedResult(RunsResult):
    """What :func:`mbie_eb`, :func:`rmax` and :func:`delayed_q_learning` return (a
    leading run axis with ``runs=n``): ``states`` (int32) and ``rewards`` of each step
    ``[T]``; ``policy``: int16 ``[T, S]``, the greedy action table the learner acted on
    at each step (``policy[t, states[t]]`` the action it took)."""

    run_axis_of = ("rewards", 1)

    states: np.ndarray
    rewards: np.ndarray
    policy: np.ndarray


@njit(cache=True, inline="always")
def _optimistic_values(method, params, counts, visits, reward_sum, Q, V):
    """Value iteration on the optimistic model, warm-started from ``Q``: MBIE-EB's
    ``Q(s, a) = r^ + gamma P^ V + beta / sqrt(n)`` (eq. 8 of Strehl & Littman, 2008), or
    R-max's ``Q(s, a) = r^ + gamma P^ V`` for a known pair (``n >= known``); a pair
    never tried (MBIE-EB) or unknown (R-max) is worth ``r_max / (1 - gamma)``."""
    S, A = params.n_states, params.n_actions
    top = params.r_max / (1.0 - params.gamma)
    for _ in range(MAX_SWEEPS):
        change = 0.0
        for s in range(S):
            for a in range(A):
                n = visits[s, a]
                q = top
                if (method == MBIE_EB and n > 0.0) or (method == RMAX and n >= params.known):
                    q = reward_sum[s, a] / n
                    for t in range(S):
                        if counts[s, a, t] > 0.0:
                            q += params.gamma * counts[s, a, t] / n * V[t]
                    if method == MBIE_EB:
                        q += params.beta / np.sqrt(n)
                change = max(change, abs(q - Q[s, a]))
                Q[s, a] = q
            best = Q[s, 0]
            for a in range(1, A):
                best = max(best, Q[s, a])
            V[s] = best
        if change < params.tol:
            return
    raise RuntimeError("value iteration of the optimistic model did not converge")


@njit(cache=True, inline="always")
def _greedy_into(Q, row):
    """``row[s] = argmax_a Q[s, a]``, the lowest maximising action."""
    for s in range(Q.shape[0]):
        best, best_a = Q[s, 0], 0
        for a in range(1, Q.shape[1]):
            if Q[s, a] > best:
                best, best_a = Q[s, a], a
        row[s] = best_a


@njit(cache=True, inline="always")
def _discounted_run(method, model, params, rng, out, run):
    """Run ``run`` of MBIE-EB or R-max (``method``, a constant of each driver)."""
    S, A = params.n_states, params.n_actions
    counts = np.zeros((S, A, S))
    visits = np.zeros((S, A))
    reward_sum = np.zeros((S, A))
    Q = np.full((S, A), params.r_max / (1.0 - params.gamma))
    V = np.full(S, params.r_max / (1.0 - params.gamma))
    greedy = np.zeros(S, dtype=np.int16)
    s = sample_start(model, rng)
    for t in range(params.steps):
        out.policy[run, t] = greedy
        a = greedy[s]
        s_next, r, done = sample_step(model, s, a, rng)
        if done:
            s_next = sample_start(model, rng)
        out.states[run, t], out.rewards[run, t] = s, r
        visits[s, a] += 1.0
        counts[s, a, s_next] += 1.0
        reward_sum[s, a] += r
        # MBIE-EB re-plans after every step; R-max when a pair becomes known
        if method == MBIE_EB or visits[s, a] == params.known:
            _optimistic_values(method, params, counts, visits, reward_sum, Q, V)
            _greedy_into(Q, greedy)
        s = s_next


@njit(cache=True, inline="always")
def _delayed_q_run(model, params, rng, out, run):
    """Run ``run`` of Delayed Q-learning (Strehl et al., 2006, Algorithm 1)."""
    S, A, m, gamma = params.n_states, params.n_actions, params.attempts, params.gamma
    Q = np.full((S, A), params.r_max / (1.0 - gamma))
    total = np.zeros((S, A))  # U(s, a): the sum of the attempt's targets
    taken = np.zeros((S, A), dtype=np.int64)  # l(s, a)
    attempted = np.zeros((S, A), dtype=np.int64)  # t(s, a): when the last attempt began
    learn = np.ones((S, A), dtype=np.bool_)  # LEARN(s, a)
    changed = 0  # t*: the step of the last successful update
    greedy = np.zeros(S, dtype=np.int16)
    s = sample_start(model, rng)
    for t in range(1, params.steps + 1):
        out.policy[run, t - 1] = greedy
        a = greedy[s]
        s_next, r, done = sample_step(model, s, a, rng)
        if done:
            s_next = sample_start(model, rng)
        out.states[run, t - 1], out.rewards[run, t - 1] = s, r
        if learn[s, a]:
            best = Q[s_next, 0]
            for b in range(1, A):
                best = max(best, Q[s_next, b])
            total[s, a] += r + gamma * best
            taken[s, a] += 1
            if taken[s, a] == m:
                if Q[s, a] - total[s, a] / m >= 2.0 * params.epsilon1:
                    Q[s, a] = total[s, a] / m + params.epsilon1
                    changed = t
                    greedy[s] = first_argmax(Q[s])
                elif attempted[s, a] >= changed:
                    learn[s, a] = False
                attempted[s, a] = t
                total[s, a] = 0.0
                taken[s, a] = 0
        elif attempted[s, a] < changed:
            learn[s, a] = True
        s = s_next


@runs_kernel(simplifying=False)
def _mbie_eb(model, params, rng_states, out):
    """Every run of :func:`_discounted_run`, the method ``MBIE_EB``."""
    for run in range(rng_states.shape[0]):
        _discounted_run(MBIE_EB, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel(simplifying=False)
def _delayed_q(model, params, rng_states, out):
    """Every run of :func:`_delayed_q_run`."""
    for run in range(rng_states.shape[0]):
        _delayed_q_run(model, params, local_stream(rng_states[run]), out, run)


@runs_kernel(simplifying=False)
def _rmax(model, params, rng_states, out):
    """Every run of :func:`_discounted_run`, the method ``RMAX``."""
    for run in range(rng_states.shape[0]):
        _discounted_run(RMAX, model, params, local_stream(rng_states[run]), out, run)


def mbie_eb(mdp: MDPLike, *, gamma: float = 0.95, steps: int = 10_000,
            beta: float | None = None, seed: int | None = 0,
            runs: int | None = None) -> DiscountedResult:
    """MBIE-EB, model-based interval estimation with exploration bonus (Strehl & Littman,
    2008, section 3.2), discounted, one continuing trajectory.

    The algorithm box: after every step, solve ``Q(s, a) = r^(s, a) + gamma sum_s'
    P^(s'|s, a) max_a' Q(s', a') + beta / sqrt(n(s, a))`` (their eq. 8) by value
    iteration on the empirical model and act greedily; a pair never tried is worth
    ``r_max / (1 - gamma)``.

    Constants: the paper's ``beta = r_max / (1 - gamma) sqrt(ln(2 S A m / delta) / 2)``
    is set for its PAC proof; the default here is ``beta = r_max / (1 - gamma) / 10``
    (``None``), a choice of this library (Strehl & Littman tuned ``beta`` per task in
    their experiments); value iteration stops when no action value moves by more than
    ``1e-8 r_max / (1 - gamma)``, warm-started from the previous values.

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
    gamma : in [0, 1), default 0.95. steps : ``T``, default 10000.
    beta : the bonus coefficient >= 0, default ``None`` (see above).
    seed, runs : as for every learner.

    Returns a :class:`DiscountedResult`; :func:`sample_complexity` measures it.
    """
    return _discounted(_mbie_eb, "mbie_eb", mdp, gamma, steps, seed, runs, beta=beta)


def rmax(mdp: MDPLike, *, gamma: float = 0.95, steps: int = 10_000, known: int = 10,
          seed: int | None = 0, runs: int | None = None) -> DiscountedResult:
    """R-max (Brafman & Tennenholtz, 2002), discounted, one continuing trajectory.

    The algorithm box: a pair ``(s, a)`` is *known* once visited ``m = known`` times;
    the learner's model sends every unknown pair to a fictitious state paying the
    largest reward ``r_max`` forever (value ``r_max / (1 - gamma)``), and uses the
    empirical model for the known ones; it plans (value iteration) each time a pair
    becomes known and acts greedily on the plan in between.

    Constants: ``known`` (the paper's ``m``, set there for the PAC proof; default 10
    here); value iteration as in :func:`mbie_eb`.

    Parameters: ``mdp``, ``gamma``, ``steps``, ``seed``, ``runs`` as in :func:`mbie_eb`;
    ``known``: an integer >= 1.

    Returns a :class:`DiscountedResult`.
    """
    return _discounted(_rmax, "rmax", mdp, gamma, steps, seed, runs,
                       known=check_positive_int("known", known, high=10**8))


def delayed_q_learning(mdp: MDPLike, *, gamma: float = 0.95, steps: int = 10_000,
                       attempts: int = 5, epsilon1: float | None = None, seed: int | None = 0,
                       runs: int | None = None) -> DiscountedResult:
    """Delayed Q-learning (Strehl, Li, Wiewiora, Langford & Littman, 2006, Algorithm 1),
    discounted, one continuing trajectory.

    The algorithm box: ``Q(s, a)`` starts at ``r_max / (1 - gamma)``; act greedily; while
    ``LEARN(s, a)``, add the target ``r + gamma max_a' Q(s', a')`` to ``U(s, a)``; after
    ``m = attempts`` of them, if ``Q(s, a) - U(s, a) / m >= 2 epsilon_1`` set ``Q(s, a) =
    U(s, a) / m + epsilon_1`` (a successful update, at step ``t*``), otherwise, if no
    ``Q`` changed since this attempt began, stop learning ``(s, a)``; either way start a
    new attempt. A pair that stopped learning learns again once some ``Q`` changes
    after its last attempt.

    Constants (the paper sets ``m`` and ``epsilon_1`` for its PAC proof): ``attempts``
    default 5, ``epsilon1`` default ``None``: ``0.01 r_max / (1 - gamma)``; ties go to
    the lowest action.

    Parameters: ``mdp``, ``gamma``, ``steps``, ``seed``, ``runs`` as in :func:`mbie_eb`;
    ``attempts``: an integer >= 1; ``epsilon1``: a finite number > 0.

    Returns a :class:`DiscountedResult`.
    """
    attempts = check_positive_int("attempts", attempts, high=10**8)
    return _discounted(_delayed_q, "delayed_q_learning", mdp, gamma, steps, seed, runs,
                       attempts=attempts, epsilon1=epsilon1)


def _discounted(driver, name, mdp, gamma, steps, seed, runs, *, beta=None, known=1,
                attempts=1, epsilon1=None):
    """Check the arguments, run ``driver`` and shape its outputs."""
    mdp = as_mdp(mdp)
    gamma = check_gamma(gamma)
    if gamma >= 1.0:
        raise ValueError(f"gamma must be < 1 (the discounted setting), got {gamma}")
    steps = check_positive_int("steps", steps)
    n = check_runs(runs)
    if mdp.n_actions > MAX_ACTIONS:
        raise ValueError(f"{name} records int16 policies: at most {MAX_ACTIONS} actions")
    check_size(f"runs={n} x steps={steps} x S={mdp.n_states}", n * steps * mdp.n_states,
               MAX_POLICY_ENTRIES, 2, "recorded policy entries")
    _, top = reward_range(mdp, name)
    scale = abs(top) / (1.0 - gamma)
    beta = 0.1 * scale if beta is None else check_nonnegative("beta", beta)
    epsilon1 = (0.01 * max(scale, 1e-300) if epsilon1 is None
                else check_positive("epsilon1", epsilon1))
    params = DiscountedParams(mdp.n_states, mdp.n_actions, steps, gamma, top, beta, known,
                              1e-8 * max(scale, 1.0), attempts, epsilon1)
    out = DiscountedOutputs(np.zeros((n, steps), dtype=np.int32), np.zeros((n, steps)),
                            np.zeros((n, steps, mdp.n_states), dtype=np.int16))
    over_runs(driver, mdp.arrays, params, seed_states(seed, n), out)
    return DiscountedResult(*(with_run_axis(x, runs) for x in out))


@dataclass(frozen=True, eq=False, repr=False)
class SampleComplexityResult(RunsResult):
    """What :func:`sample_complexity` returns (a leading run axis when the trajectory
    had one): ``gaps``: ``V*(s_t) - V^{pi_t}(s_t)`` of each step ``[T]``; ``mistakes``:
    the number of steps whose gap exceeds ``epsilon``."""

    run_axis_of = ("gaps", 1)

    gaps: np.ndarray
    mistakes: np.ndarray | int


def sample_complexity(mdp: MDPLike, trajectory: DiscountedResult, *, gamma: float,
                      epsilon: float = 0.1) -> SampleComplexityResult:
    """The sample complexity of exploration (Kakade, 2003) of a discounted learner,
    exactly: the steps ``t`` at which the policy it followed, ``pi_t``, is worth less
    than ``V*(s_t) - epsilon`` from the state it was in, each ``V^{pi_t}`` by an exact
    policy evaluation (:func:`~tabular.policy_evaluation`, ``method="exact"``) of each
    distinct table, ``V*`` by :func:`~tabular.value_iteration`.

    ``mdp``: the model the learner ran on; ``trajectory``: a :class:`DiscountedResult`;
    ``gamma``: the learner's discount in [0, 1); ``epsilon``: the value gap that counts
    as a mistake, >= 0 (default 0.1).
    """
    mdp = as_mdp(mdp)
    if not isinstance(trajectory, DiscountedResult):
        raise TypeError(f"trajectory must be a DiscountedResult (what mbie_eb, rmax and "
                        f"delayed_q_learning return), got {type(trajectory).__name__}")
    gamma = check_gamma(gamma)
    if gamma >= 1.0:
        raise ValueError(f"gamma must be < 1 (the discounted setting), got {gamma}")
    epsilon = check_nonnegative("epsilon", epsilon)
    if trajectory.policy.shape[-1] != mdp.n_states:
        raise ValueError("trajectory's policies do not have one action per state of the mdp: "
                         "pass the model the learner ran on")
    best = value_iteration(mdp, gamma=gamma, tol=1e-12).V
    tables = trajectory.policy.reshape(-1, mdp.n_states)
    unique, which = np.unique(tables, axis=0, return_inverse=True)
    values = np.stack([policy_evaluation(mdp, row.astype(np.int64), gamma=gamma,
                                         method="exact").V for row in unique])
    states = trajectory.states.reshape(-1)
    gaps = (best[states] - values[which.reshape(-1), states]).reshape(trajectory.states.shape)
    mistakes = (gaps > epsilon).sum(axis=-1)
    return SampleComplexityResult(gaps, mistakes if gaps.ndim > 1 else int(mistakes))

