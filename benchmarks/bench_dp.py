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
- every contender of a sweep timed in ``REPEATS`` alternated rounds
  (:func:`benchmarks.timing.alternated`: each round times each contender once, best of
  10 calls), after checking that it gives our numbers: ours (the library's synchronous
  sweep) on 1 and 2 threads, the wide form (:func:`wide_sweep`) on 1 and 2,
  :func:`minimal_sweep` (a sweep hand-written for the stored arrays, one thread, the
  action count read at run time: the floor of ours), the in-place (Gauss-Seidel,
  sequential) and the blocked sweep, mdptoolbox-hiive's Bellman operator
  (``ValueIteration``'s per-sweep work, ``_bellmanOperator``, on scipy.sparse matrices
  built directly), an idiomatic JAX sweep (jitted, float64, one thread; if jax, the
  optional ``[bench]`` extra, is installed) and a NumPy copy of a large array;
- each time as ``min median max`` of the rounds and each ratio of two contenders round
  by round as ``median [min-max]``: wide / ours, ours / minimal, 1 thread / 2 threads,
  mdptoolbox / ours, JAX / ours, and %copy (the bytes a sweep must touch, the model
  once, V read once and the new V written once, per second, against the copy's);
- sweeps and seconds of whole solves with ``"sync"``, ``"inplace"`` and
  ``"blocked"`` sweeps, with the goal last or first (the order in which in-place
  sweeps carry values), from ``V0 = 0`` and from ``V0 = -1 / (1 - gamma)``;
- the ratio to the C++ solver mdpsolver (if installed) over whole value-iteration
  solves, both from V = 0 to the tolerance ``VI_TOL``, on 1 thread (its serial code)
  and 2 (its OpenMP loop), in ``SOLVE_ROUNDS`` alternated rounds. Per sweep = solve
  time / (sweeps + 1), the + 1 being the final greedy pass both make: ours is the wall
  time of :func:`tabular.value_iteration`, its is ``getRuntime()`` (its own timer
  around the sweeps and the policy pass, not the hand-over of the model), with its
  sweep count read from its verbose output. Its values are checked against ours in
  every round: within ``2 VI_TOL`` of ours (each is within ``VI_TOL`` of V*), and
  equal, to rounding, to ours after the same sweeps, one more and its shift (Puterman
  1994, eq. 6.6.12).

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

from benchmarks.timing import (
    Headline,
    alternated,
    best_seconds,
    compile_seconds,
    numba_threads,
    ratios,
    spread,
)
from tabular import TabularMDP, bellman_optimality, value_iteration
from tabular.solve import sweeps as kernels

N = 1000
GAMMA = 0.99
MOVES = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)])  # up, right, down, left
# Tolerance of the whole solves compared with mdpsolver: ||V - V*||_inf <= 2 on values
# down to -100 takes 390 sweeps, which keeps mdpsolver's four solves near a minute.
VI_TOL = 2.0
REPEATS = 5  # alternated rounds of every sweep comparison (the machine is shared)
SOLVE_ROUNDS = 3  # alternated rounds of the whole solves against mdpsolver
COPY_BYTES = 512 * 2**20  # the NumPy copy that %copy compares a sweep's bytes with


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
    """The synchronous sweep at its simplest, the floor of ours on one thread: the arrays
    of the stored form (``stored = (successor, code, prob, reward)``) read directly, the
    action count read from them at run time as ours does, K (1 or 3, this gridworld's)
    fixed at compile time, no parallel loop, no test of the discount (a multiply by
    ``gamma > 0``)."""
    if stored[0].shape[2] == 1:
        return _minimal_sweep(stored, V, gamma, out, 1)
    return _minimal_sweep(stored, V, gamma, out, 3)


@njit(cache=True, inline="always")
def _minimal_sweep(stored, V, gamma, out, K):
    """:func:`minimal_sweep` with ``K`` a constant after inlining."""
    successor, code, prob, reward = stored
    end, A = successor.shape[0], successor.shape[1]
    residual = 0.0
    for s in range(end):
        best = -np.inf
        for a in range(A):
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


def import_jax():
    """``(jax, jax.numpy)`` in float64 on one CPU thread, or ``None`` if jax is not
    installed (the optional ``[bench]`` extra). The thread flags take effect only if jax
    was not imported before (then its own thread count is used)."""
    if "jax" not in sys.modules:
        flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax, jnp


