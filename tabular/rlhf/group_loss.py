"""The loss of the GRPO family, one definition read by the sampled learner
(:func:`tabular.rlhf.grpo`) and by the exact expected update
(:func:`tabular.rlhf.expected_update`).

A batch holds ``groups`` prompts with ``G = group_size`` responses each. Its loss, to
be maximised, is

    ``L = sum_k sum_t c_k [ w(rho_kt, A_k) log pi(a_kt|s_kt) - beta k(x_kt)
    + entropy_coef H(pi(.|s_kt)) ]``

(written by its gradient, which is what the kernels build), where

- ``A_k`` is response ``k``'s advantage (:func:`batch_advantages`): its return (KL
  folded in when the KL is in the reward) minus its baseline, scaled by
  ``scale_rewards``; 0 with weight 0 for a response left out (a dropped group, a masked
  truncated response);
- ``w(rho, A)`` is the weight the clipped ratio puts on ``grad log pi``
  (:func:`ratio_weight`): ``rho A`` inside the clip range, 0 outside (PPO's ``min``),
  or CISPO's ``min(rho, eps_max) A``; ``rho`` is the token's ratio
  ``pi(a_t|s_t) / pi_old(a_t|s_t)``, or GSPO's ``(pi(y)/pi_old(y))^(1/|y|)``, whose
  gradient ``rho (1/|y|) sum_t grad log pi`` the ``1/|y|`` of the sequence-level loss
  summed over ``|y|`` tokens cancels (so both levels give each token the weight
  ``c_k w(rho, A_k)``);
- ``k(x)`` with ``x = log pi - log pi_ref`` is the KL estimate of the token when the
  KL is a loss term (:func:`kl_loss_weight`);
- ``c_k`` is the aggregation of ``loss_type`` (:func:`token_weight`): ``1/(B|o_k|)``,
  ``1/sum|o|``, ``1/(B max_steps)`` or ``1/B`` with ``B = groups * G``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular.rlhf.group_config import (
    BNPO,
    CISPO,
    DAPO,
    DR_GRPO,
    GROUP_MEAN,
    GRPO,
    K1,
    K2,
    LEAVE_ONE_OUT,
    SCALE_BATCH,
    SCALE_GROUP,
)
from tabular.rules.policy_gradient import group_relative_advantages, scale_by_std


@njit(cache=True, inline="always")
def leave_one_out_advantages(returns, out):
    """``out[i] = R_i - mean_{j != i} R_j``: RLOO's baseline (Ahmadian et al., 2024,
    eq. 6), the mean of the group's other responses, which does not depend on
    response ``i`` itself."""
    G = returns.shape[0]
    total = returns.sum()
    for i in range(G):
        out[i] = returns[i] - (total - returns[i]) / (G - 1)


@njit(cache=True, inline="always")
def returns_agree(returns):
    """The group's returns agree to rounding (``std <= 1e-12 (1 + |mean|)``, the test of
    :func:`~tabular.rules.policy_gradient.scale_by_std`): DAPO's dynamic sampling drops
    such a group, whose advantages carry no signal."""
    G = returns.shape[0]
    mean = returns.sum() / G
    var = 0.0
    for i in range(G):
        var += (returns[i] - mean) * (returns[i] - mean)
    return not np.sqrt(var / G) > 1e-12 * (1.0 + abs(mean))


@njit(cache=True)
def batch_advantages(p, shaped, lengths, truncated, baseline, adv, kept):
    """The advantages ``adv`` and the responses ``kept`` in the loss of a batch of
    ``p.groups`` groups of ``p.group_size`` responses (``p`` a
    :class:`~tabular.rlhf.group_config.LossParams`), from each response's return
    ``shaped`` (as the learner sees it), its length and whether it was ``truncated``,
    and ``baseline[g]`` (ReMax's greedy return of group ``g``'s prompt). Returns
    ``(tokens, dropped)``: the tokens of the kept responses (the normaliser of
    ``bnpo``, ``dapo``, ``cispo``) and the groups dynamic sampling dropped."""
    G = p.group_size
    dropped = 0
    for g in range(p.groups):
        R, A = shaped[g * G:(g + 1) * G], adv[g * G:(g + 1) * G]
        if p.advantage == GROUP_MEAN:
            group_relative_advantages(R, p.scale == SCALE_GROUP, A)
        else:
            if p.advantage == LEAVE_ONE_OUT:
                leave_one_out_advantages(R, A)
            else:
                for i in range(G):
                    A[i] = R[i] - baseline[g]
            if p.scale == SCALE_GROUP:
                scale_by_std(R, A)
        drop = p.dynamic_sampling and returns_agree(R)
        dropped += drop
        for i in range(G):
            kept[g * G + i] = not drop and not (p.mask_truncated and truncated[g * G + i])
    if p.scale == SCALE_BATCH:
        scale_by_std(shaped, adv)
    tokens = 0
    for k in range(shaped.shape[0]):
        if kept[k]:
            tokens += lengths[k]
        else:
            adv[k] = 0.0
    return tokens, dropped


@njit(cache=True, inline="always")
def token_weight(weight, loss_type, length, n, tokens, max_steps):
    """``weight`` times the aggregation of ``loss_type`` for a token of a response of
    ``length`` tokens, before the division by the batch's ``n`` responses (which the
    caller makes last): ``1/|o|`` (``grpo``), ``n / sum|o|`` over the batch's
    ``tokens`` (``bnpo``, ``dapo``, ``cispo``), ``1 / max_steps`` (``dr_grpo``) or 1
    (``sum``)."""
    if loss_type == GRPO:
        return weight / length
    if loss_type == BNPO or loss_type == DAPO or loss_type == CISPO:
        return weight * (n / tokens)
    if loss_type == DR_GRPO:
        return weight / max_steps
    return weight


@njit(cache=True, inline="always")
def ratio_weight(ratio, advantage, p):
    """The weight ``w`` on ``grad log pi(a_t|s_t)`` of the token's policy term at the
    probability ratio ``ratio``: PPO's clipped surrogate ``min(rho A, clip(rho, 1 - eps,
    1 + eps_high) A)`` gives ``rho A`` where the unclipped term is the minimum and 0
    where the clip holds it flat (Schulman et al., 2017, eq. 7; DAPO's asymmetric
    range); CISPO's ``sg(min(rho, eps_max)) A log pi`` gives ``min(rho, eps_max) A``."""
    if p.loss_type == CISPO:
        return min(ratio, p.epsilon_high) * advantage
    if advantage >= 0.0:
        return ratio * advantage if ratio < 1.0 + p.epsilon_high else 0.0
    return ratio * advantage if ratio > 1.0 - p.epsilon else 0.0


