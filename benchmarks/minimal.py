"""Minimal hand-written kernels: the floor the library's TD learners are measured against.

Q-learning, SARSA, expected SARSA (Sutton & Barto, sections 6.4-6.6) and TD(0)
prediction (section 6.1) written as one would write them for one model and nothing
else: loops over the stored model arrays (:class:`~tabular.model.mdp.ModelArrays`:
``successor``, ``code``, ``prob``, ``reward``, ``start_cdf``), a constant step size,
the xoshiro256** stream in local variables, one run, one thread. They keep the
library's semantics: epsilon-greedy with ties broken uniformly at random, the number of
actions read at run time (from ``Q``), outcomes drawn by inverse CDF (no draw when
``K = 1``), start states drawn from ``start_cdf``, ``max_steps`` cuts an episode, a cut
episode's last update bootstraps. What they leave out is what makes a library: no
schedules, action masks, ``-inf`` rewards, Gaussian reward noise, several runs or
argument checks, and a model with per-outcome tables (``code`` is ``None``) is not
read. They draw other numbers than the library, so they are compared on steps per
second, not on their outputs (:mod:`benchmarks.bench_limit` checks that they learn).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from tabular._numba.runs import SIMPLIFYING_PIPELINE

Q_LEARNING, SARSA, EXPECTED_SARSA = 0, 1, 2  # the method of _one_step_control
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True)
def _next(s0, s1, s2, s3):
    """xoshiro256**: ``(64 random bits, the next state)``, the state four locals."""
    x = s1 * uint64(5)
    result = ((x << uint64(7)) | (x >> uint64(57))) * uint64(9)
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << uint64(45)) | (s3 >> uint64(19))
    return result, s0, s1, s2, s3


@njit(cache=True)
def _unit(bits):
    """A float in ``[0, 1)`` from the high 53 of 64 random bits."""
    return float(bits >> uint64(11)) * _TO_UNIT


# Helpers that take arrays are inlined into numba's IR, and the kernels are compiled by
# the pipeline the library's TD kernels use: numba's plain pipeline keeps the reference
# counting of an inlined helper's arrays in the loop (7M steps/s instead of 120M).
KERNEL = dict(cache=True, parallel=SIMPLIFYING_PIPELINE)


@njit(cache=True, inline="always")
def _start(start_cdf, u):
    """The start state of the draw ``u`` in ``[0, 1)``."""
    s = np.searchsorted(start_cdf, u * start_cdf[-1], side="right")
    return min(s, start_cdf.shape[0] - 1)


@njit(cache=True, inline="always")
def _step(successor, code, prob, reward, s, a, u):
    """``(s', r, done)`` of ``(s, a)`` for the draw ``u`` (unused when ``K = 1``)."""
    k = 0
    K = successor.shape[2]
    if K > 1:
        acc = 0.0
        last = 0
        for j in range(K):
            p = prob[code[s, a, j]]
            if p > 0.0:
                acc += p
                last = j
                if u < acc:
                    break
        k = last
    nxt = np.int64(successor[s, a, k])
    r = reward[code[s, a, k]]
    if nxt < 0:
        return -1 - nxt, r, True
    return nxt, r, False


@njit(cache=True, inline="always")
def _epsilon_greedy(Q, s, epsilon, s0, s1, s2, s3):
    """``(a, the next stream state)``: an epsilon-greedy action in ``s``, ties at random."""
    A = Q.shape[1]
    bits, s0, s1, s2, s3 = _next(s0, s1, s2, s3)
    if _unit(bits) < epsilon:
        bits, s0, s1, s2, s3 = _next(s0, s1, s2, s3)
        return int(_unit(bits) * A), s0, s1, s2, s3
    a = 0
    best = Q[s, 0]
    ties = 1
    for b in range(1, A):
        q = Q[s, b]
        if q > best:
            a, best, ties = b, q, 1
        elif q == best:
            ties += 1
            bits, s0, s1, s2, s3 = _next(s0, s1, s2, s3)
            if int(_unit(bits) * ties) == 0:
                a = b
    return a, s0, s1, s2, s3


@njit(cache=True, inline="always")
def _outcome_draw(K, s0, s1, s2, s3):
    """``(u, the next stream state)``: the draw that picks an outcome (none when K = 1)."""
    if K == 1:
        return 0.0, s0, s1, s2, s3
    bits, s0, s1, s2, s3 = _next(s0, s1, s2, s3)
    return _unit(bits), s0, s1, s2, s3


@njit(cache=True, inline="always")
def _one_step_control(method, model, gamma, alpha, epsilon, episodes, max_steps, seed_state):
    """Q-learning, SARSA or expected SARSA (``method``, a constant of each caller) on
    ``model`` (the stored arrays) from ``Q = 0``: returns ``(Q, episode lengths)``."""
    successor, code, prob, reward, start_cdf = model
    S, A, K = successor.shape
    Q = np.zeros((S, A))
    lengths = np.zeros(episodes, dtype=np.int64)
    s0, s1, s2, s3 = seed_state[0], seed_state[1], seed_state[2], seed_state[3]
    for episode in range(episodes):
        bits, s0, s1, s2, s3 = _next(s0, s1, s2, s3)
        s = _start(start_cdf, _unit(bits))
        a, s0, s1, s2, s3 = _epsilon_greedy(Q, s, epsilon, s0, s1, s2, s3)
        steps = 0
        while True:
            steps += 1
            u, s0, s1, s2, s3 = _outcome_draw(K, s0, s1, s2, s3)
            s_next, r, done = _step(successor, code, prob, reward, s, a, u)
            target = r
            if method == SARSA:  # A' first: it is the next action taken
                a_next, s0, s1, s2, s3 = _epsilon_greedy(Q, s_next, epsilon, s0, s1, s2, s3)
                if not done:
                    target += gamma * Q[s_next, a_next]
            elif not done:
                best = Q[s_next, 0]
                total = best
                ties = 1
                for b in range(1, A):
                    q = Q[s_next, b]
                    total += q
                    if q > best:
                        best, ties = q, 1
                    elif q == best:
                        ties += 1
                if method == Q_LEARNING:
                    target += gamma * best
                else:  # epsilon / A on every action, 1 - epsilon on the greedy ones
                    target += gamma * (epsilon * total / A + (1.0 - epsilon) * best)
            Q[s, a] += alpha * (target - Q[s, a])
            if done or steps == max_steps:
                break
            if method != SARSA:
                a_next, s0, s1, s2, s3 = _epsilon_greedy(Q, s_next, epsilon, s0, s1, s2, s3)
            s, a = s_next, a_next
        lengths[episode] = steps
    return Q, lengths


@njit(**KERNEL)
def q_learning(model, gamma, alpha, epsilon, episodes, max_steps, seed_state):
    """Q-learning (eq. 6.8): ``(Q, episode lengths)``."""
    return _one_step_control(Q_LEARNING, model, gamma, alpha, epsilon, episodes, max_steps,
                             seed_state)


@njit(**KERNEL)
def sarsa(model, gamma, alpha, epsilon, episodes, max_steps, seed_state):
    """SARSA (eq. 6.7): ``(Q, episode lengths)``."""
    return _one_step_control(SARSA, model, gamma, alpha, epsilon, episodes, max_steps,
                             seed_state)


@njit(**KERNEL)
def expected_sarsa(model, gamma, alpha, epsilon, episodes, max_steps, seed_state):
    """Expected SARSA (eq. 6.9) for the epsilon-greedy policy: ``(Q, episode lengths)``."""
    return _one_step_control(EXPECTED_SARSA, model, gamma, alpha, epsilon, episodes,
                             max_steps, seed_state)


@njit(**KERNEL)
def td0(model, policy, gamma, alpha, episodes, max_steps, seed_state):
    """TD(0) prediction of ``policy`` (``[S, A]``) on ``model`` from ``V = 0``: returns
    ``(V, episode lengths)``."""
    successor, code, prob, reward, start_cdf = model
    S, A, K = successor.shape
    V = np.zeros(S)
    lengths = np.zeros(episodes, dtype=np.int64)
    s0, s1, s2, s3 = seed_state[0], seed_state[1], seed_state[2], seed_state[3]
    for episode in range(episodes):
        bits, s0, s1, s2, s3 = _next(s0, s1, s2, s3)
        s = _start(start_cdf, _unit(bits))
        steps = 0
        while True:
            bits, s0, s1, s2, s3 = _next(s0, s1, s2, s3)
            u = _unit(bits)
            a = 0
            acc = 0.0
            for b in range(A):  # inverse CDF over the policy's row
                p = policy[s, b]
                if p > 0.0:
                    acc += p
                    a = b
                    if u < acc:
                        break
            steps += 1
            u, s0, s1, s2, s3 = _outcome_draw(K, s0, s1, s2, s3)
            s_next, r, done = _step(successor, code, prob, reward, s, a, u)
            target = r if done else r + gamma * V[s_next]
            V[s] += alpha * (target - V[s])
            if done or steps == max_steps:
                break
            s = s_next
        lengths[episode] = steps
    return V, lengths


def stored(mdp) -> tuple:
    """The five arrays the minimal kernels read, from a model's stored form."""
    arrays = mdp.arrays
    if arrays.code is None:
        raise ValueError("the minimal kernels read a model with a code table only")
    return arrays.successor, arrays.code, arrays.prob, arrays.reward, arrays.start_cdf
