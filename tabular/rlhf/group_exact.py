"""The exact expected update of the GRPO family on a token MDP, the exact gradient of the
KL-regularised objective, the bias between them, and the update's fixed point.

At a policy ``pi`` (logits ``theta``), one batch of :func:`tabular.rlhf.grpo` moves the
logits along the direction ``d = sum_k sum_t c_k [w_k + kl_t] grad log pi(a_kt|s_kt) +
c_k entropy_coef grad H(pi(.|s_kt))`` (its first epoch, at ratio 1; the loss of
:mod:`tabular.rlhf.group_loss`). Its expectation over batches is, by the symmetry of a
batch's ``n`` positions,

    ``E[d] = sum_y P(y) [F_a(y) sum_t grad log pi(a_t|s_t) + F_h(y) h(y)]``

where ``F_a(y)`` is the expected weight ``c_0 A_0`` of position 0 given that its
response is ``y`` (an expectation over the other responses of the batch), ``F_h(y)`` the
expected ``c_0`` (times whether ``y`` is kept), and ``h(y)`` the KL-loss and entropy
terms of ``y``'s tokens. ``F`` depends on ``y`` only through its return, its length and
whether it was truncated (its *atom*), so the expectation over the other responses is a
sum over multisets of atoms. It is computed

- in closed form where the weight is linear in the other responses' returns (no
  standard-deviation scaling, and a loss whose normaliser does not count tokens:
  ``sum``, ``grpo``, ``dr_grpo``): ``E[A_0 | y] = (G-1)/G (R(y) - E[R|x])`` for the group
  mean, ``R(y) - E[R|x]`` for RLOO, ``R(y) - R(greedy)`` for ReMax;
- by enumerating every multiset of the ``G - 1`` other responses of one group
  (``groups=1``) when there are at most ``max_groups`` of them per prompt;
- else by ``samples`` Monte Carlo draws of the rest of the batch per prompt (the same
  draws for every atom of the prompt), stated in the result.

Then ``sum_y P(y) F(y) sum_t grad log pi(a_t|s_t)`` is one backward pass over the tree:
the weight of ``(s, a)`` is the sum of ``P(y) F(y)`` over the responses through it.
The exact gradient of ``J(pi) = E_pi[r] - beta KL(pi || pi_ref)`` is the same pass with
the soft action value ``Q(s, a) = r - beta (log pi(a|s) - log pi_ref(a|s)) + V(s')``
(the policy gradient theorem with the KL folded into the reward; Sutton & Barto,
section 13.2). Both use the learner's own reward (floored) and returns.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from tabular._numba.rng import seed_states, uniform
from tabular.checks import check_positive, check_positive_int
from tabular.model.mdp import as_mdp
from tabular.model.policy import SoftmaxPolicy
from tabular.pg.arguments import policy_gradient_args
from tabular.pg.rollout import kl_penalised
from tabular.rlhf.group import greedy_return, reference_log_prob, reward_kl
from tabular.rlhf.group_config import (
    DR_GRPO,
    GREEDY,
    GROUP_MEAN,
    GRPO,
    IN_LOSS,
    SCALE_NONE,
    SUM,
    GRPOConfig,
    truncating_actions,
)
from tabular.rlhf.group_loss import batch_advantages, kl_loss_weight, ratio_weight, token_weight
from tabular.rlhf.results import ExpectedUpdate, FixedPoint
from tabular.rules.policy_gradient import grad_entropy, log_softmax, softmax
from tabular.solve.tree import kl_objective, kl_optimum, visit_probabilities
from tabular.types import MDPLike, PolicyLike


class Tree(NamedTuple):
    """A deterministic tree MDP as plain ``[S, A]`` arrays (its one outcome per pair)."""

    next_state: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    start: np.ndarray


class _Flow(NamedTuple):
    """What the forward pass writes: per state the visit probability ``mu``, the return
    so far ``acc``, the ``depth`` and the prompt (``root``); per pair ``pi``, ``log pi``,
    and for an ending its probability ``ends``, return ``R``, length ``T`` and whether
    it is ``trunc``-ated."""

    mu: np.ndarray
    acc: np.ndarray
    depth: np.ndarray
    root: np.ndarray
    probs: np.ndarray
    log_probs: np.ndarray
    ends: np.ndarray
    R: np.ndarray
    T: np.ndarray
    trunc: np.ndarray


@njit(cache=True, inline="always")
def learner_reward(tree, rollout, lp, s, a, log_pi):
    """The reward of ``(s, a)`` as :func:`~tabular.rlhf.grpo` learns from it: floored,
    with the KL of the reward placement (``k1`` folded in by the rollout, ``k2``/``k3``
    by ``tabular.rlhf.group.reward_kl``)."""
    r = kl_penalised(max(tree.reward[s, a], rollout.reward_floor), log_pi, rollout, s, a)
    return r - reward_kl(lp, rollout, s, a, log_pi)


@njit(cache=True)
def _flow(tree, theta, rollout, lp, truncates, f):
    """The forward pass over the states in order (a prefix before its continuations);
    returns -1, or ``s`` where a continuation goes backwards (not a tree) or would be
    cut by ``max_steps`` (``-2 - s``)."""
    S, A = f.probs.shape
    for s in range(S):
        if tree.start[s] > 0.0:
            f.mu[s] = tree.start[s]
            f.root[s] = s
    for s in range(S):
        if f.mu[s] == 0.0:
            continue
        row = rollout.row_of_state[s]
        softmax(theta[row], f.probs[s])
        log_softmax(theta[row], f.log_probs[s])
        for a in range(A):
            if f.probs[s, a] == 0.0:
                continue
            w = f.mu[s] * f.probs[s, a]
            r = learner_reward(tree, rollout, lp, s, a, f.log_probs[s, a])
            if tree.done[s, a]:
                f.ends[s, a] = w
                f.T[s, a] = f.depth[s] + 1
                f.trunc[s, a] = truncates[s, a]
                f.R[s, a] = f.acc[s] + r
                if f.trunc[s, a] and lp.truncation_penalty > 0.0:
                    f.R[s, a] -= lp.truncation_penalty
                continue
            nxt = tree.next_state[s, a]
            if nxt <= s:
                return s
            if f.depth[s] + 1 >= rollout.max_steps:
                return -2 - s
            f.mu[nxt] += w
            f.acc[nxt] = f.acc[s] + r
            f.depth[nxt] = f.depth[s] + 1
            f.root[nxt] = f.root[s]
    return -1


@njit(cache=True, inline="always")
def position_zero(lp, R, T, trunc, baseline, adv, kept):
    """``(c_0 w(1, A_0), c_0)`` times the batch's ``n`` responses: the weights that
    :func:`~tabular.rlhf.group._grpo_run`'s first epoch gives the tokens of position 0
    of the batch ``(R, T, trunc)`` (0, 0 when it is left out)."""
    n = R.shape[0]
    tokens, _ = batch_advantages(lp, R, T, trunc, baseline, adv, kept)
    if not kept[0]:
        return 0.0, 0.0
    a = token_weight(ratio_weight(1.0, adv[0], lp), lp.loss_type, T[0], n, tokens,
                     lp.max_steps)
    return a, token_weight(1.0, lp.loss_type, T[0], n, tokens, lp.max_steps)


class _Atoms(NamedTuple):
    """The distinct ``(return, length, truncated)`` of each prompt's responses, prompt
    after prompt (``offsets [P + 1]``), with their probability ``q`` given the prompt;
    the prompts' probabilities ``prompt_p`` and ReMax's greedy return ``baseline``."""

    R: np.ndarray
    T: np.ndarray
    trunc: np.ndarray
    q: np.ndarray
    offsets: np.ndarray
    prompt_p: np.ndarray
    baseline: np.ndarray


@njit(cache=True)
def _enumerate(lp, atoms, x, F_a, F_h):
    """``F_a``, ``F_h`` of prompt ``x``'s atoms (one group, ``groups = 1``), summed over
    every multiset of the other ``G - 1`` responses with its multinomial probability."""
    lo, hi = atoms.offsets[x], atoms.offsets[x + 1]
    M, G = hi - lo, lp.group_size
    idx = np.zeros(G - 1, dtype=np.int64)
    R, T = np.empty(G), np.empty(G, dtype=np.int64)
    trunc, kept, adv = np.empty(G, dtype=np.bool_), np.empty(G, dtype=np.bool_), np.empty(G)
    baseline = np.full(1, atoms.baseline[x])
    log_q = np.log(atoms.q[lo:hi])
    while True:
        log_p, run = math.lgamma(G), 1
        for k in range(G - 1):
            j = lo + idx[k]
            R[k + 1], T[k + 1], trunc[k + 1] = atoms.R[j], atoms.T[j], atoms.trunc[j]
            log_p += log_q[idx[k]]
            if k > 0 and idx[k] == idx[k - 1]:
                run += 1
            else:
                run = 1
            log_p -= math.log(run)  # the multinomial's 1/c! built one factor at a time
        p = math.exp(log_p)
        for m in range(M):
            R[0], T[0], trunc[0] = atoms.R[lo + m], atoms.T[lo + m], atoms.trunc[lo + m]
            a, h = position_zero(lp, R, T, trunc, baseline, adv, kept)
            F_a[lo + m] += p * a
            F_h[lo + m] += p * h
        j = G - 2  # the next non-decreasing index sequence
        while j >= 0 and idx[j] == M - 1:
            j -= 1
        if j < 0:
            return
        v = idx[j] + 1
        for k in range(j, G - 1):
            idx[k] = v


@njit(cache=True, inline="always")
def _draw(atoms, x, rng):
    """An atom of prompt ``x`` drawn with its probability."""
    lo, hi = atoms.offsets[x], atoms.offsets[x + 1]
    u, total = uniform(rng), 0.0
    for j in range(lo, hi):
        total += atoms.q[j]
        if u < total:
            return j
    return hi - 1


@njit(cache=True)
def _sample(lp, atoms, x, samples, rng, F_a, F_h):
    """``F_a``, ``F_h`` of prompt ``x``'s atoms averaged over ``samples`` draws of the
    rest of the batch: the group's other ``G - 1`` responses, then ``groups - 1`` groups
    of prompts drawn from the start distribution; one draw serves every atom."""
    lo, hi = atoms.offsets[x], atoms.offsets[x + 1]
    G, n = lp.group_size, lp.groups * lp.group_size
    R, T = np.empty(n), np.empty(n, dtype=np.int64)
    trunc, kept, adv = np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_), np.empty(n)
    baseline = np.empty(lp.groups)
    baseline[0] = atoms.baseline[x]
    P, y = atoms.prompt_p.shape[0], x
    for _ in range(samples):
        for k in range(1, n):
            if k % G == 0:  # a new group: its prompt
                u, total, y = uniform(rng), 0.0, P - 1
                for z in range(P):
                    total += atoms.prompt_p[z]
                    if u < total:
                        y = z
                        break
                baseline[k // G] = atoms.baseline[y]
            j = _draw(atoms, x if k < G else y, rng)
            R[k], T[k], trunc[k] = atoms.R[j], atoms.T[j], atoms.trunc[j]
        for m in range(hi - lo):
            R[0], T[0], trunc[0] = atoms.R[lo + m], atoms.T[lo + m], atoms.trunc[lo + m]
            a, h = position_zero(lp, R, T, trunc, baseline, adv, kept)
            F_a[lo + m] += a / samples
            F_h[lo + m] += h / samples


@njit(cache=True)
def _backward(tree, rollout, lp, f, atom_of, F_a, F_h, out):
    """``out [R, A]``: the expected update from the weights ``F_a``, ``F_h`` of each
    ending's atom (``atom_of [S, A]``) times its probability, each pair's the sum over
    its subtree of the responses through it."""
    S, A = f.probs.shape
    U_a, U_h = np.zeros(S), np.zeros(S)
    w_a, w_h = np.empty(A), np.empty(A)
    entropy_grad = np.empty(A)
    for s in range(S - 1, -1, -1):
        if f.mu[s] == 0.0:
            continue
        row = rollout.row_of_state[s]
        total = 0.0
        for a in range(A):
            w_a[a], w_h[a] = 0.0, 0.0
            if f.probs[s, a] == 0.0:
                continue
            if tree.done[s, a]:
                j = atom_of[s, a]
                w_a[a], w_h[a] = f.ends[s, a] * F_a[j], f.ends[s, a] * F_h[j]
            else:
                w_a[a], w_h[a] = U_a[tree.next_state[s, a]], U_h[tree.next_state[s, a]]
            U_a[s] += w_a[a]
            U_h[s] += w_h[a]
            if lp.kl_placement == IN_LOSS and lp.beta > 0.0:
                x = f.log_probs[s, a] - reference_log_prob(rollout, s, a)
                w_a[a] += w_h[a] * kl_loss_weight(x, lp.kl_estimator, lp.beta)
            total += w_a[a]
        for b in range(A):  # sum_a w(s, a) grad log pi(a|s)
            out[row, b] += w_a[b] - total * f.probs[s, b]
        if lp.entropy_coef > 0.0:
            grad_entropy(f.probs[s], f.log_probs[s], entropy_grad)
            for b in range(A):
                out[row, b] += lp.entropy_coef * U_h[s] * entropy_grad[b]


@njit(cache=True)
def _gradient(tree, rollout, beta, f, out):
    """``out [R, A]``: the exact gradient of ``E[r] - beta KL(pi || pi_ref)`` (floored
    rewards), ``sum_s mu(s) sum_a pi(a|s) Q(s, a) grad log pi(a|s)`` with the soft
    action value ``Q`` of one backward pass."""
    S, A = f.probs.shape
    V = np.zeros(S)
    Q = np.empty(A)
    for s in range(S - 1, -1, -1):
        if f.mu[s] == 0.0:
            continue
        row = rollout.row_of_state[s]
        mean = 0.0
        for a in range(A):
            Q[a] = 0.0
            if f.probs[s, a] == 0.0:
                continue
            x = f.log_probs[s, a] - reference_log_prob(rollout, s, a)
            Q[a] = max(tree.reward[s, a], rollout.reward_floor) - (beta * x if beta > 0.0
                                                                    else 0.0)
            if not tree.done[s, a]:
                Q[a] += V[tree.next_state[s, a]]
            mean += f.probs[s, a] * Q[a]
        V[s] = mean
        for b in range(A):
            if f.probs[s, b] > 0.0:
                out[row, b] += f.mu[s] * f.probs[s, b] * (Q[b] - mean)


def _config(config: GRPOConfig | None, options: dict) -> GRPOConfig:
    if config is None:
        return GRPOConfig(**options)
    if not isinstance(config, GRPOConfig):
        raise TypeError(f"config must be a tabular.rlhf.GRPOConfig, got {type(config).__name__}")
    if options:
        raise ValueError(f"pass config or the options {sorted(options)}, not both")
    return config


def _atoms(f: _Flow, tree: Tree, baseline: np.ndarray) -> tuple[_Atoms, np.ndarray]:
    """The atoms of every prompt and the atom of each ending (``-1`` elsewhere)."""
    s, a = np.nonzero(f.ends)
    roots = np.flatnonzero(tree.start > 0.0)
    prompt_of_root = np.full(tree.start.shape[0], -1)
    prompt_of_root[roots] = np.arange(roots.shape[0])
    x, R, T, trunc = prompt_of_root[f.root[s]], f.R[s, a], f.T[s, a], f.trunc[s, a]
    order = np.lexsort((trunc, T, R, x))
    x, R, T, trunc = x[order], R[order], T[order], trunc[order]
    new = np.ones(x.shape[0], dtype=np.bool_)
    new[1:] = (x[1:] != x[:-1]) | (R[1:] != R[:-1]) | (T[1:] != T[:-1]) | (
        trunc[1:] != trunc[:-1])
    inverse = np.empty(x.shape[0], dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    px = tree.start[roots]
    q = np.bincount(inverse, weights=f.ends[s, a]) / px[x[new]]
    offsets = np.searchsorted(x[new], np.arange(roots.shape[0] + 1))
    atom_of = np.full(f.ends.shape, -1, dtype=np.int64)
    atom_of[s, a] = inverse
    atoms = _Atoms(R[new], T[new], trunc[new], q, offsets.astype(np.int64), px / px.sum(),
                  baseline)
    return atoms, atom_of


@njit(cache=True)
def _closed_form(lp, atoms, F_a, F_h):
    """``F_a``, ``F_h`` of every atom when the weight is linear in the other responses'
    returns: ``E[A_0 | y]`` is ``(G-1)/G (R(y) - E[R|x])`` (group mean), ``R(y) -
    E[R|x]`` (RLOO) or ``R(y) - R(greedy)`` (ReMax). Dynamic sampling keeps ``y``'s
    group unless the other ``G - 1`` share its return (probability ``q(R(y))^(G-1)``),
    which changes only ReMax's policy term (the others' advantages are then 0)."""
    G = lp.group_size
    for x in range(atoms.offsets.shape[0] - 1):
        lo, hi = atoms.offsets[x], atoms.offsets[x + 1]
        mean = 0.0
        for j in range(lo, hi):
            mean += atoms.q[j] * atoms.R[j]
        for j in range(lo, hi):
            if lp.advantage == GROUP_MEAN:
                A = (G - 1) / G * (atoms.R[j] - mean)
            elif lp.advantage == GREEDY:
                A = atoms.R[j] - atoms.baseline[x]
            else:
                A = atoms.R[j] - mean
            kept = 0.0 if lp.mask_truncated and atoms.trunc[j] else 1.0
            if lp.dynamic_sampling:
                same = 0.0
                for i in range(lo, hi):
                    if atoms.R[i] == atoms.R[j]:
                        same += atoms.q[i]
                kept *= 1.0 - same ** (G - 1)
            a = ratio_weight(1.0, A, lp) * (kept if lp.advantage == GREEDY else
                                            (0.0 if kept == 0.0 else 1.0))
            F_a[j] = token_weight(a, lp.loss_type, atoms.T[j], 1, 1, lp.max_steps)
            F_h[j] = token_weight(kept, lp.loss_type, atoms.T[j], 1, 1, lp.max_steps)


def _is_linear(lp) -> bool:
    return lp.scale == SCALE_NONE and lp.loss_type in (SUM, GRPO, DR_GRPO)


def _bias(d: np.ndarray, g: np.ndarray) -> tuple[float, float, float]:
    """``(cosine, |d| / |g|, |d - g| / |g|)`` (the last from ``d - g`` itself: from the
    dot products it would lose half the digits to cancellation)."""
    d, g = d.ravel(), g.ravel()
    dd, gg, dg = float(d @ d), float(g @ g), float(d @ g)
    cosine = dg / math.sqrt(dd * gg) if dd > 0 and gg > 0 else math.nan
    if gg == 0:
        return cosine, math.inf, math.inf
    diff = d - g
    return cosine, math.sqrt(dd / gg), math.sqrt(float(diff @ diff) / gg)


def expected_update(mdp: MDPLike, policy: PolicyLike, *, ref_policy: PolicyLike | None = None,
                    beta: float = 0.0, reward_floor: float | None = None,
                    max_steps: int | None = None, config: GRPOConfig | None = None,
                    max_groups: int = 200_000, samples: int = 4096, seed: int | None = 0,
                    **options: Any) -> ExpectedUpdate:
    """The exact expected update of :func:`~tabular.rlhf.grpo` at ``policy``, the exact
    gradient of the KL-regularised objective there, and the bias between them.

    Parameters
    ----------
    mdp : a token MDP (its env or its :class:`~tabular.TabularMDP`): a deterministic tree.
    policy : the policy the batch is sampled from (any policy form).
    ref_policy, beta, reward_floor, max_steps : as in :func:`~tabular.rlhf.grpo`;
        ``max_steps`` may not cut a response of the tree.
    config, **options : the estimator, a :class:`~tabular.rlhf.GRPOConfig` or its
        options by name (``group_size=``, ``loss_type=``, ...), not both.
    max_groups : enumerate the other responses of a group exactly when a prompt has at
        most this many multisets of them, default 200,000; else draw ``samples``.
    samples : Monte Carlo draws of the rest of the batch per prompt where enumeration
        is not affordable (or ``groups > 1`` couples the prompts), default 4096.
    seed : seed of those draws, default 0.

    Returns
    -------
    An :class:`ExpectedUpdate`; ``method`` says how the expectation over the other
    responses was taken (the sum over the responses ``y`` is always exact).
    """
    cfg = _config(config, options)
    max_groups = check_positive_int("max_groups", max_groups)
    samples = check_positive_int("samples", samples, high=10**9)
    su = policy_gradient_args(mdp, policy, ref_policy=ref_policy, beta=beta,
                              reward_floor=reward_floor, gamma=1.0, episodes=1,
                              max_steps=max_steps, runs=None, seed=seed)
    tree, flow, rollout, lp = _forward(su, cfg)
    baseline = _greedy_baselines(su, tree, rollout, lp, flow)
    atoms, atom_of = _atoms(flow, tree, baseline)
    F_a, F_h = np.zeros(atoms.R.shape[0]), np.zeros(atoms.R.shape[0])
    method, drawn = "closed form", 0
    if _is_linear(lp):
        _closed_form(lp, atoms, F_a, F_h)
    else:
        rng = seed_states(seed, 1)[0]
        for x in range(atoms.offsets.shape[0] - 1):
            M = int(atoms.offsets[x + 1] - atoms.offsets[x])
            if lp.groups == 1 and math.comb(M + lp.group_size - 2,
                                            lp.group_size - 1) <= max_groups:
                method = "enumeration" if method != "monte carlo" else method
                _enumerate(lp, atoms, x, F_a, F_h)
            else:
                method, drawn = "monte carlo", samples
                _sample(lp, atoms, x, samples, rng, F_a, F_h)
    logits = su.policy.logits
    direction, gradient = np.zeros(logits.shape), np.zeros(logits.shape)
    _backward(tree, rollout, lp, flow, atom_of, F_a, F_h, direction)
    _gradient(tree, su.rollout, su.rollout.beta, flow, gradient)
    return ExpectedUpdate(direction, gradient, *_bias(direction, gradient), method, drawn)


def _forward(su, cfg: GRPOConfig):
    """The tree of ``su``'s MDP, its forward pass under ``su``'s policy, the rollout the
    learner samples with and the loss record."""
    mdp = su.mdp
    if (mdp.prob[:, :, 0] < 1.0).any():
        raise ValueError("expected_update sums over the responses of a deterministic token MDP")
    tree = Tree(np.ascontiguousarray(mdp.next_state[:, :, 0]),
                np.ascontiguousarray(mdp.reward[:, :, 0]),
                np.ascontiguousarray(mdp.done[:, :, 0]), mdp.start)
    lp = cfg.loss(su.rollout.beta, su.rollout.max_steps)
    rollout = su.rollout if cfg.folds_k1 else su.rollout._replace(beta=0.0)
    S, A = mdp.n_states, mdp.n_actions
    flow = _Flow(np.zeros(S), np.zeros(S), np.zeros(S, dtype=np.int64),
                np.zeros(S, dtype=np.int64), np.zeros((S, A)), np.zeros((S, A)),
                np.zeros((S, A)), np.zeros((S, A)), np.zeros((S, A), dtype=np.int64),
                np.zeros((S, A), dtype=np.bool_))
    where = _flow(tree, su.policy.logits, rollout, lp, truncating_actions(mdp), flow)
    if where == -1:
        return tree, flow, rollout, lp
    if where >= 0:
        raise ValueError(f"mdp is not a tree numbered forwards (state "
                         f"{mdp.state_name(where)} continues backwards): pass a token MDP")
    raise ValueError(f"max_steps={su.rollout.max_steps} cuts the responses through state "
                     f"{mdp.state_name(-2 - where)}: pass max_steps at least the tree's depth")


def _greedy_baselines(su, tree: Tree, rollout, lp, flow: _Flow) -> np.ndarray:
    """ReMax's greedy return of every prompt (zeros for the other advantages)."""
    roots = np.flatnonzero(tree.start > 0.0)
    out = np.zeros(roots.shape[0])
    if lp.advantage != GREEDY:
        return out
    rng = seed_states(0, 1)[0]  # a deterministic MDP draws nothing
    scratch = np.empty(tree.reward.shape[1])
    for i, root in enumerate(roots):
        out[i] = greedy_return(su.mdp.arrays, rollout, su.policy.logits, int(root), rng,
                               scratch, lp)
    return out


