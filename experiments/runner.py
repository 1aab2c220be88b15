"""Run experiments, store their numbers and figures, and skip what is already done.

Each experiment is a module of this package with

- ``Config``: a dataclass (one docstring per field) with a ``quick()`` variant;
- ``run(config, executor) -> dict[str, np.ndarray]``: all the computing;
- ``plot(results, out_dir) -> list[Path]``: figures drawn from the numbers alone;
- ``check(results) -> list[str]``: the expectations the numbers failed (empty: all met);
- optionally ``table(results) -> (header, rows)``: a small table, also written as CSV.

For experiment ``NAME`` the runner writes, under ``OUT/NAME/``, ``numbers.npz``,
the PNGs, ``NAME.csv`` for a table, and last ``config.json`` (the config,
``tabular.__version__``, the seed and the outcome of ``check``). Every file is
written atomically, and ``config.json`` is the mark of a finished experiment: an
interrupted run loses nothing that finished, and a rerun with the same config skips it.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import importlib
import io
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np
from tqdm.auto import tqdm

import tabular

from .executor import BACKENDS, make_executor

#: Every experiment, in the order ``make experiments`` runs them.
EXPERIMENTS: tuple[str, ...] = (
    "gridworld_values",
    "policy_evaluation",
    "contraction",
    "gambler",
    "random_walk",
    "windy_gridworld",
    "cliff_walking",
    "short_corridor",
    "trap_treasure",
    "frozenlake",
    "token_rlhf",
    "speed",
)

NUMBERS = "numbers.npz"
CONFIG = "config.json"


def load(name: str) -> ModuleType:
    """The module of experiment ``name``."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
    return importlib.import_module(f"experiments.{name}")


def summary(name: str) -> str:
    """The first line of the experiment's docstring."""
    doc = load(name).__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def make_config(module: ModuleType, quick: bool = False, runs: int | None = None):
    """The experiment's config: full or quick, with ``runs`` overridden if given."""
    config = module.Config.quick() if quick else module.Config()
    if runs is not None and any(f.name == "runs" for f in dataclasses.fields(config)):
        config = dataclasses.replace(config, runs=runs)
    return config


@dataclass
class Outcome:
    """What happened to one experiment."""

    name: str
    skipped: bool
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    files: list[str] = field(default_factory=list)


