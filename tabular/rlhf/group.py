"""Value-free policy gradient on groups of responses: GRPO (Shao et al., 2024), RLOO
(Ahmadian et al., 2024) and ReMax (Li et al., 2023).

The three differ only in the baseline a response's return is compared with: the
group's mean (GRPO, optionally divided by the group's standard deviation), the mean of
the other responses of the group (RLOO: leave one out), or the return of the greedy
response to the same prompt (ReMax); and GRPO-style learners differ in how they
average the token terms: over each response's tokens, over all the group's tokens, or
not at all (a per-response sum).
"""

from __future__ import annotations

from dataclasses import fields
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.runs import keep_stream, over_runs, runs_kernel
from tabular.checks import check_fits, check_flag, check_positive_int, real_array
from tabular.model.outcomes import with_start
from tabular.model.sampling import sample_start, sample_step
from tabular.pg.arguments import policy_gradient_args, step_size
from tabular.pg.rollout import episode_buffers, kl_penalised, sample_episode
from tabular.pg.telemetry import Callback, check_history, run_in_chunks, sample_batch
from tabular.results import with_run_axis
from tabular.rlhf.group_config import (
    GREEDY,
    IN_LOSS,
    IN_REWARD,
    K1,
    SEQUENCE_LEVEL,
    GRPOConfig,
    LossParams,
    legacy_options,
    truncating_actions,
)
from tabular.rlhf.group_loss import (
    batch_advantages,
    clip_region,
    kl_estimate,
    kl_loss_weight,
    leave_one_out_advantages,
    ratio_weight,
    token_weight,
)
from tabular.rlhf.group_telemetry import group_sampler
from tabular.rlhf.results import GRPOResult
from tabular.rules.policy_gradient import (
    accumulate_log_prob_grad,
    ascend,
    grad_entropy,
    log_softmax,
    softmax,
)
from tabular.rules.policy_gradient import group_relative_advantages as _group_advantages
from tabular.schedules import schedule_value
from tabular.types import FloatArray, MDPLike, PolicyLike, StepSize

#: re-exported: the sampled learner's names of :mod:`tabular.rlhf.group_loss`
__all__ = ["group_relative_advantages", "grpo", "leave_one_out_advantages"]


class GRPOParams(NamedTuple):
    """:func:`grpo` as its kernel reads it: ``alpha`` as schedule parameters, the loss
    (:class:`~tabular.rlhf.group_config.LossParams`), ``truncates`` (bool ``[S, A]``:
    the endings that cut a response before its ``eos``) and ``first``, the iteration to
    start from (0 unless a run continues in chunks)."""

    iterations: int
    alpha: np.ndarray
    loss: LossParams
    truncates: np.ndarray
    first: int = 0


class GroupOutputs(NamedTuple):
    """What the :func:`grpo` kernel writes, each with a leading run axis: ``logits``
    ``[runs, R, A]`` (trained in place), ``returns`` and ``lengths`` ``[runs,
    episodes]``, and per iteration ``dropped`` (int64 ``[runs, iterations]``) and
    ``clipped`` ``[runs, 2, iterations]`` (the fractions of token updates clipped low,
    high)."""

    logits: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray
    dropped: np.ndarray
    clipped: np.ndarray


@njit(cache=True, inline="always")
def reference_log_prob(rollout, s, a):
    """``log pi_ref(a|s)`` of the reference held by ``rollout``."""
    return rollout.ref_log_probs[rollout.ref_row[s], a]


@njit(cache=True, inline="always")
def reward_kl(lp, rollout, s, a, log_pi):
    """What the KL in the reward takes from a token's reward beyond the ``k1`` that the
    sampler folds in itself: ``beta k(x)`` for ``k2`` and ``k3`` in the reward, else 0."""
    if lp.beta == 0.0 or lp.kl_placement != IN_REWARD or lp.kl_estimator == K1:
        return 0.0
    return lp.beta * kl_estimate(log_pi - reference_log_prob(rollout, s, a), lp.kl_estimator)


