"""Eligibility traces (Sutton & Barto, chapter 12), tabular case.

Prediction, returning a :class:`~tabular.learn.results.PredictionResult` like
:func:`~tabular.td0`: :func:`offline_lambda_return` (section 12.1), :func:`td_lambda`
with an accumulating, replacing or dutch trace (section 12.2) and
:func:`true_online_td_lambda` (section 12.5). Control, returning a
:class:`~tabular.learn.results.ControlResult` like :func:`~tabular.sarsa`:
:func:`sarsa_lambda`, :func:`true_online_sarsa_lambda` (section 12.7) and
:func:`watkins_q_lambda` (section 12.10).

The loops compose the rules of :mod:`tabular.rules.traces` and
:mod:`tabular.rules.values`; conventions (exploration, cut episodes) are those of
:mod:`tabular.learn.td`. Each table entry moves with its own step size, the schedule's value at
its own visit count (eq. 12.7 with a diagonal step size: a rarely visited state's large
step does not shake every state on the trace); the true online identities hold for a
constant step size. With ``lam = 0``, TD(lambda) is :func:`~tabular.td0`, Sarsa(lambda)
:func:`~tabular.sarsa` and Watkins's Q(lambda) :func:`~tabular.q_learning`, number for
number.

``-inf`` rewards are exact (see :mod:`tabular.learn.divergence`). In prediction a ``-inf`` TD
error runs along the traces: each state on them led, with positive probability under
the policy evaluated, to the ``-inf``. In control it sets only the pair that met it
(whose value is then exactly ``-inf``): the pairs behind it made choices that a better
policy may avoid, so, as in one-step SARSA and Q-learning, a ``-inf`` reaches them only
through their own targets.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import categorical, seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import check_unit_interval, policy_matrix
from tabular.learn.arguments import episode_args, initial_values
from tabular.learn.divergence import value_limit
from tabular.learn.episodes import record_episode
from tabular.learn.outputs import (
    close_episode,
    control_result,
    prediction_outputs,
    prediction_result,
    record_totals,
)
from tabular.learn.paragraphs import shares_paragraphs
from tabular.learn.results import ControlResult, PredictionResult
from tabular.learn.td import control_inputs
from tabular.model.sampling import sample_start, sample_step
from tabular.rules.traces import (
    ACCUMULATING,
    CLEARING,
    DUTCH,
    REPLACING,
    decay_traces,
    lambda_returns,
    traced_update,
    true_online_gap,
    visit_trace,
)
from tabular.rules.values import (
    epsilon_greedy_action,
    max_value,
    q_learning_target,
    sarsa_target,
    td_error,
    td_target,
    update_toward,
)
from tabular.schedules import as_schedule, read_schedule, schedule_value
from tabular.types import MDPLike, PolicyLike, StepSize

TD_LAMBDA, TRUE_ONLINE, OFFLINE = 0, 1, 2
#: The control methods' codes (``LambdaControlParams.method``).
SARSA_LAMBDA, TRUE_ONLINE_SARSA, WATKINS = 0, 1, 2
_TRACES = {"accumulating": ACCUMULATING, "replacing": REPLACING, "dutch": DUTCH}
#: Control's traces: those of prediction and the replacing trace that clears the traces
#: of the state's other actions (section 12.7, Figure 12.11).
_CONTROL_TRACES = {**_TRACES, "clearing": CLEARING}
#: The two readings of the offline lambda-return's targets (:func:`offline_lambda_return`).
_TARGETS = ("frozen", "sweep")


class LambdaParams(NamedTuple):
    """Hyper-parameters of the prediction methods (a kernel argument): ``method``
    (``TD_LAMBDA``, ``TRUE_ONLINE`` or ``OFFLINE``), ``lam``, ``trace`` (``ACCUMULATING``,
    ``REPLACING`` or ``DUTCH``), ``sweep`` (the offline targets from the estimate as the
    end-of-episode sweep leaves it, not as the episode began), then ``policy``,
    ``gamma``, ``alpha``, ``episodes`` and ``max_steps`` as in
    :class:`tabular.learn.td.TDPredictionParams`."""

    method: int
    lam: float
    trace: int
    sweep: bool
    policy: np.ndarray
    gamma: float
    alpha: np.ndarray
    episodes: int
    max_steps: int


class LambdaControlParams(NamedTuple):
    """Hyper-parameters of the control methods: ``method`` (:data:`SARSA_LAMBDA`,
    :data:`TRUE_ONLINE_SARSA` or :data:`WATKINS`), ``lam``, ``trace``, then those of
    :class:`tabular.learn.td.TDControlParams`."""

    method: int
    lam: float
    trace: int
    gamma: float
    alpha: np.ndarray
    epsilon: np.ndarray
    episodes: int
    max_steps: int


# --------------------------------------------------------------------- prediction


@njit(cache=True, inline="always")
def _offline_run(model, params, rng, out, run):
    """One run of the offline lambda-return algorithm (eq. 12.4): the updates run
    forwards, towards the lambda-returns of the estimate the episode started with, or
    with ``params.sweep`` of the estimate as the sweep has left it (then each target is
    recomputed, ``O(T)`` a step)."""
    V = out.V[run]
    policy, max_steps = params.policy, params.max_steps
    alpha = read_schedule(params.alpha)
    visits = np.zeros(V.shape[0], dtype=np.int64)
    states = np.zeros(max_steps + 1, dtype=np.int64)
    actions = np.zeros(max_steps, dtype=np.int64)
    values = np.zeros(max_steps + 1)
    rewards = np.zeros(max_steps)
    dones = np.zeros(max_steps, dtype=np.bool_)
    G = np.zeros(max_steps)
    for episode in range(params.episodes):
        T, terminated, total = record_episode(model, policy, rng, states, actions, rewards)
        dones[T - 1] = terminated  # only the last step can end the episode
        for t in range(T):
            if t == 0 or params.sweep:  # G[t:] from V as it is now
                for k in range(t + 1, T + 1):
                    values[k] = V[states[k]]
                lambda_returns(rewards[t:T], values[t:T + 1], dones[t:T], params.gamma,
                               params.lam, G[t:T])
            s_t = states[t]
            visits[s_t] += 1
            V[s_t] = update_toward(V[s_t], G[t], schedule_value(alpha, visits[s_t]))
        dones[T - 1] = False  # all False again for the next episode
        close_episode(out, run, episode, total, T, V)


@njit(cache=True, inline="always")
def _td_lambda_run(model, params, rng, out, run):
    """One run of TD(lambda) (the box of section 12.2) or true online TD(lambda) (the box
    of section 12.5), ``params.method``."""
    V = out.V[run]
    policy, gamma, max_steps = params.policy, params.gamma, params.max_steps
    alpha = read_schedule(params.alpha)
    visits = np.zeros(V.shape[0], dtype=np.int64)
    step_sizes = np.zeros(V.shape[0])  # each state's step size at its visit count
    z = np.zeros(V.shape[0])
    for episode in range(params.episodes):
        z[:] = 0.0
        s = sample_start(model, rng)
        v_old = 0.0  # V(S) as the previous step bootstrapped from it
        total = 0.0
        steps = 0
        while True:
            steps += 1
            a = categorical(rng, policy[s])
            s_next, r, is_done = sample_step(model, s, a, rng)
            total += r
            visits[s] += 1
            step_sizes[s] = schedule_value(alpha, visits[s])
            v_next = V[s_next]
            delta = td_error(td_target(r, gamma, v_next, is_done), V[s])
            decay_traces(z, gamma * params.lam)
            z[s] = visit_trace(params.trace, z[s], step_sizes[s])
            gap = true_online_gap(V[s], v_old) if params.method == TRUE_ONLINE else 0.0
            traced_update(V, z, step_sizes, delta + gap)
            V[s] -= step_sizes[s] * gap  # the -alpha (V - V_old) x_t term of eq. 12.10
            v_old = v_next
            if is_done or steps == max_steps:
                break
            s = s_next
        close_episode(out, run, episode, total, steps, V)


@njit(cache=True, inline="always")
def _lambda_prediction_run(model, params, rng, out, run):
    """Run ``run`` of any prediction method, ``params.method`` (read at run time: one
    kernel serves the three)."""
    if params.method == OFFLINE:
        _offline_run(model, params, rng, out, run)
    else:
        _td_lambda_run(model, params, rng, out, run)


@runs_kernel
def _lambda_prediction(model, params, rng_states, out):
    """Every run of :func:`_lambda_prediction_run`."""
    for run in range(rng_states.shape[0]):
        _lambda_prediction_run(model, params, local_stream(rng_states[run]), out, run)


def check_trace(trace, kinds: dict[str, int] = _TRACES) -> int:
    """The kernel constant of trace name ``trace`` among ``kinds``; a ``ValueError``
    naming ``trace`` otherwise."""
    if not isinstance(trace, str) or trace not in kinds:
        raise ValueError(f"trace must be one of {', '.join(map(repr, kinds))}, "
                         f"got {trace!r}")
    return kinds[trace]


def _check_targets(targets) -> bool:
    """Whether ``targets`` asks for the sweep's reading; a ``ValueError`` naming
    ``targets`` unless it is one of the two."""
    if not isinstance(targets, str) or targets not in _TARGETS:
        raise ValueError(f"targets must be one of {', '.join(map(repr, _TARGETS))}, "
                         f"got {targets!r}")
    return targets == "sweep"


def _predict(method, mdp, policy, *, lam, trace, gamma, episodes, alpha, initial_V, seed,
             runs, max_steps, history, sweep=False) -> PredictionResult:
    """Check the arguments of a prediction method, run its runs, return their result."""
    ep = episode_args(mdp, gamma=gamma, episodes=episodes, runs=runs, max_steps=max_steps)
    params = LambdaParams(method=method, lam=check_unit_interval("lam", lam), trace=trace,
                          sweep=sweep,
                          policy=policy_matrix(ep.mdp, policy), gamma=ep.gamma,
                          alpha=as_schedule("alpha", alpha).params, episodes=ep.episodes,
                          max_steps=ep.max_steps)
    V0 = initial_values("initial_V", initial_V, (ep.mdp.n_states,))
    out = prediction_outputs(V0, ep.n_runs, ep.episodes, history)
    over_runs(_lambda_prediction, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), out)
    # an accumulating trace can grow past 1 / alpha and push V past every target
    return prediction_result(out, runs, ep.mdp, value_limit(ep.mdp, ep.gamma, V0, out.lengths))


def offline_lambda_return(mdp: MDPLike, policy: PolicyLike, *, lam: float = 0.9,
                          gamma: float = 1.0, episodes: int = 100, alpha: StepSize = 0.1,
                          initial_V: npt.ArrayLike = 0.0, seed: int | None = 0,
                          runs: int | None = None, max_steps: int | None = None,
                          history: bool = False, targets: str = "frozen"
                          ) -> PredictionResult:
    """Estimate ``V^pi`` by the offline lambda-return algorithm (section 12.1): at the
    end of each episode, ``V(S_t) <- V(S_t) + alpha [G^lam_t - V(S_t)]`` for ``t = 0, ...,
    T-1`` in turn (eq. 12.4).

    Eq. 12.4 leaves open which estimate the lambda-returns (eq. 12.3) bootstrap from
    while the sweep runs; ``targets`` picks one of the two readings:

    - ``"frozen"`` (default): the estimate the episode started with, so every target
      of the episode is fixed before the first update (``lam = 0`` is then
      batch-of-one-episode TD(0));
    - ``"sweep"``: the estimate as the sweep has left it, ``V(S_k)`` already moved by
      the episode's earlier updates, as the book's reference code computes them. The
      two differ only where a state recurs within the episode, by ``O(alpha^2)``.

    Figure 12.3 is drawn with ``"sweep"``, the reading closer to the book's curves (the
    ``lambda_walk`` experiment): its ``lam = 0`` curve is TD(0)'s, and its best error is
    below n-step TD's, as the book reports; the frozen reading's best equals n-step
    TD's. ``lam = 1`` is constant-alpha every-visit Monte Carlo (eq. 6.1) in either
    reading: nothing is bootstrapped.

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
    policy : the policy evaluated, any form: greedy ``int [S]``, stochastic ``[S, A]`` or
        a :class:`~tabular.SoftmaxPolicy`.
    lam : the lambda of the lambda-return, in [0, 1], default 0.9.
    alpha : step size in (0, 1], or a :mod:`tabular.schedules` schedule over the visits of
        each state, default 0.1.
    gamma, episodes (default 100), initial_V, seed, runs, max_steps, history :
        as for :func:`~tabular.td0`.
    targets : ``"frozen"`` (default) or ``"sweep"``, the estimate the lambda-returns
        bootstrap from (above).

    Returns a :class:`~tabular.learn.results.PredictionResult`, as :func:`~tabular.td0` does.
    """
    return _predict(OFFLINE, mdp, policy, lam=lam, trace=ACCUMULATING, gamma=gamma,
                    episodes=episodes, alpha=alpha, initial_V=initial_V, seed=seed, runs=runs,
                    max_steps=max_steps, history=history, sweep=_check_targets(targets))


@shares_paragraphs
def td_lambda(mdp: MDPLike, policy: PolicyLike, *, lam: float = 0.9, trace: str = "accumulating",
              gamma: float = 1.0, episodes: int = 100, alpha: StepSize = 0.1,
              initial_V: npt.ArrayLike = 0.0, seed: int | None = 0, runs: int | None = None,
              max_steps: int | None = None, history: bool = False) -> PredictionResult:
    """Estimate ``V^pi`` by TD(lambda) (the box of section 12.2): on every step decay the
    traces, ``z <- gamma lam z``, mark the state visited (the ``trace`` rule), and move
    every state along its trace, ``V <- V + alpha delta z`` (eqs. 12.5-12.7), with
    ``delta = R + gamma V(S') - V(S)``. ``lam = 0`` is TD(0) (:func:`~tabular.td0`,
    number for number).

    Parameters
    ----------
    {mdp policy lam}
    trace : ``"accumulating"`` (default, eq. 12.5), ``"replacing"`` (eq. 12.12) or
        ``"dutch"`` (eq. 12.11).
    alpha : step size in (0, 1], or a :mod:`tabular.schedules` schedule over the visits of
        each state, default 0.1 (a trace spreads a TD error over earlier steps).
    gamma, episodes (default 100), initial_V, seed, runs, max_steps, history :
        as for :func:`~tabular.td0`.

    Returns a :class:`~tabular.learn.results.PredictionResult`, as :func:`~tabular.td0` does.
    """
    return _predict(TD_LAMBDA, mdp, policy, lam=lam, trace=check_trace(trace), gamma=gamma,
                    episodes=episodes, alpha=alpha, initial_V=initial_V, seed=seed, runs=runs,
                    max_steps=max_steps, history=history)


@shares_paragraphs
def true_online_td_lambda(mdp: MDPLike, policy: PolicyLike, *, lam: float = 0.9,
                          gamma: float = 1.0, episodes: int = 100, alpha: StepSize = 0.1,
                          initial_V: npt.ArrayLike = 0.0, seed: int | None = 0,
                          runs: int | None = None, max_steps: int | None = None,
                          history: bool = False) -> PredictionResult:
    """Estimate ``V^pi`` by true online TD(lambda) (the box of section 12.5): the dutch
    trace (eq. 12.11) and ``V <- V + alpha (delta + V(S) - V_old) z - alpha (V(S) -
    V_old) x`` (eq. 12.10), ``V_old`` the value of ``S`` the previous step bootstrapped
    from. With a constant step size its estimates are those of the online lambda-return
    algorithm (section 12.4) at every step.

    Parameters
    ----------
    {mdp policy lam}
    alpha : step size in (0, 1], or a :mod:`tabular.schedules` schedule over the visits of
        each state, default 0.1 (a trace spreads a TD error over earlier steps).
    gamma, episodes (default 100), initial_V, seed, runs, max_steps, history :
        as for :func:`~tabular.td0`.

    Returns a :class:`~tabular.learn.results.PredictionResult`, as :func:`~tabular.td0` does.
    """
    return _predict(TRUE_ONLINE, mdp, policy, lam=lam, trace=DUTCH, gamma=gamma,
                    episodes=episodes, alpha=alpha, initial_V=initial_V, seed=seed, runs=runs,
                    max_steps=max_steps, history=history)


# --------------------------------------------------------------------- control


@njit(cache=True, inline="always")
def _control_run(model, params, rng, out, run):
    """Run ``run`` of Sarsa(lambda), true online Sarsa(lambda) (the boxes of section 12.7)
    or Watkins's Q(lambda) (section 12.10), ``params.method``, read at run time: a step
    costs ``O(S A)`` (every trace decays), the switch a few comparisons."""
    Q = out.Q[run]
    method, gamma, max_steps = params.method, params.gamma, params.max_steps
    alpha, epsilon = read_schedule(params.alpha), read_schedule(params.epsilon)
    n_states = Q.shape[0]
    visits = np.zeros(Q.shape, dtype=np.int64)
    step_sizes = np.zeros(Q.shape)  # each pair's step size at its visit count
    z = np.zeros(Q.shape)
    for episode in range(params.episodes):
        eps = schedule_value(epsilon, episode + 1)
        z[:] = 0.0
        s = sample_start(model, rng)
        a = epsilon_greedy_action(Q[s], eps, rng)
        q_old = 0.0  # Q(S, A) as the previous step bootstrapped from it
        total = 0.0
        steps = 0
        while True:
            steps += 1
            s_next, r, is_done = sample_step(model, s, a, rng)
            total += r
            visits[s, a] += 1
            step_sizes[s, a] = schedule_value(alpha, visits[s, a])
            if method == WATKINS:
                target = q_learning_target(r, gamma, Q[s_next], is_done)
            else:
                a_next = epsilon_greedy_action(Q[s_next], eps, rng)
                q_next = Q[s_next, a_next]
                target = sarsa_target(r, gamma, Q[s_next], a_next, is_done)
            delta = td_error(target, Q[s, a])
            decay_traces(z, gamma * params.lam)
            if params.trace == CLEARING:
                z[s] = 0.0  # the other actions' traces; (S, A)'s is replaced next
            z[s, a] = visit_trace(params.trace, z[s, a], step_sizes[s, a])
            gap = true_online_gap(Q[s, a], q_old) if method == TRUE_ONLINE_SARSA else 0.0
            if delta == -np.inf:  # exact for (S, A), not for the pairs behind it
                Q[s, a] = -np.inf
            else:
                for b in range(n_states):
                    traced_update(Q[b], z[b], step_sizes[b], delta + gap)
                Q[s, a] -= step_sizes[s, a] * gap  # the -alpha (Q - Q_old) x_t term (true online)
            if method == TRUE_ONLINE_SARSA:
                q_old = q_next
            if is_done or steps == max_steps:
                break
            if method == WATKINS:
                a_next = epsilon_greedy_action(Q[s_next], eps, rng)
                if Q[s_next, a_next] != max_value(Q[s_next]):  # non-greedy: cut (sec. 12.10)
                    z[:] = 0.0
            s, a = s_next, a_next
        record_totals(out, run, episode, total, steps)


@runs_kernel
def _lambda_control(model, params, rng_states, out):
    """Every run of :func:`_control_run`."""
    for run in range(rng_states.shape[0]):
        _control_run(model, params, local_stream(rng_states[run]), out, run)


def _control(method, mdp, *, lam, trace, seed, runs, **args) -> ControlResult:
    """Check the arguments of a control method, run its runs, return their result;
    ``args``: the keywords of :func:`tabular.learn.td.control_inputs`."""
    lam = check_unit_interval("lam", lam)
    ep, td, out = control_inputs(mdp, runs=runs, **args)
    params = LambdaControlParams(method=method, lam=lam, trace=trace, gamma=td.gamma,
                                 alpha=td.alpha, epsilon=td.epsilon, episodes=td.episodes,
                                 max_steps=td.max_steps)
    Q0 = out.Q.copy()  # before the runs move Q from its start
    over_runs(_lambda_control, ep.mdp.arrays, params, seed_states(seed, ep.n_runs), out)
    return control_result(out, runs, ep.mdp, value_limit(ep.mdp, ep.gamma, Q0, out.lengths))


@shares_paragraphs
def sarsa_lambda(mdp: MDPLike, *, lam: float = 0.9, trace: str = "accumulating",
                 gamma: float = 1.0, episodes: int = 500, alpha: StepSize = 0.1,
                 epsilon: StepSize = 0.1, initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0,
                 runs: int | None = None, max_steps: int | None = None) -> ControlResult:
    """Sarsa(lambda) (the box of section 12.7): TD(lambda) on action values, with
    ``delta = R + gamma Q(S', A') - Q(S, A)`` and ``A'`` the epsilon-greedy action taken
    next. ``lam = 0`` is :func:`~tabular.sarsa`, number for number.

    Parameters
    ----------
    {mdp lam trace alpha_trace epsilon as_sarsa}

    {control_result_as_sarsa}
    """
    return _control(SARSA_LAMBDA, mdp, lam=lam, trace=check_trace(trace, _CONTROL_TRACES),
                    gamma=gamma, episodes=episodes, alpha=alpha, epsilon=epsilon,
                    initial_Q=initial_Q, seed=seed, runs=runs, max_steps=max_steps)


@shares_paragraphs
def true_online_sarsa_lambda(mdp: MDPLike, *, lam: float = 0.9, gamma: float = 1.0,
                             episodes: int = 500, alpha: StepSize = 0.1, epsilon: StepSize = 0.1,
                             initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0,
                             runs: int | None = None, max_steps: int | None = None
                             ) -> ControlResult:
    """True online Sarsa(lambda) (the box of section 12.7): true online TD(lambda) on
    action values, the dutch trace (eq. 12.11) and eq. 12.10 with ``Q(S, A)`` for
    ``V(S)``.

    Parameters
    ----------
    {mdp lam alpha_trace epsilon as_sarsa}

    {control_result_as_sarsa}
    """
    return _control(TRUE_ONLINE_SARSA, mdp, lam=lam, trace=DUTCH, gamma=gamma,
                    episodes=episodes, alpha=alpha, epsilon=epsilon, initial_Q=initial_Q,
                    seed=seed, runs=runs, max_steps=max_steps)


@shares_paragraphs
def watkins_q_lambda(mdp: MDPLike, *, lam: float = 0.9, trace: str = "accumulating",
                     gamma: float = 1.0, episodes: int = 500, alpha: StepSize = 0.1,
                     epsilon: StepSize = 0.1, initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0,
                     runs: int | None = None, max_steps: int | None = None) -> ControlResult:
    """Watkins's Q(lambda) (section 12.10): Q-learning's target ``R + gamma max_a Q(S',
    a)`` (eq. 6.8) sent back along the traces, which are cut to 0 after an exploratory
    (non-greedy) action: the return that follows it is not the greedy policy's. ``lam =
    0`` is :func:`~tabular.q_learning`, number for number.

    Parameters
    ----------
    {mdp lam trace alpha_trace epsilon as_sarsa}

    {control_result_as_sarsa}
    """
    return _control(WATKINS, mdp, lam=lam, trace=check_trace(trace, _CONTROL_TRACES),
                    gamma=gamma, episodes=episodes, alpha=alpha, epsilon=epsilon,
                    initial_Q=initial_Q, seed=seed, runs=runs, max_steps=max_steps)
