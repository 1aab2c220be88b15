"""Optional kernel arguments without sentinel values.

A kernel argument that may be absent is passed as ``None``. Numba compiles one
specialisation per type, and these overloads resolve on the argument's type at
compile time, so the absent case costs nothing inside a loop.
"""

from __future__ import annotations

from numba.core import types
from numba.extending import overload


def row(array, i):
    """``array[i]``, or ``None`` when ``array`` is ``None`` (a run's slice of an optional
    output)."""


def store(array, i, value):
    """``array[i] = value`` when ``array`` is given; nothing when it is ``None``."""


@overload(row, inline="always")
def _row(array, i):
    if isinstance(array, types.NoneType):
        return lambda array, i: None
    return lambda array, i: array[i]


@overload(store, inline="always")
def _store(array, i, value):
    if isinstance(array, types.NoneType):
        return lambda array, i, value: None

    def impl(array, i, value):
        array[i] = value

    return impl
