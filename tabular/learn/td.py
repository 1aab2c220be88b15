"""Temporal-difference learning (Sutton & Barto, chapters 6 and 7).

- :func:`td0` -- tabular TD(0) prediction (eq. 6.2), and n-step TD (eq. 7.2) with ``n > 1``;
- :func:`sarsa` -- on-policy TD control (eq. 6.7, section 6.4);
- :func:`expected_sarsa` -- eq. 6.9 with the epsilon-greedy target policy (section 6.6);
- :func:`q_learning` -- off-policy TD control (eq. 6.8, section 6.5);
- :func:`double_q_learning` -- eq. 6.10 (section 6.7), acting epsilon-greedily on Q1 + Q2.

The episode loops compose the rules of :mod:`tabular.rules.values` (one target
function per method, and :func:`~tabular.rules.values.update_toward`, eq. 2.4) and
:func:`~tabular.rules.returns.discounted_return` (eq. 3.9, for the n-step return).
They reach the dynamics only through :func:`~tabular.model.sampling.sample_step`
and :func:`~tabular.model.sampling.sample_start`. Kernels are runs drivers
(:mod:`tabular._numba.runs`) over one run function each.

Conventions: step sizes follow a schedule over the visit count of the state (for
prediction) or state-action pair (for control); exploration follows a schedule over
the episode number; both count from 1. An episode ends when an outcome is ``done``
(no value flows from the next state) or is cut after ``max_steps`` steps; a cut is
not a termination, so its last update still bootstraps from the state reached.
``-inf`` rewards are exact (see :mod:`tabular.learn.divergence`); double Q-learning shares a
learned ``-inf`` between its two tables, since it is exact for both.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import borrowed, local_stream
from tabular._numba.optional import row
from tabular._numba.rng import categorical, seed_states, uniform
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import check_action_mask, check_positive_int, policy_matrix
from tabular.learn.arguments import episode_args, initial_values
from tabular.learn.episodes import ring_mask, ring_return, ring_step
from tabular.learn.outputs import (
    ControlOutputs,
    close_episode,
    control_outputs,
    control_result,
    prediction_outputs,
    prediction_result,
    record_totals,
)
from tabular.learn.paragraphs import shares_paragraphs
from tabular.learn.results import ControlResult, PredictionResult
from tabular.model.sampling import sample_start, sample_step
from tabular.rules.estimates import move_toward, state_value
from tabular.rules.values import (
    double_q_target,
    epsilon_greedy_action,
    expected_sarsa_target,
    greedy_action,
    q_learning_target,
    sarsa_target,
    td_target,
    update_toward,
)
from tabular.schedules import (
    as_schedule,
    counts_visits,
    read_schedule,
    schedule_value,
    value_at_visit,
)
from tabular.types import MDPLike, PolicyLike, StepSize

SARSA, EXPECTED_SARSA, Q_LEARNING = 0, 1, 2


class TDPredictionParams(NamedTuple):
    """Hyper-parameters of n-step TD prediction (a kernel argument).

    ``policy``: the policy evaluated, ``[S, A]``; ``gamma``: discount; ``alpha``:
    step-size schedule ``float64[4]`` over the visits of each state
    (:mod:`tabular.schedules`); ``n_step``: the n of the n-step return (1 is TD(0));
    ``episodes``: episodes per run; ``max_steps``: step limit per episode.
    """

    policy: np.ndarray
    gamma: float
    alpha: np.ndarray
    n_step: int
    episodes: int
    max_steps: int


class TDControlParams(NamedTuple):
    """Hyper-parameters of SARSA, expected SARSA, Q-learning and double Q-learning.

    ``gamma``: discount; ``alpha``: step-size schedule ``float64[4]`` over the visits
    of each pair; ``epsilon``: exploration schedule ``float64[4]`` over episodes;
    ``episodes``: episodes per run; ``max_steps``: step limit per episode;
    ``action_mask``: bool ``[S, A]``, the actions available in each state, or ``None``
    (all of them).
    """

    gamma: float
    alpha: np.ndarray
    epsilon: np.ndarray
    episodes: int
    max_steps: int
    action_mask: np.ndarray | None = None


class DoubleQOutputs(NamedTuple):
    """What the double Q-learning kernel fills: ``ControlOutputs`` with two tables."""

    Q1: np.ndarray
    Q2: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray


# --------------------------------------------------------------------- prediction


@njit(cache=True, inline="always")
def n_step_td_run(model, params, rng, out, run, estimate, features, alpha, visits):
    """Run ``run`` of n-step TD prediction (the box of section 7.1; n = 1 is TD(0)) of
    either estimate of :mod:`tabular.rules.estimates`: the table ``V`` (``features``
    None), or the weights ``w`` of ``x(s) . w`` (``features`` ``X``: n-step semi-gradient
    TD, eq. 9.15 with the n-step return), the one loop of both, each estimate's
    arithmetic chosen at compile time. ``alpha``: the step size, a schedule tuple
    counted in ``visits`` or a number (:func:`~tabular.rules.estimates.move_toward`);
    ``params``: the policy, ``gamma``, ``n_step``, ``episodes`` and ``max_steps``
    (:class:`TDPredictionParams`, or the linear learners' record)."""
    policy, gamma, n_step = borrowed(params.policy), params.gamma, params.n_step
    max_steps = params.max_steps
    mask = ring_mask(n_step)  # ring buffers of the last n + 1 steps
    states = np.zeros(mask + 1, dtype=np.int64)
    rewards = np.zeros(mask + 1)
    for episode in range(params.episodes):
        states[0] = sample_start(model, rng)
        T = max_steps + 1  # the step at which the episode ends, once known
        terminated = False
        total = 0.0
        t = 0
        while True:
            if t < T:
                s = states[t & mask]
                _, r, T, terminated = ring_step(model, rng, s, categorical(rng, policy[s]), t,
                                                T, terminated, states, rewards, mask, max_steps)
                total += r
            tau = t - n_step + 1  # the time whose estimate is updated
            if tau >= 0:
                end = min(tau + n_step, T)
                G = (0.0 if (end == T and terminated)
                     else state_value(estimate, features, states[end & mask]))
                G = ring_return(rewards, mask, gamma, tau, end, G)
                move_toward(estimate, features, states[tau & mask], G, alpha, visits)
            if tau == T - 1:
                break
            t += 1
        close_episode(out, run, episode, total, T, estimate)


@njit(cache=True, inline="always")
def _td_prediction_run(model, params, rng, out, run):
    """Run ``run`` of n-step TD prediction of the table ``V`` (:func:`n_step_td_run`),
    its step size a schedule over the visits of each state."""
    V = borrowed(out.V[run])
    alpha = read_schedule(params.alpha)
    visits = np.zeros(V.shape[0] if counts_visits(alpha) else 0, dtype=np.int64)
    n_step_td_run(model, params, rng, out, run, V, None, alpha, visits)


@runs_kernel
def _td_prediction(model, params, rng_states, out):
    """Every run of :func:`_td_prediction_run`."""
    for run in range(rng_states.shape[0]):
        _td_prediction_run(model, params, local_stream(rng_states[run]), out, run)


@njit(cache=True, inline="always")
def _td0_run(model, params, rng, out, run):
    """Run ``run`` of TD(0) (the box of section 6.1). It draws and computes what
    :func:`_td_prediction_run` does at ``n = 1``, bit for bit, without the ring
    buffers and the return loop, which cost TD(0) a fifth of its speed
    (docs/decisions/2026-12-04-td-kernels-at-the-limit.md)."""
    V = borrowed(out.V[run])
    policy, gamma, max_steps = borrowed(params.policy), params.gamma, params.max_steps
    alpha = read_schedule(params.alpha)
    visits = np.zeros(V.shape[0] if counts_visits(alpha) else 0, dtype=np.int64)
    for episode in range(params.episodes):
        s = sample_start(model, rng)
        total = 0.0
        steps = 0
        while True:
            steps += 1
            a = categorical(rng, policy[s])
            s_next, r, is_done = sample_step(model, s, a, rng)
            total += r
            target = td_target(r, gamma, V[s_next], is_done)
            V[s] = update_toward(V[s], target, value_at_visit(alpha, visits, s))
            if is_done or steps == max_steps:
                break
            s = s_next
        close_episode(out, run, episode, total, steps, V)


@runs_kernel
def _td0(model, params, rng_states, out):
    """Every run of :func:`_td0_run`."""
    for run in range(rng_states.shape[0]):
        _td0_run(model, params, local_stream(rng_states[run]), out, run)


@shares_paragraphs
def td0(mdp: MDPLike, policy: PolicyLike, *, gamma: float = 1.0, episodes: int = 100,
        alpha: StepSize = 0.1, n_step: int = 1, initial_V: npt.ArrayLike = 0.0,
        seed: int | None = 0, runs: int | None = None, max_steps: int | None = None,
        history: bool = False) -> PredictionResult:
    """Estimate ``V^pi`` by TD(0), ``V(S) <- V(S) + alpha [R + gamma V(S') - V(S)]``
    (eq. 6.2, the box of section 6.1), or by n-step TD (section 7.1).

    Parameters
    ----------
    {mdp policy gamma episodes}
    alpha : step size in (0, 1], or a :mod:`tabular.schedules` schedule over the
        visits of each state, default 0.1.
    n_step : ``n > 1`` (at most ``max_steps``) updates towards the n-step return
        ``G_{t:t+n}`` (eq. 7.1, the update of eq. 7.2), default 1 (TD(0)).
    {initial_V seed runs max_steps history_V}

    Returns a :class:`~tabular.learn.results.PredictionResult`: ``V`` ``[S]``; ``V_history``
    ``[episodes, S]`` when ``history=True``, else ``None``; ``episode_returns``
    (undiscounted sum of rewards) and ``episode_lengths`` (steps), ``[episodes]``;
    each with a leading run axis when ``runs=n``.
    """
    ep = episode_args(mdp, gamma=gamma, episodes=episodes, runs=runs, max_steps=max_steps)
    params = TDPredictionParams(
        policy=policy_matrix(ep.mdp, policy), gamma=ep.gamma,
        alpha=as_schedule("alpha", alpha).params,
        n_step=check_positive_int("n_step", n_step, high=ep.max_steps),  # longer: MC
        episodes=ep.episodes, max_steps=ep.max_steps)
    out = prediction_outputs(initial_values("initial_V", initial_V, (ep.mdp.n_states,)),
                             ep.n_runs, ep.episodes, history)
    driver = _td0 if params.n_step == 1 else _td_prediction
    over_runs(driver, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), out)
    return prediction_result(out, runs, ep.mdp)


