"""What a planning agent remembers (Sutton & Barto, chapter 8), as arrays for kernels.

- :class:`LearnedModel`: the model learned from real transitions (step (e) of the
  Tabular Dyna-Q box, section 8.2): the last outcome of each state-action pair (a
  deterministic model), or every distinct outcome with the number of times it was
  observed (a sample model of a stochastic environment); and the pairs and states
  tried so far, which planning draws from.
- :class:`PriorityQueue`: an array-based binary max-heap of state-action pairs
  (prioritized sweeping, section 8.4). A pair is queued at most once: queueing it
  again keeps the higher of its two priorities (the book's rule), by raising the key
  in place, so no stale entry is ever popped.
- :class:`Predecessors`: for each state, the pairs that the deterministic model
  predicts lead to it (the predecessor lists of section 8.4), as doubly linked lists
  over the pairs, so a pair moves in O(1) when its predicted successor changes.

A pair ``(s, a)`` is stored as the index ``s * A + a``; ``-1`` marks "no entry" in
the index arrays of the queue and of the lists.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.rng import randint

# --------------------------------------------------------------------- learned model


class LearnedModel(NamedTuple):
    """``Model(s, a)``, learned from samples.

    ``next_state`` (int64), ``reward``, ``done`` (bool) ``[S, A, K]``: the outcomes of
    ``(s, a)`` kept so far, ``outcomes[s, a]`` of them, outcome ``j`` observed
    ``count[s, a, j]`` times (a deterministic model keeps one outcome, the last);
    ``tries`` ``[S, A]``: how often ``(s, a)`` was taken, ``last_try`` ``[S, A]`` the
    time step of its last try (0: never); ``pairs`` ``[S * A]``: the
    pairs taken, in the order of their first try, ``n_pairs[0]`` of them; ``states``
    ``[S]``: the states acted from, ``n_states[0]`` of them.
    """

    next_state: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    count: np.ndarray  # type: ignore[assignment]  # shadows tuple.count; kernels read it
    outcomes: np.ndarray
    tries: np.ndarray
    last_try: np.ndarray
    pairs: np.ndarray
    n_pairs: np.ndarray
    states: np.ndarray
    n_states: np.ndarray


@njit(cache=True)
def learned_model(n_states, n_actions, capacity):
    """An empty model of ``n_states x n_actions`` pairs keeping up to ``capacity``
    distinct outcomes per pair."""
    shape = (n_states, n_actions, capacity)
    return LearnedModel(np.zeros(shape, dtype=np.int64), np.zeros(shape),
                        np.zeros(shape, dtype=np.bool_), np.zeros(shape, dtype=np.int64),
                        np.zeros((n_states, n_actions), dtype=np.int64),
                        np.zeros((n_states, n_actions), dtype=np.int64),
                        np.zeros((n_states, n_actions), dtype=np.int64),
                        np.zeros(n_states * n_actions, dtype=np.int64),
                        np.zeros(1, dtype=np.int64), np.zeros(n_states, dtype=np.int64),
                        np.zeros(1, dtype=np.int64))


@njit(cache=True, inline="always")
def record_outcome(model, s, a, outcome, counts, t):
    """``Model(S, A) <- R, S'`` (step (e) of the Dyna-Q box) for ``outcome = (S', R,
    done)`` observed at time step ``t``: with ``counts``, one more observation of that
    outcome (a new one is appended); without, the outcome replaces what was known (a
    deterministic model follows the latest sample, so it tracks a changing
    environment)."""
    s_next, r, is_done = outcome
    if model.tries[s, a] == 0:
        model.pairs[model.n_pairs[0]] = s * model.tries.shape[1] + a
        model.n_pairs[0] += 1
        if model.tries[s].sum() == 0:
            model.states[model.n_states[0]] = s
            model.n_states[0] += 1
    model.tries[s, a] += 1
    model.last_try[s, a] = t
    j = 0
    if counts:
        j = model.outcomes[s, a]
        for i in range(model.outcomes[s, a]):
            if (model.next_state[s, a, i] == s_next and model.reward[s, a, i] == r
                    and model.done[s, a, i] == is_done):
                j = i
        if j == model.outcomes[s, a]:
            model.outcomes[s, a] += 1
    else:
        model.outcomes[s, a] = 1
        model.count[s, a, 0] = 0
    model.next_state[s, a, j] = s_next
    model.reward[s, a, j] = r
    model.done[s, a, j] = is_done
    model.count[s, a, j] += 1


@njit(cache=True, inline="always")
def sample_model(model, s, a, rng):
    """``R, S' <- Model(S, A)``: ``(S', R, done)``, an outcome drawn in proportion to
    its count (no draw when one outcome is known, as in a deterministic model)."""
    j = 0
    if model.outcomes[s, a] > 1:
        u = randint(rng, model.tries[s, a])
        while u >= model.count[s, a, j]:
            u -= model.count[s, a, j]
            j += 1
    return model.next_state[s, a, j], model.reward[s, a, j], model.done[s, a, j]


# --------------------------------------------------------------------- priority queue


class PriorityQueue(NamedTuple):
    """A binary max-heap of items ``0 .. n-1``: ``item[i]`` with ``priority[i]`` at heap
    slot ``i < size[0]`` (every slot's priority at least its children's, slot 0 the
    highest); ``position[x]``: the slot of item ``x``, ``-1`` when it is not queued."""

    priority: np.ndarray
    item: np.ndarray
    position: np.ndarray
    size: np.ndarray


@njit(cache=True)
def priority_queue(n):
    """An empty queue of items ``0 .. n-1``."""
    return PriorityQueue(np.zeros(n), np.zeros(n, dtype=np.int64),
                         np.full(n, -1, dtype=np.int64), np.zeros(1, dtype=np.int64))


@njit(cache=True)
def _place(queue, slot, x, priority):
    """Put item ``x`` of ``priority`` at heap slot ``slot``."""
    queue.item[slot] = x
    queue.priority[slot] = priority
    queue.position[x] = slot


@njit(cache=True)
def _sift_up(queue, slot, x, priority):
    """Put item ``x`` of ``priority`` at ``slot`` or above, moving lower parents down."""
    while slot > 0:
        parent = (slot - 1) // 2
        if queue.priority[parent] >= priority:
            break
        _place(queue, slot, queue.item[parent], queue.priority[parent])
        slot = parent
    _place(queue, slot, x, priority)


@njit(cache=True)
def queue_push(queue, x, priority):
    """Queue item ``x`` with ``priority``; if it is queued already, only the higher of its
    two priorities stays (S&B section 8.4)."""
    slot = queue.position[x]
    if slot < 0:
        slot = queue.size[0]
        queue.size[0] += 1
    elif priority <= queue.priority[slot]:
        return
    _sift_up(queue, slot, x, priority)


@njit(cache=True, inline="always")
def queue_pop(queue):
    """``(item, priority)`` of the highest priority, removed from the queue (which must
    not be empty)."""
    top, top_priority = queue.item[0], queue.priority[0]
    queue.position[top] = -1
    queue.size[0] -= 1
    n = queue.size[0]
    if n > 0:  # the last item sinks from the root to its place
        x, priority = queue.item[n], queue.priority[n]
        slot = 0
        while True:
            child = 2 * slot + 1
            if child >= n:
                break
            if child + 1 < n and queue.priority[child + 1] > queue.priority[child]:
                child += 1
            if queue.priority[child] <= priority:
                break
            _place(queue, slot, queue.item[child], queue.priority[child])
            slot = child
        _place(queue, slot, x, priority)
    return top, top_priority


# --------------------------------------------------------------------- predecessor lists


class Predecessors(NamedTuple):
    """For each state ``s``, a doubly linked list of the pairs predicted to lead to it:
    ``head[s]`` its first pair; ``next[x]``, ``prev[x]`` the neighbours of pair ``x`` in
    its list (``-1``: none)."""

    head: np.ndarray
    next: np.ndarray
    prev: np.ndarray


@njit(cache=True)
def predecessors(n_states, n_pairs):
    """Empty lists for ``n_states`` states over ``n_pairs`` pairs."""
    return Predecessors(np.full(n_states, -1, dtype=np.int64),
                        np.full(n_pairs, -1, dtype=np.int64),
                        np.full(n_pairs, -1, dtype=np.int64))


@njit(cache=True)
def link(lists, x, s):
    """Add pair ``x`` (in no list) to the predecessors of ``s``."""
    first = lists.head[s]
    lists.next[x] = first
    lists.prev[x] = -1
    if first >= 0:
        lists.prev[first] = x
    lists.head[s] = x


@njit(cache=True)
def unlink(lists, x, s):
    """Remove pair ``x`` from the predecessors of ``s``."""
    before, after = lists.prev[x], lists.next[x]
    if before >= 0:
        lists.next[before] = after
    else:
        lists.head[s] = after
    if after >= 0:
        lists.prev[after] = before
