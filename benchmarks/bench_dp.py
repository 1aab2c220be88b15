"""Value-iteration sweeps on a 1000 x 1000 open gridworld (10^6 states, 4 actions).

-1 per step, the goal in the bottom-right corner ends the episode, gamma 0.99;
deterministic moves (K = 1) and slippery ones (K = 3: the intended direction or
either perpendicular one, 1/3 each, as FrozenLake). The model arrays are built
directly with NumPy.

Reported, from one run of this process:

- the first call of the sweep kernel from an empty numba cache and with the cache
  warm (each in a fresh subprocess);
- bytes per state per sweep of the wide form (int64 successors, float64
  probability and reward per outcome, as the sweeps read the model before
  :mod:`tabular.model.compact`) and of the stored form, V read and written included;
- ms per synchronous sweep on 1 and 2 threads, best of 10 calls, in ``REPEATS``
  rounds that alternate the wide form (:func:`wide_sweep`) and the stored form (the
  library's sweep): the best round, ``[min median max]`` of the rounds, the ratio
  wide / ours per round as ``median [min-max]``, and whether both give the same bits;
  ms per in-place (Gauss-Seidel, sequential) and per blocked sweep;
- ms per sweep of :func:`minimal_sweep`, a sweep hand-written for this gridworld
  (one thread, the action and outcome counts fixed at compile time): the floor of
  ours, and the ratio to mdptoolbox that such a sweep would reach;
- %copy: the bytes a sweep must touch (the model once, V read once, the new V
  written once) per second, against a NumPy copy of a large array in the same run;
- sweeps and seconds of whole solves with ``"sync"``, ``"inplace"`` and
  ``"blocked"`` sweeps, with the goal last or first (the order in which in-place
  sweeps carry values), from ``V0 = 0`` and from ``V0 = -1 / (1 - gamma)``;
- the ratio to mdptoolbox-hiive's Bellman operator (``ValueIteration``'s per-sweep
  work, ``_bellmanOperator``, on scipy.sparse matrices built directly) on the same
  V, after checking that both give the same numbers;
- the ratio to the C++ solver mdpsolver (if installed) over whole value-iteration
  solves, both from V = 0 to the tolerance ``VI_TOL``, on 1 thread (its serial code)
  and 2 (its OpenMP loop). Per sweep = solve time / (sweeps + 1), the + 1 being the
  final greedy pass both make: ours is the wall time of
  :func:`tabular.value_iteration`, its is ``getRuntime()`` (its own timer around
  the sweeps and the policy pass, not the hand-over of the model), with its sweep
  count read from its verbose output. Its values are checked against ours twice:
  within ``2 VI_TOL`` of ours (each is within ``VI_TOL`` of V*), and equal, to
  rounding, to ours after the same sweeps, one more and its shift (Puterman 1994,
  eq. 6.6.12).

Read the ratios rather than the times: both sides of a ratio are measured in the same
rounds, while the times move with the machine's load.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import statistics
import sys
import tempfile
import time

import numba
import numpy as np
from numba import njit, prange

from benchmarks.timing import Headline, compile_seconds, spread
from tabular import TabularMDP, bellman_optimality, value_iteration
from tabular.solve import sweeps as kernels

N = 1000
GAMMA = 0.99
MOVES = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)])  # up, right, down, left
# Tolerance of the whole solves compared with mdpsolver: ||V - V*||_inf <= 2 on values
# down to -100 takes 390 sweeps, which keeps mdpsolver's four solves near a minute.
VI_TOL = 2.0
REPEATS = 3  # rounds of the wide / stored comparison (the machine is shared)


def gridworld(n: int, slippery: bool, goal_first: bool = False) -> TabularMDP:
    """The open ``n x n`` gridworld as a :class:`TabularMDP` (goal = the last state, or
    the first with ``goal_first``)."""
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
    goal = 0 if goal_first else S - 1
    next_state[goal], reward[goal] = goal, 0.0  # the goal is absorbing and free
    done = next_state == goal
    start = np.zeros(S)
    start[S - 1 - goal] = 1.0
    return TabularMDP(next_state, prob, reward, done, start)


def wide_arrays(mdp: TabularMDP) -> tuple:
    """``(successor, prob, reward)`` as the sweeps read them before the compact model:
    int64 successors pointing to the end sentinel ``S`` where no value flows, float64
    probability and reward per outcome."""
    flows = ~mdp.done & (mdp.prob > 0.0)
    return np.where(flows, mdp.next_state, mdp.n_states), mdp.prob.copy(), mdp.reward.copy()


@njit(cache=True, parallel=True)
def wide_sweep(wide, V, gamma, out):
    """The synchronous value-iteration sweep over :func:`wide_arrays`, as it was before
    the compact model (the baseline of the bytes-per-sweep comparison)."""
    successor, prob, reward = wide
    residual = 0.0
    for s in prange(prob.shape[0]):
        best = -np.inf
        for a in range(prob.shape[1]):
            q = 0.0
            for k in range(prob.shape[2]):
                q += prob[s, a, k] * (reward[s, a, k] + gamma * V[successor[s, a, k]])
            best = max(best, q)
        out[s] = best
        residual = max(residual, kernels.distance(best, V[s]))
    return residual


@njit(cache=True)
def minimal_sweep(stored, V, gamma, out):
    """The synchronous sweep at its simplest, the floor of ours on one thread: this
    gridworld's 4 actions and its K (1 or 3) fixed at compile time, the arrays of the
    stored form (``stored = (successor, code, prob, reward)``) read directly, no
    parallel loop."""
    if stored[0].shape[2] == 1:
        return _minimal_sweep(stored, V, gamma, out, 1)
    return _minimal_sweep(stored, V, gamma, out, 3)


@njit(cache=True, inline="always")
def _minimal_sweep(stored, V, gamma, out, K):
    """:func:`minimal_sweep` with ``K`` a constant after inlining."""
    successor, code, prob, reward = stored
    end = successor.shape[0]
    residual = 0.0
    for s in range(end):
        best = -np.inf
        for a in range(4):
            q = 0.0
            for k in range(K):
                nxt = np.int64(successor[s, a, k])
                c = code[s, a, k]
                p = 1.0 if K == 1 else prob[c]
                q += p * (reward[c] + gamma * V[np.uint64(nxt if nxt >= 0 else end)])
            best = max(best, q)
        out[s] = best
        residual = max(residual, kernels.distance(best, V[s]))
    return residual


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
from tabular import TabularMDP
from tabular.solve import sweeps as k
m = TabularMDP(np.zeros((2, 2, 1)), np.ones((2, 2, 1)), -np.ones((2, 2, 1)),
               np.zeros((2, 2, 1)), [1.0, 0.0]).arrays
"""
COMPILE_CALL = "k.optimality_sweep(m, np.zeros(3), 0.9, np.zeros(3))"


