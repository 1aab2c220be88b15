"""RLHF on the token MDP: exact sequence-level quantities, the Bradley-Terry reward
model, DPO, GRPO, and the KL-regularised optimum they are all measured against.

The other RLHF learners are :func:`tabular.reinforce`, :func:`tabular.actor_critic`
and :func:`tabular.ppo`, used as they are: the KL penalty is their ``kl_coef``.

A token MDP is a tree (every state is reached by one path), so sequence-level
quantities are exact sums over it, computed by one forward pass in breadth-first
order (a prefix has a smaller id than its continuations):

- the probability ``mu(s)`` that generation passes through state ``s``;
- ``E_pi[r] = sum_s mu(s) sum_a pi(a|s) r(s, a)``;
- ``KL(pi || ref) = sum_s mu(s) KL(pi(.|s) || ref(.|s))`` over whole responses
  (the chain rule of the KL divergence);
- the KL-regularised optimum ``pi*(y|x) = ref(y|x) exp(r(x, y) / beta) / Z(x)``
  (Ziegler et al., 2019; Rafailov et al., 2023, eq. 4) with value
  ``beta * log Z(x)``; :func:`tabular.soft_value_iteration` reaches the same
  policy token by token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from .checks import check_positive, check_positive_int, policy_matrix
from .kernels.rng import randint, seed_states, uniform
from .kernels.sampling import sample_start
from .mdp import ModelArrays
from .pg import PolicyGradientResult, _sample_episode, _setup, _step_size
from .policy import SoftmaxPolicy
from .rules.policy_gradient import ascend, grad_log_softmax, log_softmax, softmax
from .schedules import schedule_value

# ------------------------------------------------------------ exact tree sums


def _tree_edges(mdp):
    """Continuing transitions ``(s, a, k)`` of a tree MDP, checked to run forwards."""
    live = (mdp.prob > 0.0) & ~mdp.done
    s, a, k = np.nonzero(live)
    back = mdp.next_state[s, a, k] <= s
    if back.any():
        i = int(np.argmax(back))
        raise ValueError(f"state {mdp.state_name(int(s[i]))}, action {mdp.action_name(int(a[i]))} "
                         "leads back to an earlier state: exact sequence sums need a tree MDP "
                         "numbered breadth-first (a token MDP)")
    return s, a, k


def visit_probabilities(mdp, policy) -> np.ndarray:
    """``mu[s]``: the probability that an episode under ``policy`` passes through ``s``."""
    pi = policy_matrix(mdp, policy)
    mu = mdp.start.copy()
    s, a, k = _tree_edges(mdp)
    order = np.argsort(s, kind="stable")
    for s_, a_, k_ in zip(s[order], a[order], k[order], strict=True):
        mu[mdp.next_state[s_, a_, k_]] += mu[s_] * pi[s_, a_] * mdp.prob[s_, a_, k_]
    return mu


def ending_probabilities(mdp, policy) -> np.ndarray:
    """``[S, A]``: the probability that the episode ends by taking ``a`` in ``s``.

    In a token MDP each finished response is one ending ``(s, a)``, so this is the
    exact distribution over responses (plus forbidden-token endings).
    """
    pi = policy_matrix(mdp, policy)
    ends = np.where(mdp.done, mdp.prob, 0.0).sum(axis=2)
    return visit_probabilities(mdp, pi)[:, None] * pi * ends


def response_distribution(env, policy) -> dict[tuple[str, str], float]:
    """``P(x, y)`` of every finished response of a token MDP ``env`` (an ``envs.TokenMDP``)
    under ``policy``, by enumeration; endings on a forbidden token are collected under
    the response ``None``."""
    mdp = env.to_mdp()
    ends = ending_probabilities(mdp, policy)
    dist: dict = {}
    for s, a in zip(*np.nonzero(ends), strict=True):
        nxt = int(mdp.next_state[s, a, 0])
        key = (env.prompts[env.state_prompt[s]], env.text(nxt) if nxt != s else None)
        dist[key] = dist.get(key, 0.0) + float(ends[s, a])
    return dist


def expected_return(mdp, policy) -> float:
    """``E_pi[sum_t r_t]`` (undiscounted), exactly."""
    pi = policy_matrix(mdp, policy)
    r = mdp.expected_reward()
    mu = visit_probabilities(mdp, pi)
    return float(np.sum(mu[:, None] * np.where(pi > 0.0, pi * r, 0.0)))


def sequence_kl(mdp, policy, ref) -> float:
    """``KL(pi || ref)`` between the distributions over whole responses (``inf`` when
    ``pi`` produces something ``ref`` never would)."""
    pi, q = policy_matrix(mdp, policy), policy_matrix(mdp, ref, "ref")
    mu = visit_probabilities(mdp, pi)
    on = (pi > 0.0) & (mu[:, None] > 0.0)
    if (on & (q == 0.0)).any():
        return np.inf
    terms = np.zeros_like(pi)
    terms[on] = pi[on] * (np.log(pi[on]) - np.log(q[on]))
    return float(np.sum(mu * terms.sum(axis=1)))


def kl_objective(mdp, policy, ref, beta: float) -> float:
    """``E_pi[r] - beta * KL(pi || ref)``: the RLHF objective (seed 000, section 16)."""
    beta = check_positive("beta", beta)
    return expected_return(mdp, policy) - beta * sequence_kl(mdp, policy, ref)


def path_returns(mdp) -> np.ndarray:
    """``[S, A]``: the return of the whole path that ends by taking ``a`` in ``s``
    (rewards before ``s`` plus the expected reward of ``(s, a)``)."""
    before = np.zeros(mdp.n_states)
    s, a, k = _tree_edges(mdp)
    order = np.argsort(s, kind="stable")
    for s_, a_, k_ in zip(s[order], a[order], k[order], strict=True):
        before[mdp.next_state[s_, a_, k_]] = before[s_] + mdp.reward[s_, a_, k_]
    return before[:, None] + mdp.expected_reward()


@dataclass
class KLOptimum:
    """The closed-form KL-regularised optimum over whole responses.

    ``endings[s, a]``: ``pi*(y)`` of the response ending with ``a`` in ``s``;
    ``value``: ``E_x[beta * log Z(x)]``, the optimal objective.
    """

    endings: np.ndarray
    value: float


def kl_optimum(mdp, ref, beta: float) -> KLOptimum:
    """``pi*(y|x) = ref(y|x) exp(r(x, y) / beta) / Z(x)`` by enumerating the responses
    (deterministic token MDPs: one prompt per start state, ``K = 1``)."""
    beta = check_positive("beta", beta)
    if (mdp.prob[:, :, 0] < 1.0).any():
        raise ValueError("kl_optimum enumerates responses of a deterministic token MDP; "
                         "use tabular.soft_value_iteration for stochastic MDPs")
    q = policy_matrix(mdp, ref, "ref")
    ref_ends = ending_probabilities(mdp, q)
    R = path_returns(mdp)
    roots = np.flatnonzero(mdp.start > 0.0)
    root_of = _root_of(mdp)
    endings = np.zeros_like(ref_ends)
    value = 0.0
    for root in roots:
        mask = (root_of[:, None] == root) & (ref_ends > 0.0)
        logw = np.log(ref_ends[mask]) + R[mask] / beta
        m = logw.max()
        log_z = m + np.log(np.exp(logw - m).sum())
        endings[mask] = mdp.start[root] * np.exp(logw - log_z)
        value += mdp.start[root] * beta * (log_z - np.log(mdp.start[root]))
    return KLOptimum(endings, float(value))


def _root_of(mdp) -> np.ndarray:
    root = np.arange(mdp.n_states)
    s, a, k = _tree_edges(mdp)
    order = np.argsort(s, kind="stable")
    for s_, a_, k_ in zip(s[order], a[order], k[order], strict=True):
        root[mdp.next_state[s_, a_, k_]] = root[s_]
    return root


# ------------------------------------------------------ the Bradley-Terry model
@njit(cache=True, inline="always")
def log_sigmoid(z):
    """``log sigma(z) = -log(1 + exp(-z))``, stable for either sign of ``z``."""
    if z >= 0.0:
        return -np.log1p(np.exp(-z))
    return z - np.log1p(np.exp(z))


@njit(cache=True, inline="always")
def sigmoid(z):
    if z >= 0.0:
        return 1.0 / (1.0 + np.exp(-z))
    e = np.exp(z)
    return e / (1.0 + e)


@njit(cache=True)
def _bradley_terry_loss(scores, winners, losers, counts):
    total, n = 0.0, 0.0
    for i in range(winners.shape[0]):
        total -= counts[i] * log_sigmoid(scores[winners[i]] - scores[losers[i]])
        n += counts[i]
    return total / n


@njit(cache=True)
def _bradley_terry_descent(scores, winners, losers, counts, steps, alpha):
    """Gradient descent on the mean of ``-log sigma(r_w - r_l)``: each pair raises the
    winner and lowers the loser by ``sigma(-(r_w - r_l))`` (seed 000, section 9)."""
    n = counts.sum()
    grad = np.zeros_like(scores)
    for _ in range(steps):
        grad[:] = 0.0
        for i in range(winners.shape[0]):
            g = counts[i] * sigmoid(scores[losers[i]] - scores[winners[i]]) / n
            grad[winners[i]] += g
            grad[losers[i]] -= g
        for j in range(scores.shape[0]):
            scores[j] += alpha * grad[j]


def bradley_terry_loss(scores, winners, losers, counts=None) -> float:
    """Mean ``-log sigma(r(x, y_w) - r(x, y_l))`` over preference pairs (indices into
    ``scores``)."""
    winners = np.asarray(winners, dtype=np.int64)
    losers = np.asarray(losers, dtype=np.int64)
    counts = np.ones(len(winners)) if counts is None else np.asarray(counts, dtype=np.float64)
    return float(_bradley_terry_loss(np.asarray(scores, dtype=np.float64), winners, losers,
                                     counts))


def _preference_arrays(preferences):
    """``(count, prompt, winner, loser)`` or ``(prompt, winner, loser)`` tuples -> index arrays
    over the distinct ``(prompt, response)`` pairs."""
    keys: dict = {}
    winners, losers, counts = [], [], []
    for pref in preferences:
        count, x, yw, yl = pref if len(pref) == 4 else (1, *pref)
        if yw == yl:
            raise ValueError(f"preference ({x!r}, {yw!r}, {yl!r}) compares a response "
                             "with itself")
        winners.append(keys.setdefault((x, yw), len(keys)))
        losers.append(keys.setdefault((x, yl), len(keys)))
        counts.append(float(count))
    if not counts:
        raise ValueError("no preferences given")
    return (keys, np.array(winners, dtype=np.int64), np.array(losers, dtype=np.int64),
            np.array(counts))


@dataclass
class RewardModel:
    """A tabular Bradley-Terry reward model ``r(x, y)``, one score per response seen.

    ``score(prompt, response)``; a response never compared gets ``default`` (0, the
    average of the reference responses after normalisation). ``loss`` is the mean
    negative log-likelihood of the training preferences.
    """

    scores: dict
    loss: float
    default: float = 0.0

    def score(self, prompt: str, response: str) -> float:
        return self.scores.get((prompt, response), self.default)

    def __call__(self, prompt: str, response: str) -> float:
        return self.score(prompt, response)


def train_reward_model(preferences, *, reference=None, steps: int = 20_000,
                       alpha: float = 5.0) -> RewardModel:
    """Fit ``r`` by maximum likelihood under Bradley-Terry, ``P(y_w > y_l) = sigma(r_w - r_l)``.

    ``preferences``: ``(prompt, y_w, y_l)`` or ``(count, prompt, y_w, y_l)`` triples.
    Only score differences within a prompt are identified (any shift ``c(x)`` leaves
    the loss unchanged), so the scores are normalised as InstructGPT did: per prompt,
    the ``reference`` responses (a list of ``(prompt, response)``; default: every
    response compared) average 0.
    """
    steps = check_positive_int("steps", steps)
    alpha = check_positive("alpha", alpha)
    keys, winners, losers, counts = _preference_arrays(preferences)
    scores = np.zeros(len(keys))
    _bradley_terry_descent(scores, winners, losers, counts, steps, alpha)
    loss = bradley_terry_loss(scores, winners, losers, counts)
    reference = list(keys) if reference is None else [tuple(r) for r in reference]
    table = dict(zip(keys, scores, strict=True))
    for x in {k[0] for k in keys}:
        refs = [table[r] for r in reference if r[0] == x and r in table]
        if not refs:
            raise ValueError(f"no reference response of prompt {x!r} was compared: "
                             "its score level cannot be fixed")
        shift = float(np.mean(refs))
        for k in table:
            if k[0] == x:
                table[k] -= shift
    return RewardModel({k: float(v) for k, v in table.items()}, loss)


@njit(cache=True)
def _sample_bradley_terry(scores, n, rng):
    """``wins[i, j]``: how often ``i`` beat ``j`` in ``n`` comparisons of uniformly drawn
    distinct pairs, each won by ``i`` with probability ``sigma(r_i - r_j)``."""
    k = scores.shape[0]
    wins = np.zeros((k, k), dtype=np.int64)
    for _ in range(n):
        i = randint(rng, k)
        j = randint(rng, k - 1)
        j += j >= i
        if uniform(rng) < sigmoid(scores[i] - scores[j]):
            wins[i, j] += 1
        else:
            wins[j, i] += 1
    return wins


def sample_preferences(prompt: str, responses: Sequence[str], scores, n: int, *,
                       seed: int | None = 0) -> list[tuple[int, str, str, str]]:
    """``n`` labeller comparisons simulated from a Bradley-Terry model of known ``scores``,
    as ``(count, prompt, winner, loser)`` tuples (one per ordered pair that occurred)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (len(responses),) or len(responses) < 2:
        raise ValueError(f"scores must give one number for each of the (at least 2) "
                         f"responses, got shape {scores.shape} for {len(responses)} responses")
    wins = _sample_bradley_terry(scores, check_positive_int("n", n), seed_states(seed, 1)[0])
    return [(int(wins[i, j]), prompt, responses[i], responses[j])
            for i, j in zip(*np.nonzero(wins), strict=True)]


