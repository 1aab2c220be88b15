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
States that share a row share its logits, and their gradients add up. The update
rules are the small kernels of :mod:`tabular.pg_rules`.

The learners are model-free: episodes are drawn through
:func:`tabular.mdp.sample_step` from one xoshiro stream per run, runs in parallel;
same seed, same numbers, whatever the number of threads. Conventions:

- **Step sizes** are numbers or :mod:`tabular.schedules` schedules over the
  episode number (the iteration number for PPO), counted from 1.
- **Truncation is not termination.** An episode cut at ``max_steps`` has not
  reached a terminal state: actor-critic and PPO bootstrap its last step from the
  critic; REINFORCE, which has no critic to bootstrap from, sums the rewards seen.
- **KL penalty.** With ``ref_policy`` and ``kl_coef = beta > 0`` the learner sees
  the per-step reward ``r_t - beta (log pi(a_t|s_t) - log pi_ref(a_t|s_t))``, with
  the log-probabilities of the policy that sampled the episode; its expectation is
  the KL-regularised objective of RLHF. A ``ref_policy`` must allow every action
  the policy allows (else the KL is infinite).
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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from .checks import check_gamma, check_positive_int, check_unit_interval
from .kernels.rng import seed_states
from .kernels.sampling import sample_softmax, sample_start, sample_step
from .results import PolicyGradientResult
from .learning import (
    as_mdp,
    check_episode_args,
    per_run,
    squeeze_runs,
)
from .mdp import TabularMDP
from .policy import SoftmaxPolicy
from .rules.policy_gradient import (
    ascend,
    clipped_surrogate_weight,
    grad_entropy,
    grad_log_softmax,
    kl_shaped_reward,
    log_softmax,
    softmax,
)
from .rules.returns import discounted_returns, gae
from .rules.values import update_toward
from .schedules import as_schedule, schedule_value

DEFAULT_MAX_STEPS = 1000


# --------------------------------------------------------------------- kernels
# REINFORCE and actor-critic inline their one-run function into the prange body of
# their parallel kernel (the runs pattern of tabular.learning): 1.5x the speed
# (Gridworld4x4, one thread: 6.3M -> 9.5M steps/s) for 1.6-1.75x the compile time from
# an empty cache (4.0 s -> 6.5 s). PPO keeps its run separate: its time goes to the
# softmaxes of its epochs, and inlining it gained 12% for 1.8x the compile time
# (5.7 s -> 10.2 s).
@njit(cache=True, inline="always")
def _policy_gradient_step(theta, row, a, step, probs, grad):
    """``theta[row] += step * grad log pi(a | row)`` (S&B eq. 13.8 with the step folded)."""
    softmax(theta[row], probs)
    grad_log_softmax(probs, a, grad)
    ascend(theta[row], grad, step)


@njit(cache=True, inline="always")
def _sample_episode(env, shaping, theta, row_of_state, max_steps, rng, states, actions,
                    rewards, dones, log_pis, probs, log_probs):
    """Sample one episode of ``pi`` (at most ``max_steps`` steps) into the buffers.

    ``env = (next_state, prob, reward, done, start_cdf)``;
    ``shaping = (ref_log_probs, ref_row, kl_coef, reward_floor)``. Fills
    ``states[0..T]`` (``states[T]``: where the episode stopped) and, for ``t < T``,
    ``actions``, ``dones``, ``log_pis[t] = log pi(a_t|s_t)`` and the learning reward
    ``rewards[t]`` (floored, KL-shaped). Returns ``T`` and the environment return.
    """
    ref_log_probs, ref_row, kl_coef, reward_floor = shaping
    s = sample_start(env, rng)
    env_return = 0.0
    T = max_steps
    for t in range(max_steps):
        row = row_of_state[s]
        a = sample_softmax(theta[row], probs, rng)
        log_softmax(theta[row], log_probs)
        s_next, r, d = sample_step(env, s, a, rng)
        env_return += r
        states[t], actions[t], dones[t], log_pis[t] = s, a, d, log_probs[a]
        rewards[t] = kl_shaped_reward(max(r, reward_floor), log_probs[a],
                                      ref_log_probs[ref_row[s], a], kl_coef)
        s = s_next
        if d:
            T = t + 1
            break
    states[T] = s
    return T, env_return


