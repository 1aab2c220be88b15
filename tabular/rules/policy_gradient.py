"""Update rules of the policy-gradient learners, one small kernel each.

A tabular softmax policy keeps one row of logits ``theta[row]`` per row of a
:class:`~tabular.SoftmaxPolicy`; every rule below acts on one such row. The
learners compose them in their loops, so each reads like its equation: REINFORCE
and actor-critic in :mod:`tabular.pg.learners` (Sutton & Barto, 2nd ed., chapter 13), PPO
with GAE and its adaptive KL penalty (Schulman et al., 2016; 2017), TRPO's Fisher
products (Schulman et al., 2015; :mod:`tabular.pg.trpo`), GRPO and DPO in
:mod:`tabular.rlhf` (Shao et al., 2024; Rafailov et al., 2023) and
maximum-likelihood training in :mod:`tabular.rlhf.lm`. All of them take their gradient
from one rule,
:func:`log_prob_grad`, through :func:`accumulate_log_prob_grad` (``grad log pi``
scaled by a weight) or, where a learner adds other terms to the same row (PPO's
entropy bonus), term by term; and
:func:`policy_gradient_step` is that rule applied to the logits themselves.

Masked actions (``-inf`` logits, a grammar in the token MDP) have probability 0:
their gradient is 0 and no rule touches them, so they stay ``-inf`` and never turn
into NaN.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular._numba.rng import categorical


@njit(cache=True, inline="always")
def _max_logit(logits):
    m = -np.inf
    for a in range(logits.shape[0]):
        if logits[a] > m:
            m = logits[a]
    return m


@njit(cache=True, inline="always")
def softmax(logits, out):
    """``out[a] = exp(l_a - max l) / sum_b exp(l_b - max l)``; ``-inf`` logits give 0."""
    m = _max_logit(logits)
    total = 0.0
    for a in range(logits.shape[0]):
        e = np.exp(logits[a] - m) if logits[a] > -np.inf else 0.0
        out[a] = e
        total += e
    for a in range(logits.shape[0]):
        out[a] /= total


@njit(cache=True, inline="always")
def log_softmax(logits, out):
    """``out[a] = l_a - logsumexp(l)`` (stable; ``-inf`` logits stay ``-inf``)."""
    m = _max_logit(logits)
    total = 0.0
    for a in range(logits.shape[0]):
        if logits[a] > -np.inf:
            total += np.exp(logits[a] - m)
    lse = m + np.log(total)
    for a in range(logits.shape[0]):
        out[a] = logits[a] - lse


@njit(cache=True, inline="always")
def log_prob_grad(probs, a, b):
    """``d log pi(a) / d theta_b = 1[b == a] - pi(b)`` for ``pi = softmax(theta)``
    (S&B eq. 13.9), from ``probs = pi``."""
    return (1.0 if b == a else 0.0) - probs[b]


@njit(cache=True, inline="always")
def accumulate_log_prob_grad(theta, a, weight, probs, out):
    """``out += weight * d log pi(a) / d theta`` for ``pi = softmax(theta)``: the one
    gradient assembly of every learner (REINFORCE, actor-critic, PPO, GRPO, DPO and
    maximum-likelihood training).

    ``out[b] += weight * (1[b == a] - pi(b))`` (:func:`log_prob_grad`); ``probs``
    receives ``pi``. A masked
    action (``theta_b = -inf``, never sampled) has ``pi(b) = 0``: its term is a zero,
    so ``out[b]`` keeps its value (a ``-inf`` logit stays ``-inf``) for any finite
    ``weight``.
    """
    softmax(theta, probs)
    for b in range(probs.shape[0]):
        out[b] += weight * log_prob_grad(probs, a, b)


@njit(cache=True, inline="always")
def policy_gradient_step(theta, a, step, probs):
    """One stochastic gradient-ascent step on ``log pi(a)``:
    ``theta += step * grad log pi(a | theta)``.

    S&B eq. 13.8 with the step ``alpha gamma^t G_t`` folded into ``step``
    (``alpha gamma^t delta`` with a baseline or critic, sections 13.4-13.5); a
    maximum-likelihood step on token ``a`` when ``step`` is the learning rate.
    Masked logits stay ``-inf``.
    """
    accumulate_log_prob_grad(theta, a, step, probs, theta)


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


@njit(cache=True)
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


@njit(cache=True)
def kl_grad(old_probs, probs, b):
    """``d KL(pi_old || pi) / d theta_b = pi(b) - pi_old(b)`` for ``pi = softmax(theta)``:
    the gradient of PPO's adaptive KL penalty (Schulman et al., 2017, eq. 8)."""
    return probs[b] - old_probs[b]