def sweep_bytes(arrays) -> int:
    """Bytes a sweep moves: the model's arrays once, V read once and written once."""
    S = arrays[0].shape[0]
    return sum(a.nbytes for a in arrays[:4] if a is not None) + 2 * (S + 1) * 8


def sweep_ms(sweep, model, V, out, threads: int) -> float:
    """Best ms per sweep of ``sweep(model, V, GAMMA, out)`` on ``threads`` threads."""
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return 1e3 * best_seconds(lambda: sweep(model, V, GAMMA, out), 10)
    finally:
        numba.set_num_threads(before)


def bench_model(mdp: TabularMDP, copy_bw: float) -> dict:
    """Per-sweep times of the wide form and of the stored form (``REPEATS`` alternating
    rounds: ``ms_*`` the best round, ``rounds_*`` every round's best), their
    bytes and bandwidth, and mdptoolbox's Bellman operator."""
    from hiive.mdptoolbox.mdp import MDP, ValueIteration

    wide, model = wide_arrays(mdp), mdp.arrays
    rng = np.random.default_rng(0)
    V = np.append(rng.uniform(-100.0, 0.0, mdp.n_states), 0.0)  # + the end sentinel
    V[-2] = 0.0  # the goal: both formulations agree on it
    out, out_wide = np.zeros_like(V), np.zeros_like(V)
    kernels.optimality_sweep(model, V, GAMMA, out)
    wide_sweep(wide, V, GAMMA, out_wide)
    row = {"same_bits": np.array_equal(out.view(np.uint64), out_wide.view(np.uint64))}
    rounds = {f"{form}_{t}t": [] for form in ("wide", "ours") for t in (1, 2)}
    for _ in range(REPEATS):
        for threads in (1, 2):
            rounds[f"wide_{threads}t"].append(sweep_ms(wide_sweep, wide, V, out, threads))
            rounds[f"ours_{threads}t"].append(
                sweep_ms(kernels.optimality_sweep, model, V, out, threads))
    for key, times in rounds.items():
        row[f"ms_{key}"], row[f"rounds_{key}"] = min(times), times
    W = V.copy()
    row["ms_gs"] = 1e3 * best_seconds(
        lambda: kernels.optimality_sweep_inplace(model, W, GAMMA), 3)
    row["ms_blocked"] = sweep_ms(kernels.optimality_sweep_blocks, model, V, out, 2)
    floor = np.zeros_like(V)
    minimal = (model.successor, model.code, model.prob, model.reward)
    row["ms_minimal"] = 1e3 * best_seconds(lambda: minimal_sweep(minimal, V, GAMMA, floor), 10)
    kernels.optimality_sweep(model, V, GAMMA, out)
    row["minimal_same_bits"] = np.array_equal(out.view(np.uint64), floor.view(np.uint64))

    P, R = toolbox_model(mdp)
    # ValueIteration's constructor also bounds the iteration count, which takes seconds
    # at 10^4 states (minutes at 10^6); the sweep needs only MDP's own set-up of P and R
    vi = ValueIteration.__new__(ValueIteration)
    MDP.__init__(vi, P, R, GAMMA, epsilon=0.01, max_iter=1000, skip_check=True)
    row["ms_toolbox"] = 1e3 * best_seconds(lambda: vi._bellmanOperator(V[:-1]), 5)
    kernels.optimality_sweep(model, V, GAMMA, out)
    row["max_diff"] = float(np.max(np.abs(vi._bellmanOperator(V[:-1])[1] - out[:-1])))
    S = mdp.n_states
    row["bytes_wide"], row["bytes_ours"] = sweep_bytes(wide) / S, sweep_bytes(model) / S
    for form in ("wide", "ours"):
        for threads in (1, 2):
            bw = row[f"bytes_{form}"] * S / (row[f"ms_{form}_{threads}t"] / 1e3)
            row[f"copy_{form}_{threads}t"] = bw / copy_bw
    return row


