"""Direct preference optimisation on a token MDP (Rafailov et al., 2023), its IPO loss
(Azar et al., 2024), and iterated DPO on comparisons sampled from the current policy.

The kernels read a response by the rows of logits its tokens read (:class:`Paths`):
``log pi(y|x) = sum_t log softmax(theta[row_t])[a_t]``, so one kernel serves any
``row_of_state`` (a row per prefix, or shared n-gram rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.rng import uniform
from tabular._numba.runs import over_runs, run_keeping_stream, runs_kernel
from tabular.checks import (
    MAX_COUNT,
    check_nonnegative,
    check_positive,
    check_positive_int,
    first_bad,
)
from tabular.model.policy import SoftmaxPolicy, as_softmax_policy
from tabular.pg.arguments import MAX_POLICY_STEP, check_no_overflow, policy_gradient_args
from tabular.pg.rollout import Rollout, continue_episode, episode_buffers, sample_episode
from tabular.pg.telemetry import (
    Callback,
    Recorder,
    batch_metrics,
    check_history,
    run_in_chunks,
    sample_batch,
)
from tabular.results import with_run_axis
from tabular.rlhf.losses import (
    AOT,
    AOT_UNPAIRED,
    LossSpec,
    comparison_loss,
    f_score,
    loss_spec,
    rank_coupled_loss,
)
from tabular.rlhf.results import DPOResult, IteratedDPOResult
from tabular.rlhf.reward_model import bradley_terry_wins, preference_records
from tabular.rules.policy_gradient import accumulate_log_prob_grad, ascend, log_softmax
from tabular.solve.tree import as_token_env, ending_probabilities
from tabular.types import MDPLike, PolicyLike, TokenEnv


class Paths(NamedTuple):
    """Responses as the kernel reads them, one row each: the ``rows`` of logits their
    tokens read (the policy's ``row_of_state`` of each prefix) and the ``actions``
    (tokens) (int64 ``[P, L]``, padded), their ``lengths`` ``[P]`` and their
    log-probability under the reference, ``ref_log_probs`` ``[P]``."""

    rows: np.ndarray
    actions: np.ndarray
    lengths: np.ndarray
    ref_log_probs: np.ndarray


class Preferences(NamedTuple):
    """``counts[i]`` comparisons in which response ``winners[i]`` beat ``losers[i]``."""

    winners: Paths
    losers: Paths
    counts: np.ndarray


class DPOParams(NamedTuple):
    """:func:`dpo`'s hyper-parameters as its kernel reads them: the ``loss`` (a
    :class:`~tabular.rlhf.losses.LossSpec`), the gradient ``steps`` and the step size."""

    loss: LossSpec
    steps: int
    alpha: float
    xpo_alpha: float = 0.0


def response_path(mdp: TokenEnv, prompt: str, response: str) -> tuple[np.ndarray, np.ndarray]:
    """The states and actions (tokens) by which a token MDP ``mdp`` (an ``envs.TokenMDP``)
    generates ``response`` to ``prompt`` (one of ``mdp.prompts``)."""
    env = as_token_env(mdp, "mdp")
    if prompt not in env.prompts:
        raise ValueError(f"prompt {prompt!r} is not one of the env's prompts {env.prompts!r}")
    p = env.prompts.index(prompt)
    ids = env.encode(response, f"response {response!r}")
    if len(ids) > env.max_len:
        raise ValueError(f"response {response!r} to prompt {prompt!r} has {len(ids)} tokens, "
                         f"more than the token MDP's max_len={env.max_len}")
    if len(ids) < env.max_len:
        ids = ids + (env.eos_id,)
    try:
        states = np.array([env.state_of(p, ids[:t]) for t in range(len(ids))], dtype=np.int64)
    except KeyError as error:  # the grammar forbids it: a wrong argument, not a lookup
        raise ValueError(error.args[0]) from None
    return states, np.array(ids, dtype=np.int64)


def possible_paths(mdp, texts, log_probs: dict, method: str) -> dict:
    """``{(prompt, response): (states, actions)}`` (:func:`response_path`) of the distinct
    ``texts``, each checked to have positive probability under every policy of
    ``log_probs`` (``{name: [S, A] log-probabilities}``); an error names the response,
    the policy and ``method``."""
    paths = {}
    for x, y in texts:
        if (x, y) not in paths:
            s, a = paths[(x, y)] = response_path(mdp, x, y)
            for name, lp in log_probs.items():
                if not np.isfinite(lp[s, a]).all():
                    raise ValueError(f"response {y!r} to prompt {x!r} has probability 0 "
                                     f"under {name} (a masked token); {method} needs it "
                                     "possible")
    return paths


@njit(cache=True, inline="always")
def desensitised_log_prob(logits, rows, actions, length, public, ld_alpha, buf):
    """``log pi(y|x)`` along one response from the rows of logits its first ``length``
    tokens read, the tokens from ``public`` on weighted by ``ld_alpha``: LD-DPO's
    ``log pi = sum_{t < l_p} log pi(a_t|s_t) + alpha sum_{t >= l_p} log pi(a_t|s_t)``, with
    ``l_p`` the shorter length of the pair (Liu et al., 2024, eq. 9); ``ld_alpha = 1``: the
    chain rule's plain sum. ``buf`` ``[A]`` is scratch."""
    total = 0.0
    for t in range(length):
        log_softmax(logits[rows[t]], buf)
        total += buf[actions[t]] * (1.0 if t < public else ld_alpha)
    return total


@njit(cache=True, inline="always")
def sequence_log_prob(logits, rows, actions, length, buf):
    """``log pi(y|x) = sum_t log pi(a_t | s_t)`` along one response (the chain rule), from
    the rows of logits its first ``length`` tokens read; ``buf`` ``[A]`` is scratch."""
    return desensitised_log_prob(logits, rows, actions, length, length, 1.0, buf)


