"""The pieces of the tabular exploration learners (:mod:`tabular.explore`): their
confidence bonuses, step sizes and posterior draws, one small function each.

Values are on the scale ``H * span``, ``span = r_max - r_min`` the range of one reward
(the papers assume rewards in ``[0, 1]``, ``span = 1``); ``log_term`` is the
confidence level's logarithm ``L`` (or Jin et al.'s ``iota``), computed once per call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular._numba.rng import marsaglia_tsang, normal, uniform


@njit(cache=True, inline="always")
def hoeffding_bonus(n, horizon, span, log_term, scale):
    """UCBVI-CH's bonus (Azar, Osband & Munos, 2017, Algorithm 1 with ``bonus_1``):
    ``b(s, a) = 7 H L sqrt(1 / N(s, a))``, ``H`` on the value scale ``horizon * span``,
    times ``scale`` (1: the paper's constant)."""
    return scale * 7.0 * horizon * span * log_term * np.sqrt(1.0 / n)


@njit(cache=True, inline="always")
def bernstein_bonus(n, variance, horizon, span, log_term, scale):
    """UCBVI-BF's bonus without its third term (Azar et al., 2017, Algorithm 4,
    ``bonus_2``): ``b = sqrt(8 L Var_P^(V_{h+1}) / N) + 14 H L / (3 N)``, the empirical
    Bernstein inequality on the estimated next-state value. The paper's third term, a
    correction ``sqrt(8 sum_y P^(y) min(100^2 H^3 S^2 A L^2 / N'(y), H^2) / N)`` for the
    gap between ``V_{h+1}`` and ``V*_{h+1}``, is left out (as rlberry's "simplified
    Bernstein" leaves it out): it only matters while the counts are small, where the
    value cap ``H`` binds anyway. Times ``scale`` (1: the paper's constants)."""
    return scale * (np.sqrt(8.0 * log_term * variance / n)
                    + 14.0 * horizon * span * log_term / (3.0 * n))


@njit(cache=True, inline="always")
def simplified_bernstein_bonus(n, stage_cap, scale):
    """rlberry-scool's ``"simplified_bernstein"`` UCBVI bonus (``UCBVIAgent._compute_bonus``,
    rlberry-scool 0.7.3): ``b = min(c sqrt(1 / N) + v_h / N, v_h)``, ``c = scale`` (its
    ``bonus_scale_factor``) and ``v_h = (H - h) span`` the largest value from stage ``h``
    (``stage_cap``). UCBVI-BF's bonus with the variance replaced by a constant and no
    confidence logarithm: the ``1 / N`` term keeps the young counts optimistic, the
    ``min`` keeps the bonus within what a value can be."""
    return min(scale * np.sqrt(1.0 / n) + stage_cap / n, stage_cap)


@njit(cache=True, inline="always")
def jin_step_size(n, horizon):
    """The step size of optimistic Q-learning (Jin et al., 2018, eq. 4.1):
    ``alpha_t = (H + 1) / (H + t)`` at the ``t``-th visit, which weights recent targets
    so that the ``H``-step errors do not pile up (their Lemma 4.1)."""
    return (horizon + 1.0) / (horizon + n)


@njit(cache=True, inline="always")
def jin_hoeffding_bonus(n, horizon, span, log_term, scale):
    """Optimistic Q-learning's UCB-Hoeffding bonus (Jin et al., 2018, Algorithm 1):
    ``b_t = c sqrt(H^3 iota / t)``, with ``c = scale`` (the paper leaves the absolute
    constant open) and ``H^3`` on the value scale ``H span``."""
    return scale * span * np.sqrt(horizon ** 3 * log_term / n)


@njit(cache=True, inline="always")
def jin_bernstein_width(t, variance, horizon, span, log_term, n_pairs, scale):
    """The confidence width of optimistic Q-learning's UCB-Bernstein (Jin et al., 2018,
    Algorithm 2, line 9) after ``t`` visits of a pair:

    ``beta_t = min{c1 (sqrt(H / t (W_t + H) iota) + sqrt(H^7 S A) iota / t),
    c2 sqrt(H^3 iota / t)}``,

    ``W_t`` the empirical variance of the ``t`` next-state values ``V_{h+1}(s')`` seen
    after the pair, ``n_pairs = S A``. The paper's rewards are in ``[0, 1]``; here the
    width is the paper's on rewards rescaled to it, times ``span``: ``W_t + H`` becomes
    ``W_t + H span^2`` and the other terms take a factor ``span`` (a variance is on the
    scale ``span^2``). ``c1 = c2 = 2 scale`` (the paper leaves the absolute constants
    open): :func:`~tabular.rules.exploration.jin_bernstein_bonus` makes the bonus ``Q``
    carries after ``t`` visits ``beta_t / 2``, so on its second branch it is
    ``scale sqrt(H^3 iota / t)``, the smallest that UCB-Hoeffding with ``c = scale``
    carries (its Lemma 4.1)."""
    c = 2.0 * scale
    bernstein = (np.sqrt(horizon * log_term / t * (variance + horizon * span * span))
                 + span * np.sqrt(horizon ** 7 * n_pairs) * log_term / t)
    return c * min(bernstein, span * np.sqrt(horizon ** 3 * log_term / t))


@njit(cache=True, inline="always")
def jin_bernstein_bonus(t, width, previous_width, horizon):
    """Optimistic Q-learning's UCB-Bernstein bonus at the ``t``-th visit (Jin et al.,
    2018, Algorithm 2, line 10): ``b_t = (beta_t - (1 - alpha_t) beta_{t-1}) /
    (2 alpha_t)``, ``alpha_t`` :func:`jin_step_size`, ``beta_0 = 0``. The choice makes
    the bonuses' weighted sum in ``Q`` telescope, ``sum_i alpha_t^i b_i = beta_t / 2``
    (``alpha_t^i = alpha_i prod_{j > i} (1 - alpha_j)``), the width of the confidence
    interval after ``t`` visits rather than a sum of past widths."""
    alpha = jin_step_size(t, horizon)
    return (width - (1.0 - alpha) * previous_width) / (2.0 * alpha)


@njit(cache=True, inline="always")
def first_argmax(row):
    """``argmax_a row[a]``, the lowest maximising action (the learners' greedy choice,
    kept up to date one row at a time)."""
    best, best_a = row[0], 0
    for a in range(1, row.shape[0]):
        if row[a] > best:
            best, best_a = row[a], a
    return best_a


@njit(cache=True)
def log_gamma_draw(rng, shape):
    """The logarithm of a ``Gamma(shape, 1)`` draw (Marsaglia & Tsang, 2000: the shared
    ``marsaglia_tsang`` core, with their boost ``G(a) = G(a + 1) U^(1/a)`` for
    ``shape < 1``, its ``U`` drawn first), returned as a logarithm so that the tiny draws
    of a small shape neither underflow nor make a Dirichlet draw 0/0."""
    boost = 0.0
    if shape < 1.0:
        boost = np.log(1.0 - uniform(rng)) / shape  # U in (0, 1]
        shape += 1.0
    return np.log(marsaglia_tsang(rng, shape)) + boost


@njit(cache=True, inline="always")
def dirichlet_draw(rng, concentration, out):
    """A draw of ``Dirichlet(concentration)`` into ``out`` (same length): normalised
    Gamma draws, normalised in log space (the largest first)."""
    top = -np.inf
    for i in range(concentration.shape[0]):
        out[i] = log_gamma_draw(rng, concentration[i])
        top = max(top, out[i])
    total = 0.0
    for i in range(out.shape[0]):
        out[i] = np.exp(out[i] - top)
        total += out[i]
    for i in range(out.shape[0]):
        out[i] /= total


@njit(cache=True, inline="always")
def normal_posterior_draw(rng, total, n, prior_mean, prior_precision, noise_precision):
    """A draw of a mean reward from its Normal posterior: the Normal prior
    ``N(prior_mean, 1 / prior_precision)`` updated by ``n`` rewards summing to ``total``,
    each ``N(mean, 1 / noise_precision)`` (the conjugate update: precision
    ``tau_0 + n tau``, mean ``(tau_0 mu_0 + tau total) / (tau_0 + n tau)``)."""
    precision = prior_precision + n * noise_precision
    mean = (prior_precision * prior_mean + noise_precision * total) / precision
    return mean + normal(rng) / np.sqrt(precision)
