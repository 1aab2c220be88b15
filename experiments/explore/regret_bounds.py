"""The published regret bounds the exploration figures hold their exact regret against,
computed from a model's hardness constants (:func:`tabular.hardness`).

Only a bound whose constants the paper states is computed here: UCRL2's (Jaksch, Ortner
& Auer, 2010, Theorem 2). The episodic learners' bounds are stated up to constants the
material read for this figure does not give numerically (UCBVI: Azar et al., 2017,
abstract, ``O~(sqrt(H S A T) + H^2 S^2 A + H sqrt(T))``; optimistic Q-learning: Jin et al.,
2018, an absolute constant ``c``; PSRL: Osband et al., 2013, an ``O~``), so for those
:func:`smallest_vacuous_constant` says how small the unstated constant of a bound's term
would have to be for the bound to say anything at the ``T`` of a run.
"""

from __future__ import annotations

import numpy as np

#: Jaksch et al. (2010), Theorem 2: with probability at least ``1 - delta``, for any
#: start state and any ``T > 1``, UCRL2's regret is at most
#: ``UCRL2_CONSTANT D S sqrt(A T ln(T / delta))`` (rewards in [0, 1]).
UCRL2_CONSTANT = 34.0


def ucrl2_bound(*, diameter: float, n_states: int, n_actions: int, steps, delta: float,
                reward_span: float) -> np.ndarray:
    """``34 D S sqrt(A T ln(T / delta))`` (Jaksch et al., 2010, Theorem 2), times the
    reward span ``r_max - r_min``: the theorem takes rewards in [0, 1], and an affine
    map of the rewards onto [0, 1] divides every regret by the span. ``steps``: ``T``
    (an array of them gives the bound at each)."""
    T = np.asarray(steps, dtype=float)
    return (UCRL2_CONSTANT * reward_span * diameter * n_states
            * np.sqrt(n_actions * T * np.log(T / delta)))


def smallest_vacuous_constant(term: float, largest_regret: float) -> float:
    """The constant ``c`` above which ``c x term`` exceeds ``largest_regret`` (the
    regret of the worst policy played throughout), i.e. above which a bound containing
    that term says nothing at this ``T``."""
    return float(largest_regret / term)


def ucbvi_lower_order_term(*, horizon: int, n_states: int, n_actions: int, steps: int,
                           delta: float, reward_span: float) -> float:
    """``H^2 S^2 A L^2`` with ``L = ln(5 S A T / delta)`` (the logarithm of
    :func:`tabular.explore.ucbvi`'s bonuses), times the reward span: the second term of
    UCBVI's bound (Azar et al., 2017, abstract), whose constant is left unstated here."""
    L = np.log(5.0 * n_states * n_actions * steps / delta)
    return float(reward_span * horizon**2 * n_states**2 * n_actions * L**2)
