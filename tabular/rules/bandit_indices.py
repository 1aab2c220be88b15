"""The indices and posterior draws of the bandit algorithms beyond chapter 2.

Each is the number an algorithm ranks an arm by, from the arm's statistics alone (its
pulls ``n``, the sum of its rewards, ...); :mod:`tabular.learn.bandit_regret` composes
them in one loop. Arms never pulled are ranked first by the loop, not here. Rewards in
``[0, 1]`` (Bernoulli arms) unless said otherwise.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from tabular._numba.rng import beta, marsaglia_tsang_constants, marsaglia_tsang_given, normal

#: Where the Bernoulli KL clips its arguments away from 0 and 1 (SMPyBandits' ``eps``):
#: ``kl(p, q)`` stays finite for ``q`` in ``{0, 1}``.
KL_CLIP = 1e-15


@njit(cache=True, inline="always")
def bernoulli_kl(p, q):
    """``KL(Bernoulli(p) || Bernoulli(q)) = p log(p / q) + (1 - p) log((1 - p) / (1 - q))``,
    both clipped to ``[KL_CLIP, 1 - KL_CLIP]``."""
    p = min(max(p, KL_CLIP), 1.0 - KL_CLIP)
    q = min(max(q, KL_CLIP), 1.0 - KL_CLIP)
    return p * np.log(p / q) + (1.0 - p) * np.log((1.0 - p) / (1.0 - q))


@njit(cache=True, inline="always")
def gaussian_kl(p, q, sd):
    """``KL(N(p, sd^2) || N(q, sd^2)) = (p - q)^2 / (2 sd^2)``."""
    return (p - q) * (p - q) / (2.0 * sd * sd)


@njit(cache=True, inline="always")
def kl_ucb_index(mean, level, tol):
    """The Bernoulli KL-UCB index (Garivier and Cappé, 2011, eq. 3):
    ``max {q in [mean, 1] : kl(mean, q) <= level}``, by bisection until the bracket is at
    most ``tol`` wide (:func:`kl_ucb_bracket`, :func:`kl_ucb_halve`); returns its upper
    end, so the index is never below the exact one and exceeds it by at most ``tol``."""
    low, high = kl_ucb_bracket(mean, level)
    while high - low > tol:
        low, high = kl_ucb_halve(mean, level, low, high)
    return high


@njit(cache=True, inline="always")
def kl_ucb_bracket(mean, level):
    """The bracket ``(low, high]`` KL-UCB's bisection starts from: ``kl(mean, .)``
    increases on ``[mean, 1]``, and Pinsker's inequality ``kl(p, q) >= 2 (p - q)^2`` puts
    the index at most ``sqrt(level / 2)`` above the mean, so ``[mean, min(1, mean +
    sqrt(level / 2))]``; ``low = high`` when that upper end is the index already."""
    high = min(1.0, mean + np.sqrt(0.5 * level))
    if bernoulli_kl(mean, high) <= level:
        return high, high
    return mean, high


@njit(cache=True, inline="always")
def kl_ucb_halve(mean, level, low, high):
    """One bisection step of the KL-UCB index: the half of ``(low, high]`` that holds it."""
    middle = 0.5 * (low + high)
    if bernoulli_kl(mean, middle) > level:
        return low, middle
    return middle, high


@njit(cache=True, inline="always")
def gaussian_kl_ucb_index(mean, level, sd):
    """The Gaussian KL-UCB index, in closed form: ``max {q : (q - mean)^2 / (2 sd^2) <= level}
    = mean + sd sqrt(2 level)``."""
    return mean + sd * np.sqrt(2.0 * level)


@njit(cache=True, inline="always")
def moss_index(mean, n, horizon, k):
    """MOSS (Audibert and Bubeck, 2009, eq. 4): ``mean + sqrt(max(0, log(T / (k n))) / n)``
    with the horizon ``T`` and ``k`` arms."""
    return mean + np.sqrt(max(0.0, np.log(horizon / (k * n))) / n)


@njit(cache=True, inline="always")
def ucb_v_index(mean, variance, n, t):
    """UCB-V (Audibert, Munos and Szepesvári, 2009, eq. 1 with ``b = 1``, ``c = 1`` and
    the exploration function ``E_t = log t``): ``mean + sqrt(2 V log t / n) + 3 log t / n``,
    ``V`` the empirical (biased) variance of the arm's rewards."""
    log_t = np.log(t)
    return mean + np.sqrt(2.0 * variance * log_t / n) + 3.0 * log_t / n


@njit(cache=True, inline="always")
def beta_posterior_draw(successes, failures, rng):
    """Thompson sampling's draw for a Bernoulli arm (Agrawal and Goyal, 2012, Algorithm 1):
    ``theta ~ Beta(successes + 1, failures + 1)``, the posterior of a uniform prior."""
    return beta(rng, successes + 1.0, failures + 1.0)


@njit(cache=True, inline="always")
def beta_posterior_constants(successes, failures, out):
    """``out`` ``[4]``: the constants ``(d, c)`` of the two gamma draws of
    :func:`beta_posterior_draw` (:func:`~tabular._numba.rng.marsaglia_tsang_constants`
    of ``successes + 1`` and of ``failures + 1``), for :func:`kept_beta_posterior_draw`."""
    out[0], out[1] = marsaglia_tsang_constants(successes + 1.0)
    out[2], out[3] = marsaglia_tsang_constants(failures + 1.0)