@njit(cache=True, inline="always")
def _episode_buffers(max_steps, n_actions):
    """What :func:`_sample_episode` fills for one episode of at most ``max_steps`` steps,
    and the per-action scratch of a gradient step: ``(states, actions, dones, rewards,
    log_pis, probs, log_probs, grad)``."""
    return (np.empty(max_steps + 1, dtype=np.int64), np.empty(max_steps, dtype=np.int64),
            np.empty(max_steps, dtype=np.bool_), np.empty(max_steps), np.empty(max_steps),
            np.empty(n_actions), np.empty(n_actions), np.empty(n_actions))


@njit(cache=True, inline="always")
def _reinforce_run(env, shaping, row_of_state, gamma, episodes, alpha, baseline,
                   alpha_baseline, max_steps, rng, theta, V, returns, lengths):
    """One run of REINFORCE (S&B 13.3), with the baseline of 13.4 when ``baseline``."""
    states, actions, dones, rewards, log_pis, probs, log_probs, grad = _episode_buffers(
        max_steps, theta.shape[1])
    G = np.empty(max_steps)
    for episode in range(episodes):
        T, returns[episode] = _sample_episode(env, shaping, theta, row_of_state, max_steps, rng,
                                              states, actions, rewards, dones, log_pis, probs,
                                              log_probs)
        lengths[episode] = T
        discounted_returns(rewards[:T], gamma, dones[:T], 0.0, G)
        step = schedule_value(alpha, episode + 1)
        step_baseline = schedule_value(alpha_baseline, episode + 1)
        discount = 1.0  # gamma^t
        for t in range(T):
            s = states[t]
            delta = G[t]
            if baseline:
                delta -= V[s]
                V[s] = update_toward(V[s], G[t], step_baseline)
            _policy_gradient_step(theta, row_of_state[s], actions[t], step * discount * delta,
                                  probs, grad)
            discount *= gamma


@njit(cache=True, parallel=True)
def _reinforce(env, shaping, row_of_state, gamma, episodes, alpha, baseline, alpha_baseline,
               max_steps, rng_states, logits, V, returns, lengths):
    for run in prange(rng_states.shape[0]):
        _reinforce_run(env, shaping, row_of_state, gamma, episodes, alpha, baseline,
                       alpha_baseline, max_steps, rng_states[run], logits[run], V[run],
                       returns[run], lengths[run])


@njit(cache=True, inline="always")
def _actor_critic_run(env, shaping, row_of_state, gamma, episodes, alpha_actor, alpha_critic,
                      lam, max_steps, rng, theta, V, returns, lengths):
    """One run of actor-critic with GAE(lambda) advantages (S&B 13.5 when ``lam = 0``)."""
    states, actions, dones, rewards, log_pis, probs, log_probs, grad = _episode_buffers(
        max_steps, theta.shape[1])
    adv, values = np.empty(max_steps), np.empty(max_steps + 1)
    for episode in range(episodes):
        T, returns[episode] = _sample_episode(env, shaping, theta, row_of_state, max_steps, rng,
                                              states, actions, rewards, dones, log_pis, probs,
                                              log_probs)
        lengths[episode] = T
        for t in range(T + 1):
            values[t] = V[states[t]]
        gae(rewards[:T], values[:T + 1], dones[:T], gamma, lam, adv)
        step_actor = schedule_value(alpha_actor, episode + 1)
        step_critic = schedule_value(alpha_critic, episode + 1)
        discount = 1.0  # the I = gamma^t of S&B's actor-critic
        for t in range(T):
            s = states[t]
            V[s] = update_toward(V[s], adv[t] + values[t], step_critic)  # the lambda-return
            _policy_gradient_step(theta, row_of_state[s], actions[t],
                                  step_actor * discount * adv[t], probs, grad)
            discount *= gamma