# ------------------------------------------------------------------ file writing
def atomic_write(path: Path, write) -> None:
    """Call ``write(binary_file)`` on a temp file next to ``path``, then rename it over
    ``path`` (readable by all, like any file written with ``open``: mkstemp's 0600
    would otherwise carry over)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_numbers(path: Path, results: dict) -> None:
    arrays = {key: np.asarray(value) for key, value in results.items()}
    bad = [key for key, value in arrays.items() if value.dtype == object]
    if bad:
        raise TypeError(f"results {bad} are not plain arrays (object dtype); "
                        "an experiment must return numbers or strings")
    atomic_write(path, lambda f: np.savez(f, **arrays))


def save_csv(path: Path, header, rows) -> None:
    def write(f):
        text = io.StringIO()
        writer = csv.writer(text)
        writer.writerow(header)
        writer.writerows(rows)
        f.write(text.getvalue().encode())

    atomic_write(path, write)


def load_numbers(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def save_json(path: Path, payload: dict) -> None:
    text = json.dumps(payload, indent=2, sort_keys=True, default=_jsonable) + "\n"
    atomic_write(path, lambda f: f.write(text.encode()))


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def metadata(name: str, config, quick: bool) -> dict:
    """What ``config.json`` records about a run (before its outcome is known)."""
    return {
        "experiment": name,
        "config": json.loads(json.dumps(dataclasses.asdict(config), default=_jsonable)),
        "quick": quick,
        "seed": getattr(config, "seed", None),
        "version": tabular.__version__,
    }


def finished(out_dir: Path, meta: dict) -> dict | None:
    """The stored record if ``out_dir`` holds a finished run of exactly ``meta``."""
    try:
        stored = json.loads((out_dir / CONFIG).read_text())
    except (OSError, ValueError):
        return None
    same = all(stored.get(key) == meta[key] for key in meta)
    return stored if same and (out_dir / NUMBERS).exists() else None


# ------------------------------------------------------------------ running
def run_experiment(name: str, out: Path, executor, quick: bool = False,
                   runs: int | None = None, force: bool = False) -> Outcome:
    """Run (or skip) one experiment and write its files under ``out/name``."""
    module = load(name)
    config = make_config(module, quick, runs)
    out_dir = Path(out) / name
    meta = metadata(name, config, quick)
    stored = None if force else finished(out_dir, meta)
    if stored is not None:
        return Outcome(name, skipped=True, failures=stored.get("failed_checks", []),
                       files=stored.get("files", []))
    began = time.perf_counter()
    results = module.run(config, executor)
    save_numbers(out_dir / NUMBERS, results)
    numbers = load_numbers(out_dir / NUMBERS)  # draw exactly what was stored
    figures = module.plot(numbers, out_dir)
    files = [NUMBERS] + [Path(p).name for p in figures]
    if hasattr(module, "table"):
        save_csv(out_dir / f"{name}.csv", *module.table(numbers))
        files.append(f"{name}.csv")
    failures = list(module.check(numbers))
    seconds = time.perf_counter() - began
    save_json(out_dir / CONFIG, {**meta, "failed_checks": failures, "files": files,
                                 "seconds": round(seconds, 2)})
    return Outcome(name, skipped=False, failures=failures, seconds=seconds, files=files)


def replot(name: str, out: Path) -> list[Path]:
    """Redraw an experiment's figures from its stored numbers (no recomputing)."""
    out_dir = Path(out) / name
    if not (out_dir / NUMBERS).exists():
        raise FileNotFoundError(f"{out_dir / NUMBERS} does not exist: run {name} first")
    return load(name).plot(load_numbers(out_dir / NUMBERS), out_dir)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m experiments",
        description="Run the experiments and write their figures and numbers.")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="experiments to run (default: all; see --list)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: every experiment in about a minute")
    parser.add_argument("--out", type=Path, default=Path("results"),
                        help="output directory (default: results)")
    parser.add_argument("--runs", type=int, default=None,
                        help="override the number of independent runs of every experiment")
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="where sweeps run: in this process or on Ray")
    parser.add_argument("--force", action="store_true",
                        help="recompute experiments that already finished")
    parser.add_argument("--replot", action="store_true",
                        help="redraw figures from stored numbers without recomputing")
    parser.add_argument("--list", action="store_true", help="list the experiments and exit")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in EXPERIMENTS]
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}; known: "
                     f"{', '.join(EXPERIMENTS)}")
    if args.runs is not None and args.runs < 1:
        parser.error(f"--runs must be >= 1, got {args.runs}")
    return args


def main(argv=None) -> int:
    """Command line entry point; returns 1 if any experiment failed its checks."""
    args = parse_args(argv)
    names = args.names or list(EXPERIMENTS)
    if args.list:
        width = max(map(len, EXPERIMENTS), default=0)
        for name in EXPERIMENTS:
            print(f"{name:<{width}}  {summary(name)}")
        return 0
    if args.replot:
        for name in names:
            for path in replot(name, args.out):
                print(path)
        return 0
    executor = make_executor(args.backend)
    outcomes = []
    try:
        bar = tqdm(names, desc="experiments", unit="exp")
        for name in bar:
            bar.set_postfix_str(name)
            outcome = run_experiment(name, args.out, executor, quick=args.quick,
                                     runs=args.runs, force=args.force)
            outcomes.append(outcome)
            state = "skipped (finished before)" if outcome.skipped else f"{outcome.seconds:.1f} s"
            verdict = "checks failed" if outcome.failures else "checks passed"
            tqdm.write(f"{name}: {state}, {verdict}")
            for failure in outcome.failures:
                tqdm.write(f"  FAILED: {failure}")
    finally:
        executor.close()
    print(f"results in {args.out.resolve()}")
    return 1 if any(o.failures for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
