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
``Q``, one real step); the learning and planning of each method follow it, and the
other methods' branches compile away (the method is a constant of each driver, as
in :mod:`tabular.learn.td`). The model is learned from samples
(:mod:`tabular.plan.model`): either the last outcome of each pair, the
deterministic model of the boxes, or every outcome seen with its count, a sample
model of a stochastic environment from which planning draws outcomes in proportion
to their counts. Kernels follow the runs driver of :mod:`tabular.learn.setup`; their
records, the result and the argument checks are in :mod:`tabular.plan.setup`.

Conventions (as in :mod:`tabular.learn.td`): exploration follows a schedule over episodes;
the step size a schedule over the updates of each pair, real and planned, counted
from 1; an episode ends when an outcome is ``done`` or is cut after ``max_steps``
steps. Time steps ``t`` count the real steps of a run across its episodes: they
time Dyna-Q+'s ``tau`` and the ``switch`` of a changing environment (Figures 8.4 and
8.5: after ``switch=(step, other_mdp)``'s ``step`` time steps, the environment is
``other_mdp``; see :func:`envs.mazes.changing_maze`). ``-inf`` rewards are exact, as
everywhere (:mod:`tabular.learn.setup`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from tabular._numba.rng import randint
from tabular.checks import check_nonnegative
from tabular.model.mdp import ModelArrays
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
from tabular.plan.setup import PlanningResult, plan, planning_doc
from tabular.rules.planning import exploration_bonus, priority
from tabular.rules.values import epsilon_greedy_action, q_learning_target, update_toward
from tabular.schedules import read_schedule, schedule_value

DYNA_Q, DYNA_Q_PLUS, PRIORITIZED_SWEEPING = 0, 1, 2

class Dynamics(NamedTuple):
    """The environment a run samples: ``model`` until time step ``switch_step``, then
    ``switched`` (the same model when the environment does not change). Built inside
    the ``prange`` body: a record of records cannot be a parallel loop's argument."""

    model: ModelArrays
    switched: ModelArrays
    switch_step: int


# --------------------------------------------------------------------- kernels


@njit(cache=True)
def _sampled(env, t):
    """The model that ``env`` (a :class:`Dynamics`) samples after ``t`` time steps."""
    return env.switched if t >= env.switch_step else env.model


@njit(cache=True, inline="always")
def _q_update(Q, updates, alpha, gamma, s, a, outcome):
    """``Q(s, a) <- Q(s, a) + alpha [R + gamma max_a Q(S', a) - Q(s, a)]`` (eq. 6.8) for
    ``outcome = (S', R, done)``, real or planned; ``alpha`` at the pair's update count."""
    s_next, r, is_done = outcome
    updates[s, a] += 1
    Q[s, a] = update_toward(Q[s, a], q_learning_target(r, gamma, Q[s_next], is_done),
                            schedule_value(alpha, updates[s, a]))


@njit(cache=True, inline="always")
def _dyna_planning(method, Q, updates, model, params, alpha, t, rng):
    """Step (f) of the Dyna-Q box, ``planning_steps`` times: a pair drawn uniformly among
    those tried (Dyna-Q), or a visited state and any action (Dyna-Q+), updated by
    Q-learning on the model's outcome (with Dyna-Q+'s bonus)."""
    n_actions = Q.shape[1]
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
        _q_update(Q, updates, alpha, params.gamma, s, a, outcome)


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
def _sweep(Q, updates, model, queue, lists, params, alpha):
    """Step (g) of the prioritized sweeping box: up to ``planning_steps`` updates of the
    first pair of the queue, each queueing the predecessors of that pair's state whose
    priority exceeds ``theta``; returns the number of updates."""
    gamma, theta = params.gamma, params.theta
    n_actions = Q.shape[1]
    n = 0
    while n < params.planning_steps and queue.size[0] > 0:
        x, _ = queue_pop(queue)
        s, a = x // n_actions, x % n_actions
        _q_update(Q, updates, alpha, gamma, s, a,
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


@njit(cache=True)
def _planning_run(env, params, rng, Q, returns, lengths, episode_updates):
    """One run of Dyna-Q, Dyna-Q+ or prioritized sweeping (``params.method``): the
    acting loop the boxes of sections 8.2-8.4 share, then each method's learning and
    planning. The method is read at run time: one kernel serves the three, compiled
    once. Compiled as its own function, as the Monte Carlo loops are: inlined into the
    ``prange`` body, numba 0.68 miscompiled the learned model's updates (an index out
    of bounds)."""
    method = params.method
    alpha, epsilon = read_schedule(params.alpha), read_schedule(params.epsilon)
    n_states, n_actions = Q.shape
    model = learned_model(n_states, n_actions, params.capacity)
    updates = np.zeros(Q.shape, dtype=np.int64)  # of each pair, real and planned
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
                made += _sweep(Q, updates, model, queue, lists, params, alpha)     # (g)
            else:
                _q_update(Q, updates, alpha, params.gamma, s, a, outcome)          # (d)
                record_outcome(model, s, a, outcome, params.counts, t)             # (e)
                _dyna_planning(method, Q, updates, model, params, alpha, t, rng)   # (f)
                made += 1 + params.planning_steps
            if is_done or steps == params.max_steps:
                break
            s = s_next
        returns[episode] = total
        lengths[episode] = steps
        episode_updates[episode] = made


@njit(cache=True, parallel=True)
def _planning_runs(model, switched, params, rng_states, out):
    for run in prange(rng_states.shape[0]):
        _planning_run(Dynamics(model, switched, params.switch_step), params,
                      rng_states[run].copy(), out.Q[run], out.returns[run], out.lengths[run],
                      out.updates[run])


@planning_doc("""Tabular Dyna-Q (the box of section 8.2): act epsilon-greedily on ``Q``;
    after each real step, update ``Q`` by Q-learning (eq. 6.8), learn the model
    ``Model(S, A) <- R, S'``, then make ``planning_steps`` Q-learning updates on
    ``R, S' <- Model(S, A)`` for pairs drawn uniformly among those tried. With
    ``planning_steps=0`` it is :func:`~tabular.q_learning`, bit for bit.
""", planning_steps="""updates planned per real step (the box's ``n``), an integer >= 0,
        default 5.
    """, updates="``1 + planning_steps`` per step")
def dyna_q(mdp, *, planning_steps: int = 5, gamma: float = 1.0, episodes: int = 500,
           alpha=0.5, epsilon=0.1, initial_Q=0.0, model: str = "auto", switch=None,
           seed: int | None = 0, runs: int | None = None,
           max_steps: int | None = None) -> PlanningResult:
    return plan(_planning_runs, DYNA_Q, mdp, planning_steps=planning_steps,
                min_planning_steps=0, kappa=0.0, theta=0.0, model=model, switch=switch,
                gamma=gamma, episodes=episodes, alpha=alpha, epsilon=epsilon,
                initial_Q=initial_Q, seed=seed, runs=runs, max_steps=max_steps)


@planning_doc("""Dyna-Q+ (section 8.3): Dyna-Q whose planned transitions pay ``r + kappa
    sqrt(tau)``, ``tau`` the time steps since the pair was last tried in the
    environment, so that long-untried actions get tried again and a changed
    environment is discovered (Figures 8.4 and 8.5). Planning draws a visited state
    uniformly and any action; an action never tried from that state is modelled as
    leading back to it with reward 0 (the section's footnote), and its ``tau`` counts
    from time 0. Acting and real updates are those of Dyna-Q (no bonus).
""", planning_steps="""updates planned per real step, an integer >= 0, default 5.
    """, method_args="""kappa : the bonus scale, a finite number >= 0, default 1e-3.
    """, updates="``1 + planning_steps`` per step")
def dyna_q_plus(mdp, *, planning_steps: int = 5, kappa: float = 1e-3, gamma: float = 1.0,
                episodes: int = 500, alpha=0.5, epsilon=0.1, initial_Q=0.0,
                model: str = "auto", switch=None, seed: int | None = 0,
                runs: int | None = None, max_steps: int | None = None) -> PlanningResult:
    return plan(_planning_runs, DYNA_Q_PLUS, mdp, planning_steps=planning_steps,
                min_planning_steps=0, kappa=check_nonnegative("kappa", kappa), theta=0.0,
                model=model, switch=switch, gamma=gamma, episodes=episodes, alpha=alpha,
                epsilon=epsilon, initial_Q=initial_Q, seed=seed, runs=runs,
                max_steps=max_steps)


@planning_doc("""Prioritized sweeping for a deterministic environment (the box of
    section 8.4): after each real step, learn ``Model(S, A) <- R, S'`` and queue
    ``(S, A)`` with priority ``P = |R + gamma max_a Q(S', a) - Q(S, A)|`` if ``P >
    theta``; then, up to ``planning_steps`` times while the queue is not empty, update
    its first pair by Q-learning on the model's outcome and queue each pair predicted
    to lead to that pair's state whose priority exceeds ``theta``. A pair is queued
    once, with the higher of its priorities; a pair whose priority is at most
    ``theta`` is never updated. Every update is planned (there is no direct update of
    ``Q``). The model keeps the last outcome of each pair (the box's deterministic
    model): on a stochastic environment it follows the latest sample.
""", planning_steps="""the most updates per real step (the box's ``n``), an integer >=
        1, default 5.
    """, method_args="""theta : the priority threshold, a finite number >= 0, default 1e-4.
    """, model_arg="", updates="the updates popped from the queue, at most\n"
    "    ``planning_steps`` per step")
def prioritized_sweeping(mdp, *, planning_steps: int = 5, theta: float = 1e-4,
                         gamma: float = 1.0, episodes: int = 500, alpha=0.5, epsilon=0.1,
                         initial_Q=0.0, switch=None, seed: int | None = 0,
                         runs: int | None = None,
                         max_steps: int | None = None) -> PlanningResult:
    return plan(_planning_runs, PRIORITIZED_SWEEPING, mdp, planning_steps=planning_steps,
                min_planning_steps=1, kappa=0.0, theta=check_nonnegative("theta", theta),
                model="last", switch=switch, gamma=gamma, episodes=episodes, alpha=alpha,
                epsilon=epsilon, initial_Q=initial_Q, seed=seed, runs=runs,
                max_steps=max_steps)
