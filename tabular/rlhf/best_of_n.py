"""Best-of-N sampling, exactly: draw N responses from a policy, keep the one the reward
model scores highest (test-time scaling without training).

With the responses of a prompt ranked by reward, the best of ``N`` independent draws
has a reward at most ``r`` with probability ``F(r)^N``, ``F`` the policy's distribution
function of the reward. So a reward level ``r`` wins with probability
``F(r)^N - F(r-)^N``, shared among the responses of that level in proportion to their
probability (ties are broken uniformly among the tied draws, and by symmetry the
winner of a level is distributed as one draw conditioned on that level).

Its KL to the policy is often quoted as ``log N - (N - 1) / N``; that is exact only
when every response has vanishing probability, and an upper bound otherwise (Beirami
et al., 2024): :class:`BestOfN` reports both.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tabular.checks import MAX_COUNT, check_positive_int, first_bad, policy_matrix, real_array
from tabular.model.graph import tree_levels, tree_roots
from tabular.model.mdp import TabularMDP, as_mdp
from tabular.rlhf.results import BestOfN
from tabular.solve.tree import ending_probabilities, path_returns
from tabular.types import PolicyLike


def best_of_n(mdp: TabularMDP, policy: PolicyLike, n: int, reward: npt.ArrayLike | None = None
              ) -> BestOfN:
    """The exact distribution of the best of ``n`` responses drawn from ``policy`` on the
    token MDP ``mdp`` (deterministic, numbered breadth-first), ranked by ``reward``:
    ``[S, A]`` scores of the response ending with ``(s, a)`` (default ``None``: the
    whole-path return of ``mdp``, e.g. a reward model's token MDP).
    """
    n = check_positive_int("n", n, high=MAX_COUNT)
    mdp = as_mdp(mdp)
    if (mdp.prob[:, :, 0] < 1.0).any():
        raise ValueError("best_of_n enumerates the responses of a deterministic token MDP")
    pi = policy_matrix(mdp, policy)
    ends = ending_probabilities(mdp, pi)
    scores = path_returns(mdp) if reward is None else real_array("reward", reward)
    if scores.shape != ends.shape:
        raise ValueError(f"reward must be [S, A] = {list(ends.shape)}, got {list(scores.shape)}")
    bad = (ends > 0.0) & ~(scores < np.inf)  # NaN and +inf; a -inf response ranks last
    if bad.any():
        raise ValueError(f"reward{first_bad(bad)} = {scores[bad][0]} is the score of a response "
                         "the policy produces: NaN and +inf cannot be ranked and averaged")
    root_of = tree_roots(mdp)
    endings = np.zeros_like(ends)
    kl = 0.0
    produced = np.nonzero(ends > 0.0)
    for root in np.flatnonzero(mdp.start > 0.0):
        mine = root_of[produced[0]] == root
        s, a = produced[0][mine], produced[1][mine]
        p = ends[s, a] / mdp.start[root]
        order = np.argsort(scores[s, a], kind="stable")
        levels, first = np.unique(scores[s, a][order], return_index=True)
        below = np.concatenate(([0.0], np.cumsum(p[order])))  # F(r-) at each sorted slot
        up_to = np.append(below[first[1:]], 1.0)  # F(r) at the top of each level
        win = up_to**n - below[first] ** n  # P(the best reward is this level)
        level_of = np.searchsorted(levels, scores[s, a])
        mass = np.zeros(len(levels))
        np.add.at(mass, level_of, p)
        q = win[level_of] * p / mass[level_of]
        endings[s, a] = mdp.start[root] * q
        on = q > 0.0
        kl += mdp.start[root] * float(np.sum(q[on] * np.log(q[on] / p[on])))
    value = float(np.sum(np.where(endings > 0.0, endings * scores, 0.0)))
    return BestOfN(endings, token_policy(mdp, endings, pi), kl,
                   float(np.log(n) - (n - 1) / n), value)


def token_policy(mdp, endings, fallback) -> np.ndarray:
    """``[S, A]``: the policy of the tree MDP ``mdp`` whose responses are distributed as
    ``endings``, ``pi(a|s) = (endings[s, a] + M(s')) / M(s)`` with ``M`` the mass of the
    responses below a state; ``fallback`` where ``M(s) = 0``."""
    through = endings.copy()  # [S, A]: the mass of the responses through (s, a)
    below = through.sum(axis=1)  # final for the states without continuations
    for s, a, k in reversed(tree_levels(mdp)):  # the deepest level first
        through[s, a] += below[mdp.next_state[s, a, k]]
        parents = np.unique(s)
        below[parents] = through[parents].sum(axis=1)
    pi = fallback.copy()
    reached = below > 0.0
    pi[reached] = through[reached] / below[reached, None]
    return pi
