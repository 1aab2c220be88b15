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

from tabular._numba.runs import over_runs, runs_driver
from tabular.checks import MAX_COUNT, check_positive, check_positive_int, first_bad
from tabular.model.policy import SoftmaxPolicy, as_softmax_policy
from tabular.pg.rollout import continue_episode, episode_buffers, sample_episode
from tabular.pg.setup import MAX_POLICY_STEP, check_no_overflow, setup
from tabular.pg.telemetry import Callback, Recorder, check_history, run_in_chunks
from tabular.results import with_run_axis
from tabular.rlhf.results import DPOResult, IteratedDPOResult
from tabular.rlhf.reward_model import bradley_terry_wins, log_sigmoid, preference_records, sigmoid
from tabular.rules.policy_gradient import accumulate_log_prob_grad, ascend, log_softmax
from tabular.solve.tree import as_token_env
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
    """:func:`dpo`'s hyper-parameters as its kernel reads them."""

    beta: float
    steps: int
    alpha: float
    ipo: bool


def response_path(env: TokenEnv, prompt: str, response: str) -> tuple[np.ndarray, np.ndarray]:
    """The states and actions (tokens) by which a token MDP ``env`` generates ``response``
    to ``prompt`` (one of ``env.prompts``)."""
    env = as_token_env(env)
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


def possible_paths(env, texts, log_probs: dict, method: str) -> dict:
    """``{(prompt, response): (states, actions)}`` (:func:`response_path`) of the distinct
    ``texts``, each checked to have positive probability under every policy of
    ``log_probs`` (``{name: [S, A] log-probabilities}``); an error names the response,
    the policy and ``method``."""
    paths = {}
    for x, y in texts:
        if (x, y) not in paths:
            s, a = paths[(x, y)] = response_path(env, x, y)
            for name, lp in log_probs.items():
                if not np.isfinite(lp[s, a]).all():
                    raise ValueError(f"response {y!r} to prompt {x!r} has probability 0 "
                                     f"under {name} (a masked token); {method} needs it "
                                     "possible")
    return paths


@njit(cache=True, inline="always")
def sequence_log_prob(logits, rows, actions, length, buf):
    """``log pi(y|x) = sum_t log pi(a_t | s_t)`` along one response (the chain rule), from
    the rows of logits its first ``length`` tokens read; ``buf`` ``[A]`` is scratch."""
    total = 0.0
    for t in range(length):
        log_softmax(logits[rows[t]], buf)
        total += buf[actions[t]]
    return total


@njit(cache=True)
def dpo_margin(log_pi_w, log_ref_w, log_pi_l, log_ref_l, beta):
    """``beta * [(log pi(y_w) - log ref(y_w)) - (log pi(y_l) - log ref(y_l))]``
    (Rafailov et al., 2023, eq. 7)."""
    return beta * ((log_pi_w - log_ref_w) - (log_pi_l - log_ref_l))


@njit(cache=True)
def ipo_error(log_ratio_gap, beta):
    """``h - 1 / (2 beta)``: how far the gap ``h = log pi(y_w)/ref(y_w) - log
    pi(y_l)/ref(y_l)`` is from the target IPO regresses it to (Azar et al., 2024,
    eq. 17, with TRL's ``beta`` as the regularisation tau)."""
    return log_ratio_gap - 1.0 / (2.0 * beta)


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
def _accumulate_path_grad(logits, paths, i, weight, probs, grad):
    """``grad += weight * d log pi(y_i|x) / d logits``, token by token (S&B eq. 13.9 per
    token: the chain rule sums them); ``probs`` ``[A]`` is scratch."""
    for t in range(paths.lengths[i]):
        r = paths.rows[i, t]
        accumulate_log_prob_grad(logits[r], paths.actions[i, t], weight, probs, grad[r])


