"""The runs driver: how a learner's kernel runs ``runs`` independent runs.

A learner writes one function, the run: ``run_one(model, params, rng, out, run)``
computes run ``run`` from its own stream ``rng`` and fills row ``run`` of each array of
the output record ``out``. The loop over the runs is written once, here, and made into
a learner's kernel by :func:`runs_driver`: a sequential loop that :func:`over_runs`
splits over threads, without numba's parallel loop, whose second compile of the loop
body would cost every first call seconds (docs/decisions/2026-12-02-runs-driver.md)::

    @njit(cache=True, inline="always")
    def _q_learning_run(model, params, rng, out, run):
        ...  # the episode loop of one run, composed of tabular.rules

    _q_learning = runs_driver(_q_learning_run)
    over_runs(_q_learning, mdp.arrays, params, seed_states(seed, n), out)

Run ``i`` draws only from ``rng_states[i]`` and writes only row ``i`` of the outputs,
so the numbers depend neither on the thread count nor on ``runs``: run ``i`` of
``runs=n`` equals run ``i`` of ``runs=m``. It advances a private copy of its stream
state, held in the kernel's stack frame (``local_stream`` of :mod:`tabular._numba.frame`):
neighbouring rows share a cache line, which threads drawing on every step would contend
for (false sharing), and a copy no other array can alias stays in registers.

The same binding makes :func:`ranges_driver`, the parallel loop over contiguous index
ranges that the synchronous DP sweeps run on more than one thread.
"""

from __future__ import annotations

import os
import threading
import types
import warnings
from concurrent.futures import ThreadPoolExecutor, wait
from typing import NamedTuple

import numba
import numpy as np
from numba import njit, prange
from numba.core import event
from numba.core.cpu_options import ParallelOptions
from numba.core.errors import NumbaPerformanceWarning

from tabular._numba.frame import local_stream
from tabular._numba.notice import WORKER_PREFIX

#: numba's parallel pipeline with every parallel transformation off: the pipeline that
#: compiles the sequential runs drivers (``docs/decisions/2026-12-02-runs-driver.md``
#: says why). A
#: ``ParallelOptions``, not a dict: numba pops the keys of a ``parallel=`` dict as it
#: compiles, so a dict would be empty, the whole parallel pipeline, for every later
#: compile of the kernel and for every kernel sharing it.
SIMPLIFYING_PIPELINE = ParallelOptions(dict(
    comprehension=False, reduction=False, inplace_binop=False, setitem=False, numpy=False,
    stencil=False, fusion=False, prange=False))


def _each_run(model, params, rng_states, out):
    for run in range(rng_states.shape[0]):
        run_one(model, params, local_stream(rng_states[run]), out, run)  # noqa: F821 (bound below)


def _each_run_of_variant(model, params, rng_states, out):
    for run in range(rng_states.shape[0]):
        run_one(variant, model, params, local_stream(rng_states[run]), out, run)  # noqa: F821


def _each_run_with_rollout(model, params, rollout, rng_states, out):
    for run in range(rng_states.shape[0]):
        rng = local_stream(rng_states[run])
        run_one(model, params, rollout, rng, out, run)  # noqa: F821
        # where the stream stands, for a later call to continue it; element by element,
        # since a row assignment compiles numba's message for mismatched shapes
        for word in range(rng.shape[0]):
            rng_states[run, word] = rng[word]