def expected_fixed_point(mdp: MDPLike, policy: PolicyLike, *, ref_policy: PolicyLike,
                         beta: float, alpha: float = 1.0, iterations: int = 20_000,
                         tol: float = 1e-9, config: GRPOConfig | None = None,
                         **options: Any) -> FixedPoint:
    """The fixed point of an estimator's expected update (:func:`expected_update`, where
    :func:`~tabular.rlhf.grpo` settles as its step size falls): from ``policy``,
    ``theta_r <- theta_r + alpha E[d]_r / mu(r)`` until ``|E[d]| < tol`` or
    ``iterations`` steps, and its exact gap ``J* - J`` to the optimum ``pi*`` of
    ``beta`` (> 0) and ``ref_policy``.

    Each row ``r`` is moved by its expected update divided by the probability ``mu(r)``
    that a response passes through one of its states: a positive diagonal
    preconditioner, so the points where the update is 0 are the same, but rarely visited
    prefixes, whose plain update is ``mu`` times smaller, converge as fast as the others
    (a row no response visits does not move).

    ``config``/``**options`` as in :func:`expected_update` (an estimator the enumeration
    or closed form serves: the Monte Carlo draws would make the steps noisy).
    """
    cfg = _config(config, options)
    beta = check_positive("beta", beta)
    step = check_positive("alpha", alpha)
    iterations = check_positive_int("iterations", iterations)
    su = policy_gradient_args(mdp, policy, ref_policy=ref_policy, beta=beta, reward_floor=None,
                              gamma=1.0, episodes=1, max_steps=None, runs=None, seed=0)
    current = SoftmaxPolicy(su.policy.logits.copy(), su.policy.row_of_state.copy())
    norm, steps = math.inf, 0
    finite = np.isfinite(current.logits)
    while True:
        upd = expected_update(su.mdp, current, ref_policy=ref_policy, beta=beta, config=cfg)
        if upd.method == "monte carlo":
            raise ValueError("expected_fixed_point needs an exact expected update: lower "
                             "group_size or raise max_groups")
        norm = float(np.linalg.norm(upd.direction))
        if norm < tol or steps == iterations:
            break
        mu = np.bincount(current.row_of_state, weights=visit_probabilities(su.mdp, current),
                         minlength=current.logits.shape[0])
        move = step * upd.direction / np.where(mu > 0.0, mu, 1.0)[:, None]
        current.logits[finite] += move[finite]
        steps += 1
        if not np.all(np.abs(current.logits[finite]) < 1e6):
            raise FloatingPointError(
                f"the expected update diverged after {steps} steps (a logit passed 1e6): "
                f"this estimator has no finite fixed point from this policy, or alpha="
                f"{step:g} is too large for it")
    mdp_ = as_mdp(su.mdp)
    gap = kl_optimum(mdp_, ref_policy, beta).value - kl_objective(mdp_, current, ref_policy,
                                                                  beta)
    return FixedPoint(current, norm, float(gap), steps, norm < tol)