@njit(cache=True)
def _dpo_descent(logits, data, p, history):
    """Full-batch gradient descent on the mean over ``data`` (a :class:`Preferences`) of
    the DPO loss ``-log sigma(margin)`` (Rafailov et al., 2023, eq. 7), or of IPO's
    squared error ``(h - 1/(2 beta))^2`` (Azar et al., 2024, eq. 17) when ``p.ipo``;
    ``history[step]`` receives the mean loss before each step."""
    n = data.counts.sum()
    A = logits.shape[1]
    grad = np.zeros_like(logits)
    buf, probs = np.empty(A), np.empty(A)
    win, lose = data.winners, data.losers
    rows = rows_on_paths(logits.shape[0], win, lose)
    for step in range(p.steps):
        for r in rows:
            grad[r] = 0.0
        loss = 0.0
        for i in range(data.counts.shape[0]):
            lw = sequence_log_prob(logits, win.rows[i], win.actions[i], win.lengths[i], buf)
            ll = sequence_log_prob(logits, lose.rows[i], lose.actions[i], lose.lengths[i],
                                   buf)
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
            _accumulate_path_grad(logits, win, i, w, probs, grad)
            _accumulate_path_grad(logits, lose, i, -w, probs, grad)
        history[step] = loss
        if not loss < np.inf:  # the steps overshoot: stop before the logits overflow
            history[step:] = loss
            return
        for r in rows:
            ascend(logits[r], grad[r], p.alpha)


#: IPO's smallest beta: its target gap ``1 / (2 beta)`` (eq. 17) is a difference of log-
#: probabilities, and float64 holds probabilities down to ``exp(-708)`` (the smallest normal).
IPO_MIN_BETA = 1.0 / (2.0 * 708.0)


def _check_loss(loss: object, beta: float) -> float:
    """``beta`` checked for ``loss``, which is ``"sigmoid"`` (DPO) or ``"ipo"``."""
    beta = check_positive("beta", beta)
    if loss not in ("sigmoid", "ipo"):
        raise ValueError(f"loss must be 'sigmoid' or 'ipo', got {loss!r}")
    if loss == "ipo" and beta < IPO_MIN_BETA:
        raise ValueError(f"beta must be at least {IPO_MIN_BETA:.3g} for loss='ipo': its target "
                         f"gap 1 / (2 beta) = {1 / (2 * beta):.3g} nats is beyond the log-"
                         "probabilities float64 can hold")
    return beta


def preference_metrics(data: Preferences, logits: np.ndarray, beta: float,
                       ipo: bool) -> dict[str, float]:
    """TRL's DPO metrics of the policy ``logits`` on the comparisons ``data``, each a mean
    weighted by the comparisons' counts: ``rewards/chosen`` and ``rewards/rejected``
    (the implicit rewards ``beta log pi(y|x) / ref(y|x)`` of the preferred and the other
    response), ``rewards/margins`` (their difference), ``rewards/accuracies`` (the share
    of comparisons whose preferred response has the larger implicit reward),
    ``logps/chosen`` and ``logps/rejected`` (``log pi(y|x)``) and ``loss`` (DPO's or
    IPO's, as :func:`dpo` minimises it)."""
    row_lp = SoftmaxPolicy(logits, np.zeros(1, dtype=np.int64)).row_log_probs()

    def log_pi(paths):
        on = np.arange(paths.rows.shape[1]) < paths.lengths[:, None]
        return np.where(on, row_lp[paths.rows, paths.actions], 0.0).sum(axis=1)

    w = data.counts / data.counts.sum()
    lw, ll = log_pi(data.winners), log_pi(data.losers)
    gap = (lw - data.winners.ref_log_probs) - (ll - data.losers.ref_log_probs)
    chosen, rejected = beta * (lw - data.winners.ref_log_probs), \
        beta * (ll - data.losers.ref_log_probs)
    loss = (gap - 1.0 / (2.0 * beta)) ** 2 if ipo else np.logaddexp(0.0, -beta * gap)
    return {"rewards/chosen": float(w @ chosen), "rewards/rejected": float(w @ rejected),
            "rewards/margins": float(w @ (chosen - rejected)),
            "rewards/accuracies": float(w @ (chosen > rejected)),
            "logps/chosen": float(w @ lw), "logps/rejected": float(w @ ll),
            "loss": float(w @ loss)}


