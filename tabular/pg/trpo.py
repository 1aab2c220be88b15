"""Trust region policy optimisation of a softmax table (Schulman et al., 2015).

Each iteration samples a batch of ``M`` episodes with the current policy ``pi_old``
and solves, approximately, the trust-region problem of the paper's eq. 14::

    maximise    L(theta) = (1/M) sum_t  pi_theta(a_t|s_t) / pi_old(a_t|s_t) * A_t
    subject to  KL(theta) = (1/M) sum_t  KL(pi_old(.|s_t) || pi_theta(.|s_t)) <= max_kl

(sums over the batch's samples, averaged per episode as in :func:`tabular.ppo`;
``A_t`` the GAE advantages of a tabular critic). The paper's practical algorithm
(section 6, appendix C):

1. the gradient ``g`` of ``L`` at ``theta_old`` is the policy gradient
   ``(1/M) sum_t A_t grad log pi(a_t|s_t)``;
2. the Fisher information ``F``, the Hessian of the KL constraint at ``theta_old``, is
   exact here: a softmax table's is block diagonal, one block
   ``(n_r / M) (diag(pi_r) - pi_r pi_r^T)`` per row ``r`` of logits that ``n_r`` of
   the batch's samples read (:func:`~tabular.rules.policy_gradient.fisher_vector_product`);
3. conjugate gradient solves ``F x = g`` from Fisher-vector products alone
   (:func:`conjugate_gradient`); ``x`` is the natural gradient;
4. the quadratic model of the constraint, ``(1/2) s^2 x^T F x = max_kl``, sizes the
   full step ``s x``;
5. a backtracking line search halves the step until the *exact* batch KL is at most
   ``max_kl`` and the surrogate improves, ``L(theta) > L(theta_old)``; when no tried
   step passes, the policy stays.

``F`` is singular (a row's logits may all shift by one constant; rows the batch
never visits have no curvature), but ``g`` lies in its range, and conjugate gradient
started from 0 stays there, so no damping is needed: the exact solution is the
tabular natural gradient ``x_r = g_r / (n_r / M pi_r)`` up to a constant per row
(Kakade, 2001). The critic steps once per sample after the policy's update, towards
``A_t + V_old(s_t)``, as PPO's does in each epoch.

The constraint is an estimate: its expectation over the batch is
``E_{pi_old}[sum_t KL(pi_old(.|s_t) || pi(.|s_t))]``, on a token MDP the KL between the
two policies' distributions over whole responses (:func:`tabular.rlhf.sequence_kl`).

Why a KL limit: Theorem 1 of the paper bounds the true return ``eta`` of the new
policy by the surrogate ``L_pi(pi_new) = eta(pi) + sum_s rho_pi(s) sum_a pi_new(a|s)
A_pi(s, a)``: ``eta(pi_new) >= L_pi(pi_new) - C max_s KL(pi(.|s) || pi_new(.|s))`` with
``C = 4 eps gamma / (1 - gamma)^2``, ``eps = max |A_pi|``. For the undiscounted token
MDP (at most ``H`` decisions) that constant is infinite; the paper's Lemma 3 summed
over ``t < H`` instead gives ``|eta(pi_new) - L_pi(pi_new)| <= 4 eps (alpha H - 1 +
(1 - alpha)^H) <= 2 eps H (H - 1) max_s KL`` (``alpha`` the largest total variation
between the two policies in a state; ``1 - (1 - alpha)^t <= t alpha`` and
``alpha^2 <= KL``). Both are checked exactly in ``tests/pg/test_trpo.py``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.runs import over_runs, run_keeping_stream, runs_kernel
from tabular.checks import check_positive_int, check_unit_interval
from tabular.pg.arguments import batch_args, step_size
from tabular.pg.batches import (
    BatchIteration,
    RunState,
    batch_buffers,
    batch_kl,
    collect_batch,
    record_episodes,
    release_rows,
    restore_rows,
    save_rows,
)
from tabular.pg.results import TrustRegionResult
from tabular.pg.telemetry import Callback, batch_sampler, check_history, run_in_chunks
from tabular.rules.policy_gradient import (
    accumulate_log_prob_grad,
    fisher_vector_product,
    log_softmax,
    softmax,
)
from tabular.rules.values import update_toward
from tabular.schedules import schedule_value
from tabular.types import MDPLike, PolicyLike, StepSize

#: Conjugate gradient stops once the residual is this small relative to ``g``.
CG_TOLERANCE = 1e-10

#: The largest ``cg_iterations`` and ``line_search_steps`` accepted (a step halved
#: 1075 times is 0 in float64).
MAX_CG_ITERATIONS = 10_000
MAX_LINE_SEARCH_STEPS = 1075


class TRPOParams(NamedTuple):
    """:func:`trpo` as its kernel reads it (``alpha_value`` as schedule parameters;
    ``first``: the iteration to start from, 0 unless a run continues in chunks)."""

    gamma: float
    iterations: int
    episodes_per_batch: int
    lam: float
    alpha_value: np.ndarray
    max_kl: np.ndarray
    cg_iterations: int
    line_search_steps: int
    first: int = 0


class Fisher(NamedTuple):
    """The block-diagonal Fisher information ``F`` of a batch's visited rows: row ``i``'s
    block is ``weights[i] (diag(probs[i]) - probs[i] probs[i]^T)``, for the first
    ``n_rows`` rows of ``probs`` ``[n, A]`` and ``weights`` ``[n]``."""

    probs: np.ndarray
    weights: np.ndarray
    n_rows: int


class TRPOWork(NamedTuple):
    """The scratch of ``_trpo_step``, sized for a batch of ``n`` samples: the visited
    rows' logits before the step ``old``, their probabilities ``old_probs``, the gradient
    ``g`` and the natural gradient ``x`` (each ``[n, A]``), conjugate gradient's
    ``cg_work`` ``[3, n, A]``, the rows' Fisher ``weights`` ``[n]`` and ``dist``
    ``[3, A]``."""

    old: np.ndarray
    old_probs: np.ndarray
    g: np.ndarray
    x: np.ndarray
    cg_work: np.ndarray
    weights: np.ndarray
    dist: np.ndarray


# --------------------------------------------------------------------- kernels
@njit(cache=True, inline="always")
def _dot(u, v, n_rows):
    """``sum_{i < n_rows, b} u[i, b] v[i, b]``; masked entries hold 0 in both."""
    total = 0.0
    for i in range(n_rows):
        for b in range(u.shape[1]):
            total += u[i, b] * v[i, b]
    return total


@njit(cache=True, inline="always")
def _combine(y, a, x, c, n_rows):
    """``y[i] = a y[i] + c x[i]`` for the first ``n_rows`` rows (``a = 0``: ``y = c x``)."""
    for i in range(n_rows):
        for b in range(y.shape[1]):
            y[i, b] = c * x[i, b] if a == 0.0 else a * y[i, b] + c * x[i, b]


@njit(cache=True)
def fisher_product(fisher, v, out):
    """``out = F v`` for the :class:`Fisher` ``F`` of the visited rows: row ``i`` is
    ``weights[i] (diag(probs[i]) - probs[i] probs[i]^T) v[i]``."""
    for i in range(fisher.n_rows):
        fisher_vector_product(fisher.probs[i], v[i], fisher.weights[i], out[i])


@njit(cache=True)
def conjugate_gradient(fisher, g, iterations, x, work):
    """Solve ``F x = g`` by at most ``iterations`` steps of conjugate gradient
    (Hestenes and Stiefel, 1952; Schulman et al., 2015, appendix C), ``F`` the
    :class:`Fisher` ``fisher``, from ``x = 0``; ``work`` ``[3, n, A]`` is scratch.

    Stops early when the residual falls below ``CG_TOLERANCE`` times ``|g|`` or a
    search direction has no curvature (``d^T F d <= 0``: ``g`` has no component left
    that ``F`` can see).
    """
    n_rows = fisher.n_rows
    r, d, Fd = work[0], work[1], work[2]
    _combine(x, 0.0, g, 0.0, n_rows)
    _combine(r, 0.0, g, 1.0, n_rows)
    _combine(d, 0.0, g, 1.0, n_rows)
    rr = _dot(r, r, n_rows)
    tolerance = CG_TOLERANCE * CG_TOLERANCE * rr
    for _ in range(iterations):
        if not rr > tolerance:
            break
        fisher_product(fisher, d, Fd)
        curvature = _dot(d, Fd, n_rows)
        if not curvature > 0.0:
            break
        step = rr / curvature
        _combine(x, 1.0, d, step, n_rows)
        _combine(r, 1.0, Fd, -step, n_rows)
        rr_next = _dot(r, r, n_rows)
        _combine(d, rr_next / rr, r, 1.0, n_rows)
        rr = rr_next


@njit(cache=True)
def surrogate_gain(theta, batch, N, episodes, row_of_state, log_probs):
    """``L(theta) - L(theta_old) = (1/M) sum_t (rho_t - 1) A_t`` over the batch, with
    ``rho_t - 1 = expm1(log pi_theta(a_t|s_t) - log pi_old(a_t|s_t))`` (exact near 0)."""
    total = 0.0
    for k in range(N):
        log_softmax(theta[row_of_state[batch.states[k]]], log_probs)
        total += np.expm1(log_probs[batch.actions[k]] - batch.old_log_pi[k]) \
            * batch.advantages[k]
    return total / episodes


@njit(cache=True)
def _move(theta, rows, old, direction, fraction, n_rows):
    """``theta[rows[i]] = old[i] + fraction * direction[i]``; masked logits stay ``-inf``."""
    for i in range(n_rows):
        row = theta[rows[i]]
        for b in range(row.shape[0]):
            if old[i, b] > -np.inf:
                row[b] = old[i, b] + fraction * direction[i, b]


@njit(cache=True)
def _trpo_step(p, row_of_state, state, batch, work, iteration):
    """TRPO's iteration on a collected batch (``iteration`` a
    :class:`~tabular.pg.batches.BatchIteration`, ``state`` the run's
    :class:`~tabular.pg.batches.RunState`, ``work`` a :class:`TRPOWork`): the natural
    gradient by conjugate gradient, the step that meets the KL limit by line search,
    then the critic. Returns ``(KL of the accepted step, backtracks)``, ``(0, -1)`` when
    no step passed."""
    theta, V = state.theta, state.V
    N, n_rows = iteration.N, iteration.n_rows
    old, g, x, cg_work, dist = work.old, work.g, work.x, work.cg_work, work.dist
    old_probs, weights = work.old_probs, work.weights
    M = p.episodes_per_batch
    save_rows(theta, batch, n_rows, old)
    for i in range(n_rows):
        softmax(old[i], old_probs[i])
        weights[i] = batch.counts[i] / M
        g[i] = 0.0
    fisher = Fisher(old_probs, weights, n_rows)  # for reading: writes go through work
    for k in range(N):  # g = (1/M) sum_t A_t grad log pi(a_t|s_t)
        i = batch.slot[row_of_state[batch.states[k]]]
        accumulate_log_prob_grad(old[i], batch.actions[k], batch.advantages[k] / M, dist[0],
                                 g[i])
    conjugate_gradient(fisher, g, p.cg_iterations, x, cg_work)
    fisher_product(fisher, x, cg_work[0])
    curvature = _dot(x, cg_work[0], n_rows)  # x^T F x
    max_kl = schedule_value(p.max_kl, iteration.it + 1)
    step_kl, backtracks = 0.0, -1
    if curvature > 0.0:
        full = np.sqrt(2.0 * max_kl / curvature)  # (1/2) s^2 x^T F x = max_kl
        for k in range(p.line_search_steps):
            _move(theta, batch.rows, old, x, full * 0.5 ** k, n_rows)
            kl = batch_kl(old, theta, batch, n_rows, M, dist)
            if kl <= max_kl and surrogate_gain(theta, batch, N, M, row_of_state,
                                                 dist[0]) > 0.0:
                step_kl, backtracks = kl, k
                break
    if backtracks < 0:  # no step passed: the policy stays
        restore_rows(theta, batch, n_rows, old)
    step_value = schedule_value(p.alpha_value, iteration.it + 1)
    for k in range(N):
        s = batch.states[k]
        V[s] = update_toward(V[s], batch.targets[k], step_value)
    return step_kl, backtracks


@njit(cache=True, inline="always")
def _trpo_run(model, p, rollout, rng, out, run):
    """Run ``run`` of TRPO, into row ``run`` of the
    :class:`~tabular.pg.batches.TrustRegionOutputs` ``out``: per iteration a batch of
    ``M`` episodes, then ``_trpo_step``."""
    state = RunState(out.logits[run], out.V[run], rng)
    A = state.theta.shape[1]
    batch = batch_buffers(p.episodes_per_batch, rollout.max_steps, state.theta.shape[0], A)
    capacity = batch.states.shape[0]
    work = TRPOWork(np.empty((capacity, A)), np.empty((capacity, A)),
                    np.empty((capacity, A)), np.empty((capacity, A)),
                    np.empty((3, capacity, A)), np.empty(capacity), np.empty((3, A)))
    for it in range(p.first, p.iterations):
        N, n_rows = collect_batch(model, rollout, state, batch, p.gamma, p.lam)
        record_episodes(batch, out.returns[run], out.lengths[run], it)
        out.step_kl[run, it], out.backtracks[run, it] = _trpo_step(
            p, rollout.row_of_state, state, batch, work, BatchIteration(N, n_rows, it))
        release_rows(batch, n_rows)


@runs_kernel
def _trpo(model, params, rollout, rng_states, out):
    """Every run of :func:`_trpo_run`, each stream kept for the next chunk."""
    for run in range(rng_states.shape[0]):
        run_keeping_stream(_trpo_run, model, params, rollout, rng_states, out, run)


# ------------------------------------------------------------------ front end
def trpo(mdp: MDPLike, policy: PolicyLike | None = None, *, gamma: float = 1.0,
         iterations: int = 100, episodes_per_batch: int = 8, max_kl: float = 0.01,
         lam: float = 0.95, alpha_value: StepSize = 0.1, cg_iterations: int = 10,
         line_search_steps: int = 10, ref_policy: PolicyLike | None = None, beta: float = 0.0,
         reward_floor: float | None = None, max_steps: int | None = None, seed: int | None = 0,
         runs: int | None = None, history: bool = False, eval_every: int | None = None,
         callback: Callback | None = None) -> TrustRegionResult:
    """Trust region policy optimisation (Schulman et al., 2015): each iteration, the
    natural-gradient step of a softmax table that keeps the batch's KL divergence to
    the previous policy within ``max_kl`` and improves the importance-sampled
    surrogate (see :mod:`tabular.pg.trpo` for the problem and the steps).

    Parameters
    ----------
    mdp, policy, gamma, ref_policy, beta, reward_floor, max_steps, seed, runs :
        as in :func:`tabular.reinforce` (defaults: uniform tabular softmax, 1.0,
        ``None``, 0.0, ``None``, 1000, 0, ``None``); the KL penalty to ``ref_policy``
        is folded into the per-step reward as there, apart from the trust region.
    history, eval_every, callback : as in :func:`tabular.reinforce` (defaults False,
        ``None``, ``None``), with ``eval_every`` counting iterations.
    iterations : number of batches, default 100.
    episodes_per_batch : ``M``, default 8.
    max_kl : ``delta``, the limit (> 0) on the batch's KL divergence per episode
        ``(1/M) sum_t KL(pi_old(.|s_t) || pi(.|s_t))``, a number or a
        :mod:`tabular.schedules` schedule over iterations, default 0.01 (the paper's).
        Every step TRPO takes has a KL near the limit, sampling noise included, so a
        policy converges only as far as a decreasing limit lets it.
    lam : the GAE parameter in ``[0, 1]``, default 0.95.
    alpha_value : the critic's step size in ``(0, 1]`` (schedule over iterations),
        default 0.1.
    cg_iterations : at most this many conjugate-gradient steps (>= 1), default 10
        (the paper's).
    line_search_steps : step sizes tried, ``s, s/2, ..., s/2^(n-1)`` (>= 1), default 10.

    Returns
    -------
    A :class:`~tabular.pg.results.TrustRegionResult`: a
    :class:`~tabular.pg.results.PolicyGradientResult` as in :func:`tabular.reinforce`, of
    ``iterations * episodes_per_batch`` episodes, with ``V`` the critic, plus per
    iteration ``step_kl`` (the accepted step's batch KL, at most ``max_kl``; 0 with no
    step) and ``backtracks`` (halvings before the accepted step, ``-1``: none accepted).
    """
    args = batch_args(mdp, policy, iterations=iterations, episodes_per_batch=episodes_per_batch,
                     ref_policy=ref_policy, beta=beta, reward_floor=reward_floor, gamma=gamma,
                     max_steps=max_steps, runs=runs, seed=seed)
    params = TRPOParams(gamma=args.gamma, iterations=int(iterations),
                        episodes_per_batch=int(episodes_per_batch),
                        lam=check_unit_interval("lam", lam),
                        alpha_value=step_size("alpha_value", alpha_value, 1.0),
                        max_kl=step_size("max_kl", max_kl),
                        cg_iterations=check_positive_int("cg_iterations", cg_iterations,
                                                         high=MAX_CG_ITERATIONS),
                        line_search_steps=check_positive_int(
                            "line_search_steps", line_search_steps,
                            high=MAX_LINE_SEARCH_STEPS))
    every = check_history(history, eval_every, callback, int(iterations), "trpo", runs=args.runs)
    out = args.batch_outputs(int(iterations), backtracks=True)

    def step(first, stop):
        over_runs(_trpo, args.mdp.arrays, params._replace(first=first, iterations=stop),
                  args.rollout, args.rng_states, out)

    trace = run_in_chunks(step, int(iterations), every,
                          args.recorder(ref_policy, out.logits, callback, "trpo",
                                      batch_sampler(args, out.logits, params.episodes_per_batch)),
                          "trpo")
    return args.trust_region_result(out, trace)
