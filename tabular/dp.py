"""Dynamic programming: the exact ground truth every learner is tested against.

Sutton & Barto 2nd ed., chapter 4: the Bellman operators (one application
each), iterative and exact policy evaluation (4.1), policy iteration (4.3) and
its modified form with ``k`` evaluation sweeps, value iteration (4.4) in
synchronous and Gauss-Seidel form, and soft (KL-regularised) value iteration,
whose policy ``pi*(a|s) ∝ ref(a|s) exp(Q(s, a) / beta)`` is the exact optimum of
RLHF on a token tree.

Stopping rule (for every iterative method, ``gamma < 1``): the operators are
``gamma``-contractions in the sup norm, so a sweep with residual
``||V_{k+1} - V_k||_inf < tol (1 - gamma) / gamma`` leaves
``||V_{k+1} - V*||_inf <= gamma / (1 - gamma) ||V_{k+1} - V_k||_inf < tol``.
With ``gamma == 1`` (episodic tasks) the rule is ``residual < tol`` with the
iteration cap ``max_iter``; values that diverge, or states from which no policy
reaches termination, are named in the error.

Reaching ``max_iter`` raises :class:`ConvergenceError` naming it; with
``strict=False`` the function instead returns the last iterate with
``converged=False`` (used to study truncated sweeps, e.g. Figure 4.1).

``-inf`` rewards (the trap of the trap/treasure grid) are exact: ``V = -inf``
where the trap cannot be avoided, ``max`` ignores actions that risk it, no NaN.

The exact linear solve raises ``ValueError`` instead of answering when float64 cannot
trust it: a policy that (almost) never ends, with ``gamma`` at or very near 1, whose
expected episode length puts the relative error bound above ``EXACT_MAX_ERROR``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numba
import numpy as np

from .kernels import dp as kernels
from .checks import check_gamma, check_positive, check_positive_int, policy_matrix
from .mdp import TabularMDP

EXACT_MAX_STATES = 5000  # dense linear solve: S^2 float64 = 200 MB at this size
# The exact solve's relative error bound kappa * eps (condition number times machine
# epsilon) above which its answer is refused: 1e-6 allows expected episode lengths up
# to 2.25e9 steps (kappa = 2 max L - 1 up to 4.5e9).
EXACT_MAX_ERROR = 1e-6
EPS = np.finfo(np.float64).eps
# Below this many outcome slots (S * A * K) sweeps run on one thread: waking a thread
# pool costs ~20 us per sweep (milliseconds on a loaded machine), more than the sweep.
# The numbers are the same either way.
PARALLEL_MIN_OUTCOMES = 32_768


class ConvergenceError(RuntimeError):
    """An iterative method reached ``max_iter`` before its stopping rule held."""


@dataclass(frozen=True)
class ValueIterationResult:
    """``V [S]``, ``Q [S, A]``, greedy ``policy [S]``, sup-norm ``history`` per sweep."""

    V: np.ndarray
    Q: np.ndarray
    policy: np.ndarray
    history: np.ndarray
    converged: bool
    iterations: int


@dataclass(frozen=True)
class PolicyEvaluationResult:
    """``V = v_pi [S]``, ``Q = q_pi [S, A]``; ``history`` is empty for the exact solve."""

    V: np.ndarray
    Q: np.ndarray
    history: np.ndarray
    converged: bool
    iterations: int


@dataclass(frozen=True)
class PolicyIterationResult:
    """Final ``V``, ``Q``, ``policy``; ``values[i]`` is the value after evaluation step ``i``.

    ``improvements`` counts the improvement steps that changed the policy.
    """

    V: np.ndarray
    Q: np.ndarray
    policy: np.ndarray
    improvements: int
    values: np.ndarray
    converged: bool
    iterations: int


@dataclass(frozen=True)
class SoftValueIterationResult:
    """Soft ``V [S]``, ``Q [S, A]``, stochastic ``policy [S, A]``, residual ``history``."""

    V: np.ndarray
    Q: np.ndarray
    policy: np.ndarray
    history: np.ndarray
    converged: bool
    iterations: int


def _threads_by_size(func):
    """Run ``func(mdp, ...)`` on one numba thread when the model is small."""
    @functools.wraps(func)
    def wrapper(mdp, *args, **kwargs):
        if mdp.prob.size >= PARALLEL_MIN_OUTCOMES:
            return func(mdp, *args, **kwargs)
        before = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            return func(mdp, *args, **kwargs)
        finally:
            numba.set_num_threads(before)
    return wrapper


# ------------------------------------------------------------------ operators
@_threads_by_size
def bellman_expectation(mdp: TabularMDP, V, policy, gamma: float) -> np.ndarray:
    """``(T_pi V)(s) = sum_a pi(a|s) sum_k p_k [r_k + gamma V(s'_k)]`` (eq. 4.5), once."""
    gamma = check_gamma(gamma)
    return _apply_once(kernels.expectation_sweep, mdp, _check_values(mdp, V), gamma,
                       policy_matrix(mdp, policy))


@_threads_by_size
def bellman_optimality(mdp: TabularMDP, V, gamma: float) -> np.ndarray:
    """``(T* V)(s) = max_a sum_k p_k [r_k + gamma V(s'_k)]`` (eq. 4.10), once."""
    gamma = check_gamma(gamma)
    return _apply_once(kernels.optimality_sweep, mdp, _check_values(mdp, V), gamma)


@_threads_by_size
def soft_bellman_optimality(mdp: TabularMDP, V, gamma: float, beta: float,
                            ref_policy=None) -> np.ndarray:
    """``(T_beta V)(s) = beta log sum_a ref(a|s) exp(q(s, a) / beta)``, once."""
    gamma = check_gamma(gamma)
    beta = check_positive("beta", beta)
    return _apply_once(kernels.soft_sweep, mdp, _check_values(mdp, V), gamma, beta,
                       _reference(mdp, ref_policy))


@_threads_by_size
def q_from_v(mdp: TabularMDP, V, gamma: float) -> np.ndarray:
    """``Q[s, a] = sum_k p_k [r_k + gamma (0 if done_k else V(s'_k))]`` (eq. 4.6)."""
    gamma = check_gamma(gamma)
    return _q_table(mdp, _check_values(mdp, V), gamma)


def greedy_policy(Q) -> np.ndarray:
    """``argmax_a Q[s, a]`` per state, the lowest index among ties (eq. 4.9)."""
    return np.asarray(Q).argmax(axis=1).astype(np.int64)


def terminating_greedy_policy(mdp: TabularMDP, Q, tol: float = 1e-8) -> np.ndarray:
    """A greedy policy for ``gamma = 1`` that also ends the episode with probability 1.

    Without discounting, an action that loops in place can tie with the best one
    (the gambler's stake 0 has ``q(s, 0) = v*(s)``), and ``argmax`` would follow it
    for ever. Among the actions within ``tol`` of the best, this keeps those whose
    outcomes stay where termination is still certain (the largest such set of
    states, a fixed point), then picks by a backward breadth-first search from
    the ending actions, so each step has a chance to move one level closer to the
    end. States where no optimal action can guarantee termination keep ``argmax``.
    """
    next_state, prob, _, done, _ = mdp.arrays
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
        still = _reaches(next_state, moves, ends.any(axis=1)) & certain
        if np.array_equal(still, certain):
            break
        certain = still
    first = np.where(ends.any(axis=1), ends.argmax(axis=1), -1)
    src, act, dst = _edges(next_state, moves)
    order, indptr = _by_destination(dst, mdp.n_states)
    chosen = kernels.backward_bfs_actions(indptr, src[order], act[order], first)
    return np.where(chosen >= 0, chosen, greedy_policy(Q)).astype(np.int64)


def optimal_actions(Q, tol: float = 1e-8) -> np.ndarray:
    """Bool ``[S, A]``: the actions within ``tol`` of the best, so policies compare up to ties.

    A state whose actions are all ``-inf`` marks every action optimal.
    """
    Q = np.asarray(Q, dtype=np.float64)
    if Q.ndim != 2:
        raise ValueError(f"Q must be [S, A], got shape {Q.shape}")
    if tol < 0 or not np.isfinite(tol):
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    best = Q.max(axis=1, keepdims=True)
    return Q >= best - tol


# --------------------------------------------------------------- algorithms
@_threads_by_size
def value_iteration(mdp: TabularMDP, gamma: float, tol: float = 1e-8, method: str = "sync",
                    max_iter: int = 100_000, V0=None, strict: bool = True
                    ) -> ValueIterationResult:
    """Value iteration (section 4.4): ``V <- T* V`` until the stopping rule holds.

    ``method="sync"`` sweeps all states from the old vector in parallel;
    ``"gauss-seidel"`` updates in place, in state order. For ``gamma < 1`` the
    returned ``V`` satisfies ``||V - V*||_inf <= tol`` (it stops once a sweep's
    residual is below ``tol (1 - gamma) / gamma``). For ``gamma == 1`` it stops
    when the residual is below ``tol``, and ``policy`` is
    :func:`terminating_greedy_policy` (an optimal action that ends the episode,
    not one that ties by looping in place). ``V0`` defaults to zeros.
    """
    gamma, tol, max_iter = _check_iteration(gamma, tol, max_iter)
    kernel = _pick_method(method, {"sync": kernels.optimality_sweep,
                                   "gauss-seidel": kernels.optimality_sweep_inplace})
    V0 = np.zeros(mdp.n_states) if V0 is None else _check_values(mdp, V0, "V0")
    sweep = _sweeper(mdp, kernel, gamma, (), inplace=method == "gauss-seidel")
    V, history, converged = _iterate(mdp, sweep, V0, gamma, tol, max_iter, strict,
                                     "value_iteration")
    Q = _q_table(mdp, V, gamma)
    policy = greedy_policy(Q) if gamma < 1.0 else terminating_greedy_policy(mdp, Q, tol)
    return ValueIterationResult(V, Q, policy, history, converged, len(history))


@_threads_by_size
def policy_evaluation(mdp: TabularMDP, policy, gamma: float, method: str = "exact",
                      tol: float = 1e-10, max_iter: int = 100_000, V0=None,
                      strict: bool = True) -> PolicyEvaluationResult:
    """``v_pi`` of a policy: deterministic ``int [S]``, stochastic ``[S, A]`` or ``SoftmaxPolicy``.

    ``method="exact"`` solves ``(I - gamma P_pi) v = r_pi`` (eq. 4.4 as a linear
    system) after marking the states whose value is ``-inf``; it raises ``ValueError``
    when float64 cannot trust the solve (a policy that almost never ends with ``gamma``
    at or near 1: relative error bound above ``EXACT_MAX_ERROR``, see
    :func:`_trusted_solve`). ``"sync"`` and ``"inplace"`` are iterative policy
    evaluation (section 4.1) with the module's stopping rule, starting from ``V0`` (zeros).
    """
    gamma = check_gamma(gamma)
    pi = policy_matrix(mdp, policy)
    if method == "exact":
        V = _solve_policy_values(mdp, pi, gamma)
        Q = _q_table(mdp, V, gamma)
        return PolicyEvaluationResult(V, Q, np.zeros(0), True, 0)
    gamma, tol, max_iter = _check_iteration(gamma, tol, max_iter)
    kernel = _pick_method(method, {"sync": kernels.expectation_sweep,
                                   "inplace": kernels.expectation_sweep_inplace},
                          extra=("exact",))
    V0 = np.zeros(mdp.n_states) if V0 is None else _check_values(mdp, V0, "V0")
    sweep = _sweeper(mdp, kernel, gamma, (pi,), inplace=method == "inplace")
    V, history, converged = _iterate(mdp, sweep, V0, gamma, tol, max_iter, strict,
                                     "policy_evaluation")
    Q = _q_table(mdp, V, gamma)
    return PolicyEvaluationResult(V, Q, history, converged, len(history))


@_threads_by_size
def policy_iteration(mdp: TabularMDP, gamma: float, eval_sweeps: int | None = None,
                     policy0=None, tol: float = 1e-8, tie_tol: float = 1e-9,
                     max_iter: int = 100_000) -> PolicyIterationResult:
    """Policy iteration (section 4.3); ``eval_sweeps=k`` makes it modified policy iteration.

    Evaluation is exact (``eval_sweeps=None``) or ``k`` synchronous sweeps of
    ``T_pi`` from the previous values. Improvement is greedy with stable
    tie-breaking: the current action stays unless another is better by more
    than ``tie_tol * (1 + |q|)``, so exact policy iteration always terminates,
    at a policy whose value is within ``tie_tol``-sized slack of ``V*``.
    Modified policy iteration stops, like value iteration, once the greedy
    step's residual ``||T* V - V||_inf`` is below ``tol (1 - gamma) / gamma``
    (``tol`` when ``gamma == 1``) and returns ``T* V``.
    Reaching ``max_iter`` improvement steps raises :class:`ConvergenceError`.
    ``policy0`` defaults to the first action of each state that avoids ``-inf``
    rewards forever where one exists (from a ``-inf`` value no step can improve:
    every ``q`` is ``-inf`` too); with ``gamma == 1`` and exact evaluation it
    must terminate.
    """
    gamma, tol, max_iter = _check_iteration(gamma, tol, max_iter)
    if eval_sweeps is not None:
        eval_sweeps = check_positive_int("eval_sweeps", eval_sweeps)
    if tie_tol < 0 or not np.isfinite(tie_tol):
        raise ValueError(f"tie_tol must be a finite number >= 0, got {tie_tol}")
    if policy0 is None:
        policy = _trap_avoiding_policy(mdp, gamma)
    else:
        policy = np.asarray(policy0)
        if policy.shape != (mdp.n_states,) or not np.issubdtype(policy.dtype, np.integer):
            raise ValueError(f"policy0 must be a deterministic policy, int [{mdp.n_states}], "
                             f"got {policy.dtype} {policy.shape}")
        policy_matrix(mdp, policy, "policy0")
        policy = policy.astype(np.int64)
    if eval_sweeps is None:
        return _exact_policy_iteration(mdp, gamma, policy, tie_tol, max_iter)
    return _modified_policy_iteration(mdp, gamma, policy, eval_sweeps, tol, tie_tol, max_iter)


@_threads_by_size
def soft_value_iteration(mdp: TabularMDP, gamma: float, beta: float, ref_policy=None,
                         tol: float = 1e-10, max_iter: int = 100_000, V0=None,
                         strict: bool = True) -> SoftValueIterationResult:
    """Soft value iteration: ``V(s) = beta log sum_a ref(a|s) exp(Q(s, a) / beta)``.

    The KL-regularised optimum ``max_pi E[sum r] - beta KL(pi || ref)``: its
    policy is ``pi*(a|s) = ref(a|s) exp((Q(s, a) - V(s)) / beta)``, returned as
    ``[S, A]``. ``ref_policy`` (``[S, A]``, ``int [S]`` or ``SoftmaxPolicy``)
    defaults to uniform, which makes it entropy-regularised (up to the constant
    ``beta log A``); zeros in it mask actions. As ``beta -> 0`` it tends to value
    iteration over the actions ``ref`` allows. Works with ``gamma = 1`` on
    acyclic episodic MDPs (a token tree converges in depth + 1 sweeps). Stops by
    the module's rule; the soft operator is a ``gamma``-contraction too.
    """
    gamma, tol, max_iter = _check_iteration(gamma, tol, max_iter)
    beta = check_positive("beta", beta)
    ref = _reference(mdp, ref_policy)
    V0 = np.zeros(mdp.n_states) if V0 is None else _check_values(mdp, V0, "V0")
    sweep = _sweeper(mdp, kernels.soft_sweep, gamma, (beta, ref), inplace=False)
    V, history, converged = _iterate(mdp, sweep, V0, gamma, tol, max_iter, strict,
                                     "soft_value_iteration")
    Q = _q_table(mdp, V, gamma)
    return SoftValueIterationResult(V, Q, soft_policy(Q, beta, ref), history, converged,
                                    len(history))


def soft_policy(Q, beta: float, ref) -> np.ndarray:
    """``pi(a|s) ∝ ref(a|s) exp(Q(s, a) / beta)``, normalised stably.

    ``ref`` is a stochastic ``[S, A]`` matrix. A state where every allowed action
    has ``q = -inf`` keeps ``ref``.
    """
    beta = check_positive("beta", beta)
    Q = np.asarray(Q, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if ref.shape != Q.shape:
        raise ValueError(f"ref must have Q's shape {Q.shape}, got {ref.shape}")
    allowed = (ref > 0.0) & (Q > -np.inf)
    m = np.where(allowed, Q, -np.inf).max(axis=1, keepdims=True)
    doomed = m[:, 0] == -np.inf
    shifted = np.where(allowed, Q - np.where(doomed[:, None], 0.0, m), -np.inf)
    weights = np.where(allowed, ref * np.exp(shifted / beta), 0.0)
    weights[doomed] = ref[doomed]
    return weights / weights.sum(axis=1, keepdims=True)


# ---------------------------------------------------------- policy iteration
def _exact_policy_iteration(mdp, gamma, policy, tie_tol, max_iter):
    values = []
    improvements = 0
    for _ in range(max_iter):
        name = "improved policy" if values else "policy0"
        V = _solve_policy_values(mdp, np.eye(mdp.n_actions)[policy], gamma, name)
        values.append(V)
        Q = _q_table(mdp, V, gamma)
        improved = _improve(Q, policy, tie_tol)
        if np.array_equal(improved, policy):
            return PolicyIterationResult(V, Q, policy, improvements, np.array(values), True,
                                         len(values))
        policy = improved
        improvements += 1
    raise ConvergenceError(f"policy_iteration changed the policy in each of max_iter={max_iter} "
                           "improvement steps; raise max_iter or tie_tol")


def _modified_policy_iteration(mdp, gamma, policy, eval_sweeps, tol, tie_tol, max_iter):
    threshold = _stopping_threshold(tol, gamma)
    arrays = _planning_arrays(mdp, gamma)
    V = np.zeros(mdp.n_states + 1)  # with the end sentinel
    values = []
    improvements = 0
    out = np.zeros_like(V)
    for _ in range(max_iter):
        Q = kernels.q_table(*arrays, V, gamma)
        greedy_V = Q.max(axis=1)
        improved = _improve(Q, policy, tie_tol)
        improvements += int(not np.array_equal(improved, policy))
        policy = improved
        if _sup_distance(greedy_V, V[:-1]) < threshold:
            Q = _q_table(mdp, greedy_V, gamma)
            return PolicyIterationResult(greedy_V, Q, policy, improvements, np.array(values),
                                         True, len(values))
        pi = np.eye(mdp.n_actions)[policy]
        for _ in range(eval_sweeps):
            kernels.expectation_sweep(*arrays, V, gamma, pi, out)
            V, out = out, V
        values.append(V[:-1].copy())
    raise ConvergenceError(f"policy_iteration (eval_sweeps={eval_sweeps}) did not meet its "
                           f"stopping rule within max_iter={max_iter} improvement steps")


def _trap_avoiding_policy(mdp, gamma):
    """The first action that keeps ``-inf`` rewards impossible forever (else action 0).

    A pair is safe when none of its outcomes pays ``-inf`` and each one either
    ends the episode or lands in a state with a safe action (with ``gamma = 0``
    only the immediate reward counts); the greatest fixed point of that rule.
    """
    next_state, prob, reward, done, _ = mdp.arrays
    possible = prob > 0.0
    harmless = ~possible | (reward > -np.inf)
    settled = ~possible | done | (gamma == 0.0)
    safe_state = np.ones(mdp.n_states, dtype=bool)
    while True:
        safe_pair = (harmless & (settled | safe_state[next_state])).all(axis=2)
        still_safe = safe_pair.any(axis=1)
        if np.array_equal(still_safe, safe_state):
            return safe_pair.argmax(axis=1).astype(np.int64)
        safe_state = still_safe


def _improve(Q, policy, tie_tol):
    """Greedy improvement (eq. 4.9) that keeps the current action unless beaten by a margin."""
    states = np.arange(Q.shape[0])
    current = Q[states, policy]
    best = Q.argmax(axis=1)
    margin = tie_tol * (1.0 + np.abs(np.where(np.isfinite(current), current, 0.0)))
    switch = Q[states, best] > current + margin
    return np.where(switch, best, policy).astype(np.int64)


# ------------------------------------------------------ exact evaluation
def _solve_policy_values(mdp, pi, gamma, policy_name="policy"):
    """``v_pi`` exactly: ``-inf`` where ``pi`` risks a ``-inf`` reward, a linear solve elsewhere.

    With ``gamma == 1`` a policy that never terminates from some state has a
    finite value only if it collects zero reward there (then 0); otherwise the
    error names the state.
    """
    S = mdp.n_states
    if S > EXACT_MAX_STATES:
        raise ValueError(f"method='exact' solves a dense {S}x{S} system; above "
                         f"{EXACT_MAX_STATES} states use method='sync' (or eval_sweeps=k)")
    next_state, prob, reward, done, _ = mdp.arrays
    weight = pi[:, :, None] * prob  # probability of (a, k) in s under pi
    taken = weight > 0.0
    r_pi = (weight * np.where(taken, reward, 0.0)).sum(axis=(1, 2))  # no 0 * -inf
    flows = taken & ~done if gamma > 0.0 else np.zeros_like(taken)
    doomed = _reaches(next_state, flows, r_pi == -np.inf)
    stuck = np.zeros(S, dtype=bool)
    if gamma == 1.0:
        exits = (taken & done).any(axis=(1, 2))
        stuck = ~_reaches(next_state, flows, exits) & ~doomed
        paying = stuck & (np.abs(r_pi) > 0.0)
        if paying.any():
            s = int(np.argmax(paying))
            raise ValueError(f"with gamma=1 the {policy_name} never terminates from state "
                             f"{mdp.state_name(s)} yet collects reward there, so its value is "
                             "infinite; use gamma < 1 or a policy that reaches termination")
    solve = ~doomed & ~stuck
    V = np.where(doomed, -np.inf, 0.0)
    P = np.zeros((S, S))
    s_idx = np.broadcast_to(np.arange(S)[:, None, None], weight.shape)
    np.add.at(P, (s_idx[flows], next_state[flows]), weight[flows])
    idx = np.flatnonzero(solve)
    system = np.eye(idx.size) - gamma * P[np.ix_(idx, idx)]
    V[idx] = _trusted_solve(mdp, system, r_pi[idx], idx, gamma, policy_name)
    return V


def _trusted_solve(mdp, system, r, states, gamma, policy_name):
    """``v = system^-1 r`` for ``system = I - gamma P_pi`` on ``states``, if float64 can trust it.

    ``system`` is an M-matrix: its inverse ``sum_k (gamma P_pi)^k`` is ``>= 0`` with row
    sums ``L = system^-1 1``, the expected discounted episode lengths. Rounding errors of
    relative size ``eps`` in the entries of ``I`` and ``gamma P_pi`` (``1 - gamma P_ss``
    cancels when ``P_ss`` is near 1) move ``v`` by up to ``kappa eps`` relative to its
    scale, with ``kappa = ||system^-1 (I + gamma P_pi)||_inf = 2 max L - 1`` (the
    componentwise condition number, Higham, Accuracy and Stability 2nd ed., 7.2). Above
    ``EXACT_MAX_ERROR`` the answer is refused, and so is an ``L`` that is not a length (NaN,
    or below one step: rounding lost the chance of ending, e.g. ``1 - (1 - p) = 0``).
    ``L`` needs a second solve only when ``gamma`` is close enough to 1 for its bound
    ``max L <= 1 / (1 - gamma)`` to allow ``kappa`` beyond the limit.
    """
    try:
        v = np.linalg.solve(system, r)
    except np.linalg.LinAlgError:
        s = int(np.argmin(system.sum(axis=1)))  # the least chance of ending in one step
        raise ValueError(_untrusted_message(mdp, policy_name, gamma, states[s],
                                            "has no finite value in float64: the linear "
                                            "solve met a zero pivot")) from None
    if gamma < 1.0 and (2.0 / (1.0 - gamma) - 1.0) * EPS <= EXACT_MAX_ERROR:
        return v
    lengths = np.linalg.solve(system, np.ones(r.size))
    not_a_length = ~(lengths >= 1.0 - EXACT_MAX_ERROR)
    if not_a_length.any():
        s = int(np.argmax(not_a_length))
        raise ValueError(_untrusted_message(mdp, policy_name, gamma, states[s],
                                            f"is beyond float64 (the linear solve gave "
                                            f"{lengths[s]:.3g} steps)"))
    kappa = 2.0 * lengths.max(initial=1.0) - 1.0
    if not kappa * EPS <= EXACT_MAX_ERROR:
        s = int(np.argmax(lengths))
        raise ValueError(_untrusted_message(mdp, policy_name, gamma, states[s],
                                            f"is {lengths[s]:.3g} steps, so v_pi has "
                                            f"condition number {kappa:.3g} and the solve's "
                                            f"relative error could reach {kappa * EPS:.2g} "
                                            f"(limit {EXACT_MAX_ERROR:g})"))
    return v


def _untrusted_message(mdp, policy_name, gamma, s, how_long):
    discounted = "discounted " if gamma < 1.0 else ""
    return (f"method='exact' cannot be trusted for the {policy_name} with gamma={gamma:.15g}: "
            f"its expected {discounted}episode length from state {mdp.state_name(int(s))} "
            f"{how_long}. The policy (almost) never ends the episode: use gamma further "
            "below 1, or method='sync' with max_iter, which flags values that have not "
            "converged")


def _edges(next_state, edges):
    """``(source, action, destination)`` of the outcome slots marked in bool ``[S, A, K]``."""
    s, a, _ = np.nonzero(edges)
    return s, a, next_state[edges]


def _by_destination(dst, S):
    """CSR by destination: edges ``order[indptr[t]:indptr[t + 1]]`` lead into state ``t``."""
    order = np.argsort(dst, kind="stable")
    return order, np.searchsorted(dst[order], np.arange(S + 1))


def _reaches(next_state, edges, targets):
    """Bool ``[S]``: states with a path of ``edges`` (bool ``[S, A, K]``) into ``targets``."""
    src, _, dst = _edges(next_state, edges)
    order, indptr = _by_destination(dst, targets.shape[0])
    return kernels.backward_closure(indptr, src[order], targets.astype(np.bool_))


# ------------------------------------------------------------- iteration
def _planning_arrays(mdp, gamma):
    """``(successor, prob, reward)`` for the kernels.

    ``successor`` is ``next_state``, except that outcomes that end the episode,
    padding, and every outcome when ``gamma = 0`` point to the sentinel state
    ``S``, whose value is held at 0: no value flows from them.
    """
    next_state, prob, reward, done, _ = mdp.arrays
    no_value = done | (prob == 0.0) | (gamma == 0.0)
    return np.where(no_value, mdp.n_states, next_state), prob, reward


def _with_end(V):
    """``V`` followed by the sentinel's value 0 (a new array)."""
    return np.append(V, 0.0)


def _q_table(mdp, V, gamma):
    return kernels.q_table(*_planning_arrays(mdp, gamma), _with_end(V), gamma)


def _apply_once(kernel, mdp, V, gamma, *extra):
    """One synchronous sweep of ``kernel`` on ``V [S]``: the operator applied once."""
    out = np.zeros(mdp.n_states + 1)
    kernel(*_planning_arrays(mdp, gamma), _with_end(V), gamma, *extra, out)
    return out[:-1]


def _sweeper(mdp, kernel, gamma, extra, inplace):
    """``sweep(V) -> (V_new, residual)`` over sentinel-extended vectors; Jacobi double-buffers."""
    arrays = _planning_arrays(mdp, gamma)
    if inplace:
        def sweep(V):
            return V, kernel(*arrays, V, gamma, *extra)
        return sweep
    spare = [np.zeros(mdp.n_states + 1)]

    def sweep(V):
        out = spare[0]
        residual = kernel(*arrays, V, gamma, *extra, out)
        spare[0] = V
        return out, residual
    return sweep


def _iterate(mdp, sweep, V0, gamma, tol, max_iter, strict, name):
    """Sweep from a copy of ``V0`` until the residual meets the stopping rule or ``max_iter``."""
    threshold = _stopping_threshold(tol, gamma)
    V = _with_end(V0)
    history = []
    for _ in range(max_iter):
        V, residual = sweep(V)
        history.append(residual)
        if residual < threshold:
            return V[:-1], np.array(history), True
    if strict:
        raise ConvergenceError(_not_converged_message(mdp, name, gamma, tol, max_iter, history))
    return V[:-1], np.array(history), False


def _stopping_threshold(tol, gamma):
    """Residual below which ``||V - V*||_inf <= tol`` (``gamma < 1``); ``tol`` if ``gamma == 1``."""
    if gamma == 1.0:
        return tol
    if gamma == 0.0:
        return np.inf
    return tol * (1.0 - gamma) / gamma


def _not_converged_message(mdp, name, gamma, tol, max_iter, history):
    message = (f"{name} did not converge within max_iter={max_iter} sweeps "
               f"(last residual {history[-1]:.3g}, tol={tol:g}, gamma={gamma:g}); "
               "raise max_iter, or pass strict=False to get the last iterate")
    if gamma == 1.0:
        half = history[len(history) // 2]
        if history[-1] >= 0.5 * half:
            message += ". With gamma=1 the values diverge (the residual is not shrinking)"
        next_state, prob, _, done, _ = mdp.arrays
        possible = prob > 0.0
        exits = (possible & done).any(axis=(1, 2))
        trapped = np.flatnonzero(~_reaches(next_state, possible & ~done, exits))
        if trapped.size:
            names = ", ".join(mdp.state_name(int(s)) for s in trapped[:5])
            message += (f"; no policy reaches termination from {trapped.size} state(s), "
                        f"e.g. {names}: use gamma < 1")
    return message


def _sup_distance(x, y):
    same = x == y  # -inf == -inf: distance 0, not NaN
    return float(np.max(np.where(same, 0.0, np.abs(np.where(same, 0.0, x - y))), initial=0.0))


# ------------------------------------------------------------------ checks
def _check_iteration(gamma, tol, max_iter):
    return (check_gamma(gamma), check_positive("tol", tol),
            check_positive_int("max_iter", max_iter))


def _pick_method(method, kernels_by_name, extra=()):
    if method not in kernels_by_name:
        options = ", ".join(repr(m) for m in (*extra, *kernels_by_name))
        raise ValueError(f"method must be one of {options}, got {method!r}")
    return kernels_by_name[method]


def _check_values(mdp, V, name="V"):
    V = np.ascontiguousarray(V, dtype=np.float64)
    if V.shape != (mdp.n_states,):
        raise ValueError(f"{name} must have shape [{mdp.n_states}], got {V.shape}")
    bad = np.isnan(V) | (V == np.inf)
    if bad.any():
        s = int(np.argmax(bad))
        raise ValueError(f"{name}[{s}] = {V[s]} (state {mdp.state_name(s)}): NaN and +inf "
                         "are not values")
    return V


def _reference(mdp, ref_policy):
    """The reference policy as ``[S, A]`` (uniform by default)."""
    if ref_policy is None:
        return np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    return policy_matrix(mdp, ref_policy, "ref_policy")
