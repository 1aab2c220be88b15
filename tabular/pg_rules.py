"""Update rules of the policy-gradient learners, one small kernel each.

A tabular softmax policy keeps one row of logits ``theta[row]`` per row of a
:class:`~tabular.SoftmaxPolicy`; every rule below acts on one such row. The
learners in :mod:`tabular.pg` compose them in their episode loops, so each
algorithm reads like its equation in Sutton & Barto (2nd ed., chapter 13) or in
the PPO and GAE papers (Schulman et al., 2016; 2017).

Masked actions (``-inf`` logits, a grammar in the token MDP) have probability 0:
their gradient is 0 and :func:`ascend` never touches them, so they stay ``-inf``
and never turn into NaN.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .learning import td_error
from .td import td_target


@njit(cache=True, inline="always")
def grad_log_softmax(probs, a, out):
    """``out[b] = d log pi(a) / d theta_b = 1[b == a] - pi(b)`` (S&B eq. 13.9).

    ``probs`` is ``softmax(theta)``; a masked action (``pi(b) = 0``, never sampled)
    gets gradient 0.
    """
    for b in range(probs.shape[0]):
        out[b] = -probs[b]
    out[a] += 1.0


@njit(cache=True, inline="always")
def grad_entropy(probs, log_probs, out):
    """``out[b] = d H / d theta_b = -pi(b) (log pi(b) + H)`` with ``H = -sum pi log pi``.

    Masked actions (``pi(b) = 0``, ``log pi(b) = -inf``) contribute nothing and get 0.
    """
    h = 0.0
    for b in range(probs.shape[0]):
        if probs[b] > 0.0:
            h -= probs[b] * log_probs[b]
    for b in range(probs.shape[0]):
        out[b] = -probs[b] * (log_probs[b] + h) if probs[b] > 0.0 else 0.0


@njit(cache=True, inline="always")
def ascend(theta, direction, step):
    """Gradient ascent on one row of logits: ``theta += step * direction``.

    Masked logits (``-inf``) are left alone: they stay masked whatever the step.
    """
    for b in range(theta.shape[0]):
        if theta[b] > -np.inf:
            theta[b] += step * direction[b]


@njit(cache=True, inline="always")
def returns_to_go(rewards, gamma, out):
    """``out[t] = G_t = sum_{k >= t} gamma^(k - t) r_k`` over one episode (S&B eq. 3.8).

    Truncated episodes are not bootstrapped: the sum stops at the last reward.
    """
    g = 0.0
    for t in range(rewards.shape[0] - 1, -1, -1):
        g = rewards[t] + gamma * g
        out[t] = g


@njit(cache=True, inline="always")
def gae(rewards, values, dones, gamma, lam, out):
    """Generalized advantage estimates of one episode (Schulman et al., 2016, eq. 16).

    ``rewards[t]``, ``dones[t]`` for ``t < T`` and ``values[t] = V(s_t)`` for
    ``t <= T`` (``values[T]`` bootstraps a truncated episode; it is ignored when
    ``dones[T - 1]``). One backward pass of ``A_t = delta_t + gamma lam A_{t+1}``
    over the TD errors ``delta_t = r_t + gamma V(s_{t+1}) - V(s_t)`` (S&B eq. 6.5,
    :func:`tabular.td.td_target`): ``lam = 0`` gives ``A_t = delta_t``,
    ``lam = 1`` gives ``A_t = G_t - V(s_t)``.
    """
    advantage = 0.0
    for t in range(rewards.shape[0] - 1, -1, -1):
        delta = td_error(td_target(rewards[t], gamma, values[t + 1], dones[t]), values[t])
        advantage = delta if dones[t] else delta + gamma * lam * advantage
        out[t] = advantage


@njit(cache=True, inline="always")
def clipped_surrogate_weight(ratio, advantage, clip):
    """The weight ``w`` with ``d L^CLIP / d theta = w * d log pi(a) / d theta``.

    ``L^CLIP = min(rho A, clip(rho, 1 - eps, 1 + eps) A)`` with the probability
    ratio ``rho = pi(a) / pi_old(a)`` (Schulman et al., 2017, eq. 7). Where the
    unclipped term is the minimum, ``d(rho A) = rho A d log pi``; where the clipped
    term is, the objective is flat in ``theta`` and the weight is 0.
    """
    if advantage >= 0.0:
        return ratio * advantage if ratio < 1.0 + clip else 0.0
    return ratio * advantage if ratio > 1.0 - clip else 0.0


@njit(cache=True, inline="always")
def kl_shaped_reward(reward, log_pi, log_ref, kl_coef):
    """``r - beta * (log pi(a|s) - log pi_ref(a|s))``: the KL penalty to a reference
    folded into the per-step reward (Ziegler et al., 2019; Stiennon et al., 2020).

    Its expectation over ``a ~ pi`` is ``r - beta * KL(pi || pi_ref)`` at ``s``.
    """
    if kl_coef == 0.0:
        return reward
    return reward - kl_coef * (log_pi - log_ref)
