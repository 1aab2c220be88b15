"""Bernoulli Bayes-UCB's pull: the arm of the largest Beta quantile, proved from the
certificates of :mod:`tabular.learn.quantile_certificates`.

Only the argmax of the quantiles ``q_a`` is needed. :func:`certified_argmax` takes the
arm of the largest guess as the leader ``L`` and proves, arm by arm, ``q_b <= high_b
<= low_L < q_L``, evaluating the incomplete beta function only where the brackets kept
from earlier steps overlap. Where to evaluate:

1. the leader, once, at the largest upper end of the others below its guess
   (:func:`_raise_leader`: one evaluation may part it from every arm);
2. for a pair still overlapping (:func:`_order`, :func:`_next_probe`), the arm of the
   lower guess at the other's lower end, or the other at its upper end (a kept end
   reused);
3. else both at the midpoint of the two guesses: an upper end halfway to the leader
   holds the longest while ``p`` rises (its cap ``I_x`` is furthest above ``p``);
4. after :data:`GUIDED_PROBES` evaluations of one pair, or when the two guesses are
   equal, the midpoint of the wider bracket (bisection: the pair always parts or
   settles).

An arm proved above the leader becomes the leader (at most once per arm a step).
A pair settles when both brackets are at most ``tol / 4`` wide. Arms of the same
posterior (same pulls and successes) have the same quantile; they, and arms whose
settled bracket still overlaps the leader's, are tied with it, and the pull is drawn
uniformly among the tied arms (a ``randint`` per tied arm, in index order, as
:func:`~tabular.rules.values.greedy_action`). Every tied arm's quantile lies within the
leader's settled bracket widened by ``tol / 4`` on each side, so the arm pulled has a
quantile above the largest minus ``3 tol / 4``: the exact argmax whenever the two
largest quantiles are ``tol`` or more apart (up to the computed CDF's error over the
density: the record derives it). Arms never pulled are pulled first, at random among
them.

``docs/decisions/2026-12-07-bayes-ucb-certificates.md`` gives the figures.
"""

from __future__ import annotations

from numba import njit

from tabular._numba.rng import randint
from tabular.learn.quantile_certificates import GUESS, HIGH, LOW, expire, probe

#: Guided evaluations of one pair before bisection takes over.
GUIDED_PROBES = 6


@njit(cache=True, inline="always")
def _probe_arm(c, counts, sums, p, arm, x):
    """:func:`~tabular.learn.quantile_certificates.probe` of arm ``arm``'s posterior
    ``Beta(S + 1, N - S + 1)`` at ``x``."""
    probe(c, arm, x, p, sums[arm] + 1.0, counts[arm] - sums[arm] + 1.0)


@njit(cache=True, inline="always")
def _inside(c, arm, x):
    """Whether ``x`` lies strictly inside arm ``arm``'s bracket."""
    return c[LOW, arm] < x < c[HIGH, arm]


@njit(cache=True, inline="always")
def _next_probe(c, leader, b, guided):
    """The arm to evaluate and where, to part ``leader``'s bracket from ``b``'s (the
    module's rules 2-4); ``guided``: whether guesses may still choose."""
    if guided and c[GUESS, b] != c[GUESS, leader]:
        under, over = (b, leader) if c[GUESS, b] < c[GUESS, leader] else (leader, b)
        if c[GUESS, under] < c[LOW, over] and _inside(c, under, c[LOW, over]):
            return under, c[LOW, over]
        if c[GUESS, over] > c[HIGH, under] and _inside(c, over, c[HIGH, under]):
            return over, c[HIGH, under]
        middle = 0.5 * (c[GUESS, under] + c[GUESS, over])
        if _inside(c, over, middle):
            return over, middle
        if _inside(c, under, middle):
            return under, middle
    wider = leader if (c[HIGH, leader] - c[LOW, leader] >= c[HIGH, b] - c[LOW, b]) else b
    return wider, 0.5 * (c[LOW, wider] + c[HIGH, wider])


@njit(cache=True, inline="always")
def _order(c, counts, sums, p, settle, leader, b):
    """``1`` if ``q_leader > q_b`` is proved, ``-1`` if ``q_b > q_leader``, ``0`` if
    tied (the same posterior, or both brackets at most ``settle`` wide and overlapping),
    evaluating the CDF until one holds."""
    if counts[b] == counts[leader] and sums[b] == sums[leader]:
        return 0
    probes = 0
    while True:
        if c[HIGH, b] <= c[LOW, leader]:
            return 1
        if c[HIGH, leader] <= c[LOW, b]:
            return -1
        if (c[HIGH, leader] - c[LOW, leader] <= settle
                and c[HIGH, b] - c[LOW, b] <= settle):
            return 0
        arm, x = _next_probe(c, leader, b, probes < GUIDED_PROBES)
        _probe_arm(c, counts, sums, p, arm, x)
        probes += 1


@njit(cache=True, inline="always")
def _raise_leader(c, counts, sums, p, leader):
    """One evaluation that may part the leader from every arm at once: at the largest
    upper end of the others below the leader's guess."""
    top = -1.0
    for b in range(counts.shape[0]):
        if b != leader and top < c[HIGH, b] < c[GUESS, leader]:
            top = c[HIGH, b]
    if _inside(c, leader, top):
        _probe_arm(c, counts, sums, p, leader, top)


@njit(cache=True, inline="always")
def _untried(counts, rng):
    """An arm never pulled, uniformly at random among them (-1: none)."""
    chosen, ties = -1, 0
    for a in range(counts.shape[0]):
        if counts[a] <= 0.0:
            ties += 1
            if ties == 1 or randint(rng, ties) == 0:
                chosen = a
    return chosen


@njit(cache=True, inline="always")
def _largest_guess(c):
    """The arm of the largest guess (the first among equals)."""
    best = 0
    for a in range(1, c.shape[1]):
        if c[GUESS, a] > c[GUESS, best]:
            best = a
    return best


@njit(cache=True)  # a call, not inlined: inlined, every regret kernel compiled it (2x)
def certified_argmax(counts, sums, p, tol, c, rng):
    """The arm of the largest ``p``-quantile of the posteriors ``Beta(S + 1, N - S + 1)``
    (``counts`` ``N``, ``sums`` ``S``), ties within ``tol`` at random (the module's
    docstring), from and into each arm's certificates ``c``
    (:func:`~tabular.learn.quantile_certificates.new_certificates`)."""
    untried = _untried(counts, rng)
    if untried >= 0:
        return untried
    expire(c, p)
    leader, settle = _largest_guess(c), 0.25 * tol
    while True:  # at most once per arm: each restart proves a larger quantile
        _raise_leader(c, counts, sums, p, leader)
        chosen, ties, beaten = leader, 1, -1
        for b in range(counts.shape[0]):
            if b == leader or c[HIGH, b] <= c[LOW, leader]:  # proved below: no call
                continue
            order = _order(c, counts, sums, p, settle, leader, b)
            if order < 0:
                beaten = b
                break
            if order == 0:
                ties += 1
                if randint(rng, ties) == 0:
                    chosen = b
        if beaten < 0:
            return chosen
        leader = beaten