def dpo(env: TokenEnv, policy: PolicyLike, preferences: Sequence[tuple[int, str, str, str]], *,
        beta: float, ref_policy: PolicyLike | None = None, steps: int = 2000, alpha: float = 1.0,
        loss: str = "sigmoid", history: bool = False, eval_every: int | None = None,
        callback: Callback | None = None) -> DPOResult:
    """Direct preference optimisation on a token MDP ``env`` (Rafailov et al., 2023).

    Minimises the mean over the comparisons of the DPO loss (eq. 7)
    ``-log sigma(beta * [(log pi(y_w|x) - log ref(y_w|x)) - (log pi(y_l|x) - log ref(y_l|x))])``
    by full-batch gradient descent, starting from ``policy``. At the optimum the implicit
    reward ``beta * log pi(y|x) / ref(y|x)`` is the Bradley-Terry fit of the
    preferences, so ``pi`` is the KL-regularised optimum for that reward (section 4).

    DPO draws nothing: every step is the exact gradient of the whole loss, so the same
    arguments give the same numbers and there is no ``seed`` and no ``runs``. Runs that
    differ come from different comparisons (:func:`iterated_dpo` samples them, with a
    seed).

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
    history, eval_every, callback : the training history of
        :mod:`tabular.pg.telemetry` (``eval_every`` counts steps), with TRL's DPO
        metrics on the comparisons (:func:`preference_metrics`) beside the exact ones;
        default False, ``None``, ``None``.

    Returns a :class:`~tabular.rlhf.results.DPOResult` (``logits``, ``row_of_state``,
    ``loss``, ``history``; ``.policy``), without a run axis. Every response compared must have
    positive probability under ``policy`` and ``ref_policy``.
    """
    beta = _check_loss(loss, beta)
    steps = check_positive_int("steps", steps, high=MAX_COUNT)
    alpha = check_positive("alpha", alpha, MAX_POLICY_STEP)
    env = as_token_env(env)
    mdp = env.to_mdp()
    policy = as_softmax_policy(mdp, policy, greedy=False)
    ref = policy if ref_policy is None else as_softmax_policy(mdp, ref_policy, "ref_policy")
    prefs = preference_records(preferences)
    ref_lp = ref.log_probs()
    paths = possible_paths(env, [(x, y) for _, x, yw, yl in prefs for y in (yw, yl)],
                           {"policy": policy.log_probs(), "ref_policy": ref_lp}, "DPO")
    row_of_state = policy.row_of_state
    data = Preferences(_paths([paths[(x, yw)] for _, x, yw, _ in prefs], row_of_state, ref_lp),
                       _paths([paths[(x, yl)] for _, x, _, yl in prefs], row_of_state, ref_lp),
                       np.array([c for c, _, _, _ in prefs]))
    every = check_history(history, eval_every, callback, steps, "dpo", count="steps")
    logits = policy.logits.copy()
    losses = np.zeros(steps)
    params = DPOParams(beta, steps, alpha, loss == "ipo")

    def step(first, stop):
        _dpo_descent(logits, data, params._replace(steps=stop - first), losses[first:stop])
        if not np.isfinite(losses[first:stop]).all():
            check_descent(losses, loss, alpha)

    trace = run_in_chunks(step, steps, every, lambda: Recorder(
        mdp, ref, beta, logits[None], row_of_state, None, callback,
        lambda run, it: preference_metrics(data, logits, beta, params.ipo), "dpo"), "dpo")
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
class IteratedDPOParams(NamedTuple):
    """:func:`iterated_dpo` as its kernel reads it (:class:`DPOParams`' fields first;
    ``first``: the round to start from, 0 unless a run continues in chunks)."""

    beta: float
    steps: int
    alpha: float
    ipo: bool
    rounds: int
    pairs: int
    first: int = 0


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
    data = Preferences(Paths(rows[0], actions[0], lengths[0], ref_log_probs[0]),
                       Paths(rows[1], actions[1], lengths[1], ref_log_probs[1]), counts)
    for r in range(p.first, p.rounds):
        for i in range(M):
            T0, R0 = sample_episode(model, rollout, theta, rng, path[0], seen[0], dones[0],
                                    dist)
            path[1, 0, 0] = path[0, 0, 0]  # the second response answers the same prompt
            T1, R1 = continue_episode(model, rollout, theta, rng, path[1], seen[1], dones[1],
                                      dist)
            same = T0 == T1 and path[0, 0, T0] == path[1, 0, T1] and (
                path[0, 1, T0 - 1] == path[1, 1, T1 - 1])  # the same ending: one response
            counts[i] = 0.0 if same else 1.0
            w = 0 if bradley_terry_wins(rng, R0, R1) else 1
            for side, j in ((0, w), (1, 1 - w)):  # the winner's row, then the loser's
                T = T0 if j == 0 else T1
                lengths[side, i] = T
                ref_log_probs[side, i] = _store_path(path[j], T, rollout, rows[side, i],
                                                     actions[side, i])
        pairs[r] = counts.sum()
        if pairs[r] > 0:
            _dpo_descent(theta, data, p, loss[r])
            if not loss[r, -1] < np.inf:  # diverged: the caller raises
                return


