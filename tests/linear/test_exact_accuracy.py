"""The exact quantities of tabular.linear at their stated accuracy, against answers
computed independently: in exact rational arithmetic over the same float64 numbers."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tabular.envs import RandomWalk
from tabular.linear import (
    fourier,
    polynomial,
    reward_process,
    state_coordinates,
    value_error,
    ve_minimiser,
)
from tabular.linear.linalg import IllConditionedError


def scaled_ints(a: np.ndarray) -> tuple[np.ndarray, int]:
    """``a`` (float64) as Python ints ``n`` and one exponent ``E`` with ``a = n / 2**E``
    exactly (every float64 is a mantissa of 53 bits times a power of 2)."""
    mantissa, exponent = np.frexp(a)
    m = (mantissa * 2.0**53).astype(np.int64)
    shift = 53 - exponent.astype(np.int64)
    E = int(shift.max())
    ints = np.array([int(k) << int(E - s) for k, s in zip(m.ravel(), shift.ravel(),
                                                          strict=True)], dtype=object)
    return ints.reshape(a.shape), E


def exact_solve(G: list[list[int]], g: list[int]) -> list[Fraction]:
    """``G x = g`` for an integer matrix, exactly: Bareiss's fraction-free elimination,
    then back-substitution in rationals."""
    n = len(g)
    A = [row[:] + [gi] for row, gi in zip(G, g, strict=True)]
    previous = 1
    for k in range(n - 1):
        for i in range(k + 1, n):
            for j in range(k + 1, n + 1):
                A[i][j] = (A[i][j] * A[k][k] - A[i][k] * A[k][j]) // previous
            A[i][k] = 0
        previous = A[k][k]
    x = [Fraction(0)] * n
    for i in reversed(range(n)):
        x[i] = (Fraction(A[i][n]) - sum(A[i][j] * x[j] for j in range(i + 1, n))) / A[i][i]
    return x


class ExactVE:
    """VE over the states ``mu`` weighs, in exact rationals of the float64 ``X``, ``v``
    and ``mu``: of given float64 weights, and its least over all real weights."""

    def __init__(self, X: np.ndarray, v: np.ndarray, mu: np.ndarray):
        on = mu > 0.0
        self.X, self.EX = scaled_ints(X[on])
        self.v, self.Ev = scaled_ints(v[on])
        self.mu, self.Emu = scaled_ints(mu[on])

    def of(self, w: np.ndarray) -> Fraction:
        W, Ew = scaled_ints(w)
        E = self.EX + Ew
        e = self.X.dot(W) * (1 << max(self.Ev - E, 0)) - self.v * (1 << max(E - self.Ev, 0))
        return Fraction(int((self.mu * e * e).sum()), 1 << (self.Emu + 2 * max(E, self.Ev)))

    def least(self) -> Fraction:
        """``v D v - g^T G^{-1} g`` with ``G = X^T D X`` and ``g = X^T D v``, exactly."""
        weighted = self.X.T * self.mu  # [d, S]: 2**-(EX + Emu)
        G = weighted.dot(self.X)  # 2**-(2 EX + Emu)
        g = weighted.dot(self.v)  # 2**-(EX + Emu + Ev)
        x = exact_solve([list(row) for row in G], [int(k) * (1 << self.EX) for k in g])
        # x in units 2**-Ev: G (2**-2EX-Emu) x = g (2**-EX-Emu-Ev) => x scaled as written
        vv = Fraction(int((self.mu * self.v * self.v).sum()), 1 << (self.Emu + 2 * self.Ev))
        gx = sum(Fraction(int(gi)) * xi for gi, xi in zip(g, x, strict=True))
        return vv - gx / (1 << (self.EX + self.Emu + self.Ev + self.Ev - self.EX + self.EX))


@pytest.fixture(scope="module")
def walk():
    mdp = RandomWalk(1000, jump=100, left_reward=-1.0).model()
    process = reward_process(mdp, np.zeros(mdp.n_states, dtype=np.int64), gamma=1.0)
    return mdp, process


def test_exact_ve_helper_on_a_tiny_fit():
    """The rational helper itself, on a fit done by hand: a line through (0, 0), (1, 1),
    (2, 3) weighted (1/4, 1/2, 1/4). ``G = [[1, 1], [1, 3/2]]``, ``g = [5/4, 2]``, so
    ``w = (-1/4, 3/2)``, residuals ``(-1/4, 1/4, -1/4)`` and VE = 1/16."""
    X = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    exact = ExactVE(X, np.array([0.0, 1.0, 3.0]), np.array([0.25, 0.5, 0.25]))
    assert exact.least() == Fraction(1, 16)
    assert exact.of(np.array([-0.25, 1.5])) == Fraction(1, 16)
    assert exact.of(np.array([0.0, 1.0])) == Fraction(1, 4)  # residuals (0, 0, -1)


def test_ve_minimiser_at_order_20_is_within_1e_6_of_the_exact_minimum(walk):
    """Issue 45: the polynomial basis of order 20 over the 1000-state walk (scaled condition
    number 3e14). The least VE over the span of the same float64 features, solved in
    exact rational arithmetic (Bareiss elimination of the integer normal equations:
    independent of any floating-point solver), and VE of ve_minimiser's weights, also
    exact: within 1e-6 relative (measured 2.1e-7; numpy's lstsq with its default cut-off
    was 9% above)."""
    mdp, process = walk
    X = polynomial(state_coordinates(mdp), 20)
    exact = ExactVE(X, process.v, process.mu)
    least = exact.least()
    ours = exact.of(ve_minimiser(process, X))
    assert least > 0
    assert float((ours - least) / least) < 1e-6
    assert float((ours - least) / least) >= -1e-15  # nothing beats the exact least


def test_ve_minimiser_of_a_well_conditioned_basis_is_near_exact(walk):
    mdp, process = walk
    X = fourier(state_coordinates(mdp), 10)
    exact = ExactVE(X, process.v, process.mu)
    least = exact.least()
    assert abs(float((exact.of(ve_minimiser(process, X)) - least) / least)) < 1e-12


def test_too_ill_conditioned_features_are_refused_naming_them(walk):
    """Order 40's monomials are within rounding of dependence in many directions: the
    bound of the fit exceeds its stated accuracy and the answer is refused."""
    mdp, process = walk
    X = polynomial(state_coordinates(mdp), 40)
    with pytest.raises(IllConditionedError, match="features X are too ill-conditioned"):
        ve_minimiser(process, X)


def test_ve_minimiser_at_order_20_against_a_legendre_basis_of_the_same_polynomials(walk):
    """The same space of polynomials of degree <= 20, spanned by Legendre polynomials of
    ``2 s - 1`` (condition number 15 under mu where the monomials' is 3e14) and solved by
    numpy's QR: an independent route to the least VE over the polynomials themselves.
    The float64 monomial features differ from the exact monomials by their rounding
    (``x^k`` carries up to ``k + 1`` roundings, and evaluating ``X w`` ``d`` more), so
    ``sqrt(VE)`` of our weights may differ from the Legendre least by at most
    ``||sum_k (k + 1 + d) u |x_k w_k| ||_mu`` (the triangle inequality over the per-state
    perturbations of ``X w``). Measured: 4e-9 against a bound of 5e-6 (VE 3.5e-5 below
    the Legendre least: the rounded monomials span a slightly different space)."""
    mdp, process = walk
    c = state_coordinates(mdp)[:, 0]
    X = polynomial(c[:, None], 20)
    w = ve_minimiser(process, X)
    on = process.mu > 0.0
    root = np.sqrt(process.mu[on])
    Q, _ = np.linalg.qr(root[:, None] * np.polynomial.legendre.legvander(2 * c - 1, 20)[on])
    y = root * process.v[on]
    residual = y - Q @ (Q.T @ y)
    legendre = np.sqrt(residual @ residual)
    ours = np.sqrt(value_error(process, X, w))
    u = np.finfo(float).eps / 2
    d = X.shape[1]
    per_state = (np.abs(X * w) * (np.arange(d) + 1 + d) * u).sum(axis=1)
    bound = np.sqrt(process.mu @ per_state**2) + 1e-14  # + the Legendre solve's rounding
    assert abs(ours - legendre) <= bound
