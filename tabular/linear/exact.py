"""The exact answers of linear value prediction on a finite MDP (Sutton & Barto,
chapters 9 and 11).

A policy makes a model a Markov reward process (:class:`RewardProcess`): ``P``, the
probability of moving from ``s`` to ``s'`` with value flowing (outcomes that end the
episode excluded), ``r``, the expected reward, ``v = v_pi`` and ``mu``, the on-policy
distribution. On it, for features ``X [S, d]`` and weights ``w [d]``:

- the value error ``VE(w) = sum_s mu(s) [v(s) - x(s) . w]^2`` (eq. 9.1) and its
  minimiser (:func:`ve_minimiser`, what gradient Monte Carlo converges to);
- the TD fixed point ``w_TD = A^{-1} b`` with ``A = X^T D (I - gamma P) X`` and
  ``b = X^T D r`` (eq. 9.12), and for TD(lambda) with ``(I - gamma lambda P)^{-1}``
  between ``D`` and the rest, the fixed point of the lambda-return's Bellman operator
  (what LSTD and semi-gradient TD converge to);
- the Bellman error ``BE(w) = ||delta_w||^2_mu`` with ``delta_w = r + gamma P X w - X w``
  (eq. 11.19) and the projected Bellman error ``PBE(w) = ||Pi delta_w||^2_mu`` (eq.
  11.22), ``Pi`` the ``mu``-weighted projection onto the span of the features;
- the expected updates of the off-policy learners under any state distribution (a
  behaviour policy's): semi-gradient TD's, TDC's and GTD2's (section 11.7, with
  their secondary weights ``v``) and emphatic TD's, with the expected emphasis
  ``m = (I - gamma P^T)^{-1} (mu o i)`` and its fixed point (section 11.8).

``D = diag(mu)``. Where the features are linearly dependent on the states ``mu``
weighs, the minimisers are not unique; the functions then return the one of least
norm, and every one of them gives the same estimate ``X w`` on those states.

Accuracy: every exact quantity goes through an orthonormal basis of the features' span
(:mod:`tabular.linear.linalg`), never through ``X^T D X``. The VE minimiser's
``sqrt(VE)`` lies above the least by at most the first-order bound ``E`` of
:meth:`~tabular.linear.linalg.SpanBasis.bound`, refused (an
:class:`~tabular.linear.linalg.IllConditionedError` naming the features ``X``) when
``E`` exceeds :data:`~tabular.linear.linalg.ACCURACY` (1e-4) of ``||v_pi||_mu``;
measured on a polynomial basis of order 20 over the 1000-state walk (scaled condition
number 3e14), its VE is 2e-7 above the exact minimum over the same float64 features.
The fixed points solve a ``k x k`` system in that basis to a relative residual of
:data:`~tabular.linear.linalg.SOLVE_TOLERANCE` (1e-8), refused beyond it. Results that
overflow float64 (huge features or weights) are refused, not returned as inf or NaN.
"""

from __future__ import annotations

import functools

import numpy as np
import numpy.typing as npt

from tabular.checks import check_gamma, check_unit_interval, policy_matrix
from tabular.linear.features import check_features
from tabular.linear.linalg import galerkin, solve, span_basis
from tabular.linear.results import RewardProcess, distribution, real_vector
from tabular.model.graph import reaches
from tabular.model.mdp import TabularMDP, as_mdp
from tabular.solve.exact import EXACT_MAX_STATES, chain_matrix, policy_values
from tabular.types import FloatArray, MDPLike, PolicyLike


