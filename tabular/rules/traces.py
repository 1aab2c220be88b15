"""Eligibility traces and the lambda-return (Sutton & Barto, chapter 12), tabular case.

With one indicator feature per table entry, ``grad v(S_t) = x_t`` is the unit vector of
``S_t`` (of ``(S_t, A_t)`` for action values), so a trace vector ``z`` has one entry per
table entry and each trace rule of the book touches only the entry just visited, after
the decay ``z <- gamma lam z`` of every entry (:func:`decay_traces`):

- :func:`accumulating_trace` -- ``z(S) + 1`` (eq. 12.5);
- :func:`replacing_trace` -- ``1`` (eq. 12.12);
- :func:`dutch_trace` -- ``(1 - alpha) z(S) + 1`` (eq. 12.11, section 12.6).

Control adds a fourth kind, ``CLEARING``: the replacing trace of ``(S, A)`` with the
traces of the state's other actions ``(S, a)``, ``a != A``, set to 0 (section 12.7,
Figure 12.11; Singh and Sutton 1996): :func:`visit_trace` gives it the replacing
value, and the learner clears the rest of the state's row.

:func:`traced_update` applies a TD error along the traces (eq. 12.7); the true online
methods add :func:`true_online_gap` (eq. 12.10). :func:`lambda_returns` runs the
lambda-return backwards over an episode with the one recursion of
:mod:`tabular.rules.returns`.

``-inf`` stays exact (see :mod:`tabular.rules.values`): traces are never negative, an
entry off the trace (``z = 0``) is left alone, so no ``0 * -inf`` forms, and a ``-inf``
estimate is absorbing.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular.rules.returns import discounted_returns
from tabular.rules.values import td_target

ACCUMULATING, REPLACING, DUTCH, CLEARING = 0, 1, 2, 3


@njit(cache=True, inline="always")
def decay_traces(z, discount):
    """``z <- gamma lam z``, the fading of every trace between two steps (eq. 12.5)."""
    z *= discount


@njit(cache=True, inline="always")
def accumulating_trace(z_s):
    """``z(S) + 1``: the accumulating trace ``z_t = gamma lam z_{t-1} + grad v(S_t)``
    (eq. 12.5) at the visited entry, ``z_s`` already decayed."""
    return z_s + 1.0


@njit(cache=True, inline="always")
def replacing_trace(z_s):
    """``1``: the replacing trace resets the visited entry to 1 (eq. 12.12)."""
    return 1.0


@njit(cache=True, inline="always")
def dutch_trace(z_s, alpha):
    """``(1 - alpha) z(S) + 1``: the dutch trace ``z_t = gamma lam z_{t-1} + (1 - alpha
    gamma lam z_{t-1}^T x_t) x_t`` (eq. 12.11) at the visited entry, ``z_s`` already
    decayed; between the accumulating (``alpha -> 0``) and the replacing (``alpha = 1``)
    trace (section 12.6)."""
    return (1.0 - alpha) * z_s + 1.0


@njit(cache=True, inline="always")
def visit_trace(kind, z_s, alpha):
    """The trace of the visited entry by ``kind`` (``ACCUMULATING``, ``REPLACING``,
    ``DUTCH`` or ``CLEARING``, whose visited entry is replaced), ``z_s`` already
    decayed."""
    if kind == REPLACING or kind == CLEARING:
        return replacing_trace(z_s)
    if kind == DUTCH:
        return dutch_trace(z_s, alpha)
    return accumulating_trace(z_s)


@njit(cache=True, inline="always")
def traced_update(values, z, step_sizes, delta):
    """``w <- w + alpha delta z`` (eq. 12.7) over one row of the table, each entry with
    its own step size ``step_sizes[i]``; an entry off the trace is untouched, so a ``-inf`` TD
    error reaches only the entries visited."""
    for i in range(values.shape[0]):
        if z[i] != 0.0:
            values[i] += step_sizes[i] * delta * z[i]


@njit(cache=True, inline="always")
def true_online_gap(value, old_value):
    """``w_t^T x_t - w_{t-1}^T x_t``, the change of the visited estimate since it was last
    bootstrapped from, of the true online update ``w_{t+1} = w_t + alpha delta_t z_t +
    alpha (w_t^T x_t - w_{t-1}^T x_t)(z_t - x_t)`` (eq. 12.10). A ``-inf`` estimate is
    exact and absorbing: its gap is 0 (no ``-inf - -inf``)."""
    if value == -np.inf:
        return 0.0
    return value - old_value


@njit(cache=True, inline="always")
def lambda_returns(rewards, values, dones, gamma, lam, out):
    """``G^lam_t = R_{t+1} + gamma [(1 - lam) V(S_{t+1}) + lam G^lam_{t+1}]`` for ``t < T``
    (the lambda-return, eqs. 12.2-12.3, run backwards): ``discounted_returns`` of
    ``x_t = R_{t+1} + gamma (1 - lam) V(S_{t+1})`` at rate ``gamma lam``. ``values[t]``
    is ``V(S_t)``; ``values[T]`` bootstraps a truncated episode (it then weighs in
    fully, as in the truncated lambda-return, eq. 12.9) and is ignored after
    ``dones[T-1]``. ``lam = 1`` gives the Monte Carlo return, ``lam = 0`` the one-step
    TD target."""
    T = rewards.shape[0]
    for t in range(T):
        out[t] = td_target(rewards[t], gamma * (1.0 - lam), values[t + 1], dones[t])
    discounted_returns(out[:T], gamma * lam, dones, values[T], out)
