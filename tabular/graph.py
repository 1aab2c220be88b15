"""Graph utilities over a model's transitions: trees of token MDPs.

A token MDP is a tree numbered breadth-first (every state is reached by one path,
a prefix has a smaller id than its continuations), so sums over it run forwards
in state order.
"""

from __future__ import annotations

import numpy as np


def tree_edges(mdp):
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


def tree_roots(mdp) -> np.ndarray:
    """``[S]``: the root (prompt state) each state of a tree MDP descends from."""
    root = np.arange(mdp.n_states)
    s, a, k = tree_edges(mdp)
    order = np.argsort(s, kind="stable")
    for s_, a_, k_ in zip(s[order], a[order], k[order], strict=True):
        root[mdp.next_state[s_, a_, k_]] = root[s_]
    return root
