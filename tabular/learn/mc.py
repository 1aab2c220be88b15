"""Monte Carlo learning (Sutton & Barto, chapter 5, and eq. 6.1).

- :func:`mc_prediction` -- first-visit or every-visit MC estimation of ``V^pi``
  (section 5.1), by sample averages (the default) or with a constant step size,
  ``V(S_t) <- V(S_t) + alpha [G_t - V(S_t)]``: constant-alpha MC, eq. 6.1;
- :func:`mc_control` -- on-policy first-visit MC control with an epsilon-soft policy
  (section 5.4), MC with exploring starts (section 5.3), and off-policy MC control
  with ordinary or weighted importance sampling (sections 5.5-5.7).

Returns are computed backwards over the stored episode, ``G <- R_{t+1} + gamma G``
(:func:`~tabular.rules.returns.discounted_return`, eq. 3.9), and ordinary importance
sampling averages :func:`~tabular.rules.returns.importance_weighted_return` (eq. 5.5).
An episode cut at ``max_steps`` has not terminated: its return bootstraps the tail
from the current estimate of the state where it was cut (``V(S_T)``, or the target
policy's expectation of ``Q(S_T, .)``), so that with a large enough ``max_steps``
(every episode terminating) the estimates are the pure Monte Carlo ones. ``-inf``
rewards are exact (see :mod:`tabular.learn.divergence`). Kernels are runs drivers
(:mod:`tabular._numba.runs`) over one run function each.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import borrowed, local_stream
from tabular._numba.rng import randint, seed_states
from tabular._numba.runs import SIMPLIFYING_PIPELINE, over_runs, runs_kernel
from tabular.checks import check_flag, policy_matrix
from tabular.learn.arguments import episode_args, initial_values
from tabular.learn.episodes import episode_buffers, mark_first_visits, record_episode
from tabular.learn.outputs import (
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
from tabular.rules.returns import discounted_return, importance_weighted_return
from tabular.rules.values import (
    epsilon_greedy_action,
    epsilon_greedy_probs,
    expectation,
    update_toward,
)
from tabular.schedules import as_schedule, inverse, read_schedule, schedule_value
from tabular.types import MDPLike, PolicyLike, StepSize

ON_POLICY, EXPLORING_STARTS, OFF_POLICY = 0, 1, 2
_METHODS = {"on_policy": ON_POLICY, "exploring_starts": EXPLORING_STARTS,
            "off_policy": OFF_POLICY}
ORDINARY, WEIGHTED = 0, 1
#: The importance-sampling estimators by name (section 5.5), shared with
#: tabular.learn.mc_off_policy.
SAMPLINGS = {"ordinary": ORDINARY, "weighted": WEIGHTED}


class MCPredictionParams(NamedTuple):
    """Hyper-parameters of Monte Carlo prediction (a kernel argument).

    ``policy``: the policy evaluated, ``[S, A]``; ``gamma``: discount; ``alpha``:
    step-size schedule ``float64[4]`` over the visits of each state
    (:mod:`tabular.schedules`); ``first_visit``: update at first visits only;
    ``episodes``: episodes per run; ``max_steps``: step limit per episode.
    """

    policy: np.ndarray
    gamma: float
    alpha: np.ndarray
    first_visit: bool
    episodes: int
    max_steps: int


class MCControlParams(NamedTuple):
    """Hyper-parameters of Monte Carlo control (a kernel argument).

    ``method``: ``ON_POLICY``, ``EXPLORING_STARTS`` or ``OFF_POLICY``; ``sampling``:
    ``ORDINARY`` or ``WEIGHTED`` importance sampling (off-policy only);
    ``first_visit``: update at first visits only (on-policy and exploring starts);
    ``gamma``: discount; ``alpha``: step-size schedule over the visits of each pair;
    ``epsilon``: exploration schedule over episodes; ``episodes``: episodes per run;
    ``max_steps``: step limit per episode; ``start_states``: the states an exploring
    start draws from (:func:`~tabular.learn.mc.exploring_start_states`).
    """

    method: int
    sampling: int
    first_visit: bool
    gamma: float
    alpha: np.ndarray
    epsilon: np.ndarray
    episodes: int
    max_steps: int
    start_states: np.ndarray


# --------------------------------------------------------------------- prediction


@njit(cache=True, parallel=SIMPLIFYING_PIPELINE)  # fewer reference counts: see docs/decisions/
def _mc_prediction_run(model, params, rng, out, run):
    """Run ``run`` of first-/every-visit MC prediction (the box of section 5.1)."""
    V = borrowed(out.V[run])
    policy, gamma, max_steps = params.policy, params.gamma, params.max_steps
    alpha = read_schedule(params.alpha)
    n_states = V.shape[0]
    visits = np.zeros(n_states, dtype=np.int64)
    first_time = np.full(n_states, -1, dtype=np.int64)
    states, actions, rewards = episode_buffers(max_steps)
    for episode in range(params.episodes):
        T, terminated, total = record_episode(model, policy, rng, states, actions, rewards)
        mark_first_visits(states, T, first_time)
        G = 0.0 if terminated else V[states[T]]
        for t in range(T - 1, -1, -1):
            G = discounted_return(rewards[t], gamma, G)
            s_t = states[t]
            if not params.first_visit or first_time[s_t] == t:
                visits[s_t] += 1
                V[s_t] = update_toward(V[s_t], G, schedule_value(alpha, visits[s_t]))
        for t in range(T):
            first_time[states[t]] = -1
        close_episode(out, run, episode, total, T, V)


@runs_kernel
def _mc_prediction(model, params, rng_states, out):
    """Every run of :func:`_mc_prediction_run`."""
    for run in range(rng_states.shape[0]):
        _mc_prediction_run(model, params, local_stream(rng_states[run]), out, run)


@shares_paragraphs
def mc_prediction(mdp: MDPLike, policy: PolicyLike, *, gamma: float = 1.0, episodes: int = 100,
                  alpha: StepSize | None = None, first_visit: bool = True,
                  initial_V: npt.ArrayLike = 0.0, seed: int | None = 0, runs: int | None = None,
                  max_steps: int | None = None, history: bool = False) -> PredictionResult:
    """Estimate ``V^pi`` from complete episodes (first-visit MC prediction, section 5.1).

    Parameters
    ----------
    {mdp policy gamma episodes}
    alpha : default ``None``: average the returns of each state (step size
        ``1/N(s)``, eq. 2.3: the classical MC estimate); a number in (0, 1] or a
        :mod:`tabular.schedules` schedule over the visits of each state gives
        constant-alpha MC, ``V(S_t) <- V(S_t) + alpha [G_t - V(S_t)]`` (eq. 6.1), as
        in Example 6.2.
    first_visit : update only at the first visit of a state in an episode (else at
        every visit), default True.
    {initial_V seed runs max_steps_V history_V}

    Returns a :class:`~tabular.learn.results.PredictionResult`: ``V`` ``[S]``; ``V_history``
    ``[episodes, S]`` when ``history=True``, else ``None``; ``episode_returns``
    (undiscounted sum of rewards) and ``episode_lengths`` (steps), ``[episodes]``;
    each with a leading run axis when ``runs=n``.
    """
    ep = episode_args(mdp, gamma=gamma, episodes=episodes, runs=runs, max_steps=max_steps)
    params = MCPredictionParams(
        policy=policy_matrix(ep.mdp, policy), gamma=ep.gamma,
        alpha=as_schedule("alpha", inverse() if alpha is None else alpha).params,
        first_visit=check_flag("first_visit", first_visit), episodes=ep.episodes,
        max_steps=ep.max_steps)
    out = prediction_outputs(initial_values("initial_V", initial_V, (ep.mdp.n_states,)),
                             ep.n_runs, ep.episodes, history)
    over_runs(_mc_prediction, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), out)
    return prediction_result(out, runs, ep.mdp)


# --------------------------------------------------------------------- control


@njit(cache=True, parallel=SIMPLIFYING_PIPELINE)  # fewer reference counts: see docs/decisions/
def _mc_control_run(model, params, rng, out, run):
    """Run ``run`` of on-policy, exploring-starts or off-policy MC control (sections
    5.3-5.7)."""
    Q = borrowed(out.Q[run])
    start_states = params.start_states
    method, sampling, gamma, max_steps = (params.method, params.sampling, params.gamma,
                                          params.max_steps)
    alpha, epsilon = read_schedule(params.alpha), read_schedule(params.epsilon)
    n_states, n_actions = Q.shape
    visits = np.zeros((n_states, n_actions), dtype=np.int64)
    weight_sum = np.zeros((n_states, n_actions))  # C(s, a) of weighted IS (eq. 5.8)
    first_time = np.full((n_states, n_actions), -1, dtype=np.int64)
    states = np.zeros(max_steps + 1, dtype=np.int64)
    actions = np.zeros(max_steps, dtype=np.int64)
    rewards = np.zeros(max_steps + 1)
    behaviour_prob = np.zeros(max_steps)
    probs = np.zeros(n_actions)
    for episode in range(params.episodes):
        eps = schedule_value(epsilon, episode + 1)
        target_eps = eps if method == ON_POLICY else 0.0
        if method == EXPLORING_STARTS:  # every pair can start an episode (section 5.3)
            s = start_states[randint(rng, start_states.shape[0])]
        else:
            s = sample_start(model, rng)
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
            s, r, terminated = sample_step(model, s, a, rng)
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
                if not params.first_visit or first_time[s_t, a_t] == t:
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
        record_totals(out, run, episode, total, T)


@runs_kernel
def _mc_control(model, params, rng_states, out):
    """Every run of :func:`_mc_control_run`."""
    for run in range(rng_states.shape[0]):
        _mc_control_run(model, params, local_stream(rng_states[run]), out, run)


def exploring_start_states(mdp) -> np.ndarray:
    """The states an episode can be in: the start states and every state reached with
    positive probability without the episode ending. Exploring starts (section 5.3)
    begin in one of them, uniformly, with a uniformly random action.

    ``mdp``: a :class:`~tabular.TabularMDP`. Returns their indices, int64, ascending.
    """
    live = (mdp.prob > 0.0) & ~mdp.done
    reached = np.zeros(mdp.n_states, dtype=bool)
    reached[mdp.next_state[live]] = True
    return np.flatnonzero(reached | (mdp.start > 0.0)).astype(np.int64)


@shares_paragraphs
def mc_control(mdp: MDPLike, *, method: str = "on_policy", gamma: float = 1.0, episodes: int = 500,
               epsilon: StepSize | None = None, alpha: StepSize | None = None,
               importance_sampling: str = "weighted", first_visit: bool = True,
               initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0, runs: int | None = None,
               max_steps: int | None = None) -> ControlResult:
    """Monte Carlo control: generalised policy iteration on ``Q`` from complete episodes.

    Parameters
    ----------
    {mdp}
    method : default ``"on_policy"``: first-visit MC control for epsilon-soft policies
        (section 5.4): act epsilon-greedily on ``Q``, average the returns of each pair;
        ``"exploring_starts"``: Monte Carlo ES (section 5.3): each episode starts in a
        uniformly random state of :func:`~tabular.learn.mc.exploring_start_states` with a uniformly
        random action, then follows the greedy policy; ``"off_policy"``: off-policy MC
        control (section 5.7): learn the greedy policy (ties split uniformly) from an
        epsilon-greedy behaviour policy on ``Q``.
    {gamma episodes}
    epsilon : exploration, a number or a :mod:`tabular.schedules` schedule over
        episodes; default ``None``: 0.1, or 0 for exploring starts. Off-policy needs
        ``epsilon > 0`` for coverage (1 is the uniform random behaviour).
    alpha : default ``None``: average the returns of each pair (step ``1/N(s, a)``,
        eq. 2.3); a number in (0, 1] or a schedule over the visits of each pair gives
        constant-alpha MC. Weighted importance sampling takes none (leave ``None``).
    importance_sampling : off-policy only: ``"weighted"`` (default; eq. 5.8, step
        ``W / C(s, a)``) or ``"ordinary"`` (eq. 5.5, averaging ``rho G``).
    first_visit : on-policy and exploring starts: update only at the first visit of a
        pair in an episode (else at every visit), default True.
    {initial_Q seed runs}
    max_steps : the step limit per episode (a cut episode's return bootstraps from the
        target policy's expectation of ``Q(S_T, .)``), default ``None``: the env's time
        limit (``mdp.max_episode_steps``), else 10,000.

    Returns a :class:`~tabular.learn.results.ControlResult`: ``Q`` ``[S, A]``; ``policy``, its
    greedy policy (int64 ``[S]``); ``V = max_a Q``; ``episode_returns`` (undiscounted
    sum of rewards) and ``episode_lengths`` (steps) of the behaviour, ``[episodes]``;
    each with a leading run axis when ``runs=n``.
    """
    ep = episode_args(mdp, gamma=gamma, episodes=episodes, runs=runs, max_steps=max_steps)
    if method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}, got {method!r}")
    if importance_sampling not in SAMPLINGS:
        raise ValueError(f"importance_sampling must be one of {sorted(SAMPLINGS)}, "
                         f"got {importance_sampling!r}")
    kind, sampling = _METHODS[method], SAMPLINGS[importance_sampling]
    if epsilon is None:
        epsilon = 0.0 if kind == EXPLORING_STARTS else 0.1
    epsilon = as_schedule("epsilon", epsilon, low_inclusive=kind != OFF_POLICY)
    if kind == OFF_POLICY and sampling == WEIGHTED and alpha is not None:
        raise ValueError("alpha is not used by weighted importance sampling (its step size "
                         "is W / C(s, a), eq. 5.8); leave alpha=None")
    alpha = as_schedule("alpha", inverse() if alpha is None else alpha)
    out = control_outputs(
        initial_values("initial_Q", initial_Q, (ep.mdp.n_states, ep.mdp.n_actions)),
        ep.n_runs, ep.episodes)
    params = MCControlParams(method=kind, sampling=sampling,
                             first_visit=check_flag("first_visit", first_visit),
                             gamma=ep.gamma, alpha=alpha.params, epsilon=epsilon.params,
                             episodes=ep.episodes, max_steps=ep.max_steps,
                             start_states=exploring_start_states(ep.mdp))
    over_runs(_mc_control, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), out)
    return control_result(out, runs, ep.mdp)
