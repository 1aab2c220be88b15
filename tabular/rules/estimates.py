"""The two state-value estimates one n-step TD loop learns (Sutton & Barto, sections 7.1
and 9.3-9.4): the table ``V[s]`` and the linear ``v(s, w) = x(s) . w`` (eq. 9.8).

An estimate is its array, ``V [S]`` or ``w [d]``, with ``features``: ``None`` for the
table, ``X [S, d]`` for the linear estimate. Its step size is a schedule over the visits
of each state (the tabular learners, :mod:`tabular.schedules`) or a constant number
(chapter 9's setting). With one-hot features the two estimates are one, number for
number (:mod:`tabular.rules.linear`).

Each function is a Python body, which serves a call from Python, and an ``@overload``
that numba compiles in its place, chosen by the type of ``features`` (or of ``alpha``)
at compile time and inlined into numba's IR: a kernel compiles the arithmetic of its own
estimate only, with no branch and no call, as when each loop was written out for its
estimate (docs/decisions/2026-12-07-shared-estimates.md).
"""

from __future__ import annotations

from numba import types
from numba.extending import overload

from tabular.rules.linear import gradient_step, linear_value
from tabular.rules.values import update_toward
from tabular.schedules import value_at_visit


def state_value(estimate, features, s):
    """The estimate of state ``s``: ``V[s]``, or ``x(s) . w`` (eq. 9.8) when ``features``
    holds ``X``."""
    return estimate[s] if features is None else linear_value(features[s], estimate)


def move_toward(estimate, features, s, target, step):
    """Move the estimate of ``s`` toward ``target`` in place: ``V[s] <- V[s] + step
    [target - V[s]]`` (eq. 2.4), or the semi-gradient step ``w <- w + step [target -
    x(s) . w] x(s)`` (eq. 9.7, with ``grad v(s, w) = x(s)``, eq. 9.9)."""
    if features is None:
        estimate[s] = update_toward(estimate[s], target, step)
    else:
        gradient_step(estimate, features[s], target, step)


def step_size(alpha, visits, s):
    """The step size of an update at ``s``: ``alpha`` itself when it is a number, else
    the value of the schedule ``alpha`` (a tuple of :func:`~tabular.schedules.read_schedule`)
    at the next visit of ``s``, counted in ``visits``
    (:func:`~tabular.schedules.value_at_visit`)."""
    return alpha if isinstance(alpha, float) else value_at_visit(alpha, visits, s)


def _table(features):
    return isinstance(features, types.NoneType)


@overload(state_value, inline="always")
def _state_value(estimate, features, s):
    if _table(features):
        return lambda estimate, features, s: estimate[s]
    return lambda estimate, features, s: linear_value(features[s], estimate)


@overload(move_toward, inline="always")
def _move_toward(estimate, features, s, target, step):
    if _table(features):
        def table_step(estimate, features, s, target, step):
            estimate[s] = update_toward(estimate[s], target, step)
        return table_step

    def linear_step(estimate, features, s, target, step):
        gradient_step(estimate, features[s], target, step)
    return linear_step


@overload(step_size, inline="always")
def _step_size(alpha, visits, s):
    if isinstance(alpha, types.Float):
        return lambda alpha, visits, s: alpha
    return lambda alpha, visits, s: value_at_visit(alpha, visits, s)