# ----------------------------------------------------------------------- DPO
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


# ---------------------------------------------------------------------- GRPO
@njit(cache=True, inline="always")
def group_relative_advantages(returns, normalise, out):
    """``A_i = R_i - mean(R)``, divided by ``std(R)`` when ``normalise``: the critic-free
    advantage of GRPO (Shao et al., 2024, section 4.1.2). A group whose returns agree to
    rounding (``std <= 1e-12 (1 + |mean|)``) is only centred, never divided by ~0."""
    G = returns.shape[0]
    mean = returns.sum() / G
    var = 0.0
    for i in range(G):
        out[i] = returns[i] - mean
        var += out[i] * out[i]
    std = np.sqrt(var / G)
    if normalise and std > 1e-12 * (1.0 + abs(mean)):
        for i in range(G):
            out[i] /= std


@njit(cache=True)
def _grpo_run(env, shaping, row_of_state, iterations, group_size, alpha, normalise, max_steps,
              rng, theta, returns, lengths):
    """One run: each iteration samples a prompt, ``group_size`` responses to it, and takes
    one ascent step on ``(1/G) sum_i A_i sum_t grad log pi(a_t|s_t)`` with every token of
    response ``i`` sharing its advantage."""
    S, A = env.start_cdf.shape[0], theta.shape[1]
    states = np.empty((group_size, max_steps + 1), dtype=np.int64)
    actions = np.empty((group_size, max_steps), dtype=np.int64)
    dones = np.empty((group_size, max_steps), dtype=np.bool_)
    rewards, log_pis = np.empty((group_size, max_steps)), np.empty((group_size, max_steps))
    T = np.empty(group_size, dtype=np.int64)
    shaped, advantage = np.empty(group_size), np.empty(group_size)
    probs, log_probs, grad = np.empty(A), np.empty(A), np.empty(A)
    direction = np.zeros_like(theta)
    prompt_cdf = np.empty(S)
    for it in range(iterations):
        s0 = sample_start(env, rng)
        for s in range(S):  # the group shares its prompt
            prompt_cdf[s] = 1.0 if s >= s0 else 0.0
        group_env = ModelArrays(env.next_state, env.prob, env.reward, env.done, prompt_cdf)
        for i in range(group_size):
            T[i], returns[it * group_size + i] = _sample_episode(
                group_env, shaping, theta, row_of_state, max_steps, rng, states[i], actions[i],
                rewards[i], dones[i], log_pis[i], probs, log_probs)
            lengths[it * group_size + i] = T[i]
            shaped[i] = rewards[i, : T[i]].sum()
        group_relative_advantages(shaped, normalise, advantage)
        direction[:] = 0.0
        for i in range(group_size):
            for t in range(T[i]):
                row = row_of_state[states[i, t]]
                softmax(theta[row], probs)
                grad_log_softmax(probs, actions[i, t], grad)
                for b in range(A):
                    direction[row, b] += advantage[i] * grad[b] / group_size
        step = schedule_value(alpha, it + 1)
        for row in range(theta.shape[0]):
            ascend(theta[row], direction[row], step)


