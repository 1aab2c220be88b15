"""Dynamic programming: the exact ground truth every learner is tested against.

Sutton & Barto 2nd ed., chapter 4: iterative and exact policy evaluation
(section 4.1), policy iteration (4.3) and its modified form with ``k``
evaluation sweeps (generalised policy iteration, 4.6; Puterman, 1994, section
6.5), value iteration (4.4), and soft (KL-regularised) value iteration, whose
policy ``pi*(a|s) ∝ ref(a|s) exp(Q(s, a) / beta)`` is the exact optimum of RLHF
on a token tree. The operators they iterate, and the policies
read off a ``Q`` table, are in :mod:`tabular.solve.bellman`.

Sweep methods, one vocabulary for every solver: ``"sync"`` computes each sweep
from the previous vector (Jacobi, eq. 4.5 / 4.10 for all states at once, run in
parallel on large models); ``"inplace"`` overwrites the vector state by state,
in state order, so later states already see new values (section 4.1's in-place
algorithm, Gauss-Seidel); ``"blocked"`` (value iteration) runs Gauss-Seidel inside
fixed blocks of states and the blocks in parallel, each reading the others' values of
the previous sweep (block Jacobi: Gauss-Seidel's fewer sweeps on several threads, the
same numbers on any number of them); ``"exact"`` (policy evaluation) solves the linear
system (:mod:`tabular.solve.exact`). Every result records its ``method``.

The discount ``gamma`` is required by every solver (no default: the answer
depends on it, and the model stores none).

Stopping rule (every iterative method, ``gamma < 1``): the operators are
``gamma``-contractions in the sup norm, so a sweep with residual
``||V_{k+1} - V_k||_inf < tol (1 - gamma) / gamma`` leaves
``||V_{k+1} - V*||_inf <= gamma / (1 - gamma) ||V_{k+1} - V_k||_inf < tol``.
With ``gamma == 1`` (episodic tasks) the rule is ``residual < tol`` with the
iteration cap ``max_iter``; values that diverge, or states from which no policy
reaches termination, are named in the error.

Reaching ``max_iter`` raises :class:`ConvergenceError` naming it; with
``strict=False`` the solver returns its last iterate with ``converged=False``
instead (used to study truncated sweeps, e.g. Figure 4.1).

``-inf`` rewards (the trap of the trap/treasure grid) are exact: ``V = -inf``
where the trap cannot be avoided, ``max`` ignores actions that risk it, no NaN.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tabular.checks import (
    check_flag,
    check_gamma,
    check_nonnegative,
    check_positive,
    check_positive_int,
    policy_matrix,
)
from tabular.model.graph import safe_actions
from tabular.model.mdp import TabularMDP
from tabular.solve import sweeps as kernels
from tabular.solve.bellman import (
    MAX_ITER,
    ConvergenceError,
    greedy_policy,
    iterate,
    optimal_actions,
    q_table,
    reference,
    single_thread_when_small,
    soft_policy,
    stopping_threshold,
    sup_distance,
    terminating_greedy_policy,
)
from tabular.solve.exact import policy_values
from tabular.solve.results import (
    PolicyEvaluationResult,
    PolicyIterationResult,
    SoftValueIterationResult,
    ValueIterationResult,
    sweeps_fields,
)
from tabular.types import PolicyLike

__all__ = ["ConvergenceError", "optimal_actions", "policy_evaluation", "policy_iteration",
           "soft_value_iteration", "value_iteration"]


# --------------------------------------------------------------- algorithms
@single_thread_when_small
def value_iteration(mdp: TabularMDP, gamma: float, *, tol: float = 1e-8, method: str = "sync",
                    max_iter: int = 100_000, V0: npt.ArrayLike | None = None, strict: bool = True
                    ) -> ValueIterationResult:
    """Value iteration (section 4.4): ``V <- T* V`` (eq. 4.10) until the stopping rule holds.

    ``mdp``: the model; ``gamma``: the discount in ``[0, 1]``, required; ``tol``
    (default ``1e-8``): for ``gamma < 1`` the returned ``V`` satisfies
    ``||V - v*||_inf <= tol``, for ``gamma == 1`` the last residual is below ``tol``;
    ``method`` (default ``"sync"``): ``"sync"``, ``"inplace"`` or ``"blocked"`` sweeps
    (the module docstring says what each does); ``max_iter``
    (default 100000): the sweep limit; ``V0`` (default ``None``: zeros): the start
    values ``[S]``; ``strict`` (default ``True``): raise :class:`ConvergenceError` at
    ``max_iter``, or with ``False`` return the last iterate with ``converged=False``.
    With ``gamma == 1``, ``policy`` is :func:`~tabular.terminating_greedy_policy` (an
    optimal action that ends the episode, not one that ties by looping in place).
    """
    gamma, tol, max_iter = _check_iteration(gamma, tol, max_iter)
    sweep = _pick(method, {"sync": kernels.optimality_sweep,
                           "inplace": kernels.optimality_sweep_inplace,
                           "blocked": kernels.optimality_sweep_blocks})
    V, history, converged = iterate(mdp, sweep, name="value_iteration", method=method,
                                    gamma=gamma, tol=tol, max_iter=max_iter, V0=V0,
                                    strict=strict)
    Q = q_table(mdp, V, gamma)
    policy = greedy_policy(Q) if gamma < 1.0 else terminating_greedy_policy(mdp, Q, tol)
    return ValueIterationResult(V, Q, policy, **sweeps_fields(history, converged, method))


@single_thread_when_small
def policy_evaluation(mdp: TabularMDP, policy: PolicyLike, gamma: float, *, method: str = "exact",
                      tol: float = 1e-10, max_iter: int = 100_000, V0: npt.ArrayLike | None = None,
                      strict: bool = True) -> PolicyEvaluationResult:
    """``v_pi`` and ``q_pi`` of a policy (section 4.1).

    ``mdp``: the model; ``policy``: greedy ``int [S]``, stochastic ``[S, A]`` or a
    :class:`~tabular.SoftmaxPolicy`; ``gamma``: the discount in ``[0, 1]``, required;
    ``method`` (default ``"exact"``): ``"exact"`` solves ``(I - gamma P_pi) v = r_pi``
    (eq. 4.4 as a linear system) after marking the states whose value is ``-inf``,
    and raises ``ValueError`` when float64 cannot trust the solve (a policy that
    almost never ends with ``gamma`` at or near 1, see
    :func:`tabular.solve.exact.trusted_solve`); ``"sync"`` and ``"inplace"`` are
    iterative policy evaluation (eq. 4.5) with the module's stopping rule. The other
    arguments apply to the iterative methods only: ``tol`` (default ``1e-10``):
    ``||V - v_pi||_inf <= tol`` for ``gamma < 1``; ``max_iter`` (default 100000):
    the sweep limit; ``V0`` (default ``None``: zeros): the start values; ``strict``
    (default ``True``): raise :class:`ConvergenceError` at ``max_iter``, or return
    the last iterate with ``converged=False``.
    """
    gamma = check_gamma(gamma)
    sweep = _pick(method, {"sync": kernels.expectation_sweep,
                           "inplace": kernels.expectation_sweep_inplace}, exact=True)
    pi, strict = policy_matrix(mdp, policy), check_flag("strict", strict)
    if method == "exact":
        V = policy_values(mdp, pi, gamma)
        return PolicyEvaluationResult(V, q_table(mdp, V, gamma),
                                      **sweeps_fields(np.zeros(0), True, method))
    gamma, tol, max_iter = _check_iteration(gamma, tol, max_iter)
    V, history, converged = iterate(mdp, sweep, (pi,), name="policy_evaluation",
                                    method=method, gamma=gamma, tol=tol, max_iter=max_iter,
                                    V0=V0, strict=strict)
    return PolicyEvaluationResult(V, q_table(mdp, V, gamma),
                                  **sweeps_fields(history, converged, method))


@single_thread_when_small
def policy_iteration(mdp: TabularMDP, gamma: float, *, eval_sweeps: int | None = None,
                     policy0: PolicyLike | None = None, tol: float = 1e-8, tie_tol: float = 1e-9,
                     max_iter: int = 100_000, strict: bool = True) -> PolicyIterationResult:
    """Policy iteration (section 4.3), or modified policy iteration (section 4.6's
    generalised policy iteration; Puterman, 1994, section 6.5).

    ``mdp``: the model; ``gamma``: the discount in ``[0, 1]``, required;
    ``eval_sweeps`` (default ``None``): ``None`` evaluates each policy exactly, ``k``
    by ``k`` synchronous sweeps of ``T_pi`` from the previous values (modified policy
    iteration); ``policy0`` (default ``None``): the first policy, deterministic but in
    any form (``int [S]``, one-hot ``[S, A]`` rows, or a ``SoftmaxPolicy`` that masks
    all actions but one in each state); by default the first action of each
    state that avoids ``-inf`` rewards forever where one exists (from a ``-inf``
    value no step can improve: every ``q`` is ``-inf`` too); with ``gamma == 1`` and
    exact evaluation it must terminate. ``tol`` (default ``1e-8``): modified policy
    iteration stops, like value iteration, once the greedy step's residual
    ``||T* V - V||_inf`` is below ``tol (1 - gamma) / gamma`` (``tol`` when
    ``gamma == 1``) and returns ``T* V``; ``tie_tol`` (default ``1e-9``): improvement
    is greedy (eq. 4.9) with stable tie-breaking, the current action stays unless
    another is better by more than ``tie_tol * (1 + |q|)``, so exact policy iteration
    always terminates, at a policy whose value is within ``tie_tol``-sized slack of
    ``v*``; ``max_iter`` (default 100000): the limit on improvement steps; ``strict``
    (default ``True``): raise :class:`ConvergenceError` at ``max_iter``, or return
    the last evaluated policy with ``converged=False``.
    """
    gamma, tol, max_iter = _check_iteration(gamma, tol, max_iter)
    if eval_sweeps is not None:
        eval_sweeps = check_positive_int("eval_sweeps", eval_sweeps)
    tie_tol, strict = check_nonnegative("tie_tol", tie_tol), check_flag("strict", strict)
    policy = safe_actions(mdp, gamma) if policy0 is None else _deterministic(mdp, policy0)
    if eval_sweeps is None:
        return _exact_policy_iteration(mdp, gamma, policy, tie_tol=tie_tol, max_iter=max_iter,
                                       strict=strict)
    return _modified_policy_iteration(mdp, gamma, policy, eval_sweeps=eval_sweeps, tol=tol,
                                      tie_tol=tie_tol, max_iter=max_iter, strict=strict)


@single_thread_when_small
def soft_value_iteration(mdp: TabularMDP, gamma: float, beta: float, *,
                         ref_policy: PolicyLike | None = None, tol: float = 1e-10,
                         method: str = "sync", max_iter: int = 100_000,
                         V0: npt.ArrayLike | None = None, strict: bool = True
                         ) -> SoftValueIterationResult:
    """Soft value iteration: ``V(s) = beta log sum_a ref(a|s) exp(Q(s, a) / beta)``.

    The optimum of the KL-regularised objective ``E[sum_t gamma^t r_t] - beta KL(pi ||
    ref)`` (soft value iteration, Ziebart, 2010, with a reference policy): its policy
    is ``pi*(a|s) = ref(a|s) exp((Q(s, a) - V(s)) / beta)``, returned as ``[S, A]``; on
    a token tree with ``gamma = 1`` it is RLHF's ``pi*(y) ∝ ref(y) exp(r(y) / beta)``
    (Rafailov et al., 2023, eq. 4). As ``beta -> 0`` it tends to value iteration over
    the actions ``ref`` allows.

    ``mdp``: the model; ``gamma``: the discount in ``[0, 1]``, required (``gamma = 1``
    works on acyclic episodic MDPs: a token tree converges in depth + 1 sweeps);
    ``beta``: the KL coefficient, ``> 0``; ``ref_policy`` (default ``None``: uniform,
    which makes it entropy-regularised up to the constant ``beta log A``): the
    reference policy as ``[S, A]``, ``int [S]`` or :class:`~tabular.SoftmaxPolicy`;
    zeros in it mask actions; ``tol`` (default ``1e-10``), ``max_iter`` (default
    100000), ``V0`` (default ``None``: zeros), ``strict`` (default ``True``): as in
    :func:`value_iteration`, by the module's stopping rule (the soft operator is a
    ``gamma``-contraction too); ``method`` (default ``"sync"``): ``"sync"`` or
    ``"inplace"`` sweeps.
    """
    gamma, tol, max_iter = _check_iteration(gamma, tol, max_iter)
    beta = check_positive("beta", beta)
    sweep = _pick(method, {"sync": kernels.soft_sweep, "inplace": kernels.soft_sweep_inplace})
    ref = reference(mdp, ref_policy)
    V, history, converged = iterate(mdp, sweep, (beta, ref), name="soft_value_iteration",
                                    method=method, gamma=gamma, tol=tol, max_iter=max_iter,
                                    V0=V0, strict=strict)
    Q = q_table(mdp, V, gamma)
    return SoftValueIterationResult(V, Q, soft_policy(Q, beta, ref),
                                    **sweeps_fields(history, converged, method))


# ---------------------------------------------------------- policy iteration
def _exact_policy_iteration(mdp, gamma, policy, *, tie_tol, max_iter, strict):
    """Policy iteration (section 4.3) from the deterministic ``policy``: exact evaluation,
    greedy improvement (:func:`_improve`), until the policy is stable."""
    values = []
    improvements = 0
    for step in range(max_iter):
        name = "improved policy" if values else "policy0"
        V = policy_values(mdp, np.eye(mdp.n_actions)[policy], gamma, name)
        values.append(V)
        Q = q_table(mdp, V, gamma)
        improved = _improve(Q, policy, tie_tol)
        stable = np.array_equal(improved, policy)
        if stable or step == max_iter - 1:
            break
        policy = improved
        improvements += 1
    if not stable and strict:
        raise ConvergenceError(f"policy_iteration changed the policy in each of "
                               f"max_iter={max_iter} improvement steps; raise max_iter or "
                               "tie_tol, or pass strict=False to get the last policy")
    return PolicyIterationResult(V, Q, policy, improvements, np.array(values), stable,
                                 len(values), "exact", None)


def _modified_policy_iteration(mdp, gamma, policy, *, eval_sweeps, tol, tie_tol, max_iter,
                               strict):
    """Modified policy iteration (Puterman, 1994, section 6.5) from the deterministic
    ``policy``: a greedy step, then ``eval_sweeps`` synchronous sweeps of ``T_pi``, until the
    greedy step's residual meets the stopping rule."""
    threshold = stopping_threshold(tol, gamma)
    model = mdp.arrays
    V = np.zeros(mdp.n_states + 1)  # with the end sentinel
    values = []
    improvements = 0
    out = np.zeros_like(V)
    for _ in range(max_iter):
        Q = kernels.q_table(model, V, gamma)
        greedy_V = Q.max(axis=1)
        improved = _improve(Q, policy, tie_tol)
        improvements += int(not np.array_equal(improved, policy))
        policy = improved
        if sup_distance(greedy_V, V[:-1]) < threshold:
            return PolicyIterationResult(greedy_V, q_table(mdp, greedy_V, gamma), policy,
                                         improvements, np.array(values), True, len(values),
                                         "modified", eval_sweeps)
        pi = np.eye(mdp.n_actions)[policy]
        for _ in range(eval_sweeps):
            kernels.expectation_sweep(model, V, gamma, pi, out)
            V, out = out, V
        values.append(V[:-1].copy())
    if strict:
        raise ConvergenceError(f"policy_iteration (eval_sweeps={eval_sweeps}) did not meet its "
                               f"stopping rule within max_iter={max_iter} improvement steps; "
                               "raise max_iter, or pass strict=False to get the last policy")
    return PolicyIterationResult(V[:-1], q_table(mdp, V[:-1], gamma), policy, improvements,
                                 np.array(values), False, len(values), "modified", eval_sweeps)