# --------------------------------------------------------------------- control


@njit(cache=True, inline="always")
def _td_control_run(method, model, params, rng, out, run):
    """Run ``run`` of SARSA, expected SARSA or Q-learning (the boxes of sections
    6.4-6.6); ``method`` is a constant of each driver."""
    Q = borrowed(out.Q[run])
    gamma, max_steps, mask = params.gamma, params.max_steps, borrowed(params.action_mask)
    alpha, epsilon = read_schedule(params.alpha), read_schedule(params.epsilon)
    visits = np.zeros(Q.shape if counts_visits(alpha) else (0, 0), dtype=np.int64)
    for episode in range(params.episodes):
        eps = schedule_value(epsilon, episode + 1)
        s = sample_start(model, rng)
        a = epsilon_greedy_action(Q[s], eps, rng, row(mask, s))
        total = 0.0
        steps = 0
        while True:
            steps += 1
            s_next, r, is_done = sample_step(model, s, a, rng)
            total += r
            legal_next = row(mask, s_next)
            if method == SARSA:
                a_next = epsilon_greedy_action(Q[s_next], eps, rng, legal_next)
                target = sarsa_target(r, gamma, Q[s_next], a_next, is_done)
            elif method == EXPECTED_SARSA:
                target = expected_sarsa_target(r, gamma, Q[s_next], eps, is_done, legal_next)
            else:
                target = q_learning_target(r, gamma, Q[s_next], is_done, legal_next)
            Q[s, a] = update_toward(Q[s, a], target, value_at_visit(alpha, visits, (s, a)))
            if is_done or steps == max_steps:
                break
            if method != SARSA:
                a_next = epsilon_greedy_action(Q[s_next], eps, rng, legal_next)
            s, a = s_next, a_next
        record_totals(out, run, episode, total, steps)


