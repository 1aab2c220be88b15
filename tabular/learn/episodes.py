"""Numba helpers the learners' episode loops share: following a policy for a whole
episode (:func:`record_episode` into :func:`episode_buffers`, the Monte Carlo
learners), first visits (:func:`mark_first_visits`) and the ring buffers of the n-step
and lambda learners (:func:`ring_mask`, :func:`ring_step`, :func:`ring_return`), which
the tabular and the linear n-step learners share. Each reads the model only through
:func:`~tabular.model.sampling.sample_start` and :func:`~tabular.model.sampling.sample_step`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular._numba.rng import categorical
from tabular.model.sampling import sample_start, sample_step
from tabular.rules.returns import discounted_return


@njit(cache=True, inline="always")
def episode_buffers(max_steps):
    """The buffers :func:`record_episode` fills for episodes of at most ``max_steps``
    steps: ``states`` int64 ``[max_steps + 1]``, ``actions`` int64 ``[max_steps]`` and
    ``rewards`` ``[max_steps]``."""
    return (np.zeros(max_steps + 1, dtype=np.int64), np.zeros(max_steps, dtype=np.int64),
            np.zeros(max_steps))


@njit(cache=True, inline="always")
def record_episode(model, policy, rng, states, actions, rewards):
    """Follow ``policy`` (``[S, A]``) from a start state for at most ``L =
    states.shape[0] - 1`` steps, recording ``S_t`` in ``states[t]`` (``t <= T``), ``A_t``
    in ``actions[t]`` and ``R_{t+1}`` in ``rewards[t]`` (``t < T``). Returns ``(T,
    terminated, the sum of the rewards)``; an episode cut at ``L`` steps has
    ``terminated`` False (the Monte Carlo learners then bootstrap from ``S_T``)."""
    max_steps = states.shape[0] - 1
    s = sample_start(model, rng)
    terminated = False
    T = 0
    total = 0.0
    while not terminated and T < max_steps:
        states[T] = s
        a = categorical(rng, policy[s])
        actions[T] = a
        s, r, terminated = sample_step(model, s, a, rng)
        rewards[T] = r
        total += r
        T += 1
    states[T] = s
    return T, terminated, total


@njit(cache=True, inline="always")
def mark_first_visits(states, T, first_time):
    """``first_time[s]``: the first ``t < T`` with ``states[t] = s``, for the states the
    episode visits (``first_time`` holds -1 for every state on entry)."""
    for t in range(T):
        if first_time[states[t]] < 0:
            first_time[states[t]] = t


@njit(cache=True)
def ring_mask(n):
    """The index mask of the smallest ring buffer whose size, a power of two, exceeds
    ``n``: step ``t`` lives in slot ``t & mask`` (a mask, not a division)."""
    mask = 1
    while mask < n:
        mask = 2 * mask + 1
    return mask


@njit(cache=True, inline="always")
def ring_step(model, rng, s, a, t, T, terminated, states, rewards, mask, max_steps):
    """Step ``t + 1`` of an n-step episode (the boxes of sections 7.1 and 7.2): from
    ``S_t = s`` by ``A_t = a``, store ``S_{t+1}`` and ``R_{t+1}`` in slot ``(t + 1) &
    mask`` of the ring buffers ``states`` and ``rewards``. Returns ``(S_{t+1}, R_{t+1},
    T, terminated)``: ``T = t + 1`` once the episode ends there (an outcome that is
    ``done``, or the cut at ``max_steps``, which is not a termination), else ``T`` and
    ``terminated`` as they were."""
    s_next, r, is_done = sample_step(model, s, a, rng)
    i = (t + 1) & mask
    states[i], rewards[i] = s_next, r
    if is_done or t + 1 == max_steps:
        return s_next, r, t + 1, is_done
    return s_next, r, T, terminated


@njit(cache=True, inline="always")
def ring_return(rewards, mask, gamma, tau, end, G):
    """The n-step return ``G_{tau:end}`` (eq. 7.1) from ``G``, the value after step
    ``end`` (0 past a termination), over the rewards ``R_{tau+1} .. R_end`` of the ring
    buffer, the last first."""
    for i in range(end, tau, -1):
        G = discounted_return(rewards[i & mask], gamma, G)
    return G
