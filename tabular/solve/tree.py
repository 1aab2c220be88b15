"""Exact sequence-level quantities of a token MDP and its KL-regularised optimum.

The other RLHF learners are :func:`tabular.reinforce`, :func:`tabular.actor_critic`
and :func:`tabular.ppo`, used as they are: the KL penalty is their ``beta``.

A token MDP is a tree (every state is reached by one path), so sequence-level
quantities are exact sums over it, computed by one forward pass in breadth-first
order (a prefix has a smaller id than its continuations):

- the probability ``mu(s)`` that generation passes through state ``s``;
- ``E_pi[r] = sum_s mu(s) sum_a pi(a|s) r(s, a)``;
- ``KL(pi || pi_ref) = sum_s mu(s) KL(pi(.|s) || pi_ref(.|s))`` over whole
  responses (the chain rule of the KL divergence);
- the KL-regularised optimum ``pi*(y|x) = pi_ref(y|x) exp(r(x, y) / beta) / Z(x)``
  (Ziegler et al., 2019; Rafailov et al., 2023, eq. 4) with value
  ``beta * log Z(x)``; :func:`tabular.soft_value_iteration` reaches the same
  policy token by token.

Every ``policy`` and ``ref_policy`` argument takes any policy form: greedy
``int [S]``, stochastic ``[S, A]`` or a :class:`~tabular.SoftmaxPolicy`. ``mdp`` is a
tree MDP numbered breadth-first (a token MDP's model, ``env.to_mdp()``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from tabular.checks import check_positive, policy_matrix
from tabular.model.graph import tree_levels, tree_roots
from tabular.model.mdp import TabularMDP, as_mdp
from tabular.model.outcomes import n_outcomes, outcome_prob, outcome_state
from tabular.model.policy import SoftmaxPolicy, as_softmax_policy
from tabular.results import short_repr
from tabular.rules.policy_gradient import softmax
from tabular.types import PolicyLike, TokenEnv


def visit_probabilities(mdp: TabularMDP, policy: PolicyLike) -> np.ndarray:
    """``mu [S]``: the probability that an episode under ``policy`` passes through each
    state of the tree MDP ``mdp``."""
    mdp = as_mdp(mdp)
    return _visits(mdp, policy_matrix(mdp, policy))


def _visits(mdp, pi) -> np.ndarray:
    """:func:`visit_probabilities` of a checked ``[S, A]`` policy matrix ``pi``."""
    mu = mdp.start.copy()
    for s, a, k in tree_levels(mdp):
        mu[mdp.next_state[s, a, k]] += mu[s] * pi[s, a] * mdp.prob[s, a, k]
    return mu


@njit(cache=True)
def _softmax_endings(model, logits, row_of_state, start, out):
    """``out [S, A]``: :func:`ending_probabilities` of the softmax policy ``(logits,
    row_of_state)``, in one pass over the states in order (numbered forwards, a state has
    all its probability before its turn), no ``[S, A]`` temporary; returns the first
    reached state with a continuing transition backwards (-1: none)."""
    S, A = out.shape
    mu = start.copy()
    pi = np.empty(A)
    for s in range(S):
        if mu[s] == 0.0:
            continue
        softmax(logits[row_of_state[s]], pi)
        for a in range(A):
            w = mu[s] * pi[a]
            for k in range(n_outcomes(model)):
                p = outcome_prob(model, s, a, k)
                if w == 0.0 or p == 0.0:
                    continue
                nxt, done = outcome_state(model, s, a, k)
                if done:
                    out[s, a] += w * p
                elif nxt <= s:
                    return s
                else:
                    mu[nxt] += w * p
    return -1


def ending_probabilities(mdp: TabularMDP, policy: PolicyLike) -> np.ndarray:
    """``[S, A]``: the probability that an episode of ``mdp`` under ``policy`` ends by
    taking ``a`` in ``s``.

    In a token MDP each finished response is one ending ``(s, a)``, so this is the
    exact distribution over responses (plus forbidden-token endings). A
    :class:`~tabular.SoftmaxPolicy` is summed by a kernel straight from its logits.
    """
    mdp = as_mdp(mdp)
    if isinstance(policy, SoftmaxPolicy):
        policy = as_softmax_policy(mdp, policy)  # checks that it covers the MDP
        out = np.zeros((mdp.n_states, mdp.n_actions))
        back = _softmax_endings(mdp.arrays, policy.logits, policy.row_of_state, mdp.start,
                                out)
        if back >= 0:
            tree_levels(mdp)  # raises, naming the transition
        return out
    pi = policy_matrix(mdp, policy)
    ends = np.where(mdp.done, mdp.prob, 0.0).sum(axis=2)
    return _visits(mdp, pi)[:, None] * pi * ends


def as_token_env(env: object, name: str = "env") -> TokenEnv:
    """``env`` (a Gymnasium wrapper unwrapped) if it is a token MDP, such as
    :class:`tabular.envs.TokenMDP`; a ``TypeError`` naming ``name`` otherwise (a
    :class:`~tabular.TabularMDP` is a token MDP's model, without its prompts and text)."""
    base = getattr(env, "unwrapped", env)
    if all(hasattr(base, a) for a in ("to_mdp", "prompts", "vocab", "state_prompt", "text")):
        return base  # type: ignore[return-value]  # duck-typed TokenEnv
    hint = (": pass the token env whose to_mdp() this is" if isinstance(env, TabularMDP)
            else "")
    raise TypeError(f"{name} must be a token MDP (tabular.envs.TokenMDP, or a tabzoo token "
                    f"env from gymnasium.make), got {type(env).__name__}{hint}")


def response_distribution(mdp: TokenEnv, policy: PolicyLike) -> dict[tuple[str, str], float]:
    """``P(x, y)`` of every finished response of a token MDP under ``policy``, by
    enumeration, as ``{(prompt, response): probability}``; endings on a forbidden token
    are collected under the response ``None``.

    ``mdp``: a token MDP (duck-typed like ``envs.TokenMDP``: ``to_mdp()``, ``prompts``,
    ``state_prompt``, ``text(s)``).
    """
    env = as_token_env(mdp, "mdp")
    model = env.to_mdp()
    ends = ending_probabilities(model, policy)
    dist: dict = {}
    for s, a in zip(*np.nonzero(ends), strict=True):
        nxt = int(model.next_state[s, a, 0])
        key = (env.prompts[env.state_prompt[s]], env.text(nxt) if nxt != s else None)
        dist[key] = dist.get(key, 0.0) + float(ends[s, a])
    return dist


def expected_return(mdp: TabularMDP, policy: PolicyLike) -> float:
    """``E_pi[sum_t r_t]``, the undiscounted return of ``policy`` on the tree MDP
    ``mdp``, exactly."""
    mdp = as_mdp(mdp)
    pi = policy_matrix(mdp, policy)
    r = mdp.expected_reward()
    mu = _visits(mdp, pi)
    return float(np.sum(mu[:, None] * np.where(pi > 0.0, pi * r, 0.0)))


def sequence_kl(mdp: TabularMDP, policy: PolicyLike, ref_policy: PolicyLike) -> float:
    """``KL(pi || pi_ref)`` between the distributions over whole responses of ``policy``
    and ``ref_policy`` on the tree MDP ``mdp`` (``inf`` when ``policy`` produces
    something ``ref_policy`` never would)."""
    mdp = as_mdp(mdp)
    pi, q = policy_matrix(mdp, policy), policy_matrix(mdp, ref_policy, "ref_policy")
    mu = _visits(mdp, pi)
    on = (pi > 0.0) & (mu[:, None] > 0.0)
    if (on & (q == 0.0)).any():
        return np.inf
    terms = np.zeros_like(pi)
    terms[on] = pi[on] * (np.log(pi[on]) - np.log(q[on]))
    return float(np.sum(mu * terms.sum(axis=1)))


def kl_objective(mdp: TabularMDP, policy: PolicyLike, ref_policy: PolicyLike, beta: float) -> float:
    """``E_pi[r] - beta * KL(pi || pi_ref)``: the KL-regularised RLHF objective (Ziegler
    et al., 2019; Ouyang et al., 2022, eq. 2 without its pre-training term) of
    ``policy`` on the tree MDP ``mdp``, against ``ref_policy``, with KL coefficient
    ``beta > 0``."""
    mdp = as_mdp(mdp)
    beta = check_positive("beta", beta)
    return expected_return(mdp, policy) - beta * sequence_kl(mdp, policy, ref_policy)


def path_returns(mdp: TabularMDP) -> np.ndarray:
    """``[S, A]``: the return of the whole path of the tree MDP ``mdp`` that ends by
    taking ``a`` in ``s`` (rewards before ``s`` plus the expected reward of ``(s, a)``)."""
    mdp = as_mdp(mdp)
    before = np.zeros(mdp.n_states)
    for s, a, k in tree_levels(mdp):
        before[mdp.next_state[s, a, k]] = before[s] + mdp.reward[s, a, k]
    return before[:, None] + mdp.expected_reward()


@dataclass(frozen=True, eq=False, repr=False)
class KLOptimum:
    """The closed-form KL-regularised optimum over whole responses.

    Attributes
    ----------
    endings : ``[S, A]``, ``P*(x) pi*(y|x)`` of the response ``y`` that ends with ``a``
        in ``s`` (the start probability of its prompt times ``pi*``; 0 elsewhere).
    value : ``E_x[beta * log Z(x)]``, the optimal objective ``E[r] - beta * KL``.
    """

    __repr__ = short_repr

    endings: np.ndarray
    value: float


def kl_optimum(mdp: TabularMDP, ref_policy: PolicyLike, beta: float) -> KLOptimum:
    """``pi*(y|x) = pi_ref(y|x) exp(r(x, y) / beta) / Z(x)`` by enumerating the responses
    of ``mdp`` (a deterministic token MDP: one prompt per start state), with reference
    ``ref_policy`` and KL coefficient ``beta > 0`` (Rafailov et al., 2023, eq. 4)."""
    mdp = as_mdp(mdp)
    beta = check_positive("beta", beta)
    if (mdp.prob[:, :, 0] < 1.0).any():
        raise ValueError("kl_optimum enumerates responses of a deterministic token MDP; "
                         "use tabular.soft_value_iteration for stochastic MDPs")
    ref_ends = ending_probabilities(mdp, as_softmax_policy(mdp, ref_policy, "ref_policy")
                                    if isinstance(ref_policy, SoftmaxPolicy)
                                    else policy_matrix(mdp, ref_policy, "ref_policy"))
    R = path_returns(mdp)
    roots = np.flatnonzero(mdp.start > 0.0)
    root_of = tree_roots(mdp)
    endings = np.zeros_like(ref_ends)
    value = 0.0
    s, a = np.nonzero(ref_ends > 0.0)  # the reference's responses
    for root in roots:
        mine = root_of[s] == root
        logw = np.log(ref_ends[s[mine], a[mine]]) + R[s[mine], a[mine]] / beta
        m = logw.max()
        log_z = m + np.log(np.exp(logw - m).sum())
        endings[s[mine], a[mine]] = mdp.start[root] * np.exp(logw - log_z)
        value += mdp.start[root] * beta * (log_z - np.log(mdp.start[root]))
    return KLOptimum(endings, float(value))