def jax_sweep(mdp: TabularMDP, jax_modules):
    """An idiomatic JAX synchronous sweep of the dense ``[S, A, K]`` arrays (gather,
    ``where``, sum, max under ``jax.jit``): ``(sweep, arrays)``, where
    ``sweep(V, *arrays)`` returns ``(T* V, residual)`` for ``V [S]``."""
    jax, jnp = jax_modules
    flows = ~mdp.done & (mdp.prob > 0.0)
    arrays = tuple(jnp.asarray(x) for x in (mdp.next_state, flows, mdp.prob, mdp.reward))

    @jax.jit
    def sweep(V, next_state, flows, prob, reward):
        later = jnp.where(flows, V[next_state], 0.0)
        new = jnp.max(jnp.sum(prob * (reward + GAMMA * later), axis=2), axis=1)
        return new, jnp.max(jnp.abs(new - V))

    return sweep, arrays


def toolbox_model(mdp: TabularMDP):
    """mdptoolbox-hiive's ``(P, R)``: A sparse ``[S, S]`` matrices and ``R [S, A]``."""
    from scipy.sparse import csr_matrix

    S, A, K = mdp.prob.shape
    rows = np.repeat(np.arange(S), K)
    P = [csr_matrix((mdp.prob[:, a].ravel(), (rows, mdp.next_state[:, a].ravel())),
                    shape=(S, S)) for a in range(A)]
    return P, mdp.expected_reward()


