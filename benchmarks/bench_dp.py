"""Value-iteration sweeps on a 1000 x 1000 open gridworld (10^6 states, 4 actions).

-1 per step, the goal in the bottom-right corner ends the episode, gamma 0.99;
deterministic moves (K = 1) and slippery ones (K = 3: the intended direction or
either perpendicular one, 1/3 each, as FrozenLake). The model arrays are built
directly with NumPy.

Reported, from one run of this process:

- compile time of the sweep kernel from an empty numba cache, and the start
  with a warm cache (each in a fresh subprocess);
- ms per synchronous sweep on 1 and 2 threads (best of several), and per
  in-place (Gauss-Seidel) sweep (sequential);
- achieved bandwidth: the bytes a sweep must touch (successor, prob and reward
  once, V read once, the new V written once) / time, against a NumPy copy of a
  large array measured in the same run (read + write bytes / time); the one-off
  cost of deriving ``successor`` from ``next_state`` and ``done`` is printed too;
- the ratio to mdptoolbox-hiive's Bellman operator (``ValueIteration``'s
  per-sweep work, ``_bellmanOperator``, on scipy.sparse matrices built
  directly) on the same V, after checking that both sweeps give the same
  numbers;
- the ratio to a C++ solver, mdpsolver (if installed), over whole
  value-iteration solves: both from V = 0 to the same tolerance ``VI_TOL``,
  each on 1 and 2 threads. Per sweep = solve time / (sweeps + 1), the + 1 being
  the final greedy pass both make (our Q table, its policy sweep): ours is the
  wall time of :func:`tabular.value_iteration` (successor array and greedy policy
  included), mdpsolver's is ``getRuntime()`` (its own timer around the sweeps
  and the policy pass; not the hand-over of the model, nor setting up V) with the
  sweep count read from its verbose output. 1 thread is its serial code
  (``parallel=False``), 2 threads its OpenMP loop with 2 threads. Its values are
  checked against ours twice: within ``2 VI_TOL`` of our result (each is within
  ``VI_TOL`` of V*), and equal, to rounding, to ours after the same number of
  sweeps plus its final pass and its shift (Puterman 1994, eq. 6.6.12).
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import sys
import tempfile
import time

import numba
import numpy as np

from benchmarks.timing import compile_seconds
from tabular import TabularMDP, bellman_optimality, value_iteration
from tabular.kernels import dp as kernels
from tabular.kernels.dp import planning_arrays  # what every DP function hands its kernels

N = 1000
GAMMA = 0.99
MOVES = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)])  # up, right, down, left
# Tolerance of the whole solves compared with mdpsolver: ||V - V*||_inf <= 2 on values
# down to -100 takes 390 sweeps, which keeps mdpsolver's four solves near a minute.
VI_TOL = 2.0


def gridworld(n: int, slippery: bool) -> TabularMDP:
    """The open ``n x n`` gridworld as a :class:`TabularMDP` (goal = the last state)."""
    S = n * n
    row, col = np.divmod(np.arange(S), n)
    directions = np.arange(4)[:, None] + (np.array([0, 1, 3]) if slippery else np.array([0]))
    d = directions % 4  # [A, K]: the direction of each outcome
    r = np.clip(row[:, None, None] + MOVES[d, 0][None], 0, n - 1)
    c = np.clip(col[:, None, None] + MOVES[d, 1][None], 0, n - 1)
    next_state = r * n + c
    K = d.shape[1]
    prob = np.full(next_state.shape, 1.0 / K)
    reward = np.full(next_state.shape, -1.0)
    goal = S - 1
    next_state[goal], reward[goal] = goal, 0.0  # the goal is absorbing and free
    done = next_state == goal
    start = np.zeros(S)
    start[0] = 1.0
    return TabularMDP(next_state, prob, reward, done, start)


def toolbox_model(mdp: TabularMDP):
    """mdptoolbox-hiive's ``(P, R)``: A sparse ``[S, S]`` matrices and ``R [S, A]``."""
    from scipy.sparse import csr_matrix

    S, A, K = mdp.prob.shape
    rows = np.repeat(np.arange(S), K)
    P = [csr_matrix((mdp.prob[:, a].ravel(), (rows, mdp.next_state[:, a].ravel())),
                    shape=(S, S)) for a in range(A)]
    return P, mdp.expected_reward()


