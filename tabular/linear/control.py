"""Control with linear action values (Sutton & Barto, chapters 10 and 12).

The action-value estimate is ``q(s, a, w) = x(s, a) . w`` over state-action features
``[S, A, d]`` (:func:`~tabular.linear.features.state_action_features`, or your own), and
the learners act epsilon-greedily on it, ties broken uniformly at random:

- :func:`semi_gradient_sarsa` -- episodic semi-gradient SARSA (the box of section 10.1,
  eq. 10.1);
- :func:`n_step_semi_gradient_sarsa` -- episodic semi-gradient n-step SARSA (the box of
  section 10.2, eqs. 10.3 and 10.4);
- :func:`differential_semi_gradient_sarsa` -- differential semi-gradient SARSA for a
  continuing task (the box of section 10.3, eq. 10.10), with an average-reward
  estimate ``Rbar`` moved by ``beta``;
- :func:`semi_gradient_sarsa_lambda` -- Sarsa(lambda) with an accumulating or (binary
  features) replacing trace (the box of section 12.7), or a replacing trace that clears
  the traces of the state's other actions (Figure 12.11);
- :func:`true_online_linear_sarsa_lambda` -- true online Sarsa(lambda) (the box of
  section 12.7), the dutch trace of eq. 12.11.

They are the tabular learners with ``x(s, a) . w`` in place of ``Q(s, a)``
(:mod:`tabular.rules.linear`): the same loops, the same random draws in the same order,
so with one-hot state-action features they are :func:`tabular.sarsa`,
:func:`tabular.n_step_sarsa`, :func:`tabular.differential_sarsa`,
:func:`tabular.sarsa_lambda` and :func:`tabular.true_online_sarsa_lambda` bit for bit
(for a constant step size and exploration). As there, the next action ``A'`` is drawn after
every step, also at the end of an episode where it is not used, and an episode cut at
``max_steps`` bootstraps from ``q(S_T, A_T, w)``. The step sizes and the exploration
are constants (chapter 10's setting); an estimate that leaves float64 raises
``FloatingPointError``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import check_fits, check_positive, check_positive_int, check_unit_interval
from tabular.learn.arguments import episode_args, initial_values, per_run
from tabular.learn.differential import (
    MAX_TIME_STEPS,
    check_continuing_task,
    differential_td_error,
)
from tabular.learn.episodes import ring_mask, ring_return, ring_step
from tabular.learn.outputs import record_totals
from tabular.learn.paragraphs import shares_paragraphs
from tabular.learn.traces import check_trace
from tabular.linear.features import check_state_action_features
from tabular.linear.learners import check_finite_rewards, check_weights
from tabular.linear.results import LinearControlResult, LinearDifferentialResult
from tabular.model.sampling import sample_start, sample_step
from tabular.results import check_runs, with_run_axis
from tabular.rules.linear import (
    accumulate_features,
    action_values,
    average_reward_update,
    clear_other_actions,
    dutch_features,
    gradient_step,
    linear_value,
    replace_features,
    trace_step,
    true_online_step,
)
from tabular.rules.traces import (
    ACCUMULATING,
    CLEARING,
    DUTCH,
    REPLACING,
    decay_traces,
    true_online_gap,
)
from tabular.rules.values import epsilon_greedy_action, sarsa_target, td_error
from tabular.types import MDPLike


class LinearControlParams(NamedTuple):
    """Hyper-parameters of the linear control learners (a kernel argument).

    ``features``: ``x(s, a)``, ``[S, A, d]``; ``gamma``: discount (1 for the differential
    learner); ``alpha``: the constant step size of ``w``; ``beta``: that of ``Rbar``
    (differential only); ``epsilon``: the constant exploration; ``n_step``: the n of
    the return (1 but for n-step SARSA); ``lam``: the trace decay and ``trace``: the
    trace (``ACCUMULATING``, ``REPLACING``, ``CLEARING`` or ``DUTCH``, the last with the
    true online update) of Sarsa(lambda) (unused by the others); ``episodes``: episodes per run
    (unused by the differential learner); ``max_steps``: the step limit per episode, or
    the time steps of a differential run.
    """

    features: np.ndarray
    gamma: float
    alpha: float
    beta: float
    epsilon: float
    n_step: int
    lam: float
    trace: int
    episodes: int
    max_steps: int


class LinearControlOutputs(NamedTuple):
    """What an episodic linear control kernel fills, each with a leading run axis of
    length ``n``: ``w [n, d]`` (the initial weights on entry), ``returns`` and
    ``lengths`` of each episode ``[n, episodes]``."""

    w: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray


class LinearDifferentialOutputs(NamedTuple):
    """What the differential kernel fills, each with a leading run axis: ``w [n, d]``
    (the initial weights on entry), ``average_reward`` (the final ``Rbar``) and
    ``reward_rate`` (the reward per step collected) ``[n]``."""

    w: np.ndarray
    average_reward: np.ndarray
    reward_rate: np.ndarray


@njit(cache=True, inline="always")
def _semi_gradient_sarsa_run(model, params, rng, out, run):
    """Run ``run`` of episodic semi-gradient SARSA (the box of section 10.1)."""
    w = out.w[run]
    X, gamma, alpha, eps = params.features, params.gamma, params.alpha, params.epsilon
    q_row = np.zeros(X.shape[1])
    for episode in range(params.episodes):
        s = sample_start(model, rng)
        action_values(X[s], w, q_row)
        a = epsilon_greedy_action(q_row, eps, rng)
        total = 0.0
        steps = 0
        while True:
            steps += 1
            s_next, r, is_done = sample_step(model, s, a, rng)
            total += r
            action_values(X[s_next], w, q_row)
            a_next = epsilon_greedy_action(q_row, eps, rng)
            gradient_step(w, X[s, a], sarsa_target(r, gamma, q_row, a_next, is_done), alpha)
            if is_done or steps == params.max_steps:
                break
            s, a = s_next, a_next
        record_totals(out, run, episode, total, steps)


@runs_kernel
def _semi_gradient_sarsa(model, params, rng_states, out):
    """Every run of :func:`_semi_gradient_sarsa_run`."""
    for run in range(rng_states.shape[0]):
        _semi_gradient_sarsa_run(model, params, local_stream(rng_states[run]), out, run)


@njit(cache=True, inline="always")
def _n_step_sarsa_run(model, params, rng, out, run):
    """Run ``run`` of episodic semi-gradient n-step SARSA (the box of section 10.2): once
    ``A_{tau+n}`` is drawn, ``w`` moves toward ``G_{tau:tau+n}`` (eq. 10.3) at
    ``(S_tau, A_tau)`` (eq. 10.4)."""
    w = out.w[run]
    X, gamma, alpha, eps = params.features, params.gamma, params.alpha, params.epsilon
    n_step, max_steps = params.n_step, params.max_steps
    q_row = np.zeros(X.shape[1])
    mask = ring_mask(n_step)  # ring buffers of the last n + 1 steps
    states = np.zeros(mask + 1, dtype=np.int64)
    actions = np.zeros(mask + 1, dtype=np.int64)
    rewards = np.zeros(mask + 1)
    for episode in range(params.episodes):
        states[0] = sample_start(model, rng)
        action_values(X[states[0]], w, q_row)
        actions[0] = epsilon_greedy_action(q_row, eps, rng)
        T = max_steps + 1  # the step at which the episode ends, once known
        terminated = False
        total = 0.0
        t = 0
        while True:
            if t < T:
                s_next, r, T, terminated = ring_step(model, rng, states[t & mask],
                                                     actions[t & mask], t, T, terminated,
                                                     states, rewards, mask, max_steps)
                total += r
                action_values(X[s_next], w, q_row)
                actions[(t + 1) & mask] = epsilon_greedy_action(q_row, eps, rng)
            tau = t - n_step + 1  # the time whose estimate is updated
            if tau >= 0:
                end = min(tau + n_step, T)
                if end == T and terminated:
                    G = rewards[end & mask]  # G_{T-1:T} = R_T: no value after the end
                    end -= 1
                else:
                    G = linear_value(X[states[end & mask], actions[end & mask]], w)
                G = ring_return(rewards, mask, gamma, tau, end, G)  # G_{tau:end} (eq. 10.3)
                gradient_step(w, X[states[tau & mask], actions[tau & mask]], G, alpha)
            if tau == T - 1:
                break
            t += 1
        record_totals(out, run, episode, total, T)


@runs_kernel
def _n_step_sarsa(model, params, rng_states, out):
    """Every run of :func:`_n_step_sarsa_run`."""
    for run in range(rng_states.shape[0]):
        _n_step_sarsa_run(model, params, local_stream(rng_states[run]), out, run)


@njit(cache=True, inline="always")
def _differential_sarsa_run(model, params, rng, out, run):
    """Run ``run`` of differential semi-gradient SARSA (the box of section 10.3): one
    continuing run of ``params.max_steps`` steps from ``Rbar = 0``."""
    w = out.w[run]
    X, alpha, beta, eps = params.features, params.alpha, params.beta, params.epsilon
    q_row = np.zeros(X.shape[1])
    average, total = 0.0, 0.0
    s = sample_start(model, rng)
    action_values(X[s], w, q_row)
    a = epsilon_greedy_action(q_row, eps, rng)
    for _ in range(params.max_steps):
        s_next, r, _ = sample_step(model, s, a, rng)
        action_values(X[s_next], w, q_row)
        a_next = epsilon_greedy_action(q_row, eps, rng)
        q = linear_value(X[s, a], w)
        delta = differential_td_error(r, average, q_row[a_next], q)
        average = average_reward_update(average, delta, beta)
        gradient_step(w, X[s, a], q + delta, alpha)  # w += alpha delta x(S, A)
        total += r
        s, a = s_next, a_next
    out.average_reward[run], out.reward_rate[run] = average, total / params.max_steps


@runs_kernel
def _differential_sarsa(model, params, rng_states, out):
    """Every run of :func:`_differential_sarsa_run`."""
    for run in range(rng_states.shape[0]):
        _differential_sarsa_run(model, params, local_stream(rng_states[run]), out, run)


@njit(cache=True, inline="always")
def _sarsa_lambda_run(model, params, rng, out, run):
    """Run ``run`` of Sarsa(lambda) or, for ``params.trace == DUTCH``, true online
    Sarsa(lambda) (the boxes of section 12.7): the loop of the tabular kernel
    (:mod:`tabular.learn.traces`) with ``x(s, a) . w`` for ``Q(s, a)``, its draws and its
    arithmetic in the same order (``delta`` before the trace decays). The traces restart
    at 0 with each episode; ``q_old`` is ``w_{t-1} . x_t``, the value of ``(S_t, A_t)``
    the previous step bootstrapped from."""
    w = out.w[run]
    X, gamma, alpha, eps = params.features, params.gamma, params.alpha, params.epsilon
    trace = params.trace
    q_row = np.zeros(X.shape[1])
    z = np.zeros(w.shape[0])
    for episode in range(params.episodes):
        z[:] = 0.0
        s = sample_start(model, rng)
        action_values(X[s], w, q_row)
        a = epsilon_greedy_action(q_row, eps, rng)
        q_old = 0.0
        total = 0.0
        steps = 0
        while True:
            steps += 1
            s_next, r, is_done = sample_step(model, s, a, rng)
            total += r
            x = X[s, a]
            q = linear_value(x, w)
            action_values(X[s_next], w, q_row)
            a_next = epsilon_greedy_action(q_row, eps, rng)
            delta = td_error(sarsa_target(r, gamma, q_row, a_next, is_done), q)
            decay_traces(z, gamma * params.lam)
            if trace == DUTCH:
                dutch_features(z, x, alpha)
                true_online_step(w, z, x, delta, true_online_gap(q, q_old), alpha)
                q_old = q_row[a_next]
            else:
                if trace == CLEARING:
                    clear_other_actions(z, X[s], a)
                if trace == ACCUMULATING:
                    accumulate_features(z, x)
                else:
                    replace_features(z, x)
                trace_step(w, z, alpha * delta)
            if is_done or steps == params.max_steps:
                break
            s, a = s_next, a_next
        record_totals(out, run, episode, total, steps)


@runs_kernel
def _sarsa_lambda(model, params, rng_states, out):
    """Every run of :func:`_sarsa_lambda_run`."""
    for run in range(rng_states.shape[0]):
        _sarsa_lambda_run(model, params, local_stream(rng_states[run]), out, run)

#: The traces of :func:`semi_gradient_sarsa_lambda`, by name.
_TRACES = {"accumulating": ACCUMULATING, "replacing": REPLACING, "clearing": CLEARING}


def _check_binary(X: np.ndarray, trace: int) -> None:
    """A ``ValueError`` naming ``features`` and ``trace`` (a kernel constant) unless every
    feature is 0 or 1: the replacing trace (and the clearing one, which replaces) sets the
    active features' traces to 1, which is defined for binary features only (the box of
    section 12.7)."""
    other = ((X != 0.0) & (X != 1.0)).any(axis=2)
    if other.any():
        s, a = np.argwhere(other)[0]
        named = next(name for name, code in _TRACES.items() if code == trace)
        raise ValueError(f"features[{s}, {a}] holds values other than 0 and 1: "
                         f"trace={named!r} needs binary features (the box of section "
                         "12.7); use trace='accumulating'")


def _episodic(driver, name, mdp, features, *, gamma, episodes, alpha, epsilon, n_step,
              initial_w, seed, runs, max_steps, lam=0.0, trace=ACCUMULATING
              ) -> LinearControlResult:
    """Check the arguments of episodic learner ``name``, run ``driver``, shape its result
    (``lam`` and ``trace``, a kernel constant, for Sarsa(lambda))."""
    ep = episode_args(mdp, gamma=gamma, episodes=episodes, runs=runs, max_steps=max_steps)
    X = check_state_action_features(features, ep.mdp.n_states, ep.mdp.n_actions)
    if trace in (REPLACING, CLEARING):
        _check_binary(X, trace)
    check_finite_rewards(ep.mdp)
    params = LinearControlParams(
        features=X, gamma=ep.gamma, alpha=check_positive("alpha", alpha), beta=0.0,
        epsilon=check_unit_interval("epsilon", epsilon),
        n_step=check_positive_int("n_step", n_step, high=ep.max_steps),
        lam=check_unit_interval("lam", lam), trace=trace,
        episodes=ep.episodes, max_steps=ep.max_steps)
    w0 = initial_values("initial_w", initial_w, (X.shape[2],))
    check_fits("runs", 8 * ep.n_runs * (X.shape[2] + 2 * ep.episodes),
               f"runs={ep.n_runs:,} with {X.shape[2]:,} weights and {ep.episodes:,} episodes")
    out = LinearControlOutputs(per_run(w0, ep.n_runs), np.zeros((ep.n_runs, ep.episodes)),
                               np.zeros((ep.n_runs, ep.episodes), dtype=np.int64))
    over_runs(driver, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), out)
    check_weights(name, out.w)
    return LinearControlResult(episode_returns=with_run_axis(out.returns, runs),
                               episode_lengths=with_run_axis(out.lengths, runs),
                               w=with_run_axis(out.w, runs), features=X)


@shares_paragraphs
def semi_gradient_sarsa(mdp: MDPLike, features: npt.ArrayLike, *, gamma: float = 1.0,
                        episodes: int = 500, alpha: float = 0.1, epsilon: float = 0.1,
                        initial_w: npt.ArrayLike = 0.0, seed: int | None = 0,
                        runs: int | None = None, max_steps: int | None = None
                        ) -> LinearControlResult:
    """Episodic semi-gradient SARSA (the box of section 10.1): ``w <- w + alpha [R + gamma
    q(S', A', w) - q(S, A, w)] x(S, A)`` (eq. 10.1), ``A'`` the action the epsilon-greedy
    policy on ``q(S', ., w)`` takes next; ``R - q(S, A, w)`` alone where the episode
    ends. With one-hot state-action features it is :func:`tabular.sarsa`.

    Parameters
    ----------
    {mdp}
    features : ``x(s, a)``, ``[S, A, d]``
        (:func:`~tabular.linear.features.state_action_features`, or your own).
    {gamma episodes}
    alpha : the constant step size, a number > 0, default 0.1.
    epsilon : the constant exploration in [0, 1], default 0.1.
    {initial_w}
    seed, runs, max_steps : as for every learner (:func:`~tabular.sarsa`): the seed of
        the runs' streams (default 0), ``None`` for one run without a run axis or ``n``
        runs, and the step limit per episode (default: the env's time limit, else
        10,000).

    Returns a :class:`LinearControlResult`: ``w`` ``[d]``, ``Q``, ``V``, ``policy``,
    ``episode_returns`` and ``episode_lengths``; a leading run axis when ``runs=n``.
    """
    return _episodic(_semi_gradient_sarsa, "semi_gradient_sarsa", mdp, features, gamma=gamma,
                     episodes=episodes, alpha=alpha, epsilon=epsilon, n_step=1,
                     initial_w=initial_w, seed=seed, runs=runs, max_steps=max_steps)


@shares_paragraphs
def n_step_semi_gradient_sarsa(mdp: MDPLike, features: npt.ArrayLike, *, n_step: int = 4,
                               gamma: float = 1.0, episodes: int = 500, alpha: float = 0.1,
                               epsilon: float = 0.1, initial_w: npt.ArrayLike = 0.0,
                               seed: int | None = 0, runs: int | None = None,
                               max_steps: int | None = None) -> LinearControlResult:
    """Episodic semi-gradient n-step SARSA (the box of section 10.2): ``w <- w + alpha
    [G_{t:t+n} - q(S_t, A_t, w)] x(S_t, A_t)`` (eq. 10.4) with ``G_{t:t+n} = R_{t+1} +
    ... + gamma^{n-1} R_{t+n} + gamma^n q(S_{t+n}, A_{t+n}, w)`` (eq. 10.3; the rewards
    alone past the end of the episode). ``n_step=1`` is :func:`semi_gradient_sarsa`;
    with one-hot state-action features it is :func:`tabular.n_step_sarsa`.

    Parameters
    ----------
    {mdp}
    features : ``x(s, a)``, ``[S, A, d]`` (as for :func:`semi_gradient_sarsa`).
    {n_step gamma episodes}
    alpha : the constant step size, a number > 0, default 0.1.
    epsilon : the constant exploration in [0, 1], default 0.1.
    {initial_w}
    seed, runs, max_steps : as for every learner (:func:`~tabular.sarsa`).

    Returns a :class:`LinearControlResult` (see :func:`semi_gradient_sarsa`).
    """
    return _episodic(_n_step_sarsa, "n_step_semi_gradient_sarsa", mdp, features, gamma=gamma,
                     episodes=episodes, alpha=alpha, epsilon=epsilon, n_step=n_step,
                     initial_w=initial_w, seed=seed, runs=runs, max_steps=max_steps)


@shares_paragraphs
def semi_gradient_sarsa_lambda(mdp: MDPLike, features: npt.ArrayLike, *, lam: float = 0.9,
                               trace: str = "accumulating", gamma: float = 1.0,
                               episodes: int = 500, alpha: float = 0.1, epsilon: float = 0.1,
                               initial_w: npt.ArrayLike = 0.0, seed: int | None = 0,
                               runs: int | None = None, max_steps: int | None = None
                               ) -> LinearControlResult:
    """Sarsa(lambda) with linear features (the box of section 12.7, "Sarsa(lambda) with
    binary features and linear function approximation", for any features when the
    trace accumulates): at every step ``delta = R + gamma q(S', A', w) - q(S, A, w)``
    (``R - q(S, A, w)`` where the episode ends), the trace decays and takes the
    features of ``(S, A)``, then ``w <- w + alpha delta z`` (eq. 12.7); ``z = 0`` at each
    episode's start, ``A'`` the epsilon-greedy action taken next. ``lam = 0`` is
    :func:`semi_gradient_sarsa` and one-hot state-action features give
    :func:`tabular.sarsa_lambda`, bit for bit.

    Parameters
    ----------
    {mdp}
    features : ``x(s, a)``, ``[S, A, d]`` (as for :func:`semi_gradient_sarsa`); binary
        (every entry 0 or 1) for ``trace="replacing"`` and ``"clearing"``.
    lam : the trace decay in [0, 1], default 0.9.
    trace : ``"accumulating"`` (default: ``z <- gamma lam z + x(S, A)``, eq. 12.5),
        ``"replacing"`` (``z_i <- 1`` on the active features of ``(S, A)`` after the
        decay, eq. 12.12) or ``"clearing"``: after the decay, ``z_i <- 0`` on every
        feature active in ``x(S, a)`` for an action ``a != A`` (the traces of the
        other actions of the state just left, with state-action features their
        blocks of ``S``'s features), then ``z_i <- 1`` on the active features of ``(S,
        A)`` -- "Sarsa(lambda) with replacing traces and clearing the traces of other
        actions" of Figure 12.11 (section 12.7; Singh and Sutton 1996). With one-hot
        features it clears the row ``z(S, .)`` of the tabular trace.
    {gamma episodes}
    alpha : the constant step size, a number > 0, default 0.1; an accumulating trace sums
        up to ``1 / (1 - gamma lam)`` feature vectors, so ``alpha ||x||^2 / (1 - gamma
        lam)`` must stay well below 1.
    epsilon : the constant exploration in [0, 1], default 0.1.
    {initial_w}
    seed, runs, max_steps : as for every learner (:func:`~tabular.sarsa`).

    Returns a :class:`LinearControlResult` (see :func:`semi_gradient_sarsa`).
    """
    return _episodic(_sarsa_lambda, "semi_gradient_sarsa_lambda", mdp, features, gamma=gamma,
                     episodes=episodes, alpha=alpha, epsilon=epsilon, n_step=1,
                     initial_w=initial_w, seed=seed, runs=runs, max_steps=max_steps,
                     lam=lam, trace=check_trace(trace, _TRACES))


def true_online_linear_sarsa_lambda(mdp: MDPLike, features: npt.ArrayLike, *,
                                    lam: float = 0.9, gamma: float = 1.0, episodes: int = 500,
                                    alpha: float = 0.1, epsilon: float = 0.1,
                                    initial_w: npt.ArrayLike = 0.0, seed: int | None = 0,
                                    runs: int | None = None, max_steps: int | None = None
                                    ) -> LinearControlResult:
    """True online Sarsa(lambda) with linear features (the box of section 12.7): the dutch
    trace ``z <- gamma lam z + (1 - alpha gamma lam z . x) x`` (eq. 12.11), ``x = x(S,
    A)``, and ``w <- w + alpha (delta + Q - Q_old) z - alpha (Q - Q_old) x`` (eq. 12.10),
    ``Q = w . x`` and ``Q_old`` the value of ``(S, A)`` the previous step bootstrapped
    from. One-hot state-action features give :func:`tabular.true_online_sarsa_lambda`,
    bit for bit. (Named apart from that tabular function: the book calls both "true
    online Sarsa(lambda)".)

    Parameters
    ----------
    mdp, features, gamma, episodes, epsilon, initial_w : as for
        :func:`semi_gradient_sarsa`.
    lam : the trace decay in [0, 1], default 0.9.
    alpha : the constant step size, a number > 0, default 0.1.
    seed, runs, max_steps : as for every learner (:func:`~tabular.sarsa`).

    Returns a :class:`LinearControlResult` (see :func:`semi_gradient_sarsa`).
    """
    return _episodic(_sarsa_lambda, "true_online_linear_sarsa_lambda", mdp, features,
                     gamma=gamma, episodes=episodes, alpha=alpha, epsilon=epsilon, n_step=1,
                     initial_w=initial_w, seed=seed, runs=runs, max_steps=max_steps,
                     lam=lam, trace=DUTCH)


def differential_semi_gradient_sarsa(mdp: MDPLike, features: npt.ArrayLike, *,
                                     steps: int = 100_000, alpha: float = 0.01,
                                     beta: float = 0.01, epsilon: float = 0.1,
                                     initial_w: npt.ArrayLike = 0.0, seed: int | None = 0,
                                     runs: int | None = None) -> LinearDifferentialResult:
    """Differential semi-gradient SARSA (the box of section 10.3): one continuing run of
    ``steps`` time steps, acting epsilon-greedily on ``q(., ., w)``, with the differential
    TD error ``delta = R - Rbar + q(S', A', w) - q(S, A, w)`` (eq. 10.10), ``Rbar <- Rbar
    + beta delta`` and ``w <- w + alpha delta x(S, A)``; ``Rbar`` starts at 0. On-policy:
    ``Rbar`` estimates the average reward (eq. 10.6) of the epsilon-greedy behaviour.
    With one-hot state-action features it is :func:`tabular.differential_sarsa` with
    ``alpha_average = beta``.

    Parameters
    ----------
    mdp : a continuing :class:`~tabular.TabularMDP` (no outcome ends the episode; finite
        rewards), or a Gymnasium env with a transition table.
    features : ``x(s, a)``, ``[S, A, d]`` (as for :func:`semi_gradient_sarsa`).
    steps : time steps per run, default 100,000.
    alpha : the constant step size of ``w``, a number > 0, default 0.01.
    beta : the constant step size of ``Rbar``, in (0, 1], default 0.01.
    epsilon : the constant exploration in [0, 1], default 0.1.
    initial_w : the initial weights, a finite number or ``[d]`` array, default 0.0.
    seed : seed of the runs' random streams, default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs.

    Returns a :class:`LinearDifferentialResult`.
    """
    name = "differential_semi_gradient_sarsa"
    mdp = check_continuing_task(mdp, name)
    X = check_state_action_features(features, mdp.n_states, mdp.n_actions)
    beta = check_positive("beta", beta)
    if beta > 1.0:
        raise ValueError(f"beta must be in (0, 1] (a step size of Rbar), got {beta}")
    n = check_runs(runs)
    params = LinearControlParams(
        features=X, gamma=1.0, alpha=check_positive("alpha", alpha), beta=beta,
        epsilon=check_unit_interval("epsilon", epsilon), n_step=1, lam=0.0,
        trace=ACCUMULATING, episodes=1,
        max_steps=check_positive_int("steps", steps, high=MAX_TIME_STEPS))
    w0 = initial_values("initial_w", initial_w, (X.shape[2],))
    check_fits("runs", 8 * n * (X.shape[2] + 2), f"runs={n:,} with {X.shape[2]:,} weights")
    out = LinearDifferentialOutputs(per_run(w0, n), np.zeros(n), np.zeros(n))
    over_runs(_differential_sarsa, mdp.arrays, params, seed_states(seed, n), out)
    check_weights(name, out.w)
    return LinearDifferentialResult(w=with_run_axis(out.w, runs), features=X,
                                    average_reward=with_run_axis(out.average_reward, runs),
                                    reward_rate=with_run_axis(out.reward_rate, runs))