@njit(cache=True)
def adaptive_kl_penalty(penalty, kl, kl_target):
    """The next coefficient ``c`` of PPO's adaptive KL penalty (Schulman et al., 2017,
    section 4, eq. 8): halved when the update's KL ``d < d_targ / 1.5``, doubled when
    ``d > 1.5 d_targ``, kept otherwise.

    Held within ``[1e-10, 1e10]`` so that a long run of small (or large) updates can
    neither erase it nor overflow it; a NaN ``kl`` keeps it. This penalises the KL to
    the *previous* policy; the KL to a reference policy is ``beta``'s.
    """
    if kl < kl_target / 1.5:
        return max(penalty / 2.0, 1e-10)
    if kl > 1.5 * kl_target:
        return min(penalty * 2.0, 1e10)
    return penalty


@njit(cache=True, inline="always")
def softmax_kl(old_probs, old_log_probs, log_probs):
    """``KL(p || q) = sum_b p(b) (log p(b) - log q(b))`` of two softmax rows, from ``p``,
    ``log p`` and ``log q``; actions with ``p(b) = 0`` (masked) contribute nothing."""
    kl = 0.0
    for b in range(old_probs.shape[0]):
        if old_probs[b] > 0.0:
            kl += old_probs[b] * (old_log_probs[b] - log_probs[b])
    return kl


@njit(cache=True, inline="always")
def fisher_vector_product(probs, v, weight, out):
    """``out = weight (diag(pi) - pi pi^T) v``: the Fisher information of a softmax row,
    ``E_{a~pi}[grad log pi(a) grad log pi(a)^T]``, times ``v`` (the Hessian of
    ``KL(pi || softmax(theta))`` at ``theta``; Schulman et al., 2015, appendix C)."""
    mean = 0.0
    for b in range(probs.shape[0]):
        mean += probs[b] * v[b]
    for b in range(probs.shape[0]):
        out[b] = weight * probs[b] * (v[b] - mean)


@njit(cache=True, inline="always")
def group_relative_advantages(returns: np.ndarray, normalise: bool, out: np.ndarray) -> None:
    """``out[i] = A_i = R_i - mean(R)`` over a group's ``returns``, divided by ``std(R)``
    when ``normalise``: the critic-free advantage of GRPO (Shao et al., 2024, section
    4.1.2), and PPO's advantage normalisation over a batch. A group whose returns agree
    to rounding (``std <= 1e-12 (1 + |mean|)``) is only centred, never divided by ~0."""
    G = returns.shape[0]
    mean = returns.sum() / G
    for i in range(G):
        out[i] = returns[i] - mean
    if normalise:
        scale_by_std(returns, out)


@njit(cache=True, inline="always")
def scale_by_std(returns, advantages):
    """Divide ``advantages`` by the standard deviation of the group's ``returns`` (left
    as they are when the returns agree to rounding)."""
    G = returns.shape[0]
    mean = returns.sum() / G
    var = 0.0
    for i in range(G):
        deviation = returns[i] - mean
        var += deviation * deviation
    std = np.sqrt(var / G)
    if std > 1e-12 * (1.0 + abs(mean)):
        for i in range(G):
            advantages[i] /= std


@njit(cache=True)
def kl_shaped_reward(reward, log_pi, log_ref, beta):
    """``r - beta * (log pi(a|s) - log pi_ref(a|s))``: the KL penalty to a reference
    folded into the per-step reward (Ziegler et al., 2019; Stiennon et al., 2020).

    Its expectation over ``a ~ pi`` is ``r - beta * KL(pi || pi_ref)`` at ``s``.
    ``beta = 0`` returns ``r`` as it is, whatever ``log_ref`` (even ``-inf``).
    """
    if beta == 0.0:
        return reward
    return reward - beta * (log_pi - log_ref)


@njit(cache=True, inline="always")
def sample_softmax(logits, probs_buf, rng):
    """Draw an action from ``softmax(logits)`` (``probs_buf`` receives the probabilities)."""
    softmax(logits, probs_buf)
    return categorical(rng, probs_buf)
