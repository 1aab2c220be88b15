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
    stack = np.flatnonzero(targets)
    stack = np.concatenate((stack, np.empty(targets.shape[0], dtype=np.int64)))
    top = np.count_nonzero(targets)
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
    queue = np.flatnonzero(first_action >= 0)
    queue = np.concatenate((queue, np.empty(first_action.shape[0], dtype=np.int64)))
    head, tail = 0, np.count_nonzero(first_action >= 0)
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
