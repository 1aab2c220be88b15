"""The runs driver: how a learner's kernel runs ``runs`` independent runs.

A learner writes one function, the run: ``run_one(model, params, rng, out, run)``
computes run ``run`` from its own stream ``rng`` and fills row ``run`` of each array of
the output record ``out``. Its kernel, the driver, is the loop over the runs, written
beside it and compiled by :func:`runs_kernel`: a sequential loop that :func:`over_runs`
splits over threads, without numba's parallel loop, whose second compile of the loop
body would cost every first call seconds (docs/decisions/2026-12-02-runs-driver.md)::

    @njit(cache=True, inline="always")
    def _q_learning_run(model, params, rng, out, run):
        ...  # the episode loop of one run, composed of tabular.rules

    @runs_kernel
    def _q_learning(model, params, rng_states, out):
        for run in range(rng_states.shape[0]):
            _q_learning_run(model, params, local_stream(rng_states[run]), out, run)

    over_runs(_q_learning, mdp.arrays, params, seed_states(seed, n), out)

The driver is a plain function of the learner's module, so numba caches it there, beside
the run function it inlines, and discards it when that file changes
(docs/decisions/2026-12-06-plain-runs-drivers.md says why it is written out and not
made by a factory). A family whose methods share one run function passes the method
as a constant (``_td_control_run(Q_LEARNING, model, ...)``), one driver per method, so
that the other methods' branches compile away.

Run ``i`` draws only from ``rng_states[i]`` and writes only row ``i`` of the outputs,
so the numbers depend neither on the thread count nor on ``runs``: run ``i`` of
``runs=n`` equals run ``i`` of ``runs=m``. It advances a private copy of its stream
state, held in the kernel's stack frame (``local_stream`` of :mod:`tabular._numba.frame`):
neighbouring rows share a cache line, which threads drawing on every step would contend
for (false sharing), and a copy no other array can alias stays in registers. A learner
run in chunks of iterations (policy gradient, RLHF) writes the advanced copy back: its
driver's loop calls :func:`run_keeping_stream`, naming its run function::

    for run in range(rng_states.shape[0]):
        run_keeping_stream(_ppo_run, model, params, rollout, rng_states, out, run)

The synchronous DP sweeps run on more than one thread by a parallel loop over
contiguous index ranges, written the same way beside them (:mod:`tabular.solve.sweeps`).
"""

from __future__ import annotations

import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor, wait
from typing import NamedTuple

import numba
import numpy as np
from numba import njit
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


def runs_kernel(driver=None, *, simplifying: bool = True, cache: bool = True,
                fastmath: set[str] | bool = False):
    """Compiles a runs driver (a decorator, with or without options): cached, releasing
    the GIL so that :func:`over_runs` can run chunks of runs on threads, and compiled by
    :data:`SIMPLIFYING_PIPELINE`, whose copy propagation drops the reference counting of
    the array views that inlined rules make (Q-learning 64-66M steps/s against 18M on
    numba's plain pipeline, docs/decisions/2026-12-02-runs-driver.md). The run function
    it calls is typically ``inline="always"``: it is then compiled into the loop.

    ``simplifying=False``: compile by numba's plain pipeline instead, for a run function
    the simplifying pipeline breaks (the planning learners': their machine code crashed;
    GRPO's: its array analysis fails to compile it; docs/decisions/2026-12-02-runs-driver.md).

    ``fastmath``: numba's floating-point flags for the driver and all it inlines, e.g.
    ``{"reassoc", "contract"}`` for kernels whose sums may be reordered and fused (the
    linear bandits, ``tabular/rules/linear_bandits.py``); never ``nnan`` or ``ninf``.

    ``cache=False``: keep the driver in memory only, for a driver with no source file
    for numba's cache to sit beside (a rule typed at a prompt, :mod:`tabular.learn.custom`).
    """
    options: dict = dict(nogil=True, cache=cache)
    if fastmath:
        options["fastmath"] = fastmath
    if simplifying:
        options["parallel"] = SIMPLIFYING_PIPELINE
    compile_driver = njit(**options)
    return compile_driver if driver is None else compile_driver(driver)


@njit(inline="always")
def run_keeping_stream(run_one, model, params, rollout, rng_states, out, run) -> None:
    """Run ``run`` of a rollout learner (policy gradient, RLHF), which is run in chunks
    of iterations (:mod:`tabular.pg.telemetry`): ``run_one(model, params, rollout, rng,
    out, run)`` on ``rng``, a copy of the run's stream in the kernel's stack frame
    (``local_stream`` of :mod:`tabular._numba.frame`), then the advanced copy written back
    into row ``run`` of ``rng_states`` for the next chunk to continue.

    ``run_one`` is the learner's run function, a module-level dispatcher its driver
    names. Inlined (``inline="always"``) before typing, so the dispatcher is never an
    argument of a compiled function: the driver compiles, caches and inlines the run
    function as it did with these three lines written out in it, to the same machine
    code on :data:`SIMPLIFYING_PIPELINE` (numba's plain pipeline keeps a copy's
    reference count: GRPO's driver writes the lines out;
    docs/decisions/2026-12-06-duplicates-2.md)."""
    rng = local_stream(rng_states[run])
    run_one(model, params, rollout, rng, out, run)
    keep_stream(rng_states, run, rng)


@njit(inline="always")
def keep_stream(rng_states, run, rng) -> None:
    """Writes ``rng``, run ``run``'s advanced copy of its stream, back into row ``run`` of
    ``rng_states``, for a later call to continue the stream (the policy-gradient and RLHF
    learners, run in chunks of iterations by :mod:`tabular.pg.telemetry`). Element by
    element: a row assignment compiles numba's message for mismatched shapes."""
    for word in range(rng.shape[0]):
        rng_states[run, word] = rng[word]


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