def print_sweep_table(copy_bw: float) -> list[Headline]:
    print(f"{N}x{N} gridworld, {N * N:,} states, 4 actions, gamma {GAMMA}; numba threads "
          f"available: {numba.config.NUMBA_NUM_THREADS}; load average "
          f"{os.getloadavg()[0]:.1f} (timings are only meaningful on an idle machine).\n"
          f"ms per synchronous sweep: best of 10, in {REPEATS} rounds alternating the wide "
          "form (int64 successor, float64 prob and reward) and ours (tabular.model.compact): "
          "the best round, then [min median max] of the rounds; x = wide / ours per round, "
          "median [min-max]; %copy = bytes moved / s against the NumPy copy.")
    headlines = []
    for name, slippery in (("deterministic", False), ("slippery K=3", True)):
        t = time.perf_counter()
        mdp = gridworld(N, slippery)
        build = time.perf_counter() - t
        r = bench_model(mdp, copy_bw)
        print(f"{name}: bytes per state per sweep {r['bytes_wide']:.0f} wide -> "
              f"{r['bytes_ours']:.0f} ours ({r['bytes_wide'] / r['bytes_ours']:.2f}x fewer); "
              f"same bits: {r['same_bits']}; model built in {build:.1f} s", flush=True)
        for threads in (1, 2):
            wide, ours = r[f"rounds_wide_{threads}t"], r[f"rounds_ours_{threads}t"]
            ratios = [w / o for w, o in zip(wide, ours, strict=True)]
            best = r[f"ms_ours_{threads}t"]
            print(f"  {threads} thread(s): wide {min(wide):7.2f} ms [{rounds_text(wide)}]  ours "
                  f"{best:7.2f} ms [{rounds_text(ours)}]  x {spread(ratios)}  %copy wide "
                  f"{100 * r[f'copy_wide_{threads}t']:4.0f}%  ours "
                  f"{100 * r[f'copy_ours_{threads}t']:4.0f}%  mdptoolbox "
                  f"{r['ms_toolbox']:.0f} ms = {r['ms_toolbox'] / best:5.1f}x ours", flush=True)
            headlines.append(Headline(
                f"value-iteration sweep, {N}x{N} gridworld, {name}, "
                f"{threads} thread{'s' if threads > 1 else ''}",
                f"{best:.2f} ms", f"mdptoolbox-hiive {r['ms_toolbox']:.1f} ms",
                f"{r['ms_toolbox'] / best:.1f}x"))
        print(f"  in-place sweep (1 thread) {r['ms_gs']:.1f} ms, blocked sweep (2 threads) "
              f"{r['ms_blocked']:.2f} ms; mdptoolbox max|diff| {r['max_diff']:.1e}", flush=True)
        print(f"  minimal hand-written sweep (1 thread) {r['ms_minimal']:.2f} ms, same bits: "
              f"{r['minimal_same_bits']}: ours on 1 thread takes "
              f"{r['ms_ours_1t'] / r['ms_minimal']:.2f}x its time, mdptoolbox "
              f"{r['ms_toolbox'] / r['ms_minimal']:.1f}x", flush=True)
        del mdp
    return headlines


