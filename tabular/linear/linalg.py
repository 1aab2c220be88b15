"""The linear algebra behind :mod:`tabular.linear.exact`, each answer with a stated error
bound, refused (naming the features) where float64 cannot give it.

Two problems arise. A weighted least-squares fit ``min_w ||X w - y||^2_mu`` (the VE
minimiser, the projection of the PBE) and a Galerkin system ``X^T D G X w = X^T D y``
(the TD and emphatic fixed points, ``G`` the chain's operator). Both are solved in an
orthonormal basis of the features' span, never through ``X^T D X``, whose condition
number is the square of the features' (a polynomial basis of order 20 over the
1000-state walk has scaled condition number 3e14: through the normal equations, or a
least-squares call whose default cut-off drops its smallest directions, its VE minimum
comes out 9% too high).

:func:`span_basis` builds that basis: the columns of ``B = D^{1/2} X`` on the states
``mu`` weighs, each scaled to unit norm (what matters is the span, not the columns'
sizes), go through Householder QR (LAPACK's ``geqrf``), whose columnwise backward error
is of the order of ``d`` machine epsilons (Higham 2002, sections 19.3 and 20.2: the
worst-case constant grows with ``S d``; measured errors are of the size ``d eps``).
The singular values of the scaled ``B`` say the rank first: a direction whose scaled
singular value is at most :data:`DEPENDENT` (four machine epsilons) of the largest is
within a few roundings of the features of being exactly dependent (the 50 tilings of
Figure 9.10 have 49 such directions, at 5e-16 and below, then a gap to 9e-3; the
polynomial basis of order 20 has its smallest genuine one at 3e-15), and is dropped:
the answer is then the least-norm one, from the SVD. A near-dependent direction kept
by mistake shows as huge weights, which the bound of :meth:`SpanBasis.fit` refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPS = float(np.finfo(np.float64).eps)
#: Scaled singular values at most this fraction of the largest mark exact dependencies
#: between the features: within a few roundings of the features, they are dependent
#: (the computed singular values of exactly dependent columns come out at up to 2 eps:
#: measured 5e-16 on Figure 9.10's 50 tilings).
DEPENDENT = 4.0 * EPS
#: The accuracy a least-squares answer must reach, as a fraction of ``||y||_mu`` (the
#: RMS size of what is fitted): the bound ``E`` of :meth:`SpanBasis.fit` on how far
#: ``sqrt(VE)`` of the returned weights may lie above the least may not exceed it.
ACCURACY = 1e-4
#: Relative residual above which a square system's answer is refused (float64 cannot be
#: trusted there: the system is singular, or too close to it, in a way no ``x`` solves).
SOLVE_TOLERANCE = 1e-8


class IllConditionedError(ValueError):
    """The features are too ill-conditioned for float64 to give an exact quantity at its
    stated accuracy (a ``ValueError``)."""


@dataclass(frozen=True)
class SpanBasis:
    """An orthonormal basis ``Q [n, k]`` of the span of ``B = D^{1/2} X`` over the states
    ``on`` (``n`` of them), with what turns coordinates in it back into weights.

    ``on``: bool ``[S]``; ``root``: ``sqrt(mu)`` on them; ``Q``; ``scale``: ``[d]``, each
    column's norm in ``B`` (0 for a feature no weighted state has); ``back``: ``[d', k]``,
    the scaled weights of each basis vector (``B_s back = Q`` on the kept columns);
    ``condition``: the scaled condition number on the kept directions; ``dropped``: the
    largest dropped scaled singular value over the largest (0 when none is)."""

    on: np.ndarray
    root: np.ndarray
    Q: np.ndarray
    scale: np.ndarray
    back: np.ndarray
    condition: float
    dropped: float

    def weights(self, theta: np.ndarray) -> np.ndarray:
        """The least-norm ``w [d]`` with ``D^{1/2} X w = Q theta`` on the weighted states."""
        w = np.zeros(self.scale.shape[0])
        used = self.scale > 0.0
        w[used] = (self.back @ theta) / self.scale[used]
        return w

    def bound(self, w: np.ndarray, size: float) -> float:
        """``E``: to first order in the rounding, ``sqrt(VE(w))`` of weights ``w`` found
        in this basis lies at most ``E`` above the least, for a target of size ``size``
        (``||y||_mu``). Householder QR returns the exact minimiser of features and target
        each perturbed by ``rho = d eps`` relative (columnwise), so ``||B w - c||`` exceeds
        the least by at most ``rho (sum_j ||B_j|| |w_j| + ||c||)`` twice over (once for
        the returned, once for the exact minimiser, taken to be as large); a dropped
        dependent direction perturbs ``B`` by its singular value, ``dropped sigma_1``."""
        d = max(self.scale.shape[0], 1)
        scaled = float(np.abs(self.scale * w).sum())
        rho = d * EPS
        sigma = float(np.sqrt(self.scale @ self.scale))  # ||B||_F >= sigma_1
        return 2.0 * (rho * (scaled + size) + self.dropped * sigma * float(np.linalg.norm(
            self.scale * w)))

    def fit(self, X: np.ndarray, y: np.ndarray, who: str) -> np.ndarray:
        """The least-norm ``w`` minimising ``||X w - y||^2_mu`` (``X``: the features the
        basis was built from), or an :class:`IllConditionedError` naming ``who`` when
        its bound :meth:`bound` exceeds :data:`ACCURACY` of ``||y||_mu``.

        One step of fixed-precision iterative refinement (Higham 2002, section 20.5)
        follows the solve: the residual's component in the span, which the first solve's
        rounding left, is fitted and added (measured at order 20 over the 1000-state
        walk: VE 1.0e-6 above the exact least before, 2.1e-7 after; more steps do not
        lower it, the weights' own rounding sets that floor)."""
        c = self.root * y[self.on]
        B = self.root[:, None] * X[self.on]
        w = self.weights(self.Q.T @ c)
        w = w + self.weights(self.Q.T @ (c - B @ w))
        size = float(np.linalg.norm(c))
        error = self.bound(w, size)
        if not np.isfinite(w).all() or error > ACCURACY * size:
            raise IllConditionedError(
                f"{who}: the features X are too ill-conditioned for float64 (their columns, "
                f"scaled to unit norm under mu, have condition number {self.condition:.1e}): "
                f"the error bound of the fit, {error:.1e}, exceeds {ACCURACY:g} of the "
                f"values' size {size:.3g}; use a better-conditioned basis of the same span "
                "(fourier, or a lower order)")
        return w

    def project(self, y: np.ndarray) -> float:
        """``||Pi y||^2_mu``, ``Pi`` the ``mu``-weighted projection onto the span (eq.
        11.14): ``||Q^T D^{1/2} y||^2``, with no weights (and none of their rounding)."""
        return float(np.sum((self.Q.T @ (self.root * y[self.on])) ** 2))


def span_basis(X: np.ndarray, weights: np.ndarray) -> SpanBasis:
    """The :class:`SpanBasis` of the features ``X [S, d]`` under the state weights
    ``weights [S]`` (non-negative; the states of weight 0 are left out)."""
    on = weights > 0.0
    root = np.sqrt(weights[on])
    B = root[:, None] * X[on]
    scale = np.sqrt(np.einsum("ij,ij->j", B, B))
    if not np.isfinite(scale).all():
        j = int(np.argmax(~np.isfinite(scale)))
        raise ValueError(f"the features X are too large: column {j}'s weighted norm "
                         "overflows float64")
    used = scale > 0.0
    n, k = B.shape[0], int(used.sum())
    if k == 0:
        return SpanBasis(on, root, np.zeros((n, 0)), scale, np.zeros((0, 0)), 1.0, 0.0)
    Bs = B[:, used] / scale[used]
    U, sigma, Vt = np.linalg.svd(Bs, full_matrices=False)
    kept = sigma > DEPENDENT * sigma[0]
    m = int(kept.sum())
    dropped = float(sigma[~kept].max(initial=0.0) / sigma[0])
    condition = float(sigma[0] / sigma[m - 1])
    if m == k:
        # full column rank: Householder QR and back-substitution in R, whose columnwise
        # backward error is smaller than the SVD's (measured: 1.0e-6 against 1.9e-6 of the
        # VE minimum at order 20)
        Q, R = np.linalg.qr(Bs)
        return SpanBasis(on, root, Q, scale, np.linalg.solve(R, np.eye(k)), condition, 0.0)
    return SpanBasis(on, root, U[:, :m], scale, Vt[:m].T / sigma[:m], condition, dropped)


def galerkin(basis: SpanBasis, GX: np.ndarray, y: np.ndarray, what: str) -> np.ndarray:
    """The least-norm ``w`` solving ``X^T D G X w = X^T D y`` over the basis's states, from
    ``GX [S, d]`` (the operator ``G`` applied to the features, on those states' rows).

    In the basis ``X w = D^{-1/2} Q theta``, the system is ``Q^T D^{1/2} G D^{-1/2} Q
    theta = Q^T D^{1/2} y``, a ``k x k`` system with the conditioning of the projected
    operator (the features' own enters once, on the way back to ``w``); its answer is
    refused where the relative residual exceeds :data:`SOLVE_TOLERANCE`."""
    on = basis.on
    columns = np.zeros(basis.scale.shape[0], dtype=bool)
    columns[basis.scale > 0.0] = True
    # G D^{-1/2} Q = G X back-scaled: X's kept columns map to Q by back / scale
    GQ = GX[on][:, columns] @ (basis.back / basis.scale[columns][:, None])
    K = basis.Q.T @ (basis.root[:, None] * GQ)
    g = basis.Q.T @ (basis.root * y[on])
    return basis.weights(solve(K, g, what))


def solve(A: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
    """``A x = b`` by least squares (the least-norm ``x`` when ``A`` is singular), refused
    when no ``x`` solves it to :data:`SOLVE_TOLERANCE` relative residual (the answer is
    then the exact one of a system within that relative distance of ``A``, ``b``), or
    when ``A`` or ``b`` overflowed float64."""
    if not (np.isfinite(A).all() and np.isfinite(b).all()):
        raise ValueError(f"{what}: the system overflows float64 (the features X or the "
                         "rewards are too large)")
    try:
        x = np.linalg.lstsq(A, b, rcond=None)[0]
    except np.linalg.LinAlgError as error:
        raise ValueError(f"{what} cannot be solved in float64 ({error})") from None
    scale = max(np.abs(b).max(initial=0.0),
                np.abs(A).max(initial=0.0) * np.abs(x).max(initial=0.0))
    if not np.isfinite(x).all() or (
            np.abs(A @ x - b).max(initial=0.0) > SOLVE_TOLERANCE * max(scale, 1e-300)):
        raise ValueError(f"{what} has no solution float64 can trust (the system is singular "
                         "or too close to it)")
    return x