@njit(cache=True, parallel=True)
def _grpo(env, shaping, row_of_state, iterations, group_size, alpha, normalise, max_steps,
          rng_states, logits, returns, lengths):
    for run in prange(rng_states.shape[0]):
        _grpo_run(env, shaping, row_of_state, iterations, group_size, alpha, normalise,
                  max_steps, rng_states[run], logits[run], returns[run], lengths[run])


def grpo(mdp, policy: SoftmaxPolicy | None = None, *, iterations: int = 500,
         group_size: int = 8, alpha=0.5, normalise: bool = True,
         ref_policy: SoftmaxPolicy | None = None, kl_coef: float = 0.0,
         reward_floor: float | None = None, max_steps: int = 1000, seed: int | None = 0,
         runs: int = 1) -> PolicyGradientResult:
    """Group relative policy optimisation: policy gradient with no critic.

    Each iteration draws a prompt, samples ``group_size`` responses, and uses each
    response's return relative to its group, ``(R_i - mean R) / std R``
    (``normalise=False``: ``R_i - mean R``), as the advantage of all its tokens
    (outcome supervision; Shao et al., 2024). The KL penalty to ``ref_policy`` is
    folded into the per-token reward as in :func:`tabular.reinforce`, so at the
    KL-regularised optimum every response of a deterministic token MDP has the same
    return ``beta log Z(x)`` and every advantage is 0. ``alpha`` is a number or a
    :mod:`tabular.schedules` schedule over iterations. Returns the learners' common
    result (``episode_returns`` without the KL term, ``iterations * group_size``
    episodes).
    """
    group_size = check_positive_int("group_size", group_size)
    if group_size < 2:
        raise ValueError(f"group_size must be >= 2 (a group needs a mean), got {group_size}")
    setup = _setup(mdp, policy, ref_policy, kl_coef, reward_floor, 1.0,
                   check_positive_int("iterations", iterations) * group_size, max_steps, runs,
                   seed)
    logits, _, returns, lengths = setup.outputs()
    _grpo(setup.env, setup.shaping, setup.policy.row_of_state, int(iterations), group_size,
          _step_size("alpha", alpha), bool(normalise), setup.max_steps, setup.rng_states,
          logits, returns, lengths)
    return setup.result(logits, None, returns, lengths)
