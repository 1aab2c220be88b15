"""DPO's first step from its reference, exactly: the step's direction, the first-order
change of ``logps/chosen`` it makes, and Taylor's bound on the rest.

At the reference every comparison's margin is 0, so the descent direction of DPO's mean
loss ``L = sum_i w_i (-log sigma(beta h_i))`` (``w_i`` the comparisons' shares, ``h_i``
the log-ratio gap, Rafailov et al., 2023, eq. 7) is
``d = -grad L = (beta / 2) sum_i w_i (g(y+_i) - g(y-_i))``, with
``g(y) = grad log pi(y|x) = sum_t (e_{a_t} - pi(.|row_t))`` in the row each token reads.
One step of size ``alpha`` moves the logits by ``alpha d``, so ``f(s) = logps/chosen``
along the step changes by ``alpha <G, d> + r`` with ``G = sum_i w_i g(y+_i)``: for one
pair, ``<G, d> = (beta / 2) (||g+||^2 - <g+, g->)``, minus ``beta / 2`` times the
gradients' CHES, so the chosen falls at first order exactly when the rejected's gradient
overlaps the chosen's more than the chosen's own. The rest obeys
``|r| <= (alpha^2 / 2) max |f''|`` and ``f'' = -sum_i w_i sum_t d_t' Cov(pi(.|row_t)) d_t``,
whose covariance's eigenvalues are at most ``1/2``: ``|r| <= (alpha^2 / 4) sum_i w_i sum_t
||d_row_t||^2``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tabular.model.policy import SoftmaxPolicy
from tabular.rlhf import dpo, response_path
from tabular.types import TokenEnv


class FirstStep(NamedTuple):
    """DPO's first step on ``logps/chosen``, measured and predicted."""

    change: float
    """The change the step made, exactly."""
    predicted: float
    """``alpha <G, d>``, its first-order part."""
    bound: float
    """Taylor's bound on ``|change - predicted|``."""
    direction_error: float
    """The largest ``|step - alpha d|`` over the logits: DPO's kernel against ``d``."""


def log_prob_gradient(env: TokenEnv, policy: SoftmaxPolicy, prompt: str, y: str) -> np.ndarray:
    """``[R, A]``: ``grad log pi(y|x)`` in the policy's logits, ``e_{a_t} - pi(.|row_t)``
    added into the row each token reads (masked tokens: probability 0, gradient 0)."""
    probs = np.exp(policy.row_log_probs())
    grad = np.zeros_like(probs)
    s, a = response_path(env, prompt, y)
    for row, token in zip(policy.row_of_state[s], a, strict=True):
        grad[row] -= probs[row]
        grad[row, token] += 1.0
    return grad


def first_step(env: TokenEnv, policy: SoftmaxPolicy, prefs: list, *, beta: float,
               alpha: float) -> FirstStep:
    """DPO's first step from ``policy`` toward itself on ``prefs`` (``(count, prompt,
    chosen, rejected)``), against the first-order prediction (see the module)."""
    w = np.array([c for c, *_ in prefs], dtype=np.float64)
    w /= w.sum()
    chosen = [log_prob_gradient(env, policy, x, yw) for _, x, yw, _ in prefs]
    rejected = [log_prob_gradient(env, policy, x, yl) for _, x, _, yl in prefs]
    d = beta / 2 * sum(wi * (gw - gl) for wi, gw, gl in zip(w, chosen, rejected, strict=True))
    G = sum(wi * g for wi, g in zip(w, chosen, strict=True))
    curvature = sum(wi * sum(float(d[r] @ d[r]) for r in policy.row_of_state[
        response_path(env, x, yw)[0]]) for wi, (_, x, yw, _) in zip(w, prefs, strict=True))
    h = dpo(env, policy, prefs, beta=beta, ref_policy=policy, steps=1, alpha=alpha,
            history=True, eval_every=1)
    lp = np.asarray(h.history["logps/chosen"])
    live = np.isfinite(policy.logits)
    step = np.where(live, h.logits - np.where(live, policy.logits, 0.0), 0.0)
    return FirstStep(change=float(lp[-1] - lp[0]), predicted=float(alpha * np.sum(G * d)),
                     bound=float(alpha**2 / 4 * curvature),
                     direction_error=float(np.abs(step - alpha * d).max()))