@njit(cache=True)
def dpo_margin(log_pi_w, log_ref_w, log_pi_l, log_ref_l, beta):
    """``beta * [(log pi(y_w) - log ref(y_w)) - (log pi(y_l) - log ref(y_l))]``
    (Rafailov et al., 2023, eq. 7)."""
    return beta * ((log_pi_w - log_ref_w) - (log_pi_l - log_ref_l))


@njit(cache=True)
def rows_on_paths(n_rows, paths, more):
    """The logit rows the responses of ``paths`` and ``more`` (two :class:`Paths`) pass
    through, in increasing order: the only rows a gradient on their log-probabilities
    moves, so a step touches these and not the whole table."""
    on = np.zeros(n_rows, dtype=np.bool_)
    for data in (paths, more):
        for i in range(data.lengths.shape[0]):
            for t in range(data.lengths[i]):
                on[data.rows[i, t]] = True
    return np.flatnonzero(on)


@njit(cache=True, inline="always")
def _accumulate_desensitised_grad(logits, paths, i, weight, public, ld_alpha, probs, grad):
    """``grad += weight * d log pi(y_i|x) / d logits`` with the tokens from ``public`` on
    weighted by ``ld_alpha`` (:func:`desensitised_log_prob`), token by token (S&B eq.
    13.9 per token: the chain rule sums them); ``probs`` ``[A]`` is scratch."""
    for t in range(paths.lengths[i]):
        r = paths.rows[i, t]
        accumulate_log_prob_grad(logits[r], paths.actions[i, t],
                                 weight * (1.0 if t < public else ld_alpha), probs, grad[r])


@njit(cache=True, inline="always")
def _accumulate_path_grad(logits, paths, i, weight, probs, grad):
    """``grad += weight * d log pi(y_i|x) / d logits`` (every token at weight 1)."""
    _accumulate_desensitised_grad(logits, paths, i, weight, paths.lengths[i], 1.0, probs,
                                  grad)


@njit(cache=True)
def chained_comparison(c, log_pi_w, log_ref_w, log_pi_l, log_ref_l, n_w, n_l, spec):
    """``count * loss`` of one comparison under the loss ``spec`` (a
    :class:`~tabular.rlhf.losses.LossSpec`: its weighted sum of
    :func:`~tabular.rlhf.losses.comparison_loss`), and its ascent directions on the two
    responses' log-probabilities, ``-d(count * loss) / d log pi(y_w|x)`` and ``/ d log
    pi(y_l|x)``: the chain through the per-token average (``n_w``, ``n_l`` tokens) and
    the f-divergence score. The one definition that :func:`preference_loss_grad` (on
    logits) and :func:`~tabular.rlhf.loss_optimum` (on response distributions) share."""
    scale_w = 1.0 / n_w if spec.average else 1.0
    scale_l = 1.0 / n_l if spec.average else 1.0
    u_w = (log_pi_w - log_ref_w) * scale_w
    u_l = (log_pi_l - log_ref_l) * scale_l
    s_w, ds_w = f_score(u_w, spec.f_divergence, spec.f_alpha)
    s_l, ds_l = f_score(u_l, spec.f_divergence, spec.f_alpha)
    term, g_w, g_l = 0.0, 0.0, 0.0
    for k in range(spec.codes.shape[0]):
        t, gsw, gsl, guw, gul, glw, gll = comparison_loss(
            spec.codes[k], c, (s_w, s_l), (u_w, u_l), (log_pi_w, log_pi_l),
            (float(n_w), float(n_l)), spec)
        term += spec.weights[k] * t
        g_w += spec.weights[k] * ((gsw * ds_w + guw) * scale_w + glw)
        g_l += spec.weights[k] * ((gsl * ds_l + gul) * scale_l + gll)
    return term, g_w, g_l


@njit(cache=True)
def preference_loss_grad(logits, data, spec, rows, grad, buf, probs):
    """The mean over ``data`` (a :class:`Preferences`) of the loss ``spec`` (a
    :class:`~tabular.rlhf.losses.LossSpec`), returned, and its ascent direction
    ``-d loss / d logits`` written into ``grad`` on ``rows`` (the rows the responses
    read, zeroed first): each comparison's :func:`chained_comparison`, chained through
    the length desensitisation down to the tokens' logits. ``buf``, ``probs`` ``[A]``
    are scratch."""
    n = data.counts.sum()
    win, lose = data.winners, data.losers
    for r in rows:
        grad[r] = 0.0
    loss = 0.0
    for i in range(data.counts.shape[0]):
        nw, nl = win.lengths[i], lose.lengths[i]
        public = min(nw, nl)
        lw = desensitised_log_prob(logits, win.rows[i], win.actions[i], nw, public,
                                   spec.ld_alpha, buf)
        ll = desensitised_log_prob(logits, lose.rows[i], lose.actions[i], nl, public,
                                   spec.ld_alpha, buf)
        term, g_w, g_l = chained_comparison(data.counts[i], lw, win.ref_log_probs[i], ll,
                                            lose.ref_log_probs[i], nw, nl, spec)
        loss += term / n
        _accumulate_desensitised_grad(logits, win, i, g_w / n, public, spec.ld_alpha, probs,
                                      grad)
        _accumulate_desensitised_grad(logits, lose, i, g_l / n, public, spec.ld_alpha,
                                      probs, grad)
    if spec.codes.max() >= AOT:
        loss += batch_loss_grad(logits, data, spec, grad, buf, probs)
    return loss