def reward_process(mdp: MDPLike, policy: PolicyLike, *, gamma: float) -> RewardProcess:
    """The :class:`RewardProcess` of ``policy`` (any form :func:`~tabular.checks.policy_matrix`
    reads) on ``mdp`` (a :class:`~tabular.TabularMDP` or a Gymnasium env with a
    transition table), discount ``gamma`` in [0, 1].

    ``mu`` is the distribution of the states a sample of the policy's experience
    visits: in an episodic task, eq. 9.2-9.3, ``eta = h + P^T eta`` normalised (the
    expected visits per episode; the book suggests folding ``gamma`` into ``P`` here,
    which this leaves out, since sampled learners see the undiscounted visits and the
    error bound of eq. 9.14 holds for them); in a continuing task (no episode ends
    from any state the policy reaches) the stationary distribution ``mu = P^T mu``,
    which must be unique. Rewards must be finite where the policy goes (a linear
    estimate cannot be ``-inf``), and in an episodic task every state the policy
    reaches must be able to end the episode.
    """
    mdp = as_mdp(mdp)
    gamma = check_gamma(gamma)
    pi = policy_matrix(mdp, policy)
    S = mdp.n_states
    if S > EXACT_MAX_STATES:
        raise ValueError(f"reward_process builds a dense {S}x{S} chain; at most "
                         f"{EXACT_MAX_STATES} states")
    weight = pi[:, :, None] * mdp.prob
    taken = weight > 0.0
    flows = taken & ~mdp.done
    P = chain_matrix(mdp.next_state, weight, flows)
    reached = _reached(mdp.start > 0.0, P)
    risky = taken & ~np.isfinite(mdp.reward) & reached[:, None, None]
    if risky.any():
        s, a, _ = np.argwhere(risky)[0]
        raise ValueError(f"the policy takes a -inf reward in state {mdp.state_name(s)} "
                         f"(action {mdp.action_name(a)}): a linear estimate is finite")
    r = (weight * np.where(taken, mdp.reward, 0.0)).sum(axis=(1, 2))
    ends = (taken & mdp.done).any(axis=(1, 2))
    episodic = bool((ends & reached).any())
    if episodic:
        stuck = reached & ~reaches(mdp.next_state, flows, ends)
        if stuck.any():
            s = int(np.argmax(stuck))
            raise ValueError(f"the policy reaches state {mdp.state_name(s)}, from which its "
                             "episode never ends: the on-policy distribution of an episodic "
                             "task (eq. 9.2) counts visits per episode")
        mu = _expected_visits(mdp.start, P, reached)
    else:
        mu = _stationary(P, reached, mdp)
    v = policy_values(mdp, pi, gamma)
    return RewardProcess(P=P, r=r, v=v, mu=mu, gamma=gamma, episodic=episodic)


