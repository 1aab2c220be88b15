"""Direct preference optimisation on a token MDP (Rafailov et al., 2023)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..checks import check_positive, check_positive_int
from ..policy import SoftmaxPolicy
from ..rules.policy_gradient import log_softmax, softmax
from .reward_model import log_sigmoid, sigmoid


def response_path(env, prompt: str, response: str) -> tuple[np.ndarray, np.ndarray]:
    """The states and actions (tokens) by which a token MDP ``env`` generates ``response``."""
    p = env.prompts.index(prompt)
    ids = env.encode(response)
    if len(ids) < env.max_len:
        ids = ids + (env.eos_id,)
    states = np.array([env.state_of(p, ids[:t]) for t in range(len(ids))], dtype=np.int64)
    return states, np.array(ids, dtype=np.int64)


@njit(cache=True, inline="always")
def sequence_log_prob(logits, row_of_state, states, actions, length, buf):
    """``log pi(y|x) = sum_t log pi(a_t | s_t)`` along one response."""
    total = 0.0
    for t in range(length):
        log_softmax(logits[row_of_state[states[t]]], buf)
        total += buf[actions[t]]
    return total


@njit(cache=True, inline="always")
def accumulate_log_prob_grad(logits, row_of_state, states, actions, length, weight, grad,
                             probs):
    """``grad += weight * d log pi(y|x) / d logits``: ``onehot(a_t) - pi(.|s_t)`` per row."""
    for t in range(length):
        r = row_of_state[states[t]]
        softmax(logits[r], probs)
        for b in range(logits.shape[1]):
            grad[r, b] -= weight * probs[b]
        grad[r, actions[t]] += weight


@njit(cache=True, inline="always")
def dpo_margin(log_pi_w, log_ref_w, log_pi_l, log_ref_l, beta):
    """``beta * [(log pi(y_w) - log ref(y_w)) - (log pi(y_l) - log ref(y_l))]``
    (Rafailov et al., 2023, eq. 7)."""
    return beta * ((log_pi_w - log_ref_w) - (log_pi_l - log_ref_l))


@njit(cache=True)
def _dpo_descent(logits, row_of_state, st_w, ac_w, len_w, ref_w, st_l, ac_l, len_l, ref_l,
                 counts, beta, steps, alpha, history):
    """Full-batch gradient descent on the mean DPO loss ``-log sigma(margin)``."""
    P = counts.shape[0]
    n = counts.sum()
    A = logits.shape[1]
    grad = np.zeros_like(logits)
    buf, probs = np.empty(A), np.empty(A)
    for step in range(steps):
        grad[:] = 0.0
        loss = 0.0
        for i in range(P):
            lw = sequence_log_prob(logits, row_of_state, st_w[i], ac_w[i], len_w[i], buf)
            ll = sequence_log_prob(logits, row_of_state, st_l[i], ac_l[i], len_l[i], buf)
            margin = dpo_margin(lw, ref_w[i], ll, ref_l[i], beta)
            loss -= counts[i] * log_sigmoid(margin) / n
            w = counts[i] * beta * sigmoid(-margin) / n  # d(-loss) / d log pi(y_w)
            accumulate_log_prob_grad(logits, row_of_state, st_w[i], ac_w[i], len_w[i], w,
                                     grad, probs)
            accumulate_log_prob_grad(logits, row_of_state, st_l[i], ac_l[i], len_l[i], -w,
                                     grad, probs)
        history[step] = loss
        for r in range(logits.shape[0]):
            for b in range(A):
                if logits[r, b] > -np.inf:
                    logits[r, b] += alpha * grad[r, b]


@dataclass
class DPOResult:
    """The trained ``logits`` ``[R, A]``, the ``policy`` and the mean loss per step."""

    logits: np.ndarray
    policy: SoftmaxPolicy
    loss: np.ndarray


def dpo(env, policy: SoftmaxPolicy, preferences, *, beta: float, ref_policy=None,
        steps: int = 2000, alpha: float = 1.0) -> DPOResult:
    """Direct preference optimisation on a token MDP ``env``.

    Minimises the mean of ``-log sigma(beta * [(log pi(y_w) - log ref(y_w)) -
    (log pi(y_l) - log ref(y_l))])`` over ``(prompt, y_w, y_l)`` or
    ``(count, prompt, y_w, y_l)`` triples, starting from ``policy`` (the
    reference too unless ``ref_policy`` is given). At the optimum the implicit
    reward ``beta * log pi(y) / ref(y)`` is the Bradley-Terry fit of the
    preferences, so ``pi`` is the KL-regularised optimum for that reward.
    """
    beta = check_positive("beta", beta)
    steps = check_positive_int("steps", steps)
    alpha = check_positive("alpha", alpha)
    ref = policy if ref_policy is None else ref_policy
    if ref.n_states != policy.n_states or policy.n_states != env.n_states:
        raise ValueError("policy, ref_policy and env must have the same states")
    prefs = [tuple(p) if len(p) == 4 else (1, *p) for p in preferences]
    if not prefs:
        raise ValueError("no preferences given")
    policy_lp, ref_lp = policy.log_probs(), ref.log_probs()
    paths = {}  # (prompt, response) -> (states, actions), each checked once
    for _, x, yw, yl in prefs:
        for y in (yw, yl):
            if (x, y) not in paths:
                s, a = paths[(x, y)] = response_path(env, x, y)
                for name, lp in (("policy", policy_lp), ("ref_policy", ref_lp)):
                    if not np.isfinite(lp[s, a]).all():
                        raise ValueError(f"response {y!r} to prompt {x!r} has probability 0 "
                                         f"under {name} (a masked token); DPO needs it possible")
    paths_w = [paths[(x, yw)] for _, x, yw, _ in prefs]
    paths_l = [paths[(x, yl)] for _, x, _, yl in prefs]
    counts = np.array([float(c) for c, _, _, _ in prefs])
    st_w, ac_w, len_w = _pad(paths_w)
    st_l, ac_l, len_l = _pad(paths_l)
    ref_w = np.array([ref_lp[s, a].sum() for s, a in paths_w])
    ref_l = np.array([ref_lp[s, a].sum() for s, a in paths_l])
    logits = policy.logits.copy()
    history = np.zeros(steps)
    _dpo_descent(logits, policy.row_of_state, st_w, ac_w, len_w, ref_w, st_l, ac_l, len_l,
                 ref_l, counts, beta, steps, alpha, history)
    return DPOResult(logits, SoftmaxPolicy(logits, policy.row_of_state.copy()), history)


def _pad(paths: Sequence[tuple[np.ndarray, np.ndarray]]):
    L = max(len(s) for s, _ in paths)
    states = np.zeros((len(paths), L), dtype=np.int64)
    actions = np.zeros((len(paths), L), dtype=np.int64)
    lengths = np.array([len(s) for s, _ in paths], dtype=np.int64)
    for i, (s, a) in enumerate(paths):
        states[i, : len(s)], actions[i, : len(a)] = s, a
    return states, actions, lengths
