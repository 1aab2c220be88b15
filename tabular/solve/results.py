"""What the solvers return: frozen records of arrays, shown by a short repr.

A result is a frozen dataclass compared by identity (``eq=False``: it holds arrays).
Its repr names the class and each field, an array by its dtype and shape and not its
numbers, so that a result printed at the prompt fits on a line or two:
``ValueIterationResult(V=float64[16], Q=float64[16, 4], ..., iterations=57)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tabular.results import short_repr


@dataclass(frozen=True, eq=False, repr=False)
class SolverResult:
    """The base of every solver's result: frozen, compared by identity, shown by
    :func:`short_repr`. Each result names its ``method``, how the solver computed it."""

    __repr__ = short_repr


@dataclass(frozen=True, eq=False, repr=False)
class SweepsResult(SolverResult):
    """A result reached by sweeps until a stopping rule held, with the keyword fields
    ``history``, the residual of each sweep; ``converged``, the rule held (``False`` only
    with ``strict=False``); ``iterations``, the number of sweeps; ``method``, the kind of
    sweep (:func:`sweeps_fields` gives them)."""

    history: np.ndarray = field(kw_only=True)
    converged: bool = field(kw_only=True)
    iterations: int = field(kw_only=True)
    method: str = field(kw_only=True)


def sweeps_fields(history, converged: bool, method: str) -> dict:
    """The keyword fields of a :class:`SweepsResult` whose sweeps left the residuals
    ``history``: ``iterations`` is their number."""
    return dict(history=history, converged=converged, iterations=len(history), method=method)
