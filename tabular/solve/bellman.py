"""The Bellman operators, applied once or swept to their fixed point, and the policies
read off a value table.

Sutton & Barto 2nd ed., chapters 3-4: the expectation operator ``T_pi`` (eq. 4.5),
the optimality operator ``T*`` (eq. 4.10), the soft (KL-regularised) optimality
operator ``T_beta``, ``q`` from ``v`` (eq. 4.6), and the policies of a ``Q`` table:
greedy (eq. 4.9), greedy and sure to end the episode (for ``gamma = 1``), and
soft (``pi(a|s) ∝ ref(a|s) exp(Q(s, a) / beta)``). :func:`iterate` sweeps an
operator until the stopping rule of :mod:`tabular.solve.dp` holds; the algorithms built on
it are there.

Each operator takes ``V [S]`` and returns a new ``[S]`` array. A target is
``r + gamma * (0 if done else V[s'])``; ``-inf`` rewards are exact (an action
that risks one has ``q = -inf``) and no NaN is formed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

import numba
import numpy as np
import numpy.typing as npt

from tabular.checks import check_flag, check_gamma, check_positive, policy_matrix, real_array
from tabular.model.graph import actions_toward, can_end, reaches
from tabular.model.mdp import TabularMDP, as_mdp
from tabular.solve import sweeps as kernels
from tabular.types import MDPLike, PolicyLike

P = ParamSpec("P")
R = TypeVar("R")


class ConvergenceError(RuntimeError):
    """An iterative method reached ``max_iter`` before its stopping rule held."""


#: The largest ``max_iter`` of an iterative solver: each sweep keeps one residual in the
#: solver's history, and 10^7 sweeps of even a two-state model take minutes.
MAX_ITER = 10**7


# Below this many outcome slots (S * A * K) sweeps run on one thread: waking a thread
# pool costs more than such a sweep, and the numbers are the same either way.
PARALLEL_MIN_OUTCOMES = 32_768


def single_thread_when_small(func: Callable[Concatenate[TabularMDP, P], R]
                             ) -> Callable[Concatenate[MDPLike, P], R]:
    """Run ``func(mdp, ...)`` on one numba thread when the model is small (``mdp`` may be
    a Gymnasium env: :func:`~tabular.model.mdp.as_mdp`)."""
    @functools.wraps(func)
    def wrapper(mdp: MDPLike, *args: P.args, **kwargs: P.kwargs) -> R:
        mdp = as_mdp(mdp)
        if mdp.n_states * mdp.n_actions * mdp.n_outcomes >= PARALLEL_MIN_OUTCOMES:
            return func(mdp, *args, **kwargs)
        before = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            return func(mdp, *args, **kwargs)
        finally:
            numba.set_num_threads(before)
    return wrapper


# ------------------------------------------------------------------ operators
@single_thread_when_small
def bellman_expectation(mdp: TabularMDP, V: npt.ArrayLike, policy: PolicyLike, gamma: float
                        ) -> np.ndarray:
    """``(T_pi V)(s) = sum_a pi(a|s) sum_k p_k [r_k + gamma V(s'_k)]`` (eq. 4.5), once.

    ``mdp``: the model; ``V``: values ``[S]`` (``-inf`` allowed; NaN and ``+inf`` not);
    ``policy``: greedy ``int [S]``, stochastic ``[S, A]`` or a
    :class:`~tabular.SoftmaxPolicy`; ``gamma``: the discount in ``[0, 1]`` (required).
    Returns a new ``[S]`` array.
    """
    gamma = check_gamma(gamma)
    return apply_once(kernels.expectation_sweep, mdp, check_values(mdp, V), gamma,
                      policy_matrix(mdp, policy))


@single_thread_when_small
def bellman_optimality(mdp: TabularMDP, V: npt.ArrayLike, gamma: float) -> np.ndarray:
    """``(T* V)(s) = max_a sum_k p_k [r_k + gamma V(s'_k)]`` (eq. 4.10), once.

    ``mdp``: the model; ``V``: values ``[S]``; ``gamma``: the discount in ``[0, 1]``
    (required). Returns a new ``[S]`` array.
    """
    gamma = check_gamma(gamma)
    return apply_once(kernels.optimality_sweep, mdp, check_values(mdp, V), gamma)


@single_thread_when_small
def soft_bellman_optimality(mdp: TabularMDP, V: npt.ArrayLike, gamma: float, beta: float,
                            ref_policy: PolicyLike | None = None) -> np.ndarray:
    """``(T_beta V)(s) = beta log sum_a ref(a|s) exp(q(s, a) / beta)``, once.

    The soft optimality operator of the KL-regularised objective
    ``E[sum_t gamma^t r_t] - beta KL(pi || ref)`` (soft value iteration, Ziebart, 2010,
    here with a reference policy), a ``gamma``-contraction like ``T*``. ``mdp``: the
    model; ``V``: values ``[S]``; ``gamma``: the discount in ``[0, 1]`` (required);
    ``beta``: the KL coefficient, ``> 0``; ``ref_policy``: the reference policy in any
    form, default ``None`` (uniform). Returns a new ``[S]`` array.
    """
    gamma = check_gamma(gamma)
    beta = check_positive("beta", beta)
    return apply_once(kernels.soft_sweep, mdp, check_values(mdp, V), gamma, beta,
                      reference(mdp, ref_policy))


@single_thread_when_small
def q_from_v(mdp: TabularMDP, V: npt.ArrayLike, gamma: float) -> np.ndarray:
    """``Q[s, a] = sum_k p_k [r_k + gamma (0 if done_k else V(s'_k))]`` (eq. 4.6).

    ``mdp``: the model; ``V``: values ``[S]``; ``gamma``: the discount in ``[0, 1]``
    (required). Returns ``Q [S, A]``.
    """
    gamma = check_gamma(gamma)
    return q_table(mdp, check_values(mdp, V), gamma)


# ------------------------------------------------------------------- policies
def check_q(Q) -> np.ndarray:
    """``Q`` as float64 ``[S, A]`` action values (``-inf`` allowed; NaN and ``+inf`` not)."""
    Q = real_array("Q", Q)
    if Q.ndim != 2 or 0 in Q.shape:
        raise ValueError(f"Q must be [S, A] with S, A >= 1, got shape {Q.shape}")
    bad = ~(Q < np.inf)  # NaN fails this test and the next (one [S, A] temporary at a time)
    bad &= Q != -np.inf
    if bad.any():
        s, a = np.argwhere(bad)[0]
        raise ValueError(f"Q[{s}, {a}] is {Q[s, a]} (NaN and +inf are not action values)")
    return Q


def greedy_policy(Q: npt.ArrayLike) -> np.ndarray:
    """``argmax_a Q[s, a]`` per state (eq. 4.9), the lowest index among ties: int64 ``[S]``."""
    return check_q(Q).argmax(axis=1).astype(np.int64, copy=False)


def optimal_actions(Q: npt.ArrayLike, tol: float = 1e-8) -> np.ndarray:
    """Bool ``[S, A]``: the actions within ``tol`` of the best, so policies compare up to ties.

    ``Q``: ``[S, A]``; ``tol`` (default ``1e-8``): the slack, a finite number ``>= 0``.
    A state whose actions are all ``-inf`` marks every action optimal.
    """
    Q = check_q(Q)
    if not 0.0 <= tol < np.inf:  # NaN fails
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    best = Q.max(axis=1, keepdims=True)
    return Q >= best - tol


def terminating_greedy_policy(mdp: TabularMDP, Q: npt.ArrayLike, tol: float = 1e-8) -> np.ndarray:
    """A greedy policy for ``gamma = 1`` that also ends the episode with probability 1.

    ``mdp``: the model; ``Q``: ``[S, A]`` (``q*`` for the policy to be optimal);
    ``tol`` (default ``1e-8``): actions within ``tol`` of the best count as optimal.
    Returns int64 ``[S]``.

    Without discounting, an action that loops in place can tie with the best one
    (the gambler's stake 0 of Example 4.3 has ``q(s, 0) = v*(s)``), and ``argmax``
    would follow it for ever. Among the optimal actions, this keeps those whose
    outcomes stay where termination is still certain (the largest such set of
    states, a fixed point), then picks by a backward breadth-first search from the
    ending actions, so each step has a chance to move one level closer to the end.
    States where no optimal action can guarantee termination keep ``argmax``.
    """
    mdp = as_mdp(mdp)
    next_state, prob, done = mdp.next_state, mdp.prob, mdp.done
    if np.shape(Q) != prob.shape[:2]:
        raise ValueError(f"Q must have shape {prob.shape[:2]} (states, actions), "
                         f"got {np.shape(Q)}")
    possible = prob > 0.0
    best = optimal_actions(Q, tol)
    certain = np.ones(mdp.n_states, dtype=bool)
    while True:
        safe = best & (~possible | done | certain[next_state]).all(axis=2) & certain[:, None]
        moves = possible & ~done & safe[:, :, None]
        ends = (possible & done & safe[:, :, None]).any(axis=2)
        still = reaches(next_state, moves, ends.any(axis=1)) & certain
        if np.array_equal(still, certain):
            break
        certain = still
    first = np.where(ends.any(axis=1), ends.argmax(axis=1), -1)
    chosen = actions_toward(next_state, moves, first)
    return np.where(chosen >= 0, chosen, greedy_policy(Q)).astype(np.int64)


def soft_policy(Q: npt.ArrayLike, beta: float, ref_policy: PolicyLike | None = None) -> np.ndarray:
    """``pi(a|s) = ref(a|s) exp(Q(s, a) / beta) / Z(s)``, normalised stably: ``[S, A]``.

    The policy of the KL-regularised objective (Ziebart, 2010; for a token tree the
    optimum ``pi*(y) ∝ ref(y) exp(r(y) / beta)`` of RLHF, Rafailov et al., 2023,
    eq. 4). ``Q``: ``[S, A]`` (``-inf`` allowed); ``beta``: the KL coefficient,
    ``> 0``; ``ref_policy``: the reference policy in any form, default ``None``
    (uniform). Actions with ``ref(a|s) = 0`` get 0; a state where every allowed
    action has ``q = -inf`` keeps ``ref``.
    """
    beta = check_positive("beta", beta)
    Q = check_q(Q)
    ref = (np.full(Q.shape, 1.0 / Q.shape[1]) if ref_policy is None
           else policy_matrix(Q.shape, ref_policy, "ref_policy"))
    allowed = (ref > 0.0) & (Q > -np.inf)
    m = np.where(allowed, Q, -np.inf).max(axis=1, keepdims=True)
    doomed = m[:, 0] == -np.inf
    shifted = np.where(allowed, Q - np.where(doomed[:, None], 0.0, m), -np.inf)
    weights = np.where(allowed, ref * np.exp(shifted / beta), 0.0)
    weights[doomed] = ref[doomed]
    return weights / weights.sum(axis=1, keepdims=True)


# ------------------------------------------------------------- iteration
def iterate(mdp, sweep, extra=(), *, name, method, gamma, tol, max_iter, V0, strict):
    """Sweep from ``V0`` until the residual meets the stopping rule of :mod:`tabular.solve.dp`
    or ``max_iter`` sweeps were made: ``(V, history, converged)``.

    ``mdp``: the model; ``sweep``: a sweep of :mod:`tabular.solve.sweeps` for ``method``
    (``"inplace"`` sweeps overwrite ``V``; the others write into a second buffer, the two
    swap each sweep), called with the arguments ``extra`` after ``gamma``; ``name``: the
    solver, for errors; ``gamma``, ``tol``, ``max_iter``: checked; ``V0``: ``[S]`` or
    ``None`` (zeros); ``strict``: at ``max_iter``, raise :class:`ConvergenceError` (else
    return ``converged=False``). Returns ``V [S]``, the residual of each sweep and whether
    the rule held.
    """
    strict = check_flag("strict", strict)
    V0 = np.zeros(mdp.n_states) if V0 is None else check_values(mdp, V0, "V0")
    model = mdp.arrays
    threshold = stopping_threshold(tol, gamma)
    V = with_end(V0)
    spare = None if method == "inplace" else np.zeros(mdp.n_states + 1)
    history = []
    for _ in range(max_iter):
        if spare is None:
            residual = sweep(model, V, gamma, *extra)
        else:
            residual = sweep(model, V, gamma, *extra, spare)
            V, spare = spare, V
        history.append(residual)
        if residual < threshold:
            return V[:-1], np.array(history), True
    if strict:
        raise ConvergenceError(_not_converged_message(mdp, name, gamma, tol, max_iter, history))
    return V[:-1], np.array(history), False


def stopping_threshold(tol, gamma):
    """Residual below which ``||V - V*||_inf <= tol`` (``gamma < 1``); ``tol`` if ``gamma == 1``."""
    if gamma == 1.0:
        return tol
    if gamma == 0.0:
        return np.inf
    return tol * (1.0 - gamma) / gamma


def _not_converged_message(mdp, name, gamma, tol, max_iter, history):
    """The :class:`ConvergenceError` of solver ``name``: the last residual, and with
    ``gamma = 1`` whether the values diverge and which states cannot end an episode."""
    message = (f"{name} did not converge within max_iter={max_iter} sweeps "
               f"(last residual {history[-1]:.3g}, tol={tol:g}, gamma={gamma:g}); "
               "raise max_iter, or pass strict=False to get the last iterate")
    if gamma == 1.0:
        half = history[len(history) // 2]
        if history[-1] >= 0.5 * half:
            message += ". With gamma=1 the values diverge (the residual is not shrinking)"
        trapped = np.flatnonzero(~can_end(mdp))
        if trapped.size:
            names = ", ".join(mdp.state_name(int(s)) for s in trapped[:5])
            message += (f"; no policy reaches termination from {trapped.size} state(s), "
                        f"e.g. {names}: use gamma < 1")
    return message


def sup_distance(x, y) -> float:
    """``max_s |x_s - y_s|``, where equal entries (``-inf`` and ``-inf``) count 0."""
    same = x == y
    with np.errstate(invalid="ignore"):  # -inf - -inf, discarded by the where
        return float(np.max(np.where(same, 0.0, np.abs(x - y)), initial=0.0))


# ------------------------------------------------------------ shared plumbing
def with_end(V) -> np.ndarray:
    """``V`` followed by the end sentinel's value 0 (a new array of length ``S + 1``)."""
    return np.append(V, 0.0)


def q_table(mdp, V, gamma: float) -> np.ndarray:
    """``Q [S, A]`` of values ``V [S]`` (already checked)."""
    return kernels.q_table(mdp.arrays, with_end(V), gamma)


def apply_once(sweep, mdp, V, gamma: float, *extra) -> np.ndarray:
    """One synchronous ``sweep`` (with the arguments ``extra`` after ``gamma``) of ``V [S]``:
    its operator applied once, a new ``[S]`` array."""
    out = np.zeros(mdp.n_states + 1)
    sweep(mdp.arrays, with_end(V), gamma, *extra, out)
    return out[:-1]


def check_values(mdp, V, name: str = "V") -> np.ndarray:
    """``V`` as float64 ``[S]``; a ``ValueError`` naming the state of a NaN or ``+inf``."""
    V = np.ascontiguousarray(real_array(name, V, (mdp.n_states,)))
    bad = np.isnan(V) | (V == np.inf)
    if bad.any():
        s = int(np.argmax(bad))
        raise ValueError(f"{name}[{s}] = {V[s]} (state {mdp.state_name(s)}): NaN and +inf "
                         "are not values")
    return V


def reference(mdp, ref_policy) -> np.ndarray:
    """The reference policy as ``[S, A]`` (uniform when ``ref_policy`` is ``None``)."""
    if ref_policy is None:
        return np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    return policy_matrix(mdp, ref_policy, "ref_policy")
