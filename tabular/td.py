"""Temporal-difference learning (Sutton & Barto, chapters 6 and 7).

- :func:`td0` -- tabular TD(0) prediction (eq. 6.2), and n-step TD (eq. 7.2) with ``n > 1``;
- :func:`sarsa` -- on-policy TD control (eq. 6.7, section 6.4);
- :func:`expected_sarsa` -- eq. 6.9 with the epsilon-greedy target policy (section 6.6);
- :func:`q_learning` -- off-policy TD control (eq. 6.8, section 6.5);
- :func:`double_q_learning` -- eq. 6.10 (section 6.7), acting epsilon-greedily on Q1 + Q2.

The targets are one small function each (:func:`td_target`, :func:`sarsa_target`,
:func:`q_learning_target`, :func:`expected_sarsa_target`, :func:`double_q_target`),
composed with :func:`tabular.learning.update_toward` in the episode loops. The
learners reach the dynamics only through :func:`tabular.mdp.sample_step` and
:func:`tabular.mdp.sample_start`.

Conventions: step sizes follow a schedule over the visit count of the state (for
prediction) or state-action pair (for control); exploration follows a schedule over
the episode number; both count from 1. An episode ends when an outcome is ``done``
(no value flows from the next state) or is cut after ``max_steps`` steps; a cut is
not a termination, so its last update still bootstraps from the state reached.
``-inf`` rewards are exact (see :mod:`tabular.learning`); double Q-learning shares a
learned ``-inf`` between its two tables, since it is exact for both.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .checks import check_gamma, check_positive_int, policy_matrix
from .kernels.rng import categorical, seed_states, uniform
from .kernels.sampling import sample_start, sample_step
from .results import ControlResult, PredictionResult
from .learning import (
    as_mdp,
    check_episode_args,
    initial_values,
    per_run,
    squeeze_runs,
)
from .mdp import ModelArrays
from .rules.values import (
    discounted,
    double_q_target,
    epsilon_greedy_action,
    expected_sarsa_target,
    q_learning_target,
    sarsa_target,
    update_toward,
)
from .schedules import as_schedule, schedule_value

SARSA, EXPECTED_SARSA, Q_LEARNING = 0, 1, 2

# --------------------------------------------------------------------- prediction


@njit(cache=True, inline="always")
def _td_prediction_run(next_state, prob, reward, done, start_cdf, policy, gamma, alpha,
                       n_step, episodes, max_steps, rng, V, returns, lengths, history):
    """One run of n-step TD prediction (section 7.1's algorithm; n = 1 is TD(0))."""
    visits = np.zeros(V.shape[0], dtype=np.int64)
    size = n_step + 1
    states = np.zeros(size, dtype=np.int64)
    rewards = np.zeros(size)
    for episode in range(episodes):
        states[0] = sample_start(ModelArrays(next_state, prob, reward, done, start_cdf), rng)
        T = max_steps + 1  # the step at which the episode ends, once known
        terminated = False
        total = 0.0
        t = 0
        while True:
            if t < T:
                s = states[t % size]
                a = categorical(rng, policy[s])
                s_next, r, is_done = sample_step(ModelArrays(next_state, prob, reward, done, start_cdf), s, a, rng)
                states[(t + 1) % size] = s_next
                rewards[(t + 1) % size] = r
                total += r
                if is_done or t + 1 == max_steps:
                    T = t + 1
                    terminated = is_done
            tau = t - n_step + 1  # the time whose estimate is updated
            if tau >= 0:
                end = min(tau + n_step, T)
                G = 0.0 if (end == T and terminated) else V[states[end % size]]
                for i in range(end, tau, -1):  # G = R_{tau+1} + gamma R_{tau+2} + ... (eq. 7.1)
                    G = rewards[i % size] + discounted(gamma, G)
                s_tau = states[tau % size]
                visits[s_tau] += 1
                V[s_tau] = update_toward(V[s_tau], G, schedule_value(alpha, visits[s_tau]))
            if tau == T - 1:
                break
            t += 1
        returns[episode] = total
        lengths[episode] = T
        if history.shape[0] > 0:
            history[episode] = V


@njit(cache=True, parallel=True)
def _td_prediction(next_state, prob, reward, done, start_cdf, policy, gamma, alpha, n_step,
                   episodes, max_steps, rng_states, V, returns, lengths, history):
    for run in prange(rng_states.shape[0]):
        _td_prediction_run(next_state, prob, reward, done, start_cdf, policy, gamma, alpha,
                           n_step, episodes, max_steps, rng_states[run].copy(), V[run],
                           returns[run], lengths[run], history[run])


def td0(mdp, policy, *, gamma: float = 1.0, episodes: int = 100, alpha=0.1, n_step: int = 1,
        initial_V=0.0, seed: int | None = 0, runs: int = 1, max_steps: int = 10_000,
        history: bool = False) -> PredictionResult:
    """Estimate ``V^pi`` by TD(0), ``V(S) <- V(S) + alpha [R + gamma V(S') - V(S)]`` (eq. 6.2).

    ``n_step > 1`` uses the n-step return ``G_{t:t+n}`` (eq. 7.1) in the same update
    (eq. 7.2). ``policy``: deterministic ``int [S]``, stochastic ``[S, A]`` or a
    :class:`~tabular.SoftmaxPolicy`. ``alpha``: a number or a schedule over the
    visits of each state. ``history=True`` also returns ``V`` after every episode.
    """
    mdp = as_mdp(mdp)
    gamma = check_gamma(gamma)
    episodes, runs, max_steps = check_episode_args(episodes, runs, max_steps)
    n_step = check_positive_int("n_step", n_step)
    pi = policy_matrix(mdp, policy)
    alpha = as_schedule("alpha", alpha)
    V = per_run(initial_values("initial_V", initial_V, (mdp.n_states,)), runs)
    returns = np.zeros((runs, episodes))
    lengths = np.zeros((runs, episodes), dtype=np.int64)
    trace = np.zeros((runs, episodes if history else 0, mdp.n_states))
    _td_prediction(*mdp.arrays, pi, gamma, alpha.params, n_step, episodes,
                   max_steps, seed_states(seed, runs), V, returns, lengths, trace)
    return PredictionResult(squeeze_runs(returns, runs), squeeze_runs(lengths, runs),
                            squeeze_runs(V, runs),
                            squeeze_runs(trace, runs) if history else None)


# --------------------------------------------------------------------- control


@njit(cache=True, inline="always")
def _td_control_run(method, next_state, prob, reward, done, start_cdf, gamma, alpha, epsilon,
                    episodes, max_steps, rng, Q, returns, lengths):
    """One run of SARSA, expected SARSA or Q-learning (the boxes of sections 6.4-6.6)."""
    visits = np.zeros(Q.shape, dtype=np.int64)
    probs_buf = np.zeros(Q.shape[1])
    for episode in range(episodes):
        eps = schedule_value(epsilon, episode + 1)
        s = sample_start(ModelArrays(next_state, prob, reward, done, start_cdf), rng)
        a = epsilon_greedy_action(Q[s], eps, rng)
        total = 0.0
        steps = 0
        while True:
            steps += 1
            s_next, r, is_done = sample_step(ModelArrays(next_state, prob, reward, done, start_cdf), s, a, rng)
            total += r
            if method == SARSA:
                a_next = epsilon_greedy_action(Q[s_next], eps, rng)
                target = sarsa_target(r, gamma, Q[s_next], a_next, is_done)
            elif method == EXPECTED_SARSA:
                target = expected_sarsa_target(r, gamma, Q[s_next], eps, probs_buf, is_done)
            else:
                target = q_learning_target(r, gamma, Q[s_next], is_done)
            visits[s, a] += 1
            Q[s, a] = update_toward(Q[s, a], target, schedule_value(alpha, visits[s, a]))
            if is_done or steps == max_steps:
                break
            if method != SARSA:
                a_next = epsilon_greedy_action(Q[s_next], eps, rng)
            s, a = s_next, a_next
        returns[episode] = total
        lengths[episode] = steps


def _td_control_kernel(method):
    """The runs driver of one control method. ``method`` is a constant of the compiled
    kernel, so the branches of the other methods are compiled away (about 10% faster
    than a run-time switch)."""

    @njit(cache=True, parallel=True)
    def kernel(next_state, prob, reward, done, start_cdf, gamma, alpha, epsilon, episodes,
               max_steps, rng_states, Q, returns, lengths):
        for run in prange(rng_states.shape[0]):
            _td_control_run(method, next_state, prob, reward, done, start_cdf, gamma, alpha,
                            epsilon, episodes, max_steps, rng_states[run].copy(), Q[run],
                            returns[run], lengths[run])

    return kernel


_TD_CONTROL = {method: _td_control_kernel(method)
               for method in (SARSA, EXPECTED_SARSA, Q_LEARNING)}


@njit(cache=True, inline="always")
def _double_q_run(next_state, prob, reward, done, start_cdf, gamma, alpha, epsilon, episodes,
                  max_steps, rng, Q1, Q2, returns, lengths):
    """One run of double Q-learning (the box of section 6.7)."""
    visits = np.zeros(Q1.shape, dtype=np.int64)
    q_sum = np.zeros(Q1.shape[1])
    for episode in range(episodes):
        eps = schedule_value(epsilon, episode + 1)
        s = sample_start(ModelArrays(next_state, prob, reward, done, start_cdf), rng)
        total = 0.0
        steps = 0
        while True:
            steps += 1
            for b in range(q_sum.shape[0]):
                q_sum[b] = Q1[s, b] + Q2[s, b]
            a = epsilon_greedy_action(q_sum, eps, rng)
            s_next, r, is_done = sample_step(ModelArrays(next_state, prob, reward, done, start_cdf), s, a, rng)
            total += r
            visits[s, a] += 1
            step = schedule_value(alpha, visits[s, a])
            if uniform(rng) < 0.5:
                Q1[s, a] = update_toward(
                    Q1[s, a], double_q_target(r, gamma, Q1[s_next], Q2[s_next], is_done, rng),
                    step)
            else:
                Q2[s, a] = update_toward(
                    Q2[s, a], double_q_target(r, gamma, Q2[s_next], Q1[s_next], is_done, rng),
                    step)
            if Q1[s, a] == -np.inf or Q2[s, a] == -np.inf:  # exact, so true of both tables
                Q1[s, a] = -np.inf
                Q2[s, a] = -np.inf
            if is_done or steps == max_steps:
                break
            s = s_next
        returns[episode] = total
        lengths[episode] = steps


@njit(cache=True, parallel=True)
def _double_q(next_state, prob, reward, done, start_cdf, gamma, alpha, epsilon, episodes,
              max_steps, rng_states, Q1, Q2, returns, lengths):
    for run in prange(rng_states.shape[0]):
        _double_q_run(next_state, prob, reward, done, start_cdf, gamma, alpha, epsilon,
                      episodes, max_steps, rng_states[run].copy(), Q1[run], Q2[run], returns[run],
                      lengths[run])


def _control_setup(mdp, gamma, episodes, runs, max_steps, alpha, epsilon, initial_Q):
    mdp = as_mdp(mdp)
    gamma = check_gamma(gamma)
    episodes, runs, max_steps = check_episode_args(episodes, runs, max_steps)
    alpha = as_schedule("alpha", alpha)
    epsilon = as_schedule("epsilon", epsilon, low_inclusive=True)
    Q = per_run(initial_values("initial_Q", initial_Q, (mdp.n_states, mdp.n_actions)), runs)
    returns = np.zeros((runs, episodes))
    lengths = np.zeros((runs, episodes), dtype=np.int64)
    return mdp, gamma, episodes, runs, max_steps, alpha.params, epsilon.params, Q, returns, lengths


def _td_control_method(method, mdp, gamma, episodes, alpha, epsilon, initial_Q, seed, runs,
                       max_steps) -> ControlResult:
    mdp, gamma, episodes, runs, max_steps, alpha, epsilon, Q, returns, lengths = _control_setup(
        mdp, gamma, episodes, runs, max_steps, alpha, epsilon, initial_Q)
    _TD_CONTROL[method](*mdp.arrays, gamma, alpha, epsilon, episodes,
                        max_steps, seed_states(seed, runs), Q, returns, lengths)
    return ControlResult(squeeze_runs(returns, runs), squeeze_runs(lengths, runs),
                         squeeze_runs(Q, runs))


def sarsa(mdp, *, gamma: float = 1.0, episodes: int = 500, alpha=0.5, epsilon=0.1,
          initial_Q=0.0, seed: int | None = 0, runs: int = 1,
          max_steps: int = 10_000) -> ControlResult:
    """SARSA, on-policy TD control (section 6.4): ``Q(S, A) <- Q(S, A) + alpha [R + gamma
    Q(S', A') - Q(S, A)]`` (eq. 6.7), acting epsilon-greedily on Q.

    ``alpha``: a number in (0, 1] or a schedule over the visits of each ``(s, a)``;
    ``epsilon``: a number in [0, 1] or a schedule over episodes; ``initial_Q``: a
    number or ``[S, A]`` array; ``max_steps``: the step limit per episode (a cut
    still bootstraps); ``runs`` independent runs from ``seed`` (results get a
    leading run axis when ``runs > 1``). ``mdp``: a TabularMDP or a Gymnasium env
    with a transition table.
    """
    return _td_control_method(SARSA, mdp, gamma, episodes, alpha, epsilon, initial_Q, seed,
                              runs, max_steps)


def expected_sarsa(mdp, *, gamma: float = 1.0, episodes: int = 500, alpha=0.5, epsilon=0.1,
                   initial_Q=0.0, seed: int | None = 0, runs: int = 1,
                   max_steps: int = 10_000) -> ControlResult:
    """Expected SARSA (section 6.6): the target ``R + gamma sum_a pi(a|S') Q(S', a)``
    (eq. 6.9) with pi the epsilon-greedy behaviour policy. Arguments as :func:`sarsa`.
    """
    return _td_control_method(EXPECTED_SARSA, mdp, gamma, episodes, alpha, epsilon, initial_Q,
                              seed, runs, max_steps)


def q_learning(mdp, *, gamma: float = 1.0, episodes: int = 500, alpha=0.5, epsilon=0.1,
               initial_Q=0.0, seed: int | None = 0, runs: int = 1,
               max_steps: int = 10_000) -> ControlResult:
    """Q-learning, off-policy TD control (section 6.5): the target ``R + gamma max_a
    Q(S', a)`` (eq. 6.8), acting epsilon-greedily on Q. Arguments as :func:`sarsa`.
    """
    return _td_control_method(Q_LEARNING, mdp, gamma, episodes, alpha, epsilon, initial_Q,
                              seed, runs, max_steps)


def double_q_learning(mdp, *, gamma: float = 1.0, episodes: int = 500, alpha=0.5, epsilon=0.1,
                      initial_Q=0.0, seed: int | None = 0, runs: int = 1,
                      max_steps: int = 10_000) -> ControlResult:
    """Double Q-learning (eq. 6.10, section 6.7): with probability 1/2 update Q1 towards
    ``R + gamma Q2(S', argmax_a Q1(S', a))``, else the mirror image; act epsilon-greedily
    on ``Q1 + Q2``. The result's ``Q`` is ``(Q1 + Q2) / 2``. Arguments as :func:`sarsa`.
    """
    mdp, gamma, episodes, runs, max_steps, alpha, epsilon, Q1, returns, lengths = (
        _control_setup(mdp, gamma, episodes, runs, max_steps, alpha, epsilon, initial_Q))
    Q2 = Q1.copy()
    _double_q(*mdp.arrays, gamma, alpha, epsilon, episodes, max_steps,
              seed_states(seed, runs), Q1, Q2, returns, lengths)
    Q = 0.5 * (Q1 + Q2)  # a -inf is in both tables, so no -inf + finite mix appears
    return ControlResult(squeeze_runs(returns, runs), squeeze_runs(lengths, runs),
                         squeeze_runs(Q, runs))

