"""Dynamic programming without discounting: average reward, and finite horizons.

Average reward (Sutton & Barto 2nd ed., section 10.3; Puterman, 1994, chapter 8): a
continuing task's policy ``pi`` earns the gain ``rho = lim_{n -> inf} (1/n) E[R_1 +
... + R_n]``; if its chain is unichain (one recurrent class, plus transient states)
the gain is the same from every state and, with the bias ``h`` (the differential
values), solves the evaluation equations ``h + rho = r_pi + P_pi h``, unique once
one entry of ``h`` is fixed (Puterman, section 8.2). Here ``h(0) = 0``: state 0 is
the reference state of every function. The optimality equation is
``h(s) + rho* = max_a [r(s, a) + sum_s' p(s'|s, a) h(s')]``;
:func:`relative_value_iteration` solves it, :func:`average_reward_solve` evaluates
a policy exactly. The differential action values returned as ``Q`` are
``q(s, a) = r(s, a) - rho + sum_s' p(s'|s, a) h(s')`` (section 10.3), so
``max_a Q = h`` at the optimum.

Average reward is defined on continuing tasks with finite rewards: a model whose
outcomes can end the episode, or pay ``-inf``, is refused with an error naming
the state and action.

Finite horizon (Puterman, section 4.5, backward induction; mdptoolbox's
``FiniteHorizon``): :func:`finite_horizon` computes the optimal values of the
``H - t`` steps left at each time ``t`` and the time-dependent policy. It accepts
every model, episodic ones and ``-inf`` rewards included.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tabular.checks import (
    check_flag,
    check_gamma,
    check_positive,
    check_positive_int,
    policy_matrix,
)
from tabular.model.graph import reaches
from tabular.model.mdp import TabularMDP
from tabular.solve import sweeps as kernels
from tabular.solve.bellman import (
    MAX_ITER,
    ConvergenceError,
    check_values,
    greedy_policy,
    q_table,
    single_thread_when_small,
    with_end,
)
from tabular.solve.exact import EXACT_MAX_STATES
from tabular.solve.results import (
    AverageRewardResult,
    FiniteHorizonResult,
    RelativeValueIterationResult,
    sweeps_fields,
)
from tabular.types import PolicyLike

#: The reference state of the bias: ``h(REFERENCE) = 0``.
REFERENCE = 0
#: The most values ``(horizon + 1) * S`` that :func:`finite_horizon` stores (1.6 GB with
#: the policy).
MAX_HORIZON_ENTRIES = 100_000_000


# --------------------------------------------------------------- algorithms
@single_thread_when_small
def relative_value_iteration(mdp: TabularMDP, *, tol: float = 1e-8, max_iter: int = 100_000,
                             strict: bool = True) -> RelativeValueIterationResult:
    """Relative value iteration (Puterman, 1994, section 8.5.5; mdptoolbox's
    ``RelativeValueIteration``): the optimal gain ``rho*``, a bias ``h`` and a policy of
    an undiscounted continuing task.

    Each sweep applies the optimality operator ``(T h)(s) = max_a [r(s, a) + sum_s'
    p(s'|s, a) h(s')]`` (eq. 4.10 with ``gamma = 1``) and subtracts ``(T h)(0)``, so
    that ``h`` stays bounded. Since ``min(T h - h) <= rho* <= max(T h - h)`` and the
    policy greedy in ``h`` earns at least ``min(T h - h)`` (Puterman, section 8.5),
    stopping once the span ``max(T h - h) - min(T h - h)`` is below ``tol`` gives
    ``rho`` (the midpoint) within ``tol / 2`` of ``rho*`` and a policy within ``tol``.
    The span shrinks to 0 when the optimal gain is the same from every state
    (unichain or communicating models) and the optimal chains are aperiodic.

    ``mdp``: a continuing model (no outcome ends the episode) with finite rewards;
    ``tol`` (default ``1e-8``): the span at which to stop, ``> 0``; ``max_iter``
    (default 100000): the sweep limit; ``strict`` (default ``True``): raise
    :class:`~tabular.ConvergenceError` at ``max_iter``, or with ``False`` return the
    last iterate with ``converged=False``.
    """
    tol = check_positive("tol", tol)
    max_iter = check_positive_int("max_iter", max_iter, high=MAX_ITER)
    strict = check_flag("strict", strict)
    _check_continuing(mdp, "relative_value_iteration")
    model = mdp.arrays
    h = np.zeros(mdp.n_states + 1)  # with the sentinel, held at 0 (padding points there)
    Th = np.zeros_like(h)
    history = []
    for _ in range(max_iter):
        kernels.optimality_sweep(model, h, 1.0, Th)
        gap = Th[:-1] - h[:-1]
        low, high = gap.min(), gap.max()
        history.append(high - low)
        if high - low < tol or len(history) == max_iter:
            break  # h is the iterate the bounds and the greedy policy belong to
        h[:-1] = Th[:-1] - Th[REFERENCE]
    converged = history[-1] < tol
    if not converged and strict:
        raise ConvergenceError(_not_converged_message(max_iter, tol, history))
    rho = float(0.5 * (low + high))
    Q = kernels.q_table(model, h, 1.0) - rho
    return RelativeValueIterationResult(rho, h[:-1], Q, greedy_policy(Q),
                                        **sweeps_fields(np.array(history), converged, "sync"))


@single_thread_when_small
def average_reward_solve(mdp: TabularMDP, policy: PolicyLike) -> AverageRewardResult:
    """The exact gain and bias of a unichain policy (Puterman, 1994, section 8.2).

    Solves the evaluation equations ``h + rho = r_pi + P_pi h`` with ``h(0) = 0``, one
    linear system in ``(rho, h(1), ..., h(S-1))``; it has a unique solution exactly
    when the policy's chain is unichain (one recurrent class, plus transient states).

    ``mdp``: a continuing model (no outcome ends the episode) with finite rewards, of
    at most 5000 states (a dense solve); ``policy``: greedy ``int [S]``, stochastic
    ``[S, A]`` or a :class:`~tabular.SoftmaxPolicy`. A policy with two or more
    recurrent classes (whose gain depends on the start state) is a ``ValueError``
    naming a state that never reaches a recurrent one.
    """
    pi = policy_matrix(mdp, policy)
    _check_continuing(mdp, "average_reward_solve")
    S = mdp.n_states
    if S > EXACT_MAX_STATES:
        raise ValueError(f"average_reward_solve solves a dense {S}x{S} system; above "
                         f"{EXACT_MAX_STATES} states use relative_value_iteration")
    next_state, prob, reward = mdp.next_state, mdp.prob, mdp.reward
    weight = pi[:, :, None] * prob  # probability of (a, k) in s under pi
    _check_unichain(mdp, next_state, weight > 0.0)
    r_pi = (weight * reward).sum(axis=(1, 2))
    rows = np.broadcast_to(np.arange(S)[:, None, None], weight.shape)
    P = np.bincount((rows * S + next_state).ravel(), weight.ravel(), S * S).reshape(S, S)
    system = np.eye(S) - P
    system[:, REFERENCE] = 1.0  # the unknown h(0) = 0 gives its column to rho
    solution = np.linalg.solve(system, r_pi)
    rho = float(solution[REFERENCE])
    h = solution.copy()
    h[REFERENCE] = 0.0
    return AverageRewardResult(rho, h, q_table(mdp, h, 1.0) - rho, "exact")


@single_thread_when_small
def finite_horizon(mdp: TabularMDP, horizon: int, *, gamma: float = 1.0,
                   terminal_values: npt.ArrayLike | None = None) -> FiniteHorizonResult:
    """Backward induction (Puterman, 1994, section 4.5; mdptoolbox's ``FiniteHorizon``):
    the optimal values and time-dependent policy of ``horizon`` decisions.

    From ``V[horizon] = terminal_values``, each step back is one application of the
    optimality operator, ``V[t](s) = max_a sum_k p_k [r_k + gamma V[t + 1](s'_k)]``
    (eq. 4.10; an outcome that ends the episode takes no value from ``V[t + 1]``),
    and ``policy[t]`` is the action that attains it. As ``horizon`` grows with
    ``gamma < 1``, ``V[0]`` tends to ``v*`` of :func:`~tabular.value_iteration`.

    ``mdp``: the model; ``horizon``: the number of decisions, an integer ``>= 1``
    (``(horizon + 1) * S`` at most 10^8); ``gamma`` (default 1.0): the discount in
    ``[0, 1]``; ``terminal_values`` (default ``None``: zeros): ``V[horizon]``, ``[S]``
    (``-inf`` allowed, NaN and ``+inf`` not).
    """
    horizon = check_positive_int("horizon", horizon)
    gamma = check_gamma(gamma)
    S = mdp.n_states
    if (horizon + 1) * S > MAX_HORIZON_ENTRIES:
        raise ValueError(f"horizon={horizon:,} stores (horizon + 1) x {S} values, more "
                         f"than {MAX_HORIZON_ENTRIES:,}: use a shorter horizon")
    V = np.empty((horizon + 1, S))
    V[horizon] = 0.0 if terminal_values is None else check_values(mdp, terminal_values,
                                                                  "terminal_values")
    policy = np.empty((horizon, S), dtype=np.int64)
    model = mdp.arrays
    for t in range(horizon - 1, -1, -1):
        Q = kernels.q_table(model, with_end(V[t + 1]), gamma)
        policy[t] = greedy_policy(Q)
        V[t] = Q.max(axis=1)
    return FiniteHorizonResult(V, policy, "backward_induction")


# ------------------------------------------------------------------ checks
def _check_continuing(mdp: TabularMDP, name: str) -> None:
    """A ``ValueError`` naming the state and action where ``mdp`` can end the episode or
    pay ``-inf``: average reward needs a continuing task with finite rewards."""
    possible = mdp.prob > 0.0
    for bad, what, way_out in (
            (possible & mdp.done, "ends the episode",
             "average reward is defined for continuing tasks; for an episodic task use "
             "value_iteration (gamma=1 allowed) or finite_horizon"),
            (possible & (mdp.reward == -np.inf), "can pay a reward of -inf",
             "the average reward of a policy that risks it is not a number")):
        if bad.any():
            s, a, _ = np.argwhere(bad)[0]
            raise ValueError(f"{name}: state {mdp.state_name(int(s))}, action "
                             f"{mdp.action_name(int(a))} {what}: {way_out}")


def _check_unichain(mdp: TabularMDP, next_state, taken) -> None:
    """A ``ValueError`` unless the chain of the outcome slots ``taken`` (bool ``[S, A, K]``,
    those of positive probability under the policy) has one recurrent class.

    Every state reaches the recurrent class of a unichain chain. Candidates start as
    all states; each round tests one candidate ``r``: if every state reaches it, the
    chain is unichain; the candidates that cannot reach ``r`` form a set no path
    leaves (the states reaching ``r`` would include them), so it holds a recurrent
    class, and the search goes on there. If every candidate reaches ``r``, ``r`` is in
    that class, and a state that does not reach ``r`` leads to a second one.
    """
    S = mdp.n_states
    candidates = np.ones(S, dtype=bool)
    while True:
        r = int(np.argmax(candidates))
        into_r = reaches(next_state, taken, np.arange(S) == r)
        if into_r.all():
            return
        rest = candidates & ~into_r
        if not rest.any():
            u = int(np.argmin(into_r))
            raise ValueError(f"policy is not unichain: from state {mdp.state_name(u)} it "
                             f"never reaches state {mdp.state_name(r)}, which is recurrent, "
                             "so its chain has two or more recurrent classes and the gain "
                             "depends on the start state (average_reward_solve needs one "
                             "recurrent class)")
        candidates = rest


def _not_converged_message(max_iter: int, tol: float, history) -> str:
    """The :class:`~tabular.ConvergenceError` of :func:`relative_value_iteration`: the last
    span, and what a span that does not shrink may mean."""
    message = (f"relative_value_iteration did not converge within max_iter={max_iter} "
               f"sweeps (last span {history[-1]:.3g}, tol={tol:g}); raise max_iter, or pass "
               "strict=False to get the last iterate")
    if len(history) > 2 and history[-1] >= 0.5 * history[len(history) // 2]:
        message += (". The span is not shrinking: the optimal gain may differ between "
                    "states (a multichain model, with no single gain) or an optimal "
                    "policy's chain may be periodic (the aperiodicity transformation "
                    "P -> tau P + (1 - tau) I of Puterman, section 8.5.4, keeps the gains "
                    "and optimal policies and removes periodicity)")
    return message