@njit(cache=True)
def batch_loss_grad(logits, data, spec, grad, buf, probs):
    """The batch losses of ``spec`` (``aot``, ``aot_unpaired``) over ``data`` as one batch
    (:func:`~tabular.rlhf.losses.rank_coupled_loss`, each comparison weighted by its
    count), returned, their ascent direction added into ``grad``: the log-ratios (or the
    gaps of ``aot``) as :func:`chained_comparison` reads them, the rank pairing's
    gradient chained back to the tokens."""
    m = data.counts.shape[0]
    win, lose = data.winners, data.losers
    mass = data.counts / data.counts.sum()
    lw, ll, scale_w, scale_l = np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    for i in range(m):
        nw, nl = win.lengths[i], lose.lengths[i]
        public = min(nw, nl)
        lw[i] = desensitised_log_prob(logits, win.rows[i], win.actions[i], nw, public,
                                      spec.ld_alpha, buf)
        ll[i] = desensitised_log_prob(logits, lose.rows[i], lose.actions[i], nl, public,
                                      spec.ld_alpha, buf)
        scale_w[i] = 1.0 / nw if spec.average else 1.0
        scale_l[i] = 1.0 / nl if spec.average else 1.0
    g_w, g_l, ga, gb = np.zeros(m), np.zeros(m), np.empty(m), np.empty(m)
    total = 0.0
    for k in range(spec.codes.shape[0]):
        code, weight = spec.codes[k], spec.weights[k]
        if code == AOT_UNPAIRED:
            total += weight * rank_coupled_loss(
                (lw - win.ref_log_probs) * scale_w, (ll - lose.ref_log_probs) * scale_l,
                mass, spec.beta, spec.label_smoothing, ga, gb)
            g_w += weight * ga * scale_w
            g_l += weight * gb * scale_l
        elif code == AOT:
            total += weight * rank_coupled_loss(
                lw * scale_w - ll * scale_l,
                win.ref_log_probs * scale_w - lose.ref_log_probs * scale_l,
                mass, spec.beta, spec.label_smoothing, ga, gb)
            g_w += weight * ga * scale_w
            g_l -= weight * ga * scale_l
    for i in range(m):
        public = min(win.lengths[i], lose.lengths[i])
        _accumulate_desensitised_grad(logits, win, i, g_w[i], public, spec.ld_alpha, probs,
                                      grad)
        _accumulate_desensitised_grad(logits, lose, i, g_l[i], public, spec.ld_alpha,
                                      probs, grad)
    return total


@njit(cache=True)
def exploration_bonus(logits, data, explore, xpo_alpha, grad, buf, probs):
    """XPO's exploration term ``xpo_alpha * mean_i log pi(y~_i|x)`` over the responses
    ``y~_i`` the reference drew (``explore[i]``: the side, 0 winner or 1 loser, of pair
    ``i``'s reference response; -1: none; only counted pairs), returned, its ascent
    direction added into ``grad`` (Xie et al., 2024, algorithm 1: minimising it lowers
    the reference's own responses, the optimism that makes the policy explore)."""
    m = 0
    for i in range(explore.shape[0]):
        if explore[i] >= 0 and data.counts[i] > 0.0:
            m += 1
    if m == 0:
        return 0.0
    total = 0.0
    for i in range(explore.shape[0]):
        if explore[i] >= 0 and data.counts[i] > 0.0:
            side = data.winners if explore[i] == 0 else data.losers
            total += xpo_alpha * sequence_log_prob(logits, side.rows[i], side.actions[i],
                                                   side.lengths[i], buf) / m
            _accumulate_path_grad(logits, side, i, -xpo_alpha / m, probs, grad)
    return total


@njit(cache=True)
def _dpo_descent(logits, data, p, history, explore):
    """Full-batch gradient descent on the mean over ``data`` (a :class:`Preferences`) of
    the loss ``p.loss`` (:func:`preference_loss_grad`), plus XPO's
    :func:`exploration_bonus` when ``p.xpo_alpha > 0``; ``history[step]`` receives the
    loss before each step."""
    A = logits.shape[1]
    grad = np.zeros_like(logits)
    buf, probs = np.empty(A), np.empty(A)
    rows = rows_on_paths(logits.shape[0], data.winners, data.losers)
    for step in range(p.steps):
        loss = preference_loss_grad(logits, data, p.loss, rows, grad, buf, probs)
        if p.xpo_alpha > 0.0:
            loss += exploration_bonus(logits, data, explore, p.xpo_alpha, grad, buf, probs)
        history[step] = loss
        if not loss < np.inf:  # the steps overshoot: stop before the logits overflow
            history[step:] = loss
            return
        for r in rows:
            ascend(logits[r], grad[r], p.alpha)
        if _overflowed(logits, rows):  # a bounded loss can stay finite as logits blow up
            history[step + 1:] = np.nan
            return


@njit(cache=True)
def _overflowed(logits, rows):
    """Whether a step left a logit of ``rows`` NaN or ``+inf`` (``-inf`` is a mask)."""
    for r in rows:
        for b in range(logits.shape[1]):
            if not logits[r, b] < np.inf:
                return True
    return False


def _check_loss(loss: object, beta: float) -> LossSpec:
    """:func:`iterated_dpo`'s ``loss``, ``"sigmoid"`` (DPO) or ``"ipo"``, with ``beta``."""
    if loss not in ("sigmoid", "ipo"):
        raise ValueError(f"loss must be 'sigmoid' or 'ipo', got {loss!r}")
    return loss_spec(loss, beta)


