"""Planning with a learned model (Sutton & Barto, chapter 8).

- :func:`dyna_q` -- Tabular Dyna-Q (the box of section 8.2): every real step updates
  ``Q`` (Q-learning, eq. 6.8) and the model, then makes ``planning_steps`` Q-learning
  updates on transitions the model predicts for pairs drawn uniformly among those
  tried (the box draws a tried state, then one of its tried actions: the same when
  every visited state has had all its actions tried);
- :func:`dyna_q_plus` -- Dyna-Q+ (section 8.3): a planned transition pays the bonus
  ``r + kappa sqrt(tau)``, ``tau`` the time steps since the pair was last tried, and
  planning also draws the actions never tried from a visited state (modelled as
  leading back to that state with reward 0, the section's footnote);
- :func:`prioritized_sweeping` -- the box of section 8.4 for a deterministic model:
  pairs are planned in the order of the size of their update (a max-heap), and each
  update queues the predecessors of the state it changed.

The three share one acting loop (steps (a)-(c) of the boxes: epsilon-greedy on
``Q``, one real step); the learning and planning of each method follow it. The method
is read at run time from the kernel's record, so one kernel, compiled once, serves the
three. The model is learned from samples
(:mod:`tabular.plan.model`): either the last outcome of each pair, the
deterministic model of the boxes, or every outcome seen with its count, a sample
model of a stochastic environment from which planning draws outcomes in proportion
to their counts. Kernels follow the runs driver of :mod:`tabular.learn`; their records
and argument checks are in :mod:`tabular.plan.planner`, their result in
:mod:`tabular.plan.results`.

Conventions (as in :mod:`tabular.learn.td`): exploration follows a schedule over episodes;
the step size a schedule over the updates of each pair, real and planned, counted
from 1; an episode ends when an outcome is ``done`` or is cut after ``max_steps``
steps. Time steps ``t`` count the real steps of a run across its episodes: they
time Dyna-Q+'s ``tau`` and the ``switch`` of a changing environment (Figures 8.4 and
8.5: after ``switch=(step, other_mdp)``'s ``step`` time steps, the environment is
``other_mdp``; see :func:`tabular.envs.mazes.changing_maze`). ``-inf`` rewards are exact, as
everywhere (:mod:`tabular.learn.divergence`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import borrowed, local_stream
from tabular._numba.rng import randint
from tabular._numba.runs import runs_kernel
from tabular.checks import check_nonnegative
from tabular.learn.paragraphs import shares_paragraphs
from tabular.model.mdp import MAX_REWARD
from tabular.model.sampling import sample_start, sample_step
from tabular.plan.model import (
    learned_model,
    link,
    predecessors,
    priority_queue,
    queue_pop,
    queue_push,
    record_outcome,
    sample_model,
    unlink,
)
from tabular.plan.planner import Planner, check_planning_steps, plan
from tabular.plan.results import PlanningResult
from tabular.rules.planning import exploration_bonus, priority
from tabular.rules.values import epsilon_greedy_action, q_learning_target, update_toward
from tabular.schedules import read_schedule, schedule_value
from tabular.types import MDPLike, StepSize

DYNA_Q, DYNA_Q_PLUS, PRIORITIZED_SWEEPING = 0, 1, 2


class Estimate(NamedTuple):
    """The action values a run learns, and what their Q-learning updates read.

    ``Q`` ``[S, A]``; ``updates`` int64 ``[S, A]``: the updates of each pair so far, real and
    planned (the count at which the step size is read); ``alpha``: the step-size schedule,
    as :func:`~tabular.schedules.read_schedule` gives it; ``gamma``: the discount.
    """

    Q: np.ndarray
    updates: np.ndarray
    alpha: tuple
    gamma: float


# --------------------------------------------------------------------- kernels


@njit(cache=True)
def _sampled(env, t):
    """The model that ``env`` (a :class:`~tabular.plan.planner.Dynamics`) samples after ``t``
    time steps."""
    return env.switched if t >= env.switch_step else env.model


@njit(cache=True, inline="always")
def _q_update(estimate, s, a, outcome):
    """``Q(s, a) <- Q(s, a) + alpha [R + gamma max_a Q(S', a) - Q(s, a)]`` (eq. 6.8) for
    ``outcome = (S', R, done)``, real or planned, on the :class:`Estimate` ``estimate``;
    ``alpha`` at the pair's update count."""
    s_next, r, is_done = outcome
    Q, n = estimate.Q, estimate.updates[s, a] + 1
    estimate.updates[s, a] = n
    Q[s, a] = update_toward(Q[s, a], q_learning_target(r, estimate.gamma, Q[s_next], is_done),
                            schedule_value(estimate.alpha, n))


@njit(cache=True, inline="always")
def _dyna_planning(method, estimate, model, params, t, rng):
    """Step (f) of the Dyna-Q box, ``planning_steps`` times: a pair drawn uniformly among
    those tried (Dyna-Q), or a visited state and any action (Dyna-Q+), updated by
    Q-learning on the learned ``model``'s outcome (with Dyna-Q+'s bonus at time step
    ``t``)."""
    n_actions = estimate.Q.shape[1]
    for _ in range(params.planning_steps):
        if method == DYNA_Q:
            x = model.pairs[randint(rng, model.n_pairs[0])]
            s, a = x // n_actions, x % n_actions
            outcome = sample_model(model, s, a, rng)
        else:
            s = model.states[randint(rng, model.n_states[0])]
            a = randint(rng, n_actions)
            if model.tries[s, a] > 0:
                s_next, r, is_done = sample_model(model, s, a, rng)
            else:  # never tried: back to the same state, reward 0 (section 8.3's footnote)
                s_next, r, is_done = s, 0.0, False
            tau = t - model.last_try[s, a]
            outcome = (s_next, exploration_bonus(r, params.kappa, tau), is_done)
        _q_update(estimate, s, a, outcome)


@njit(cache=True, inline="always")
def _relink(lists, model, s, a, s_next):
    """Keep ``(s, a)`` in the predecessor list of its predicted successor ``s_next``
    (before the model learns it)."""
    x = s * model.tries.shape[1] + a
    if model.tries[s, a] == 0:
        link(lists, x, s_next)
    elif model.next_state[s, a, 0] != s_next:
        unlink(lists, x, model.next_state[s, a, 0])
        link(lists, x, s_next)


@njit(cache=True, inline="always")
def _sweep(estimate, model, queue, lists, params):
    """Step (g) of the prioritized sweeping box: up to ``planning_steps`` updates of the
    first pair of the ``queue``, each queueing the predecessors (``lists``) of that pair's
    state whose priority exceeds ``theta``; returns the number of updates."""
    Q = estimate.Q
    gamma, theta = params.gamma, params.theta
    n_actions = Q.shape[1]
    n = 0
    while n < params.planning_steps and queue.size[0] > 0:
        x, _ = queue_pop(queue)
        s, a = x // n_actions, x % n_actions
        _q_update(estimate, s, a,
                  (model.next_state[s, a, 0], model.reward[s, a, 0], model.done[s, a, 0]))
        n += 1
        y = lists.head[s]
        while y >= 0:  # every pair predicted to lead to s
            s_bar, a_bar = y // n_actions, y % n_actions
            p = priority(q_learning_target(model.reward[s_bar, a_bar, 0], gamma, Q[s],
                                           model.done[s_bar, a_bar, 0]), Q[s_bar, a_bar])
            if p > theta:
                queue_push(queue, y, p)
            y = lists.next[y]
    return n


@njit(cache=True, inline="always")
def _planning_run(env, params, rng, out, run):
    """Run ``run`` of Dyna-Q, Dyna-Q+ or prioritized sweeping (``params.method``) in the
    environment ``env`` (a :class:`~tabular.plan.planner.Dynamics`), drawing from ``rng``
    and filling row ``run`` of ``out`` (a :class:`~tabular.plan.planner.PlanningOutputs`):
    the acting loop the boxes of sections 8.2-8.4 share, then each method's learning and
    planning."""
    method = params.method
    Q = borrowed(out.Q[run])  # its row views count no references (tabular._numba.frame)
    returns, lengths, episode_updates = out.returns[run], out.lengths[run], out.updates[run]
    epsilon = read_schedule(params.epsilon)
    n_states, n_actions = Q.shape
    estimate = Estimate(Q, np.zeros(Q.shape, dtype=np.int64), read_schedule(params.alpha),
                        params.gamma)
    model = learned_model(n_states, n_actions, params.capacity)
    queue = priority_queue(n_states * n_actions)
    lists = predecessors(n_states, n_states * n_actions)
    t = 0  # real time steps so far, over the run's episodes
    for episode in range(params.episodes):
        eps = schedule_value(epsilon, episode + 1)
        s = sample_start(_sampled(env, t), rng)
        total = 0.0
        steps = 0
        made = 0
        while True:
            steps += 1
            a = epsilon_greedy_action(Q[s], eps, rng)                              # (b)
            outcome = sample_step(_sampled(env, t), s, a, rng)                    # (c)
            t += 1
            s_next, r, is_done = outcome
            total += r
            if method == PRIORITIZED_SWEEPING:
                _relink(lists, model, s, a, s_next)
                record_outcome(model, s, a, outcome, False, t)                     # (d)
                p = priority(q_learning_target(r, params.gamma, Q[s_next], is_done),
                             Q[s, a])                                              # (e)
                if p > params.theta:                                               # (f)
                    queue_push(queue, s * n_actions + a, p)
                made += _sweep(estimate, model, queue, lists, params)              # (g)
            else:
                _q_update(estimate, s, a, outcome)                                 # (d)
                record_outcome(model, s, a, outcome, params.counts, t)             # (e)
                _dyna_planning(method, estimate, model, params, t, rng)            # (f)
                made += 1 + params.planning_steps
            if is_done or steps == params.max_steps:
                break
            s = s_next
        returns[episode] = total
        lengths[episode] = steps
        episode_updates[episode] = made


# numba's plain pipeline: on the simplifying one this loop's machine code crashes
@runs_kernel(simplifying=False)
def _planning_runs(model, params, rng_states, out):
    """Every run of :func:`_planning_run`."""
    for run in range(rng_states.shape[0]):
        _planning_run(model, params, local_stream(rng_states[run]), out, run)


# --------------------------------------------------------------------- public functions


@shares_paragraphs
def dyna_q(mdp: MDPLike, *, planning_steps: int = 5, gamma: float = 1.0, episodes: int = 500,
           alpha: StepSize = 0.5, epsilon: StepSize = 0.1, initial_Q: npt.ArrayLike = 0.0,
           model: str = "auto", switch: tuple[int, MDPLike] | None = None, seed: int | None = 0,
           runs: int | None = None, max_steps: int | None = None) -> PlanningResult:
    """Tabular Dyna-Q (the box of section 8.2): act epsilon-greedily on ``Q``; after each
    real step, update ``Q`` by Q-learning (eq. 6.8), learn the model ``Model(S, A) <- R,
    S'``, then make ``planning_steps`` Q-learning updates on ``R, S' <- Model(S, A)`` for
    pairs drawn uniformly among those tried. With ``planning_steps=0`` it is
    :func:`~tabular.q_learning`, bit for bit.

    Parameters
    ----------
    {mdp}
    planning_steps : updates planned per real step (the box's ``n``), an integer >= 0,
        default 5.
    {gamma episodes}
    alpha : step size in (0, 1], or a :mod:`tabular.schedules` schedule over the
        updates of each pair ``(s, a)``, real and planned, default 0.5.
    epsilon : exploration in [0, 1], or a schedule over episodes, default 0.1.
    {initial_Q}
    model : the model learned: ``"last"``, the last outcome of each pair (the box's
        deterministic model, which follows a changing environment); ``"counts"``, every
        outcome seen with its count, planning drawing them in proportion (a stochastic
        environment); default ``"auto"``: ``"last"`` when every pair of the environment
        (and of ``switch``'s) has one outcome, else ``"counts"``.
    switch : ``None`` (default), or ``(step, other_mdp)``: after ``step`` time steps (real
        steps over the run's episodes) the environment becomes ``other_mdp``, a model
        with the same states and actions (the changing mazes of Figures 8.4 and 8.5,
        :func:`tabular.envs.mazes.changing_maze`).
    {seed runs max_steps}

    Returns a :class:`~tabular.PlanningResult`: ``Q`` ``[S, A]``; ``policy``,
    its greedy policy; ``V = max_a Q``; ``episode_returns`` (undiscounted sum of
    rewards), ``episode_lengths`` (steps) and ``episode_updates`` (``1 +
    planning_steps`` per step) of each episode, ``[episodes]``; each with a leading run
    axis when ``runs=n``.
    """
    planner = Planner(DYNA_Q, check_planning_steps(planning_steps, 0), 0.0, 0.0, model)
    return plan(_planning_runs, planner, mdp, switch=switch, gamma=gamma, episodes=episodes,
                alpha=alpha, epsilon=epsilon, initial_Q=initial_Q, seed=seed, runs=runs,
                max_steps=max_steps)


def _check_kappa(kappa: float) -> float:
    """Dyna-Q+'s bonus scale, a number in ``[0, MAX_REWARD]``: ``kappa sqrt(tau)`` is paid
    as a reward, so it has a reward's bound."""
    kappa = check_nonnegative("kappa", kappa)
    if kappa > MAX_REWARD:
        raise ValueError(f"kappa must be at most {MAX_REWARD:g} (a reward's bound), got {kappa:g}")
    return kappa


def dyna_q_plus(mdp: MDPLike, *, planning_steps: int = 5, kappa: float = 1e-3, gamma: float = 1.0,
                episodes: int = 500, alpha: StepSize = 0.5, epsilon: StepSize = 0.1,
                initial_Q: npt.ArrayLike = 0.0, model: str = "auto",
                switch: tuple[int, MDPLike] | None = None, seed: int | None = 0,
                runs: int | None = None, max_steps: int | None = None) -> PlanningResult:
    """Dyna-Q+ (section 8.3): Dyna-Q whose planned transitions pay ``r + kappa sqrt(tau)``,
    ``tau`` the time steps since the pair was last tried in the environment, so that
    long-untried actions get tried again and a changed environment is discovered
    (Figures 8.4 and 8.5). Planning draws a visited state uniformly and any action; an
    action never tried from that state is modelled as leading back to it with reward 0
    (the section's footnote), and its ``tau`` counts from time 0. Acting and real
    updates are those of Dyna-Q (no bonus).

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
    planning_steps : updates planned per real step, an integer >= 0, default 5.
    kappa : the bonus scale, a finite number >= 0, default 1e-3.
    gamma, episodes, alpha, epsilon, initial_Q, model, switch, seed, runs, max_steps :
        as in :func:`dyna_q`, with the same defaults.

    Returns a :class:`~tabular.PlanningResult`, as :func:`dyna_q` does
    (``episode_updates``: ``1 + planning_steps`` per step).
    """
    planner = Planner(DYNA_Q_PLUS, check_planning_steps(planning_steps, 0),
                      _check_kappa(kappa), 0.0, model)
    return plan(_planning_runs, planner, mdp, switch=switch, gamma=gamma, episodes=episodes,
                alpha=alpha, epsilon=epsilon, initial_Q=initial_Q, seed=seed, runs=runs,
                max_steps=max_steps)


def prioritized_sweeping(mdp: MDPLike, *, planning_steps: int = 5, theta: float = 1e-4,
                         gamma: float = 1.0, episodes: int = 500, alpha: StepSize = 0.5,
                         epsilon: StepSize = 0.1, initial_Q: npt.ArrayLike = 0.0,
                         switch: tuple[int, MDPLike] | None = None, seed: int | None = 0,
                         runs: int | None = None, max_steps: int | None = None) -> PlanningResult:
    """Prioritized sweeping for a deterministic environment (the box of section 8.4): after
    each real step, learn ``Model(S, A) <- R, S'`` and queue ``(S, A)`` with priority ``P =
    |R + gamma max_a Q(S', a) - Q(S, A)|`` if ``P > theta``; then, up to
    ``planning_steps`` times while the queue is not empty, update its first pair by
    Q-learning on the model's outcome and queue each pair predicted to lead to that
    pair's state whose priority exceeds ``theta``. A pair is queued once, with the higher
    of its priorities; a pair whose priority is at most ``theta`` is never updated.
    Every update is planned (there is no direct update of ``Q``). The model keeps the
    last outcome of each pair (the box's deterministic model): on a stochastic
    environment it follows the latest sample.

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
    planning_steps : the most updates per real step (the box's ``n``), an integer >= 1,
        default 5.
    theta : the priority threshold, a finite number >= 0, default 1e-4.
    gamma, episodes, alpha, epsilon, initial_Q, switch, seed, runs, max_steps : as in
        :func:`dyna_q`, with the same defaults.

    Returns a :class:`~tabular.PlanningResult`, as :func:`dyna_q` does
    (``episode_updates``: the updates popped from the queue, at most ``planning_steps``
    per step).
    """
    planner = Planner(PRIORITIZED_SWEEPING, check_planning_steps(planning_steps, 1), 0.0,
                      check_nonnegative("theta", theta), "last")
    return plan(_planning_runs, planner, mdp, switch=switch, gamma=gamma, episodes=episodes,
                alpha=alpha, epsilon=epsilon, initial_Q=initial_Q, seed=seed, runs=runs,
                max_steps=max_steps)
