"""Distributing expected updates: uniformly or along trajectories (Sutton & Barto, 8.5-8.6).

Both planners make one-step *expected* updates of the optimal action values with a
known model (section 8.5),
``Q(s, a) <- sum_{s', r} p(s', r | s, a) [r + gamma max_a' Q(s', a')]``, and differ
only in which pair they update next (section 8.6):

- :func:`uniform_expected_updates` -- every state-action pair in turn, in a fixed
  cyclic order (state by state, action by action), each updated in place: ``k``
  full cycles are ``k`` in-place (Gauss-Seidel) sweeps of value iteration in its
  ``Q`` form;
- :func:`trajectory_sampling` -- the pairs met along simulated episodes of the
  epsilon-greedy policy of the current ``Q`` (on-policy distribution), every
  episode from the model's start distribution; each step updates the pair taken,
  then samples its transition; an ending transition starts a new episode.

Every ``evaluate_every`` updates, both record how good the greedy policy of ``Q``
(argmax, lowest action on ties) is: ``v_pi(start) = sum_s start(s) v_pi(s)``, the
value of the start distribution, computed from the model (the y-axis of Figure
8.8). :func:`branching_task` builds the random tasks of that figure.

The expected update reads the model as the DP sweeps do, and is the sweeps' own
:func:`~tabular.solve.sweeps.q_value` on ``V(s) = max_a Q(s, a)``,
which each update keeps current; trajectories are simulated through
:func:`~tabular.model.sampling.sample_step` and
:func:`~tabular.model.sampling.sample_start`. The trajectory kernel follows the
runs driver of :mod:`tabular.learn`; uniform updates are deterministic (one run).
``-inf`` rewards are exact, as everywhere.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import check_gamma, check_positive_int, check_unit_interval
from tabular.learn.arguments import initial_values, per_run
from tabular.learn.paragraphs import shares_paragraphs
from tabular.model.mdp import TabularMDP, as_mdp
from tabular.model.sampling import sample_start, sample_step
from tabular.plan.results import ExpectedUpdatesResult
from tabular.results import check_runs, with_run_axis
from tabular.rules.values import epsilon_greedy_action, max_value
from tabular.schedules import as_schedule, read_schedule, schedule_value
from tabular.solve.bellman import ConvergenceError
from tabular.solve.evaluation import EVALUATION_TOL, MAX_EVALUATION_STEPS, start_value
from tabular.solve.sweeps import q_value
from tabular.types import MDPLike, StepSize

__all__ = ["branching_task", "trajectory_sampling",
           "uniform_expected_updates"]

#: The most updates a planner makes, and the most evaluations it records.
MAX_UPDATES = 10**12
MAX_EVALUATIONS = 10**6
#: The largest branching task (``S * A * (b + 1)`` outcome slots, 25 bytes each).
MAX_OUTCOME_SLOTS = 10**8


class UniformParams(NamedTuple):
    """Hyper-parameters of uniform expected updates (a kernel argument).

    ``gamma``: discount; ``evaluate_at``: int64 ``[E]``, the update counts at which the
    greedy policy is evaluated (increasing, from 0); ``start``: the start distribution
    ``[S]`` whose value is evaluated.
    """

    gamma: float
    evaluate_at: np.ndarray
    start: np.ndarray


class TrajectoryParams(NamedTuple):
    """Hyper-parameters of trajectory sampling: those of :class:`UniformParams` and
    ``epsilon``, the exploration schedule ``float64[4]`` over the simulated episodes."""

    gamma: float
    epsilon: np.ndarray
    evaluate_at: np.ndarray
    start: np.ndarray


class CurveOutputs(NamedTuple):
    """What a planning kernel fills, each with a leading run axis of length ``n``.

    ``Q``: ``[n, S, A]`` (holding the initial values on entry); ``values``: ``[n, E]``,
    the greedy policy's value of the start distribution at each evaluation; ``left``:
    ``[n, E]``, the discounted probability of its episode still running where the
    evaluation's sum stopped (at most :data:`EVALUATION_TOL` unless it gave up).
    """

    Q: np.ndarray
    values: np.ndarray
    left: np.ndarray


# --------------------------------------------------------------------- kernels


@njit(cache=True, inline="always")
def _expected_update(model, Q, V, gamma, s, a):
    """``Q(s, a) <- sum_k p_k [r_k + gamma max_a' Q(s'_k, a')]``, the expected update of
    section 8.5 (value iteration's, eq. 4.10, for one pair), then ``V(s) = max_a Q(s, a)``
    (``V`` ``[S + 1]`` ends with the sentinel 0 of :mod:`tabular.solve.sweeps`)."""
    Q[s, a] = q_value(model, V, gamma, s, a)
    V[s] = max_value(Q[s])


@njit(cache=True, inline="always")
def _state_values(Q):
    """``V(s) = max_a Q(s, a)`` ``[S + 1]``, with the sentinel 0 last."""
    V = np.zeros(Q.shape[0] + 1)
    for s in range(Q.shape[0]):
        V[s] = max_value(Q[s])
    return V


@njit(cache=True, inline="always")
def _evaluate(model, params, policy, out, run, e):
    """Evaluation ``e`` of run ``run``: the value of the start distribution under the greedy
    policy of ``out.Q[run]`` (argmax, lowest action on ties), into ``out.values[run, e]``
    and ``out.left[run, e]`` (``out``: the :class:`CurveOutputs`). ``policy`` holds the
    greedy policy of evaluation ``e - 1`` and receives this one; an unchanged policy keeps
    its value."""
    Q, values, left = out.Q[run], out.values[run], out.left[run]
    changed = e == 0
    for s in range(Q.shape[0]):
        a = np.argmax(Q[s])
        if a != policy[s]:
            changed = True
            policy[s] = a
    if changed:
        values[e], left[e] = start_value(model, policy, params.gamma, params.start)
    else:
        values[e], left[e] = values[e - 1], left[e - 1]


@njit(cache=True)
def _uniform_expected_updates(model, params, out):
    """Expected updates of every pair in turn, ``(0, 0), (0, 1), ..., (S-1, A-1), (0, 0),
    ...``, in place; the greedy policy evaluated at each count of ``evaluate_at``."""
    Q = out.Q[0]
    n_actions = Q.shape[1]
    n_pairs = Q.shape[0] * n_actions
    V = _state_values(Q)
    policy = np.zeros(Q.shape[0], dtype=np.int64)
    x = 0  # the next pair in the cyclic order
    made = 0
    for e in range(params.evaluate_at.shape[0]):
        while made < params.evaluate_at[e]:
            _expected_update(model, Q, V, params.gamma, x // n_actions, x % n_actions)
            x = x + 1 if x + 1 < n_pairs else 0
            made += 1
        _evaluate(model, params, policy, out, 0, e)


@njit(cache=True, inline="always")
def _trajectory_run(model, params, rng, out, run):
    """Run ``run`` of trajectory sampling, drawing from ``rng`` and filling row ``run`` of
    ``out`` (a :class:`CurveOutputs`): on-policy episodes of epsilon-greedy in ``Q``, each
    step an expected update of the pair taken (section 8.6)."""
    Q = out.Q[run]
    epsilon = read_schedule(params.epsilon)
    V = _state_values(Q)
    policy = np.zeros(Q.shape[0], dtype=np.int64)
    episode = 1
    eps = schedule_value(epsilon, episode)
    s = sample_start(model, rng)
    made = 0
    for e in range(params.evaluate_at.shape[0]):
        while made < params.evaluate_at[e]:
            a = epsilon_greedy_action(Q[s], eps, rng)
            _expected_update(model, Q, V, params.gamma, s, a)
            s_next, _, is_done = sample_step(model, s, a, rng)
            made += 1
            if is_done:  # the next update starts a new episode
                episode += 1
                eps = schedule_value(epsilon, episode)
                s = sample_start(model, rng)
            else:
                s = s_next
        _evaluate(model, params, policy, out, run, e)


@runs_kernel
def _trajectory_sampling(model, params, rng_states, out):
    """Every run of :func:`_trajectory_run`."""
    for run in range(rng_states.shape[0]):
        _trajectory_run(model, params, local_stream(rng_states[run]), out, run)


# --------------------------------------------------------------------- public functions


def uniform_expected_updates(mdp: MDPLike, *, updates: int, gamma: float = 1.0, evaluate_every: int,
                             initial_Q: npt.ArrayLike = 0.0) -> ExpectedUpdatesResult:
    """Expected updates of every state-action pair in a fixed cyclic order (the uniform
    distribution of section 8.6): ``Q(s, a) <- sum_{s', r} p(s', r | s, a) [r + gamma
    max_a' Q(s', a')]`` for ``(0, 0), (0, 1), ..., (S-1, A-1)``, then again, each in
    place. After ``k`` full cycles ``Q`` is that of ``k`` in-place (Gauss-Seidel) sweeps
    of value iteration in ``Q`` form. Deterministic: no seed, one run.

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
    updates : the number of expected updates, an integer >= 1.
    gamma : discount in [0, 1], default 1.0 (then the greedy policies met must end
        their episodes, as in the tasks of :func:`branching_task`).
    evaluate_every : evaluate the greedy policy after every this many updates (and
        before the first and after the last), an integer >= 1.
    initial_Q : the initial estimate, a finite number or ``[S, A]`` array, default 0.0.

    Returns an :class:`ExpectedUpdatesResult`: ``updates`` ``[E]``, ``start_values``
    ``[E]`` (the greedy policy's value of the start distribution at each), ``Q``
    ``[S, A]``. Raises :class:`~tabular.ConvergenceError` if a greedy policy's value
    cannot be summed (an episode that does not end with ``gamma`` at or near 1).
    """
    mdp, gamma, evaluate_at, out = _setup(mdp, updates, gamma, evaluate_every, initial_Q, 1)
    _uniform_expected_updates(mdp.arrays, UniformParams(gamma, evaluate_at, mdp.start), out)
    return _result(out, evaluate_at, gamma, None)


@shares_paragraphs
def trajectory_sampling(mdp: MDPLike, *, updates: int, gamma: float = 1.0, epsilon: StepSize = 0.1,
                        evaluate_every: int, seed: int | None = 0, runs: int | None = None,
                        initial_Q: npt.ArrayLike = 0.0) -> ExpectedUpdatesResult:
    """Expected updates along simulated on-policy trajectories (section 8.6): from a start
    state, act epsilon-greedily on ``Q``, update the pair taken, ``Q(s, a) <- sum_{s', r}
    p(s', r | s, a) [r + gamma max_a' Q(s', a')]``, then sample its transition from the
    model; a transition that ends the episode starts the next one. Only pairs on the
    simulated trajectories are ever updated.

    Parameters
    ----------
    {mdp}
    updates : the number of expected updates per run, an integer >= 1.
    gamma : discount in [0, 1], default 1.0 (then the greedy policies met must end
        their episodes, as in the tasks of :func:`branching_task`).
    epsilon : exploration in [0, 1], or a schedule over the simulated episodes,
        default 0.1 (the book's).
    evaluate_every : evaluate the greedy policy after every this many updates (and
        before the first and after the last), an integer >= 1.
    {seed runs initial_Q}

    Returns an :class:`ExpectedUpdatesResult`: ``updates`` ``[E]``, ``start_values``
    ``[E]`` (the greedy policy's value of the start distribution at each), ``Q``
    ``[S, A]``, the last two with a leading run axis when ``runs=n``. Raises
    :class:`~tabular.ConvergenceError` if a greedy policy's value cannot be summed.
    """
    n_runs = check_runs(runs)
    epsilon = as_schedule("epsilon", epsilon, low_inclusive=True)
    mdp, gamma, evaluate_at, out = _setup(mdp, updates, gamma, evaluate_every, initial_Q,
                                          n_runs)
    params = TrajectoryParams(gamma=gamma, epsilon=epsilon.params, evaluate_at=evaluate_at,
                              start=mdp.start)
    over_runs(_trajectory_sampling, mdp.arrays, params, seed_states(seed, n_runs), out)
    return _result(out, evaluate_at, gamma, runs)


def branching_task(n_states: int, branching: int, *, n_actions: int = 2,
                   termination: float = 0.1, seed: int | None = 0) -> TabularMDP:
    """A random branching task of section 8.6 (Figure 8.8), episodic and undiscounted.

    From each of ``n_states`` states, each of ``n_actions`` actions leads to one of
    ``branching`` distinct next states drawn at random for that pair (the ``b`` of the
    book), all equally likely, except that with probability ``termination`` (the book's
    0.1) the transition ends the episode. The expected reward of each transition to a
    next state is drawn from a standard normal; ending pays 0. Episodes start in state 0.

    Outcome layout (``K = branching + 1``): slots ``0 .. b-1`` are the next states, each
    of probability ``(1 - termination) / b``, with their rewards; slot ``b`` ends the
    episode (``done``, probability ``termination``, reward 0, ``next_state`` the state
    itself). The rewards are the expected rewards of the book's transitions: as planning
    only ever uses expectations, each transition pays its mean.

    ``n_states``: an integer >= 1; ``branching``: an integer in ``[1, n_states]``;
    ``n_actions``: an integer >= 1, default 2; ``termination``: in ``[0, 1]``, default
    0.1; ``seed``: the seed of the task's draws, default 0 (``None``: fresh entropy).
    """
    n_states = check_positive_int("n_states", n_states)
    branching = check_positive_int("branching", branching, high=n_states)
    n_actions = check_positive_int("n_actions", n_actions)
    termination = check_unit_interval("termination", termination)
    if n_states * n_actions * (branching + 1) > MAX_OUTCOME_SLOTS:
        raise ValueError(f"n_states * n_actions * (branching + 1) = "
                         f"{n_states * n_actions * (branching + 1):,} outcome slots are too "
                         f"many (at most {MAX_OUTCOME_SLOTS:,})")
    rng = np.random.default_rng(seed_states(seed)[0])  # the seed checked as every learner's
    shape = (n_states, n_actions, branching)
    successors = _distinct_states(rng, n_states, shape)
    here = np.broadcast_to(np.arange(n_states)[:, None, None], (n_states, n_actions, 1))
    next_state = np.concatenate([successors, here], axis=2)
    prob = np.concatenate([np.full(shape, (1.0 - termination) / branching),
                           np.full((n_states, n_actions, 1), termination)], axis=2)
    reward = np.concatenate([rng.standard_normal(shape), np.zeros((n_states, n_actions, 1))],
                            axis=2)
    done = np.zeros(next_state.shape, dtype=bool)
    done[:, :, branching] = True
    start = np.zeros(n_states)
    start[0] = 1.0
    return TabularMDP(next_state, prob, reward, done, start)


# --------------------------------------------------------------------- helpers


def _distinct_states(rng, n_states, shape):
    """``shape = (S, A, b)`` states: in each ``[s, a]`` row ``b`` distinct states drawn
    uniformly at random."""
    rows, b = shape[0] * shape[1], shape[2]
    if b * b > n_states:  # repeats would be common: draw each row without replacement
        return np.array([rng.choice(n_states, b, replace=False) for _ in range(rows)],
                        dtype=np.int64).reshape(shape)
    states = rng.integers(0, n_states, (rows, b))
    while True:  # repeats are rare (about b^2 / 2S per row): draw those rows again
        ordered = np.sort(states, axis=1)
        repeats = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
        if not repeats.any():
            return states.reshape(shape)
        states[repeats] = rng.integers(0, n_states, (int(repeats.sum()), b))


def _evaluation_points(updates, evaluate_every) -> np.ndarray:
    """``0, k, 2k, ...`` up to ``updates``, and ``updates`` itself (int64)."""
    updates = check_positive_int("updates", updates, high=MAX_UPDATES)
    evaluate_every = check_positive_int("evaluate_every", evaluate_every, high=MAX_UPDATES)
    count = updates // evaluate_every + 2
    if count > MAX_EVALUATIONS:
        raise ValueError(f"evaluate_every={evaluate_every} with updates={updates} asks for "
                         f"{count:,} evaluations, more than {MAX_EVALUATIONS:,}: evaluate "
                         "less often")
    points = np.arange(0, updates + 1, evaluate_every, dtype=np.int64)
    return points if points[-1] == updates else np.append(points, np.int64(updates))


def _setup(mdp: MDPLike, updates: int, gamma: float, evaluate_every: int,
           initial_Q: npt.ArrayLike, n_runs: int) -> tuple[TabularMDP, float, np.ndarray, Any]:
    """The checked model, discount and evaluation points, and the outputs of ``n_runs``."""
    mdp = as_mdp(mdp)
    gamma = check_gamma(gamma)
    evaluate_at = _evaluation_points(updates, evaluate_every)
    Q = per_run(initial_values("initial_Q", initial_Q, (mdp.n_states, mdp.n_actions)), n_runs)
    shape = (n_runs, evaluate_at.shape[0])
    return mdp, gamma, evaluate_at, CurveOutputs(Q, np.zeros(shape), np.zeros(shape))


def _result(out, evaluate_at, gamma, runs) -> ExpectedUpdatesResult:
    """The result of filled outputs, once every evaluation is known to have finished."""
    unfinished = (out.left > EVALUATION_TOL) & (out.values > -np.inf)
    if unfinished.any():
        run, e = np.argwhere(unfinished)[0]
        raise ConvergenceError(
            f"after {evaluate_at[e]:,} updates the greedy policy's episode from the start is "
            f"still running after {MAX_EVALUATION_STEPS:,} steps with (discounted) "
            f"probability {out.left[run, e]:.3g} (gamma={gamma:.15g}): its value cannot be "
            "summed; use gamma < 1 (further from 1), or a model whose episodes end")
    return ExpectedUpdatesResult(evaluate_at, with_run_axis(out.values, runs),
                                 with_run_axis(out.Q, runs))
