"""Nash-MD as TRL's ``NashMDTrainer`` runs it: sampled, token by token (Munos et al.,
2024, "Nash learning from human feedback", sections 6-7).

Each iteration draws ``pairs`` prompts and two responses to each: ``y`` from the policy
``pi_theta`` and ``y'`` from the token-level geometric mixture of the policy and the
reference, ``mu(a|s) ∝ pi_theta(a|s)^(1 - m) ref(a|s)^m`` with ``m = mixture_coef``
(TRL's ``GeometricMixtureWrapper``, which mixes the two models' logits: the paper's
section 7 approximates the sequence-level mixture this way). The judge gives
``p = P(y > y')`` (a :class:`~tabular.rlhf.PreferenceModel`, or ``sigma(R(y) - R(y'))``
on the returns, as TRL's reward model does: the probability itself, no label drawn).
The step ascends

    g = mean_i [(p_i - 1/2) - beta (log pi(y_i|x) - log ref(y_i|x))] d log pi(y_i|x)

by ``alpha``: REINFORCE on the preference against the mixture, with ``1/2`` as control
variate (TRL's ``loss/score``), and on the whole response's KL to the reference. Its
expectation is the gradient on the logits of ``P(pi > mu) - beta KL(pi || ref)`` with
``mu`` held fixed; for a policy with a row of logits per prefix it vanishes exactly
where ``pi(y|x) ∝ ref(y|x) exp(P(y > mu|x) / beta)``: the fixed point of exact Nash-MD
(:func:`~tabular.rlhf.nash_md`) with the constant step ``eta = m / beta``, which is the
regularised Nash equilibrium when ``mu = pi`` (``m = 0``) and otherwise lies
``O(m / beta)`` from it. TRL weighs each token's gradient by that token's log-ratio
alone (``(log_ratio * logprobs).sum(1)``), the gradient of the per-prefix KLs with the
visits held fixed, which is biased for responses of more than one token; the zoo uses
the whole response's log-ratio, whose expectation is the sequence KL's gradient (the two
agree on one-token responses).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.runs import over_runs, run_keeping_stream, runs_kernel
from tabular.checks import MAX_COUNT, check_nonnegative, check_positive, check_positive_int
from tabular.model.sampling import sample_step
from tabular.pg.arguments import MAX_POLICY_STEP, check_no_overflow, policy_gradient_args
from tabular.pg.rollout import Rollout, episode_buffers, sample_episode
from tabular.pg.telemetry import Callback, batch_metrics, check_history, run_in_chunks, sample_batch
from tabular.results import with_run_axis
from tabular.rlhf.preference import Judge, judged_start
from tabular.rlhf.results import SampledNashMDResult
from tabular.rlhf.reward_model import sigmoid
from tabular.rules.policy_gradient import (
    accumulate_log_prob_grad,
    ascend,
    log_softmax,
    sample_softmax,
)
from tabular.types import MDPLike, PolicyLike, TokenEnv


class NashMDParams(NamedTuple):
    """:func:`sampled_nash_md` as its kernel reads it: ``beta``, ``mixture_coef``, the
    step ``alpha``, the ``iterations``, the ``pairs`` per iteration, the ``judge`` (a
    :class:`~tabular.rlhf.preference.Judge`; empty: Bradley-Terry on the returns) and
    ``first``, the iteration to start from (0 unless a run continues in chunks)."""

    beta: float
    mixture_coef: float
    alpha: float
    iterations: int
    pairs: int
    judge: Judge
    first: int = 0


class NashMDOutputs(NamedTuple):
    """What the kernel fills, each with a leading run axis: the ``logits`` (trained in
    place), and per iteration the mean judge probability ``probability`` ``P(y > y')``
    (TRL's ``rewards/probabilities``) and the mean log-ratio ``kl`` ``log pi(y|x) / ref(y|x)``
    of the policy's responses (TRL's ``loss/kl``), ``[iterations]``."""

    logits: np.ndarray
    probability: np.ndarray
    kl: np.ndarray


@njit(cache=True, inline="always")
def continue_mixture_episode(model, rollout, theta, m, rng, path, dist, mix):
    """A response from the state in ``path[0, 0]`` drawn token by token from the
    geometric mixture ``softmax((1 - m) log pi(.|s) + m log ref(.|s))`` (``m`` in
    ``[0, 1]``; the endpoints read one policy only, so a masked token's ``0 * -inf`` never
    arises); fills ``path[0, :T + 1]`` and ``path[1, :T]`` as
    :func:`~tabular.pg.rollout.sample_episode` does and returns ``(T, return)``. ``dist``
    ``[2, A]`` and ``mix`` ``[A]`` are scratch."""
    s = path[0, 0]
    env_return = 0.0
    T = rollout.max_steps
    for t in range(rollout.max_steps):
        ref = rollout.ref_log_probs[rollout.ref_row[s]]
        if m == 1.0:
            mix[:] = ref
        else:
            log_softmax(theta[rollout.row_of_state[s]], mix)
            if m > 0.0:
                for b in range(mix.shape[0]):
                    mix[b] = (1.0 - m) * mix[b] + m * ref[b]
        a = sample_softmax(mix, dist[0], rng)
        s_next, r, d = sample_step(model, s, a, rng)
        env_return += r
        path[0, t], path[1, t] = s, a
        s = s_next
        if d:
            T = t + 1
            break
    path[0, T] = s
    return T, env_return


@njit(cache=True, inline="always")
def _preference(judge, path, T0, R0, other, T1, R1):
    """``P(y > y')`` of the responses ending ``path``'s step ``T0 - 1`` and ``other``'s
    step ``T1 - 1``: the judge's table, or ``sigma(R0 - R1)`` without one."""
    if judge.index.shape[0] == 0:
        return sigmoid(R0 - R1)
    i = judge.index[path[0, T0 - 1], path[1, T0 - 1]]
    j = judge.index[other[0, T1 - 1], other[1, T1 - 1]]
    return judge.prob[i, j]


@njit(cache=True, inline="always")
def _nash_md_run(model, p, rollout, rng, out, run):
    """Run ``run`` of :func:`sampled_nash_md` into row ``run`` of the
    :class:`NashMDOutputs` ``out`` (see the module for the update)."""
    theta = out.logits[run]
    A, L, M = theta.shape[1], rollout.max_steps, p.pairs
    path, seen, dones, dist = episode_buffers(2, L, A)
    mix, probs = np.empty(A), np.empty(A)
    rows = np.zeros((M, L), dtype=np.int64)
    actions = np.zeros((M, L), dtype=np.int64)
    lengths = np.zeros(M, dtype=np.int64)
    weights = np.zeros(M)
    grad = np.zeros_like(theta)
    touched = np.zeros(theta.shape[0], dtype=np.bool_)
    for it in range(p.first, p.iterations):
        prob_sum, kl_sum = 0.0, 0.0
        for i in range(M):
            T0, R0 = sample_episode(model, rollout, theta, rng, path[0], seen[0], dones[0],
                                    dist)
            path[1, 0, 0] = path[0, 0, 0]  # y' answers the same prompt
            T1, R1 = continue_mixture_episode(model, rollout, theta, p.mixture_coef, rng,
                                              path[1], dist, mix)
            prob = _preference(p.judge, path[0], T0, R0, path[1], T1, R1)
            log_ratio = 0.0
            for t in range(T0):
                s, a = path[0, 0, t], path[0, 1, t]
                log_ratio += seen[0, 1, t] - rollout.ref_log_probs[rollout.ref_row[s], a]
                rows[i, t], actions[i, t] = rollout.row_of_state[s], a
            lengths[i] = T0
            weights[i] = ((prob - 0.5) - p.beta * log_ratio) / M
            prob_sum += prob
            kl_sum += log_ratio
        out.probability[run, it] = prob_sum / M
        out.kl[run, it] = kl_sum / M
        for i in range(M):  # every gradient at the logits that drew the samples
            for t in range(lengths[i]):
                r = rows[i, t]
                touched[r] = True
                accumulate_log_prob_grad(theta[r], actions[i, t], weights[i], probs, grad[r])
        for i in range(M):
            for t in range(lengths[i]):
                r = rows[i, t]
                if touched[r]:
                    ascend(theta[r], grad[r], p.alpha)
                    grad[r] = 0.0
                    touched[r] = False


@runs_kernel
def _sampled_nash_md(model, params, rollout, rng_states, out):
    """Every run of :func:`_nash_md_run`, each run's stream kept for a later call."""
    for run in range(rng_states.shape[0]):
        run_keeping_stream(_nash_md_run, model, params, rollout, rng_states, out, run)


def _mixture_coef(mixture_coef: float) -> float:
    """``mixture_coef`` checked: a number in ``[0, 1]``."""
    m = check_nonnegative("mixture_coef", mixture_coef)
    if m > 1.0:
        raise ValueError(f"mixture_coef must be in [0, 1] (the reference's weight in the "
                         f"geometric mixture), got {m}")
    return m


def sampled_nash_md(mdp: MDPLike | TokenEnv, policy: PolicyLike, *, beta: float = 0.1,
                    mixture_coef: float = 0.5, iterations: int = 100, pairs: int = 16,
                    alpha: float = 1.0, ref_policy: PolicyLike | None = None,
                    judge: object = None, seed: int | None = 0, runs: int | None = None,
                    history: bool = False, eval_every: int | None = None,
                    callback: Callback | None = None) -> SampledNashMDResult:
    """Nash-MD sampled token by token, as TRL's ``NashMDTrainer`` (see the module).

    Parameters
    ----------
    mdp : the token MDP (an ``envs.TokenMDP`` or its :class:`~tabular.TabularMDP`); its
        reward judges the pairs when ``judge`` is ``None``.
    policy : the starting policy, a :class:`~tabular.SoftmaxPolicy` (its rows are
        trained) or an ``[S, A]`` matrix of probabilities.
    beta : the KL coefficient (> 0), default 0.1 (TRL's).
    mixture_coef : the reference's weight ``m`` in the token-level geometric mixture, in
        ``[0, 1]``, default 0.5 (TRL's); the paper's ``eta beta``.
    iterations : updates (>= 1), default 100.
    pairs : pairs sampled per update (>= 1), default 16.
    alpha : the step size (> 0), default 1.0.
    ref_policy : the reference (any policy form); default ``None``: ``policy`` itself.
    judge : a :class:`~tabular.rlhf.PreferenceModel` giving ``P(y > y')`` (it must
        compare every response the policy can give); default ``None``: ``sigma(R(y) -
        R(y'))`` on the returns.
    seed : seed of the sampling streams (``None``: fresh entropy), default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` runs with their own
        streams and a leading run axis.
    history, eval_every, callback : the training history of :mod:`tabular.pg.telemetry`
        (exact metrics every ``eval_every`` iterations beside the sampled batch's);
        default False, ``None``, ``None``.

    Returns a :class:`~tabular.rlhf.results.SampledNashMDResult`. ``iterations=k`` with
    the same seed gives the first ``k`` iterations of any longer call.
    """
    beta = check_positive("beta", beta)
    m = _mixture_coef(mixture_coef)
    iterations = check_positive_int("iterations", iterations, high=MAX_COUNT)
    pairs = check_positive_int("pairs", pairs, high=MAX_COUNT // iterations)
    alpha = check_positive("alpha", alpha, MAX_POLICY_STEP)
    mdp, start, tables = judged_start(mdp, policy, judge)
    every = check_history(history, eval_every, callback, iterations, "sampled_nash_md",
                          runs=runs)
    ref_policy = start if ref_policy is None else ref_policy
    args = policy_gradient_args(mdp, start, ref_policy=ref_policy, beta=beta, reward_floor=None,
                                gamma=1.0, episodes=iterations, max_steps=None, runs=runs,
                                seed=seed, made_by=f"iterations={iterations:,}")
    n = args.rng_states.shape[0]
    out = NashMDOutputs(args.outputs(value=False).logits, np.zeros((n, iterations)),
                        np.zeros((n, iterations)))
    params = NashMDParams(beta, m, alpha, iterations, pairs, tables)
    rollout: Rollout = args.rollout

    def step(first, stop):
        over_runs(_sampled_nash_md, args.mdp.arrays, params._replace(first=first,
                                                                     iterations=stop),
                  rollout, args.rng_states, out)

    def sampled(run, it):
        batch = sample_batch(args.mdp.arrays, rollout, out.logits[run],
                             args.rng_states[run].copy(), pairs)
        return {**batch_metrics(batch, rollout), "mixture_coef": m, "beta": beta}

    trace = run_in_chunks(step, iterations, every,
                          args.recorder(ref_policy, out.logits, callback, "sampled_nash_md",
                                        sampled), "sampled_nash_md")
    check_no_overflow(out.logits, "logits")
    return SampledNashMDResult(with_run_axis(out.logits, runs),
                               args.policy.row_of_state.copy(),
                               with_run_axis(out.probability, runs),
                               with_run_axis(out.kl, runs), trace)
