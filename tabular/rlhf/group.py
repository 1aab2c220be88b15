"""Group relative policy optimisation: policy gradient without a critic (Shao et al., 2024)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ..checks import check_positive_int
from ..kernels.rollout import episode_buffers, sample_episode
from ..kernels.sampling import sample_start
from ..mdp import ModelArrays
from ..pg_setup import setup, step_size
from ..results import PolicyGradientResult
from ..rules.policy_gradient import accumulate_log_prob_grad, ascend
from ..schedules import schedule_value


class GRPOParams(NamedTuple):
    """:func:`grpo` as its kernel reads it (``alpha`` as schedule parameters)."""

    iterations: int
    group_size: int
    alpha: np.ndarray
    normalise: bool


@njit(cache=True, inline="always")
def group_relative_advantages(returns, normalise, out):
    """``out[i] = A_i = R_i - mean(R)`` over a group's ``returns``, divided by ``std(R)``
    when ``normalise``: the critic-free advantage of GRPO (Shao et al., 2024, section
    4.1.2). A group whose returns agree to rounding (``std <= 1e-12 (1 + |mean|)``) is
    only centred, never divided by ~0."""
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
def _grpo_run(model, p, rollout, rng, theta, returns, lengths):
    """One run: each iteration samples a prompt, ``group_size`` responses to it, and takes
    one ascent step on ``(1/G) sum_i A_i sum_t grad log pi(a_t|s_t)`` with every token of
    response ``i`` sharing its advantage."""
    S, G = model.start_cdf.shape[0], p.group_size
    paths, seen, dones, dist = episode_buffers(G, rollout.max_steps, theta.shape[1])
    T = np.empty(G, dtype=np.int64)
    shaped, advantage = np.empty(G), np.empty(G)
    direction, grad = np.zeros_like(theta), np.empty(theta.shape[1])
    prompt_cdf = np.empty(S)
    for it in range(p.iterations):
        s0 = sample_start(model, rng)
        for s in range(S):  # the group shares its prompt
            prompt_cdf[s] = 1.0 if s >= s0 else 0.0
        group = ModelArrays(model.next_state, model.prob, model.reward, model.done, prompt_cdf)
        for i in range(G):
            T[i], returns[it * G + i] = sample_episode(group, rollout, theta, rng, paths[i],
                                                       seen[i], dones[i], dist)
            lengths[it * G + i] = T[i]
            shaped[i] = seen[i, 0, : T[i]].sum()
        group_relative_advantages(shaped, p.normalise, advantage)
        direction[:] = 0.0
        for i in range(G):
            for t in range(T[i]):
                row = rollout.row_of_state[paths[i, 0, t]]
                grad[:] = 0.0  # this token's A_i grad log pi(a_t|s_t)
                accumulate_log_prob_grad(theta[row], paths[i, 1, t], advantage[i], dist[0], grad)
                for b in range(grad.shape[0]):
                    direction[row, b] += grad[b] / G
        step = schedule_value(p.alpha, it + 1)
        for row in range(theta.shape[0]):
            ascend(theta[row], direction[row], step)


@njit(cache=True, parallel=True)
def _grpo(model, params, rollout, rng_states, out):
    for run in prange(rng_states.shape[0]):
        _grpo_run(model, params, rollout, rng_states[run].copy(), out.logits[run],
                  out.returns[run], out.lengths[run])


def grpo(mdp, policy=None, *, iterations: int = 500, group_size: int = 8, alpha=0.5,
         normalise: bool = True, ref_policy=None, beta: float = 0.0,
         reward_floor: float | None = None, max_steps: int | None = None, seed: int | None = 0,
         runs: int | None = None) -> PolicyGradientResult:
    """Group relative policy optimisation: policy gradient with no critic (Shao et al.,
    2024, section 4.1, with outcome supervision).

    Each iteration draws a prompt (a start state), samples ``group_size`` responses to
    it, and uses each response's return relative to its group,
    ``(R_i - mean R) / std R`` (``normalise=False``: ``R_i - mean R``), as the
    advantage of all its tokens; then takes one ascent step of size ``alpha`` on
    ``(1/G) sum_i A_i sum_t grad log pi(a_t|s_t)``. The KL penalty to ``ref_policy``
    is folded into the per-token reward as in :func:`tabular.reinforce` (the paper
    adds an unbiased KL estimate to the loss instead), so at the KL-regularised
    optimum every response of a deterministic token MDP has the same return
    ``beta log Z(x)`` and every advantage is 0. There is no discount (``gamma = 1``).

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` (e.g. a token MDP's) or a Gymnasium env.
    policy : the starting policy, a :class:`~tabular.SoftmaxPolicy` or an ``[S, A]``
        matrix of probabilities; default ``None``: the uniform tabular softmax.
    iterations : number of groups, default 500.
    group_size : responses per group (>= 2), default 8.
    alpha : step size (number or :mod:`tabular.schedules` schedule over iterations),
        default 0.5.
    normalise : divide the centred returns by their standard deviation, default True.
    ref_policy : the reference of the KL penalty (any policy form), default ``None``.
    beta : the KL coefficient (>= 0; > 0 needs ``ref_policy``), default 0.0.
    reward_floor : learn from ``max(r, reward_floor)`` (required when the MDP can
        pay ``-inf``), default ``None``.
    max_steps : the step limit of a response, default ``None``: the env's time limit
        (``mdp.max_episode_steps``), else 1000.
    seed : seed of the random streams, default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` runs.

    Returns
    -------
    A :class:`~tabular.results.PolicyGradientResult`: ``logits`` ``[R, A]`` (``[runs, R,
    A]`` with ``runs=n``), ``row_of_state`` ``[S]``, ``V = None`` (no critic),
    ``episode_returns`` (without the KL term) and ``episode_lengths`` of the
    ``iterations * group_size`` responses; ``.policy`` the trained ``SoftmaxPolicy``.
    """
    group_size = check_positive_int("group_size", group_size)
    if group_size < 2:
        raise ValueError(f"group_size must be >= 2 (a group needs a mean), got {group_size}")
    su = setup(mdp, policy, ref_policy, beta, reward_floor, 1.0,
               check_positive_int("iterations", iterations) * group_size, max_steps, runs, seed)
    params = GRPOParams(int(iterations), group_size, step_size("alpha", alpha), bool(normalise))
    out = su.outputs(value=False)
    _grpo(su.mdp.arrays, params, su.rollout, su.rng_states, out)
    return su.result(out, value=False)
