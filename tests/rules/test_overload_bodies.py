"""Every ``@overload`` beside a Python body: the functions a kernel gets from numba's
overloads (:mod:`tabular.rules.values`' legal-action helpers, :func:`tabular._numba.optional.row`,
the estimates of :mod:`tabular.rules.estimates`) give, called from Python, what the kernel
computes."""

import numpy as np
from numba import njit

from tabular import schedules
from tabular._numba.optional import row
from tabular._numba.rng import seed_states
from tabular.rules.estimates import move_toward, state_value
from tabular.rules.values import count_legal, first_legal, is_legal, random_legal_action


@njit
def _in_a_kernel(legal, n_actions, rng):
    return (is_legal(legal, 1), random_legal_action(legal, n_actions, rng), first_legal(legal),
            count_legal(legal, n_actions))


@njit
def _row_in_a_kernel(mask, i):
    found = row(mask, i)
    return found is None


@njit
def _estimate_in_a_kernel(estimate, features, alpha, visits, s, target):
    move_toward(estimate, features, s, target, alpha, visits)
    return state_value(estimate, features, s)


def _estimate_in_python(estimate, features, alpha, visits, s, target):
    move_toward(estimate, features, s, target, alpha, visits)
    return state_value(estimate, features, s)


def _in_python(legal, n_actions, rng):
    return (is_legal(legal, 1), random_legal_action(legal, n_actions, rng), first_legal(legal),
            count_legal(legal, n_actions))


def test_the_legal_action_helpers_give_in_python_what_a_kernel_gives():
    for legal in (None, np.array([False, True, False, True]), np.array([False, False, True, True])):
        for seed in range(5):
            rng_python, rng_kernel = seed_states(seed)[0], seed_states(seed)[0]
            assert _in_python(legal, 4, rng_python) == _in_a_kernel(legal, 4, rng_kernel)
            assert np.array_equal(rng_python, rng_kernel)  # the same draws, the same stream


def test_row_gives_a_row_or_none_in_python_as_in_a_kernel():
    mask = np.array([[True, False], [False, True]])
    assert np.array_equal(row(mask, 1), mask[1])
    assert row(None, 1) is None
    assert _row_in_a_kernel(None, 1) and not _row_in_a_kernel(mask, 1)


def test_the_estimates_give_in_python_what_a_kernel_gives():
    X = np.array([[1.0, 0.0, 0.5], [0.0, 2.0, 0.0]])
    inverse = tuple(schedules.inverse().params)  # 1 / n, as read_schedule reads it
    for features, alpha, start in ((None, inverse, [0.5, -1.0]), (None, 0.25, [0.5, -1.0]),
                                   (X, 0.25, [0.5, -1.0, 2.0])):
        found = []
        for step in (_estimate_in_python, _estimate_in_a_kernel):
            estimate, visits = np.array(start), np.array([2, 0])
            found.append((step(estimate, features, alpha, visits, 0, 3.0), estimate, visits))
        (python, estimate_py, visits_py), (kernel, estimate_nb, visits_nb) = found
        assert python == kernel
        assert np.array_equal(estimate_py, estimate_nb) and np.array_equal(visits_py, visits_nb)
    # the table's third visit of state 0 steps by 1/3; the linear step moves x(0) . w by
    # 0.25 (3 - x(0) . w) ||x(0)||^2 (eq. 9.7)
    assert _estimate_in_python(np.array([0.0, 0.0]), None, inverse, np.array([2, 0]), 0,
                               3.0) == 1.0
    w = np.array([0.5, -1.0, 2.0])
    assert _estimate_in_python(w, X, 0.25, None, 0, 3.0) == 1.5 + 0.25 * 1.5 * 1.25
