"""Compile seconds as a share of a run from an empty numba cache (opt-in:
``python -m benchmarks compile_share`` for the first two, or ``python -m
benchmarks.compile_share test``, ``... experiments`` or ``... full``; minutes).

Runs the test suite as ``make test`` does (``pytest -n 2 --dist worksteal``),
``python -m tabular.experiments --quick`` or the whole ``python -m tabular.experiments``
(``full``) in a
fresh numba cache, with every Python process timing its numba compilations
(:mod:`benchmarks.compile_clock`); then runs it again on the cache the first run left
behind. Reported: the wall time of each run, the compile seconds
summed over the processes, their share of the processes' time (wall time x workers),
the seconds spent compiling what another process had compiled too, and the kernels
that took longest to compile.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

CLOCK = pathlib.Path(__file__).with_name("compile_clock")
RUNS = {
    "test": ([sys.executable, "-m", "pytest", "-n", "2", "--dist", "worksteal", "-q", "-p",
              "no:cacheprovider"], 2),
    "experiments": ([sys.executable, "-m", "tabular.experiments", "--quick"], 1),
    "full": ([sys.executable, "-m", "tabular.experiments"], 1),
}
DEFAULT = ["test", "experiments"]


def timed_run(command: list[str], cache: str) -> tuple[float, dict]:
    """``(wall seconds, {kernel: [(compile seconds, argument types), ...]})`` of
    ``command`` (experiments write to a fresh directory: a rerun into the same one
    would skip them)."""
    with tempfile.TemporaryDirectory() as clock_dir, tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "COMPILE_CLOCK_DIR": clock_dir,
               "PYTHONPATH": os.pathsep.join([str(CLOCK), os.getcwd(),
                                              os.environ.get("PYTHONPATH", "")])}
        if "experiments" in command:
            command = [*command, "--out", out]
        t = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t
        kernels: dict[str, list] = {}
        for path in pathlib.Path(clock_dir).glob("*.json"):
            for name, compilations in json.loads(path.read_text()).items():
                kernels.setdefault(name, []).extend(compilations)
    return wall, kernels


def repeated_seconds(compilations: list) -> float:
    """The seconds of a kernel's compilations for argument types it was already compiled
    for in another process (both missed the cache): all but the first of each type."""
    first: dict[str, float] = {}
    for seconds, types in compilations:
        first.setdefault(types, seconds)
    return sum(seconds for seconds, _ in compilations) - sum(first.values())


def main(names: list[str] | None = None) -> None:
    for name in names or DEFAULT:
        command, workers = RUNS[name]
        with tempfile.TemporaryDirectory() as cache:
            cold, kernels = timed_run(command, cache)
            warm, _ = timed_run(command, cache)
        compiled = sum(seconds for runs in kernels.values() for seconds, _ in runs)
        repeated = sum(repeated_seconds(runs) for runs in kernels.values())
        print(f"{name}: {cold:.0f} s from an empty numba cache, {warm:.0f} s warm; compile "
              f"{compiled:.0f} s summed over {workers} process(es) = "
              f"{100 * compiled / (cold * workers):.0f}% of their time ({repeated:.0f} s "
              "compiling what another process compiled too)", flush=True)
        slowest = sorted(kernels.items(), key=lambda item: -sum(s for s, _ in item[1]))[:15]
        print("  slowest to compile (seconds, compilations, distinct argument types): "
              + ", ".join(f"{k.split('.', 1)[1]} {sum(s for s, _ in runs):.1f} s "
                          f"({len(runs)}, {len({t for _, t in runs})})"
                          for k, runs in slowest), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
