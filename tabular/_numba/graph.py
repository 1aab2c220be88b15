"""Numba kernels of graph searches over a model's transitions (see :mod:`tabular.model.graph`).

Edges come in CSR order by destination: the edges into state ``t`` are
``indptr[t]:indptr[t + 1]``, so a search runs backwards from a set of states.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def backward_closure(indptr, sources, targets):
    """Bool ``[S]``: the states with a path into ``targets`` (bool ``[S]``), targets included.

    ``sources[indptr[t]:indptr[t + 1]]`` are the states with an edge into ``t``.
    """
    reached = targets.copy()
    stack, top = _seeds(targets)
    while top > 0:
        top -= 1
        t = stack[top]
        for e in range(indptr[t], indptr[t + 1]):
            s = sources[e]
            if not reached[s]:
                reached[s] = True
                stack[top] = s
                top += 1
    return reached


@njit(cache=True)
def backward_bfs_actions(indptr, sources, actions, first_action):
    """Breadth-first search backwards from the states with ``first_action[s] >= 0``.

    ``sources[e]`` reaches the edge's destination by ``actions[e]``. A state met
    first through an edge takes that edge's action, so each state's action leads
    one level closer to the seeds; ``-1`` where the seeds are out of reach.
    """
    chosen = first_action.copy()
    queue, tail = _seeds(first_action >= 0)
    head = 0
    while head < tail:
        t = queue[head]
        head += 1
        for e in range(indptr[t], indptr[t + 1]):
            s = sources[e]
            if chosen[s] < 0:
                chosen[s] = actions[e]
                queue[tail] = s
                tail += 1
    return chosen


@njit(cache=True)
def _seeds(is_seed):
    """``(states, n)``: room for every state (each enters a search at most once), the
    first ``n`` the seeds (``is_seed``, bool ``[S]``) in increasing order."""
    # a loop, not flatnonzero + concatenate: those cost every first call compiles of their own
    states = np.empty(is_seed.shape[0], dtype=np.int64)
    n = 0
    for s in range(is_seed.shape[0]):
        if is_seed[s]:
            states[n] = s
            n += 1
    return states, n
