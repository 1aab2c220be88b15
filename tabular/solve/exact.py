"""Exact policy evaluation: ``v_pi`` from one linear solve, and when float64 can trust it.

``v_pi`` solves ``(I - gamma P_pi) v = r_pi`` (Sutton & Barto 2nd ed., eq. 4.4 as
a linear system). Before the solve, graph searches (:mod:`tabular.model.graph`) mark
the states whose value is not a finite number the solve could give:

- ``-inf`` where the policy reaches a ``-inf`` reward with positive probability;
- with ``gamma = 1``, the states from which the policy never ends the episode:
  their value is 0 if they collect no reward, infinite otherwise (an error that
  names the state).

The solve's answer is refused (a ``ValueError`` naming the state and the way
out) when float64 cannot trust it: a policy that (almost) never ends, with
``gamma`` at or very near 1, whose expected episode length puts the relative
error bound above :data:`EXACT_MAX_ERROR` (see :func:`trusted_solve`).
"""

from __future__ import annotations

import numpy as np

from tabular.model.graph import reaches

EXACT_MAX_STATES = 5000  #: a dense S x S float64 system: 200 MB at this size
#: The relative error bound kappa * eps (condition number times machine epsilon) above
#: which the solve's answer is refused.
EXACT_MAX_ERROR = 1e-6
EPS = np.finfo(np.float64).eps


def policy_values(mdp, pi, gamma: float, policy_name: str = "policy") -> np.ndarray:
    """``v_pi [S]`` exactly: ``-inf`` where ``pi`` risks a ``-inf`` reward, a linear solve
    elsewhere.

    ``mdp``: a :class:`~tabular.TabularMDP` of at most :data:`EXACT_MAX_STATES` states;
    ``pi``: the policy as a checked stochastic ``[S, A]`` matrix; ``gamma``: the
    discount in ``[0, 1]``; ``policy_name``: how errors name the policy. With
    ``gamma == 1`` a policy that never terminates from some state has a finite value
    only if it collects zero reward there (then 0); otherwise the error names the state.
    """
    S = mdp.n_states
    if S > EXACT_MAX_STATES:
        raise ValueError(f"method='exact' solves a dense {S}x{S} system; above "
                         f"{EXACT_MAX_STATES} states use method='sync' (or eval_sweeps=k)")
    next_state, prob, reward, done = mdp.next_state, mdp.prob, mdp.reward, mdp.done
    weight = pi[:, :, None] * prob  # probability of (a, k) in s under pi
    taken = weight > 0.0
    r_pi = (weight * np.where(taken, reward, 0.0)).sum(axis=(1, 2))  # no 0 * -inf
    flows = taken & ~done if gamma > 0.0 else np.zeros_like(taken)
    doomed = reaches(next_state, flows, r_pi == -np.inf)
    stuck = np.zeros(S, dtype=bool)
    if gamma == 1.0:
        exits = (taken & done).any(axis=(1, 2))
        stuck = ~reaches(next_state, flows, exits) & ~doomed
        paying = stuck & (np.abs(r_pi) > 0.0)
        if paying.any():
            s = int(np.argmax(paying))
            raise ValueError(f"with gamma=1 the {policy_name} never terminates from state "
                             f"{mdp.state_name(s)} yet collects reward there, so its value is "
                             "infinite; use gamma < 1 or a policy that reaches termination")
    solve = ~doomed & ~stuck
    V = np.where(doomed, -np.inf, 0.0)
    P = chain_matrix(next_state, weight, flows)
    idx = np.flatnonzero(solve)
    system = np.eye(idx.size) - gamma * P[np.ix_(idx, idx)]
    V[idx] = trusted_solve(mdp, system, r_pi[idx], idx, gamma, policy_name)
    return V


def chain_matrix(next_state, weight, flows) -> np.ndarray:
    """``P [S, S']``: the probability that the policy moves from ``s`` to ``s'`` with value
    flowing, the sum of ``weight`` (``[S, A, K]``, the probability of each outcome
    under the policy) over the outcomes marked by ``flows``."""
    S = next_state.shape[0]
    P = np.zeros((S, S))
    s_idx = np.broadcast_to(np.arange(S)[:, None, None], weight.shape)
    np.add.at(P, (s_idx[flows], next_state[flows]), weight[flows])
    return P


def trusted_solve(mdp, system, r, states, gamma: float, policy_name: str) -> np.ndarray:
    """``v = system^-1 r`` for ``system = I - gamma P_pi`` on ``states``, if float64 can
    trust it.

    ``mdp`` names the states in errors; ``system`` ``[M, M]`` and ``r`` ``[M]`` are the
    system restricted to ``states`` (int ``[M]``, their ids in ``mdp``); ``gamma`` is
    the discount; ``policy_name`` names the policy in errors.

    ``system`` is an M-matrix: its inverse ``sum_k (gamma P_pi)^k`` is ``>= 0`` with row
    sums ``L = system^-1 1``, the expected discounted episode lengths. Rounding errors of
    relative size ``eps`` in the entries of ``I`` and ``gamma P_pi`` (``1 - gamma P_ss``
    cancels when ``P_ss`` is near 1) move ``v`` by up to ``kappa eps`` relative to its
    scale, with ``kappa = ||system^-1 (I + gamma P_pi)||_inf = 2 max L - 1`` (the
    componentwise condition number, Higham, Accuracy and Stability of Numerical
    Algorithms, 2nd ed., section 7.2). Above :data:`EXACT_MAX_ERROR` the answer is
    refused, and so is an ``L`` that is not a length (NaN, or below one step: rounding
    lost the chance of ending, e.g. ``1 - (1 - p) = 0``). ``L`` needs a second solve only
    when ``gamma`` is close enough to 1 for its bound ``max L <= 1 / (1 - gamma)`` to
    allow ``kappa`` beyond the limit.
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
    """The error of a solve float64 cannot trust: state ``s``'s episode length ``how_long``
    and the ways out."""
    discounted = "discounted " if gamma < 1.0 else ""
    return (f"method='exact' cannot be trusted for the {policy_name} with gamma={gamma:.15g}: "
            f"its expected {discounted}episode length from state {mdp.state_name(int(s))} "
            f"{how_long}. The policy (almost) never ends the episode: use gamma further "
            "below 1, or method='sync' with max_iter, which flags values that have not "
            "converged")
