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

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.runs import over_runs, runs_driver
from tabular.checks import check_flag, check_positive_int, real_array
from tabular.model.outcomes import with_start
from tabular.model.sampling import sample_start, sample_step
from tabular.pg.arguments import policy_gradient_args, step_size
from tabular.pg.results import PolicyGradientResult
from tabular.pg.rollout import episode_buffers, kl_penalised, sample_episode
from tabular.pg.telemetry import Callback, batch_sampler, check_history, run_in_chunks, sample_batch
from tabular.rules.policy_gradient import (
    accumulate_log_prob_grad,
    ascend,
    log_softmax,
    scale_by_std,
)
from tabular.rules.policy_gradient import group_relative_advantages as _group_advantages
from tabular.schedules import schedule_value
from tabular.types import FloatArray, MDPLike, PolicyLike, StepSize

GROUP_MEAN, LEAVE_ONE_OUT, GREEDY = 0, 1, 2
ADVANTAGES = {"grpo": GROUP_MEAN, "rloo": LEAVE_ONE_OUT, "remax": GREEDY}
SUM, SEQUENCE, TOKEN = 0, 1, 2
AGGREGATIONS = {"sum": SUM, "sequence": SEQUENCE, "token": TOKEN}


class GRPOParams(NamedTuple):
    """:func:`grpo` as its kernel reads it (``alpha`` as schedule parameters; ``advantage``
    and ``aggregation`` as the constants above; ``first``: the iteration to start from,
    0 unless a run continues in chunks)."""

    iterations: int
    group_size: int
    alpha: np.ndarray
    normalise: bool
    advantage: int
    aggregation: int
    first: int = 0


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
def greedy_return(model, rollout, theta, s, rng, log_probs):
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
def _grpo_run(model, p, rollout, rng, out, run):
    """Run ``run``, into row ``run`` of the
    :class:`~tabular.pg.rollout.PolicyGradientOutputs` ``out``: each iteration samples a
    prompt, ``group_size`` responses to it, and takes one ascent step on
    ``(1/G) sum_i A_i sum_t grad log pi(a_t|s_t)`` with every token of response ``i``
    sharing its advantage."""
    theta, returns, lengths = out.logits[run], out.returns[run], out.lengths[run]
    S, G = model.start_cdf.shape[0], p.group_size
    paths, seen, dones, dist = episode_buffers(G, rollout.max_steps, theta.shape[1])
    T = np.empty(G, dtype=np.int64)
    shaped, advantage = np.empty(G), np.empty(G)
    direction, grad = np.zeros_like(theta), np.empty(theta.shape[1])
    # the rows the group's tokens pass through: the only ones a step moves
    touched = np.zeros(theta.shape[0], dtype=np.bool_)
    rows = np.empty(G * rollout.max_steps, dtype=np.int64)
    prompt_cdf = np.empty(S)
    for it in range(p.first, p.iterations):
        s0, group = group_model(model, rng, prompt_cdf)
        for i in range(G):
            T[i], returns[it * G + i] = sample_episode(group, rollout, theta, rng, paths[i],
                                                       seen[i], dones[i], dist)
            lengths[it * G + i] = T[i]
            shaped[i] = seen[i, 0, : T[i]].sum()
        if p.advantage == GROUP_MEAN:
            _group_advantages(shaped, p.normalise, advantage)
        else:
            if p.advantage == LEAVE_ONE_OUT:
                leave_one_out_advantages(shaped, advantage)
            else:
                baseline = greedy_return(group, rollout, theta, s0, rng, dist[1])
                for i in range(G):
                    advantage[i] = shaped[i] - baseline
            if p.normalise:
                scale_by_std(shaped, advantage)
        tokens = T.sum()
        n_rows = 0
        for i in range(G):
            weight = advantage[i]  # per response summed over its tokens ("sum")
            if p.aggregation == SEQUENCE:
                weight /= T[i]
            elif p.aggregation == TOKEN:
                weight *= G / tokens
            for t in range(T[i]):
                row = rollout.row_of_state[paths[i, 0, t]]
                if not touched[row]:
                    touched[row] = True
                    rows[n_rows] = row
                    n_rows += 1
                grad[:] = 0.0  # this token's weighted grad log pi(a_t|s_t)
                accumulate_log_prob_grad(theta[row], paths[i, 1, t], weight, dist[0], grad)
                for b in range(grad.shape[0]):
                    direction[row, b] += grad[b] / G
        step = schedule_value(p.alpha, it + 1)
        for j in range(n_rows):
            row = rows[j]
            ascend(theta[row], direction[row], step)
            direction[row] = 0.0
            touched[row] = False