@njit(cache=True, inline="always")
def greedy_return(model, rollout, theta, s, rng, log_probs, lp):
    """The return (as the learner sees it: floored, KL-shaped) of the greedy response
    from ``s``, the baseline of ReMax (Li et al., 2023): the most probable token at
    every step, the lowest on ties; ``log_probs`` ``[A]`` is scratch."""
    total = 0.0
    for _ in range(rollout.max_steps):
        row = rollout.row_of_state[s]
        log_softmax(theta[row], log_probs)
        a = np.argmax(theta[row])
        s_next, r, done = sample_step(model, s, a, rng)
        total += kl_penalised(max(r, rollout.reward_floor), log_probs[a], rollout, s, a)
        total -= reward_kl(lp, rollout, s, a, log_probs[a])
        s = s_next
        if done:
            break
    return total


@njit(cache=True, inline="always")
def group_model(model, rng, prompt_cdf):
    """``(s0, group)``: a prompt ``s0`` drawn from the model's start distribution and the
    model whose every episode starts there (``prompt_cdf`` ``[S]`` is its start CDF), so
    that a group's responses share their prompt."""
    s0 = sample_start(model, rng)
    for s in range(prompt_cdf.shape[0]):
        prompt_cdf[s] = 1.0 if s >= s0 else 0.0
    return s0, with_start(model, prompt_cdf)


@njit(cache=True, inline="always")
def response_return(lp, rollout, path, seen, T, truncated):
    """The return of a sampled response as the loss sees it: the rewards the sampler
    recorded (floored, ``k1`` folded in when it is the KL in the reward), minus the
    ``k2``/``k3`` KL in the reward and the truncation penalty."""
    total = seen[0, :T].sum()
    if lp.beta > 0.0 and lp.kl_placement == IN_REWARD and lp.kl_estimator != K1:
        for t in range(T):
            total -= reward_kl(lp, rollout, path[0, t], path[1, t], seen[1, t])
    if truncated and lp.truncation_penalty > 0.0:
        total -= lp.truncation_penalty
    return total


class Batch(NamedTuple):
    """A sampled batch as the epochs read it: ``paths`` ``[n, 2, L + 1]``, ``seen`` ``[n,
    2, L]`` (rewards, then ``log pi_old``), lengths ``T``, ``kept`` and ``advantage``."""

    paths: np.ndarray
    seen: np.ndarray
    T: np.ndarray
    kept: np.ndarray
    advantage: np.ndarray


class EpochWork(NamedTuple):
    """Scratch of the epochs after the first: the batch's ``rows`` and each row's
    ``slot``; per slot ``probs``, ``log_probs``, the summed token weights ``coef`` and
    entropy weights ``bonus``; GSPO's ``ratios`` per response; ``entropy_grad`` ``[A]``;
    the ``direction`` ``[R, A]`` being built."""

    rows: np.ndarray
    slot: np.ndarray
    probs: np.ndarray
    log_probs: np.ndarray
    coef: np.ndarray
    bonus: np.ndarray
    ratios: np.ndarray
    entropy_grad: np.ndarray
    direction: np.ndarray


@njit(cache=True, inline="always")
def policy_weight(lp, rollout, s, a, ratio, advantage, log_pi):
    """The weight on ``grad log pi(a|s)`` of a token at ``ratio`` before the aggregation:
    the clipped policy term (:func:`~tabular.rlhf.group_loss.ratio_weight`) plus the KL
    loss term at ``log pi(a|s) = log_pi`` when the KL is in the loss."""
    weight = ratio_weight(ratio, advantage, lp)
    if lp.kl_placement == IN_LOSS and lp.beta > 0.0:
        weight += kl_loss_weight(log_pi - reference_log_prob(rollout, s, a), lp.kl_estimator,
                                 lp.beta)
    return weight


@njit(cache=True, inline="always")
def ascend_rows(theta, direction, rows, n_rows, step, touched):
    """The step on the rows the batch touched, then their directions and marks cleared."""
    for j in range(n_rows):
        row = rows[j]
        ascend(theta[row], direction[row], step)
        direction[row] = 0.0
        touched[row] = False


