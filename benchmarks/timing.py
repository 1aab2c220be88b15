"""Measurements shared by the benchmarks."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

import numba


def compile_seconds(setup: str, call: str) -> tuple[float, float]:
    """Seconds the first ``call`` takes in a fresh interpreter after ``setup`` (imports
    and setup not counted): from an empty numba cache, then from the cache that first
    run left behind."""
    timer = f"{setup}\nimport time\nt = time.perf_counter()\n{call}\nprint(time.perf_counter() - t)"
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        cold, warm = (float(subprocess.run([sys.executable, "-c", timer], env=env, check=True,
                                           capture_output=True, text=True).stdout.split()[-1])
                      for _ in range(2))
    return cold, warm


def best_seconds(call: Callable[[], object], repeats: int, warm_up: bool = False) -> float:
    """The least wall-clock seconds of ``repeats`` calls of ``call()``: the best time is
    the one least disturbed by the machine's other load. ``warm_up``: one call first,
    not timed (compilation, caches)."""
    if warm_up:
        call()
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t)
    return best


@contextmanager
def numba_threads(threads: int) -> Iterator[None]:
    """numba's parallel kernels run on ``threads`` threads inside the block, and on as
    many as before after it (also when the block raises)."""
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def steps_per_second(run) -> float:
    """Environment steps per second of ``run()`` (a learner call returning a result with
    ``episode_lengths``), timed on its second call so compilation is not counted."""
    run()
    t = time.perf_counter()
    result = run()
    return result.episode_lengths.sum() / (time.perf_counter() - t)


class Headline(NamedTuple):
    """One row of the summary table that ``python -m benchmarks`` writes at the top of
    ``docs/performance.md``: what was measured, our figure, the reference's, and the
    ratio (reference time / ours, or our rate / the reference's: above 1 is faster)."""

    what: str
    ours: str
    reference: str
    ratio: str


def spread(values, fmt: str = "{:.2f}") -> str:
    """``"median [min-max]"`` of the figures of alternated rounds."""
    values = sorted(values)
    middle = statistics.median(values)
    return f"{fmt.format(middle)} [{fmt.format(values[0])}-{fmt.format(values[-1])}]"


def alternated(measures: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """``{name: [its figure in each round]}``: every measure of ``measures`` (a name and a
    call returning one figure, e.g. a best time) taken once per round, in the same order,
    for ``rounds`` rounds, so that the two sides of a ratio share the machine's load round
    by round (:func:`ratios`)."""
    figures: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(rounds):
        for name, measure in measures.items():
            figures[name].append(measure())
    return figures


def ratios(numerator: list[float], denominator: list[float]) -> list[float]:
    """The ratio of two measures of :func:`alternated`, round by round."""
    return [n / d for n, d in zip(numerator, denominator, strict=True)]


def versus(ours: Callable[[], float], theirs: Callable[[], float],
           rounds: int) -> tuple[list[float], list[float], list[float]]:
    """Our figure, the reference's, and ours over theirs, each round by round: the two
    measures taken in ``rounds`` :func:`alternated` rounds, so that each ratio compares
    figures taken under the same load."""
    figures = alternated({"ours": ours, "theirs": theirs}, rounds)
    return figures["ours"], figures["theirs"], ratios(figures["ours"], figures["theirs"])
