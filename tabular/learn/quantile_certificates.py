"""Bernoulli Bayes-UCB's Beta quantiles, bracketed by certificates kept between steps.

Bayes-UCB's index of an arm is ``q(p)``, the ``p = 1 - 1/t`` quantile of its posterior
``Beta(a, b)``: ``q(p) = min {x : I_x(a, b) >= p}``, ``I`` the regularised incomplete
beta function (:func:`~tabular.rules.bandit_indices.beta_cdf_and_density`). One
evaluation of ``I`` at a point ``x`` is a certificate about ``q``:

- ``I_x < p`` proves ``q(p) > x``, and ``q(p') > x`` for every later ``p' >= p``
  (``q`` rises with ``p``): a lower end ``low`` valid until the arm is pulled;
- ``c = I_x >= p`` proves ``q(p') <= x`` while ``p' <= c``: an upper end ``high`` valid
  until ``p`` passes its ``cap = c``, after which it is a lower end (:func:`expire`).

Between two pulls of an arm only ``p`` moves, so its bracket ``(low, high]`` stays true
step after step at no cost; :mod:`tabular.learn.certified_argmax` evaluates ``I`` only
where the brackets it has cannot order the arms. Each end keeps ``I`` there (``floor``
at ``low``, ``cap`` at ``high``), and a pull moves both by the recurrences of DLMF
8.17.20-21 (:func:`renew`): ``I_x(a + 1, b) = I_x(a, b) - front / a`` after a success,
``I_x(a, b + 1) = I_x(a, b) + front / b`` after a failure, ``front = x^a (1-x)^b /
B(a, b)``: a logarithm pair and an exponential instead of the continued fraction.
Each recurrence adds the rounding of one sum and the front factor's error (the same as
the continued fraction's own front factor), so an arm's ends are dropped after
:data:`MAX_RECURRENCES` pulls without being recomputed. Each evaluation also gives the
density ``f(x)``, and the Newton step ``x + (p - I_x) / f(x)`` a guess of ``q`` (kept in
the bracket) from which the argmax chooses where to evaluate next: a guess is never
relied on, only the certificates are.

``docs/decisions/2026-12-07-bayes-ucb-certificates.md`` gives the figures.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular.rules.bandit_indices import beta_cdf_and_density, beta_log_norm

#: The rows of an arm's certificates (``certificates[row, arm]``, float64 ``[7, k]``): its
#: bracket's ends and ``I`` there (``HIGH`` valid while ``p <= CAP``), the pulls its ends
#: have been carried through by recurrence, its last estimate of the quantile, and its
#: posterior's ``log(1 / B(a, b))``. One array, not a record of seven: every inlined
#: function given an array costs a reference count on entry and exit, seven for a record
#: (``docs/decisions/2026-12-07-bayes-ucb-certificates.md``).
LOW, FLOOR, HIGH, CAP, CARRIED, GUESS, LOG_NORM = range(7)
#: The most pulls an arm's ends are carried through by recurrence before being dropped.
MAX_RECURRENCES = 32


@njit(cache=True, inline="always")
def new_certificates(k):
    """The certificates of ``k`` arms, each bracket ``(0, 1]`` of the prior ``Beta(1, 1)``
    (``log(1 / B(1, 1)) = 0``), guess 1/2."""
    certificates = np.zeros((7, k))
    certificates[HIGH] = certificates[CAP] = 1.0
    certificates[GUESS] = 0.5
    return certificates


@njit(cache=True, inline="always")
def _carried(x, cdf, alpha, beta, log_norm, success):
    """``I_x`` and the density at ``x`` after one more success (``Beta(alpha + 1, beta)``)
    or failure (``Beta(alpha, beta + 1)``), from ``cdf = I_x(alpha, beta)`` (DLMF
    8.17.20-21) and ``front = x^alpha (1-x)^beta / B(alpha, beta)``: the density of
    ``Beta(alpha + 1, beta)`` is ``front (alpha + beta) / (alpha (1 - x))``, of
    ``Beta(alpha, beta + 1)`` ``front (alpha + beta) / (beta x)``."""
    if x <= 0.0 or x >= 1.0:
        return cdf, 0.0
    front = np.exp(log_norm + alpha * np.log(x) + beta * np.log1p(-x))
    if success:
        return cdf - front / alpha, front * (alpha + beta) / (alpha * (1.0 - x))
    return cdf + front / beta, front * (alpha + beta) / (beta * x)


@njit(cache=True, inline="always")
def renew(c, arm, alpha, beta, success, p):
    """Arm ``arm``'s posterior ``Beta(alpha, beta)`` has had one more success
    (``success``) or failure: ``I`` at its ends is carried over by recurrence (after
    :data:`MAX_RECURRENCES` pulls the bracket is ``(0, 1]`` again), its guess is the
    Newton step towards the next step's ``p`` from its lower end (its upper end if the
    lower is 0; else kept), and its normalising constant is computed
    (:func:`~tabular.rules.bandit_indices.beta_log_norm`). The ends' roles are sorted out
    against ``p`` by :func:`expire`. ``c``: the certificates (:func:`new_certificates`)."""
    if c[CARRIED, arm] >= MAX_RECURRENCES:
        c[LOW, arm], c[FLOOR, arm], c[HIGH, arm], c[CAP, arm] = 0.0, 0.0, 1.0, 1.0
        c[CARRIED, arm] = 0.0
    else:
        before_alpha, before_beta = (alpha - 1.0, beta) if success else (alpha, beta - 1.0)
        c[FLOOR, arm], low_density = _carried(c[LOW, arm], c[FLOOR, arm], before_alpha,
                                              before_beta, c[LOG_NORM, arm], success)
        c[CAP, arm], high_density = _carried(c[HIGH, arm], c[CAP, arm], before_alpha,
                                             before_beta, c[LOG_NORM, arm], success)
        c[CARRIED, arm] += 1.0
        if low_density > 0.0:
            c[GUESS, arm] = c[LOW, arm] + (p - c[FLOOR, arm]) / low_density
        elif high_density > 0.0:
            c[GUESS, arm] = c[HIGH, arm] + (p - c[CAP, arm]) / high_density
    c[LOG_NORM, arm] = beta_log_norm(alpha, beta)


@njit(cache=True, inline="always")
def expire(c, p):
    """Each arm's ends against ``p``: an upper end whose cap ``p`` has passed
    (``I_high < p``) is a lower end now, the upper end 1 (``I_1 = 1``); a lower end that a
    pull's recurrence raised to ``I_low >= p`` is an upper end now, the lower end 0. The
    guesses are kept within the brackets (``c``: the certificates)."""
    for a in range(c.shape[1]):
        if c[CAP, a] < p:
            c[LOW, a], c[FLOOR, a], c[HIGH, a], c[CAP, a] = c[HIGH, a], c[CAP, a], 1.0, 1.0
        elif c[FLOOR, a] >= p:
            c[LOW, a], c[FLOOR, a], c[HIGH, a], c[CAP, a] = 0.0, 0.0, c[LOW, a], c[FLOOR, a]
        c[GUESS, a] = min(max(c[GUESS, a], c[LOW, a]), c[HIGH, a])


@njit(cache=True, inline="always")
def probe(c, arm, x, p, alpha, beta):
    """Evaluate arm ``arm``'s ``I_x(alpha, beta)``, ``x`` inside its bracket: ``x``
    becomes its lower end (``I_x < p``) or its upper end capped at ``I_x``; its guess
    becomes the Newton step from ``x``, kept within the new bracket (the midpoint where
    the density underflows); ``c``: the certificates."""
    cdf, density = beta_cdf_and_density(x, alpha, beta, c[LOG_NORM, arm])
    if cdf < p:
        c[LOW, arm], c[FLOOR, arm] = x, cdf
    else:
        c[HIGH, arm], c[CAP, arm] = x, cdf
    low, high = c[LOW, arm], c[HIGH, arm]
    newton = x + (p - cdf) / density if density > 0.0 else 0.5 * (low + high)
    c[GUESS, arm] = min(max(newton, low), high)