@njit(cache=True)
def off_policy_epoch(lp, rollout, theta, batch, work, n_rows, tokens, step):
    """One more epoch on the batch (``num_iterations > 1``): every token's ratio to the
    sampling policy, clipped (:func:`policy_weight`), aggregated, and one step. Each
    row's softmax is computed once, the tokens add ``w`` to ``direction[row, a]`` and to
    the row's ``coef``, and ``-coef pi`` is added per row: ``sum w (e_a - pi)``, the same
    gradient with O(1) work per token. Returns the tokens clipped low and high."""
    n = batch.T.shape[0]
    for j in range(n_rows):
        row = work.rows[j]
        softmax(theta[row], work.probs[j])
        log_softmax(theta[row], work.log_probs[j])
        work.coef[j], work.bonus[j] = 0.0, 0.0
    if lp.level == SEQUENCE_LEVEL:
        for i in range(n):
            if batch.kept[i]:
                total = 0.0
                for t in range(batch.T[i]):
                    j = work.slot[rollout.row_of_state[batch.paths[i, 0, t]]]
                    total += work.log_probs[j, batch.paths[i, 1, t]] - batch.seen[i, 1, t]
                work.ratios[i] = np.exp(total / batch.T[i])
    low = high = 0
    for i in range(n):
        if not batch.kept[i]:
            continue
        A, L = batch.advantage[i], batch.T[i]
        for t in range(L):
            s, a = batch.paths[i, 0, t], batch.paths[i, 1, t]
            row = rollout.row_of_state[s]
            j = work.slot[row]
            log_pi = work.log_probs[j, a]
            ratio = (work.ratios[i] if lp.level == SEQUENCE_LEVEL
                     else np.exp(log_pi - batch.seen[i, 1, t]))
            region = clip_region(ratio, A, lp)
            low += region < 0
            high += region > 0
            w = token_weight(policy_weight(lp, rollout, s, a, ratio, A, log_pi), lp.loss_type,
                             L, n, tokens, lp.max_steps) / n
            work.direction[row, a] += w
            work.coef[j] += w
            if lp.entropy_coef > 0.0:
                work.bonus[j] += token_weight(lp.entropy_coef, lp.loss_type, L, n, tokens,
                                              lp.max_steps) / n
    for j in range(n_rows):
        row = work.rows[j]
        if lp.entropy_coef > 0.0:
            grad_entropy(work.probs[j], work.log_probs[j], work.entropy_grad)
        for b in range(theta.shape[1]):
            work.direction[row, b] -= work.coef[j] * work.probs[j, b]
            if lp.entropy_coef > 0.0:
                work.direction[row, b] += work.bonus[j] * work.entropy_grad[b]
        ascend(theta[row], work.direction[row], step)
        work.direction[row] = 0.0
    return low, high


