"""Linear function approximation's operations (Sutton & Barto, sections 9.4 and 10.1-10.3):
the estimate ``v(s, w) = x(s) . w`` (eq. 9.8), the (semi-)gradient step toward a target
(eq. 9.7, with ``grad v(s, w) = x(s)``, eq. 9.9), the action values ``q(s, ., w)`` that
control acts on, and the average-reward step of differential SARSA. They skip the zero
features, so a sparse feature row (aggregation, tile coding, one-hot) costs its active
features only, and with one-hot features they are exactly the tabular estimate and eq.
2.4's update.

The off-policy rules of chapter 11 are written beside them: the weight steps of the
gradient-TD methods TDC and GTD2 (section 11.7) and emphatic TD's followon trace
(section 11.8); and the trace vectors of chapter 12 with feature vectors in place of
the tabular unit vectors (:mod:`tabular.rules.traces`, whose decay they share): the
accumulating, replacing (binary features) and dutch traces, the clearing of the other
actions' traces, and the TD(lambda) and true online weight steps.
"""

from __future__ import annotations

from numba import njit

from tabular.rules.values import td_error


@njit(cache=True, inline="always")
def linear_value(x, w):
    """``v(s, w) = x(s) . w`` (eq. 9.8), over the nonzero features of ``x``."""
    total = 0.0
    for i in range(w.shape[0]):
        if x[i] != 0.0:
            total += x[i] * w[i]
    return total


@njit(cache=True, inline="always")
def gradient_step(w, x, target, step):
    """``w <- w + alpha [U - v(S, w)] x(S)`` in place (eq. 9.7): a true gradient step of
    the squared error when the target ``U`` does not depend on ``w`` (Monte Carlo), a
    semi-gradient step when it bootstraps from ``w`` (TD, eq. 9.15's update)."""
    scaled = step * td_error(target, linear_value(x, w))
    for i in range(w.shape[0]):
        if x[i] != 0.0:
            w[i] += scaled * x[i]


@njit(cache=True, inline="always")
def action_values(x_rows, w, out):
    """``out[a] = q(s, a, w) = x(s, a) . w`` for every action (section 10.1), ``x_rows``
    the state's feature rows ``[A, d]``: the row epsilon-greedy selection reads."""
    for a in range(out.shape[0]):
        out[a] = linear_value(x_rows[a], w)


@njit(cache=True)
def average_reward_update(average, delta, beta):
    """``Rbar <- Rbar + beta delta`` (the box of section 10.3), ``delta`` the differential
    TD error of eq. 10.10."""
    return average + beta * delta


@njit(cache=True, inline="always")
def tdc_step(w, x, x_next, delta, x_dot_v, gamma, step):
    """``w <- w + alpha rho [delta x(S) - gamma x(S') (x(S) . v)]`` in place: TD(0) with
    gradient correction (TDC, eq. 11.30), ``step = alpha rho``, ``x_dot_v = x(S) . v``
    with the secondary weights ``v`` before their own update."""
    for i in range(w.shape[0]):
        w[i] += step * (delta * x[i] - gamma * x_next[i] * x_dot_v)


@njit(cache=True, inline="always")
def gtd2_step(w, x, x_next, x_dot_v, gamma, step):
    """``w <- w + alpha rho [x(S) - gamma x(S')] (x(S) . v)`` in place (GTD2, eq. 11.29),
    ``step = alpha rho``. The secondary weights ``v`` themselves follow
    :func:`gradient_step` toward the TD error (the LMS rule of eq. 11.28's ``v``)."""
    for i in range(w.shape[0]):
        w[i] += step * (x[i] - gamma * x_next[i]) * x_dot_v


@njit(cache=True)
def followon_trace(previous, previous_ratio, gamma, interest):
    """``M_t = gamma rho_{t-1} M_{t-1} + I_t`` (eq. 11.24), the emphasis of emphatic TD;
    ``M_{-1} = 0`` at the start of an episode."""
    return gamma * previous_ratio * previous + interest


@njit(cache=True, inline="always")
def accumulate_features(z, x):
    """``z <- z + x(S)`` in place, ``z`` already decayed by ``gamma lam``: the
    accumulating trace ``z_t = gamma lam z_{t-1} + grad v(S_t, w)`` (eq. 12.5), with
    ``grad v = x`` (eq. 9.9)."""
    for i in range(z.shape[0]):
        if x[i] != 0.0:
            z[i] += x[i]


@njit(cache=True, inline="always")
def replace_features(z, x):
    """``z_i <- 1`` in place on the active features (``x_i != 0``), ``z`` already decayed by
    ``gamma lam``: the replacing trace of eq. 12.12 with binary features (the box of
    section 12.7); a one-hot ``x`` gives the tabular
    :func:`~tabular.rules.traces.replacing_trace`."""
    for i in range(z.shape[0]):
        if x[i] != 0.0:
            z[i] = 1.0


@njit(cache=True, inline="always")
def clear_other_actions(z, x_rows, a):
    """``z_i <- 0`` in place on every feature active in ``x(S, b)`` for an action ``b !=
    A``, ``x_rows`` the state's feature rows ``[A, d]``: the clearing of the other
    actions' traces that Figure 12.11's fourth Sarsa(lambda) adds to the replacing trace
    (section 12.7; Singh and Sutton 1996), before :func:`replace_features` sets those
    of ``x(S, A)`` to 1. A one-hot ``x`` clears the row ``z(S, .)`` of the table."""
    for b in range(x_rows.shape[0]):
        if b != a:
            for i in range(z.shape[0]):
                if x_rows[b, i] != 0.0:
                    z[i] = 0.0


@njit(cache=True, inline="always")
def dutch_features(z, x, alpha):
    """``z <- z + (1 - alpha z . x) x`` in place, ``z`` already decayed by ``gamma lam``:
    the dutch trace of eq. 12.11. Each entry is computed as ``(1 - alpha x_i^2) z_i + x_i
    - alpha x_i sum_{j != i} x_j z_j`` (the same sum, its own term first), so that a
    one-hot ``x`` gives the tabular ``(1 - alpha) z + 1``
    (:func:`~tabular.rules.traces.dutch_trace`) bit for bit."""
    zx = linear_value(x, z)
    for i in range(z.shape[0]):
        if x[i] != 0.0:
            z[i] = (1.0 - alpha * x[i] * x[i]) * z[i] + x[i] - alpha * x[i] * (zx - x[i] * z[i])


@njit(cache=True, inline="always")
def trace_step(w, z, step):
    """``w <- w + alpha delta z`` in place (eq. 12.7), ``step = alpha delta``; an entry
    off the trace (``z_i = 0``) is untouched."""
    for i in range(w.shape[0]):
        if z[i] != 0.0:
            w[i] += step * z[i]


@njit(cache=True, inline="always")
def true_online_step(w, z, x, delta, gap, alpha):
    """``w <- w + alpha (delta + gap) z - alpha gap x`` in place: the true online update
    ``w_{t+1} = w_t + alpha delta_t z_t + alpha (w_t . x_t - w_{t-1} . x_t)(z_t - x_t)``
    (eq. 12.10, the box of section 12.5), ``gap = w_t . x_t - w_{t-1} . x_t``
    (:func:`~tabular.rules.traces.true_online_gap`), in the tabular kernel's order."""
    trace_step(w, z, alpha * (delta + gap))
    shift = alpha * gap
    for i in range(w.shape[0]):
        if x[i] != 0.0:
            w[i] -= shift * x[i]