@njit(cache=True, inline="always")
def clip_region(ratio, advantage, p):
    """-1 where the token's ratio is clipped low (``rho < 1 - eps`` with ``A < 0``), +1
    where high (``rho > 1 + eps_high`` with ``A > 0``; CISPO: ``rho > eps_max``), else 0:
    TRL's ``clip_ratio/low_mean``, ``clip_ratio/high_mean`` (``cispo_clip_ratio``)."""
    if p.loss_type == CISPO:
        return 1 if ratio > p.epsilon_high and advantage > 0.0 else 0
    if advantage < 0.0 and ratio < 1.0 - p.epsilon:
        return -1
    if advantage > 0.0 and ratio > 1.0 + p.epsilon_high:
        return 1
    return 0


@njit(cache=True, inline="always")
def kl_estimate(x, estimator):
    """Schulman's estimate of ``KL(pi || pi_ref)`` from one token with ``x = log pi(a|s) -
    log pi_ref(a|s)``, ``a ~ pi``: ``k1 = x``, ``k2 = x^2 / 2``, ``k3 = e^-x - 1 + x``."""
    if estimator == K1:
        return x
    if estimator == K2:
        return 0.5 * x * x
    return np.exp(-x) - 1.0 + x


@njit(cache=True, inline="always")
def kl_loss_weight(x, estimator, beta):
    """The weight on ``grad log pi(a|s)`` of the loss term ``-beta k(x)``: ``-beta
    dk/dx`` (``-beta``, ``-beta x``, ``-beta (1 - e^-x)``), the gradient the loss sees
    through ``log pi`` only, not through the sampling of ``a``."""
    if estimator == K1:
        return -beta
    if estimator == K2:
        return -beta * x
    return -beta * (1.0 - np.exp(-x))
