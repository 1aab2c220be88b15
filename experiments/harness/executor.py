"""One interface for many independent (config, seed) jobs: local or Ray.

An experiment describes a sweep as a module-level function and a list of keyword
dictionaries, one per job, and hands both to ``executor.map``. The jobs carry
their own seeds, so the numbers depend only on the jobs, never on which
executor, process or thread ran them: local and Ray give identical results.

- :class:`LocalExecutor` runs the jobs in this process. With ``workers=1`` (the
  default) one after another: the library's kernels already spread their
  independent runs over all cores with ``numba.prange``, so a second level of
  parallelism only adds contention on a small machine. ``workers > 1`` uses a
  thread pool, which pays off when the jobs call kernels that release the GIL
  (concurrent ``parallel=True`` kernels then need numba's ``tbb`` or ``omp``
  threading layer: the default ``workqueue`` layer is not thread-safe).
- :class:`RayExecutor` sends each job to a Ray worker. It joins the cluster named
  by ``address`` or the ``RAY_ADDRESS`` environment variable, and otherwise
  starts a local instance once per process (``pip install 'tabular-zoo[ray]'``).
  Jobs are pickled by reference, so every node needs this package installed.

When Ray pays: each Ray worker is a process that imports the library and loads its
compiled kernels before its first job, and the local executor's kernels already use
every core of the machine (``numba.prange`` over the runs), so on one machine Ray only
adds that start and contention. Measured on a 2-vCPU machine shared with other work
(load about 9), ``short_corridor --quick`` (3 step-size jobs of 50 runs), the
experiment's own time with ``--backend local`` against ``ray``: 13.7 s against 25.4 s at
1,000 episodes per run, 31.4 s against 45.3 s at 8,000 (wall time with Ray's start:
25 s against 60 s, 45 s against 71 s). The gap shrinks in ratio (1.85x to 1.44x) but not
in seconds (about 12-14 s) and Ray's time per episode is higher (2.8 s against 2.5 s per
1,000 episodes), so there is no crossover on one 2-core machine. Ray pays on a cluster
(``RAY_ADDRESS``) whose cores outnumber the local machine's, with jobs that each run far
longer than a worker's start of about ten seconds.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from tqdm.auto import tqdm

BACKENDS = ("local", "ray")
#: What ``--backend ray`` says when Ray is not installed.
RAY_MISSING = "--backend ray needs Ray, which is not installed: pip install 'tabular-zoo[ray]'"


class LocalExecutor:
    """Run jobs in this process, in order (``workers=1``) or on a thread pool."""

    name = "local"

    def __init__(self, workers: int = 1, progress: bool = True):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
        self.workers = workers
        self.progress = progress

    def map(self, fn: Callable, jobs: Sequence[dict], desc: str | None = None) -> list:
        """``[fn(**job) for job in jobs]``, in the order of ``jobs``."""
        bar = tqdm(total=len(jobs), desc=desc, leave=False,
                   disable=not self.progress or len(jobs) < 2)
        try:
            if self.workers == 1:
                results = []
                for job in jobs:
                    results.append(fn(**job))
                    bar.update()
                return results
            with ThreadPoolExecutor(self.workers) as pool:
                futures = [pool.submit(fn, **job) for job in jobs]
                for future in futures:
                    future.add_done_callback(lambda _: bar.update())
                return [future.result() for future in futures]
        finally:
            bar.close()

    def close(self) -> None:
        """Nothing to release."""


class RayExecutor:
    """Run each job as a Ray task; results come back in the order of ``jobs``."""

    name = "ray"

    def __init__(self, address: str | None = None, progress: bool = True):
        try:
            import ray
        except ImportError as error:
            raise ImportError(RAY_MISSING) from error
        self._ray = ray
        self.progress = progress
        self._started_here = False
        if not ray.is_initialized():
            address = address or os.environ.get("RAY_ADDRESS")
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(include_dashboard=False, log_to_driver=False,
                         configure_logging=False)
                self._started_here = True

    def map(self, fn: Callable, jobs: Sequence[dict], desc: str | None = None) -> list:
        """Submit every job, show progress as they finish, return results in job order."""
        ray = self._ray
        remote = ray.remote(num_cpus=1)(_call).options(name=getattr(fn, "__name__", "job"))
        refs = [remote.remote(fn, job) for job in jobs]
        pending = list(refs)
        with tqdm(total=len(refs), desc=desc, leave=False,
                  disable=not self.progress or len(jobs) < 2) as bar:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                bar.update(len(done))
        return ray.get(refs)

    def close(self) -> None:
        """Shut down the Ray instance if this executor started it."""
        if self._started_here and self._ray.is_initialized():
            self._ray.shutdown()
        self._started_here = False


def _call(fn: Callable, job: dict):
    return fn(**job)


def make_executor(backend: str = "local", **kwargs):
    """The executor for ``backend`` (``"local"`` or ``"ray"``)."""
    if backend == "local":
        return LocalExecutor(**kwargs)
    if backend == "ray":
        return RayExecutor(**kwargs)
    raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
