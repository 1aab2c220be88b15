"""Blocked Gauss-Seidel value iteration (``method="blocked"``): the fixed point of
value iteration, the same bits on any number of threads, fewer sweeps than Jacobi."""

from __future__ import annotations

import numba
import numpy as np
from hypothesis import given

from tabular import TabularMDP, value_iteration
from tabular.testing import gammas, mdps, property_settings, random_mdp


@property_settings(30)
@given(mdps(traps=True), gammas())
def test_blocked_sweeps_reach_value_iterations_fixed_point(mdp, gamma):
    tol = 1e-8
    blocked, sync = (value_iteration(mdp, gamma, tol=tol, method=m) for m in ("blocked", "sync"))
    assert blocked.method == "blocked" and blocked.converged
    np.testing.assert_array_equal(np.isneginf(blocked.V), np.isneginf(sync.V))
    finite = np.isfinite(sync.V)
    np.testing.assert_allclose(blocked.V[finite], sync.V[finite], rtol=0, atol=2 * tol)


def test_blocked_sweeps_give_the_same_bits_on_one_and_two_threads():
    mdp = random_mdp(np.random.default_rng(3), 3000, 4, 3, done_rate=0.05, trap_rate=0.01)
    before = numba.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            numba.set_num_threads(threads)
            results.append(value_iteration(mdp, 0.95, method="blocked"))
    finally:
        numba.set_num_threads(before)
    one, two = results
    np.testing.assert_array_equal(one.V.view(np.uint64), two.V.view(np.uint64))
    np.testing.assert_array_equal(one.history.view(np.uint64), two.history.view(np.uint64))


def test_blocked_sweeps_carry_values_along_a_block_in_one_sweep():
    # a chain s -> s - 1 paying -1, ending from state 0: in state order, Gauss-Seidel
    # carries the end's value through a whole block per sweep, Jacobi one state
    S = 6400
    next_state = np.maximum(np.arange(S) - 1, 0)[:, None, None]
    done = (np.arange(S) == 0)[:, None, None]
    chain = TabularMDP(next_state, np.ones((S, 1, 1)), -np.ones((S, 1, 1)), done,
                       np.full(S, 1 / S))
    blocked, sync, inplace = (value_iteration(chain, 0.99, tol=1e-6, method=m)
                              for m in ("blocked", "sync", "inplace"))
    assert inplace.iterations <= blocked.iterations < sync.iterations // 10
    np.testing.assert_allclose(blocked.V, sync.V, rtol=0, atol=2e-6)