def _deterministic(mdp, policy0):
    """``policy0`` as int64 ``[S]``: every form is accepted, but it must be deterministic."""
    pi = policy_matrix(mdp, policy0, "policy0")
    several = (pi > 0.0).sum(axis=1) > 1
    if several.any():
        s = int(np.argmax(several))
        raise ValueError(f"policy0 must be a deterministic policy (int [{mdp.n_states}] or "
                         f"one-hot rows): in state {mdp.state_name(s)} it takes "
                         f"{int((pi[s] > 0).sum())} actions")
    return pi.argmax(axis=1).astype(np.int64)


def _improve(Q, policy, tie_tol):
    """Greedy improvement (eq. 4.9) that keeps the current action unless beaten by a margin."""
    states = np.arange(Q.shape[0])
    current = Q[states, policy]
    best = Q.argmax(axis=1)
    margin = tie_tol * (1.0 + np.abs(np.where(np.isfinite(current), current, 0.0)))
    switch = Q[states, best] > current + margin
    return np.where(switch, best, policy).astype(np.int64)


# ------------------------------------------------------------------ checks
def _check_iteration(gamma, tol, max_iter):
    """``gamma``, ``tol`` and ``max_iter`` checked: a discount in ``[0, 1]``, a positive
    number, a positive integer."""
    return (check_gamma(gamma), check_positive("tol", tol),
            check_positive_int("max_iter", max_iter, high=MAX_ITER))


def _pick(method, kernels_by_name, exact=False):
    """The sweep kernel of ``method`` (``None`` for ``"exact"`` where it is allowed)."""
    if exact and method == "exact":
        return None
    if method not in kernels_by_name:
        options = ", ".join(repr(m) for m in (("exact",) if exact else ()) + tuple(kernels_by_name))
        hint = " (Gauss-Seidel is 'inplace')" if method == "gauss-seidel" else ""
        raise ValueError(f"method must be one of {options}, got {method!r}{hint}")
    return kernels_by_name[method]
