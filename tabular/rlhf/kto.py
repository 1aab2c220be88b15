"""Kahneman-Tversky optimisation (KTO) on a token MDP (Ethayarajh et al., 2024).

KTO learns from unpaired feedback: each response is labelled desirable or
undesirable on its own, never compared with another. With the implied reward
``r(x, y) = log pi(y|x) / pi_ref(y|x)`` and a reference point ``z0``, the value of a
labelled response is

    v(x, y) = lambda_D sigma(beta (r(x, y) - z0))   if y is desirable,
              lambda_U sigma(beta (z0 - r(x, y)))   if y is undesirable,

and the loss is the mean of ``lambda_y - v(x, y)`` over the labels. The reference
point is the policy's KL divergence from the reference, ``z0 = E_x KL(pi(.|x) ||
pi_ref(.|x))``, estimated from samples, clamped at 0 and held constant in the
gradient (the paper pairs each prompt with an unrelated output of its batch; here
``y'`` is drawn from ``pi`` itself, so the mean of ``log pi(y'|x)/pi_ref(y'|x)`` is an
unbiased estimate of the KL before the clamp).

The optimum on the tree (:func:`kto_optimum`). With ``z0`` held constant, the gradient
is ``sum_y g_y grad log pi(y|x)`` with ``g_y = beta d_y s(u_y)``, where ``d_y`` is
``lambda_D`` times the desirable labels of ``y`` minus ``lambda_U`` times its undesirable
ones, ``u_y = beta (r(x, y) - z0)`` and ``s(u) = sigma(u) sigma(-u)``. For a policy with
a row of logits per prefix (any distribution over responses), the gradient vanishes
exactly when ``g_y = pi(y|x) G(x)`` for every response (summing the token gradient
from the leaves up). When a prompt has a response with ``d_y > 0``, ``G(x) > 0`` and
the responses with ``d_y <= 0`` (and those never labelled) lose all their mass: the
learner keeps the responses with ``d_y > 0`` and spreads them by

    d_y s(u_y) = pi(y|x) K(x),   pi(y|x) = pi_ref(y|x) exp(z0 + u_y / beta),

with ``K(x) > 0`` fixed by ``sum_y pi(y|x) = 1`` and ``z0`` by its own definition,
``z0 = E_x KL``. For ``beta < 1`` the function ``log s(u) - u / beta`` falls strictly,
so each equation has one root, and the point is stable: a response above its share
has ``s(u_y) / pi(y|x)`` smaller, so its push shrinks. When every response of a
prompt leans undesirable (``G(x) < 0``) the same argument runs backwards: the
interior stationary point repels, and the policy collapses onto one response.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from tabular._numba.runs import over_runs, run_keeping_stream, runs_kernel
from tabular.checks import MAX_COUNT, check_positive, check_positive_int
from tabular.model.mdp import MAX_REWARD
from tabular.model.policy import as_softmax_policy
from tabular.pg.arguments import (
    MAX_POLICY_STEP,
    MAX_WEIGHT,
    check_no_overflow,
    policy_gradient_args,
)
from tabular.pg.rollout import episode_buffers, sample_episode
from tabular.pg.telemetry import Callback, batch_sampler, check_history, run_in_chunks
from tabular.results import with_run_axis
from tabular.rlhf.preference import (
    Paths,
    _accumulate_path_grad,
    _paths,
    possible_paths,
    rows_on_paths,
    sequence_log_prob,
)
from tabular.rlhf.results import KTOOptimum, KTOResult
from tabular.rlhf.reward_model import counted_record, log_sigmoid, sigmoid
from tabular.rules.policy_gradient import ascend
from tabular.solve.tree import as_token_env
from tabular.types import PolicyLike, TokenEnv


class Feedback(NamedTuple):
    """``counts[i]`` labels of response ``i``, desirable when ``desirable[i]``; the
    responses as in :class:`~tabular.rlhf.preference.Paths`."""

    rows: np.ndarray
    actions: np.ndarray
    lengths: np.ndarray
    ref_log_probs: np.ndarray
    desirable: np.ndarray
    counts: np.ndarray


class KTOParams(NamedTuple):
    """:func:`kto` as its kernel reads it: the labels (``feedback``, a :class:`Feedback`)
    and the hyper-parameters; ``first``: the step to start from, 0 unless a run continues
    in chunks."""

    feedback: Feedback
    beta: float
    steps: int
    alpha: float
    lambda_d: float
    lambda_u: float
    kl_samples: int
    first: int = 0


class KTOOutputs(NamedTuple):
    """What the KTO kernel fills, each with a leading run axis: the ``logits`` (trained in
    place), the ``loss`` and the reference point ``z0`` before each step."""

    logits: np.ndarray
    loss: np.ndarray
    reference_point: np.ndarray


@njit(cache=True)
def kto_reference_point(log_ratio_sum, n):
    """``z0 = max(0, (1/n) sum_j log pi(y'_j|x'_j) / pi_ref(y'_j|x'_j))``: the KL estimate
    KTO compares every implied reward with, clamped at 0 (Ethayarajh et al., 2024)."""
    return max(0.0, log_ratio_sum / n)


@njit(cache=True)
def kto_value(log_ratio, z0, desirable, p):
    """``(v, dv/dr)`` of one label: ``v = lambda_D sigma(beta (r - z0))`` for a desirable
    response, ``lambda_U sigma(beta (z0 - r))`` for an undesirable one (the Kahneman-
    Tversky value of the gain or loss ``r - z0``; Ethayarajh et al., 2024)."""
    u = p.beta * (log_ratio - z0)
    if desirable:
        v = p.lambda_d * sigmoid(u)
        return v, p.beta * v * sigmoid(-u)
    v = p.lambda_u * sigmoid(-u)
    return v, -p.beta * v * sigmoid(u)


@njit(cache=True, inline="always")
def _log_ratio_to_reference(rollout, path, seen, T):
    """``log pi(y'|x') - log pi_ref(y'|x')`` of a response ``y'`` of ``T`` steps that
    :func:`~tabular.pg.rollout.sample_episode` drew from ``pi`` into ``path`` and ``seen``
    (``seen[1]``: ``log pi`` of each token)."""
    total = 0.0
    for t in range(T):
        total += seen[1, t] - rollout.ref_log_probs[rollout.ref_row[path[0, t]], path[1, t]]
    return total


@njit(cache=True, inline="always")
def _kto_run(model, p, rollout, rng, out, run):
    """Run ``run``, into row ``run`` of the :class:`KTOOutputs` ``out``: ``steps``
    full-batch ascent steps on the mean of ``v(x, y)``, the reference point re-estimated
    from ``kl_samples`` fresh responses before each step."""
    theta, loss, z0s = out.logits[run], out.loss[run], out.reference_point[run]
    data = p.feedback
    A = theta.shape[1]
    n = data.counts.sum()
    paths, seen, dones, dist = episode_buffers(1, rollout.max_steps, A)
    grad = np.zeros_like(theta)
    buf, probs = np.empty(A), np.empty(A)
    labels = Paths(data.rows, data.actions, data.lengths, data.ref_log_probs)
    rows = rows_on_paths(theta.shape[0], labels, labels)
    for step in range(p.first, p.steps):
        total = 0.0
        for _ in range(p.kl_samples):
            T, _ = sample_episode(model, rollout, theta, rng, paths[0], seen[0], dones[0], dist)
            total += _log_ratio_to_reference(rollout, paths[0], seen[0], T)
        z0 = kto_reference_point(total, p.kl_samples)  # a constant of the gradient
        z0s[step] = z0
        for r in rows:
            grad[r] = 0.0
        value = 0.0
        for i in range(data.counts.shape[0]):
            log_pi = sequence_log_prob(theta, labels.rows[i], labels.actions[i],
                                       labels.lengths[i], buf)
            v, slope = kto_value(log_pi - labels.ref_log_probs[i], z0, data.desirable[i], p)
            weight = (p.lambda_d if data.desirable[i] else p.lambda_u) - v
            value += data.counts[i] * weight / n
            _accumulate_path_grad(theta, labels, i, data.counts[i] * slope / n, probs, grad)
        loss[step] = value
        for r in rows:
            ascend(theta[r], grad[r], p.alpha)


@runs_kernel
def _kto(model, params, rollout, rng_states, out):
    """Every run of :func:`_kto_run`, each stream kept for the next chunk."""
    for run in range(rng_states.shape[0]):
        run_keeping_stream(_kto_run, model, params, rollout, rng_states, out, run)


def feedback_records(feedback) -> list[tuple[float, str, str, bool]]:
    """``(count, prompt, response, desirable)`` of each label, given as ``(prompt,
    response, desirable)`` (count 1), ``(count, prompt, response, desirable)`` or TRL's
    row ``{"prompt", "completion", "label"}`` (:func:`~tabular.rlhf.reward_model.counted_record`): a
    count is a finite number > 0, the texts are strings, ``desirable`` a bool."""
    records = []
    for i, label in enumerate(feedback):
        count, x, y, good = counted_record(label, i, "feedback", "prompt, response, desirable")
        if not (isinstance(x, str) and isinstance(y, str)):
            raise ValueError(f"feedback {i} ({x!r}, {y!r}) must hold a prompt and a response "
                             "as strings")
        if not isinstance(good, bool | np.bool_):
            raise ValueError(f"feedback {i}: desirable must be True or False, got {good!r}")
        records.append((count, x, y, bool(good)))
    if not records:
        raise ValueError("no feedback given")
    return records


def kto(mdp: TokenEnv, policy: PolicyLike, feedback: Iterable[tuple[Any, ...]], *, beta: float,
        ref_policy: PolicyLike | None = None, lambda_d: float = 1.0, lambda_u: float = 1.0,
        steps: int = 2000, alpha: float = 1.0, kl_samples: int = 8, seed: int | None = 0,
        runs: int | None = None, history: bool = False, eval_every: int | None = None,
        callback: Callback | None = None) -> KTOResult:
    """Kahneman-Tversky optimisation on a token MDP ``mdp`` (Ethayarajh et al., 2024,
    section 4).

    Minimises the mean over the labels of ``lambda_y - v(x, y)`` (see the module) by
    full-batch gradient descent from ``policy``, each step's reference point ``z0`` the
    clamped mean log-ratio of ``kl_samples`` responses sampled from the current policy.
    For a policy with a row per prefix, the result tends to :func:`kto_optimum`.

    Parameters
    ----------
    mdp : the token MDP (an ``envs.TokenMDP``) whose responses are labelled.
    policy : the starting policy, a :class:`~tabular.SoftmaxPolicy` (its rows are
        trained, shared or not) or an ``[S, A]`` matrix of probabilities.
    feedback : ``(prompt, response, desirable)`` or ``(count, prompt, response,
        desirable)`` tuples (``desirable`` a bool; default count 1), or TRL's unpaired
        rows ``{"prompt": x, "completion": y, "label": desirable}``.
    beta : the KL coefficient (> 0), required.
    ref_policy : the reference (any policy form); default ``None``: ``policy`` itself.
    lambda_d, lambda_u : the weights of desirable and undesirable labels (> 0),
        default 1 each (TRL's ``desirable_weight`` and ``undesirable_weight``).
    steps : gradient steps, default 2000.
    alpha : step size (> 0), default 1.0.
    kl_samples : responses sampled per step for the reference point (>= 1), default 8.
    seed : seed of the sampling streams (``None``: fresh entropy), default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` runs with their own
        streams and a leading run axis.
    history, eval_every, callback : the training history of
        :mod:`tabular.pg.telemetry` (``eval_every`` counts steps), with TRL's KTO ``kl``
        (the step's reference point ``z0``, from the responses the step samples) beside
        the exact metrics; default False, ``None``, ``None``.

    Returns a :class:`~tabular.rlhf.results.KTOResult`. Every labelled response must have positive
    probability under ``policy`` and ``ref_policy``. Weigh the labels so that each
    prompt's desirable weight exceeds its undesirable weight (the paper advises
    ``lambda_D n_D / (lambda_U n_U)`` in ``[1, 4/3]``): where the undesirable weight
    dominates, every response is pushed down and the most probable ones lose least, so
    the policy can collapse onto one of them instead of reaching :func:`kto_optimum`.
    """
    beta = check_positive("beta", beta)
    lambda_d = check_positive("lambda_d", lambda_d, MAX_WEIGHT)
    lambda_u = check_positive("lambda_u", lambda_u, MAX_WEIGHT)
    steps = check_positive_int("steps", steps, high=MAX_COUNT)
    alpha = check_positive("alpha", alpha, MAX_POLICY_STEP)
    kl_samples = check_positive_int("kl_samples", kl_samples, high=MAX_COUNT // steps)
    env = as_token_env(mdp, "mdp")
    mdp = env.to_mdp()  # type: ignore[assignment]  # the TokenEnv's model from here on
    start = as_softmax_policy(mdp, policy, greedy=False)
    ref_policy = start if ref_policy is None else ref_policy
    # the rewards are never read: the floor only keeps a -inf reward from being refused
    su = policy_gradient_args(mdp, start, ref_policy=ref_policy, beta=beta,
                              reward_floor=-MAX_REWARD, gamma=1.0, episodes=steps, max_steps=None,
                              runs=runs, seed=seed,
                              made_by=f"steps={steps:,}")
    records = feedback_records(feedback)
    ref_lp = as_softmax_policy(mdp, ref_policy, "ref_policy").log_probs()
    paths = possible_paths(env, [(x, y) for _, x, y, _ in records],
                           {"policy": start.log_probs(), "ref_policy": ref_lp}, "KTO")
    data = Feedback(*_paths([paths[(x, y)] for _, x, y, _ in records], start.row_of_state,
                            ref_lp),
                    np.array([good for *_, good in records]),
                    np.array([c for c, *_ in records]))
    n = su.rng_states.shape[0]
    out = KTOOutputs(su.outputs(value=False).logits, np.zeros((n, su.episodes)),
                     np.zeros((n, su.episodes)))
    params = KTOParams(data, beta, su.episodes, alpha, lambda_d, lambda_u, kl_samples)
    every = check_history(history, eval_every, callback, su.episodes, "kto", count="steps",
                          runs=su.runs)

    def step(first, stop):
        over_runs(_kto, su.mdp.arrays, params._replace(first=first, steps=stop), su.rollout,
                  su.rng_states, out)

    batch = batch_sampler(su, out.logits, kl_samples)

    def sampled(run, it):  # z0 = max(0, the batch's mean log-ratio): objective/kl clamped
        return {"kl": max(0.0, batch(run, it)["objective/kl"])}

    trace = run_in_chunks(step, su.episodes, every,
                          su.recorder(ref_policy, out.logits, callback, "kto", sampled), "kto")
    check_no_overflow(out.logits, "logits")
    return KTOResult(with_run_axis(out.logits, runs), su.policy.row_of_state.copy(),
                     with_run_axis(out.loss, runs), with_run_axis(out.reference_point, runs),
                     trace)


# ------------------------------------------------------------------ the optimum
@njit(cache=True)
def _psi(u, beta):
    """``log s(u) - u / beta`` with ``s(u) = sigma(u) sigma(-u)``, and its derivative."""
    return (log_sigmoid(u) + log_sigmoid(-u) - u / beta,
            1.0 - 2.0 * sigmoid(u) - 1.0 / beta)


@njit(cache=True)
def _psi_inverse(target, beta):
    """The root ``u`` of ``log s(u) - u / beta = target`` (``beta < 1``: a strictly falling,
    concave function), by Newton's method from a point right of the root, where it
    converges monotonically (``log s(u) <= -|u|`` bounds the root from above)."""
    u = max(target / (1.0 - 1.0 / beta), -target / (1.0 + 1.0 / beta))
    for _ in range(200):
        f, slope = _psi(u, beta)
        step = (f - target) / slope
        u -= step
        if abs(step) <= 1e-14 * (1.0 + abs(u)):
            break
    return u


@njit(cache=True)
def _log_mass(m, z0, log_ref, log_gap, beta, u):
    """``log sum_y pi(y|x)`` of one prompt's responses for the multiplier ``m = z0 +
    log K(x)``; ``u`` receives each ``u_y``."""
    top = -np.inf
    for j in range(u.shape[0]):
        u[j] = _psi_inverse(log_ref[j] - log_gap[j] + m, beta)
        top = max(top, z0 + log_ref[j] + u[j] / beta)
    total = 0.0
    for j in range(u.shape[0]):
        total += np.exp(z0 + log_ref[j] + u[j] / beta - top)
    return top + np.log(total)


@njit(cache=True)
def _normalise(z0, log_ref, log_gap, beta, u):
    """Fill ``u`` so that one prompt's responses sum to 1 (bisection on ``m``: the mass
    falls as ``m`` grows)."""
    lo, hi = -1.0, 1.0
    while _log_mass(lo, z0, log_ref, log_gap, beta, u) < 0.0:
        lo = 2.0 * lo
    while _log_mass(hi, z0, log_ref, log_gap, beta, u) > 0.0:
        hi = 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _log_mass(mid, z0, log_ref, log_gap, beta, u) > 0.0:
            lo = mid
        else:
            hi = mid
    _log_mass(hi, z0, log_ref, log_gap, beta, u)


class KeptResponses(NamedTuple):
    """The responses :func:`kto_optimum` keeps, prompt by prompt: prompt ``x``'s are
    ``bounds[x]:bounds[x + 1]``, each with ``log pi_ref(y|x)`` (``log_ref``) and
    ``log d_y`` (``log_gap``, ``d_y`` its desirable minus undesirable weight); the
    prompts' probabilities ``prompt_prob``."""

    log_ref: np.ndarray
    log_gap: np.ndarray
    bounds: np.ndarray
    prompt_prob: np.ndarray


@njit(cache=True)
def _kl_excess(z0, kept, beta, u):
    """``E_x KL(pi || pi_ref) - z0`` of the normalised solution for ``z0`` over the
    :class:`KeptResponses` ``kept`` (a prompt without labels keeps the reference: KL 0),
    ``log pi/pi_ref = z0 + u / beta``; ``u`` receives each ``u_y``."""
    log_ref, log_gap, bounds, prompt_prob = kept
    total = -z0
    for x in range(prompt_prob.shape[0]):
        lo, hi = bounds[x], bounds[x + 1]
        _normalise(z0, log_ref[lo:hi], log_gap[lo:hi], beta, u[lo:hi])
        for j in range(lo, hi):
            log_ratio = z0 + u[j] / beta
            total += prompt_prob[x] * np.exp(log_ref[j] + log_ratio) * log_ratio
    return total


@njit(cache=True)
def _kto_fixed_point(kept, beta, u):
    """``z0`` of the KTO optimum (bisection on ``E_x KL = z0`` in ``[0, max -log pi_ref]``,
    which bounds the KL of any distribution over these responses), ``u`` filled at it."""
    lo, hi = 0.0, max(0.0, -kept.log_ref.min())
    if _kl_excess(lo, kept, beta, u) <= 0.0:
        return lo
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _kl_excess(mid, kept, beta, u) > 0.0:
            lo = mid
        else:
            hi = mid
    _kl_excess(hi, kept, beta, u)
    return hi


def kto_optimum(mdp: TokenEnv, ref_policy: PolicyLike, feedback: Iterable[tuple[Any, ...]], *,
                beta: float, lambda_d: float = 1.0, lambda_u: float = 1.0) -> KTOOptimum:
    """The response distribution where KTO's gradient vanishes, stably (see the module):
    per prompt, the responses with more desirable than undesirable weight, ``d_y > 0``,
    keep ``pi(y|x) = pi_ref(y|x) exp(z0 + u_y / beta)``, with ``d_y s(u_y) = pi(y|x) K(x)``,
    and ``z0`` is the KL divergence of the result from ``ref_policy`` (a prompt without
    labels keeps the reference, where the learner starts).

    Parameters
    ----------
    mdp : the token MDP (an ``envs.TokenMDP``) whose responses are labelled.
    ref_policy : the reference (any policy form).
    feedback : the labels, as for :func:`kto`.
    beta : the KL coefficient, in ``(0, 1)`` (where each response's equation has one
        root).
    lambda_d, lambda_u : the weights of desirable and undesirable labels (> 0).

    Returns a :class:`KTOOptimum`, exact to rounding (nested bisections and Newton). A
    labelled prompt without a response of ``d_y > 0`` is an error (no stable point).
    """
    beta = check_positive("beta", beta)
    if not beta < 1.0:
        raise ValueError(f"beta must be in (0, 1) for kto_optimum (the fixed point's "
                         f"equations have one root each there), got {beta}")
    lambda_d = check_positive("lambda_d", lambda_d, MAX_WEIGHT)
    lambda_u = check_positive("lambda_u", lambda_u, MAX_WEIGHT)
    env = as_token_env(mdp, "mdp")
    model = env.to_mdp()
    ref_lp = as_softmax_policy(model, ref_policy, "ref_policy").log_probs()
    gaps: dict = {}  # (prompt, response) -> lambda_D n_D - lambda_U n_U
    for count, x, y, good in feedback_records(feedback):
        gaps[(x, y)] = gaps.get((x, y), 0.0) + (lambda_d if good else -lambda_u) * count
    paths = possible_paths(env, list(gaps), {"ref_policy": ref_lp}, "KTO")
    prompts = [p for p in env.prompts if any(x == p for x, _ in gaps)]
    kept = [[(x, y) for x, y in gaps if x == p and gaps[(x, y)] > 0.0] for p in prompts]
    for p, ks in zip(prompts, kept, strict=True):
        if not ks:
            raise ValueError(f"no response to prompt {p!r} has more weight desirable than "
                             "undesirable: KTO's stationary point there is unstable (the "
                             "policy collapses onto one response), kto_optimum has no answer")
    keys = [k for ks in kept for k in ks]
    log_ref = np.array([ref_lp[paths[k]].sum() for k in keys])
    log_gap = np.log(np.abs([gaps[k] for k in keys]))
    bounds = np.cumsum([0] + [len(ks) for ks in kept])
    start = model.start[[env.state_of(p) for p in prompts]]
    u = np.zeros(len(keys))
    z0 = _kto_fixed_point(KeptResponses(log_ref, log_gap, bounds, start), beta, u)
    endings = np.zeros((model.n_states, model.n_actions))
    for j, (x, y) in enumerate(keys):
        s, a = paths[(x, y)]
        endings[s[-1], a[-1]] = (model.start[env.state_of(x)]
                                 * np.exp(z0 + log_ref[j] + u[j] / beta))
    return KTOOptimum(endings, float(z0))
