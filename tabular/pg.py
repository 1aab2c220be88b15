"""Policy-gradient learners: REINFORCE, actor-critic with GAE, PPO.

- :func:`reinforce` -- Monte Carlo policy gradient (S&B section 13.3), with an
  optional learned baseline (13.4);
- :func:`actor_critic` -- one-step actor-critic (13.5) and its GAE(lambda)
  generalisation (Schulman et al., 2016);
- :func:`ppo` -- the clipped surrogate objective with several epochs per batch,
  GAE and an entropy bonus (Schulman et al., 2017).

All three train a :class:`~tabular.SoftmaxPolicy` ``pi(a|s) = softmax(theta[row(s)])``
with any ``row_of_state`` map (one row per state: a tabular softmax; one row for all
states: the short corridor of S&B Example 13.1; n-gram contexts: the token MDP).
States that share a row share its logits, and their gradients add up. Every update
is :func:`~tabular.rules.policy_gradient.log_prob_grad` (S&B eq. 13.9) scaled by
the learner's weight.

The learners are model-free: episodes are drawn by
:func:`~tabular.kernels.rollout.sample_episode` from one xoshiro stream per run,
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
  KL-regularised objective of RLHF (Ziegler et al., 2019). ``ref_policy`` takes
  every policy form (greedy ``int [S]``, stochastic ``[S, A]``, ``SoftmaxPolicy``)
  and must allow every action the policy allows (else the KL is infinite).
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

Every learner returns a :class:`~tabular.results.PolicyGradientResult`: ``logits``
(``[R, A]``, or ``[runs, R, A]`` with ``runs=n``), the shared ``row_of_state``, ``V``
(the critic or baseline, ``None`` without one), ``episode_returns`` and
``episode_lengths``; ``.policy`` is the trained ``SoftmaxPolicy`` of a single-run
result (``res.run(i).policy`` of a multi-run one).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .checks import check_nonnegative, check_positive_int, check_unit_interval
from .kernels.rollout import episode_buffers, sample_episode
from .mdp import TabularMDP
from .pg_setup import setup, step_size
from .results import PolicyGradientResult
from .rules.policy_gradient import (
    ascend,
    clipped_surrogate_weight,
    grad_entropy,
    log_prob_grad,
    log_softmax,
    policy_gradient_step,
    softmax,
)
from .rules.returns import discounted_returns, gae
from .rules.values import update_toward
from .schedules import schedule_value


class ReinforceParams(NamedTuple):
    """:func:`reinforce` as its kernel reads it (step sizes as schedule parameters)."""

    gamma: float
    episodes: int
    alpha: np.ndarray
    alpha_value: np.ndarray
    baseline: bool


class ActorCriticParams(NamedTuple):
    """:func:`actor_critic` as its kernel reads it."""

    gamma: float
    episodes: int
    alpha: np.ndarray
    alpha_value: np.ndarray
    lam: float


class PPOParams(NamedTuple):
    """:func:`ppo` as its kernel reads it."""

    gamma: float
    iterations: int
    episodes_per_batch: int
    epochs: int
    clip: float
    lam: float
    alpha: np.ndarray
    alpha_value: np.ndarray
    entropy_coef: float


# --------------------------------------------------------------------- kernels
# Inlined runs are faster but compile slower: worth it for REINFORCE/actor-critic, not PPO.
@njit(cache=True, inline="always")
def _reinforce_run(model, p, rollout, rng, theta, V, returns, lengths):
    """One run of REINFORCE (S&B 13.3), with the baseline of 13.4 when ``p.baseline``."""
    paths, seen, dones, dist = episode_buffers(1, rollout.max_steps, theta.shape[1])
    states, actions, rewards = paths[0, 0], paths[0, 1], seen[0, 0]
    G = np.empty(rollout.max_steps)
    for episode in range(p.episodes):
        T, returns[episode] = sample_episode(model, rollout, theta, rng, paths[0], seen[0],
                                             dones[0], dist)
        lengths[episode] = T
        discounted_returns(rewards[:T], p.gamma, dones[0, :T], 0.0, G)
        step = schedule_value(p.alpha, episode + 1)
        step_value = schedule_value(p.alpha_value, episode + 1)
        discount = 1.0  # gamma^t
        for t in range(T):
            s = states[t]
            delta = G[t]
            if p.baseline:
                delta -= V[s]
                V[s] = update_toward(V[s], G[t], step_value)
            policy_gradient_step(theta[rollout.row_of_state[s]], actions[t],
                                 step * discount * delta, dist[0])
            discount *= p.gamma


@njit(cache=True, parallel=True)
def _reinforce(model, params, rollout, rng_states, out):
    for run in prange(rng_states.shape[0]):
        _reinforce_run(model, params, rollout, rng_states[run].copy(), out.logits[run],
                       out.V[run], out.returns[run], out.lengths[run])


@njit(cache=True, inline="always")
def _actor_critic_run(model, p, rollout, rng, theta, V, returns, lengths):
    """One run of actor-critic with GAE(lambda) advantages (S&B 13.5 when ``lam = 0``)."""
    paths, seen, dones, dist = episode_buffers(1, rollout.max_steps, theta.shape[1])
    states, actions, rewards = paths[0, 0], paths[0, 1], seen[0, 0]
    adv, values = np.empty(rollout.max_steps), np.empty(rollout.max_steps + 1)
    for episode in range(p.episodes):
        T, returns[episode] = sample_episode(model, rollout, theta, rng, paths[0], seen[0],
                                             dones[0], dist)
        lengths[episode] = T
        for t in range(T + 1):
            values[t] = V[states[t]]
        gae(rewards[:T], values[:T + 1], dones[0, :T], p.gamma, p.lam, adv)
        step = schedule_value(p.alpha, episode + 1)
        step_value = schedule_value(p.alpha_value, episode + 1)
        discount = 1.0  # the I = gamma^t of S&B's actor-critic
        for t in range(T):
            s = states[t]
            V[s] = update_toward(V[s], adv[t] + values[t], step_value)  # the lambda-return
            policy_gradient_step(theta[rollout.row_of_state[s]], actions[t],
                                 step * discount * adv[t], dist[0])
            discount *= p.gamma


@njit(cache=True, parallel=True)
def _actor_critic(model, params, rollout, rng_states, out):
    for run in prange(rng_states.shape[0]):
        _actor_critic_run(model, params, rollout, rng_states[run].copy(), out.logits[run],
                          out.V[run], out.returns[run], out.lengths[run])


@njit(cache=True)
def _ppo_run(model, p, rollout, rng, theta, V, returns, lengths):
    """One run of PPO-clip (Schulman et al., 2017, Algorithm 1, with tabular actor and critic).

    Each iteration samples ``M`` episodes with the current policy, then runs
    ``epochs`` full-batch ascent steps on
    ``(1/M) sum_episodes sum_t [L^CLIP_t + entropy_coef H(pi(.|s_t))]``;
    in each epoch the critic steps once per sample towards ``A_t + V_old(s_t)``.
    """
    A, M, L = theta.shape[1], p.episodes_per_batch, rollout.max_steps
    row_of_state, clip, entropy_coef = rollout.row_of_state, p.clip, p.entropy_coef
    paths, seen, dones, dist = episode_buffers(M, L, A)
    probs, log_probs = dist[0], dist[1]
    adv, targets, values = np.empty((M, L)), np.empty((M, L)), np.empty((M, L + 1))
    T = np.empty(M, dtype=np.int64)
    entropy_grad = np.zeros(A)
    batch_grad = np.empty_like(theta)
    for it in range(p.iterations):
        for m in range(M):
            T[m], returns[it * M + m] = sample_episode(model, rollout, theta, rng, paths[m],
                                                       seen[m], dones[m], dist)
            lengths[it * M + m] = T[m]
            for t in range(T[m] + 1):
                values[m, t] = V[paths[m, 0, t]]
            gae(seen[m, 0, :T[m]], values[m, :T[m] + 1], dones[m, :T[m]], p.gamma, p.lam,
                adv[m])
            for t in range(T[m]):
                targets[m, t] = adv[m, t] + values[m, t]
        step = schedule_value(p.alpha, it + 1)
        step_value = schedule_value(p.alpha_value, it + 1)
        for _ in range(p.epochs):
            batch_grad[:] = 0.0
            for m in range(M):
                states, actions, old_log_pi, adv_m = paths[m, 0], paths[m, 1], seen[m, 1], adv[m]
                for t in range(T[m]):
                    s, a = states[t], actions[t]
                    row = row_of_state[s]
                    log_softmax(theta[row], log_probs)
                    weight = clipped_surrogate_weight(np.exp(log_probs[a] - old_log_pi[t]),
                                                      adv_m[t], clip)
                    softmax(theta[row], probs)
                    if entropy_coef > 0.0:
                        grad_entropy(probs, log_probs, entropy_grad)
                    for b in range(A):  # d (L^CLIP_t + c H_t) / d theta[row], over the batch
                        batch_grad[row, b] += (weight * log_prob_grad(probs, a, b)
                                               + entropy_coef * entropy_grad[b]) / M
                    V[s] = update_toward(V[s], targets[m, t], step_value)
            for row in range(theta.shape[0]):
                ascend(theta[row], batch_grad[row], step)


@njit(cache=True, parallel=True)
def _ppo(model, params, rollout, rng_states, out):
    for run in prange(rng_states.shape[0]):
        _ppo_run(model, params, rollout, rng_states[run].copy(), out.logits[run], out.V[run],
                 out.returns[run], out.lengths[run])


# ------------------------------------------------------------------ front end
def reinforce(mdp: TabularMDP, policy=None, *, gamma: float = 1.0, episodes: int = 1000,
              alpha=0.1, baseline: bool = False, alpha_value=0.1, ref_policy=None,
              beta: float = 0.0, reward_floor: float | None = None,
              max_steps: int | None = None, seed: int | None = 0,
              runs: int | None = None) -> PolicyGradientResult:
    """REINFORCE: Monte Carlo policy gradient (S&B section 13.3).

    After each episode, for ``t = 0, ..., T-1`` in order:
    ``theta <- theta + alpha gamma^t G_t grad log pi(A_t|S_t, theta)`` (eq. 13.8).
    With ``baseline=True`` (section 13.4, "REINFORCE with baseline", eq. 13.11) a
    tabular ``V`` is learned alongside, ``delta = G_t - V(S_t)``, ``V(S_t) += alpha_value delta``,
    and ``delta`` replaces ``G_t``.

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
    ref_policy : the reference of the KL penalty (any policy form), default ``None``.
    beta : the KL coefficient (>= 0; > 0 needs ``ref_policy``), default 0.0.
    reward_floor : learn from ``max(r, reward_floor)``; required (a finite number)
        when the MDP can pay ``-inf``; default ``None`` (no floor).
    max_steps : the step limit of an episode, default ``None``: the env's time limit
        (``mdp.max_episode_steps``), else 1000.
    seed : seed of the random streams (``None``: fresh entropy), default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs
        with a leading run axis.

    Returns
    -------
    A :class:`~tabular.results.PolicyGradientResult`: ``logits`` ``[R, A]`` (``[runs, R,
    A]`` with ``runs=n``), ``row_of_state`` ``[S]``, ``V`` the baseline ``[S]`` (``None``
    without ``baseline``), ``episode_returns`` (environment rewards, no KL term or floor)
    and ``episode_lengths`` ``[episodes]``; ``.policy`` the trained ``SoftmaxPolicy``.
    """
    su = setup(mdp, policy, ref_policy, beta, reward_floor, gamma, episodes, max_steps, runs,
               seed)
    params = ReinforceParams(su.gamma, su.episodes, step_size("alpha", alpha),
                             step_size("alpha_value", alpha_value, 1.0), bool(baseline))
    out = su.outputs()
    _reinforce(su.mdp.arrays, params, su.rollout, su.rng_states, out)
    return su.result(out, value=bool(baseline))


def actor_critic(mdp: TabularMDP, policy=None, *, gamma: float = 1.0, episodes: int = 1000,
                 alpha=0.1, alpha_value=0.1, lam: float = 0.0, ref_policy=None,
                 beta: float = 0.0, reward_floor: float | None = None,
                 max_steps: int | None = None, seed: int | None = 0,
                 runs: int | None = None) -> PolicyGradientResult:
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
    alpha : the actor's step size (number or schedule over episodes), default 0.1.
    alpha_value : the critic's step size in ``(0, 1]``, default 0.1.
    lam : the GAE parameter in ``[0, 1]``, default 0.0.

    Returns
    -------
    A :class:`~tabular.results.PolicyGradientResult` as in :func:`reinforce`, with ``V``
    the critic.
    """
    su = setup(mdp, policy, ref_policy, beta, reward_floor, gamma, episodes, max_steps, runs,
               seed)
    params = ActorCriticParams(su.gamma, su.episodes, step_size("alpha", alpha),
                               step_size("alpha_value", alpha_value, 1.0),
                               check_unit_interval("lam", lam))
    out = su.outputs()
    _actor_critic(su.mdp.arrays, params, su.rollout, su.rng_states, out)
    return su.result(out)