@njit(cache=True, parallel=True)
def _actor_critic(env, shaping, row_of_state, gamma, episodes, alpha_actor, alpha_critic, lam,
                  max_steps, rng_states, logits, V, returns, lengths):
    for run in prange(rng_states.shape[0]):
        _actor_critic_run(env, shaping, row_of_state, gamma, episodes, alpha_actor, alpha_critic,
                          lam, max_steps, rng_states[run], logits[run], V[run], returns[run],
                          lengths[run])


@njit(cache=True)
def _ppo_run(env, shaping, row_of_state, gamma, iterations, batch, epochs, clip, lam, alpha,
             alpha_critic, entropy_coef, max_steps, rng, theta, V, returns, lengths):
    """One run of PPO-clip (Schulman et al., 2017, Algorithm 1, with tabular actor and critic).

    Each iteration samples ``batch`` episodes with the current policy, then runs
    ``epochs`` full-batch ascent steps on
    ``(1/batch) sum_episodes sum_t [L^CLIP_t + entropy_coef H(pi(.|s_t))]``;
    in each epoch the critic steps once per sample towards ``A_t + V_old(s_t)``.
    """
    n_actions = theta.shape[1]
    span = max_steps + 1  # buffer slots of one episode
    size = batch * span
    states = np.empty(size, dtype=np.int64)
    actions = np.empty(size, dtype=np.int64)
    dones = np.empty(size, dtype=np.bool_)
    rewards, log_pis, adv, targets = np.empty(size), np.empty(size), np.empty(size), np.empty(size)
    values = np.empty(size)
    lengths_now = np.empty(batch, dtype=np.int64)
    probs, log_probs = np.empty(n_actions), np.empty(n_actions)
    surrogate_grad, entropy_grad = np.zeros(n_actions), np.zeros(n_actions)
    batch_grad = np.empty_like(theta)
    for it in range(iterations):
        for m in range(batch):
            lo, hi = m * span, (m + 1) * span
            T, env_return = _sample_episode(env, shaping, theta, row_of_state, max_steps, rng,
                                            states[lo:hi], actions[lo:hi], rewards[lo:hi],
                                            dones[lo:hi], log_pis[lo:hi], probs, log_probs)
            lengths_now[m] = T
            returns[it * batch + m], lengths[it * batch + m] = env_return, T
            for t in range(lo, lo + T + 1):
                values[t] = V[states[t]]
            gae(rewards[lo:lo + T], values[lo:lo + T + 1], dones[lo:lo + T], gamma, lam,
                adv[lo:hi])
            for t in range(lo, lo + T):
                targets[t] = adv[t] + values[t]
        step = schedule_value(alpha, it + 1)
        step_critic = schedule_value(alpha_critic, it + 1)
        for _ in range(epochs):
            batch_grad[:] = 0.0
            for m in range(batch):
                for i in range(m * span, m * span + lengths_now[m]):
                    s, a = states[i], actions[i]
                    row = row_of_state[s]
                    softmax(theta[row], probs)
                    log_softmax(theta[row], log_probs)
                    weight = clipped_surrogate_weight(np.exp(log_probs[a] - log_pis[i]), adv[i],
                                                      clip)
                    grad_log_softmax(probs, a, surrogate_grad)
                    if entropy_coef > 0.0:
                        grad_entropy(probs, log_probs, entropy_grad)
                    for b in range(n_actions):
                        batch_grad[row, b] += (weight * surrogate_grad[b]
                                               + entropy_coef * entropy_grad[b]) / batch
                    V[s] = update_toward(V[s], targets[i], step_critic)
            for row in range(theta.shape[0]):
                ascend(theta[row], batch_grad[row], step)


