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


@dataclass(frozen=True, eq=False, repr=False)
class ValueIterationResult(SweepsResult):
    """What :func:`value_iteration` returns.

    ``V``: the values ``[S]``, within ``tol`` of ``v*`` when converged with
    ``gamma < 1``; ``Q``: ``q(s, a)`` of ``V`` ``[S, A]`` (eq. 4.6); ``policy``: greedy in
    ``Q``, int64 ``[S]`` (:func:`~tabular.terminating_greedy_policy` when
    ``gamma == 1``); ``history``: the sup-norm residual ``||V_{k+1} - V_k||_inf`` of
    each sweep; ``converged``: the stopping rule held (``False`` only with
    ``strict=False``); ``iterations``: the number of sweeps; ``method``: ``"sync"``,
    ``"inplace"`` or ``"blocked"``.
    """

    V: np.ndarray
    Q: np.ndarray
    policy: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class PolicyEvaluationResult(SweepsResult):
    """What :func:`policy_evaluation` returns.

    ``V``: ``v_pi [S]``; ``Q``: ``q_pi [S, A]`` (eq. 4.6); ``history``: the residual of
    each sweep (empty for ``"exact"``); ``converged``: the stopping rule held (always
    ``True`` for ``"exact"``); ``iterations``: the number of sweeps (0 for
    ``"exact"``); ``method``: ``"exact"``, ``"sync"`` or ``"inplace"``.
    """

    V: np.ndarray
    Q: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class PolicyIterationResult(SolverResult):
    """What :func:`policy_iteration` returns.

    ``V`` ``[S]``, ``Q`` ``[S, A]``: the final values (exact: ``v_pi`` of ``policy``;
    modified: ``T* V`` of the last evaluation); ``policy``: int64 ``[S]``;
    ``improvements``: the improvement steps that changed the policy; ``values``:
    ``[iterations, S]``, the value after each evaluation step; ``converged``: the
    policy was stable (exact) or the stopping rule held (modified), ``False`` only
    with ``strict=False``; ``iterations``: the number of evaluation steps;
    ``method``: ``"exact"`` (policy iteration, section 4.3) or ``"modified"``
    (``eval_sweeps`` synchronous sweeps per evaluation, Puterman, 1994, section 6.5);
    ``eval_sweeps``: ``None`` for ``"exact"``, else ``k``.
    """

    V: np.ndarray
    Q: np.ndarray
    policy: np.ndarray
    improvements: int
    values: np.ndarray
    converged: bool
    iterations: int
    method: str
    eval_sweeps: int | None


@dataclass(frozen=True, eq=False, repr=False)
class SoftValueIterationResult(SweepsResult):
    """What :func:`soft_value_iteration` returns.

    ``V``: the soft values ``[S]``; ``Q``: ``[S, A]`` of ``V`` (eq. 4.6); ``policy``: the
    stochastic optimum ``[S, A]``, ``ref(a|s) exp((Q(s, a) - V(s)) / beta)``;
    ``history``: the residual of each sweep; ``converged``: the stopping rule held;
    ``iterations``: the number of sweeps; ``method``: ``"sync"`` or ``"inplace"``.
    """

    V: np.ndarray
    Q: np.ndarray
    policy: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class RelativeValueIterationResult(SweepsResult):
    """What :func:`relative_value_iteration` returns.

    ``rho``: the optimal gain, within ``tol / 2`` of ``rho*`` when converged;
    ``h``: the bias (differential values) ``[S]``, ``h(0) = 0``; ``Q``: the differential
    action values of ``h`` ``[S, A]``; ``policy``: greedy in ``Q``, int64 ``[S]``, whose
    gain is within ``tol`` of ``rho*``; ``history``: the span
    ``max(T h - h) - min(T h - h)`` of each sweep; ``converged``: the span fell below
    ``tol`` (``False`` only with ``strict=False``); ``iterations``: the number of
    sweeps; ``method``: ``"sync"``.
    """

    rho: float
    h: np.ndarray
    Q: np.ndarray
    policy: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class AverageRewardResult(SolverResult):
    """What :func:`average_reward_solve` returns.

    ``rho``: the gain of the policy; ``h``: its bias ``[S]``, ``h(0) = 0``; ``Q``: the
    differential action values ``r(s, a) - rho + sum_s' p(s'|s, a) h(s')`` ``[S, A]``;
    ``method``: ``"exact"``.
    """

    rho: float
    h: np.ndarray
    Q: np.ndarray
    method: str


@dataclass(frozen=True, eq=False, repr=False)
class FiniteHorizonResult(SolverResult):
    """What :func:`finite_horizon` returns.

    ``V``: ``[horizon + 1, S]``, ``V[t]`` the optimal expected (discounted) return of the
    ``horizon - t`` steps left at time ``t``, ``V[horizon]`` the terminal values;
    ``policy``: int64 ``[horizon, S]``, ``policy[t]`` the action to take at time ``t``
    (greedy, the lowest index among ties); ``method``: ``"backward_induction"``.
    """

    V: np.ndarray
    policy: np.ndarray
    method: str
