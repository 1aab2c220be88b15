"""Learning linear value estimates from samples (Sutton & Barto, sections 9.3, 9.4, 9.8,
11.1-11.8 and 12.2-12.5).

- :func:`gradient_mc` -- gradient Monte Carlo (the box of section 9.3);
- :func:`semi_gradient_td` -- semi-gradient TD(0) (the box of section 9.3) and n-step
  semi-gradient TD (the box of section 10.2's prediction half, eq. 9.15 with the
  n-step return);
- :func:`off_policy_semi_gradient_td` -- with importance sampling (eq. 11.2), which
  can diverge (Baird's counterexample, section 11.2);
- :func:`tdc`, :func:`gtd2` -- the gradient-TD methods (section 11.7), true SGD on the
  projected Bellman error with secondary weights ``v``, stable off-policy;
- :func:`emphatic_td` -- one-step emphatic TD (section 11.8), stable off-policy in
  expectation;
- :func:`lstd` -- least-squares TD (section 9.8), the TD fixed point of the experience;
- :func:`semi_gradient_td_lambda` -- semi-gradient TD(lambda) with an accumulating trace
  (the box of section 12.2, eqs. 12.5-12.7);
- :func:`true_online_linear_td_lambda` -- true online TD(lambda) (the box of section
  12.5, eqs. 12.10-12.11), the online lambda-return algorithm computed exactly.

They are the tabular learners with ``x(s) . w`` in place of ``V(s)``
(:mod:`tabular.rules.linear`): the same episode loops, the same random draws in the
same order, so with :func:`~tabular.linear.features.one_hot` features
:func:`semi_gradient_td` is :func:`~tabular.td0` and :func:`gradient_mc` is
every-visit constant-alpha :func:`~tabular.mc_prediction`, bit for bit, and the
TD(lambda) learners are :func:`~tabular.td_lambda` (accumulating) and
:func:`~tabular.true_online_td_lambda`. As there, the returns of a stored episode are
computed backwards and its updates made in that order; an episode cut at ``max_steps``
bootstraps from the estimate of the state reached.

Their limits are exact (:mod:`tabular.linear.exact`): gradient MC's is the VE
minimiser, semi-gradient TD's and LSTD's the TD fixed point, TD(lambda)'s the
TD(lambda) fixed point (:func:`~tabular.linear.exact.td_fixed_point` with ``lam``).
The step size is a constant ``alpha`` (chapter 9's setting); an estimate that leaves
float64 raises ``FloatingPointError``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import categorical, seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import (
    check_fits,
    check_flag,
    check_positive,
    check_positive_int,
    check_unit_interval,
    policy_matrix,
)
from tabular.learn.arguments import episode_args, initial_values
from tabular.learn.episodes import episode_buffers, record_episode
from tabular.learn.outputs import close_episode, history_outputs, history_result
from tabular.learn.paragraphs import shares_paragraphs
from tabular.learn.td import n_step_td_run
from tabular.linear.features import check_features
from tabular.linear.results import LinearPredictionResult
from tabular.model.mdp import TabularMDP
from tabular.model.sampling import sample_start, sample_step
from tabular.results import with_run_axis
from tabular.rules.linear import (
    accumulate_features,
    dutch_features,
    followon_trace,
    gradient_step,
    gtd2_step,
    linear_value,
    tdc_step,
    trace_step,
    true_online_step,
)
from tabular.rules.nstep import importance_ratio
from tabular.rules.returns import discounted_return
from tabular.rules.traces import decay_traces, true_online_gap
from tabular.rules.values import td_error, td_target
from tabular.types import MDPLike, PolicyLike

#: The off-policy one-step learners, each a constant of its own driver.
OFF_POLICY_TD, TDC, GTD2, EMPHATIC_TD = 0, 1, 2, 3

#: The most entries of LSTD's matrices ``[runs, d, d]`` (800 MB of float64).
MAX_LSTD_ENTRIES = 10**8


class LinearParams(NamedTuple):
    """Hyper-parameters of the linear learners (a kernel argument).

    ``features``: ``X [S, d]``; ``policy``: ``[S, A]`` (the target policy off-policy);
    ``behaviour``: the behaviour policy ``[S, A]`` (the policy itself on-policy);
    ``gamma``: discount; ``alpha``:
    the constant step size; ``beta``: the step size of the secondary weights ``v`` of
    TDC and GTD2 (unused by the others); ``n_step``: the n of the n-step return (1: TD(0)),
    unused by gradient MC and LSTD; ``lam``: the trace decay of TD(lambda) and
    ``true_online``: its true online form (unused by the others); ``episodes``:
    episodes per run; ``max_steps``: the step limit per episode.
    """

    features: np.ndarray
    policy: np.ndarray
    behaviour: np.ndarray
    gamma: float
    alpha: float
    beta: float
    n_step: int
    lam: float
    true_online: bool
    episodes: int
    max_steps: int


class LinearOutputs(NamedTuple):
    """What a linear kernel fills, each with a leading run axis of length ``n``:
    ``w [n, d]`` (the initial weights on entry), ``returns`` and ``lengths`` of each
    episode ``[n, episodes]``; LSTD's sums ``A [n, d, d]`` and ``b [n, d]`` (empty
    ``[n, 0, 0]`` and ``[n, 0]`` for the other learners); ``v``: the secondary weights
    of TDC and GTD2 ``[n, d]`` (``[n, 0]`` for the others); ``history``: ``w`` after
    each episode ``[n, episodes, d]``, or ``[n, 0, d]`` when not asked for."""

    w: np.ndarray
    v: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray
    A: np.ndarray
    b: np.ndarray
    history: np.ndarray


@njit(cache=True, inline="always")
def _gradient_mc_run(model, params, rng, out, run):
    """Run ``run`` of gradient Monte Carlo (the box of section 9.3)."""
    w = out.w[run]
    X, gamma, alpha = params.features, params.gamma, params.alpha
    states, actions, rewards = episode_buffers(params.max_steps)
    for episode in range(params.episodes):
        T, terminated, total = record_episode(model, params.policy, rng, states, actions,
                                              rewards)
        G = 0.0 if terminated else linear_value(X[states[T]], w)
        for t in range(T - 1, -1, -1):
            G = discounted_return(rewards[t], gamma, G)
            gradient_step(w, X[states[t]], G, alpha)
        close_episode(out, run, episode, total, T, w)


@runs_kernel
def _gradient_mc(model, params, rng_states, out):
    """Every run of :func:`_gradient_mc_run`."""
    for run in range(rng_states.shape[0]):
        _gradient_mc_run(model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _semi_gradient_td(model, params, rng_states, out):
    """Every run of n-step semi-gradient TD (n = 1: the box of section 9.3): the loop of
    n-step TD (:func:`~tabular.learn.td.n_step_td_run`) on the weights ``w`` of ``x(s) .
    w``, with the constant step size ``alpha``."""
    for run in range(rng_states.shape[0]):
        n_step_td_run(model, params, local_stream(rng_states[run]), out, run, out.w[run],
                      params.features, params.alpha, None)


@njit(cache=True, inline="always")
def _gradient_td_step(correction, w, v, x, x_next, r, gamma, w_step, v_step):
    """TDC's (eq. 11.30, ``correction``) or GTD2's (eq. 11.29) step of ``w`` and the step
    ``v <- v + beta rho (delta - v . x) x`` of the secondary weights, both from ``w_t``
    and ``v_t``; ``w_step = alpha rho``, ``v_step = beta rho``."""
    delta = td_error(discounted_return(r, gamma, linear_value(x_next, w)), linear_value(x, w))
    x_dot_v = linear_value(x, v)
    if correction:
        tdc_step(w, x, x_next, delta, x_dot_v, gamma, w_step)
    else:
        gtd2_step(w, x, x_next, x_dot_v, gamma, w_step)
    gradient_step(v, x, delta, v_step)


@njit(cache=True, inline="always")
def _off_policy_run(method, model, params, rng, out, run):
    """Run ``run`` of an off-policy one-step learner, ``method`` a constant of each
    driver: act by the behaviour policy and weigh each step by ``rho = pi(A|S) /
    b(A|S)`` (eq. 11.1). Off-policy semi-gradient TD(0) (eq. 11.2) steps ``w`` by
    ``alpha rho delta x(S)``; emphatic TD (eq. 11.23-11.24, interest 1 in every state)
    scales that by the followon trace ``M_t``, which starts each episode at ``M_0 = 1``;
    TDC and GTD2 (:func:`_gradient_td_step`) take ``x(S') = 0`` where the episode ends."""
    w, v = out.w[run], out.v[run]
    X, gamma, alpha, beta = params.features, params.gamma, params.alpha, params.beta
    pi, b = params.policy, params.behaviour
    ended = np.zeros(X.shape[1])
    for episode in range(params.episodes):
        s = sample_start(model, rng)
        total = 0.0
        steps = 0
        emphasis = 0.0
        rho_before = 0.0
        while True:
            a = categorical(rng, b[s])
            s_next, r, is_done = sample_step(model, s, a, rng)
            total += r
            steps += 1
            rho = importance_ratio(pi[s, a], b[s, a])
            if method == TDC or method == GTD2:
                _gradient_td_step(method == TDC, w, v, X[s], ended if is_done else X[s_next],
                                  r, gamma, alpha * rho, beta * rho)
            else:
                if method == EMPHATIC_TD:
                    emphasis = followon_trace(emphasis, rho_before, gamma, 1.0)
                    rho_before = rho
                    step = alpha * emphasis * rho
                else:
                    step = alpha * rho
                G = discounted_return(r, gamma, 0.0 if is_done else linear_value(X[s_next], w))
                gradient_step(w, X[s], G, step)
            if is_done or steps == params.max_steps:
                break
            s = s_next
        close_episode(out, run, episode, total, steps, w)


@runs_kernel
def _off_policy_td(model, params, rng_states, out):
    """Every run of :func:`_off_policy_run`, the method ``OFF_POLICY_TD``."""
    for run in range(rng_states.shape[0]):
        _off_policy_run(OFF_POLICY_TD, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _tdc(model, params, rng_states, out):
    """Every run of :func:`_off_policy_run`, the method ``TDC``."""
    for run in range(rng_states.shape[0]):
        _off_policy_run(TDC, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _gtd2(model, params, rng_states, out):
    """Every run of :func:`_off_policy_run`, the method ``GTD2``."""
    for run in range(rng_states.shape[0]):
        _off_policy_run(GTD2, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _emphatic_td(model, params, rng_states, out):
    """Every run of :func:`_off_policy_run`, the method ``EMPHATIC_TD``."""
    for run in range(rng_states.shape[0]):
        _off_policy_run(EMPHATIC_TD, model, params, local_stream(rng_states[run]), out, run)


@njit(cache=True, inline="always")
def _lstd_run(model, params, rng, out, run):
    """Run ``run`` of LSTD's sums (section 9.8): ``A += x_t (x_t - gamma x_{t+1})^T`` and
    ``b += R_{t+1} x_t`` over every step, ``x_{t+1} = 0`` where the episode ends."""
    A, b, returns, lengths = out.A[run], out.b[run], out.returns[run], out.lengths[run]
    X, gamma = params.features, params.gamma
    d = X.shape[1]
    states, actions, rewards = episode_buffers(params.max_steps)
    for episode in range(params.episodes):
        T, terminated, total = record_episode(model, params.policy, rng, states, actions,
                                              rewards)
        for t in range(T):
            x = X[states[t]]
            x_next = X[states[t + 1]]
            flows = not (terminated and t == T - 1)
            for i in range(d):
                if x[i] != 0.0:
                    b[i] += rewards[t] * x[i]
                    for j in range(d):
                        A[i, j] += x[i] * (x[j] - gamma * x_next[j] if flows else x[j])
        returns[episode] = total
        lengths[episode] = T


@runs_kernel
def _lstd(model, params, rng_states, out):
    """Every run of :func:`_lstd_run`."""
    for run in range(rng_states.shape[0]):
        _lstd_run(model, params, local_stream(rng_states[run]), out, run)


@njit(cache=True, inline="always")
def _td_lambda_run(model, params, rng, out, run):
    """Run ``run`` of semi-gradient TD(lambda) (the box of section 12.2) or, with
    ``params.true_online``, true online TD(lambda) (the box of section 12.5): the loop
    of the tabular kernel (:mod:`tabular.learn.traces`) with ``x(s) . w`` for ``V(s)``,
    its draws and its arithmetic in the same order. The traces restart at 0 with each
    episode; ``v_old`` is ``w_{t-1} . x_t``, the value of ``S_t`` the previous step
    bootstrapped from."""
    w = out.w[run]
    X, policy, gamma, alpha = params.features, params.policy, params.gamma, params.alpha
    z = np.zeros(w.shape[0])
    for episode in range(params.episodes):
        z[:] = 0.0
        s = sample_start(model, rng)
        v_old = 0.0
        total = 0.0
        steps = 0
        while True:
            steps += 1
            a = categorical(rng, policy[s])
            s_next, r, is_done = sample_step(model, s, a, rng)
            total += r
            x = X[s]
            v = linear_value(x, w)
            v_next = linear_value(X[s_next], w)
            delta = td_error(td_target(r, gamma, v_next, is_done), v)
            decay_traces(z, gamma * params.lam)
            if params.true_online:
                dutch_features(z, x, alpha)
                true_online_step(w, z, x, delta, true_online_gap(v, v_old), alpha)
            else:
                accumulate_features(z, x)
                trace_step(w, z, alpha * delta)
            v_old = v_next
            if is_done or steps == params.max_steps:
                break
            s = s_next
        close_episode(out, run, episode, total, steps, w)


@runs_kernel
def _td_lambda(model, params, rng_states, out):
    """Every run of :func:`_td_lambda_run`."""
    for run in range(rng_states.shape[0]):
        _td_lambda_run(model, params, local_stream(rng_states[run]), out, run)


def check_finite_rewards(mdp: TabularMDP) -> None:
    """A ``ValueError`` when an outcome of positive probability pays ``-inf``: a linear
    estimate is finite."""
    if not np.isfinite(mdp.reward[mdp.prob > 0.0]).all():
        raise ValueError("the linear learners need finite rewards (a linear estimate "
                         "cannot be -inf); this model has a -inf reward")


def check_weights(name: str, w: np.ndarray, steps: str = "alpha") -> None:
    """A ``FloatingPointError`` when a learned weight left float64 (the run diverged),
    naming the step sizes ``steps`` to lower."""
    if not np.isfinite(w).all():
        raise FloatingPointError(f"{name} diverged (a weight left float64); lower {steps}: "
                                 "a step size times ||x(s)||^2 must stay well below 1")


def _linear_args(mdp, policy, features, *, gamma, episodes, alpha, runs, max_steps,
                 initial_w=0.0, n_step=1, behaviour=None, history=False, beta=None,
                 initial_v=0.0, lam=0.0, true_online=False,
                 sums=False, secondary=False):
    """The checked episode arguments, kernel parameters and outputs of a linear learner
    (``sums``: LSTD's, which keep its sums instead of a step size ``alpha``;
    ``secondary``: TDC's or GTD2's, which keep secondary weights ``v`` from
    ``initial_v`` with step size ``beta``). ``alpha`` and ``beta`` are checked whenever
    they are used: ``None`` is refused, not read as "not used"."""
    ep = episode_args(mdp, gamma=gamma, episodes=episodes, runs=runs, max_steps=max_steps)
    X = check_features(features, ep.mdp.n_states)
    check_finite_rewards(ep.mdp)
    d = X.shape[1]
    pi = policy_matrix(ep.mdp, policy, "target_policy" if behaviour is not None else "policy")
    b = pi if behaviour is None else policy_matrix(ep.mdp, behaviour, "behaviour_policy")
    uncovered = (pi > 0.0) & (b == 0.0)
    if uncovered.any():
        s, a = np.argwhere(uncovered)[0]
        raise ValueError(f"the behaviour policy never takes action {ep.mdp.action_name(a)} in "
                         f"state {ep.mdp.state_name(s)}, which the target policy takes "
                         "(importance sampling needs coverage, section 5.5)")
    params = LinearParams(
        features=X, policy=pi, behaviour=b, gamma=ep.gamma,
        alpha=1.0 if sums else check_positive("alpha", alpha),
        beta=check_positive("beta", beta) if secondary else 0.0,
        n_step=check_positive_int("n_step", n_step, high=ep.max_steps),
        lam=check_unit_interval("lam", lam), true_online=true_online, episodes=ep.episodes,
        max_steps=ep.max_steps)
    w0 = initial_values("initial_w", initial_w, (d,))
    v0 = initial_values("initial_v", initial_v, (d if secondary else 0,))
    lstd_size = d if sums else 0
    if ep.n_runs * lstd_size**2 > MAX_LSTD_ENTRIES:
        raise ValueError(f"lstd keeps a {d} x {d} matrix per run: {ep.n_runs} runs need "
                         f"{8 * ep.n_runs * d * d / 2**30:.1f} GiB; at most "
                         f"{MAX_LSTD_ENTRIES:,} entries (use fewer runs or features)")
    # every run's weights, secondary weights, LSTD sums and episode records, said before
    # any of them is allocated
    per_run = 8 * (3 * d + lstd_size * lstd_size + lstd_size + 2 * ep.episodes)
    check_fits("runs", ep.n_runs * per_run,
               f"runs={ep.n_runs:,} with {d:,} features and {ep.episodes:,} episodes")
    out = LinearOutputs(np.repeat(w0[None], ep.n_runs, axis=0),
                        np.repeat(v0[None], ep.n_runs, axis=0),
                        np.zeros((ep.n_runs, ep.episodes)),
                        np.zeros((ep.n_runs, ep.episodes), dtype=np.int64),
                        np.zeros((ep.n_runs, lstd_size, lstd_size)),
                        np.zeros((ep.n_runs, lstd_size)),
                        history_outputs(ep.n_runs, ep.episodes, d, check_flag("history", history)))
    return ep, params, out


def _result(name: str, out: LinearOutputs, X: np.ndarray, runs: int | None,
            w: np.ndarray | None = None, steps: str = "alpha") -> LinearPredictionResult:
    w = out.w if w is None else w
    check_weights(name, w, steps)
    check_weights(name, out.v, steps)
    secondary = with_run_axis(out.v, runs) if out.v.shape[-1] > 0 else None
    return LinearPredictionResult(episode_returns=with_run_axis(out.returns, runs),
                                  episode_lengths=with_run_axis(out.lengths, runs),
                                  w=with_run_axis(w, runs), features=X,
                                  w_history=history_result(out.history, runs),
                                  secondary_weights=secondary)


def _learn(name: str, driver, mdp, policy, features, seed, steps: str = "alpha",
           **options) -> LinearPredictionResult:
    """A sampled linear learner's run: its arguments checked (``options``: the keywords
    of :func:`_linear_args`), its ``driver`` over the runs, its result checked for
    divergence (``steps``: the step sizes to lower if it diverged)."""
    ep, params, out = _linear_args(mdp, policy, features, **options)
    over_runs(driver, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), out)
    return _result(name, out, params.features, options["runs"], steps=steps)


@shares_paragraphs
def gradient_mc(mdp: MDPLike, policy: PolicyLike, features: npt.ArrayLike, *,
                gamma: float = 1.0, episodes: int = 100, alpha: float = 2e-5,
                initial_w: npt.ArrayLike = 0.0, seed: int | None = 0,
                runs: int | None = None, max_steps: int | None = None,
                history: bool = False) -> LinearPredictionResult:
    """Gradient Monte Carlo prediction (the box of section 9.3):
    ``w <- w + alpha [G_t - v(S_t, w)] x(S_t)`` at every step of each episode, a true
    stochastic-gradient step of the value error (eq. 9.7), converging to its minimiser
    (:func:`~tabular.linear.exact.ve_minimiser`).

    Parameters
    ----------
    {mdp policy}
    features : ``X [S, d]`` (:mod:`tabular.linear.features`, or your own).
    {gamma episodes}
    alpha : the constant step size, default 2e-5 (Figure 9.1's).
    {initial_w}
    seed, runs, max_steps : as for every learner (:func:`~tabular.td0`): the seed of
        the runs' streams (default 0), ``None`` for one run without a run axis or ``n``
        runs, and the step limit per episode (default: the env's time limit, else
        10,000).
    history : also return ``w`` after every episode (``w_history``), default False.

    Returns a :class:`LinearPredictionResult`: ``w`` ``[d]``, ``V = X w``,
    ``episode_returns`` and ``episode_lengths``; a leading run axis when ``runs=n``.
    """
    return _learn("gradient_mc", _gradient_mc, mdp, policy, features, seed, gamma=gamma,
                  episodes=episodes, alpha=alpha, runs=runs, max_steps=max_steps,
                  initial_w=initial_w, history=history)


def semi_gradient_td(mdp: MDPLike, policy: PolicyLike, features: npt.ArrayLike, *,
                     gamma: float = 1.0, episodes: int = 100, alpha: float = 0.01,
                     n_step: int = 1, initial_w: npt.ArrayLike = 0.0,
                     seed: int | None = 0, runs: int | None = None,
                     max_steps: int | None = None,
                     history: bool = False) -> LinearPredictionResult:
    """Semi-gradient TD(0) (the box of section 9.3), ``w <- w + alpha [R + gamma
    v(S', w) - v(S, w)] x(S)``, or with ``n_step = n`` n-step semi-gradient TD (eq. 9.15
    with the n-step return ``G_{t:t+n}`` of eq. 7.1 bootstrapping from ``v(., w)``).
    It converges to the TD fixed point (eq. 9.12, :func:`~tabular.linear.exact.td_fixed_point`).

    Parameters
    ----------
    mdp, policy, features, gamma, episodes : as for :func:`gradient_mc`.
    alpha : the constant step size, default 0.01.
    n_step : the n of the n-step return, at most ``max_steps``, default 1 (TD(0)).
    initial_w : the initial weights, a finite number or ``[d]`` array, default 0.0.
    seed, runs, max_steps : as for every learner (:func:`~tabular.td0`).
    history : also return ``w`` after every episode (``w_history``), default False.

    Returns a :class:`LinearPredictionResult` (see :func:`gradient_mc`).
    """
    return _learn("semi_gradient_td", _semi_gradient_td, mdp, policy, features, seed,
                  gamma=gamma, episodes=episodes, alpha=alpha, runs=runs, max_steps=max_steps,
                  initial_w=initial_w, n_step=n_step, history=history)


@shares_paragraphs
def off_policy_semi_gradient_td(mdp: MDPLike, target_policy: PolicyLike,
                                behaviour_policy: PolicyLike, features: npt.ArrayLike, *,
                                gamma: float = 1.0, episodes: int = 100, alpha: float = 0.01,
                                initial_w: npt.ArrayLike = 0.0, seed: int | None = 0,
                                runs: int | None = None,
                                max_steps: int | None = None, history: bool = False
                                ) -> LinearPredictionResult:
    """Off-policy semi-gradient TD(0) (eq. 11.2): act by ``behaviour_policy``, and update
    ``w <- w + alpha rho_t delta_t x(S_t)`` with ``rho_t = pi(A_t|S_t) / b(A_t|S_t)``
    (eq. 11.1) and the TD error ``delta_t = R + gamma v(S', w) - v(S, w)``. Its expected
    update is :func:`~tabular.linear.exact.expected_td_update` with the behaviour's
    state distribution, which need not converge: on Baird's counterexample
    (:class:`~tabular.envs.BairdCounterexample`) it diverges (section 11.2).

    Parameters
    ----------
    {mdp}
    target_policy, behaviour_policy : ``pi`` and ``b``, any form of policy; ``b`` must
        take every action ``pi`` takes.
    features : ``X [S, d]`` (:mod:`tabular.linear.features`, or your own).
    {gamma episodes}
    alpha : the constant step size, default 0.01.
    {initial_w}
    seed, runs, max_steps : as for every learner (:func:`~tabular.td0`).
    {history_w}

    Returns a :class:`LinearPredictionResult` (see :func:`gradient_mc`). A run that
    diverges past float64 raises ``FloatingPointError``.
    """
    return _learn("off_policy_semi_gradient_td", _off_policy_td, mdp, target_policy, features,
                  seed, behaviour=behaviour_policy, gamma=gamma, episodes=episodes,
                  alpha=alpha, runs=runs, max_steps=max_steps, initial_w=initial_w,
                  history=history)


@shares_paragraphs
def tdc(mdp: MDPLike, target_policy: PolicyLike, behaviour_policy: PolicyLike,
        features: npt.ArrayLike, *, gamma: float = 1.0, episodes: int = 100,
        alpha: float = 0.005, beta: float = 0.05, initial_w: npt.ArrayLike = 0.0,
        initial_v: npt.ArrayLike = 0.0, seed: int | None = 0, runs: int | None = None,
        max_steps: int | None = None, history: bool = False) -> LinearPredictionResult:
    """TD(0) with gradient correction, TDC (eq. 11.30, section 11.7): act by
    ``behaviour_policy`` and, with ``rho_t = pi(A_t|S_t) / b(A_t|S_t)`` and the TD error
    ``delta_t``, update ``w <- w + alpha rho_t [delta_t x_t - gamma x_{t+1} (x_t . v)]``
    and ``v <- v + beta rho_t [delta_t - v . x_t] x_t``: stochastic gradient descent on
    the projected Bellman error, with ``v`` tracking ``E[x x^T]^{-1} E[rho delta x]``
    (eq. 11.28). ``x_{t+1} = 0`` where the episode ends. Its expected update is
    :func:`~tabular.linear.exact.expected_tdc_update`; it converges where off-policy
    semi-gradient TD diverges (Baird's counterexample, Figure 11.5), to the TD fixed
    point of the behaviour's state distribution.

    Parameters
    ----------
    mdp, target_policy, behaviour_policy, features, gamma, episodes : as for
        :func:`off_policy_semi_gradient_td`.
    alpha : the constant step size of ``w``, default 0.005 (Figure 11.5's).
    beta : the constant step size of ``v``, default 0.05 (Figure 11.5's); the theory
        wants it the larger, so that ``v`` tracks ``w``.
    initial_w, initial_v : the initial weights, each a finite number or ``[d]`` array,
        default 0.0.
    seed, runs, max_steps : as for every learner (:func:`~tabular.td0`).
    {history_w}

    Returns a :class:`LinearPredictionResult` (see :func:`gradient_mc`) with
    ``secondary_weights`` ``v``. A run that diverges past float64 raises
    ``FloatingPointError``.
    """
    return _learn("tdc", _tdc, mdp, target_policy, features, seed, steps="alpha or beta",
                  behaviour=behaviour_policy, secondary=True, gamma=gamma, episodes=episodes,
                  alpha=alpha, beta=beta, initial_w=initial_w, initial_v=initial_v, runs=runs,
                  max_steps=max_steps, history=history)


def gtd2(mdp: MDPLike, target_policy: PolicyLike, behaviour_policy: PolicyLike,
         features: npt.ArrayLike, *, gamma: float = 1.0, episodes: int = 100,
         alpha: float = 0.005, beta: float = 0.05, initial_w: npt.ArrayLike = 0.0,
         initial_v: npt.ArrayLike = 0.0, seed: int | None = 0, runs: int | None = None,
         max_steps: int | None = None, history: bool = False) -> LinearPredictionResult:
    """GTD2 (eq. 11.29, section 11.7): as :func:`tdc`, with the weight step
    ``w <- w + alpha rho_t (x_t - gamma x_{t+1}) (x_t . v)`` (the gradient of the PBE
    with ``v`` in place of its expectation, uncorrected). Its expected update is
    :func:`~tabular.linear.exact.expected_gtd2_update`.

    Parameters
    ----------
    mdp, target_policy, behaviour_policy, features, gamma, episodes : as for :func:`tdc`.
    alpha, beta : the step sizes of ``w`` and ``v``, default 0.005 and 0.05.
    initial_w, initial_v : the initial weights, as for :func:`tdc`.
    seed, runs, max_steps : as for every learner (:func:`~tabular.td0`).
    history : also return ``w`` after every episode, default False.

    Returns a :class:`LinearPredictionResult` with ``secondary_weights`` (see :func:`tdc`).
    """
    return _learn("gtd2", _gtd2, mdp, target_policy, features, seed, steps="alpha or beta",
                  behaviour=behaviour_policy, secondary=True, gamma=gamma, episodes=episodes,
                  alpha=alpha, beta=beta, initial_w=initial_w, initial_v=initial_v, runs=runs,
                  max_steps=max_steps, history=history)


def emphatic_td(mdp: MDPLike, target_policy: PolicyLike, behaviour_policy: PolicyLike,
                features: npt.ArrayLike, *, gamma: float = 1.0, episodes: int = 100,
                alpha: float = 0.03, initial_w: npt.ArrayLike = 0.0, seed: int | None = 0,
                runs: int | None = None, max_steps: int | None = None,
                history: bool = False) -> LinearPredictionResult:
    """One-step emphatic TD (eq. 11.23-11.24, section 11.8) with interest ``I_t = 1``:
    ``w <- w + alpha M_t rho_t delta_t x_t`` with the followon trace ``M_t = gamma
    rho_{t-1} M_{t-1} + 1``, ``M_{-1} = 0`` at each episode's start. Its expected
    update is :func:`~tabular.linear.exact.expected_emphatic_td_update`, stable
    off-policy; the samples' variance can be very large (on Baird's counterexample it
    grows without bound with the trace, section 11.9).

    Parameters
    ----------
    mdp, target_policy, behaviour_policy, features, gamma, episodes : as for
        :func:`off_policy_semi_gradient_td`.
    initial_w, seed, runs, max_steps, history : as for
        :func:`off_policy_semi_gradient_td`.
    alpha : the constant step size, default 0.03 (Figure 11.6's).

    Returns a :class:`LinearPredictionResult` (see :func:`gradient_mc`). A run that
    diverges past float64 raises ``FloatingPointError``.
    """
    return _learn("emphatic_td", _emphatic_td, mdp, target_policy, features, seed,
                  behaviour=behaviour_policy, gamma=gamma, episodes=episodes, alpha=alpha,
                  runs=runs, max_steps=max_steps, initial_w=initial_w, history=history)


def lstd(mdp: MDPLike, policy: PolicyLike, features: npt.ArrayLike, *, gamma: float = 1.0,
         episodes: int = 100,
         epsilon: float = 1e-6, seed: int | None = 0, runs: int | None = None,
         max_steps: int | None = None) -> LinearPredictionResult:
    """Least-squares TD (section 9.8): ``w = (epsilon I + A_hat)^{-1} b_hat`` with
    ``A_hat = sum_t x_t (x_t - gamma x_{t+1})^T`` and ``b_hat = sum_t R_{t+1} x_t`` over
    every step of the run (``x_{t+1} = 0`` where an episode ends): the TD fixed point
    of the experience itself, which tends to the exact one as the episodes grow
    (``A_hat / N -> A``, ``b_hat / N -> b`` of eq. 9.12). The sums are solved once at
    the end rather than by the book's incremental Sherman-Morrison inverse: the same
    answer with no drift of the inverse.

    Parameters
    ----------
    mdp, policy, features, gamma, episodes : as for :func:`semi_gradient_td`.
    epsilon : the regulariser ``epsilon I`` (the book's ``A^{-1}_0 = epsilon^{-1} I``),
        a number > 0, default 1e-6.
    seed, runs, max_steps : as for every learner (:func:`~tabular.td0`).

    Returns a :class:`LinearPredictionResult` (see :func:`gradient_mc`).
    """
    eps = check_positive("epsilon", epsilon)
    ep, params, out = _linear_args(mdp, policy, features, gamma=gamma, episodes=episodes,
                                   alpha=None, runs=runs, max_steps=max_steps, sums=True)
    over_runs(_lstd, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), out)
    return _result("lstd", out, params.features, runs, _lstd_weights(out, eps))


def _lstd_weights(out: LinearOutputs, eps: float) -> np.ndarray:
    """``(epsilon I + A_hat)^{-1} b_hat`` of every run, or a ``ValueError`` naming what to
    change: sums that overflowed float64 (features or rewards too large) or a system
    singular in float64 (``epsilon`` too small beside the sums)."""
    if not (np.isfinite(out.A).all() and np.isfinite(out.b).all()):
        raise ValueError("lstd's sums A_hat and b_hat overflow float64: the features or the "
                         "rewards are too large (scale them down)")
    d = out.A.shape[-1]
    try:
        w = np.linalg.solve(eps * np.eye(d) + out.A, out.b[..., None])[..., 0]
    except np.linalg.LinAlgError:
        raise ValueError(f"lstd: epsilon I + A_hat is singular in float64 (epsilon = {eps:g} "
                         "is lost beside the sums); use a larger epsilon or fewer, "
                         "independent features") from None
    if not np.isfinite(w).all():
        raise ValueError(f"lstd: the weights overflow float64 (epsilon = {eps:g} leaves epsilon "
                         "I + A_hat too close to singular); use a larger epsilon")
    return w


def semi_gradient_td_lambda(mdp: MDPLike, policy: PolicyLike, features: npt.ArrayLike, *,
                            lam: float = 0.9, gamma: float = 1.0, episodes: int = 100,
                            alpha: float = 0.01, initial_w: npt.ArrayLike = 0.0,
                            seed: int | None = 0, runs: int | None = None,
                            max_steps: int | None = None, history: bool = False
                            ) -> LinearPredictionResult:
    """Semi-gradient TD(lambda) (the box of section 12.2): at every step decay the trace
    and add the features, ``z <- gamma lam z + x(S)`` (the accumulating trace, eq.
    12.5), then ``w <- w + alpha delta z`` (eq. 12.7) with ``delta = R + gamma v(S', w)
    - v(S, w)`` (eq. 12.6); ``z = 0`` at each episode's start. Its expected update
    vanishes at the TD(lambda) fixed point (:func:`~tabular.linear.exact.td_fixed_point`
    with the same ``lam``; ``lam = 1``: the VE minimiser). ``lam = 0`` is
    :func:`semi_gradient_td` and one-hot features give :func:`~tabular.td_lambda`, bit
    for bit.

    Parameters
    ----------
    mdp, policy, features, gamma, episodes : as for :func:`gradient_mc`.
    lam : the trace decay in [0, 1], default 0.9.
    alpha : the constant step size, default 0.01; a trace sums up to ``1 / (1 - gamma
        lam)`` feature vectors, so ``alpha ||x||^2 / (1 - gamma lam)`` must stay well
        below 1.
    initial_w : the initial weights, a finite number or ``[d]`` array, default 0.0.
    seed, runs, max_steps : as for every learner (:func:`~tabular.td0`).
    history : also return ``w`` after every episode, default False.

    Returns a :class:`LinearPredictionResult` (see :func:`gradient_mc`). A run that
    diverges past float64 raises ``FloatingPointError``.
    """
    return _learn("semi_gradient_td_lambda", _td_lambda, mdp, policy, features, seed,
                  true_online=False, lam=lam, gamma=gamma, episodes=episodes, alpha=alpha,
                  initial_w=initial_w, runs=runs, max_steps=max_steps, history=history)


def true_online_linear_td_lambda(mdp: MDPLike, policy: PolicyLike, features: npt.ArrayLike,
                                 *, lam: float = 0.9, gamma: float = 1.0, episodes: int = 100,
                                 alpha: float = 0.01, initial_w: npt.ArrayLike = 0.0,
                                 seed: int | None = 0, runs: int | None = None,
                                 max_steps: int | None = None, history: bool = False
                                 ) -> LinearPredictionResult:
    """True online TD(lambda) (the box of section 12.5) with linear features: the dutch
    trace ``z <- gamma lam z + (1 - alpha gamma lam z . x) x`` (eq. 12.11) and ``w <- w
    + alpha (delta + V - V_old) z - alpha (V - V_old) x`` (eq. 12.10), ``V = w . x(S)``
    and ``V_old`` the value of ``S`` the previous step bootstrapped from. Its weights
    are those of the online lambda-return algorithm (section 12.4) at every step, for
    any features; as ``alpha -> 0`` it is semi-gradient TD(lambda) and shares its
    fixed point. One-hot features give :func:`~tabular.true_online_td_lambda`, bit for
    bit. (Named apart from that tabular function: the book calls both "true online
    TD(lambda)".)

    Parameters
    ----------
    mdp, policy, features, lam, gamma, episodes, initial_w, seed, runs, max_steps, history :
        as for :func:`semi_gradient_td_lambda`.
    alpha : the constant step size, default 0.01.

    Returns a :class:`LinearPredictionResult` (see :func:`gradient_mc`); as
    :func:`semi_gradient_td_lambda`, a run that diverges raises ``FloatingPointError``.
    """
    return _learn("true_online_linear_td_lambda", _td_lambda, mdp, policy, features, seed,
                  true_online=True, lam=lam, gamma=gamma, episodes=episodes, alpha=alpha,
                  initial_w=initial_w, runs=runs, max_steps=max_steps, history=history)
