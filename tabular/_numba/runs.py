"""The runs driver: how a learner's kernel runs ``runs`` independent runs on threads.

A runs driver is a module-level ``@runs_kernel`` function ``driver(*shared, rng_states,
out)`` that loops over the leading run axis of ``rng_states`` and of the output record
``out``; :func:`over_runs` hands each thread a contiguous chunk of the runs. Run ``i``
draws only from ``rng_states[i]`` and writes only row ``i`` of the outputs, so the numbers
do not depend on the thread count (see ``docs/internals.md``).
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import NamedTuple

import numba
import numpy as np
from numba import njit
from numba.core.errors import NumbaPerformanceWarning

#: numba's parallel pipeline with every parallel transformation off: its copy
#: propagation drops the reference counting of the array views that inlined rules
#: make, which the plain pipeline keeps in the loop (benchmarks/bench_model_free.py).
SIMPLIFYING_PIPELINE = dict(comprehension=False, reduction=False, inplace_binop=False,
                            setitem=False, numpy=False, stencil=False, fusion=False,
                            prange=False)



def runs_kernel(driver):
    """``@njit`` for a runs driver: cached, compiled by :data:`SIMPLIFYING_PIPELINE`,
    releasing the GIL so that :func:`over_runs` can run chunks of runs on threads."""
    return njit(cache=True, nogil=True, parallel=SIMPLIFYING_PIPELINE)(driver)


@contextmanager
def simplifying_pipeline_quiet():
    """Compile kernels of :data:`SIMPLIFYING_PIPELINE` without numba's report that it
    made no parallel loop (it is not meant to)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "(?s).*no transformation for parallel",
                                NumbaPerformanceWarning)
        yield


def over_runs(driver, *args) -> None:
    """``driver(*args)``, its runs split into one contiguous chunk per thread of numba's
    thread count (:func:`numba.get_num_threads`). The last two arguments are
    ``rng_states`` and the output record, whose leading run axes are split; a run
    draws from its own stream and writes only its own rows, so the numbers do not
    depend on the split."""
    *shared, rng_states, out = args
    n_runs = rng_states.shape[0]
    n_threads = min(numba.get_num_threads(), n_runs)
    bounds = np.linspace(0, n_runs, n_threads + 1).astype(np.int64)
    chunks = [(*shared, rng_states[a:b], runs_slice(out, n_runs, a, b))
              for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    with simplifying_pipeline_quiet(), ThreadPoolExecutor(max(n_threads - 1, 1)) as pool:
        others = [pool.submit(driver, *chunk) for chunk in chunks[1:]]
        driver(*chunks[0])  # this thread runs the first chunk
        for other in others:
            other.result()


def runs_slice(out: NamedTuple, n_runs: int, first: int, stop: int) -> NamedTuple:
    """The output record of runs ``first .. stop - 1``: each array's leading run axis
    sliced (views, so the kernel fills the caller's arrays); ``None`` stays ``None``."""
    for name, field in zip(out._fields, out, strict=True):
        if field is not None and field.shape[0] != n_runs:
            raise RuntimeError(f"output {name} has no leading run axis of length {n_runs}")
    return type(out)(*(None if field is None else field[first:stop] for field in out))