def ppo(mdp: TabularMDP, policy=None, *, gamma: float = 1.0, iterations: int = 100,
        episodes_per_batch: int = 8, epochs: int = 4, clip: float = 0.2, lam: float = 0.95,
        alpha=0.5, alpha_value=0.1, entropy_coef: float = 0.0, ref_policy=None,
        beta: float = 0.0, reward_floor: float | None = None,
        max_steps: int | None = None, seed: int | None = 0,
        runs: int | None = None) -> PolicyGradientResult:
    """Proximal policy optimisation with the clipped surrogate (Schulman et al., 2017).

    ``iterations`` times: sample ``M = episodes_per_batch`` episodes with the
    current policy ``pi_old``, compute GAE(``lam``) advantages ``A_t`` with the
    current critic, then ``epochs`` times take one full-batch ascent step of size
    ``alpha`` on ``(1/M) sum_episodes sum_t [L^CLIP_t + entropy_coef H(pi(.|s_t))]``,
    ``L^CLIP_t = min(rho_t A_t, clip(rho_t, 1 - clip, 1 + clip) A_t)`` (eq. 7),
    ``rho_t = pi(a_t|s_t) / pi_old(a_t|s_t)``; in each epoch the critic steps once
    per sample towards ``A_t + V_old(s_t)``.

    Parameters
    ----------
    mdp, policy, gamma, ref_policy, beta, reward_floor, max_steps, seed, runs :
        as in :func:`reinforce` (defaults: uniform tabular softmax, 1.0, ``None``, 0.0,
        ``None``, 1000, 0, ``None``).
    iterations : number of batches, default 100.
    episodes_per_batch : ``M``, default 8.
    epochs : ascent steps per batch, default 4.
    clip : the clip range ``epsilon`` in ``(0, 1)``, default 0.2.
    lam : the GAE parameter in ``[0, 1]``, default 0.95.
    alpha : the policy's step size (number or schedule over iterations), default 0.5.
    alpha_value : the critic's step size in ``(0, 1]`` (schedule over iterations),
        default 0.1.
    entropy_coef : weight of the entropy bonus (>= 0), default 0.0.

    Returns
    -------
    A :class:`~tabular.results.PolicyGradientResult` as in :func:`reinforce`, of
    ``iterations * episodes_per_batch`` episodes, with ``V`` the critic.
    """
    su = setup(mdp, policy, ref_policy, beta, reward_floor, gamma,
               check_positive_int("iterations", iterations)
               * check_positive_int("episodes_per_batch", episodes_per_batch),
               max_steps, runs, seed)
    clip = float(clip)
    if not 0.0 < clip < 1.0:
        raise ValueError(f"clip must be in (0, 1), got {clip}")
    params = PPOParams(su.gamma, int(iterations), int(episodes_per_batch),
                       check_positive_int("epochs", epochs), clip,
                       check_unit_interval("lam", lam), step_size("alpha", alpha),
                       step_size("alpha_value", alpha_value, 1.0),
                       check_nonnegative("entropy_coef", entropy_coef))
    out = su.outputs()
    _ppo(su.mdp.arrays, params, su.rollout, su.rng_states, out)
    return su.result(out)
