"""Value-iteration sweeps on a 1000 x 1000 open gridworld (10^6 states, 4 actions).

-1 per step, the goal in the bottom-right corner ends the episode, gamma 0.99;
deterministic moves (K = 1) and slippery ones (K = 3: the intended direction or
either perpendicular one, 1/3 each, as FrozenLake). The model arrays are built
directly with NumPy.

Reported, from one run of this process:

- compile time of the sweep kernel from an empty numba cache, and the start
  with a warm cache (each in a fresh subprocess);
- ms per synchronous sweep on 1 and 2 threads (best of several), and per
  Gauss-Seidel sweep (sequential);
- achieved bandwidth: the bytes a sweep must touch (successor, prob and reward
  once, V read once, the new V written once) / time, against a NumPy copy of a
  large array measured in the same run (read + write bytes / time); the one-off
  cost of deriving ``successor`` from ``next_state`` and ``done`` is printed too;
- the ratio to mdptoolbox-hiive's Bellman operator (``ValueIteration``'s
  per-sweep work, ``_bellmanOperator``, on scipy.sparse matrices built
  directly) on the same V, after checking that both sweeps give the same
  numbers.
"""

from __future__ import annotations

import os
import time

import numba
import numpy as np

from benchmarks.timing import compile_seconds
from tabular import TabularMDP
from tabular import dp_kernels as kernels
from tabular.dp import _planning_arrays  # what every DP function hands its kernels

N = 1000
GAMMA = 0.99
MOVES = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)])  # up, right, down, left


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
from tabular import dp_kernels as k
ns = np.zeros((2, 2, 1), np.int64); p = np.ones((2, 2, 1)); r = -p
"""
COMPILE_CALL = "k.optimality_sweep(ns, p, r, np.zeros(3), 0.9, np.zeros(3))"


def sweep_bytes(arrays) -> int:
    return sum(a.nbytes for a in arrays) + 2 * (arrays[0].shape[0] + 1) * 8


def bench_model(name: str, mdp: TabularMDP, copy_bw: float) -> dict:
    from hiive.mdptoolbox.mdp import MDP, ValueIteration

    t = time.perf_counter()
    arrays = _planning_arrays(mdp, GAMMA)
    row = {"model": name, "K": mdp.n_outcomes, "ms_prepare": 1e3 * (time.perf_counter() - t)}
    rng = np.random.default_rng(0)
    V = np.append(rng.uniform(-100.0, 0.0, mdp.n_states), 0.0)  # + the end sentinel
    V[-2] = 0.0  # the goal: both formulations agree on it
    out = np.zeros_like(V)
    threads_before = numba.get_num_threads()
    for threads in (1, 2):
        numba.set_num_threads(threads)
        row[f"ms_{threads}t"] = 1e3 * best_seconds(
            lambda: kernels.optimality_sweep(*arrays, V, GAMMA, out), 10)
    numba.set_num_threads(threads_before)
    W = V.copy()
    row["ms_gs"] = 1e3 * best_seconds(
        lambda: kernels.optimality_sweep_inplace(*arrays, W, GAMMA), 3)

    P, R = toolbox_model(mdp)
    # ValueIteration's constructor also bounds the iteration count, which takes seconds
    # at 10^4 states (minutes at 10^6); the sweep needs only MDP's own set-up of P and R
    vi = ValueIteration.__new__(ValueIteration)
    MDP.__init__(vi, P, R, GAMMA, epsilon=0.01, max_iter=1000, skip_check=True)
    row["ms_toolbox"] = 1e3 * best_seconds(lambda: vi._bellmanOperator(V[:-1]), 5)
    kernels.optimality_sweep(*arrays, V, GAMMA, out)
    row["max_diff"] = float(np.max(np.abs(vi._bellmanOperator(V[:-1])[1] - out[:-1])))
    nbytes = sweep_bytes(arrays)
    for threads in (1, 2):
        bw = nbytes / (row[f"ms_{threads}t"] / 1e3)
        row[f"bw_{threads}t"] = bw
        row[f"bw_frac_{threads}t"] = bw / copy_bw
    row["mb"] = nbytes / 1e6
    return row


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
    header = (f"{'model':<14}{'MB/sweep':>9}{'1 thr ms':>10}{'2 thr ms':>10}{'G-S ms':>9}"
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


if __name__ == "__main__":
    main()
