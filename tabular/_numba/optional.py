"""Optional kernel arguments without sentinel values.

A kernel argument that the inner loop reads and that may be absent (an action mask)
is passed as ``None``. Numba compiles one specialisation per type, and these
overloads resolve on the argument's type at compile time, so the absent case costs
nothing inside a loop. (An argument read once per episode or not at all, such as a
value history or a KL reference, is always an array instead: one compiled kernel
serves both cases; see :func:`tabular.learn.outputs.record_history`.)
"""

from __future__ import annotations

from numba.core import types
from numba.extending import overload


def row(array, i):
    """``array[i]``, or ``None`` when ``array`` is ``None`` (a state's row of an optional
    action mask). This body serves a call from Python; a kernel compiles the overload
    below, which resolves on the argument's type."""
    return None if array is None else array[i]


@overload(row, inline="always")
def _row(array, i):
    if isinstance(array, types.NoneType):
        return lambda array, i: None
    return lambda array, i: array[i]
