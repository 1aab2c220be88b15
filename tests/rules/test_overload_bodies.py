"""Every ``@overload`` beside a Python body: the functions a kernel gets from numba's
overloads (:mod:`tabular.rules.values`' legal-action helpers, :func:`tabular._numba.optional.row`)
give, called from Python, what the kernel computes."""

import numpy as np
from numba import njit

from tabular._numba.optional import row
from tabular._numba.rng import seed_states
from tabular.rules.values import count_legal, first_legal, is_legal, random_legal_action


@njit
def _in_a_kernel(legal, n_actions, rng):
    return (is_legal(legal, 1), random_legal_action(legal, n_actions, rng), first_legal(legal),
            count_legal(legal, n_actions))


@njit
def _row_in_a_kernel(mask, i):
    found = row(mask, i)
    return found is None


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
