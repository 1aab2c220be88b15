"""Step-size and exploration schedules that kernels can evaluate.

A schedule is four floats ``(kind, a, b, c)``; :func:`schedule_value` evaluates it
inside a kernel at a count ``n = 1, 2, ...`` (what ``n`` counts is the caller's
choice and is documented there: the learners in :mod:`tabular.learn.td` and
:mod:`tabular.learn.mc` count step sizes per visit of the state or state-action pair,
and exploration per episode). Kernels take the ``float64[4]`` array
:attr:`Schedule.params` and read it into a tuple with :func:`read_schedule` before
their loops.

=============  ========================================  ==========================
kind           value at ``n >= 1``                       constructor
=============  ========================================  ==========================
constant       ``a``                                     :func:`constant`
inverse        ``a / (n + c) ** b``                      :func:`inverse`
exponential    ``max(c, a * b ** (n - 1))``              :func:`exponential`
linear         ``a + (b - a) * min((n - 1) / c, 1)``     :func:`linear`
=============  ========================================  ==========================

``inverse(1.0)`` is the sample-average step size ``1/n`` (Sutton & Barto eq. 2.3);
with ``0.5 < power <= 1`` an inverse schedule meets the stochastic-approximation
conditions of eq. 2.7, a constant one does not (it tracks, eq. 2.5). Every
schedule is monotone in ``n``, so checking its first value and its limit checks
all of its values.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular.checks import is_real

CONSTANT, INVERSE, EXPONENTIAL, LINEAR = 0, 1, 2, 3
_KIND_NAMES = {CONSTANT: "constant", INVERSE: "inverse", EXPONENTIAL: "exponential",
               LINEAR: "linear"}


@njit(cache=True)
def schedule_value(params: np.ndarray | tuple[float, float, float, float],
                   n: float) -> float:
    """The value of schedule ``params = (kind, a, b, c)`` at count ``n >= 1``."""
    kind = int(params[0])
    a, b, c = params[1], params[2], params[3]
    if kind == INVERSE:
        return a / (n + c) if b == 1.0 else a / (n + c) ** b  # x ** 1.0 is x: skip the pow
    if kind == EXPONENTIAL:
        return max(c, a * b ** (n - 1))
    if kind == LINEAR:
        return a + (b - a) * min((n - 1) / c, 1.0)
    return a


@njit(cache=True, inline="always")
def counts_visits(params: np.ndarray | tuple[float, float, float, float]) -> bool:
    """Whether the schedule's value depends on the count ``n``: every kind but constant.
    A kernel keeps visit counts only for such a schedule (:func:`value_at_visit`)."""
    return params[0] != CONSTANT


@njit(cache=True, inline="always")
def value_at_visit(params: np.ndarray | tuple[float, float, float, float],
                   counts: np.ndarray, index: int | tuple[int, ...]) -> float:
    """The value of schedule ``params`` at the next visit of ``index``, counted in
    ``counts[index]``; a constant schedule counts nothing, so its ``counts`` may be
    empty (:func:`counts_visits`)."""
    if params[0] == CONSTANT:
        return params[1]
    counts[index] += 1
    return schedule_value(params, counts[index])


@njit(cache=True)
def read_schedule(params: np.ndarray) -> tuple[float, float, float, float]:
    """The schedule ``params`` as a tuple ``(kind, a, b, c)`` that :func:`schedule_value`
    also takes. Read once before an episode loop, so that the loop keeps the four
    numbers in registers: the compiler cannot prove that the loop's stores leave an
    array that came in a record untouched, and would reload it after each store."""
    return (params[0], params[1], params[2], params[3])


@dataclass(frozen=True)
class Schedule:
    """A schedule ``(kind, a, b, c)``; build one with :func:`constant`, :func:`inverse`,
    :func:`exponential` or :func:`linear`. Calling it evaluates it at ``n``."""

    kind: int
    a: float
    b: float = 0.0
    c: float = 0.0

    def __post_init__(self):
        if self.kind not in _KIND_NAMES:
            raise ValueError(f"unknown schedule kind {self.kind!r}; kinds: "
                             + ", ".join(f"{k} ({name})" for k, name in _KIND_NAMES.items()))
        for name, value in zip(_PARAM_NAMES[self.kind], (self.a, self.b, self.c),
                               strict=False):
            _finite(f"{_KIND_NAMES[self.kind]} schedule's {name}", value)
        problem = _DOMAIN[self.kind](self.a, self.b, self.c)
        if problem:
            raise ValueError(f"{_KIND_NAMES[self.kind]} schedule needs {problem}, got "
                             + ", ".join(f"{n}={v!r}" for n, v in zip(
                                 _PARAM_NAMES[self.kind], (self.a, self.b, self.c),
                                 strict=False)))

    @property
    def params(self) -> np.ndarray:
        """``float64[4]``, what a kernel takes."""
        return np.array([self.kind, self.a, self.b, self.c], dtype=np.float64)

    def __call__(self, n: npt.ArrayLike) -> float | np.ndarray:
        """Value(s) at count ``n`` (an int or an array of ints ``>= 1``)."""
        params = self.params
        values = [schedule_value(params, float(k)) for k in np.ravel(n)]
        return values[0] if np.ndim(n) == 0 else np.reshape(values, np.shape(n))

    @property
    def first(self) -> float:
        return float(schedule_value(self.params, 1.0))

    @property
    def limit(self) -> float:
        """The value as ``n -> infinity``."""
        if self.kind == INVERSE:
            return 0.0
        if self.kind == EXPONENTIAL:
            return self.c if self.b < 1.0 else self.a
        if self.kind == LINEAR:
            return self.b
        return self.a

    @property
    def attains_limit(self) -> bool:
        """False when the limit is approached but never reached (``1/n`` -> 0)."""
        if self.kind == INVERSE:
            return False
        if self.kind == EXPONENTIAL:
            return self.b == 1.0 or self.c > 0.0
        return True

    def __repr__(self) -> str:
        return f"{_KIND_NAMES[self.kind]}({self.a!r}, {self.b!r}, {self.c!r})"


def _finite(name: str, value) -> float:
    if not is_real(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):  # a float's test: NumPy's costs a microsecond a call
        raise ValueError(f"{name} must be a finite number, got {value}")
    return value


#: Each kind's parameter names, and what its parameters must satisfy (a message when
#: they do not: every value is then finite and no division is by zero).
_PARAM_NAMES = {CONSTANT: ("value",), INVERSE: ("scale", "power", "offset"),
                EXPONENTIAL: ("start", "decay", "floor"), LINEAR: ("start", "end", "steps")}
_DOMAIN = {
    CONSTANT: lambda a, b, c: "",
    INVERSE: lambda a, b, c: "" if a > 0.0 and b > 0.0 and c >= 0.0 else
    "scale > 0, power > 0 and offset >= 0",
    EXPONENTIAL: lambda a, b, c: "" if 0.0 < b <= 1.0 and 0.0 <= c <= a else
    "0 < decay <= 1 and 0 <= floor <= start",
    LINEAR: lambda a, b, c: "" if c >= 1.0 else "steps >= 1",
}


def constant(value: float) -> Schedule:
    """The same value at every count (a constant step size tracks: eq. 2.5)."""
    return Schedule(CONSTANT, _finite("value", value))


def inverse(scale: float = 1.0, power: float = 1.0, offset: float = 0.0) -> Schedule:
    """``scale / (n + offset) ** power``; ``inverse()`` is the sample average ``1/n``."""
    return Schedule(INVERSE, _finite("scale", scale), _finite("power", power),
                    _finite("offset", offset))


def exponential(start: float, decay: float, floor: float = 0.0) -> Schedule:
    """``max(floor, start * decay ** (n - 1))``."""
    return Schedule(EXPONENTIAL, _finite("start", start), _finite("decay", decay),
                    _finite("floor", floor))


def linear(start: float, end: float, steps: float) -> Schedule:
    """From ``start`` at ``n = 1`` to ``end`` at ``n = steps + 1``, then ``end``."""
    return Schedule(LINEAR, _finite("start", start), _finite("end", end),
                    _finite("steps", steps))


#: :func:`constant` of the numbers learners are called with: a schedule is immutable.
_constant = functools.lru_cache(maxsize=256)(constant)


def _inside(x: float, low: float, high: float, low_inclusive: bool) -> bool:
    """``x`` in ``(low, high]``, or in ``[low, high]`` with ``low_inclusive``."""
    return (x >= low if low_inclusive else x > low) and x <= high


def as_schedule(name: str, value: float | Schedule, low: float = 0.0, high: float = 1.0,
                low_inclusive: bool = False) -> Schedule:
    """A number or :class:`Schedule` as a validated schedule whose every value lies in
    ``(low, high]`` (``[low, high]`` with ``low_inclusive``); the error names ``name``.

    A limit that is approached but never reached (``1/n -> 0``) may equal ``low``.
    """
    if not isinstance(value, Schedule):
        if not is_real(value):
            raise ValueError(f"{name} must be a number or a tabular.schedules.Schedule, "
                             f"got {value!r}")
        value = _constant(_finite(name, value))
    first = value.a if value.kind == CONSTANT else value.first  # no kernel call for a number
    if not (_inside(first, low, high, low_inclusive)
            and _inside(value.limit, low, high, low_inclusive or not value.attains_limit)):
        interval = f"{'[' if low_inclusive else '('}{low}, {high}]"
        raise ValueError(f"{name} must stay in {interval}, got {value!r} "
                         f"(first value {first}, limit {value.limit})")
    return value