def preference_metrics(data: Preferences, logits: np.ndarray,
                       spec: LossSpec) -> dict[str, float]:
    """TRL's DPO metrics of the policy ``logits`` on the comparisons ``data``, each a mean
    weighted by the comparisons' counts: ``rewards/chosen`` and ``rewards/rejected``
    (the implicit rewards ``beta log pi(y|x) / ref(y|x)`` of the preferred and the other
    response), ``rewards/margins`` (their difference), ``rewards/accuracies`` (the share
    of comparisons whose preferred response has the larger implicit reward),
    ``logps/chosen`` and ``logps/rejected`` (``log pi(y|x)``) and ``loss`` (the loss
    ``spec`` as :func:`dpo` minimises it). The log-probabilities are the tokens' plain
    sums, also under ``ld_alpha`` or ``average_log_prob`` (which only the loss sees)."""
    row_lp = SoftmaxPolicy(logits, np.zeros(1, dtype=np.int64)).row_log_probs()

    def log_pi(paths):
        on = np.arange(paths.rows.shape[1]) < paths.lengths[:, None]
        return np.where(on, row_lp[paths.rows, paths.actions], 0.0).sum(axis=1)

    w = data.counts / data.counts.sum()
    lw, ll = log_pi(data.winners), log_pi(data.losers)
    chosen = spec.beta * (lw - data.winners.ref_log_probs)
    rejected = spec.beta * (ll - data.losers.ref_log_probs)
    A = logits.shape[1]
    rows = rows_on_paths(logits.shape[0], data.winners, data.losers)
    loss = preference_loss_grad(logits, data, spec, rows, np.zeros_like(logits), np.empty(A),
                                np.empty(A))
    return {"rewards/chosen": float(w @ chosen), "rewards/rejected": float(w @ rejected),
            "rewards/margins": float(w @ (chosen - rejected)),
            "rewards/accuracies": float(w @ (chosen > rejected)),
            "logps/chosen": float(w @ lw), "logps/rejected": float(w @ ll),
            "loss": float(loss)}


def preference_data(env: TokenEnv, prefs: list, row_of_state: np.ndarray,
                    log_probs: dict, ld_alpha: float | None = None) -> Preferences:
    """The :class:`Preferences` of checked ``(count, prompt, y_w, y_l)`` records for a
    policy reading ``row_of_state``; ``log_probs``: ``{name: [S, A]}`` of the policies that
    must give every response positive probability, the reference's under
    ``"ref_policy"``. With ``ld_alpha``, each response's reference log-probability
    weighs the tokens beyond the shorter response of its pair by it (LD-DPO)."""
    ref_lp = log_probs["ref_policy"]
    paths = possible_paths(env, [(x, y) for _, x, yw, yl in prefs for y in (yw, yl)],
                           log_probs, "DPO")
    winners = _paths([paths[(x, yw)] for _, x, yw, _ in prefs], row_of_state, ref_lp)
    losers = _paths([paths[(x, yl)] for _, x, _, yl in prefs], row_of_state, ref_lp)
    if ld_alpha is not None:
        public = np.minimum(winners.lengths, losers.lengths)
        weighted = []
        for side, key in ((winners, 1), (losers, 2)):
            ref = np.empty(len(prefs))
            for i, record in enumerate(prefs):
                s, a = paths[(record[1], record[key + 1])]
                t = ref_lp[s, a]
                ref[i] = t[: public[i]].sum() + ld_alpha * t[public[i]:].sum()
            weighted.append(side._replace(ref_log_probs=ref))
        winners, losers = weighted
    return Preferences(winners, losers, np.array([c for c, _, _, _ in prefs]))


