"""Times numba's compilations in every Python process started with this directory on
``PYTHONPATH`` and ``COMPILE_CLOCK_DIR`` set (see :mod:`benchmarks.compile_share`).

A compilation is a ``numba:compile`` event: numba broadcasts it only on a cache miss, so
loading a kernel from the on-disk cache is not counted. Nested events (a kernel
compiling the functions it calls) count once, in the outermost. At exit each process
writes ``{pid}.json``: for each compiled kernel, the seconds and argument types of
each of its compilations.
"""

import atexit
import json
import os
import time

DIRECTORY = os.environ.get("COMPILE_CLOCK_DIR")

if DIRECTORY:
    from numba.core import event

    class CompileClock(event.Listener):
        def __init__(self):
            self.depth, self.started, self.kernels = 0, 0.0, {}

        def on_start(self, ev):
            if self.depth == 0:
                self.started = time.perf_counter()
            self.depth += 1

        def on_end(self, ev):
            self.depth -= 1
            if self.depth == 0:
                seconds = time.perf_counter() - self.started
                py_func = ev.data["dispatcher"].py_func
                name = f"{py_func.__module__}.{py_func.__qualname__}"
                self.kernels.setdefault(name, []).append((seconds, str(ev.data["args"])))

    clock = CompileClock()
    event.register("numba:compile", clock)

    @atexit.register
    def _write():
        path = os.path.join(DIRECTORY, f"{os.getpid()}.json")
        with open(path, "w") as f:
            json.dump(clock.kernels, f)