def _reached(start: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Bool ``[S]``: the states the chain ``P`` reaches from the ``start`` states."""
    reached = start.copy()
    frontier = start.copy()
    while frontier.any():
        frontier = (P[frontier] > 0.0).any(axis=0) & ~reached
        reached |= frontier
    return reached


def _expected_visits(start: np.ndarray, P: np.ndarray, reached: np.ndarray) -> np.ndarray:
    """eq. 9.2-9.3: ``eta = h + P^T eta`` on the reached states, normalised."""
    idx = np.flatnonzero(reached)
    eta = np.zeros(start.shape[0])
    eta[idx] = solve(np.eye(idx.size) - P[np.ix_(idx, idx)].T, start[idx], "eq. 9.2")
    return eta / eta.sum()


def _stationary(P: np.ndarray, reached: np.ndarray, mdp: TabularMDP) -> np.ndarray:
    """The unique ``mu = P^T mu`` summing to 1, exactly 0 on the transient states."""
    idx = np.flatnonzero(reached)
    n = idx.size
    if np.linalg.matrix_rank(np.eye(n) - P[np.ix_(idx, idx)].T) < n - 1:
        raise ValueError("the policy's chain has more than one closed class of states it "
                         "reaches, so its stationary distribution depends on the start; "
                         f"give {mdp.n_states}-state models one class or episodes that end")
    rough = np.zeros(P.shape[0])
    rough[idx] = solve(np.vstack([np.eye(n) - P[np.ix_(idx, idx)].T, np.ones((1, n))]),
                        np.r_[np.zeros(n), 1.0], "mu = P^T mu")
    one = np.zeros(P.shape[0], dtype=bool)
    one[np.argmax(rough)] = True
    closed = np.flatnonzero(_reached(one, P))  # a recurrent state's class
    m = closed.size
    mu = np.zeros(P.shape[0])
    mu[closed] = solve(np.vstack([np.eye(m) - P[np.ix_(closed, closed)].T, np.ones((1, m))]),
                        np.r_[np.zeros(m), 1.0], "mu = P^T mu")
    return mu


def _weights(w: npt.ArrayLike, d: int, name: str = "w") -> np.ndarray:
    """``w`` as a finite float64 ``[d]`` array, or a ``ValueError`` naming it."""
    arr = real_vector(name, w, d, " (one weight per feature)")
    if not np.isfinite(arr).all():
        i = int(np.argmax(~np.isfinite(arr)))
        raise ValueError(f"{name}[{i}] = {arr[i]} is not finite")
    return arr


def _quiet(fn):
    """``fn`` with numpy's overflow and invalid-value warnings off: what overflows is
    refused by :func:`_finite`, with an error naming the arguments, not a warning."""
    @functools.wraps(fn)
    def quiet(*args, **kwargs):
        with np.errstate(over="ignore", invalid="ignore"):
            return fn(*args, **kwargs)
    return quiet


def _finite(value, what: str):
    """``value`` (a number or an array), or a ``ValueError`` when it overflowed float64:
    features or weights finite but so large that ``what`` is not."""
    if not np.isfinite(value).all():
        raise ValueError(f"{what} overflows float64: the features X or the weights w are "
                         "too large (scale them down)")
    return value


def _norm2(process: RewardProcess, y: np.ndarray, mu: np.ndarray | None = None) -> float:
    """``||y||^2_mu = sum_s mu(s) y(s)^2`` over the states ``mu`` (default ``process.mu``)
    weighs."""
    mu = process.mu if mu is None else mu
    on = mu > 0.0
    return float(np.sum(mu[on] * y[on] ** 2))


@_quiet
def value_error(process: RewardProcess, X: npt.ArrayLike, w: npt.ArrayLike, *,
                mu: npt.ArrayLike | None = None) -> float:
    """``VE(w) = sum_s mu(s) [v_pi(s) - x(s) . w]^2`` (eq. 9.1). ``mu``: ``[S]``, the
    distribution that weighs the states, default ``process.mu`` (the on-policy one); off
    policy, the behaviour's (as the book measures Figures 11.5 and 11.6)."""
    X = check_features(X, process.n_states)
    w = _weights(w, X.shape[1])
    mu = process.mu if mu is None else distribution(mu, process.n_states)
    return _finite(_norm2(process, np.where(mu > 0.0, process.v, 0.0) - X @ w, mu),
                   "value_error")


@_quiet
def ve_minimiser(process: RewardProcess, X: npt.ArrayLike) -> FloatArray:
    """The ``w`` of least VE (eq. 9.1), ``(X^T D X)^{-1} X^T D v_pi``: the fixed point of
    gradient Monte Carlo (section 9.3).

    Computed in an orthonormal basis of the features' span (column-scaled Householder
    QR of ``D^{1/2} X``, :func:`~tabular.linear.linalg.span_basis`): ``sqrt(VE)`` of the
    answer lies above the least by at most the bound ``E`` of
    :meth:`~tabular.linear.linalg.SpanBasis.bound` (to first order in the rounding),
    and an :class:`~tabular.linear.linalg.IllConditionedError` (a ``ValueError``) naming
    the features refuses the answer when ``E`` exceeds
    :data:`~tabular.linear.linalg.ACCURACY` (1e-4) of ``||v_pi||_mu``. Measured: on the
    polynomial basis of order 20 over the 1000-state walk (scaled condition number
    3e14) VE is 2e-7 (relative) above the exact minimum over the same float64 features,
    where a least-squares call with numpy's default cut-off was 9% above."""
    X = check_features(X, process.n_states)
    basis = span_basis(X, process.mu)
    return basis.fit(X, process.v, "ve_minimiser")


@_quiet
def bellman_error_vector(process: RewardProcess, X: npt.ArrayLike,
                         w: npt.ArrayLike) -> FloatArray:
    """``delta_w = r + gamma P X w - X w`` (``[S]``, eq. 11.17's expectation of the TD
    error in each state)."""
    X = check_features(X, process.n_states)
    w = _weights(w, X.shape[1])
    estimate = X @ w
    return _finite(process.r + process.gamma * (process.P @ estimate) - estimate,
                   "the Bellman error vector")


@_quiet
def expected_td_update(process: RewardProcess, X: npt.ArrayLike, w: npt.ArrayLike, *,
                       mu: npt.ArrayLike | None = None) -> FloatArray:
    """The expected semi-gradient TD(0) update per unit step size, ``X^T diag(mu)
    delta_w`` (``[d]``): with the process's own ``mu`` the on-policy update (``b - A w``,
    eq. 9.12's), with the distribution of a behaviour policy the expected off-policy
    update with importance sampling (eq. 11.2), and with a uniform ``mu`` the update of
    semi-gradient DP (section 11.2, Figure 11.2 right). ``mu``: ``[S]``, a
    distribution; default ``process.mu``."""
    X = check_features(X, process.n_states)
    w = _weights(w, X.shape[1])
    mu = process.mu if mu is None else distribution(mu, process.n_states)
    return _finite(X.T @ (mu * bellman_error_vector(process, X, w)), "expected_td_update")


@_quiet
def bellman_error(process: RewardProcess, X: npt.ArrayLike, w: npt.ArrayLike, *,
                  mu: npt.ArrayLike | None = None) -> float:
    """``BE(w) = ||delta_w||^2_mu`` (eq. 11.19). ``mu``: as for :func:`value_error`."""
    mu = process.mu if mu is None else distribution(mu, process.n_states)
    return _finite(_norm2(process, bellman_error_vector(process, X, w), mu), "bellman_error")


@_quiet
def projected_bellman_error(process: RewardProcess, X: npt.ArrayLike, w: npt.ArrayLike, *,
                            mu: npt.ArrayLike | None = None) -> float:
    """``PBE(w) = ||Pi delta_w||^2_mu`` (eq. 11.22), ``Pi`` the ``mu``-weighted
    projection onto the span of ``X``'s columns (eq. 11.14), computed as the squared
    length of ``D^{1/2} delta_w``'s coordinates in an orthonormal basis of that span
    (:func:`~tabular.linear.linalg.span_basis`; no weights, none of their rounding).
    ``mu``: as for :func:`value_error`."""
    X = check_features(X, process.n_states)
    w = _weights(w, X.shape[1])
    mu = process.mu if mu is None else distribution(mu, process.n_states)
    delta = bellman_error_vector(process, X, w)
    return _finite(span_basis(X, mu).project(delta), "projected_bellman_error")


@_quiet
def td_fixed_point(process: RewardProcess, X: npt.ArrayLike, *,
                   lam: float = 0.0) -> FloatArray:
    """The TD fixed point: ``w`` with ``A w = b`` (eq. 9.12), where for TD(lambda)
    ``A = X^T D M (I - gamma P) X`` and ``b = X^T D M r`` with ``M = (I - gamma lambda
    P)^{-1}`` (``M = I`` for TD(0)): the weights at which the expected update of TD(lambda)
    vanishes, and LSTD's limit. ``lam = 1`` gives :func:`ve_minimiser`'s answer.

    Solved in an orthonormal basis of the features' span
    (:func:`~tabular.linear.linalg.galerkin`), never by forming ``A``, whose condition
    number is the square of the features': the answer solves the ``k x k`` system in
    that basis to a relative residual of 1e-8, or a ``ValueError`` says none does (``A``
    singular in a way no ``w`` solves)."""
    X = check_features(X, process.n_states)
    lam = check_unit_interval("lam", lam)
    on = process.mu > 0.0  # closed under P: the chain never leaves the states mu weighs
    gamma = process.gamma
    GX, y = np.zeros_like(X), np.zeros(process.n_states)
    P_on = process.P[np.ix_(on, on)]
    GX[on], y[on] = X[on] - gamma * (P_on @ X[on]), process.r[on]
    if lam > 0.0:
        both = solve(np.eye(int(on.sum())) - gamma * lam * P_on,
                     np.column_stack([GX[on], y[on]]),
                     "the lambda-return operator (I - gamma lam P)^{-1}")
        GX[on], y[on] = both[:, :-1], both[:, -1]
    return galerkin(span_basis(X, process.mu), _finite(GX, "td_fixed_point"), y,
                    "the TD fixed point A w = b")


def _off_policy_parts(process: RewardProcess, X: npt.ArrayLike, w: npt.ArrayLike,
                      v: npt.ArrayLike, mu: npt.ArrayLike | None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The checked ``X``, ``mu``, the expected TD error ``delta_w`` and ``X v``."""
    features = check_features(X, process.n_states)
    secondary = _weights(v, features.shape[1], "v")
    weights = process.mu if mu is None else distribution(mu, process.n_states)
    return (features, weights, bellman_error_vector(process, features, w),
            features @ secondary)


@_quiet
def expected_tdc_update(process: RewardProcess, X: npt.ArrayLike, w: npt.ArrayLike,
                        v: npt.ArrayLike, *, mu: npt.ArrayLike | None = None
                        ) -> tuple[FloatArray, FloatArray]:
    """The expected TDC update per unit step sizes (eq. 11.30), ``(dw, dv)`` (each
    ``[d]``): ``dw = X^T D delta_w - gamma (P X)^T D X v`` (``E[rho delta x] - gamma
    E[rho x' x^T] v``) and ``dv = X^T D (delta_w - X v)`` (``E[rho (delta - v . x) x]``),
    ``D = diag(mu)``. With ``mu`` the behaviour's state distribution and ``process``
    the target policy's, the expectation of :func:`~tabular.linear.learners.tdc`'s
    step from a state drawn from ``mu`` (the ``rho`` of eq. 11.1 turns the behaviour's
    action into the target's ``P``). ``mu``: ``[S]``, a distribution; default
    ``process.mu``."""
    F, d, delta, Fv = _off_policy_parts(process, X, w, v, mu)
    dw = F.T @ (d * delta) - process.gamma * (process.P @ F).T @ (d * Fv)
    return _finite(dw, "expected_tdc_update"), _finite(F.T @ (d * (delta - Fv)),
                                                       "expected_tdc_update")


@_quiet
def expected_gtd2_update(process: RewardProcess, X: npt.ArrayLike, w: npt.ArrayLike,
                         v: npt.ArrayLike, *, mu: npt.ArrayLike | None = None
                         ) -> tuple[FloatArray, FloatArray]:
    """The expected GTD2 update per unit step sizes (eq. 11.29), ``(dw, dv)``:
    ``dw = (X - gamma P X)^T D X v`` (``E[rho (x - gamma x') x^T] v``) and ``dv`` as
    :func:`expected_tdc_update`'s. ``mu``: as there."""
    F, d, delta, Fv = _off_policy_parts(process, X, w, v, mu)
    dw = (F - process.gamma * (process.P @ F)).T @ (d * Fv)
    return _finite(dw, "expected_gtd2_update"), _finite(F.T @ (d * (delta - Fv)),
                                                        "expected_gtd2_update")


def expected_emphasis(process: RewardProcess, *, mu: npt.ArrayLike | None = None) -> FloatArray:
    """``m = (I - gamma P^T)^{-1} (mu o i)`` (``[S]``, interest ``i = 1``): ``m(s) =
    mu(s) E[M_t | S_t = s]``, the state distribution weighted by the followon trace
    of eq. 11.24 in its stationary expectation (Sutton, Mahmood & White 2016), from
    ``m = mu o i + gamma P^T m``; ``P`` is the target policy's (``process``). With
    ``mu`` eq. 9.3's visits of an episodic behaviour the same equation holds per
    episode (the trace starts each episode at ``M_0 = i``). ``mu``: the behaviour's
    state distribution, default ``process.mu``. A ``ValueError`` where the followon
    has no finite expectation (``gamma = 1`` and a target policy whose episodes never
    end)."""
    mu = process.mu if mu is None else distribution(mu, process.n_states)
    I = np.eye(process.n_states)
    return solve(I - process.gamma * process.P.T, mu,
                  "the expected emphasis m = mu + gamma P^T m")


@_quiet
def expected_emphatic_td_update(process: RewardProcess, X: npt.ArrayLike, w: npt.ArrayLike, *,
                                mu: npt.ArrayLike | None = None) -> FloatArray:
    """The expected emphatic TD(0) update per unit step size (eq. 11.23-11.24),
    ``X^T diag(m) delta_w = b_e - A_e w`` (``[d]``) with ``m`` the
    :func:`expected_emphasis` of ``mu``: the stationary expectation of
    :func:`~tabular.linear.learners.emphatic_td`'s step. ``A_e = X^T diag(m) (I -
    gamma P) X`` is positive semidefinite (positive definite for independent
    features), so the expected iteration converges for small enough steps (section
    11.8). ``mu``: the behaviour's state distribution, default ``process.mu``."""
    X = check_features(X, process.n_states)
    delta = bellman_error_vector(process, X, w)
    return _finite(X.T @ (expected_emphasis(process, mu=mu) * delta),
                   "expected_emphatic_td_update")


@_quiet
def emphatic_fixed_point(process: RewardProcess, X: npt.ArrayLike, *,
                         mu: npt.ArrayLike | None = None) -> FloatArray:
    """``w = A_e^{-1} b_e`` with ``A_e = X^T diag(m) (I - gamma P) X`` and ``b_e = X^T
    diag(m) r``: where :func:`expected_emphatic_td_update` vanishes, the limit of
    emphatic TD (section 11.8); the least-norm solution when ``A_e`` is singular. Solved
    as :func:`td_fixed_point` is, in an orthonormal basis of the features' span under
    ``m``. ``mu``: as there."""
    X = check_features(X, process.n_states)
    m = expected_emphasis(process, mu=mu)
    # m > 0 is closed under P where gamma > 0 (m >= gamma P^T m), and P drops out at 0
    GX = _finite(X - process.gamma * (process.P @ X), "emphatic_fixed_point")
    return galerkin(span_basis(X, m), GX, process.r, "the emphatic fixed point A_e w = b_e")