def dpo(mdp: TokenEnv, policy: PolicyLike, preferences: Sequence[tuple[int, str, str, str]], *,
        beta: float, ref_policy: PolicyLike | None = None, steps: int = 2000, alpha: float = 1.0,
        loss: str | Sequence[str] = "sigmoid", loss_weights: Sequence[float] | None = None,
        label_smoothing: float = 0.0, f_divergence_type: str = "reverse_kl",
        f_alpha_divergence_coef: float = 0.5, discopop_tau: float = 0.05,
        ld_alpha: float | None = None, average_log_prob: bool = False,
        simpo_gamma: float = 0.5, cpo_alpha: float = 1.0, history: bool = False,
        eval_every: int | None = None, callback: Callback | None = None) -> DPOResult:
    """Direct preference optimisation on a token MDP ``mdp`` (Rafailov et al., 2023), with
    the family of pairwise losses TRL's ``DPOTrainer`` offers (:mod:`tabular.rlhf.losses`).

    Minimises the mean over the comparisons of the DPO loss (eq. 7)
    ``-log sigma(beta * [(log pi(y_w|x) - log ref(y_w|x)) - (log pi(y_l|x) - log ref(y_l|x))])``
    (or another ``loss``) by full-batch gradient descent, starting from ``policy``. At
    DPO's optimum the implicit reward ``beta * log pi(y|x) / ref(y|x)`` is the
    Bradley-Terry fit of the preferences, so ``pi`` is the KL-regularised optimum for
    that reward (section 4); every loss's own optimum on a population of comparisons is
    :func:`~tabular.rlhf.loss_optimum`.

    DPO draws nothing: every step is the exact gradient of the whole loss, so the same
    arguments give the same numbers and there is no ``seed`` and no ``runs``. Runs that
    differ come from different comparisons (:func:`iterated_dpo` samples them, with a
    seed).

    Parameters
    ----------
    mdp : the token MDP (an ``envs.TokenMDP``) whose prompts and responses are compared.
    policy : the starting policy, a :class:`~tabular.SoftmaxPolicy` (its rows are
        trained, shared or not) or an ``[S, A]`` matrix of probabilities.
    preferences : ``(prompt, y_w, y_l)`` or ``(count, prompt, y_w, y_l)`` tuples
        (``y_w`` preferred, ``count`` comparisons, any finite number > 0; default 1), or
        TRL's rows ``{"prompt": x, "chosen": y_w, "rejected": y_l}``.
    beta : the KL coefficient (> 0), required.
    ref_policy : the reference (any policy form); default ``None``: ``policy`` itself.
    steps : gradient steps, default 2000.
    alpha : step size (> 0), default 1.0.
    loss : one of TRL's ``loss_type`` names (:data:`~tabular.rlhf.losses.LOSSES`:
        ``"sigmoid"``, the default, DPO's; ``"ipo"``, IPO's ``(h - 1/(2 beta))^2`` on the
        log-ratio gap ``h`` (Azar et al., 2024, eq. 17), which regresses every compared
        pair's gap to ``1/(2 beta)`` instead of pushing it without bound when the
        preference is unanimous (its quadratic loss wants a smaller ``alpha``, e.g. 0.1);
        ``"hinge"``, ``"robust"``, ``"exo_pair"``, ``"nca_pair"``, ``"bco_pair"``,
        ``"sppo_hard"``, ``"apo_zero"``, ``"apo_down"``, ``"discopop"``,
        ``"sigmoid_norm"``, ``"sft"``; the reference-free ``"simpo"``, ``"cpo"`` and
        ``"orpo"``, TRL's ``CPOTrainer`` and ``ORPOTrainer`` losses, which never read
        ``ref_policy``: start them from the pre-trained model, ORPO's SFT term included;
        and the batch losses ``"aot"`` and ``"aot_unpaired"``, which pair the
        comparisons by the rank of their log-ratios, all the comparisons one batch,
        weighted by their counts) or a sequence of them, summed.
    loss_weights : one weight (>= 0) per loss of a sequence; default ``None``: 1 each.
    label_smoothing : the assumed share of flipped labels, in ``[0, 0.5)``: cDPO for
        ``"sigmoid"``, rDPO's noise rate for ``"robust"``, EXO's ``eps`` (default 0; EXO
        then uses ``1e-3``, as TRL does).
    f_divergence_type : ``"reverse_kl"`` (default: DPO), ``"forward_kl"``,
        ``"js_divergence"`` or ``"alpha_divergence"``: the divergence to the reference
        whose score ``f'(pi/ref)`` replaces the log-ratio (Wang et al., 2024).
    f_alpha_divergence_coef : the alpha of ``"alpha_divergence"``, in ``(0, 1)``; default
        0.5 (TRL's).
    discopop_tau : DiscoPOP's temperature (> 0), default 0.05 (TRL's).
    ld_alpha : LD-DPO's weight in ``[0, 1]`` of the tokens of the longer response beyond
        the shorter one's length, in the policy's and the reference's log-probabilities
        (Liu et al., 2024); default ``None``: off.
    average_log_prob : divide every log-ratio by its response's token count (``eos``
        counted) before the loss, default False. The zoo's IPO sums the tokens' log-
        ratios, as Azar et al. define it on whole responses and as the zoo always has (so
        numbers stay comparable); TRL's IPO averages them: ``loss="ipo",
        average_log_prob=True``. The two differ whenever compared responses differ in
        length: the averaged gap is regressed to ``1/(2 beta)`` per token.
    simpo_gamma : SimPO's target margin ``gamma`` (>= 0), default 0.5 (TRL's).
    cpo_alpha : the weight of CPO's NLL term (>= 0), default 1.0 (TRL's).
    history, eval_every, callback : the training history of
        :mod:`tabular.pg.telemetry` (``eval_every`` counts steps), with TRL's DPO
        metrics on the comparisons (``rewards/chosen``, ``rewards/rejected``,
        ``rewards/margins``, ``rewards/accuracies``, ``logps/chosen``,
        ``logps/rejected``, ``loss``) beside the exact ones;
        default False, ``None``, ``None``.

    Returns a :class:`~tabular.rlhf.results.DPOResult` (``logits``, ``row_of_state``,
    ``loss``, ``history``; ``.policy``), without a run axis. Every response compared must have
    positive probability under ``policy`` and ``ref_policy``.
    """
    spec = loss_spec(loss, beta, loss_weights=loss_weights, label_smoothing=label_smoothing,
                     f_divergence_type=f_divergence_type,
                     f_alpha_divergence_coef=f_alpha_divergence_coef,
                     discopop_tau=discopop_tau, ld_alpha=ld_alpha,
                     average_log_prob=average_log_prob, simpo_gamma=simpo_gamma,
                     cpo_alpha=cpo_alpha)
    beta = spec.beta
    steps = check_positive_int("steps", steps, high=MAX_COUNT)
    alpha = check_positive("alpha", alpha, MAX_POLICY_STEP)
    env = as_token_env(mdp, "mdp")
    mdp = env.to_mdp()  # type: ignore[assignment]  # the TokenEnv's model from here on
    policy = as_softmax_policy(mdp, policy, greedy=False)
    ref = policy if ref_policy is None else as_softmax_policy(mdp, ref_policy, "ref_policy")
    row_of_state = policy.row_of_state
    data = preference_data(env, preference_records(preferences), row_of_state,
                           {"policy": policy.log_probs(), "ref_policy": ref.log_probs()},
                           ld_alpha)
    every = check_history(history, eval_every, callback, steps, "dpo", count="steps")
    logits = policy.logits.copy()
    losses = np.zeros(steps)
    params = DPOParams(spec, steps, alpha)
    name = loss if isinstance(loss, str) else "+".join(loss)

    def step(first, stop):
        _dpo_descent(logits, data, params._replace(steps=stop - first), losses[first:stop],
                     NO_EXPLORATION)
        if not np.isfinite(losses[first:stop]).all():
            check_descent(losses, name, alpha)

    trace = run_in_chunks(step, steps, every, lambda: Recorder(
        mdp=mdp, ref_policy=ref, beta=beta, logits=logits[None], row_of_state=row_of_state,
        runs=None, callback=callback,
        sampled=lambda run, it: preference_metrics(data, logits, spec), where="dpo"), "dpo")
    check_no_overflow(logits, "logits")
    return DPOResult(logits, row_of_state.copy(), losses, trace)


def check_descent(history: np.ndarray, loss: str, alpha: float) -> None:
    """A ``FloatingPointError`` when the loss of a descent (``history``, any shape, one
    entry per step) left float64: the steps overshoot."""
    bad = ~np.isfinite(history)
    if bad.any():
        where = first_bad(bad)
        raise FloatingPointError(f"the {loss} loss diverged to {history[bad][0]} (loss{where}, "
                                 f"the index of its step) with alpha={alpha}: lower alpha")


