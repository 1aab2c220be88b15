"""Direct preference optimisation on a token MDP (Rafailov et al., 2023)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from ..checks import check_positive, check_positive_int
from ..pg_setup import check_no_overflow
from ..policy import SoftmaxPolicy, as_softmax_policy
from ..rules.policy_gradient import accumulate_log_prob_grad, ascend, log_softmax
from .reward_model import log_sigmoid, preference_records, sigmoid


class Paths(NamedTuple):
    """Responses as the kernel reads them, one row each: the ``states`` and ``actions``
    (tokens) that generate them (int64 ``[P, L]``, padded), their ``lengths`` ``[P]`` and
    their log-probability under the reference, ``ref_log_probs`` ``[P]``."""

    states: np.ndarray
    actions: np.ndarray
    lengths: np.ndarray
    ref_log_probs: np.ndarray


class Preferences(NamedTuple):
    """``counts[i]`` comparisons in which response ``winners[i]`` beat ``losers[i]``."""

    winners: Paths
    losers: Paths
    counts: np.ndarray


class DPOParams(NamedTuple):
    """:func:`dpo`'s hyper-parameters as its kernel reads them."""

    beta: float
    steps: int
    alpha: float
    ipo: bool


def response_path(env, prompt: str, response: str) -> tuple[np.ndarray, np.ndarray]:
    """The states and actions (tokens) by which a token MDP ``env`` generates ``response``
    to ``prompt`` (one of ``env.prompts``)."""
    if prompt not in env.prompts:
        raise ValueError(f"prompt {prompt!r} is not one of the env's prompts {env.prompts!r}")
    p = env.prompts.index(prompt)
    ids = env.encode(response, f"response {response!r}")
    if len(ids) < env.max_len:
        ids = ids + (env.eos_id,)
    states = np.array([env.state_of(p, ids[:t]) for t in range(len(ids))], dtype=np.int64)
    return states, np.array(ids, dtype=np.int64)


@njit(cache=True, inline="always")
def sequence_log_prob(logits, row_of_state, states, actions, length, buf):
    """``log pi(y|x) = sum_t log pi(a_t | s_t)`` along one response (the chain rule)."""
    total = 0.0
    for t in range(length):
        log_softmax(logits[row_of_state[states[t]]], buf)
        total += buf[actions[t]]
    return total


@njit(cache=True, inline="always")
def dpo_margin(log_pi_w, log_ref_w, log_pi_l, log_ref_l, beta):
    """``beta * [(log pi(y_w) - log ref(y_w)) - (log pi(y_l) - log ref(y_l))]``
    (Rafailov et al., 2023, eq. 7)."""
    return beta * ((log_pi_w - log_ref_w) - (log_pi_l - log_ref_l))


@njit(cache=True, inline="always")
def ipo_error(log_ratio_gap, beta):
    """``h - 1 / (2 beta)``: how far the gap ``h = log pi(y_w)/ref(y_w) - log
    pi(y_l)/ref(y_l)`` is from the target IPO regresses it to (Azar et al., 2024,
    eq. 17, with TRL's ``beta`` as the regularisation tau)."""
    return log_ratio_gap - 1.0 / (2.0 * beta)


@njit(cache=True, inline="always")
def _accumulate_path_grad(logits, row_of_state, paths, i, weight, probs, grad):
    """``grad += weight * d log pi(y_i|x) / d logits``, token by token."""
    for t in range(paths.lengths[i]):
        r = row_of_state[paths.states[i, t]]
        accumulate_log_prob_grad(logits[r], paths.actions[i, t], weight, probs, grad[r])


@njit(cache=True)
def _dpo_descent(logits, row_of_state, data, p, history):
    """Full-batch gradient descent on the mean DPO loss ``-log sigma(margin)``, or on
    IPO's squared error ``(h - 1/(2 beta))^2``."""
    n = data.counts.sum()
    A = logits.shape[1]
    grad = np.zeros_like(logits)
    buf, probs = np.empty(A), np.empty(A)
    win, lose = data.winners, data.losers
    for step in range(p.steps):
        grad[:] = 0.0
        loss = 0.0
        for i in range(data.counts.shape[0]):
            lw = sequence_log_prob(logits, row_of_state, win.states[i], win.actions[i],
                                   win.lengths[i], buf)
            ll = sequence_log_prob(logits, row_of_state, lose.states[i], lose.actions[i],
                                   lose.lengths[i], buf)
            if p.ipo:
                error = ipo_error(dpo_margin(lw, win.ref_log_probs[i], ll,
                                             lose.ref_log_probs[i], 1.0), p.beta)
                loss += data.counts[i] * error * error / n
                w = -2.0 * data.counts[i] * error / n  # d(-loss) / d log pi(y_w)
            else:
                margin = dpo_margin(lw, win.ref_log_probs[i], ll, lose.ref_log_probs[i],
                                    p.beta)
                loss -= data.counts[i] * log_sigmoid(margin) / n
                w = data.counts[i] * p.beta * sigmoid(-margin) / n  # d(-loss)/d log pi(y_w)
            _accumulate_path_grad(logits, row_of_state, win, i, w, probs, grad)
            _accumulate_path_grad(logits, row_of_state, lose, i, -w, probs, grad)
        history[step] = loss
        for r in range(logits.shape[0]):
            ascend(logits[r], grad[r], p.alpha)


