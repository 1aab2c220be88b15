"""Process rewards: credit for every step of a response, not only for the outcome.

An outcome reward pays ``R(x, y)`` when the response ends; a process reward pays each
step as it is taken. The process rewards here are potential-based (Ng, Harada and
Russell, 1999): a step from prefix ``s`` to ``s'`` pays ``Phi(s') - Phi(s)``, with
``Phi = 0`` once the response has ended, on top of the outcome. Along a whole response
they add up to ``-Phi(x)``, a constant per prompt, so every policy's return changes by
that constant: the optimal policy and the KL-regularised optimum ``pi*`` do not move,
and neither does any policy's KL or ranking. What changes is the credit: with
``Phi(s) = E_ref[R | s]``, the value of a prefix under a reference policy (a process
reward model that scores partial responses), the return from step ``t`` on is
``R - Phi(s_t)``: each token is judged against what was expected before it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..checks import policy_matrix
from ..dp import policy_evaluation
from ..graph import tree_edges
from ..mdp import as_mdp


def prefix_values(mdp, policy) -> np.ndarray:
    """``[S]``: the expected return from each prefix (state) of the token MDP ``mdp``
    under ``policy``, ``E_pi[R | s]``, exactly (gamma = 1 on the tree)."""
    mdp = as_mdp(mdp)
    return policy_evaluation(mdp, policy_matrix(mdp, policy), 1.0).V


def process_rewards(mdp, potential) -> object:
    """The token MDP ``mdp`` with the potential-based process rewards of ``potential``
    (``[S]``, finite: e.g. :func:`prefix_values` of a reference policy) added to its
    own: a step ``s -> s'`` pays ``Phi(s') - Phi(s)`` more (``Phi = 0`` after the last
    step). Returns a new :class:`~tabular.TabularMDP` with the same optimum."""
    mdp = as_mdp(mdp)
    phi = np.asarray(potential, dtype=np.float64)
    if phi.shape != (mdp.n_states,) or not np.isfinite(phi).all():
        raise ValueError(f"potential must be {mdp.n_states} finite numbers, one per state, "
                         f"got shape {list(phi.shape)}")
    tree_edges(mdp)  # a tree: every step moves forwards
    after = np.where(mdp.done, 0.0, phi[mdp.next_state])
    bonus = np.where(mdp.prob > 0.0, after - phi[:, None, None], 0.0)
    return dataclasses.replace(mdp, reward=mdp.reward + bonus)