@njit(cache=True, inline="always")
def _grpo_run(model, p, rollout, rng, out, run):
    """Run ``run``, into row ``run`` of the :class:`GroupOutputs` ``out``: each iteration
    samples ``groups`` prompts and ``group_size`` responses to each, computes their
    advantages (:func:`~tabular.rlhf.group_loss.batch_advantages`) and takes
    ``num_iterations`` ascent steps on the loss of :mod:`tabular.rlhf.group_loss`, the
    first at the sampling policy (every ratio 1)."""
    lp = p.loss
    theta, returns, lengths = out.logits[run], out.returns[run], out.lengths[run]
    S, G, n = model.start_cdf.shape[0], lp.group_size, lp.groups * lp.group_size
    paths, seen, dones, dist = episode_buffers(n, rollout.max_steps, theta.shape[1])
    T = np.empty(n, dtype=np.int64)
    truncated, kept = np.zeros(n, dtype=np.bool_), np.ones(n, dtype=np.bool_)
    shaped, advantage, ratios = np.empty(n), np.empty(n), np.ones(n)
    baseline = np.zeros(lp.groups)
    direction, grad = np.zeros_like(theta), np.empty(theta.shape[1])
    entropy_grad = np.empty(theta.shape[1])
    # the rows the batch's tokens pass through: the only ones a step moves
    touched = np.zeros(theta.shape[0], dtype=np.bool_)
    rows = np.empty(n * rollout.max_steps, dtype=np.int64)
    prompt_cdf = np.empty(S)
    n_slots = min(n * rollout.max_steps, theta.shape[0])
    work = EpochWork(rows, np.zeros(theta.shape[0], dtype=np.int64),
                     np.empty((n_slots, theta.shape[1])), np.empty((n_slots, theta.shape[1])),
                     np.empty(n_slots), np.empty(n_slots), ratios, entropy_grad, direction)
    batch = Batch(paths, seen, T, kept, advantage)
    for it in range(p.first, p.iterations):
        for g in range(lp.groups):
            s0, group = group_model(model, rng, prompt_cdf)
            for i in range(g * G, (g + 1) * G):
                T[i], returns[it * n + i] = sample_episode(group, rollout, theta, rng, paths[i],
                                                           seen[i], dones[i], dist)
                lengths[it * n + i] = T[i]
                last = T[i] - 1
                truncated[i] = (not dones[i, last]) or p.truncates[paths[i, 0, last],
                                                                   paths[i, 1, last]]
                shaped[i] = response_return(lp, rollout, paths[i], seen[i], T[i], truncated[i])
            if lp.advantage == GREEDY:
                baseline[g] = greedy_return(group, rollout, theta, s0, rng, dist[1], lp)
        tokens, dropped = batch_advantages(lp, shaped, T, truncated, baseline, advantage, kept)
        out.dropped[run, it] = dropped
        step = schedule_value(p.alpha, it + 1)
        # the first epoch, on-policy (every ratio 1), token by token
        n_rows, updates, low, high = 0, 0, 0, 0
        for i in range(n):
            if not kept[i]:
                continue
            for t in range(T[i]):
                s, a = paths[i, 0, t], paths[i, 1, t]
                row = rollout.row_of_state[s]
                if not touched[row]:
                    touched[row] = True
                    work.slot[row] = n_rows
                    rows[n_rows] = row
                    n_rows += 1
                region = clip_region(1.0, advantage[i], lp)  # CISPO's cap may hold at 1
                low += region < 0
                high += region > 0
                weight = policy_weight(lp, rollout, s, a, 1.0, advantage[i], seen[i, 1, t])
                weight = token_weight(weight, lp.loss_type, T[i], n, tokens, lp.max_steps)
                grad[:] = 0.0  # this token's weighted grad log pi(a_t|s_t)
                accumulate_log_prob_grad(theta[row], a, weight, dist[0], grad)
                if lp.entropy_coef > 0.0:
                    log_softmax(theta[row], dist[1])
                    grad_entropy(dist[0], dist[1], entropy_grad)
                    bonus = token_weight(lp.entropy_coef, lp.loss_type, T[i], n, tokens,
                                         lp.max_steps)
                    for b in range(grad.shape[0]):
                        grad[b] += bonus * entropy_grad[b]
                for b in range(grad.shape[0]):
                    direction[row, b] += grad[b] / n
                updates += 1
        ascend_rows(theta, direction, rows, n_rows, step, touched)
        for _ in range(1, lp.num_iterations):
            l, h = off_policy_epoch(lp, rollout, theta, batch, work, n_rows, tokens, step)
            low, high, updates = low + l, high + h, updates + tokens
        out.clipped[run, 0, it] = low / max(updates, 1)
        out.clipped[run, 1, it] = high / max(updates, 1)


# numba's plain pipeline: the simplifying one's array analysis fails on this loop. The
# stream kept by hand, not by run_keeping_stream: the plain pipeline keeps a reference
# count of one of its argument copies and allocates registers anew, 2% slower over many
# short runs (docs/decisions/2026-12-06-duplicates-2.md)
@runs_kernel(simplifying=False)
def _grpo(model, params, rollout, rng_states, out):
    """Every run of :func:`_grpo_run`, each stream kept for the next chunk."""
    for run in range(rng_states.shape[0]):
        rng = local_stream(rng_states[run])
        _grpo_run(model, params, rollout, rng, out, run)
        keep_stream(rng_states, run, rng)


def group_relative_advantages(returns: npt.ArrayLike, normalise: bool = True) -> FloatArray:
    """GRPO's critic-free advantages of one group of responses (Shao et al., 2024, section
    4.1.2): ``A_i = (R_i - mean(R)) / std(R)``, or only centred with ``normalise=False``;
    a group whose returns agree to rounding is only centred, never divided by ~0.

    ``returns``: the group's returns, at least 2 finite numbers. Returns a new array.
    """
    R = real_array("returns", returns)
    if R.ndim != 1 or R.shape[0] < 2:
        raise ValueError(f"returns must be a group of at least 2 returns, got shape "
                         f"{list(R.shape)}")
    if not np.isfinite(R).all():
        raise ValueError(f"returns[{int(np.argmax(~np.isfinite(R)))}] is not finite: a group's "
                         "mean needs finite returns (floor -inf rewards with reward_floor)")
    out = np.empty_like(R)
    _group_advantages(R, check_flag("normalise", normalise), out)
    return out