@njit(cache=True, parallel=True)
def _ppo(env, shaping, row_of_state, gamma, iterations, batch, epochs, clip, lam, alpha,
         alpha_critic, entropy_coef, max_steps, rng_states, logits, V, returns, lengths):
    for run in prange(rng_states.shape[0]):
        _ppo_run(env, shaping, row_of_state, gamma, iterations, batch, epochs, clip, lam, alpha,
                 alpha_critic, entropy_coef, max_steps, rng_states[run], logits[run], V[run],
                 returns[run], lengths[run])


# ------------------------------------------------------------------ front end
@dataclass(frozen=True)
class _Setup:
    """The validated arguments every learner shares, in the form its kernel takes."""

    mdp: TabularMDP
    policy: SoftmaxPolicy
    env: tuple
    shaping: tuple
    gamma: float
    episodes: int
    runs: int
    max_steps: int
    rng_states: np.ndarray

    def outputs(self):
        """Per-run logits (copies of the policy's), ``V``, returns and lengths."""
        return (per_run(self.policy.logits, self.runs),
                np.zeros((self.runs, self.mdp.n_states)),
                np.zeros((self.runs, self.episodes)),
                np.zeros((self.runs, self.episodes), dtype=np.int64))

    def result(self, logits, V, returns, lengths) -> PolicyGradientResult:
        return PolicyGradientResult(
            squeeze_runs(returns, self.runs), squeeze_runs(lengths, self.runs),
            squeeze_runs(logits, self.runs), self.policy.row_of_state.copy(),
            None if V is None else squeeze_runs(V, self.runs))


def _check_nonnegative(name: str, value: float) -> float:
    value = float(value)
    if not 0.0 <= value < np.inf:  # also rejects NaN
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def _step_size(name: str, value, high: float = np.inf) -> np.ndarray:
    """A number or schedule in ``(0, high]``: a policy step may exceed 1, a critic's
    (``high=1``, eq. 2.4 moves the estimate at most all the way to the target) not."""
    try:
        return as_schedule(name, value, high=high).params
    except ValueError as err:
        message = str(err)
        raise ValueError(message if name in message else f"{name}: {message}") from None


def _check_policy(mdp: TabularMDP, policy, name: str) -> SoftmaxPolicy:
    if not isinstance(policy, SoftmaxPolicy):
        raise TypeError(f"{name} must be a tabular.SoftmaxPolicy, got {type(policy).__name__}")
    if policy.n_states != mdp.n_states or policy.n_actions != mdp.n_actions:
        raise ValueError(f"{name} covers {policy.n_states} states and {policy.n_actions} "
                         f"actions; the MDP has {mdp.n_states} states and {mdp.n_actions}")
    return policy


def _check_reward_floor(mdp: TabularMDP, reward_floor) -> float:
    """The floor the kernels apply (``-inf``: nothing to floor), or a clear error."""
    pays_minus_inf = (mdp.prob > 0.0) & (mdp.reward == -np.inf)
    if reward_floor is None:
        if pays_minus_inf.any():
            s, a, _ = np.argwhere(pays_minus_inf)[0]
            raise ValueError(
                f"the MDP pays a -inf reward (state {mdp.state_name(int(s))}, action "
                f"{mdp.action_name(int(a))}) and a policy gradient cannot be computed from an "
                "infinite return: pass reward_floor=<a finite number well below the other "
                "returns> (e.g. -10 times their scale); the learner then uses "
                "max(r, reward_floor) (see tabular.pg for when this keeps the optimum)")
        return -np.inf
    floor = float(reward_floor)
    if not np.isfinite(floor):
        raise ValueError(f"reward_floor must be a finite number (or None), got {reward_floor!r}")
    return floor