def _paths(paths: Sequence[tuple[np.ndarray, np.ndarray]], row_of_state: np.ndarray,
           ref_log_probs: np.ndarray) -> Paths:
    """Pad the responses' ``(states, actions)`` into one :class:`Paths` record: the rows
    of ``row_of_state`` their states read, and their log-probabilities under the
    reference's ``[S, A]`` ``ref_log_probs``."""
    L = max(len(s) for s, _ in paths)
    rows = np.zeros((len(paths), L), dtype=np.int64)
    actions = np.zeros((len(paths), L), dtype=np.int64)
    lengths = np.array([len(s) for s, _ in paths], dtype=np.int64)
    for i, (s, a) in enumerate(paths):
        rows[i, : len(s)], actions[i, : len(a)] = row_of_state[s], a
    ref = np.array([ref_log_probs[s, a].sum() for s, a in paths])
    return Paths(rows, actions, lengths, ref)


# ------------------------------------------------------------- iterated DPO
def _judge(judge: object, mdp, start: SoftmaxPolicy) -> Judge:
    """The :class:`Judge` tables of ``judge``, checked to compare every response ``start``
    can give."""
    if not all(hasattr(judge, a) for a in ("states", "actions", "bounds", "matrices")):
        raise TypeError(f"judge must be a tabular.rlhf.PreferenceModel, got "
                        f"{type(judge).__name__}")
    tables = judge_tables(judge, mdp.n_states, mdp.n_actions)
    s, a = np.nonzero(ending_probabilities(mdp, start) > 0.0)
    if (tables.index[s, a] < 0).any():
        k = int(np.argmin(tables.index[s, a]))
        raise ValueError(f"judge does not compare the response ending with token {a[k]} in "
                         f"state {s[k]}, which the policy can give")
    return tables


class IteratedDPOParams(NamedTuple):
    """:func:`iterated_dpo` as its kernel reads it (:class:`DPOParams`' fields first;
    ``first``: the round to start from, 0 unless a run continues in chunks)."""

    loss: LossSpec
    steps: int
    alpha: float
    rounds: int
    pairs: int
    judge: Judge
    xpo_alpha: float
    ref_rollout: Rollout
    first: int = 0


class Judge(NamedTuple):
    """A preference model as the iterated-DPO kernel reads it: ``index[s, a]``, the number
    of the response ending with ``(s, a)`` (int64 ``[S, A]``, -1 elsewhere), and
    ``prob[i, j] = P(y_i > y_j)`` (``[N, N]``). Empty (``[0, 0]``): no judge, Bradley-Terry
    on the returns."""

    index: np.ndarray  # type: ignore[assignment]  # field named index shadows tuple.index
    prob: np.ndarray


def judged_start(mdp: MDPLike | TokenEnv, policy: PolicyLike, judge: object
                 ) -> tuple[MDPLike, SoftmaxPolicy, Judge]:
    """What an online preference learner (:func:`iterated_dpo`,
    :func:`~tabular.rlhf.sampled_nash_md`) starts from: the model (a
    :class:`~tabular.types.TokenEnv`, or a Gymnasium env of one, opened to its MDP),
    ``policy`` as a softmax table, and the judge's tables (``NO_JUDGE`` without a
    judge: the larger return wins)."""
    mdp = getattr(mdp, "unwrapped", mdp)
    mdp = mdp.to_mdp() if hasattr(mdp, "to_mdp") else mdp
    start = as_softmax_policy(mdp, policy, greedy=False)
    return mdp, start, NO_JUDGE if judge is None else _judge(judge, mdp, start)


def judge_tables(preference, n_states: int, n_actions: int) -> Judge:
    """The :class:`Judge` of a :class:`~tabular.rlhf.PreferenceModel`."""
    index = np.full((n_states, n_actions), -1, dtype=np.int64)
    index[preference.states, preference.actions] = np.arange(len(preference.states))
    n = len(preference.states)
    prob = np.zeros((n, n))
    for x, P in enumerate(preference.matrices):
        lo, hi = preference.bounds[x], preference.bounds[x + 1]
        prob[lo:hi, lo:hi] = P
    return Judge(index, prob)


NO_JUDGE = Judge(np.zeros((0, 0), dtype=np.int64), np.zeros((0, 0)))
#: :func:`dpo`'s pairs: none drawn by the reference (XPO's exploration is off).
NO_EXPLORATION = np.zeros(0, dtype=np.int64)


class IteratedDPOOutputs(NamedTuple):
    """What the iterated-DPO kernel fills, each with a leading run axis: the ``logits``
    (trained in place), the ``loss`` ``[rounds, steps]`` and the number of compared
    ``pairs`` of each round (``[rounds]``; a pair of identical responses is no
    comparison)."""

    logits: np.ndarray
    loss: np.ndarray
    pairs: np.ndarray


@njit(cache=True)
def _store_path(path, T, rollout, rows, actions):
    """Write the ``T`` steps of a sampled response (``path`` as
    :func:`~tabular.pg.rollout.sample_episode` fills it) into ``rows`` (the rows of logits
    its states read) and ``actions``; returns its log-probability under the reference."""
    total = 0.0
    for t in range(T):
        s, a = path[0, t], path[1, t]
        rows[t], actions[t] = rollout.row_of_state[s], a
        total += rollout.ref_log_probs[rollout.ref_row[s], a]
    return total


