"""The two state-value estimates one n-step TD loop learns (Sutton & Barto, sections 7.1
and 9.3-9.4): the table ``V[s]`` and the linear ``v(s, w) = x(s) . w`` (eq. 9.8).

An estimate is its array, ``V [S]`` or ``w [d]``, with ``features``: ``None`` for the
table, ``X [S, d]`` for the linear estimate. Its step size is a schedule over the visits
of each state (the tabular learners, :mod:`tabular.schedules`) or a constant number
(chapter 9's setting). With one-hot features the two estimates are one, number for
number (:mod:`tabular.rules.linear`).

Each function is a Python body, which serves a call from Python, and an ``@overload``
that numba compiles in its place, chosen by the type of ``features`` (and of ``alpha``)
at compile time and inlined into numba's IR: a kernel compiles the arithmetic of its own
estimate only, with no branch and no call, as when each loop was written out for its
estimate (docs/decisions/2026-12-07-shared-estimates.md).
"""

from __future__ import annotations

from numba import njit, types
from numba.extending import overload

from tabular.rules.linear import gradient_step, linear_value
from tabular.rules.values import update_toward
from tabular.schedules import value_at_visit


def state_value(estimate, features, s):
    """The estimate of state ``s``: ``V[s]``, or ``x(s) . w`` (eq. 9.8) when ``features``
    holds ``X``."""
    return estimate[s] if features is None else linear_value(features[s], estimate)


def move_toward(estimate, features, s, target, alpha, visits):
    """Move the estimate of ``s`` toward ``target`` in place: ``V[s] <- V[s] + alpha_n
    [target - V[s]]`` (eq. 2.4), or the semi-gradient step ``w <- w + alpha [target - x(s)
    . w] x(s)`` (eq. 9.7, with ``grad v(s, w) = x(s)``, eq. 9.9). The step size ``alpha``
    is a number, or a schedule (a tuple of :func:`~tabular.schedules.read_schedule`)
    valued at the next visit of ``s``, counted in ``visits``
    (:func:`~tabular.schedules.value_at_visit`)."""
    step = alpha if isinstance(alpha, float) else value_at_visit(alpha, visits, s)
    if features is None:
        estimate[s] = update_toward(estimate[s], target, step)
    else:
        gradient_step(estimate, features[s], target, step)


@njit(cache=True, inline="always")
def _constant_step(alpha, visits, s):
    """The step size ``alpha`` itself, a number (chapter 9's setting): nothing counted."""
    return alpha


def _table(features):
    return isinstance(features, types.NoneType)


@overload(state_value, inline="always")
def _state_value(estimate, features, s):
    if _table(features):
        return lambda estimate, features, s: estimate[s]
    return lambda estimate, features, s: linear_value(features[s], estimate)


@overload(move_toward, inline="always")
def _move_toward(estimate, features, s, target, alpha, visits):
    # The step rule is chosen here too, by alpha's type, rather than by an overload
    # called from these bodies: numba warned of its own IR (NumbaIRAssumptionWarning) on
    # an inline overload inside another. The table reads V[s] before the visit is
    # counted, as the loop written out did: counted first, the load waits for the
    # count's store, and n-step TD with a visit schedule ran 0.93x.
    step = _constant_step if isinstance(alpha, types.Float) else value_at_visit
    if _table(features):
        def table_step(estimate, features, s, target, alpha, visits):
            estimate[s] = update_toward(estimate[s], target, step(alpha, visits, s))
        return table_step

    def linear_step(estimate, features, s, target, alpha, visits):
        gradient_step(estimate, features[s], target, step(alpha, visits, s))
    return linear_step
