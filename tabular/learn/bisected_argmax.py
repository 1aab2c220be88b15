"""The greedy pull among KL-UCB's indices, halving each arm's bisection only as far as the
choice needs.

Bernoulli KL-UCB's index is the upper end of a bisection run to a tolerance
(:func:`~tabular.rules.bandit_indices.kl_ucb_index`), some twenty halvings per arm and
step, each a logarithm. The pull only needs the order of the
indices, and each bracket ``(brackets]`` holds its index from the first halving on: an
arm whose ``high`` is at most another's ``low`` ranks below it whatever the remaining
halvings do. :func:`bisected_greedy` replays
:func:`~tabular.rules.values.greedy_action` (ties at random, a draw at each tie met)
on the brackets, halving the wider of two overlapping brackets until they part or both
are settled (at most ``tol`` wide, their index then exact), so it pulls the arm, and
draws the numbers, that ``greedy_action`` on the fully bisected indices would: the
same halvings in the same order give the same bits, only fewer of them are taken.
(Bernoulli Bayes-UCB's quantiles took this route until
``docs/decisions/2026-12-07-bayes-ucb-certificates.md``: :mod:`tabular.learn.certified_argmax`.)

``docs/decisions/2026-12-06-explore-speed.md`` gives the figures.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.rng import randint
from tabular.rules.bandit_indices import kl_ucb_bracket, kl_ucb_halve


class Brackets(NamedTuple):
    """Each arm's bisection ``(low[a], high[a]]``."""

    low: np.ndarray
    high: np.ndarray


@njit(cache=True, inline="always")
def new_brackets(k):
    """The :class:`Brackets` of ``k`` arms."""
    return Brackets(np.zeros(k), np.zeros(k))


@njit(cache=True, inline="always")
def open_brackets(counts, sums, level, brackets):
    """Every arm's starting bracket
    (:func:`~tabular.rules.bandit_indices.kl_ucb_bracket`, exploration level
    ``level / N_a``, ``level = log t``); an arm never pulled has index ``+inf``
    (settled)."""
    low, high = brackets.low, brackets.high
    for a in range(counts.shape[0]):
        n = counts[a]
        if n <= 0.0:
            low[a] = high[a] = np.inf
        else:
            low[a], high[a] = kl_ucb_bracket(sums[a] / n, level / n)


@njit(cache=True, inline="always")
def _halve(counts, sums, level, brackets, a):
    """One bisection step of arm ``a``'s bracket, exactly as the index's own loop takes it
    (:func:`~tabular.rules.bandit_indices.kl_ucb_halve`)."""
    low, high = brackets.low, brackets.high
    n = counts[a]
    low[a], high[a] = kl_ucb_halve(sums[a] / n, level / n, low[a], high[a])


@njit(cache=True, inline="always")
def _settled(low, high, tol, a):
    """Whether arm ``a``'s bisection has ended (its loop's ``high - low > tol`` fails; an
    infinite index too): its index is then ``high[a]``."""
    return not high[a] - low[a] > tol


@njit(cache=True, inline="always")
def _surely_below(low, high, tol, a, b):
    """Whether arm ``a``'s index is below arm ``b``'s whatever the remaining halvings:
    ``index_a <= high_a``, and ``index_b > low_b`` (``= high_b`` once settled)."""
    if _settled(low, high, tol, b):
        return high[a] < high[b]
    return high[a] <= low[b]


@njit(cache=True, inline="always")
def _order(counts, sums, level, tol, brackets, a, b):
    """The sign of ``index_a - index_b``, halving the wider unsettled bracket of the two
    until they part or both are settled."""
    low, high = brackets.low, brackets.high
    while True:
        settled_a, settled_b = _settled(low, high, tol, a), _settled(low, high, tol, b)
        if settled_a and settled_b:
            return 1 if high[a] > high[b] else (0 if high[a] == high[b] else -1)
        if _surely_below(low, high, tol, a, b):
            return -1
        if _surely_below(low, high, tol, b, a):
            return 1
        wider = a if settled_b or (not settled_a
                                    and high[a] - low[a] >= high[b] - low[b]) else b
        _halve(counts, sums, level, brackets, wider)


@njit(cache=True)  # a call, not inlined: LLVM took minutes, and it writes the brackets
def bisected_greedy(counts, sums, level, tol, brackets, rng):
    """The arm :func:`~tabular.rules.values.greedy_action` picks from the fully bisected
    indices, with the same draws, from the brackets :func:`open_brackets` opened."""
    best, ties = 0, 1
    for a in range(1, counts.shape[0]):
        order = _order(counts, sums, level, tol, brackets, a, best)
        if order > 0:
            best, ties = a, 1
        elif order == 0:
            ties += 1
            if randint(rng, ties) == 0:
                best = a
    return best