def best_seconds(fn, repeats: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def copy_bandwidth(nbytes: int = 512 * 2**20) -> float:
    """Bytes/s of ``np.copyto`` on a large array (read + write counted)."""
    src = np.ones(nbytes // 8)
    dst = np.empty_like(src)
    return 2 * nbytes / best_seconds(lambda: np.copyto(dst, src), 5)


COMPILE_SETUP = """
import numpy as np
from tabular.kernels import dp as k
ns = np.zeros((2, 2, 1), np.int64); p = np.ones((2, 2, 1)); plan = k.PlanningArrays(ns, p, -p)
"""
COMPILE_CALL = "k.optimality_sweep(plan, np.zeros(3), 0.9, np.zeros(3))"


def sweep_bytes(plan) -> int:
    return sum(a.nbytes for a in plan) + 2 * (plan.successor.shape[0] + 1) * 8


def bench_model(name: str, mdp: TabularMDP, copy_bw: float) -> dict:
    from hiive.mdptoolbox.mdp import MDP, ValueIteration

    t = time.perf_counter()
    plan = planning_arrays(mdp, GAMMA)
    row = {"model": name, "K": mdp.n_outcomes, "ms_prepare": 1e3 * (time.perf_counter() - t)}
    rng = np.random.default_rng(0)
    V = np.append(rng.uniform(-100.0, 0.0, mdp.n_states), 0.0)  # + the end sentinel
    V[-2] = 0.0  # the goal: both formulations agree on it
    out = np.zeros_like(V)
    threads_before = numba.get_num_threads()
    for threads in (1, 2):
        numba.set_num_threads(threads)
        row[f"ms_{threads}t"] = 1e3 * best_seconds(
            lambda: kernels.optimality_sweep(plan, V, GAMMA, out), 10)
    numba.set_num_threads(threads_before)
    W = V.copy()
    row["ms_gs"] = 1e3 * best_seconds(
        lambda: kernels.optimality_sweep_inplace(plan, W, GAMMA), 3)

    P, R = toolbox_model(mdp)
    # ValueIteration's constructor also bounds the iteration count, which takes seconds
    # at 10^4 states (minutes at 10^6); the sweep needs only MDP's own set-up of P and R
    vi = ValueIteration.__new__(ValueIteration)
    MDP.__init__(vi, P, R, GAMMA, epsilon=0.01, max_iter=1000, skip_check=True)
    row["ms_toolbox"] = 1e3 * best_seconds(lambda: vi._bellmanOperator(V[:-1]), 5)
    kernels.optimality_sweep(plan, V, GAMMA, out)
    row["max_diff"] = float(np.max(np.abs(vi._bellmanOperator(V[:-1])[1] - out[:-1])))
    nbytes = sweep_bytes(plan)
    for threads in (1, 2):
        bw = nbytes / (row[f"ms_{threads}t"] / 1e3)
        row[f"bw_{threads}t"] = bw
        row[f"bw_frac_{threads}t"] = bw / copy_bw
    row["mb"] = nbytes / 1e6
    return row


def mdpsolver_model(mdp: TabularMDP):
    """mdpsolver's sparse model: per ``(s, a)`` the successors and their probabilities
    (``[S][A][K]`` lists) and the expected reward (``[S][A]``).

    The goal is absorbing with reward 0, so from V = 0 its value stays 0 and moving
    into it is the same as ``done`` (no value flows from the next state)."""
    import mdpsolver

    model = mdpsolver.model()
    model.mdp(discount=GAMMA, rewards=mdp.expected_reward().tolist(),
              tranMatProbs=mdp.prob.tolist(), tranMatColumns=mdp.next_state.tolist())
    return model


def openmp_runtime(module):
    """The libgomp that ``module`` (mdpsolver) runs its parallel loops on: its wheel's own
    copy if bundled, else the system one."""
    bundled = glob.glob(os.path.join(os.path.dirname(module.__file__), os.pardir,
                                     f"{module.__name__}.libs", "libgomp*"))
    return ctypes.CDLL(bundled[0] if bundled else "libgomp.so.1")


@contextlib.contextmanager
def c_stdout_lines():
    """Collect the lines C/C++ code writes to file descriptor 1 (mdpsolver's ``cout``)."""
    sys.stdout.flush()
    saved = os.dup(1)
    lines = []
    with tempfile.TemporaryFile(mode="w+") as sink:
        os.dup2(sink.fileno(), 1)
        try:
            yield lines
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            sink.seek(0)
            lines.extend(sink.read().splitlines())


def mdpsolver_solve(model, openmp, threads: int, n_states: int) -> tuple[float, int, np.ndarray]:
    """Its value iteration from V = 0: (its runtime in s, its sweep count, its V)."""
    openmp.omp_set_num_threads(threads)
    with c_stdout_lines() as printed:
        model.solve(algorithm="vi", tolerance=VI_TOL, update="standard",
                    initValueVector=[0.0] * n_states, verbose=True, parallel=threads > 1)
    done = next(line for line in printed if line.startswith("Solution found in"))
    return model.getRuntime() / 1e3, int(done.split()[3]), np.array(model.getValueVector())


def bench_mdpsolver(mdp: TabularMDP, openmp) -> dict:
    """Whole value-iteration solves, ours and mdpsolver's, on 1 and 2 threads."""
    t = time.perf_counter()
    model = mdpsolver_model(mdp)
    row = {"handover_s": time.perf_counter() - t, "diff_tol": 0.0, "diff_same": 0.0}
    threads_before = numba.get_num_threads()
    for threads in (1, 2):
        numba.set_num_threads(threads)
        t = time.perf_counter()
        ours = value_iteration(mdp, GAMMA, tol=VI_TOL)
        row[f"ours_{threads}t"] = 1e3 * (time.perf_counter() - t) / (ours.iterations + 1)
        seconds, sweeps, V = mdpsolver_solve(model, openmp, threads, mdp.n_states)
        row[f"mdps_{threads}t"] = 1e3 * seconds / (sweeps + 1)
        row[f"sweeps_{threads}t"] = (ours.iterations, sweeps)  # ours / its
        # its result: one more sweep, then every value moved by gamma / (1 - gamma) times
        # the smallest change of that sweep (Puterman eq. 6.6.12)
        last = bellman_optimality(mdp, ours.V, GAMMA)
        shifted = last + GAMMA / (1.0 - GAMMA) * np.min(last - ours.V)
        row["diff_tol"] = max(row["diff_tol"], float(np.max(np.abs(V - ours.V))))
        row["diff_same"] = max(row["diff_same"], float(np.max(np.abs(V - shifted))))
    numba.set_num_threads(threads_before)
    return row


def print_mdpsolver_table() -> None:
    try:
        import mdpsolver
    except ImportError:
        print("mdpsolver is not installed: its comparison is skipped")
        return
    from importlib.metadata import version

    openmp = openmp_runtime(mdpsolver)
    value_iteration(gridworld(4, True), GAMMA, tol=VI_TOL)  # compile outside the timings
    print(f"\nWhole value-iteration solves from V = 0 to tol {VI_TOL:g}, ours against mdpsolver "
          f"{version('mdpsolver')} (C++; 1 thread = its serial code, 2 = its OpenMP loop).\n"
          "Both stop after the first sweep whose change is below tol (1 - gamma) / gamma: in "
          "sup norm for us, in span for it, the same here as every change is <= 0 and the "
          "goal's is 0.\nms per sweep = solve time / (sweeps + 1 greedy pass); x = its ms / "
          "ours; |V - ours| <= 2 tol (each is within tol of V*); |V - same| = its V against "
          "ours after the same sweeps, one more and its shift (Puterman eq. 6.6.12).")
    print(f"{'model':<14}{'sweeps':>12}{'ours 1t':>9}{'ours 2t':>9}{'mdps 1t':>9}"
          f"{'mdps 2t':>9}{'x 1t':>7}{'x 2t':>7}{'|V - ours|':>12}{'|V - same|':>12}")
    for name, slippery in (("deterministic", False), ("slippery K=3", True)):
        r = bench_mdpsolver(gridworld(N, slippery), openmp)
        counts = {f"{ours}/{its}" for ours, its in (r["sweeps_1t"], r["sweeps_2t"])}
        sweeps = " ".join(sorted(counts))  # one entry unless a thread count changed them
        print(f"{name:<14}{sweeps:>12}{r['ours_1t']:>9.2f}{r['ours_2t']:>9.2f}"
              f"{r['mdps_1t']:>9.1f}{r['mdps_2t']:>9.1f}{r['mdps_1t'] / r['ours_1t']:>7.1f}"
              f"{r['mdps_2t'] / r['ours_2t']:>7.1f}{r['diff_tol']:>12.2e}{r['diff_same']:>12.1e}"
              f"   (model handed to mdpsolver in {r['handover_s']:.1f} s)", flush=True)


def main() -> None:
    cold, warm = compile_seconds(COMPILE_SETUP, COMPILE_CALL)
    print(f"optimality_sweep first call: {cold:.2f} s from an empty numba cache, "
          f"{warm:.2f} s with a warm cache (fresh processes, imports not counted)")
    copy_bw = copy_bandwidth()
    print(f"NumPy copy of 512 MiB on one thread: {copy_bw / 1e9:.1f} GB/s moved (read + "
          f"write; {copy_bw / 2e9:.1f} GB/s copied); %copy below compares bytes moved")
    print(f"{N}x{N} gridworld, {N * N:,} states, 4 actions, gamma {GAMMA}; "
          f"numba threads available: {numba.config.NUMBA_NUM_THREADS}; load average "
          f"{os.getloadavg()[0]:.1f} (timings are only meaningful on an idle machine)")
    header = (f"{'model':<14}{'MB/sweep':>9}{'1 thr ms':>10}{'2 thr ms':>10}{'inpl. ms':>9}"
              f"{'GB/s 1t':>9}{'GB/s 2t':>9}{'%copy 1t':>10}{'%copy 2t':>10}"
              f"{'toolbox ms':>12}{'x 1t':>7}{'x 2t':>7}{'max|diff|':>11}")
    print(header)
    for name, slippery in (("deterministic", False), ("slippery K=3", True)):
        t = time.perf_counter()
        mdp = gridworld(N, slippery)
        build = time.perf_counter() - t
        r = bench_model(name, mdp, copy_bw)
        print(f"{name:<14}{r['mb']:>9.0f}{r['ms_1t']:>10.2f}{r['ms_2t']:>10.2f}"
              f"{r['ms_gs']:>9.1f}{r['bw_1t'] / 1e9:>9.1f}{r['bw_2t'] / 1e9:>9.1f}"
              f"{100 * r['bw_frac_1t']:>9.0f}%{100 * r['bw_frac_2t']:>9.0f}%"
              f"{r['ms_toolbox']:>12.1f}{r['ms_toolbox'] / r['ms_1t']:>7.1f}"
              f"{r['ms_toolbox'] / r['ms_2t']:>7.1f}{r['max_diff']:>11.1e}"
              f"   (model built in {build:.1f} s, successor array in "
              f"{r['ms_prepare']:.0f} ms)", flush=True)
        del mdp
    print_mdpsolver_table()


if __name__ == "__main__":
    main()