_iterated_dpo = runs_driver(_iterated_dpo_run)


def iterated_dpo(mdp: MDPLike | TokenEnv, policy: PolicyLike, *, beta: float, rounds: int = 4,
                 pairs: int = 64, steps: int = 200, alpha: float = 1.0, loss: str = "sigmoid",
                 ref_policy: PolicyLike | None = None, seed: int | None = 0,
                 runs: int | None = None, history: bool = False, eval_every: int | None = None,
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
    seed : seed of the sampling streams (``None``: fresh entropy), default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` runs with their own
        streams and a leading run axis.
    history, eval_every, callback : the training history of
        :mod:`tabular.pg.telemetry`, its exact metrics every ``eval_every`` rounds;
        default False, ``None``, ``None``.

    Returns an :class:`~tabular.rlhf.results.IteratedDPOResult`. ``rounds=k`` with the
    same seed gives the first ``k`` rounds of any longer call.
    """
    beta = _check_loss(loss, beta)
    rounds = check_positive_int("rounds", rounds, high=MAX_COUNT)
    pairs = check_positive_int("pairs", pairs, high=MAX_COUNT // rounds)
    steps = check_positive_int("steps", steps, high=MAX_COUNT // rounds)
    alpha = check_positive("alpha", alpha, MAX_POLICY_STEP)
    mdp = getattr(mdp, "unwrapped", mdp)
    mdp = mdp.to_mdp() if hasattr(mdp, "to_mdp") else mdp
    start = as_softmax_policy(mdp, policy, greedy=False)
    every = check_history(history, eval_every, callback, rounds, "iterated_dpo", count="rounds",
                          runs=runs)
    ref_policy = start if ref_policy is None else ref_policy
    su = setup(mdp, start, ref_policy=ref_policy, beta=beta, reward_floor=None, gamma=1.0,
               episodes=rounds, max_steps=None, runs=runs, seed=seed,
               made_by=f"rounds={rounds:,}")
    n = su.rng_states.shape[0]
    out = IteratedDPOOutputs(su.outputs(value=False).logits, np.zeros((n, rounds, steps)),
                             np.zeros((n, rounds)))
    params = IteratedDPOParams(beta, steps, alpha, loss == "ipo", rounds, pairs)

    def step(first, stop):
        over_runs(_iterated_dpo, su.mdp.arrays, params._replace(first=first, rounds=stop),
                  su.rollout, su.rng_states, out)
        if not np.isfinite(out.loss[:, first:stop]).all():
            check_descent(out.loss, loss, alpha)

    trace = run_in_chunks(step, rounds, every,
                          su.recorder(ref_policy, out.logits, callback, "iterated_dpo"),
                          "iterated_dpo")
    check_no_overflow(out.logits, "logits")
    return IteratedDPOResult(with_run_axis(out.logits, runs), su.policy.row_of_state.copy(),
                             with_run_axis(out.loss, runs), with_run_axis(out.pairs, runs),
                             trace)