@runs_kernel
def _sarsa(model, params, rng_states, out):
    """Every run of :func:`_td_control_run`, the method ``SARSA``."""
    for run in range(rng_states.shape[0]):
        _td_control_run(SARSA, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _expected_sarsa(model, params, rng_states, out):
    """Every run of :func:`_td_control_run`, the method ``EXPECTED_SARSA``."""
    for run in range(rng_states.shape[0]):
        _td_control_run(EXPECTED_SARSA, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _q_learning(model, params, rng_states, out):
    """Every run of :func:`_td_control_run`, the method ``Q_LEARNING``."""
    for run in range(rng_states.shape[0]):
        _td_control_run(Q_LEARNING, model, params, local_stream(rng_states[run]), out, run)


@njit(cache=True, inline="always")
def _double_q_run(model, params, rng, out, run):
    """Run ``run`` of double Q-learning (the box of section 6.7)."""
    Q1, Q2 = out.Q1[run], out.Q2[run]
    gamma, max_steps, mask = params.gamma, params.max_steps, params.action_mask
    alpha, epsilon = read_schedule(params.alpha), read_schedule(params.epsilon)
    visits = np.zeros(Q1.shape, dtype=np.int64)
    q_sum = np.zeros(Q1.shape[1])
    for episode in range(params.episodes):
        eps = schedule_value(epsilon, episode + 1)
        s = sample_start(model, rng)
        total = 0.0
        steps = 0
        while True:
            steps += 1
            for b in range(q_sum.shape[0]):
                q_sum[b] = Q1[s, b] + Q2[s, b]
            a = epsilon_greedy_action(q_sum, eps, rng, row(mask, s))
            s_next, r, is_done = sample_step(model, s, a, rng)
            total += r
            visits[s, a] += 1
            step = schedule_value(alpha, visits[s, a])
            legal_next = row(mask, s_next)
            if uniform(rng) < 0.5:
                a_star = greedy_action(Q1[s_next], rng, legal_next)
                Q1[s, a] = update_toward(Q1[s, a], double_q_target(
                    r, gamma, Q2[s_next], a_star, is_done), step)
            else:
                a_star = greedy_action(Q2[s_next], rng, legal_next)
                Q2[s, a] = update_toward(Q2[s, a], double_q_target(
                    r, gamma, Q1[s_next], a_star, is_done), step)
            if Q1[s, a] == -np.inf or Q2[s, a] == -np.inf:  # exact, so true of both tables
                Q1[s, a] = -np.inf
                Q2[s, a] = -np.inf
            if is_done or steps == max_steps:
                break
            s = s_next
        record_totals(out, run, episode, total, steps)


@runs_kernel
def _double_q(model, params, rng_states, out):
    """Every run of :func:`_double_q_run`."""
    for run in range(rng_states.shape[0]):
        _double_q_run(model, params, local_stream(rng_states[run]), out, run)


def control_inputs(mdp, *, gamma, episodes, runs, max_steps, alpha, epsilon, initial_Q,
                   action_mask=None):
    """A TD control learner's checked arguments (:class:`~tabular.learn.arguments.EpisodeArgs`),
    params and outputs (shared by the one-step methods here and the trace methods of
    :mod:`tabular.learn.traces`, which take no ``action_mask``)."""
    ep = episode_args(mdp, gamma=gamma, episodes=episodes, runs=runs, max_steps=max_steps)
    params = TDControlParams(
        gamma=ep.gamma, alpha=as_schedule("alpha", alpha).params,
        epsilon=as_schedule("epsilon", epsilon, low_inclusive=True).params,
        episodes=ep.episodes, max_steps=ep.max_steps,
        action_mask=check_action_mask(ep.mdp, action_mask))
    out = control_outputs(
        initial_values("initial_Q", initial_Q, (ep.mdp.n_states, ep.mdp.n_actions)),
        ep.n_runs, ep.episodes)
    return ep, params, out


def _td_control(driver, mdp, *, seed, runs, **args) -> ControlResult:
    """Check the arguments of a one-step control method, run its ``driver``, return the
    result; ``args``: the keywords of :func:`control_inputs`."""
    ep, params, out = control_inputs(mdp, runs=runs, **args)
    over_runs(driver, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), out)
    return control_result(out, runs, ep.mdp, action_mask=params.action_mask)


@shares_paragraphs
def sarsa(mdp: MDPLike, *, gamma: float = 1.0, episodes: int = 500, alpha: StepSize = 0.5,
          epsilon: StepSize = 0.1, initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0,
          runs: int | None = None, max_steps: int | None = None,
          action_mask: npt.ArrayLike | None = None) -> ControlResult:
    """SARSA, on-policy TD control (the box of section 6.4): ``Q(S, A) <- Q(S, A) + alpha
    [R + gamma Q(S', A') - Q(S, A)]`` (eq. 6.7), acting epsilon-greedily on ``Q``;
    ``A'`` is the action the epsilon-greedy policy takes next, so ``Q`` learns that
    policy's values.

    Parameters
    ----------
    {mdp gamma episodes alpha epsilon initial_Q seed runs max_steps action_mask}

    {control_result}
    """
    return _td_control(_sarsa, mdp, gamma=gamma, episodes=episodes, alpha=alpha,
                       epsilon=epsilon, initial_Q=initial_Q, seed=seed, runs=runs,
                       max_steps=max_steps, action_mask=action_mask)


@shares_paragraphs
def expected_sarsa(mdp: MDPLike, *, gamma: float = 1.0, episodes: int = 500, alpha: StepSize = 0.5,
                   epsilon: StepSize = 0.1, initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0,
                   runs: int | None = None, max_steps: int | None = None,
                   action_mask: npt.ArrayLike | None = None) -> ControlResult:
    """Expected SARSA (section 6.6): ``Q(S, A) <- Q(S, A) + alpha [R + gamma sum_a
    pi(a|S') Q(S', a) - Q(S, A)]`` (eq. 6.9), pi the epsilon-greedy behaviour policy on
    ``Q``: SARSA's target in expectation over ``A'``, which removes the variance of
    drawing it.

    Parameters
    ----------
    {mdp gamma episodes alpha epsilon initial_Q seed runs max_steps action_mask}

    {control_result}
    """
    return _td_control(_expected_sarsa, mdp, gamma=gamma, episodes=episodes, alpha=alpha,
                       epsilon=epsilon, initial_Q=initial_Q, seed=seed, runs=runs,
                       max_steps=max_steps, action_mask=action_mask)


@shares_paragraphs
def q_learning(mdp: MDPLike, *, gamma: float = 1.0, episodes: int = 500, alpha: StepSize = 0.5,
               epsilon: StepSize = 0.1, initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0,
               runs: int | None = None, max_steps: int | None = None,
               action_mask: npt.ArrayLike | None = None) -> ControlResult:
    """Q-learning, off-policy TD control (the box of section 6.5): ``Q(S, A) <- Q(S, A) +
    alpha [R + gamma max_a Q(S', a) - Q(S, A)]`` (eq. 6.8), acting epsilon-greedily on
    ``Q``; the max makes ``Q`` learn the greedy policy's values, ``q*``, whatever the
    behaviour.

    Parameters
    ----------
    {mdp gamma episodes alpha epsilon initial_Q seed runs max_steps action_mask}

    {control_result}
    """
    return _td_control(_q_learning, mdp, gamma=gamma, episodes=episodes, alpha=alpha,
                       epsilon=epsilon, initial_Q=initial_Q, seed=seed, runs=runs,
                       max_steps=max_steps, action_mask=action_mask)


@shares_paragraphs
def double_q_learning(mdp: MDPLike, *, gamma: float = 1.0, episodes: int = 500,
                      alpha: StepSize = 0.5, epsilon: StepSize = 0.1,
                      initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0,
                      runs: int | None = None, max_steps: int | None = None,
                      action_mask: npt.ArrayLike | None = None) -> ControlResult:
    """Double Q-learning (the box of section 6.7): with probability 1/2 ``Q1(S, A) <-
    Q1(S, A) + alpha [R + gamma Q2(S', argmax_a Q1(S', a)) - Q1(S, A)]`` (eq. 6.10), else
    the same with the tables swapped, acting epsilon-greedily on ``Q1 + Q2``. One table
    picks the action and the other values it, which removes Q-learning's maximisation
    bias (section 6.7).

    Parameters
    ----------
    {mdp gamma episodes}
    alpha : step size in (0, 1], or a :mod:`tabular.schedules` schedule over the
        visits of each pair ``(s, a)`` (counted over both tables), default 0.5.
    {epsilon}
    initial_Q : the initial estimate of both tables, a finite number or ``[S, A]``
        array, default 0.0.
    {seed runs max_steps action_mask}

    Returns a :class:`~tabular.learn.results.ControlResult`: ``Q`` ``[S, A]``, the mean
    ``(Q1 + Q2) / 2`` of the two tables; ``policy``, its greedy policy (int64 ``[S]``);
    ``V = max_a Q``; ``episode_returns`` (undiscounted sum of rewards) and
    ``episode_lengths`` (steps) of the epsilon-greedy behaviour, ``[episodes]``; each
    with a leading run axis when ``runs=n``.
    """
    ep, params, out = control_inputs(mdp, gamma=gamma, episodes=episodes, runs=runs,
                                     max_steps=max_steps, alpha=alpha, epsilon=epsilon,
                                     initial_Q=initial_Q, action_mask=action_mask)
    tables = DoubleQOutputs(Q1=out.Q, Q2=out.Q.copy(), returns=out.returns, lengths=out.lengths)
    over_runs(_double_q, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), tables)
    Q = 0.5 * (tables.Q1 + tables.Q2)  # a -inf is in both tables, so no -inf + finite mix
    return control_result(ControlOutputs(Q, out.returns, out.lengths), runs, ep.mdp,
                          action_mask=params.action_mask)
