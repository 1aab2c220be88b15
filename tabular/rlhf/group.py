"""Group relative policy optimisation: policy gradient without a critic (Shao et al., 2024)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..checks import check_positive_int
from ..kernels.sampling import sample_start
from ..mdp import ModelArrays
from ..pg import _sample_episode, _setup, _step_size
from ..policy import SoftmaxPolicy
from ..results import PolicyGradientResult
from ..rules.policy_gradient import ascend, grad_log_softmax, softmax
from ..schedules import schedule_value


@njit(cache=True, inline="always")
def group_relative_advantages(returns, normalise, out):
    """``A_i = R_i - mean(R)``, divided by ``std(R)`` when ``normalise``: the critic-free
    advantage of GRPO (Shao et al., 2024, section 4.1.2). A group whose returns agree to
    rounding (``std <= 1e-12 (1 + |mean|)``) is only centred, never divided by ~0."""
    G = returns.shape[0]
    mean = returns.sum() / G
    var = 0.0
    for i in range(G):
        out[i] = returns[i] - mean
        var += out[i] * out[i]
    std = np.sqrt(var / G)
    if normalise and std > 1e-12 * (1.0 + abs(mean)):
        for i in range(G):
            out[i] /= std


@njit(cache=True)
def _grpo_run(env, shaping, row_of_state, iterations, group_size, alpha, normalise, max_steps,
              rng, theta, returns, lengths):
    """One run: each iteration samples a prompt, ``group_size`` responses to it, and takes
    one ascent step on ``(1/G) sum_i A_i sum_t grad log pi(a_t|s_t)`` with every token of
    response ``i`` sharing its advantage."""
    S, A = env.start_cdf.shape[0], theta.shape[1]
    states = np.empty((group_size, max_steps + 1), dtype=np.int64)
    actions = np.empty((group_size, max_steps), dtype=np.int64)
    dones = np.empty((group_size, max_steps), dtype=np.bool_)
    rewards, log_pis = np.empty((group_size, max_steps)), np.empty((group_size, max_steps))
    T = np.empty(group_size, dtype=np.int64)
    shaped, advantage = np.empty(group_size), np.empty(group_size)
    probs, log_probs, grad = np.empty(A), np.empty(A), np.empty(A)
    direction = np.zeros_like(theta)
    prompt_cdf = np.empty(S)
    for it in range(iterations):
        s0 = sample_start(env, rng)
        for s in range(S):  # the group shares its prompt
            prompt_cdf[s] = 1.0 if s >= s0 else 0.0
        group_env = ModelArrays(env.next_state, env.prob, env.reward, env.done, prompt_cdf)
        for i in range(group_size):
            T[i], returns[it * group_size + i] = _sample_episode(
                group_env, shaping, theta, row_of_state, max_steps, rng, states[i], actions[i],
                rewards[i], dones[i], log_pis[i], probs, log_probs)
            lengths[it * group_size + i] = T[i]
            shaped[i] = rewards[i, : T[i]].sum()
        group_relative_advantages(shaped, normalise, advantage)
        direction[:] = 0.0
        for i in range(group_size):
            for t in range(T[i]):
                row = row_of_state[states[i, t]]
                softmax(theta[row], probs)
                grad_log_softmax(probs, actions[i, t], grad)
                for b in range(A):
                    direction[row, b] += advantage[i] * grad[b] / group_size
        step = schedule_value(alpha, it + 1)
        for row in range(theta.shape[0]):
            ascend(theta[row], direction[row], step)


@njit(cache=True, parallel=True)
def _grpo(env, shaping, row_of_state, iterations, group_size, alpha, normalise, max_steps,
          rng_states, logits, returns, lengths):
    for run in prange(rng_states.shape[0]):
        _grpo_run(env, shaping, row_of_state, iterations, group_size, alpha, normalise,
                  max_steps, rng_states[run], logits[run], returns[run], lengths[run])


def grpo(mdp, policy: SoftmaxPolicy | None = None, *, iterations: int = 500,
         group_size: int = 8, alpha=0.5, normalise: bool = True,
         ref_policy: SoftmaxPolicy | None = None, kl_coef: float = 0.0,
         reward_floor: float | None = None, max_steps: int = 1000, seed: int | None = 0,
         runs: int = 1) -> PolicyGradientResult:
    """Group relative policy optimisation: policy gradient with no critic.

    Each iteration draws a prompt, samples ``group_size`` responses, and uses each
    response's return relative to its group, ``(R_i - mean R) / std R``
    (``normalise=False``: ``R_i - mean R``), as the advantage of all its tokens
    (outcome supervision; Shao et al., 2024). The KL penalty to ``ref_policy`` is
    folded into the per-token reward as in :func:`tabular.reinforce`, so at the
    KL-regularised optimum every response of a deterministic token MDP has the same
    return ``beta log Z(x)`` and every advantage is 0. ``alpha`` is a number or a
    :mod:`tabular.schedules` schedule over iterations. Returns the learners' common
    result (``episode_returns`` without the KL term, ``iterations * group_size``
    episodes).
    """
    group_size = check_positive_int("group_size", group_size)
    if group_size < 2:
        raise ValueError(f"group_size must be >= 2 (a group needs a mean), got {group_size}")
    setup = _setup(mdp, policy, ref_policy, kl_coef, reward_floor, 1.0,
                   check_positive_int("iterations", iterations) * group_size, max_steps, runs,
                   seed)
    logits, _, returns, lengths = setup.outputs()
    _grpo(setup.env, setup.shaping, setup.policy.row_of_state, int(iterations), group_size,
          _step_size("alpha", alpha), bool(normalise), setup.max_steps, setup.rng_states,
          logits, returns, lengths)
    return setup.result(logits, None, returns, lengths)