# numba's plain pipeline: the simplifying one's array analysis fails on this loop
_grpo = runs_driver(_grpo_run, rollout=True, simplifying=False)


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
         normalise: bool | None = None, aggregation: str = "sum",
         ref_policy: PolicyLike | None = None, beta: float = 0.0,
         reward_floor: float | None = None, max_steps: int | None = None, seed: int | None = 0,
         runs: int | None = None, history: bool = False, eval_every: int | None = None,
         callback: Callback | None = None) -> PolicyGradientResult:
    """Group relative policy optimisation: policy gradient with no critic (Shao et al.,
    2024, section 4.1, with outcome supervision), and its RLOO and ReMax variants.

    Each iteration draws a prompt (a start state), samples ``group_size`` responses to
    it, and uses each response's return relative to its group (by default
    ``(R_i - mean R) / std R``; see ``advantage`` and ``normalise``) as the advantage
    of all its tokens; then takes one ascent step of size ``alpha`` on
    ``(1/G) sum_i A_i sum_t grad log pi(a_t|s_t)`` (see ``aggregation``). The KL
    penalty to ``ref_policy`` is folded into the per-token reward as in
    :func:`tabular.reinforce` (the paper
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
    advantage : the baseline a response's return is compared with: ``"grpo"`` (the
        group's mean, default), ``"rloo"`` (the mean of the group's other responses,
        Ahmadian et al., 2024) or ``"remax"`` (the return of the greedy response to the
        prompt, Li et al., 2023; one extra greedy rollout per group).
    normalise : divide the advantages by the group's standard deviation of returns;
        default ``None``: True for ``"grpo"``, False for ``"rloo"`` and ``"remax"``.
    aggregation : how token terms are averaged: ``"sum"`` (default: each response's
        tokens summed, the group averaged, ``(1/G) sum_i A_i sum_t``), ``"sequence"``
        (each response's tokens averaged first, ``1/|o_i|``, the GRPO paper's
        objective) or ``"token"`` (all the group's tokens averaged,
        ``1 / sum_i |o_i|``).
    ref_policy : the reference of the KL penalty (any policy form), default ``None``.
    beta : the KL coefficient (>= 0; > 0 needs ``ref_policy``), default 0.0.
    reward_floor : learn from ``max(r, reward_floor)`` (required when the MDP can
        pay ``-inf``), default ``None``.
    max_steps : the step limit of a response, default ``None``: the env's time limit
        (``mdp.max_episode_steps``), else 1000.
    seed : seed of the random streams, default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` runs.
    history, eval_every, callback : the training history, as in
        :func:`tabular.reinforce` (``eval_every`` counts iterations; the sampled metrics
        are those of the iteration's group), default False, ``None``, ``None``.

    Returns
    -------
    A :class:`~tabular.pg.results.PolicyGradientResult`: ``logits`` ``[R, A]`` (``[runs, R,
    A]`` with ``runs=n``), ``row_of_state`` ``[S]``, ``V = None`` (no critic),
    ``episode_returns`` (without the KL term) and ``episode_lengths`` of the
    ``iterations * group_size`` responses; ``.policy`` the trained ``SoftmaxPolicy``.
    """
    group_size = check_positive_int("group_size", group_size)
    if group_size < 2:
        raise ValueError(f"group_size must be >= 2 (a group needs a mean), got {group_size}")
    su = policy_gradient_args(mdp, policy, ref_policy=ref_policy, beta=beta,
                              reward_floor=reward_floor, gamma=1.0,
                              episodes=check_positive_int("iterations", iterations) * group_size,
                              max_steps=max_steps, runs=runs, seed=seed)
    if advantage not in ADVANTAGES:
        raise ValueError(f"advantage must be one of {sorted(ADVANTAGES)}, got {advantage!r}")
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {sorted(AGGREGATIONS)}, got "
                         f"{aggregation!r}")
    normalise = advantage == "grpo" if normalise is None else bool(normalise)
    params = GRPOParams(int(iterations), group_size, step_size("alpha", alpha), normalise,
                        ADVANTAGES[advantage], AGGREGATIONS[aggregation])
    every = check_history(history, eval_every, callback, int(iterations), "grpo")
    out = su.outputs(value=False)

    def step(first, stop):
        over_runs(_grpo, su.mdp.arrays, params._replace(first=first, iterations=stop),
                  su.rollout, su.rng_states, out)

    trace = run_in_chunks(step, int(iterations), every,
                          su.recorder(ref_policy, out.logits, callback, "grpo",
                                      batch_sampler(su, out.logits, group_size, sample_group)))
    return su.result(out, value=False, history=trace)