@njit(cache=True, inline="always")
def kept_beta_posterior_draw(constants, rng):
    """:func:`beta_posterior_draw` from the arm's constants kept since its last pull
    (:func:`beta_posterior_constants`), the same draw: both shapes are at least 1, where
    :func:`~tabular._numba.rng.gamma` is the Marsaglia-Tsang draw itself; a square root
    and two divisions fewer a gamma draw."""
    x = marsaglia_tsang_given(rng, constants[0], constants[1])
    return x / (x + marsaglia_tsang_given(rng, constants[2], constants[3]))


@njit(cache=True, inline="always")
def gaussian_posterior_draw(total, n, sd, rng):
    """Thompson sampling's draw for a Gaussian arm of known ``sd`` (Agrawal and Goyal,
    2013, section 2.2): ``theta ~ N(total / (n + 1), sd^2 / (n + 1))``, the posterior of a
    ``N(0, sd^2)`` prior after ``n`` rewards summing to ``total``."""
    return total / (n + 1.0) + sd / np.sqrt(n + 1.0) * normal(rng)


@njit(cache=True, inline="always")
def exp3_step(scores, a, reward, probs, eta):
    """EXP3's update in the reward form of Lattimore and Szepesvári (2020, Algorithm 9,
    eq. 11.6): every arm's importance-weighted reward estimate
    ``S(b) += 1 - 1[b = a] (1 - reward) / P(a)``, held as ``scores = eta S`` so that the
    next policy is ``softmax(scores)``. The ``+1`` of every arm and any common shift leave
    the softmax unchanged: ``scores`` is kept with its largest entry at 0 instead, so that
    it stays within ``eta`` times the importance weights however long the run."""
    scores[a] -= eta * (1.0 - reward) / probs[a]
    top = scores[0]
    for b in range(1, scores.shape[0]):
        top = max(top, scores[b])
    for b in range(scores.shape[0]):
        scores[b] -= top


@njit(cache=True, inline="always")
def discounted_ucb_index(total, weight, all_weights, xi):
    """Discounted UCB (Garivier and Moulines, 2011, section 3, rewards bounded by
    ``B = 1``): ``total / weight + 2 sqrt(xi log n / weight)``, from the arm's discounted
    reward sum ``total = sum_s gamma^(t-s) X_s 1[A_s = a]``, its discounted pulls
    ``weight`` and every arm's ``n = all_weights``; ``log n`` is taken as 0 while ``n < 1``
    (a discount so strong that the whole memory weighs less than one pull), where the
    paper's bonus is undefined."""
    return total / weight + 2.0 * np.sqrt(xi * np.log(max(all_weights, 1.0)) / weight)


@njit(cache=True, inline="always")
def sliding_window_ucb_index(total, n, t, window, xi):
    """Sliding-window UCB (Garivier and Moulines, 2011, section 4, ``B = 1``):
    ``total / n + sqrt(xi log min(t, window) / n)`` from the arm's reward sum and pulls
    over the last ``window`` steps."""
    return total / n + np.sqrt(xi * np.log(min(t, window)) / n)


@njit(cache=True, inline="always")
def _beta_continued_fraction(a, b, x):
    """The continued fraction of the incomplete beta function (Abramowitz and Stegun
    26.5.8), evaluated by the modified Lentz method to a relative change of 1e-15."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        for even in (True, False):
            if even:
                coefficient = m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m))
            else:
                coefficient = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0))
            d = 1.0 + coefficient * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + coefficient / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


@njit(cache=True, inline="always")
def beta_cdf_and_density(x, a, b, log_norm):
    """``(I_x(a, b), f(x))``, the CDF of ``Beta(a, b)`` (:func:`beta_cdf`) and its density
    ``x^(a-1) (1-x)^(b-1) / B(a, b) = front / (x (1 - x))``, both from the
    continued fraction's front factor ``front = x^a (1-x)^b / B(a, b)``
    (``log_norm = log(1 / B(a, b))``, :func:`beta_log_norm`, computed once per
    posterior); density 0 outside ``(0, 1)``."""
    if x <= 0.0:
        return 0.0, 0.0
    if x >= 1.0:
        return 1.0, 0.0
    front = np.exp(log_norm + a * np.log(x) + b * np.log1p(-x))
    density = front / (x * (1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a, density
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b, density


@njit(cache=True)
def beta_cdf(x, a, b):
    """The regularised incomplete beta function ``I_x(a, b)``, the CDF of ``Beta(a, b)``:
    its continued fraction where it converges fast (``x < (a + 1) / (a + b + 2)``),
    else ``1 - I_{1-x}(b, a)``."""
    return beta_cdf_and_density(x, a, b, beta_log_norm(a, b))[0]


@njit(cache=True, inline="always")
def beta_log_norm(a, b):
    """``log(1 / B(a, b))``, the log of the normalising constant of ``Beta(a, b)``."""
    return math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)


@njit(cache=True, inline="always")
def normal_quantile(p, tol):
    """The ``p``-quantile of ``N(0, 1)``, ``0 < p < 1``, by bisection on ``erfc`` over
    ``[-40, 40]`` until the bracket is at most ``tol`` wide; returns its upper end."""
    low, high = -40.0, 40.0
    while high - low > tol:
        middle = 0.5 * (low + high)
        if 0.5 * math.erfc(-middle / math.sqrt(2.0)) < p:
            low = middle
        else:
            high = middle
    return high
