"""Monte Carlo learning (Sutton & Barto, chapter 5, and eq. 6.1).

- :func:`mc_prediction` -- first-visit or every-visit MC estimation of ``V^pi``
  (section 5.1), by sample averages (the default) or with a constant step size,
  ``V(S_t) <- V(S_t) + alpha [G_t - V(S_t)]``: constant-alpha MC, eq. 6.1;
- :func:`mc_control` -- on-policy first-visit MC control with an epsilon-soft policy
  (section 5.4), MC with exploring starts (section 5.3), and off-policy MC control
  with ordinary or weighted importance sampling (sections 5.5-5.7).

Returns are computed backwards over the stored episode, ``G <- gamma G + R_{t+1}``.
An episode cut at ``max_steps`` has not terminated: its return bootstraps the tail
from the current estimate of the state where it was cut (``V(S_T)``, or the target
policy's expectation of ``Q(S_T, .)``), so that with a large enough ``max_steps``
(every episode terminating) the estimates are the pure Monte Carlo ones. ``-inf``
rewards are exact (see :mod:`tabular.learning`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .checks import check_gamma, policy_matrix
from .kernels.rng import categorical, randint, seed_states
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
    epsilon_greedy_action,
    epsilon_greedy_probs,
    expectation,
    update_toward,
)
from .schedules import as_schedule, inverse, schedule_value

ON_POLICY, EXPLORING_STARTS, OFF_POLICY = 0, 1, 2
_METHODS = {"on_policy": ON_POLICY, "exploring_starts": EXPLORING_STARTS,
            "off_policy": OFF_POLICY}
ORDINARY, WEIGHTED = 0, 1
_SAMPLINGS = {"ordinary": ORDINARY, "weighted": WEIGHTED}


@njit(cache=True, inline="always")
def discounted_return(reward, gamma, later_return):
    """``G_t = R_{t+1} + gamma G_{t+1}`` (eq. 3.9)."""
    return reward + discounted(gamma, later_return)


@njit(cache=True, inline="always")
def importance_weighted_return(ratio, G):
    """``rho G`` of ordinary importance sampling (eq. 5.5); an episode the target policy
    would never produce (``rho = 0``) contributes 0, even with ``G = -inf``."""
    if ratio == 0.0:
        return 0.0
    return ratio * G


# --------------------------------------------------------------------- prediction


@njit(cache=True)
def _mc_prediction_run(next_state, prob, reward, done, start_cdf, policy, gamma, alpha,
                       first_visit, episodes, max_steps, rng, V, returns, lengths, history):
    """One run of first-/every-visit MC prediction (the box of section 5.1)."""
    n_states = V.shape[0]
    visits = np.zeros(n_states, dtype=np.int64)
    first_time = np.full(n_states, -1, dtype=np.int64)
    states = np.zeros(max_steps + 1, dtype=np.int64)
    rewards = np.zeros(max_steps + 1)
    for episode in range(episodes):
        s = sample_start(ModelArrays(next_state, prob, reward, done, start_cdf), rng)
        terminated = False
        T = 0
        total = 0.0
        while not terminated and T < max_steps:
            states[T] = s
            if first_time[s] < 0:
                first_time[s] = T
            a = categorical(rng, policy[s])
            s, r, terminated = sample_step(ModelArrays(next_state, prob, reward, done, start_cdf), s, a, rng)
            T += 1
            rewards[T] = r
            total += r
        G = 0.0 if terminated else V[s]
        for t in range(T - 1, -1, -1):
            G = discounted_return(rewards[t + 1], gamma, G)
            s_t = states[t]
            if not first_visit or first_time[s_t] == t:
                visits[s_t] += 1
                V[s_t] = update_toward(V[s_t], G, schedule_value(alpha, visits[s_t]))
        for t in range(T):
            first_time[states[t]] = -1
        returns[episode] = total
        lengths[episode] = T
        if history.shape[0] > 0:
            history[episode] = V


@njit(cache=True, parallel=True)
def _mc_prediction(next_state, prob, reward, done, start_cdf, policy, gamma, alpha,
                   first_visit, episodes, max_steps, rng_states, V, returns, lengths, history):
    for run in prange(rng_states.shape[0]):
        _mc_prediction_run(next_state, prob, reward, done, start_cdf, policy, gamma, alpha,
                           first_visit, episodes, max_steps, rng_states[run].copy(), V[run],
                           returns[run], lengths[run], history[run])


def mc_prediction(mdp, policy, *, gamma: float = 1.0, episodes: int = 100, alpha=None,
                  first_visit: bool = True, initial_V=0.0, seed: int | None = 0,
                  runs: int = 1, max_steps: int = 10_000,
                  history: bool = False) -> PredictionResult:
    """Estimate ``V^pi`` from complete episodes (section 5.1).

    ``alpha=None`` averages the returns of each state (step size ``1/N(s)``, eq. 2.3:
    the classical MC estimate); a number or schedule gives constant-alpha MC,
    ``V(S_t) <- V(S_t) + alpha [G_t - V(S_t)]`` (eq. 6.1), as in Example 6.2.
    ``first_visit``: update only at the first visit of a state in an episode (else at
    every visit). ``policy``: ``int [S]``, ``[S, A]`` or a SoftmaxPolicy.
    ``history=True`` also returns ``V`` after every episode.
    """
    mdp = as_mdp(mdp)
    gamma = check_gamma(gamma)
    episodes, runs, max_steps = check_episode_args(episodes, runs, max_steps)
    pi = policy_matrix(mdp, policy)
    alpha = as_schedule("alpha", inverse() if alpha is None else alpha)
    V = per_run(initial_values("initial_V", initial_V, (mdp.n_states,)), runs)
    returns = np.zeros((runs, episodes))
    lengths = np.zeros((runs, episodes), dtype=np.int64)
    trace = np.zeros((runs, episodes if history else 0, mdp.n_states))
    _mc_prediction(*mdp.arrays, pi, gamma, alpha.params, bool(first_visit),
                   episodes, max_steps, seed_states(seed, runs), V, returns, lengths, trace)
    return PredictionResult(squeeze_runs(returns, runs), squeeze_runs(lengths, runs),
                            squeeze_runs(V, runs),
                            squeeze_runs(trace, runs) if history else None)


# --------------------------------------------------------------------- control


@njit(cache=True)
def _mc_control_run(method, sampling, first_visit, next_state, prob, reward, done, start_cdf,
                    es_states, gamma, alpha, epsilon, episodes, max_steps, rng, Q, returns,
                    lengths):
    """One run of on-policy, exploring-starts or off-policy MC control (sections 5.3-5.7)."""
    n_states, n_actions = Q.shape
    visits = np.zeros((n_states, n_actions), dtype=np.int64)
    weight_sum = np.zeros((n_states, n_actions))  # C(s, a) of weighted IS (eq. 5.8)
    first_time = np.full((n_states, n_actions), -1, dtype=np.int64)
    states = np.zeros(max_steps + 1, dtype=np.int64)
    actions = np.zeros(max_steps, dtype=np.int64)
    rewards = np.zeros(max_steps + 1)
    behaviour_prob = np.zeros(max_steps)
    probs = np.zeros(n_actions)
    for episode in range(episodes):
        eps = schedule_value(epsilon, episode + 1)
        target_eps = eps if method == ON_POLICY else 0.0
        if method == EXPLORING_STARTS:  # every pair can start an episode (section 5.3)
            s = es_states[randint(rng, es_states.shape[0])]
        else:
            s = sample_start(ModelArrays(next_state, prob, reward, done, start_cdf), rng)
        terminated = False
        T = 0
        total = 0.0
        while not terminated and T < max_steps:
            if method == EXPLORING_STARTS and T == 0:
                a = randint(rng, n_actions)
            else:
                a = epsilon_greedy_action(Q[s], eps, rng)
            if method == OFF_POLICY:
                epsilon_greedy_probs(Q[s], eps, probs)
                behaviour_prob[T] = probs[a]
            states[T], actions[T] = s, a
            if first_time[s, a] < 0:
                first_time[s, a] = T
            s, r, terminated = sample_step(ModelArrays(next_state, prob, reward, done, start_cdf), s, a, rng)
            T += 1
            rewards[T] = r
            total += r
        if terminated:
            G = 0.0
        else:  # cut, not terminated: the target policy's value of the state reached
            epsilon_greedy_probs(Q[s], target_eps, probs)
            G = expectation(probs, Q[s])
        W = 1.0  # importance-sampling ratio of the steps after t (eq. 5.3)
        for t in range(T - 1, -1, -1):
            G = discounted_return(rewards[t + 1], gamma, G)
            s_t, a_t = states[t], actions[t]
            if method != OFF_POLICY:
                if not first_visit or first_time[s_t, a_t] == t:
                    visits[s_t, a_t] += 1
                    Q[s_t, a_t] = update_toward(Q[s_t, a_t], G,
                                                schedule_value(alpha, visits[s_t, a_t]))
                continue
            if sampling == WEIGHTED:
                weight_sum[s_t, a_t] += W
                Q[s_t, a_t] = update_toward(Q[s_t, a_t], G, W / weight_sum[s_t, a_t])
            else:
                visits[s_t, a_t] += 1
                Q[s_t, a_t] = update_toward(Q[s_t, a_t], importance_weighted_return(W, G),
                                            schedule_value(alpha, visits[s_t, a_t]))
            epsilon_greedy_probs(Q[s_t], 0.0, probs)  # the greedy target policy pi
            W *= probs[a_t] / behaviour_prob[t]
            if W == 0.0 and sampling == WEIGHTED:  # no earlier step can matter (section 5.7)
                break
        for t in range(T):
            first_time[states[t], actions[t]] = -1
        returns[episode] = total
        lengths[episode] = T


@njit(cache=True, parallel=True)
def _mc_control(method, sampling, first_visit, next_state, prob, reward, done, start_cdf,
                es_states, gamma, alpha, epsilon, episodes, max_steps, rng_states, Q, returns,
                lengths):
    for run in prange(rng_states.shape[0]):
        _mc_control_run(method, sampling, first_visit, next_state, prob, reward, done,
                        start_cdf, es_states, gamma, alpha, epsilon, episodes, max_steps,
                        rng_states[run].copy(), Q[run], returns[run], lengths[run])


def exploring_start_states(mdp) -> np.ndarray:
    """The states an episode can be in: the start states and every state reached with
    positive probability without the episode ending. Exploring starts begin in one of
    them, uniformly, with a uniformly random action."""
    live = (mdp.prob > 0.0) & ~mdp.done
    reached = np.zeros(mdp.n_states, dtype=bool)
    reached[mdp.next_state[live]] = True
    return np.flatnonzero(reached | (mdp.start > 0.0)).astype(np.int64)


def mc_control(mdp, *, method: str = "on_policy", gamma: float = 1.0, episodes: int = 500,
               epsilon=None, alpha=None, importance_sampling: str = "weighted",
               first_visit: bool = True, initial_Q=0.0, seed: int | None = 0, runs: int = 1,
               max_steps: int = 10_000) -> ControlResult:
    """Monte Carlo control: generalised policy iteration on ``Q`` from complete episodes.

    ``method``:

    - ``"on_policy"`` -- first-visit MC control for epsilon-soft policies (section 5.4):
      act epsilon-greedily on ``Q``, average the returns of each pair;
    - ``"exploring_starts"`` -- Monte Carlo ES (section 5.3): each episode starts in a
      uniformly random state of :func:`exploring_start_states` with a uniformly random
      action, then follows the greedy policy (``epsilon`` defaults to 0 here);
    - ``"off_policy"`` -- off-policy MC control (section 5.7): learn the greedy policy
      (ties split uniformly) from an epsilon-greedy behaviour policy on ``Q``
      (``epsilon > 0`` needed for coverage; 1 is the uniform random policy), with
      ``importance_sampling="weighted"`` (eq. 5.8, step ``W / C(s, a)``) or
      ``"ordinary"`` (eq. 5.5, averaging ``rho G``).

    ``epsilon``: a number or schedule over episodes (default 0.1, or 0 for exploring
    starts). ``alpha``: ``None`` for sample averages, else a number or schedule over the
    visits of each pair (constant-alpha MC); not used by weighted importance sampling.
    ``first_visit`` applies to the on-policy and exploring-starts methods.
    """
    mdp = as_mdp(mdp)
    if method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}, got {method!r}")
    if importance_sampling not in _SAMPLINGS:
        raise ValueError(f"importance_sampling must be one of {sorted(_SAMPLINGS)}, "
                         f"got {importance_sampling!r}")
    kind, sampling = _METHODS[method], _SAMPLINGS[importance_sampling]
    gamma = check_gamma(gamma)
    episodes, runs, max_steps = check_episode_args(episodes, runs, max_steps)
    if epsilon is None:
        epsilon = 0.0 if kind == EXPLORING_STARTS else 0.1
    epsilon = as_schedule("epsilon", epsilon, low_inclusive=kind != OFF_POLICY)
    if kind == OFF_POLICY and sampling == WEIGHTED and alpha is not None:
        raise ValueError("alpha is not used by weighted importance sampling (its step size "
                         "is W / C(s, a), eq. 5.8); leave alpha=None")
    alpha = as_schedule("alpha", inverse() if alpha is None else alpha)
    Q = per_run(initial_values("initial_Q", initial_Q, (mdp.n_states, mdp.n_actions)), runs)
    returns = np.zeros((runs, episodes))
    lengths = np.zeros((runs, episodes), dtype=np.int64)
    _mc_control(kind, sampling, bool(first_visit), *mdp.arrays,
                exploring_start_states(mdp), gamma, alpha.params, epsilon.params, episodes,
                max_steps, seed_states(seed, runs), Q, returns, lengths)
    return ControlResult(squeeze_runs(returns, runs), squeeze_runs(lengths, runs),
                         squeeze_runs(Q, runs))