def _reference(mdp: TabularMDP, policy: SoftmaxPolicy, ref_policy, kl_coef: float):
    """``(ref_log_probs [R_ref, A], ref_row [S])`` for the kernels (zeros without a reference)."""
    if kl_coef > 0.0 and ref_policy is None:
        raise ValueError("kl_coef > 0 needs a ref_policy to stay close to")
    if ref_policy is None:
        return np.zeros((1, mdp.n_actions)), np.zeros(mdp.n_states, dtype=np.int64)
    ref_policy = _check_policy(mdp, ref_policy, "ref_policy")
    allowed = np.isfinite(policy.logits)[policy.row_of_state]
    forbidden = ~np.isfinite(ref_policy.logits)[ref_policy.row_of_state]
    clash = allowed & forbidden
    if kl_coef > 0.0 and clash.any():
        s, a = np.argwhere(clash)[0]
        raise ValueError(f"ref_policy masks action {mdp.action_name(int(a))} in state "
                         f"{mdp.state_name(int(s))}, which policy allows: the KL penalty "
                         "would be infinite")
    return ref_policy.row_log_probs(), ref_policy.row_of_state


def _setup(mdp, policy, ref_policy, kl_coef, reward_floor, gamma, episodes, max_steps, runs,
           seed) -> _Setup:
    mdp = as_mdp(mdp)
    policy = _check_policy(mdp, SoftmaxPolicy.tabular(mdp.n_states, mdp.n_actions)
                           if policy is None else policy, "policy")
    kl_coef = _check_nonnegative("kl_coef", kl_coef)
    ref_log_probs, ref_row = _reference(mdp, policy, ref_policy, kl_coef)
    episodes, runs, max_steps = check_episode_args(episodes, runs, max_steps)
    return _Setup(mdp=mdp, policy=policy, env=mdp.arrays,
                  shaping=(ref_log_probs, ref_row, kl_coef,
                           _check_reward_floor(mdp, reward_floor)),
                  gamma=check_gamma(gamma), episodes=episodes, runs=runs, max_steps=max_steps,
                  rng_states=seed_states(seed, runs))


def reinforce(mdp: TabularMDP, policy: SoftmaxPolicy | None = None, *, gamma: float = 1.0,
              episodes: int = 1000, alpha=0.1, baseline: bool = False, alpha_baseline=0.1,
              ref_policy: SoftmaxPolicy | None = None, kl_coef: float = 0.0,
              reward_floor: float | None = None, max_steps: int = DEFAULT_MAX_STEPS,
              seed: int | None = 0, runs: int = 1) -> PolicyGradientResult:
    """REINFORCE: Monte Carlo policy gradient (S&B section 13.3).

    After each episode, for ``t = 0, ..., T-1`` in order:
    ``theta <- theta + alpha gamma^t G_t grad log pi(A_t|S_t, theta)`` (eq. 13.8).
    With ``baseline=True`` (section 13.4) a tabular ``V`` is learned alongside,
    ``delta = G_t - V(S_t)``, ``V(S_t) += alpha_baseline delta``, and ``delta``
    replaces ``G_t``. ``policy`` (default: uniform tabular softmax) is not
    modified. See the module docstring for ``ref_policy``/``kl_coef``,
    ``reward_floor``, schedules and truncation at ``max_steps``.
    """
    setup = _setup(mdp, policy, ref_policy, kl_coef, reward_floor, gamma, episodes, max_steps,
                   runs, seed)
    logits, V, returns, lengths = setup.outputs()
    _reinforce(setup.env, setup.shaping, setup.policy.row_of_state, setup.gamma,
               setup.episodes, _step_size("alpha", alpha), bool(baseline),
               _step_size("alpha_baseline", alpha_baseline, 1.0), setup.max_steps, setup.rng_states,
               logits, V, returns, lengths)
    return setup.result(logits, V if baseline else None, returns, lengths)