def rounds_text(times: list[float]) -> str:
    """``min median max`` of the rounds' ms."""
    return " ".join(f"{x:.2f}" for x in (min(times), statistics.median(times), max(times)))


def print_methods_table(n: int = 300, tol: float = 1e-6) -> None:
    """Sweeps and seconds of whole solves with each sweep method (2 threads where they
    run in parallel; ``"inplace"`` is sequential), from ``V0 = 0`` (above ``v*``: the
    bad news travels one state per sweep whatever the order) and from
    ``V0 = -1 / (1 - gamma)`` (below: the goal's good news travels along the sweep
    order, so the goal's place matters)."""
    print(f"\nWhole solves to tol {tol:g} on the {n}x{n} deterministic gridworld: sweeps "
          "(seconds) of each method")
    print(f"{'goal':<7}{'V0':>6}" + "".join(f"{m:>18}" for m in ("sync", "inplace", "blocked")))
    for goal_first in (False, True):
        mdp = gridworld(n, False, goal_first)
        for start in (0.0, -1.0 / (1.0 - GAMMA)):
            V0 = np.full(mdp.n_states, start)
            cells = []
            for method in ("sync", "inplace", "blocked"):
                value_iteration(mdp, GAMMA, tol=1.0, method=method)  # compile outside timing
                t = time.perf_counter()
                res = value_iteration(mdp, GAMMA, tol=tol, method=method, V0=V0)
                cells.append(f"{res.iterations} ({time.perf_counter() - t:.2f} s)")
            print(f"{'first' if goal_first else 'last':<7}{start:>6.0f}"
                  + "".join(f"{c:>18}" for c in cells), flush=True)


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


def print_mdpsolver_table() -> list[Headline]:
    try:
        import mdpsolver
    except ImportError:
        print("mdpsolver is not installed: its comparison is skipped")
        return []
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
    headlines = []
    for name, slippery in (("deterministic", False), ("slippery K=3", True)):
        r = bench_mdpsolver(gridworld(N, slippery), openmp)
        counts = {f"{ours}/{its}" for ours, its in (r["sweeps_1t"], r["sweeps_2t"])}
        sweeps = " ".join(sorted(counts))  # one entry unless a thread count changed them
        print(f"{name:<14}{sweeps:>12}{r['ours_1t']:>9.2f}{r['ours_2t']:>9.2f}"
              f"{r['mdps_1t']:>9.1f}{r['mdps_2t']:>9.1f}{r['mdps_1t'] / r['ours_1t']:>7.1f}"
              f"{r['mdps_2t'] / r['ours_2t']:>7.1f}{r['diff_tol']:>12.2e}{r['diff_same']:>12.1e}"
              f"   (model handed to mdpsolver in {r['handover_s']:.1f} s)", flush=True)
        headlines.append(Headline(
            f"value iteration to tol {VI_TOL:g}, {N}x{N} {name}, 2 threads, per sweep",
            f"{r['ours_2t']:.2f} ms", f"mdpsolver (C++) {r['mdps_2t']:.1f} ms",
            f"{r['mdps_2t'] / r['ours_2t']:.1f}x"))
    return headlines


def main() -> list[Headline]:
    cold, warm = compile_seconds(COMPILE_SETUP, COMPILE_CALL)
    print(f"optimality_sweep first call: {cold:.2f} s from an empty numba cache, "
          f"{warm:.2f} s with a warm cache (fresh processes, imports not counted)")
    copy_bw = copy_bandwidth()
    print(f"NumPy copy of 512 MiB on one thread: {copy_bw / 1e9:.1f} GB/s moved (read + "
          f"write; {copy_bw / 2e9:.1f} GB/s copied); %copy below compares bytes moved")
    headlines = print_sweep_table(copy_bw)
    print_methods_table()
    return headlines + print_mdpsolver_table()


if __name__ == "__main__":
    main()