def _each_range_in_parallel(model, args, n, chunks):
    residual = 0.0
    for chunk in prange(chunks):
        residual = max(residual, run_one(model, *args, chunk * n // chunks,  # noqa: F821
                                         (chunk + 1) * n // chunks))
    return residual


def runs_driver(run_one, variant: int | None = None, *, rollout: bool = False,
                simplifying: bool = True, cache: bool = True):
    """The kernel ``driver(model, params, rng_states, out)`` that computes every run of
    ``rng_states`` by ``run_one(model, params, local_stream(rng_states[run]), out, run)``, one
    after another, compiled by :data:`SIMPLIFYING_PIPELINE`, cached, and releasing the
    GIL so that :func:`over_runs` can run chunks of runs on threads. ``run_one`` is
    typically ``inline="always"``: it is then compiled into the loop.

    ``variant`` (an int): call ``run_one(variant, model, params, rng, out, run)``
    instead, ``variant`` a compile-time constant of this driver, so that the branches
    of ``run_one`` for the other variants (the other methods of a family) compile away.

    ``rollout=True``: ``run_one(model, params, rollout, rng, out, run)`` (the
    policy-gradient and RLHF learners, whose rollout tables are built apart from their
    parameters) and the driver ``driver(model, params, rollout, rng_states, out)``,
    which also writes each run's advanced stream back into ``rng_states``: a learner
    run in chunks of iterations (:mod:`tabular.pg.telemetry`) continues the same stream.

    ``simplifying=False``: compile by numba's plain pipeline instead, for a run function
    the simplifying pipeline breaks (the planning learners': their machine code crashed;
    GRPO's: its array analysis fails to compile it; docs/decisions/2026-12-02-runs-driver.md).

    ``cache=False``: keep the driver in memory only, for a ``run_one`` with no source
    file for numba's cache to sit beside (a rule typed at a prompt,
    :mod:`tabular.learn.custom`).
    """
    options: dict = dict(nogil=True, parallel=SIMPLIFYING_PIPELINE) if simplifying else dict(
        nogil=True)
    options["cache"] = cache
    if variant is not None:
        return _bind(_each_run_of_variant, run_one, f"{int(variant)}_runs",
                     {"variant": int(variant)}, **options)
    if rollout:
        return _bind(_each_run_with_rollout, run_one, "runs", **options)
    return _bind(_each_run, run_one, "runs", **options)


def ranges_driver(over_range):
    """The kernel ``driver(model, args, n, chunks)``: ``over_range(model, *args, lo, hi)``,
    a sequential kernel of the indices ``lo <= i < hi`` that returns a residual, called on
    ``[0, n)`` split into ``chunks`` contiguous ranges (one per thread) under numba's
    parallel loop; returns the largest residual.

    A synchronous DP sweep (:mod:`tabular.solve.sweeps`) computes each state from the
    previous values alone, so the split does not change its numbers; compiled only where
    more than one thread runs, the parallel loop costs no single-threaded first call its
    compile time. The caller reads the thread count (read in the kernel, it would keep
    numba from caching it), and the model comes apart from the tuple of the other
    arguments: a parallel loop takes a record, but not a tuple that holds one."""
    return _bind(_each_range_in_parallel, over_range, "ranges",
                 doc=f"``{over_range.py_func.__name__}`` over numba's parallel loop.",
                 parallel=True)


#: ``(source file, name)`` of every driver made, so that no two share a cache entry.
_BOUND: set[tuple[str, str]] = set()


def _bind(loop, run_one, suffix: str, constants=None, doc=None, **options):
    """``loop`` with its global ``run_one`` bound to ``run_one`` (and the ``constants``),
    jitted with ``options`` and cached beside ``run_one``: the function gets
    ``run_one``'s source file and a name of its own, so numba keeps it in that file's
    cache under that name and discards it when that file changes, as it does a driver
    written there. (numba's cache key holds the code's bytes, not its globals: two
    drivers must never share a name.)"""
    py_run = run_one.py_func
    name = f"{py_run.__name__}_{suffix}"
    where = (py_run.__code__.co_filename, name)
    if where in _BOUND:
        raise ValueError(f"a runs driver named {name} exists already in {where[0]}")
    _BOUND.add(where)
    code = loop.__code__.replace(co_filename=py_run.__code__.co_filename, co_name=name,
                                 co_qualname=name,
                                 co_firstlineno=py_run.__code__.co_firstlineno)
    driver = types.FunctionType(code, {"run_one": run_one, "range": range, "prange": prange,
                                       "local_stream": local_stream, **(constants or {})},
                                name)
    driver.__module__, driver.__qualname__ = py_run.__module__, name
    driver.__doc__ = doc or f"Every run of :func:`{py_run.__name__}` ({suffix.replace('_', ' ')})."
    options.setdefault("cache", True)
    return njit(**options)(driver)


class _QuietSimplifyingPipeline(event.Listener):
    """Ignores numba's report that a kernel of :data:`SIMPLIFYING_PIPELINE` made no
    parallel loop (it is not meant to), for the length of that kernel's compile: a
    ``warnings.catch_warnings`` around every kernel call instead cost each call as much
    as the rest of ``over_runs``."""

    def __init__(self) -> None:
        self._catcher: warnings.catch_warnings | None = None
        self._outermost = None  # the dispatcher whose compile set the filter

    def on_start(self, ev) -> None:
        # numba holds its compiler lock here; a nested compile (a driver compiling its
        # run function) finds the filter in place
        if self._catcher is None and _simplifying(ev):
            self._catcher = warnings.catch_warnings()
            self._catcher.__enter__()
            warnings.filterwarnings("ignore", "(?s).*no transformation for parallel",
                                    NumbaPerformanceWarning)
            self._outermost = ev.data["dispatcher"]

    def on_end(self, ev) -> None:
        if self._catcher is not None and ev.data["dispatcher"] is self._outermost:
            self._catcher.__exit__(None, None, None)
            self._catcher = None


def _simplifying(ev) -> bool:
    return ev.data["dispatcher"].targetoptions.get("parallel") is SIMPLIFYING_PIPELINE


event.register("numba:compile", _QuietSimplifyingPipeline())


def over_runs(driver, *args) -> None:
    """``driver(*args)``, its runs split into one contiguous chunk per thread of numba's
    thread count (:func:`numba.get_num_threads`). The last two arguments are
    ``rng_states`` and the output record, whose leading run axes are split; a run
    draws from its own stream and writes only its own rows, so the numbers do not
    depend on the split."""
    *shared, rng_states, out = args
    n_runs = rng_states.shape[0]
    n_threads = min(numba.get_num_threads(), n_runs)
    if n_threads == 1:  # no pool: handing runs over costs more than a short call's runs
        driver(*args)
        return
    bounds = np.linspace(0, n_runs, n_threads + 1).astype(np.int64)
    chunks = [(*shared, rng_states[a:b], runs_slice(out, n_runs, a, b))
              for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    pool, caller = _workers(n_threads - 1), threading.get_ident()
    others = [pool.submit(_on_behalf_of, caller, driver, chunk) for chunk in chunks[1:]]
    try:
        driver(*chunks[0])  # this thread runs the first chunk
    finally:
        wait(others)
    for other in others:
        other.result()


#: The standing pool of :func:`over_runs`' workers, and how many it has: starting
#: threads on every call cost a short call (1 ms) a tenth of its time.
_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_POOL_LOCK = threading.Lock()


def _workers(n: int) -> ThreadPoolExecutor:
    """The standing pool, grown to at least ``n`` threads."""
    global _POOL, _POOL_SIZE
    with _POOL_LOCK:
        if _POOL is None or _POOL_SIZE < n:
            if _POOL is not None:
                _POOL.shutdown(wait=False)
            _POOL, _POOL_SIZE = ThreadPoolExecutor(n), n
        return _POOL


def _forget_pool() -> None:
    """In a forked child the pool's threads are gone: start a new one when needed."""
    global _POOL, _POOL_SIZE, _POOL_LOCK
    _POOL, _POOL_SIZE, _POOL_LOCK = None, 0, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def _on_behalf_of(caller: int, driver, chunk) -> None:
    """``driver(*chunk)`` on a worker named for the ``caller`` thread: a kernel that
    compiles there leads the first-call notice to the caller's entry point."""
    threading.current_thread().name = f"{WORKER_PREFIX}{caller}"
    driver(*chunk)


def runs_slice(out: NamedTuple, n_runs: int, first: int, stop: int) -> NamedTuple:
    """The output record of runs ``first .. stop - 1``: each array's leading run axis
    sliced (views, so the kernel fills the caller's arrays); ``None`` stays ``None``."""
    for name, field in zip(out._fields, out, strict=True):
        if field is not None and field.shape[0] != n_runs:
            raise RuntimeError(f"output {name} has no leading run axis of length {n_runs}")
    return out._make(None if field is None else field[first:stop] for field in out)