@njit(cache=True, inline="always")
def _iterated_dpo_run(model, p, rollout, rng, out, run):
    """Run ``run``, into row ``run`` of the :class:`IteratedDPOOutputs` ``out``: each
    round samples ``p.pairs`` pairs of responses to a shared prompt from the current
    policy, labels each by Bradley-Terry on the two returns, and takes ``p.steps`` DPO
    steps on them from where the policy stands."""
    theta, loss, pairs = out.logits[run], out.loss[run], out.pairs[run]
    A, L, M = theta.shape[1], rollout.max_steps, p.pairs
    path, seen, dones, dist = episode_buffers(2, L, A)
    rows = np.zeros((2, M, L), dtype=np.int64)  # winners', then losers'
    actions = np.zeros((2, M, L), dtype=np.int64)
    lengths = np.zeros((2, M), dtype=np.int64)
    ref_log_probs = np.zeros((2, M))
    counts = np.zeros(M)
    explore = np.full(M, -1, dtype=np.int64)
    data = Preferences(Paths(rows[0], actions[0], lengths[0], ref_log_probs[0]),
                       Paths(rows[1], actions[1], lengths[1], ref_log_probs[1]), counts)
    for r in range(p.first, p.rounds):
        for i in range(M):
            T0, R0 = sample_episode(model, rollout, theta, rng, path[0], seen[0], dones[0],
                                    dist)
            path[1, 0, 0] = path[0, 0, 0]  # the second response answers the same prompt
            if p.xpo_alpha > 0.0:  # XPO: the second response is the reference's
                T1, R1 = continue_episode(model, p.ref_rollout, rollout.ref_log_probs, rng,
                                          path[1], seen[1], dones[1], dist)
            else:
                T1, R1 = continue_episode(model, rollout, theta, rng, path[1], seen[1],
                                          dones[1], dist)
            same = T0 == T1 and path[0, 0, T0] == path[1, 0, T1] and (
                path[0, 1, T0 - 1] == path[1, 1, T1 - 1])  # the same ending: one response
            counts[i] = 0.0 if same else 1.0
            if p.judge.index.shape[0] == 0:
                w = 0 if bradley_terry_wins(rng, R0, R1) else 1
            else:  # the judge's P(y_0 > y_1), one uniform as Bradley-Terry draws
                i0 = p.judge.index[path[0, 0, T0 - 1], path[0, 1, T0 - 1]]
                i1 = p.judge.index[path[1, 0, T1 - 1], path[1, 1, T1 - 1]]
                w = 0 if uniform(rng) < p.judge.prob[i0, i1] else 1
            if p.xpo_alpha > 0.0:
                explore[i] = 1 if w == 0 else 0  # the side the reference's response took
            for side, j in ((0, w), (1, 1 - w)):  # the winner's row, then the loser's
                T = T0 if j == 0 else T1
                lengths[side, i] = T
                ref_log_probs[side, i] = _store_path(path[j], T, rollout, rows[side, i],
                                                     actions[side, i])
        pairs[r] = counts.sum()
        if pairs[r] > 0:
            _dpo_descent(theta, data, p, loss[r], explore)
            if not loss[r, -1] < np.inf:  # diverged: the caller raises
                return


@runs_kernel
def _iterated_dpo(model, params, rollout, rng_states, out):
    """Every run of :func:`_iterated_dpo_run`, each stream kept for the next chunk."""
    for run in range(rng_states.shape[0]):
        run_keeping_stream(_iterated_dpo_run, model, params, rollout, rng_states, out, run)


def online_dpo_metrics(batch: tuple, rollout, judge: Judge, beta: float) -> dict[str, float]:
    """TRL's ``OnlineDPOTrainer`` metrics of a batch (:func:`~tabular.pg.telemetry.sample_batch`'s
    ``(paths, seen, lengths, returns)``) read as pairs of consecutive episodes: each pair of
    distinct responses to one prompt is labelled as TRL's judge or reward model labels it,
    deterministically (the larger return wins; with a ``judge``, the response it prefers
    with probability above 1/2; a tie is no pair). ``rewards/chosen``,
    ``rewards/rejected`` (``beta log pi / ref`` of the two), ``rewards/margins``,
    ``rewards/accuracies``, ``logps/chosen``, ``logps/rejected`` (means over the pairs; NaN
    without a pair) and ``beta``."""
    paths, seen, lengths, returns = batch
    on = np.arange(seen.shape[2]) < lengths[:, None]
    states = np.where(on, paths[:, 0, :-1], 0)
    actions = np.where(on, paths[:, 1, :-1], 0)
    log_pi = np.where(on, seen[:, 1], 0.0).sum(axis=1)
    log_ref = np.where(on, rollout.ref_log_probs[rollout.ref_row[states], actions],
                       0.0).sum(axis=1)
    last = np.arange(len(lengths)), lengths - 1
    ends = paths[last[0], 0, last[1]], paths[last[0], 1, last[1]]
    chosen, rejected = [], []
    for i in range(0, len(lengths) - 1, 2):
        j = i + 1
        if paths[i, 0, 0] != paths[j, 0, 0] or (ends[0][i], ends[1][i]) == (ends[0][j],
                                                                          ends[1][j]):
            continue  # another prompt, or the same response: no comparison
        if judge.index.shape[0]:
            p = judge.prob[judge.index[ends[0][i], ends[1][i]], judge.index[ends[0][j],
                                                                             ends[1][j]]]
            margin = p - 0.5
        else:
            margin = returns[i] - returns[j]
        if margin != 0.0:
            w, lo = (i, j) if margin > 0.0 else (j, i)
            chosen.append(w)
            rejected.append(lo)
    if not chosen:
        nan = float("nan")
        return {k: nan for k in ("rewards/chosen", "rewards/rejected", "rewards/margins",
                                 "rewards/accuracies", "logps/chosen", "logps/rejected")} | {
                                     "beta": beta}
    w, lo = np.array(chosen), np.array(rejected)  # type: ignore[assignment]  # an index array, no longer one index
    rc, rr = beta * (log_pi[w] - log_ref[w]), beta * (log_pi[lo] - log_ref[lo])
    return {"rewards/chosen": float(rc.mean()), "rewards/rejected": float(rr.mean()),
            "rewards/margins": float((rc - rr).mean()),
            "rewards/accuracies": float((rc > rr).mean()),
            "logps/chosen": float(log_pi[w].mean()), "logps/rejected": float(log_pi[lo].mean()),
            "beta": beta}