@dataclass
class DPOResult:
    """What :func:`dpo` returns.

    Attributes
    ----------
    logits : float64 ``[R, A]``, the trained logits (the rows of the starting policy).
    policy : the trained :class:`~tabular.SoftmaxPolicy` (these logits, the starting
        policy's ``row_of_state``).
    loss : float64 ``[steps]``, the mean loss (DPO's or IPO's) before each step.
    """

    logits: np.ndarray
    policy: SoftmaxPolicy
    loss: np.ndarray


def dpo(env, policy, preferences, *, beta: float, ref_policy=None, steps: int = 2000,
        alpha: float = 1.0, loss: str = "sigmoid") -> DPOResult:
    """Direct preference optimisation on a token MDP ``env`` (Rafailov et al., 2023).

    Minimises the mean over the comparisons of the DPO loss (eq. 7)
    ``-log sigma(beta * [(log pi(y_w|x) - log ref(y_w|x)) - (log pi(y_l|x) - log ref(y_l|x))])``
    by full-batch gradient descent, starting from ``policy``. At the optimum the implicit
    reward ``beta * log pi(y|x) / ref(y|x)`` is the Bradley-Terry fit of the
    preferences, so ``pi`` is the KL-regularised optimum for that reward.

    Parameters
    ----------
    env : the token MDP (an ``envs.TokenMDP``) whose prompts and responses are compared.
    policy : the starting policy, a :class:`~tabular.SoftmaxPolicy` (its rows are
        trained, shared or not) or an ``[S, A]`` matrix of probabilities.
    preferences : ``(prompt, y_w, y_l)`` or ``(count, prompt, y_w, y_l)`` tuples
        (``y_w`` preferred, ``count`` comparisons; default count 1).
    beta : the KL coefficient (> 0), required.
    ref_policy : the reference (any policy form); default ``None``: ``policy`` itself.
    steps : gradient steps, default 2000.
    alpha : step size (> 0), default 1.0.
    loss : ``"sigmoid"`` (default: DPO's loss) or ``"ipo"``: IPO's
        ``(h - 1/(2 beta))^2`` on the log-ratio gap ``h`` (Azar et al., 2024, eq. 17),
        which regresses every compared pair's gap to ``1/(2 beta)`` instead of pushing it
        without bound when the preference is unanimous (its quadratic loss wants a
        smaller ``alpha``, e.g. 0.1).

    Returns a :class:`DPOResult`. Every response compared must have positive
    probability under ``policy`` and ``ref_policy``.
    """
    beta = check_positive("beta", beta)
    if loss not in ("sigmoid", "ipo"):
        raise ValueError(f"loss must be 'sigmoid' or 'ipo', got {loss!r}")
    steps = check_positive_int("steps", steps)
    alpha = check_positive("alpha", alpha)
    mdp = getattr(env, "unwrapped", env).to_mdp()
    policy = as_softmax_policy(mdp, policy, greedy=False)
    ref = policy if ref_policy is None else as_softmax_policy(mdp, ref_policy, "ref_policy")
    prefs = preference_records(preferences)
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
    data = Preferences(_paths([paths[(x, yw)] for _, x, yw, _ in prefs], ref_lp),
                       _paths([paths[(x, yl)] for _, x, _, yl in prefs], ref_lp),
                       np.array([c for c, _, _, _ in prefs]))
    logits = policy.logits.copy()
    history = np.zeros(steps)
    _dpo_descent(logits, policy.row_of_state, data,
                 DPOParams(beta, steps, alpha, loss == "ipo"), history)
    check_no_overflow(logits, "logits")
    return DPOResult(logits, SoftmaxPolicy(logits, policy.row_of_state.copy()), history)


def _paths(paths: Sequence[tuple[np.ndarray, np.ndarray]], ref_log_probs: np.ndarray) -> Paths:
    """Pad the responses' states and actions into one :class:`Paths` record."""
    L = max(len(s) for s, _ in paths)
    states = np.zeros((len(paths), L), dtype=np.int64)
    actions = np.zeros((len(paths), L), dtype=np.int64)
    lengths = np.array([len(s) for s, _ in paths], dtype=np.int64)
    for i, (s, a) in enumerate(paths):
        states[i, : len(s)], actions[i, : len(a)] = s, a
    ref = np.array([ref_log_probs[s, a].sum() for s, a in paths])
    return Paths(states, actions, lengths, ref)
