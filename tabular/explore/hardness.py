"""The constants that regret bounds are stated in, computed exactly from a model.

- the communication class (:mod:`tabular.explore.communication`);
- the diameter ``D = max_{s != s'} min_pi E[T(s -> s')]`` (Jaksch et al., 2010,
  Definition 1), over the closed communicating class when the model is weakly
  communicating (the states transient under every policy do not count; ``inf`` when the
  model is not weakly communicating);
- the optimal gain ``rho*`` and the span of an optimal bias ``h*`` (Bartlett & Tewari,
  2009, REGAL's ``sp(h*)``), by relative value iteration on the aperiodic transform;
- the sub-optimality gaps ``Delta(s, a) = V*(s) - Q*(s, a)`` (of the finite-horizon
  problem, per step, or of the discounted one), the smallest positive one and the sum of
  the reciprocals of the positive ones (the gap-dependent bounds, e.g. Simchowitz &
  Jamieson, 2019), and the span of ``V*``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.checks import check_gamma, check_positive_int
from tabular.explore.communication import (
    MULTICHAIN,
    communication_class,
    continuing_kernel,
    end_components,
    hitting_times,
)
from tabular.explore.evaluation import action_values
from tabular.explore.setup import check_horizon, reward_range
from tabular.model.mdp import as_mdp
from tabular.solve.average_reward import finite_horizon
from tabular.solve.dp import value_iteration
from tabular.types import MDPLike

#: The most states :func:`hardness` takes (dense ``S x A x S`` kernels and ``S`` solves).
MAX_STATES = 1_000
#: The aperiodicity transform's weight ``tau`` (Puterman, section 8.5.4).
TAU = 0.5


@dataclass(frozen=True, eq=False)
class Hardness:
    """What :func:`hardness` returns.

    ``communication``: ``"ergodic"``, ``"communicating"``, ``"weakly communicating"`` or
    ``"not weakly communicating"``; ``diameter``: ``D`` (``inf`` if not weakly
    communicating); ``optimal_gain``: ``rho*`` and ``span_h``: ``max h* - min h*``
    (``None`` if not weakly communicating); ``gaps``: ``[H, S, A]`` (with ``horizon``)
    or ``[S, A]`` (with ``gamma``), else ``None``; ``gap_min``: the smallest positive
    gap (``inf`` if none); ``gap_sum``: the sum of ``1 / Delta`` over the positive gaps;
    ``span_v``: ``max V* - min V*`` (``V*_0`` with ``horizon``); ``horizon``, ``gamma``:
    as given.
    """

    communication: str
    diameter: float
    optimal_gain: float | None
    span_h: float | None
    gaps: np.ndarray | None
    gap_min: float
    gap_sum: float
    span_v: float | None
    horizon: int | None
    gamma: float | None


def hardness(mdp: MDPLike, *, horizon: int | None = None, gamma: float | None = None,
             max_iter: int = 1_000_000) -> Hardness:
    """The hardness constants of ``mdp`` (see the module text), computed from the model.

    ``mdp``: a :class:`~tabular.TabularMDP` (or a Gymnasium env with a transition
    table) of at most 1000 states with finite rewards; an outcome that ends the episode
    restarts it from the start distribution for the continuing constants (class,
    diameter, gain, bias). ``horizon`` (an int >= 1) or ``gamma`` (in [0, 1)), at most
    one: the problem whose gaps and ``V*`` span to report (default neither: no gaps).
    ``max_iter``: the sweep limit of relative value iteration.

    A gap counts as positive above ``1e-9 (1 + max |V*|)``, the rounding of the
    backward induction or value iteration that computed it.
    """
    mdp = as_mdp(mdp)
    if mdp.n_states > MAX_STATES:
        raise ValueError(f"hardness builds dense S x A x S kernels and solves S systems: "
                         f"at most {MAX_STATES} states, got {mdp.n_states}")
    reward_range(mdp, "hardness")
    if horizon is not None and gamma is not None:
        raise ValueError("pass horizon (finite-horizon gaps) or gamma (discounted gaps), "
                         "not both")
    horizon = None if horizon is None else check_horizon(horizon)
    if gamma is not None:
        gamma = check_gamma(gamma)
        if gamma >= 1.0:
            raise ValueError(f"gamma must be < 1 for discounted gaps (use horizon= for "
                             f"undiscounted ones), got {gamma}")
    max_iter = check_positive_int("max_iter", max_iter)
    P, r = continuing_kernel(mdp)
    support = P > 0.0
    communication = communication_class(support)
    diameter, gain, span_h = np.inf, None, None
    if communication != MULTICHAIN:
        component, _ = end_components(support)
        closed = np.flatnonzero(component >= 0)
        diameter = max((hitting_times(P, int(t))[closed].max() for t in closed), default=0.0)
        gain, h = optimal_bias(P, r, max_iter)
        span_h = float(h.max() - h.min())
    gaps, span_v = None, None
    if horizon is not None:
        V = finite_horizon(mdp, horizon).V
        Q = np.stack([action_values(mdp, V[h + 1][None])[0] for h in range(horizon)])
        gaps, span_v, scale = V[:-1, :, None] - Q, float(np.ptp(V[0])), np.abs(V).max()
    elif gamma is not None:
        result = value_iteration(mdp, gamma=gamma, tol=1e-12)
        gaps = result.V[:, None] - result.Q
        span_v, scale = float(np.ptp(result.V)), np.abs(result.V).max()
    gap_min, gap_sum = np.inf, 0.0
    if gaps is not None:
        positive = gaps[gaps > 1e-9 * (1.0 + scale)]
        gap_min = float(positive.min()) if positive.size else np.inf
        gap_sum = float((1.0 / positive).sum())
    return Hardness(communication, float(diameter), gain, span_h, gaps, gap_min, gap_sum,
                    span_v, horizon, gamma)


def optimal_bias(P: np.ndarray, r: np.ndarray, max_iter: int,
                 tol: float = 1e-11) -> tuple[float, np.ndarray]:
    """``(rho*, h*)`` by relative value iteration (Puterman, section 8.5.5) on the
    aperiodic transform ``P' = tau P + (1 - tau) I``, ``r' = tau r``, which has the same
    bias and the gain ``tau rho*`` (so periodic optimal chains converge too); stops when
    the span of ``T h - h`` is below ``tol``. A ``RuntimeError`` at ``max_iter``."""
    S = P.shape[0]
    P_tau = TAU * P + (1.0 - TAU) * np.eye(S)[:, None, :]
    r_tau = TAU * r
    h = np.zeros(S)
    for _ in range(max_iter):
        Th = (r_tau + P_tau @ h).max(axis=1)
        change = Th - h
        if np.ptp(change) < tol:
            return float(0.5 * (change.max() + change.min()) / TAU), Th - Th[0]
        h = Th - Th[0]
    raise RuntimeError(f"hardness: relative value iteration did not converge within "
                       f"max_iter={max_iter} sweeps; raise max_iter")
