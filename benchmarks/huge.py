"""Value iteration on 10^8 states: the open 10,000 x 10,000 gridworld (opt-in:
``python -m benchmarks huge``, or ``make bench-huge``; never part of ``make bench``).

The model comes from :func:`tabular.envs.open_grid.open_grid_mdp` (deterministic, 4 actions,
-1 per move, the goal in the far corner ends the episode), stored compactly (int32
signed successors and uint16 reward codes: 24 bytes per state), and is solved by
:func:`tabular.value_iteration` at gamma 0.99 to ``tol = 1e-6`` on every numba
thread. Reported, from one run of this process: the copy bandwidth of NumPy
(measured first, in the same run), the build time, seconds per sweep (a few timed
sweeps before the solve, and the solve's own wall time per sweep), sweeps, the bytes
a sweep moves per second as a share of the copy bandwidth, and the peak resident
memory of the process.

Options: ``python -m benchmarks.huge [SIDE] [METHOD] [MAX_SWEEPS]`` (default 10000,
``"sync"`` and no cap) to try a smaller grid, another sweep method, or to stop the
solve after ``MAX_SWEEPS`` sweeps (``strict=False``: its memory and time per sweep
are those of the full solve, which needs the same number of sweeps at any size past
1000 x 1000: ``ceil(log(tol (1 - gamma) / gamma) / log(gamma)) = 1833`` here).
"""

from __future__ import annotations

import resource
import sys
import time

import numba
import numpy as np

from benchmarks.bench_dp import copy_bandwidth, sweep_bytes
from tabular import value_iteration
from tabular.envs.open_grid import open_grid_mdp
from tabular.solve import sweeps as kernels

SIDE = 10_000
GAMMA = 0.99
TOL = 1e-6
TIMED_SWEEPS = 3


def peak_rss_gib() -> float:
    """The process's peak resident memory so far (GiB; Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main(side: int = SIDE, method: str = "sync", max_sweeps: int = 100_000) -> None:
    copy_bw = copy_bandwidth()
    print(f"NumPy copy of 512 MiB: {copy_bw / 1e9:.1f} GB/s moved (read + write); numba "
          f"threads: {numba.get_num_threads()}", flush=True)
    t = time.perf_counter()
    mdp = open_grid_mdp(side, side)
    S = mdp.n_states
    nbytes = sweep_bytes(mdp.arrays)
    print(f"{side} x {side} gridworld: {S:,} states, model built in "
          f"{time.perf_counter() - t:.1f} s, stored in "
          f"{sum(a.nbytes for a in mdp.arrays[:4]) / 2**30:.2f} GiB; a sweep moves "
          f"{nbytes / S:.0f} bytes per state ({nbytes / 1e9:.1f} GB); peak RSS so far "
          f"{peak_rss_gib():.2f} GiB", flush=True)

    V, out = np.zeros(S + 1), np.zeros(S + 1)
    kernels.optimality_sweep(mdp.arrays, V, GAMMA, out)  # compile and touch the buffers
    seconds = []
    for _ in range(TIMED_SWEEPS):
        t = time.perf_counter()
        kernels.optimality_sweep(mdp.arrays, V, GAMMA, out)
        seconds.append(time.perf_counter() - t)
        V, out = out, V
    del V, out
    best = min(seconds)
    print(f"timed sweeps: {', '.join(f'{s:.3f}' for s in seconds)} s; best {best:.3f} s = "
          f"{nbytes / best / 1e9:.1f} GB/s = {100 * nbytes / best / copy_bw:.0f}% of the copy "
          "bandwidth", flush=True)

    t = time.perf_counter()
    result = value_iteration(mdp, GAMMA, tol=TOL, method=method, max_iter=max_sweeps,
                             strict=False)
    wall = time.perf_counter() - t
    per_sweep = wall / (result.iterations + 1)  # + the final Q table and greedy policy
    print(f"value_iteration(method={method!r}, gamma={GAMMA}, tol={TOL:g}): "
          f"{result.iterations} sweeps (converged: {result.converged}) in {wall:.0f} s, "
          f"{per_sweep:.3f} s per sweep "
          f"(Q table and policy included) = {nbytes / per_sweep / 1e9:.1f} GB/s = "
          f"{100 * nbytes / per_sweep / copy_bw:.0f}% of the copy bandwidth; last residual "
          f"{result.history[-1]:.2e}; V(start) = {result.V[0]:.6f} (exact: "
          f"{-(1 - GAMMA ** (2 * side - 3)) / (1 - GAMMA):.6f})", flush=True)
    print(f"peak RSS: {peak_rss_gib():.2f} GiB", flush=True)


if __name__ == "__main__":
    main(*(a if i == 1 else int(a) for i, a in enumerate(sys.argv[1:])))
