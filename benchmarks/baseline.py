"""Learners against an earlier version of the library, in the same run.

``BENCH_BASELINE=/path/to/old/tree make bench`` (a ``git worktree add`` of an earlier
commit) makes ``bench_model_free`` run :data:`PROBE` in fresh interpreters on this
tree and on that one, alternately, ``ROUNDS`` times (the machine is shared: the
range over rounds is printed), each with its own numba cache warmed first, and print
the steps per second of each learner and their ratio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from benchmarks.timing import spread

ROUNDS = 3
PROBE = """
import json, time, numba, gymnasium as gym
from tabular import envs
from tabular import TabularMDP, q_learning, sarsa, reinforce
numba.set_num_threads(1)
def rate(run):
    run()
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        steps = run().episode_lengths.sum()
        best = max(best, steps / (time.perf_counter() - t))
    return best
cliff = TabularMDP.from_gymnasium(gym.make("CliffWalking-v1"))
frozen = TabularMDP.from_gymnasium(gym.make("FrozenLake-v1", map_name="8x8"))
grid = gym.make("tabzoo/Gridworld4x4-v0").unwrapped.to_mdp()
print(json.dumps({
    "q_learning CliffWalking": rate(lambda: q_learning(cliff, episodes=20_000)),
    "q_learning FrozenLake 8x8": rate(lambda: q_learning(frozen, episodes=20_000)),
    "sarsa CliffWalking": rate(lambda: sarsa(cliff, episodes=20_000)),
    "reinforce Gridworld4x4": rate(lambda: reinforce(grid, gamma=0.9, episodes=100_000,
                                                     alpha=0.1)),
}))
"""


def rates(tree: str, cache: str) -> dict:
    """Steps per second of each learner of :data:`PROBE` with the library of ``tree``."""
    env = {**os.environ, "PYTHONPATH": tree, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, check=True, cwd=tree,
                         capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def compare_learners(baseline: str) -> None:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs = {"now": [], "baseline": []}
    with tempfile.TemporaryDirectory() as now_cache, tempfile.TemporaryDirectory() as old_cache:
        for _ in range(ROUNDS):
            runs["now"].append(rates(here, now_cache))
            runs["baseline"].append(rates(baseline, old_cache))
    print(f"\nLearners against {baseline} (steps/s on 1 thread, best of 3 calls, "
          f"{ROUNDS} alternating rounds: median [min-max] of the rounds; ratio = now / "
          "baseline per round, median [min-max])")
    for name in runs["now"][0]:
        now = [r[name] for r in runs["now"]]
        old = [r[name] for r in runs["baseline"]]
        ratios = [n / o for n, o in zip(now, old, strict=True)]
        print(f"{name:>28}: now {spread(now, '{:,.0f}')}  baseline {spread(old, '{:,.0f}')}  "
              f"ratio {spread(ratios)}", flush=True)
