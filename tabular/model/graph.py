"""Graph utilities over a model's transitions: reachability, and trees of token MDPs.

Reachability: the outcome slots of a model (``[S, A, K]``, a bool mask picking some
of them) are the edges of a graph over states; :func:`reaches` finds the states
with a path into a target set (which states can end an episode, which ones a
policy dooms to a ``-inf`` reward), :func:`actions_toward` an action per state
that leads there. Both run a numba search over edges grouped by destination.

Trees: a token MDP is a tree numbered breadth-first (every state is reached by
one path, a prefix has a smaller id than its continuations), so sums over it run
forwards in state order.
"""

from __future__ import annotations

import numpy as np

from tabular._numba import graph as graph_kernels


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


def tree_levels(mdp) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The continuing transitions ``(s, a, k)`` of the tree MDP ``mdp``, one group per
    depth of ``s``, from the roots down: a state's own transition in comes a group
    before its transitions out, so a quantity pushed down (or, in reverse, summed up)
    the tree takes one vectorised step per level."""
    s, a, k = tree_edges(mdp)
    child = mdp.next_state[s, a, k]
    into = np.bincount(child, minlength=mdp.n_states)
    if (into > 1).any():
        x = int(np.argmax(into > 1))
        raise ValueError(f"state {mdp.state_name(x)} is reached by {into[x]} transitions: "
                         "exact sequence sums need a tree MDP (one path to each state)")
    parent = np.arange(mdp.n_states)
    parent[child] = s
    # pointer jumping: each pass doubles how far up every state has counted its depth
    depth, up = (parent != np.arange(mdp.n_states)).astype(np.int64), parent
    while (up != up[up]).any():
        depth, up = depth + depth[up], up[up]
    level = depth[s]
    order = np.argsort(level, kind="stable")
    cuts = np.flatnonzero(np.diff(level[order])) + 1
    return [(s[i], a[i], k[i]) for i in np.split(order, cuts)] if s.size else []


def tree_roots(mdp) -> np.ndarray:
    """``[S]``: the root (prompt state) each state of a tree MDP descends from."""
    root = np.arange(mdp.n_states)
    for s, a, k in tree_levels(mdp):
        root[mdp.next_state[s, a, k]] = root[s]
    return root


# --------------------------------------------------------------- reachability
def edges(next_state, marked):
    """``(source, action, destination)`` int arrays of the outcome slots marked in bool
    ``marked [S, A, K]`` (e.g. ``(prob > 0) & ~done``: the transitions that continue)."""
    s, a, _ = np.nonzero(marked)
    return s, a, next_state[marked]


def by_destination(destination, n_states: int):
    """Edges grouped by destination (CSR): ``order[indptr[t]:indptr[t + 1]]`` are the
    indices of the edges into state ``t``."""
    order = np.argsort(destination, kind="stable")
    return order, np.searchsorted(destination[order], np.arange(n_states + 1))


def reaches(next_state, marked, targets) -> np.ndarray:
    """Bool ``[S]``: the states with a path of marked outcome slots (bool ``[S, A, K]``)
    into ``targets`` (bool ``[S]``), the targets included."""
    src, _, dst = edges(next_state, marked)
    order, indptr = by_destination(dst, targets.shape[0])
    return graph_kernels.backward_closure(indptr, src[order], targets.astype(np.bool_))


def actions_toward(next_state, marked, first_action) -> np.ndarray:
    """Int ``[S]``: for each state, an action whose marked outcome slot leads one step closer
    (breadth first, backwards) to the states with ``first_action[s] >= 0``, which keep
    that action; ``-1`` where those states are out of reach."""
    src, act, dst = edges(next_state, marked)
    order, indptr = by_destination(dst, first_action.shape[0])
    return graph_kernels.backward_bfs_actions(indptr, src[order], act[order],
                                              first_action.astype(np.int64))


def can_end(mdp) -> np.ndarray:
    """Bool ``[S]``: the states from which some policy ends the episode with positive
    probability (the others can only loop for ever, a problem when ``gamma = 1``)."""
    possible = mdp.prob > 0.0
    exits = (possible & mdp.done).any(axis=(1, 2))
    return reaches(mdp.next_state, possible & ~mdp.done, exits)


def safe_actions(mdp, gamma: float) -> np.ndarray:
    """Int64 ``[S]``: per state the first action that keeps ``-inf`` rewards impossible
    forever (action 0 where none does), for discount ``gamma``.

    A pair is safe when none of its outcomes pays ``-inf`` and each one either ends
    the episode or lands in a state with a safe action (with ``gamma = 0`` only the
    immediate reward counts); the greatest fixed point of that rule.
    """
    next_state, prob, reward, done = mdp.next_state, mdp.prob, mdp.reward, mdp.done
    possible = prob > 0.0
    harmless = ~possible | (reward > -np.inf)
    settled = ~possible | done | (gamma == 0.0)
    safe_state = np.ones(mdp.n_states, dtype=bool)
    while True:
        safe_pair = (harmless & (settled | safe_state[next_state])).all(axis=2)
        still_safe = safe_pair.any(axis=1)
        if np.array_equal(still_safe, safe_state):
            return safe_pair.argmax(axis=1).astype(np.int64)
        safe_state = still_safe