def copy_bandwidth(nbytes: int = COPY_BYTES) -> float:
    """Bytes/s of ``np.copyto`` on a large array (read + write counted)."""
    src = np.ones(nbytes // 8)
    dst = np.empty_like(src)
    return 2 * nbytes / best_seconds(lambda: np.copyto(dst, src), 5, warm_up=True)


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
    with numba_threads(threads):
        return 1e3 * best_seconds(lambda: sweep(model, V, GAMMA, out), 10, warm_up=True)


def bench_model(mdp: TabularMDP, jax_modules) -> dict:
    """Every figure of one model, from ``REPEATS`` alternated rounds (``rounds``: name ->
    the figure of each round, ms per sweep or bytes/s of the copy), after checking that
    each peer gives our numbers: the wide form, the minimal sweep, mdptoolbox's Bellman
    operator and JAX (if installed)."""
    from hiive.mdptoolbox.mdp import MDP, ValueIteration

    wide, model = wide_arrays(mdp), mdp.arrays
    minimal = (model.successor, model.code, model.prob, model.reward)
    rng = np.random.default_rng(0)
    V = np.append(rng.uniform(-100.0, 0.0, mdp.n_states), 0.0)  # + the end sentinel
    V[-2] = 0.0  # the goal: both formulations agree on it
    out, other = np.zeros_like(V), np.zeros_like(V)
    kernels.optimality_sweep(model, V, GAMMA, out)
    row: dict = {}
    wide_sweep(wide, V, GAMMA, other)
    row["same_bits"] = np.array_equal(out.view(np.uint64), other.view(np.uint64))
    minimal_sweep(minimal, V, GAMMA, other)
    row["minimal_same_bits"] = np.array_equal(out.view(np.uint64), other.view(np.uint64))

    P, R = toolbox_model(mdp)
    # ValueIteration's constructor also bounds the iteration count, which takes seconds
    # at 10^4 states (minutes at 10^6); the sweep needs only MDP's own set-up of P and R
    vi = ValueIteration.__new__(ValueIteration)
    MDP.__init__(vi, P, R, GAMMA, epsilon=0.01, max_iter=1000, skip_check=True)
    row["max_diff"] = float(np.max(np.abs(vi._bellmanOperator(V[:-1])[1] - out[:-1])))

    W = V.copy()
    measures = {
        "wide_1t": lambda: sweep_ms(wide_sweep, wide, V, other, 1),
        "ours_1t": lambda: sweep_ms(kernels.optimality_sweep, model, V, other, 1),
        "minimal": lambda: sweep_ms(minimal_sweep, minimal, V, other, 1),
        "wide_2t": lambda: sweep_ms(wide_sweep, wide, V, other, 2),
        "ours_2t": lambda: sweep_ms(kernels.optimality_sweep, model, V, other, 2),
        "gs": lambda: 1e3 * best_seconds(
            lambda: kernels.optimality_sweep_inplace(model, W, GAMMA), 3, warm_up=True),
        "blocked": lambda: sweep_ms(kernels.optimality_sweep_blocks, model, V, other, 2),
        "toolbox": lambda: 1e3 * best_seconds(lambda: vi._bellmanOperator(V[:-1]), 5,
                                              warm_up=True),
        "copy": copy_bandwidth,
    }
    row["jax_compile"] = None
    if jax_modules is not None:
        sweep, arrays = jax_sweep(mdp, jax_modules)
        V_jax = jax_modules[1].asarray(V[:-1])
        t = time.perf_counter()
        new, _ = sweep(V_jax, *arrays)
        new.block_until_ready()
        row["jax_compile"] = time.perf_counter() - t
        row["jax_diff"] = float(np.max(np.abs(np.asarray(new) - out[:-1])))
        measures["jax"] = lambda: 1e3 * best_seconds(
            lambda: sweep(V_jax, *arrays)[0].block_until_ready(), 10, warm_up=True)
    row["rounds"] = alternated(measures, REPEATS)
    S = mdp.n_states
    row["bytes_wide"], row["bytes_ours"] = sweep_bytes(wide) / S, sweep_bytes(model) / S
    return row


def print_sweep_table() -> list[Headline]:
    jax_modules = import_jax()
    print(f"{N}x{N} gridworld, {N * N:,} states, 4 actions, gamma {GAMMA}; numba threads "
          f"available: {numba.config.NUMBA_NUM_THREADS}; load average "
          f"{os.getloadavg()[0]:.1f} (timings are only meaningful on an idle machine).\n"
          f"Every figure comes from {REPEATS} alternated rounds in this process, each round "
          "timing every contender once (best of 10 calls; 5 for mdptoolbox and the copy, 3 "
          "for the in-place sweep): ms as min median max of the rounds; x = the ratio of "
          "two contenders round by round, median [min-max] (above 1: ours is faster, or "
          "for 'x minimal' the factor ours takes over it). wide = the sweep over int64 "
          "successors and float64 prob and reward; minimal = the hand-written sweep "
          "(minimal_sweep); %copy = bytes moved / s against a NumPy copy of "
          f"{COPY_BYTES // 2**20} MiB (read + write).")
    if jax_modules is None:
        print("jax is not installed (pip install -e '.[bench]'): the JAX sweep is skipped")
    else:
        print(f"JAX {jax_modules[0].__version__}: an idiomatic jitted sweep of the dense "
              "[S, A, K] arrays (gather, where, sum, max), float64, XLA_FLAGS "
              f"{os.environ.get('XLA_FLAGS', '')!r}")
    headlines = []
    for name, slippery in (("deterministic", False), ("slippery K=3", True)):
        t = time.perf_counter()
        mdp = gridworld(N, slippery)
        build = time.perf_counter() - t
        r = bench_model(mdp, jax_modules)
        rounds = r["rounds"]
        print(f"{name}: bytes per state per sweep {r['bytes_wide']:.0f} wide -> "
              f"{r['bytes_ours']:.0f} ours ({r['bytes_wide'] / r['bytes_ours']:.2f}x fewer); "
              f"same bits: wide {r['same_bits']}, minimal {r['minimal_same_bits']}; "
              f"mdptoolbox max|diff| {r['max_diff']:.1e}; model built in {build:.1f} s",
              flush=True)
        for threads in (1, 2):
            wide, ours = rounds[f"wide_{threads}t"], rounds[f"ours_{threads}t"]
            copy = [(r["bytes_ours"] * N * N / (o / 1e3)) / c
                    for o, c in zip(ours, rounds["copy"], strict=True)]
            print(f"  {threads} thread(s): ours {rounds_text(ours)} ms  wide "
                  f"{rounds_text(wide)} ms  x wide {spread(ratios(wide, ours))}  x mdptoolbox "
                  f"{spread(ratios(rounds['toolbox'], ours), '{:.1f}')}  %copy "
                  f"{spread([100 * c for c in copy], '{:.0f}')}", flush=True)
            toolbox_x = statistics.median(ratios(rounds["toolbox"], ours))
            headlines.append(Headline(
                f"value-iteration sweep, {N}x{N} gridworld, {name}, "
                f"{threads} thread{'s' if threads > 1 else ''}",
                f"{statistics.median(ours):.2f} ms",
                f"mdptoolbox-hiive {statistics.median(rounds['toolbox']):.1f} ms",
                f"{toolbox_x:.1f}x"))
        minimal_x = ratios(rounds["ours_1t"], rounds["minimal"])
        print(f"  minimal hand-written sweep (1 thread) {rounds_text(rounds['minimal'])} ms: "
              f"ours on 1 thread takes x {spread(minimal_x)} its time; 2 threads against 1: "
              f"x {spread(ratios(rounds['ours_1t'], rounds['ours_2t']))}", flush=True)
        headlines.append(Headline(
            f"value-iteration sweep, {N}x{N} {name}, 1 thread, against a minimal sweep",
            f"{statistics.median(rounds['ours_1t']):.2f} ms",
            f"minimal hand-written {statistics.median(rounds['minimal']):.2f} ms",
            f"{1 / statistics.median(minimal_x):.2f}x"))
        if "jax" in rounds:
            jax_x = ratios(rounds["jax"], rounds["ours_1t"])
            print(f"  JAX sweep (1 thread) {rounds_text(rounds['jax'])} ms, first call "
                  f"{r['jax_compile']:.2f} s, max|diff| {r['jax_diff']:.1e}: x {spread(jax_x)}",
                  flush=True)
            headlines.append(Headline(
                f"value-iteration sweep, {N}x{N} {name}, 1 thread",
                f"{statistics.median(rounds['ours_1t']):.2f} ms",
                f"JAX jit {statistics.median(rounds['jax']):.2f} ms",
                f"{statistics.median(jax_x):.1f}x"))
        print(f"  in-place sweep (1 thread) {rounds_text(rounds['gs'])} ms, blocked sweep "
              f"(2 threads) {rounds_text(rounds['blocked'])} ms; NumPy copy "
              f"{spread([c / 1e9 for c in rounds['copy']], '{:.1f}')} GB/s moved", flush=True)
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
    """Whole value-iteration solves, ours and mdpsolver's, on 1 and 2 threads, in
    ``SOLVE_ROUNDS`` alternated rounds (``rounds``: ms per sweep of each side and thread
    count, round by round), its values checked against ours in every round."""
    t = time.perf_counter()
    model = mdpsolver_model(mdp)
    row: dict = {"handover_s": time.perf_counter() - t, "diff_tol": 0.0, "diff_same": 0.0,
                 "sweeps": set()}

    def ours(threads):
        with numba_threads(threads):
            t = time.perf_counter()
            result = value_iteration(mdp, GAMMA, tol=VI_TOL)
            seconds = time.perf_counter() - t
        row[f"ours_V_{threads}t"] = result
        return 1e3 * seconds / (result.iterations + 1)

    def theirs(threads):
        seconds, sweeps, V = mdpsolver_solve(model, openmp, threads, mdp.n_states)
        mine = row[f"ours_V_{threads}t"]
        row["sweeps"].add(f"{mine.iterations}/{sweeps}")  # ours / its
        # its result: one more sweep, then every value moved by gamma / (1 - gamma) times
        # the smallest change of that sweep (Puterman eq. 6.6.12)
        last = bellman_optimality(mdp, mine.V, GAMMA)
        shifted = last + GAMMA / (1.0 - GAMMA) * np.min(last - mine.V)
        row["diff_tol"] = max(row["diff_tol"], float(np.max(np.abs(V - mine.V))))
        row["diff_same"] = max(row["diff_same"], float(np.max(np.abs(V - shifted))))
        return 1e3 * seconds / (sweeps + 1)

    row["rounds"] = alternated({"ours_1t": lambda: ours(1), "mdps_1t": lambda: theirs(1),
                                "ours_2t": lambda: ours(2), "mdps_2t": lambda: theirs(2)},
                               SOLVE_ROUNDS)
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
          f"{version('mdpsolver')} (C++; 1 thread = its serial code, 2 = its OpenMP loop), in "
          f"{SOLVE_ROUNDS} alternated rounds.\n"
          "Both stop after the first sweep whose change is below tol (1 - gamma) / gamma: in "
          "sup norm for us, in span for it, the same here as every change is <= 0 and the "
          "goal's is 0.\nms per sweep = solve time / (sweeps + 1 greedy pass), min median max "
          "of the rounds; x = its ms / ours round by round, median [min-max]; |V - ours| <= 2 "
          "tol (each is within tol of V*); |V - same| = its V against ours after the same "
          "sweeps, one more and its shift (Puterman eq. 6.6.12), the worst round.")
    headlines = []
    for name, slippery in (("deterministic", False), ("slippery K=3", True)):
        r = bench_mdpsolver(gridworld(N, slippery), openmp)
        rounds = r["rounds"]
        print(f"{name} (sweeps ours/its {' '.join(sorted(r['sweeps']))}; model handed to "
              f"mdpsolver in {r['handover_s']:.1f} s): |V - ours| {r['diff_tol']:.2e}, "
              f"|V - same| {r['diff_same']:.1e}", flush=True)
        for threads in (1, 2):
            ours, its = rounds[f"ours_{threads}t"], rounds[f"mdps_{threads}t"]
            print(f"  {threads} thread(s): ours {rounds_text(ours)} ms  mdpsolver "
                  f"{rounds_text(its)} ms  x {spread(ratios(its, ours), '{:.1f}')}",
                  flush=True)
        ours, its = rounds["ours_2t"], rounds["mdps_2t"]
        headlines.append(Headline(
            f"value iteration to tol {VI_TOL:g}, {N}x{N} {name}, 2 threads, per sweep",
            f"{statistics.median(ours):.2f} ms", f"mdpsolver (C++) {statistics.median(its):.1f} ms",
            f"{statistics.median(ratios(its, ours)):.1f}x"))
    return headlines


def main() -> list[Headline]:
    cold, warm = compile_seconds(COMPILE_SETUP, COMPILE_CALL)
    print(f"optimality_sweep first call: {cold:.2f} s from an empty numba cache, "
          f"{warm:.2f} s with a warm cache (fresh processes, imports not counted)")
    headlines = print_sweep_table()
    print_methods_table()
    return headlines + print_mdpsolver_table()


if __name__ == "__main__":
    main()