def actor_critic(mdp: TabularMDP, policy: SoftmaxPolicy | None = None, *, gamma: float = 1.0,
                 episodes: int = 1000, alpha_actor=0.1, alpha_critic=0.1, lam: float = 0.0,
                 ref_policy: SoftmaxPolicy | None = None, kl_coef: float = 0.0,
                 reward_floor: float | None = None, max_steps: int = DEFAULT_MAX_STEPS,
                 seed: int | None = 0, runs: int = 1) -> PolicyGradientResult:
    """Actor-critic with a tabular critic ``V`` and GAE(lambda) advantages.

    ``lam = 0``: the advantage is the TD error
    ``delta_t = R_{t+1} + gamma V(S_{t+1}) - V(S_t)`` of S&B's one-step actor-critic
    (section 13.5); ``lam`` in ``(0, 1]``: GAE, ``A_t = sum_k (gamma lam)^k delta_{t+k}``
    (Schulman et al., 2016; ``lam = 1`` is the Monte Carlo return minus ``V``).
    After each episode, for each step in order: ``V(S_t) += alpha_critic
    (A_t + V_old(S_t) - V(S_t))`` (towards the lambda-return) and ``theta +=
    alpha_actor gamma^t A_t grad log pi(A_t|S_t)``. The advantages use the critic
    as it was when the episode was sampled (S&B's online version updates ``V``
    between the steps of an episode; both have the same fixed point, ``V = v_pi``).
    Truncated episodes bootstrap from ``V``.
    """
    setup = _setup(mdp, policy, ref_policy, kl_coef, reward_floor, gamma, episodes, max_steps,
                   runs, seed)
    logits, V, returns, lengths = setup.outputs()
    _actor_critic(setup.env, setup.shaping, setup.policy.row_of_state, setup.gamma,
                  setup.episodes, _step_size("alpha_actor", alpha_actor),
                  _step_size("alpha_critic", alpha_critic, 1.0), check_unit_interval("lam", lam),
                  setup.max_steps, setup.rng_states, logits, V, returns, lengths)
    return setup.result(logits, V, returns, lengths)


def ppo(mdp: TabularMDP, policy: SoftmaxPolicy | None = None, *, gamma: float = 1.0,
        iterations: int = 100, episodes_per_batch: int = 8, epochs: int = 4, clip: float = 0.2,
        lam: float = 0.95, alpha=0.5, alpha_critic=0.1, entropy_coef: float = 0.0,
        ref_policy: SoftmaxPolicy | None = None, kl_coef: float = 0.0,
        reward_floor: float | None = None, max_steps: int = DEFAULT_MAX_STEPS,
        seed: int | None = 0, runs: int = 1) -> PolicyGradientResult:
    """Proximal policy optimisation with the clipped surrogate (Schulman et al., 2017).

    ``iterations`` times: sample ``M = episodes_per_batch`` episodes with the
    current policy ``pi_old``, compute GAE(``lam``) advantages ``A_t`` with the
    current critic, then ``epochs`` times take one full-batch ascent step of size
    ``alpha`` on ``(1/M) sum_episodes sum_t [L^CLIP_t + entropy_coef H(pi(.|s_t))]``,
    ``L^CLIP_t = min(rho_t A_t, clip(rho_t, 1 - clip, 1 + clip) A_t)`` (eq. 7),
    ``rho_t = pi(a_t|s_t) / pi_old(a_t|s_t)``; in each epoch the critic steps once
    per sample towards ``A_t + V_old(s_t)``. The result holds
    ``iterations * episodes_per_batch`` episodes.
    """
    setup = _setup(mdp, policy, ref_policy, kl_coef, reward_floor, gamma,
                   check_positive_int("iterations", iterations)
                   * check_positive_int("episodes_per_batch", episodes_per_batch),
                   max_steps, runs, seed)
    clip = float(clip)
    if not 0.0 < clip < 1.0:
        raise ValueError(f"clip must be in (0, 1), got {clip}")
    logits, V, returns, lengths = setup.outputs()
    _ppo(setup.env, setup.shaping, setup.policy.row_of_state, setup.gamma, int(iterations),
         int(episodes_per_batch), check_positive_int("epochs", epochs), clip,
         check_unit_interval("lam", lam), _step_size("alpha", alpha),
         _step_size("alpha_critic", alpha_critic, 1.0),
         _check_nonnegative("entropy_coef", entropy_coef), setup.max_steps, setup.rng_states,
         logits, V, returns, lengths)
    return setup.result(logits, V, returns, lengths)