def iterated_dpo(mdp: MDPLike | TokenEnv, policy: PolicyLike, *, beta: float, rounds: int = 4,
                 pairs: int = 64, steps: int = 200, alpha: float = 1.0, loss: str = "sigmoid",
                 ref_policy: PolicyLike | None = None, judge: object = None,
                 xpo_alpha: float = 0.0, seed: int | None = 0, runs: int | None = None,
                 history: bool = False, eval_every: int | None = None,
                 callback: Callback | None = None) -> IteratedDPOResult:
    """Iterated (online) DPO: preferences sampled from the current policy and labelled by
    the reward, round after round (Xiong et al., 2024; Guo et al., 2024).

    Each round draws ``pairs`` prompts, two responses to each from the current policy,
    and labels the pair by the Bradley-Terry model on the two responses' returns (the
    reward the MDP pays: a gold reward, or a reward model's score): the first wins with
    probability ``sigma(R_1 - R_2)``. Two identical responses are no comparison. Then
    :func:`dpo`'s ``steps`` full-batch steps run on the round's comparisons, from where
    the policy stands, toward the fixed ``ref_policy``. Since the labels follow
    Bradley-Terry on the MDP's reward, DPO's target on every compared pair is the
    KL-regularised optimum ``pi*`` of that reward (:func:`~tabular.rlhf.kl_optimum`); the
    rounds move the comparisons to where the policy now puts its mass.

    Parameters
    ----------
    mdp : the token MDP (an ``envs.TokenMDP`` or its :class:`~tabular.TabularMDP`); its
        reward labels the pairs.
    policy : the starting policy, a :class:`~tabular.SoftmaxPolicy` (its rows are
        trained) or an ``[S, A]`` matrix of probabilities.
    beta : the KL coefficient (> 0), required.
    rounds : rounds of sampling and training (>= 1), default 4.
    pairs : comparisons sampled per round (>= 1), default 64.
    steps : DPO's gradient steps per round, default 200.
    alpha : DPO's step size (> 0), default 1.0.
    loss : ``"sigmoid"`` (default: DPO's) or ``"ipo"``, as in :func:`dpo`.
    ref_policy : the reference (any policy form); default ``None``: ``policy`` itself.
    judge : a :class:`~tabular.rlhf.PreferenceModel` that labels each pair, ``y`` winning
        with probability ``P(y > y')`` (online DPO / IPO with a judge: TRL's
        ``OnlineDPOTrainer``; Guo et al., 2024), intransitive or not; it must compare
        every response ``policy`` can give (``mdp`` then a token env). Default ``None``:
        Bradley-Terry on the returns.
    xpo_alpha : XPO's exploration weight (>= 0; TRL's ``XPOConfig.alpha``): with
        ``xpo_alpha > 0`` the second response of each pair is drawn from the reference
        and each round's loss adds ``xpo_alpha`` times the mean log-probability of those
        reference responses (:func:`~tabular.rlhf.preference.exploration_bonus`; Xie et
        al., 2024, "Exploratory preference optimization"). Default 0: online DPO, both
        responses from the policy.
    seed : seed of the sampling streams (``None``: fresh entropy), default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` runs with their own
        streams and a leading run axis.
    history, eval_every, callback : the training history of
        :mod:`tabular.pg.telemetry`, its exact metrics every ``eval_every`` rounds beside
        TRL's ``OnlineDPOTrainer`` metrics of a fresh batch of ``pairs`` pairs
        (:func:`~tabular.rlhf.preference.online_dpo_metrics`, and ``objective/...``);
        default False, ``None``, ``None``.

    Returns an :class:`~tabular.rlhf.results.IteratedDPOResult`. ``rounds=k`` with the
    same seed gives the first ``k`` rounds of any longer call.
    """
    spec = _check_loss(loss, beta)
    beta = spec.beta
    rounds = check_positive_int("rounds", rounds, high=MAX_COUNT)
    pairs = check_positive_int("pairs", pairs, high=MAX_COUNT // rounds)
    steps = check_positive_int("steps", steps, high=MAX_COUNT // rounds)
    alpha = check_positive("alpha", alpha, MAX_POLICY_STEP)
    mdp, start, tables = judged_start(mdp, policy, judge)
    xpo_alpha = check_nonnegative("xpo_alpha", xpo_alpha)
    every = check_history(history, eval_every, callback, rounds, "iterated_dpo", count="rounds",
                          runs=runs)
    ref_policy = start if ref_policy is None else ref_policy
    args = policy_gradient_args(mdp, start, ref_policy=ref_policy, beta=beta, reward_floor=None,
                                gamma=1.0, episodes=rounds, max_steps=None, runs=runs, seed=seed,
                                made_by=f"rounds={rounds:,}")
    n = args.rng_states.shape[0]
    out = IteratedDPOOutputs(args.outputs(value=False).logits, np.zeros((n, rounds, steps)),
                             np.zeros((n, rounds)))
    ref_rollout = args.rollout._replace(row_of_state=args.rollout.ref_row)  # type: ignore[arg-type]  # ref_row is set when a reference is
    params = IteratedDPOParams(spec, steps, alpha, rounds, pairs, tables, xpo_alpha,
                               ref_rollout)

    def step(first, stop):
        over_runs(_iterated_dpo, args.mdp.arrays, params._replace(first=first, rounds=stop),
                  args.rollout, args.rng_states, out)
        if not np.isfinite(out.loss[:, first:stop]).all():
            check_descent(out.loss, loss, alpha)

    def sampled(run, it):  # TRL's OnlineDPOTrainer metrics of a fresh batch of pairs
        batch = sample_batch(args.mdp.arrays, args.rollout, out.logits[run],
                             args.rng_states[run].copy(), 2 * pairs)
        return {**batch_metrics(batch, args.rollout),
                **online_dpo_metrics(batch, args.rollout, tables, beta)}

    trace = run_in_chunks(step, rounds, every,
                          args.recorder(ref_policy, out.logits, callback, "iterated_dpo",
                                      sampled), "iterated_dpo")
    check_no_overflow(out.logits, "logits")
    return IteratedDPOResult(with_run_axis(out.logits, runs), args.policy.row_of_state.copy(),
                             with_run_axis(out.loss, runs), with_run_axis(out.pairs, runs),
                             trace)
