"""Policy-gradient learners: REINFORCE, actor-critic with GAE, PPO.

- :func:`reinforce` -- Monte Carlo policy gradient (S&B section 13.3), with an
  optional learned baseline (13.4);
- :func:`actor_critic` -- one-step actor-critic (13.5) and its GAE(lambda)
  generalisation (Schulman et al., 2016);
- :func:`ppo` -- the clipped surrogate objective or the adaptive KL penalty, several
  epochs of minibatch steps per batch, GAE, advantage normalisation, a value loss and
  an entropy bonus (Schulman et al., 2017).

TRPO, the trust-region method PPO simplifies, is :func:`tabular.trpo`
(:mod:`tabular.pg.trpo`); PPO and TRPO learn from the same batches
(:mod:`tabular.pg.batches`). All of them train a
:class:`~tabular.SoftmaxPolicy` ``pi(a|s) = softmax(theta[row(s)])`` with any
``row_of_state`` map (one row per state: a tabular softmax; one row for all
states: the short corridor of S&B Example 13.1; n-gram contexts: the token MDP).
States that share a row share its logits, and their gradients add up. Every update
is :func:`~tabular.rules.policy_gradient.log_prob_grad` (S&B eq. 13.9) scaled by
the learner's weight.

The learners are model-free: episodes are drawn by
:func:`~tabular.pg.rollout.sample_episode` from one xoshiro stream per run,
runs in parallel; same seed, same numbers, whatever the number of threads.
Conventions:

- **Step sizes**: ``alpha`` moves the policy, ``alpha_value`` the learned state
  values (the baseline or critic, S&B's ``alpha^w`` in 13.4-13.5); each is a
  number or a :mod:`tabular.schedules` schedule over the episode number (the
  iteration number for PPO), counted from 1.
- **Truncation is not termination.** An episode cut at ``max_steps`` has not
  reached a terminal state: actor-critic and PPO bootstrap its last step from the
  critic; REINFORCE, which has no critic to bootstrap from, sums the rewards seen.
- **KL penalty.** With ``ref_policy`` and ``beta > 0`` the learner sees the per-step
  reward ``r_t - beta (log pi(a_t|s_t) - log pi_ref(a_t|s_t))``, with the
  log-probabilities of the policy that sampled the episode; its expectation is the
  KL-regularised objective of RLHF (Ziegler et al., 2019). ``beta`` is the coefficient
  of the KL to the reference in every learner of the library (TRL's ``kl_coef``); PPO's
  adaptive penalty on the KL to the *previous* policy starts at ``kl_penalty_init``.
  ``ref_policy`` takes every policy form (greedy ``int [S]``, stochastic ``[S, A]``,
  ``SoftmaxPolicy``) and must allow every action the policy allows (else the KL is
  infinite).
- **-inf rewards** (the trap of the trap/treasure grid). A policy-gradient step
  scales ``grad log pi`` by a return, and an infinite return gives no usable
  direction (``-inf * 0`` is NaN, ``-inf`` logits erase the policy). So the
  learners refuse an MDP that can pay ``-inf`` unless ``reward_floor`` is given;
  they then learn from ``max(r, reward_floor)``, a finite stand-in. When an optimal
  policy avoids every trap (as in the trap/treasure grid), the floored problem has
  the same optimum if every trajectory into a trap returns less than every
  trajectory that avoids them: with returns and partial returns in
  ``[G_min, G_max]`` away from the traps, a trap entered at step ``t`` weighs
  ``gamma^t reward_floor``, so
  ``reward_floor < (G_min - G_max) / gamma^t`` for the latest ``t`` that matters
  suffices (with ``gamma = 1``: any floor below ``G_min - G_max``). With
  stochastic dynamics a small risk of a trap costs ``q gamma^t |reward_floor|``
  instead of ``-inf``, so a lower floor follows the ``-inf`` objective more
  closely. Either way a softmax learner drives ``pi(trap action)`` towards 0,
  never to exactly 0. The floor also scales the steps (``alpha * reward_floor``):
  a few times the scale of the finite returns is enough, ``-1e300`` is not.
  ``episode_returns`` keep the environment's ``-inf``.
- **Masked actions** (``-inf`` logits, a grammar) have probability 0 and
  gradient 0, and stay ``-inf``. No kernel produces a NaN.

Every learner returns a :class:`~tabular.pg.results.PolicyGradientResult` (PPO's, a
:class:`~tabular.pg.results.TrustRegionResult`, adds statistics per batch): ``logits``
(``[R, A]``, or ``[runs, R, A]`` with ``runs=n``), the shared ``row_of_state``, ``V``
(the critic or baseline, ``None`` without one), ``episode_returns`` and
``episode_lengths``; ``.policy`` is the trained ``SoftmaxPolicy`` of a single-run
result (``res.run(i).policy`` of a multi-run one).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.rng import shuffle
from tabular._numba.runs import over_runs, run_keeping_stream, runs_kernel
from tabular.checks import (
    check_flag,
    check_nonnegative,
    check_number,
    check_positive,
    check_positive_int,
    check_unit_interval,
)
from tabular.pg.arguments import MAX_WEIGHT, batch_args, policy_gradient_args, step_size
from tabular.pg.batches import (
    RunState,
    batch_buffers,
    batch_kl,
    collect_batch,
    record_episodes,
    release_rows,
    save_rows,
)
from tabular.pg.results import PolicyGradientResult, TrustRegionResult
from tabular.pg.rollout import episode_buffers, sample_episode
from tabular.pg.telemetry import Callback, batch_sampler, check_history, run_in_chunks
from tabular.rules.policy_gradient import (
    adaptive_kl_penalty,
    ascend,
    clipped_surrogate_weight,
    grad_entropy,
    group_relative_advantages,
    kl_grad,
    log_prob_grad,
    log_softmax,
    policy_gradient_step,
    softmax,
)
from tabular.rules.returns import discounted_returns, gae
from tabular.rules.values import update_toward
from tabular.schedules import schedule_value
from tabular.types import MDPLike, PolicyLike, StepSize

REINFORCE, ACTOR_CRITIC = 0, 1


class EpisodeGradientParams(NamedTuple):
    """:func:`reinforce` and :func:`actor_critic` as their kernel reads them (``method``
    as the constants above; ``critic``: learn ``V``, REINFORCE's baseline or the critic;
    ``lam``: actor-critic's GAE parameter; step sizes as schedule parameters; ``first``:
    the episode to start from, 0 unless a run continues in chunks, as
    :mod:`tabular.pg.telemetry` runs it; ``value_row`` ``[S]``: the entry of ``V`` that
    REINFORCE's baseline reads and moves in each state, the state itself unless the
    baseline is shared)."""

    method: int
    gamma: float
    episodes: int
    alpha: np.ndarray
    alpha_value: np.ndarray
    critic: bool
    lam: float
    value_row: np.ndarray
    first: int = 0


CLIP, ADAPTIVE_KL = 0, 1
OBJECTIVES = {"clip": CLIP, "adaptive_kl": ADAPTIVE_KL}

#: PPO's most epochs per batch: each is a pass over the batch, and PPO reuses a batch a
#: few times (4 epochs in CleanRL's defaults).
MAX_EPOCHS = 10_000
#: ``minibatches`` past the batch's samples means one sample per step, so any larger
#: count is cut to this one, which no batch reaches, before it becomes an int64.
_ONE_PER_SAMPLE = 2**62


class PPOParams(NamedTuple):
    """:func:`ppo` as its kernel reads it (``objective`` as the constants above;
    ``joint_critic``: the critic steps on ``value_coef L^VF`` with ``alpha``, else on its
    own with ``alpha_value``; ``first``: the iteration to start from, as in
    :class:`EpisodeGradientParams`)."""

    gamma: float
    iterations: int
    episodes_per_batch: int
    epochs: int
    clip: float
    lam: float
    alpha: np.ndarray
    alpha_value: np.ndarray
    entropy_coef: float
    minibatches: int
    normalise: bool
    joint_critic: bool
    value_coef: float
    objective: int
    kl_target: float
    kl_penalty_init: float
    first: int = 0


class PPOIteration(NamedTuple):
    """PPO's iteration ``it`` (from 0) on a batch of ``N`` samples in ``n_rows`` distinct
    rows, with the adaptive KL penalty coefficient ``kl_penalty`` of this iteration."""

    N: int
    n_rows: int
    it: int
    kl_penalty: float


class PPOWork(NamedTuple):
    """The scratch of ``_ppo_epochs``, sized for a batch of ``n`` samples: ``grad``
    ``[n, A]`` (one row per visited row, zero between steps), ``old`` ``[n, A]`` (the
    visited rows' logits before the update), ``raw`` ``[n]`` (the advantages before
    normalisation), ``order`` int64 ``[n]`` (the sample order of an epoch),
    ``value_grad`` ``[S]`` (the joint critic's gradient, zero between steps), ``dist``
    ``[3, A]`` (pi, log pi and pi_old of one row) and ``entropy_grad`` ``[A]``."""

    grad: np.ndarray
    old: np.ndarray
    raw: np.ndarray
    order: np.ndarray
    value_grad: np.ndarray
    dist: np.ndarray
    entropy_grad: np.ndarray


# --------------------------------------------------------------------- kernels
@njit(cache=True, inline="always")
def _episode_gradient_run(model, p, rollout, rng, out, run):
    """Run ``run`` of REINFORCE (S&B 13.3, with the baseline of 13.4 when ``p.critic``) or
    of actor-critic with GAE(lambda) advantages (13.5 when ``lam = 0``), into row ``run``
    of the :class:`~tabular.pg.rollout.PolicyGradientOutputs` ``out``. The two share the
    episode sampler; each has its own loop over the steps, free of the switch."""
    theta, V, returns, lengths = out.logits[run], out.V[run], out.returns[run], \
        out.lengths[run]
    paths, seen, dones, dist = episode_buffers(1, rollout.max_steps, theta.shape[1])
    states, actions, rewards = paths[0, 0], paths[0, 1], seen[0, 0]
    G = np.empty(rollout.max_steps)
    adv, values = np.empty(rollout.max_steps), np.empty(rollout.max_steps + 1)
    for episode in range(p.first, p.episodes):
        T, returns[episode] = sample_episode(model, rollout, theta, rng, paths[0], seen[0],
                                             dones[0], dist)
        lengths[episode] = T
        step = schedule_value(p.alpha, episode + 1)
        step_value = schedule_value(p.alpha_value, episode + 1)
        discount = 1.0  # the I = gamma^t of S&B's boxes
        if p.method == REINFORCE:
            discounted_returns(rewards[:T], p.gamma, dones[0, :T], 0.0, G)
            for t in range(T):
                s = states[t]
                delta = G[t]
                if p.critic:  # the baseline (eq. 13.11)
                    v = p.value_row[s]
                    delta -= V[v]
                    V[v] = update_toward(V[v], G[t], step_value)
                policy_gradient_step(theta[rollout.row_of_state[s]], actions[t],
                                     step * discount * delta, dist[0])
                discount *= p.gamma
        else:
            for t in range(T + 1):
                values[t] = V[states[t]]
            gae(rewards[:T], values[:T + 1], dones[0, :T], p.gamma, p.lam, adv)
            for t in range(T):
                s = states[t]
                V[s] = update_toward(V[s], adv[t] + values[t], step_value)  # the lambda-return
                policy_gradient_step(theta[rollout.row_of_state[s]], actions[t],
                                     step * discount * adv[t], dist[0])
                discount *= p.gamma


@runs_kernel
def _episode_gradient(model, params, rollout, rng_states, out):
    """Every run of :func:`_episode_gradient_run`, each stream kept for the next chunk."""
    for run in range(rng_states.shape[0]):
        run_keeping_stream(_episode_gradient_run, model, params, rollout, rng_states, out, run)


@njit(cache=True)
def _ppo_epochs(p, row_of_state, state, batch, work, iteration):
    """The epochs of one PPO iteration on a collected batch; returns the update's batch
    KL (:func:`~tabular.pg.batches.batch_kl`) and the number of (sample, epoch) steps
    whose clipped term was the smaller, ``A rho > A clip(rho)`` (what TRL's
    ``policy/clipfrac_avg`` averages; 0 for ``"adaptive_kl"``).

    ``state`` is the run's :class:`~tabular.pg.batches.RunState`, ``work`` a
    :class:`PPOWork`, ``iteration`` a :class:`PPOIteration`. For ``epochs`` epochs:
    shuffle the samples (with more than one minibatch) and take one ascent step per
    minibatch on its estimate of
    ``(1/M) sum_episodes sum_t [L_t + entropy_coef H(pi(.|s_t)) - value_coef L^VF_t]``
    (Schulman et al., 2017, eq. 9), ``L_t`` the clipped surrogate (eq. 7) or the
    KL-penalised one (eq. 8); a separate critic instead steps once per sample towards
    ``A_t + V_old(s_t)``.
    """
    theta, V = state.theta, state.V
    N, n_rows, kl_penalty = iteration.N, iteration.n_rows, iteration.kl_penalty
    grad, old, raw, order, value_grad = work.grad, work.old, work.raw, work.order, \
        work.value_grad
    dist, entropy_grad = work.dist, work.entropy_grad
    probs, log_probs, old_probs = dist[0], dist[1], dist[2]
    A, M, entropy_coef, adv = theta.shape[1], p.episodes_per_batch, p.entropy_coef, \
        batch.advantages
    if p.normalise:
        for k in range(N):
            raw[k] = adv[k]
        group_relative_advantages(raw[:N], True, adv[:N])
    save_rows(theta, batch, n_rows, old)
    step = schedule_value(p.alpha, iteration.it + 1)
    step_value = schedule_value(p.alpha_value, iteration.it + 1)
    K = min(p.minibatches, N)
    for k in range(N):
        order[k] = k
    clipped = 0
    for _ in range(p.epochs):
        if K > 1:
            shuffle(state.rng, order[:N])
        for j in range(K):
            lo, hi = j * N // K, (j + 1) * N // K
            scale = M * (hi - lo) / N  # the minibatch estimates the batch average
            for k in order[lo:hi]:
                s, a = batch.states[k], batch.actions[k]
                row = row_of_state[s]
                i = batch.slot[row]
                log_softmax(theta[row], log_probs)
                ratio = np.exp(log_probs[a] - batch.old_log_pi[k])
                if p.objective == CLIP:
                    weight = clipped_surrogate_weight(ratio, adv[k], p.clip)
                    clipped += adv[k] * ratio > adv[k] * min(max(ratio, 1.0 - p.clip),
                                                             1.0 + p.clip)
                else:
                    weight = ratio * adv[k]  # d(rho A) = rho A d log pi
                    softmax(old[i], old_probs)
                softmax(theta[row], probs)
                if entropy_coef > 0.0:
                    grad_entropy(probs, log_probs, entropy_grad)
                for b in range(A):  # d (L_t + c H_t) / d theta[row]
                    term = weight * log_prob_grad(probs, a, b) + entropy_coef * entropy_grad[b]
                    if p.objective == ADAPTIVE_KL:
                        term -= kl_penalty * kl_grad(old_probs, probs, b)
                    grad[i, b] += term / scale
                if p.joint_critic:  # d(-c (V - target)^2) / dV
                    value_grad[s] += 2.0 * p.value_coef * (batch.targets[k] - V[s]) / scale
                else:
                    V[s] = update_toward(V[s], batch.targets[k], step_value)
            for i in range(n_rows):
                ascend(theta[batch.rows[i]], grad[i], step)
                grad[i] = 0.0
            if p.joint_critic:
                for k in order[lo:hi]:
                    s = batch.states[k]
                    V[s] += step * value_grad[s]
                    value_grad[s] = 0.0
    return batch_kl(old, theta, batch, n_rows, M, dist), clipped


@njit(cache=True, inline="always")
def _ppo_buffers(p, theta, n_states, max_steps):
    """The :class:`~tabular.pg.batches.Batch` and :class:`PPOWork` of a run of ``p``
    with logits ``theta`` ``[R, A]``, a critic of ``n_states`` and episodes of at most
    ``max_steps`` steps."""
    A = theta.shape[1]
    batch = batch_buffers(p.episodes_per_batch, max_steps, theta.shape[0], A)
    capacity = batch.states.shape[0]
    work = PPOWork(np.zeros((capacity, A)), np.empty((capacity, A)), np.empty(capacity),
                   np.empty(capacity, dtype=np.int64), np.zeros(n_states),
                   np.empty((3, A)), np.zeros(A))
    return batch, work


@njit(cache=True)
def ppo_clip_fraction(model, p, rollout, state):
    """TRL's ``policy/clipfrac_avg`` of the iteration PPO would take next from ``state``
    (a :class:`~tabular.pg.batches.RunState` the caller copied: it is advanced): the
    fraction of the iteration's (sample, epoch) steps on which the clipped term of
    eq. 7 was the smaller."""
    batch, work = _ppo_buffers(p, state.theta, state.V.shape[0], rollout.max_steps)
    N, n_rows = collect_batch(model, rollout, state, batch, p.gamma, p.lam)
    _, clipped = _ppo_epochs(p, rollout.row_of_state, state, batch, work,
                             PPOIteration(N, n_rows, p.first, p.kl_penalty_init))
    return clipped / (N * p.epochs)


@njit(cache=True, inline="always")
def _ppo_run(model, p, rollout, rng, out, run):
    """Run ``run`` of PPO (Schulman et al., 2017, Algorithm 1, with tabular actor and
    critic), into row ``run`` of the :class:`~tabular.pg.batches.TrustRegionOutputs`
    ``out``: each iteration samples ``M`` episodes with the current policy ``pi_old``,
    then runs ``_ppo_epochs``; the adaptive KL penalty moves after each iteration."""
    state = RunState(out.logits[run], out.V[run], rng)
    batch, work = _ppo_buffers(p, state.theta, state.V.shape[0], rollout.max_steps)
    kl_penalty = p.kl_penalty_init
    if p.first > 0 and p.objective == ADAPTIVE_KL:  # continue from the last iteration
        kl_penalty = adaptive_kl_penalty(out.kl_penalty[run, p.first - 1],
                                         out.step_kl[run, p.first - 1], p.kl_target)
    for it in range(p.first, p.iterations):
        N, n_rows = collect_batch(model, rollout, state, batch, p.gamma, p.lam)
        record_episodes(batch, out.returns[run], out.lengths[run], it)
        kl, _ = _ppo_epochs(p, rollout.row_of_state, state, batch, work,
                            PPOIteration(N, n_rows, it, kl_penalty))
        out.step_kl[run, it] = kl
        if p.objective == ADAPTIVE_KL:
            out.kl_penalty[run, it] = kl_penalty
            kl_penalty = adaptive_kl_penalty(kl_penalty, kl, p.kl_target)
        release_rows(batch, n_rows)


@runs_kernel
def _ppo(model, params, rollout, rng_states, out):
    """Every run of :func:`_ppo_run`, each stream kept for the next chunk."""
    for run in range(rng_states.shape[0]):
        run_keeping_stream(_ppo_run, model, params, rollout, rng_states, out, run)


# ------------------------------------------------------------------ front end
def reinforce(mdp: MDPLike, policy: PolicyLike | None = None, *, gamma: float = 1.0,
              episodes: int = 1000, alpha: StepSize = 0.1, baseline: bool = False,
              alpha_value: StepSize = 0.1, shared_baseline: bool = False,
              ref_policy: PolicyLike | None = None, beta: float = 0.0,
              reward_floor: float | None = None, max_steps: int | None = None,
              seed: int | None = 0, runs: int | None = None, history: bool = False,
              eval_every: int | None = None, callback: Callback | None = None
              ) -> PolicyGradientResult:
    """REINFORCE: Monte Carlo policy gradient (S&B section 13.3).

    After each episode, for ``t = 0, ..., T-1`` in order:
    ``theta <- theta + alpha gamma^t G_t grad log pi(A_t|S_t, theta)`` (eq. 13.8).
    With ``baseline=True`` (section 13.4, "REINFORCE with baseline", eq. 13.11) a
    tabular ``V`` is learned alongside, ``delta = G_t - V(S_t)``, ``V(S_t) += alpha_value delta``,
    and ``delta`` replaces ``G_t``. With ``shared_baseline=True`` the baseline sees what
    the policy sees: one value for all the states of a logit row (``row_of_state``), so
    where every state looks alike it is the single weight ``v(s, w) = w`` of S&B's
    Figure 13.2 (the short corridor, Example 13.1); a tabular ``V`` would tell the
    aliased states apart, which the policy cannot.

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
    policy : the starting policy, a :class:`~tabular.SoftmaxPolicy` or an ``[S, A]``
        matrix of probabilities (logits ``log pi``: a zero probability masks the
        action); default ``None``: the uniform tabular softmax. Not modified.
    gamma : discount, default 1.0.
    episodes : number of episodes per run, default 1000.
    alpha : the policy's step size (number or schedule over episodes), default 0.1.
    baseline : learn a state-value baseline, default False.
    alpha_value : the baseline's step size in ``(0, 1]``, default 0.1.
    shared_baseline : one baseline value per logit row instead of per state (needs
        ``baseline``), default False.
    ref_policy : the reference of the KL penalty (any policy form), default ``None``.
    beta : the KL coefficient (>= 0; > 0 needs ``ref_policy``), default 0.0.
    reward_floor : learn from ``max(r, reward_floor)``; required (a finite number)
        when the MDP can pay ``-inf``; default ``None`` (no floor).
    max_steps : the step limit of an episode, default ``None``: the env's time limit
        (``mdp.max_episode_steps``), else 1000.
    seed : seed of the random streams (``None``: fresh entropy), default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs
        with a leading run axis.
    history : record a :class:`~tabular.pg.results.TrainingHistory` in the result
        (exact and sampled metrics every ``eval_every`` episodes; needs ``ref_policy``,
        ``beta > 0`` and a deterministic token MDP), default False.
    eval_every : episodes between evaluations, in ``[1, episodes]``; default ``None``:
        about 100 evaluations (with ``history`` only).
    callback : ``callback(episode, policy, metrics)`` at each evaluation, returning
        ``None`` or its own metrics (see :mod:`tabular.pg.telemetry`), default ``None``.

    Returns
    -------
    A :class:`~tabular.pg.results.PolicyGradientResult`: ``logits`` ``[R, A]`` (``[runs, R,
    A]`` with ``runs=n``), ``row_of_state`` ``[S]``, ``V`` the baseline ``[S]`` (``None``
    without ``baseline``; the states of a row hold its value when shared),
    ``episode_returns`` (environment rewards, no KL term or floor) and
    ``episode_lengths`` ``[episodes]``, ``history``; ``.policy`` the trained
    ``SoftmaxPolicy``.
    """
    args = policy_gradient_args(mdp, policy, ref_policy=ref_policy, beta=beta,
                                reward_floor=reward_floor, gamma=gamma, episodes=episodes,
                                max_steps=max_steps, runs=runs, seed=seed)
    baseline = check_flag("baseline", baseline)
    if check_flag("shared_baseline", shared_baseline) and not baseline:
        raise ValueError("reinforce: shared_baseline=True needs baseline=True")
    value_row = np.arange(args.mdp.n_states, dtype=np.int64)
    if shared_baseline:  # each state reads its row's first state: V keeps its [S] shape
        _, first, row = np.unique(args.policy.row_of_state, return_index=True,
                                  return_inverse=True)
        value_row = value_row[first][row]
    params = EpisodeGradientParams(method=REINFORCE, gamma=args.gamma, episodes=args.episodes,
                                   alpha=step_size("alpha", alpha),
                                   alpha_value=step_size("alpha_value", alpha_value, 1.0),
                                   critic=baseline, lam=0.0, value_row=value_row)
    return _train_episodes(args, params, baseline, ref_policy,
                           check_history(history, eval_every, callback, args.episodes,
                                         "reinforce", count="episodes", runs=args.runs),
                           callback, "reinforce")


def _train_episodes(args, params, value, ref_policy, eval_every, callback, where):
    """Run REINFORCE or actor-critic (``params``) as set up by ``args``, in chunks of
    ``eval_every`` episodes with a history (one episode per evaluated batch), in one
    call without (``eval_every=None``); the result keeps ``V`` when ``value``."""
    out = args.outputs()

    def step(first, stop):
        over_runs(_episode_gradient, args.mdp.arrays, params._replace(first=first, episodes=stop),
                  args.rollout, args.rng_states, out)

    history = run_in_chunks(step, args.episodes, eval_every,
                            args.recorder(ref_policy, out.logits, callback, where,
                                        batch_sampler(args, out.logits, 1)), where)
    if out.V is not None:  # a shared value, kept at its row's first state, goes to all
        out.V[:] = out.V[:, params.value_row]
    return args.result(out, value=value, history=history)


def actor_critic(mdp: MDPLike, policy: PolicyLike | None = None, *, gamma: float = 1.0,
                 episodes: int = 1000, alpha: StepSize = 0.1, alpha_value: StepSize = 0.1,
                 lam: float = 0.0, ref_policy: PolicyLike | None = None, beta: float = 0.0,
                 reward_floor: float | None = None, max_steps: int | None = None,
                 seed: int | None = 0, runs: int | None = None, history: bool = False,
                 eval_every: int | None = None, callback: Callback | None = None
                 ) -> PolicyGradientResult:
    """Actor-critic with a tabular critic ``V`` and GAE(lambda) advantages.

    ``lam = 0``: the advantage is the TD error
    ``delta_t = R_{t+1} + gamma V(S_{t+1}) - V(S_t)`` of S&B's one-step actor-critic
    (section 13.5, eqs. 13.12-13.14); ``lam`` in ``(0, 1]``: GAE,
    ``A_t = sum_k (gamma lam)^k delta_{t+k}`` (Schulman et al., 2016, eq. 16;
    ``lam = 1`` is the Monte Carlo return minus ``V``).
    After each episode, for each step in order: ``V(S_t) += alpha_value
    (A_t + V_old(S_t) - V(S_t))`` (towards the lambda-return) and ``theta +=
    alpha gamma^t A_t grad log pi(A_t|S_t)``. The advantages use the critic as it was
    when the episode was sampled (S&B's online version updates ``V`` between the
    steps of an episode; both have the same fixed point, ``V = v_pi``). Truncated
    episodes bootstrap from ``V``.

    Parameters
    ----------
    mdp, policy, gamma, episodes, ref_policy, beta, reward_floor, max_steps, seed, runs :
        as in :func:`reinforce` (defaults: uniform tabular softmax, 1.0, 1000, ``None``,
        0.0, ``None``, 1000, 0, ``None``).
    history, eval_every, callback : as in :func:`reinforce` (defaults False, ``None``,
        ``None``).
    alpha : the actor's step size (number or schedule over episodes), default 0.1.
    alpha_value : the critic's step size in ``(0, 1]``, default 0.1.
    lam : the GAE parameter in ``[0, 1]``, default 0.0.

    Returns
    -------
    A :class:`~tabular.pg.results.PolicyGradientResult` as in :func:`reinforce`, with ``V``
    the critic.
    """
    args = policy_gradient_args(mdp, policy, ref_policy=ref_policy, beta=beta,
                                reward_floor=reward_floor, gamma=gamma, episodes=episodes,
                                max_steps=max_steps, runs=runs, seed=seed)
    params = EpisodeGradientParams(method=ACTOR_CRITIC, gamma=args.gamma, episodes=args.episodes,
                                   alpha=step_size("alpha", alpha),
                                   alpha_value=step_size("alpha_value", alpha_value, 1.0),
                                   critic=True, lam=check_unit_interval("lam", lam),
                                   value_row=np.arange(args.mdp.n_states, dtype=np.int64))
    return _train_episodes(args, params, True, ref_policy,
                           check_history(history, eval_every, callback, args.episodes,
                                         "actor_critic", count="episodes", runs=args.runs),
                           callback, "actor_critic")


def ppo(mdp: MDPLike, policy: PolicyLike | None = None, *, gamma: float = 1.0,
        iterations: int = 100, episodes_per_batch: int = 8, epochs: int = 4, minibatches: int = 1,
        objective: str = "clip", clip: float = 0.2, kl_target: float = 0.01,
        kl_penalty_init: float = 1.0, lam: float = 0.95, normalise: bool = False,
        alpha: StepSize = 0.5, alpha_value: StepSize | None = None,
        value_coef: float | None = None, entropy_coef: float = 0.0,
        ref_policy: PolicyLike | None = None, beta: float = 0.0, reward_floor: float | None = None,
        max_steps: int | None = None, seed: int | None = 0, runs: int | None = None,
        history: bool = False, eval_every: int | None = None, callback: Callback | None = None
        ) -> TrustRegionResult:
    """Proximal policy optimisation (Schulman et al., 2017), clipped or with an adaptive
    KL penalty.

    ``iterations`` times: sample ``M = episodes_per_batch`` episodes with the current
    policy ``pi_old`` and compute GAE(``lam``) advantages ``A_t`` with the current
    critic (divided into ``(A_t - mean) / std`` over the batch when ``normalise``);
    then, ``epochs`` times, split the batch's samples into ``minibatches`` parts (in an
    order shuffled afresh each epoch, from the run's stream, when there are several)
    and take one ascent step
    of size ``alpha`` per part on its estimate of the batch objective
    ``(1/M) sum_episodes sum_t [L_t + entropy_coef H(pi(.|s_t)) - value_coef L^VF_t]``
    (eq. 9; a part of ``n`` of the batch's ``N`` samples is weighted ``N / n``), with
    ``rho_t = pi(a_t|s_t) / pi_old(a_t|s_t)`` and

    - ``objective="clip"``: ``L_t = min(rho_t A_t, clip(rho_t, 1 - clip, 1 + clip) A_t)``
      (eq. 7);
    - ``objective="adaptive_kl"``: ``L_t = rho_t A_t - c KL(pi_old(.|s_t) || pi(.|s_t))``
      (eq. 8), and after the epochs the penalty coefficient ``c`` (starting at
      ``kl_penalty_init``) is halved when the update's KL ``d < kl_target / 1.5`` and
      doubled when ``d > 1.5 kl_target`` (section 4). ``d`` is the result's ``step_kl``,
      per episode like the objective: on a token MDP, an estimate of the KL between the
      response distributions of ``pi_old`` and ``pi``. The steps are plain gradient
      steps, and the penalty's curvature grows with ``c``: a ``kl_target`` too small for
      ``alpha`` drives ``c`` up until the steps overshoot and the policy collapses to a
      deterministic one; a larger ``kl_target`` or a smaller ``alpha`` avoids it.

    ``c`` penalises the KL to the *previous* policy; the KL to ``ref_policy`` is
    ``beta``'s (TRL's ``kl_coef``), folded into the reward as in :func:`reinforce`.

    The critic is tabular: by default it learns on its own, one step of ``alpha_value``
    per sample and epoch towards ``A_t + V_old(s_t)``; with ``value_coef`` it is part of
    the objective above, ``L^VF_t = (V(s_t) - A_t - V_old(s_t))^2``, and steps with the
    policy (the paper's shared-network form). The defaults (one full-batch step per
    epoch, clipped, no normalisation, separate critic) are the full-batch clipped
    algorithm.

    Parameters
    ----------
    mdp, policy, gamma, ref_policy, beta, reward_floor, max_steps, seed, runs :
        as in :func:`reinforce` (defaults: uniform tabular softmax, 1.0, ``None``, 0.0,
        ``None``, 1000, 0, ``None``).
    history, eval_every, callback : as in :func:`reinforce` (defaults False, ``None``,
        ``None``), with ``eval_every`` counting iterations; the history adds
        ``policy/clipfrac_avg`` with ``objective="clip"``
        (:func:`~tabular.pg.learners.ppo_clip_fraction`).
    iterations : number of batches, default 100.
    episodes_per_batch : ``M``, default 8.
    epochs : passes over each batch, default 4.
    minibatches : ascent steps per epoch, each on one part of the batch's samples
        (at most one part per sample), default 1 (full batch).
    objective : ``"clip"`` (default) or ``"adaptive_kl"``.
    clip : the clip range ``epsilon`` in ``(0, 1)``, default 0.2 (``"clip"`` only).
    kl_target : ``d_targ`` of ``"adaptive_kl"`` (> 0), default 0.01.
    kl_penalty_init : the initial coefficient ``c`` of ``"adaptive_kl"``'s penalty on
        the KL to the previous policy (> 0), default 1.0 (not ``beta``, the KL to
        ``ref_policy``).
    lam : the GAE parameter in ``[0, 1]``, default 0.95.
    normalise : normalise the advantages over each batch, default False.
    alpha : the policy's step size (number or schedule over iterations), default 0.5.
    alpha_value : the separate critic's step size in ``(0, 1]`` (schedule over
        iterations), default ``None``: 0.1; not with ``value_coef``.
    value_coef : ``c_1``, the weight (> 0) of the critic's squared error in the
        objective, default ``None`` (a separate critic).
    entropy_coef : weight of the entropy bonus (>= 0), default 0.0.

    Returns
    -------
    A :class:`~tabular.pg.results.TrustRegionResult`: a
    :class:`~tabular.pg.results.PolicyGradientResult` as in :func:`reinforce`, of
    ``iterations * episodes_per_batch`` episodes, with ``V`` the critic, plus per
    iteration ``step_kl`` and (``"adaptive_kl"``) ``kl_penalty``, the coefficient ``c``
    used.
    """
    args = batch_args(mdp, policy, iterations=iterations, episodes_per_batch=episodes_per_batch,
                     ref_policy=ref_policy, beta=beta, reward_floor=reward_floor, gamma=gamma,
                     max_steps=max_steps, runs=runs, seed=seed)
    clip = check_number("clip", clip)
    if not 0.0 < clip < 1.0:
        raise ValueError(f"clip must be in (0, 1), got {clip}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {sorted(OBJECTIVES)}, got {objective!r}")
    if value_coef is not None and alpha_value is not None:
        raise ValueError("alpha_value and value_coef exclude each other: the critic steps "
                         "on its own with alpha_value, or with the policy's alpha on "
                         "value_coef times its squared error")
    joint = value_coef is not None
    value_coef = (check_positive("value_coef", value_coef, MAX_WEIGHT)
                  if value_coef is not None else 0.0)
    params = PPOParams(gamma=args.gamma, iterations=int(iterations),
                       episodes_per_batch=int(episodes_per_batch),
                       epochs=check_positive_int("epochs", epochs, high=MAX_EPOCHS), clip=clip,
                       lam=check_unit_interval("lam", lam), alpha=step_size("alpha", alpha),
                       alpha_value=step_size(
                           "alpha_value", 0.1 if alpha_value is None else alpha_value, 1.0),
                       entropy_coef=check_nonnegative("entropy_coef", entropy_coef),
                       minibatches=min(check_positive_int("minibatches", minibatches,
                                                          high=math.inf), _ONE_PER_SAMPLE),
                       normalise=check_flag("normalise", normalise), joint_critic=joint,
                       value_coef=value_coef,
                       objective=OBJECTIVES[objective],
                       kl_target=check_positive("kl_target", kl_target),
                       kl_penalty_init=check_positive("kl_penalty_init", kl_penalty_init))
    every = check_history(history, eval_every, callback, int(iterations), "ppo", runs=args.runs)
    out = args.batch_outputs(int(iterations), kl_penalty=True)  # one kernel for both objectives

    def step(first, stop):
        over_runs(_ppo, args.mdp.arrays, params._replace(first=first, iterations=stop),
                  args.rollout, args.rng_states, out)

    batch = batch_sampler(args, out.logits, params.episodes_per_batch)

    def sampled(run, iteration):
        metrics = batch(run, iteration)
        if objective == "clip":
            state = RunState(out.logits[run].copy(), out.V[run].copy(),
                             args.rng_states[run].copy())
            metrics["policy/clipfrac_avg"] = ppo_clip_fraction(
                args.mdp.arrays, params._replace(first=iteration), args.rollout, state)
        return metrics

    trace = run_in_chunks(step, int(iterations), every,
                          args.recorder(ref_policy, out.logits, callback, "ppo", sampled), "ppo")
    result = args.trust_region_result(out, trace)
    return result if objective == "adaptive_kl" else replace(result, kl_penalty=None)