@njit(cache=True)
def sample_group(model, rollout, theta, rng, n):
    """The group of ``n`` responses an iteration of :func:`grpo` draws from the stream
    ``rng`` (advanced): a prompt, then :func:`~tabular.pg.telemetry.sample_batch` from
    it."""
    _, group = group_model(model, rng, np.empty(model.start_cdf.shape[0]))
    return sample_batch(group, rollout, theta, rng, n)


def grpo(mdp: MDPLike, policy: PolicyLike | None = None, *, iterations: int = 500,
         group_size: int = 8, alpha: StepSize = 0.5, advantage: str = "grpo",
         normalise: bool | None = None, aggregation: str | None = None,
         ref_policy: PolicyLike | None = None, beta: float = 0.0,
         reward_floor: float | None = None, max_steps: int | None = None,
         loss_type: str | None = None, scale_rewards: str | None = None,
         num_iterations: int = 1, epsilon: float = 0.2, epsilon_high: float | None = None,
         importance_sampling_level: str = "token", groups: int = 1,
         dynamic_sampling: bool = False, mask_truncated_completions: bool = False,
         truncation_penalty: float = 0.0, kl_estimator: str = "k1",
         kl_placement: str = "reward", entropy_coef: float = 0.0, seed: int | None = 0,
         runs: int | None = None, history: bool = False, eval_every: int | None = None,
         callback: Callback | None = None) -> GRPOResult:
    """Group relative policy optimisation as practitioners configure it (Shao et al., 2024,
    section 4.1, with outcome supervision; TRL's ``GRPOTrainer`` and ``RLOOTrainer``):
    RLOO, ReMax, Dr. GRPO, DAPO, GSPO and CISPO are its options.

    Each iteration draws ``groups`` prompts (start states), samples ``group_size``
    responses to each, and gives every token of response ``i`` its return relative to
    its group (by default ``(R_i - mean R) / std R``; see ``advantage`` and
    ``scale_rewards``); then takes ``num_iterations`` ascent steps of size ``alpha`` on
    the loss of :mod:`tabular.rlhf.group_loss` (the clipped ratio, aggregated by
    ``loss_type``), the first at the sampling policy. With the defaults this is one
    on-policy step on ``(1/G) sum_i A_i sum_t grad log pi(a_t|s_t)``, with the KL
    penalty to ``ref_policy`` folded into the per-token reward as in
    :func:`tabular.reinforce` (``k1`` in the reward), so at the KL-regularised optimum
    every response of a deterministic token MDP has the same return ``beta log Z(x)``
    and every advantage is 0. There is no discount (``gamma = 1``).
    :func:`tabular.rlhf.expected_update` gives the exact expected update of any of
    these options at any policy.

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` (e.g. a token MDP's) or a Gymnasium env.
    policy : the starting policy, a :class:`~tabular.SoftmaxPolicy` or an ``[S, A]``
        matrix of probabilities; default ``None``: the uniform tabular softmax.
    iterations : number of batches, default 500.
    group_size, groups, advantage, scale_rewards, loss_type : the loss, as
        :class:`~tabular.rlhf.group_config.GRPOConfig` documents them (defaults: 8
        responses to 1 prompt, ``"grpo"``, ``scale_rewards="group"`` for ``"grpo"`` and
        ``"none"`` otherwise, ``loss_type="sum"``).
    num_iterations, epsilon, epsilon_high, importance_sampling_level : likewise (1
        epoch, ``epsilon=0.2``, token-level ratios).
    dynamic_sampling, mask_truncated_completions, truncation_penalty : likewise.
    kl_estimator, kl_placement, entropy_coef : likewise (``k1`` in the reward, 0).
    normalise : the older spelling of ``scale_rewards`` (``True``: ``"group"``,
        ``False``: ``"none"``); a bool, exclusive with ``scale_rewards``.
    aggregation : the older spelling of ``loss_type``: ``"sum"``, ``"sequence"``
        (``"grpo"``) or ``"token"`` (``"bnpo"``); exclusive with ``loss_type``.
    alpha : step size (number or :mod:`tabular.schedules` schedule over iterations),
        default 0.5.
    ref_policy : the reference of the KL penalty (any policy form), default ``None``.
    beta : the KL coefficient (>= 0; > 0 needs ``ref_policy``), default 0.0.
    reward_floor : learn from ``max(r, reward_floor)`` (required when the MDP can
        pay ``-inf``), default ``None``.
    max_steps : the step limit of a response (also Dr. GRPO's constant), default
        ``None``: the env's time limit (``mdp.max_episode_steps``), else 1000.
    seed : seed of the random streams, default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` runs.
    history, eval_every, callback : the training history, as in
        :func:`tabular.reinforce` (``eval_every`` counts iterations; the sampled metrics
        are those of the iteration's first group), default False, ``None``, ``None``.

    Returns
    -------
    A :class:`~tabular.rlhf.results.GRPOResult`: ``logits`` ``[R, A]`` (``[runs, R, A]``
    with ``runs=n``), ``row_of_state`` ``[S]``, ``V = None`` (no critic),
    ``episode_returns`` (without the KL term) and ``episode_lengths`` of the
    ``iterations * groups * group_size`` responses, and per iteration
    ``dropped_groups``, ``clip_ratio_low`` and ``clip_ratio_high``; ``.policy`` the
    trained ``SoftmaxPolicy``.
    """
    scale_rewards, loss_type = legacy_options(normalise, aggregation, scale_rewards,  # type: ignore[assignment]  # legacy_options checks the values
                                              loss_type)
    config = GRPOConfig(group_size=group_size, groups=groups, advantage=advantage,
                        scale_rewards=scale_rewards, loss_type=loss_type,  # type: ignore[arg-type]  # GRPOConfig checks loss_type itself
                        num_iterations=num_iterations, epsilon=epsilon,
                        epsilon_high=epsilon_high,
                        importance_sampling_level=importance_sampling_level,
                        dynamic_sampling=dynamic_sampling,
                        mask_truncated_completions=mask_truncated_completions,
                        truncation_penalty=truncation_penalty, kl_estimator=kl_estimator,
                        kl_placement=kl_placement, entropy_coef=entropy_coef)
    n = config.groups * config.group_size
    iterations = check_positive_int("iterations", iterations)
    su = policy_gradient_args(mdp, policy, ref_policy=ref_policy, beta=beta,
                              reward_floor=reward_floor, gamma=1.0, episodes=iterations * n,
                              max_steps=max_steps, runs=runs, seed=seed,
                              made_by=f"iterations={iterations:,} x {n:,} responses")
    L = su.rollout.max_steps
    check_fits("group_size", 48 * n * (L + 1),
               f"{config.groups} x {config.group_size} responses of {L} steps")
    params = GRPOParams(iterations, step_size("alpha", alpha),
                        config.loss(su.rollout.beta, L), truncating_actions(su.mdp))
    # the sampler folds k1 into the reward; every other placement is the loss's own
    rollout = su.rollout if config.folds_k1 else su.rollout._replace(beta=0.0)
    every = check_history(history, eval_every, callback, iterations, "grpo", runs=runs)
    base = su.outputs(value=False)
    n_runs = base.logits.shape[0]
    out = GroupOutputs(base.logits, base.returns, base.lengths,
                       np.zeros((n_runs, iterations), dtype=np.int64),
                       np.zeros((n_runs, 2, iterations)))

    def step(first, stop):
        over_runs(_grpo, su.mdp.arrays, params._replace(first=first, iterations=stop),
                  rollout, su.rng_states, out)

    trace = run_in_chunks(step, iterations, every,
                          su.recorder(ref_policy, out.logits, callback, "grpo",
                                      group_sampler(su, out, config.group_size,
                                                    sample_group)), "grpo")
    result = su.result(base, value=False, history=trace)
    return GRPOResult(**{f.name: getattr(result, f.name) for f in fields(result)},
                      dropped_groups=with_run_axis(out.dropped, su.runs),
                      clip_ratio_low=with_run_axis(out.clipped[:, 0], su.runs),
                      clip_ratio_high=with_run_axis(out.clipped[:, 1], su.runs))
