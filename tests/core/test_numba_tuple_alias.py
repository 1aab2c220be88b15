"""The writes numba's dead-code removal keeps, and the one it drops, in a runs driver.

numba's dead-code removal (``numba.core.ir_utils.remove_dead``, run by the simplifying
pipeline of :func:`tabular._numba.runs.runs_kernel`) deletes ``a[i] = v`` when ``a`` is
neither live afterwards nor an alias of something live. Its alias analysis links
``a = rec.field`` to ``rec`` only when ``rec`` is an argument of the compiled function,
and a record built in the kernel is linked to none of its arrays (numba issues #7135,
#5872, #10338; the fix, PR #7167, was never merged). So an inlined helper writing
through a field, by name, of a record the kernel built loses its writes, silently: the
contributor's rule of ``docs/contributing.md`` ("How a kernel is built", item 2) and
``docs/decisions/2026-12-06-numba-tuple-alias.md``.

Each driver below builds or takes a two-array record, then four times reads element 1
of both arrays and writes 7 into it: the sum read is ``0 + 14 + 14 + 14 = 42`` when
every write lands, 0 when every write is dropped. The first tests pin the patterns the
library relies on (they must keep passing after a numba upgrade); the last pins the bug
(when it fails, numba has fixed it and the rule may be relaxed).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from numba import njit

from tabular._numba.runs import runs_kernel

#: Every write landed: the reads before the four writes, 0 + 14 + 14 + 14.
ALL_WRITES = 42.0


class Pair(NamedTuple):
    a: np.ndarray
    b: np.ndarray


@njit(inline="always")
def _new_pair(given):
    """A record built in the kernel (``given`` unused)."""
    return Pair(np.zeros(3), np.zeros(3))


@njit(inline="always")
def _given_pair(given):
    """The record the driver was passed: its argument."""
    return given


@njit(inline="always")
def _write_by_name(pair, i, v):
    """The losing pattern when ``pair`` was built in the kernel (``forget`` once did
    this: ``docs/decisions/2026-12-06-explore-speed-2.md``)."""
    a, b = pair.a, pair.b
    a[i] = v
    b[i] = v


@njit
def _write_by_name_called(pair, i, v):
    """The same writes compiled apart: ``pair`` is an argument here, so they alias it
    (``bisected_argmax.bisected_greedy``, the PPO work)."""
    a, b = pair.a, pair.b
    a[i] = v
    b[i] = v


@njit(inline="always")
def _write_by_index(pair, i, v):
    """``pair[0]`` (a ``static_getitem``) always aliases ``pair``."""
    a, b = pair[0], pair[1]
    a[i] = v
    b[i] = v


@njit(inline="always")
def _fill_by_name(pair, i, v):
    """Writes in a loop that reads the array again (``open_brackets``): the array stays
    live over the loop's back edge, so the writes are kept without any alias."""
    a, b = pair.a, pair.b
    for j in range(a.shape[0]):
        if j == i or a[j] != 0.0:
            a[j] = v
            b[j] = v


def _driver(pair_of, write, *, simplifying=True):
    """A runs driver over the record ``pair_of(given)`` (``_new_pair`` or
    ``_given_pair``), four steps each reading element 1 then ``write`` -ing 7 there."""
    def driver(given, out):
        for run in range(out.shape[0]):
            pair, total = pair_of(given), 0.0
            for _ in range(4):
                total += pair.a[1] + pair.b[1]
                write(pair, 1, 7.0)
            out[run] = total
    return runs_kernel(driver, simplifying=simplifying, cache=False)


def _sum_read(driver) -> float:
    """The sum the driver's one run read, from a fresh record."""
    out = np.zeros(1)
    driver(Pair(np.zeros(3), np.zeros(3)), out)
    return float(out[0])


def test_writes_through_a_driver_argument_are_kept():
    """The output records: every array a kernel writes is an argument's field."""
    assert _sum_read(_driver(_given_pair, _write_by_name)) == ALL_WRITES


@pytest.mark.parametrize(("write", "simplifying"), [
    (_write_by_name_called, True), (_write_by_index, True), (_fill_by_name, True),
    (_write_by_name, False)], ids=["called", "by-index", "filled-in-a-loop", "plain-pipeline"])
def test_writes_into_a_kernel_built_record_the_library_makes_are_kept(write, simplifying):
    """A record built in the kernel, written by a function compiled apart, by index, in
    a loop that keeps the array live, or on numba's plain pipeline."""
    assert _sum_read(_driver(_new_pair, write, simplifying=simplifying)) == ALL_WRITES


def test_numba_still_has_bug_7135_keep_the_rule():
    """Inlined writes by field name into a record the kernel built are dropped. If this
    fails, numba fixed #7135: relax the rule of docs/contributing.md (item 2 of "How a
    kernel is built") and this test, after checking numba's release notes."""
    assert _sum_read(_driver(_new_pair, _write_by_name)) == 0.0, (
        "numba no longer drops these writes (#7135 fixed?): revisit the rule")
