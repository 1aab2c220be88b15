"""Run one experiment, store its numbers and figures, and skip what is already done.

What an experiment is: :mod:`tabular.experiments.harness.registry`. For experiment
``NAME`` the runner writes, under ``OUT/NAME/``, ``numbers.npz``, the PNGs, ``NAME.csv``
for a table, and last ``config.json`` (the config and the settings a run overrode,
``tabular.__version__``, the seed, each check's verdict and comparisons,
``failed_checks`` (the failures of the checks that applied), what the experiment
reproduces, the commit, the date, the run time and the SHA-256 of every file:
:mod:`~tabular.experiments.harness.provenance`). After running, the command line
(:mod:`~tabular.experiments.harness.cli`) rewrites the gallery ``OUT/index.html`` and
``OUT/checks.md`` from every record under ``OUT``
(:mod:`~tabular.experiments.harness.gallery`). The directory changes as a whole
(:mod:`~tabular.experiments.harness.storage`): an interrupted run leaves the previous
results untouched, and a rerun with the same config skips an experiment only when its
files are exactly the ones its record describes.

One run at a time writes an experiment's directory: a run takes the directory's lock
before it looks at what is there, and holds it until it has published. A second run
into the same directory waits, saying once on stderr which process holds it, and
then finds the first run's results: with the same config it skips, with another it
recomputes. Waiting is the default because two ``make experiments`` in two terminals
then both succeed and the second computes nothing twice; ``--wait SECONDS`` bounds the
wait and ``--wait 0`` refuses at once. Every run stages in a directory of its own,
created before computing (a full disk or a read-only ``OUT`` shows then, not after
the computation), and removed when the run fails. A file that cannot be written stops
the run with an error naming it.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from tqdm.auto import tqdm

from tabular.experiments.harness import registry
from tabular.experiments.harness.checks import NOT_APPLICABLE, Verdict, failures_of, judge
from tabular.experiments.harness.executor import LocalExecutor
from tabular.experiments.harness.provenance import metadata, provenance
from tabular.experiments.harness.settings import shown
from tabular.experiments.harness.storage import (
    CONFIG,
    NUMBER_SUFFIXES,
    NUMBERS,
    digest,
    digests,
    discard,
    finished,
    load_numbers,
    lock,
    publish,
    recover,
    save_csv,
    save_json,
    save_numbers,
    staging,
)


@dataclass
class Outcome:
    """What happened to one experiment."""

    name: str
    skipped: bool
    failures: list[str] = field(default_factory=list)
    """The failures of the checks that applied."""
    seconds: float = 0.0
    files: list[str] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    """Every check's verdict, the ones that did not apply included."""
    plot_error: str | None = None
    """Why the figures could not be drawn (``None``: they were); the numbers are kept."""

    @property
    def not_applicable(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status == NOT_APPLICABLE]


def waiting(line: str) -> None:
    """Say on stderr, once, that a run waits for another run's lock."""
    tqdm.write(f"{line} (Ctrl-C to stop)", file=sys.stderr)


def check_wait(wait) -> None:
    """``wait`` is ``None`` or a number of seconds >= 0 (``inf``: as long as ``None``)."""
    if wait is not None and (isinstance(wait, bool) or not isinstance(wait, int | float)
                             or not wait >= 0):
        raise ValueError(f"wait must be None or a number of seconds >= 0, got {wait!r}")


class SettingRefused(ValueError):
    """A run that the library refused for a value of a setting the run changed: one line
    naming the experiment and those settings, then the library's reason."""


def refused_by_library(err: BaseException) -> bool:
    """Whether ``err`` was raised by the library's own code (a check at its boundary),
    not by an experiment's or by a package below it."""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    module = "" if tb is None else tb.tb_frame.f_globals.get("__name__", "")
    return module.startswith("tabular.") and not module.startswith("tabular.experiments")


def run_experiment(name: str, out: Path = Path("results"), executor=None, quick: bool = False,
                   runs: int | None = None, force: bool = False,
                   settings: dict | None = None, wait: float | None = None,
                   folder: str | None = None) -> Outcome:
    """Run (or skip) one experiment and write its files under ``out/folder`` (default
    ``out/name``): what ``python -m tabular.experiments NAME`` does. ``settings`` sets
    ``Config`` fields (as ``--set``); ``executor`` defaults to a serial
    :class:`LocalExecutor`. While another run holds the folder this one waits, up to
    ``wait`` seconds (``None``: as long as it takes), then raises
    :class:`~tabular.experiments.harness.storage.Busy` naming the holder. A value that the
    library refuses raises :class:`SettingRefused`; figures that cannot be drawn leave
    the numbers published and say why in :attr:`Outcome.plot_error`."""
    check_wait(wait)
    module = registry.load(name)
    config = registry.make_config(module, quick, runs, settings)
    out_dir = Path(out) / (folder or name)
    meta = metadata(name, config, quick)
    with lock(out_dir, wait, waiting):
        recover(out_dir)
        stored = None if force else finished(out_dir, meta)
        if stored is not None:
            return Outcome(name, skipped=True, failures=stored.get("failed_checks", []),
                           files=stored.get("files", []),
                           verdicts=[Verdict.from_record(r) for r in stored.get("checks", [])],
                           plot_error=stored.get("plot_error"))
        stage = staging(out_dir)
        try:
            return compute(module, config, quick, stage, out_dir, meta, executor)
        except BaseException:
            discard(stage, out_dir)  # keeps it only if it holds a finished computation
            raise


def compute(module: ModuleType, config, quick: bool, stage: Path, out_dir: Path, meta: dict,
            executor) -> Outcome:
    """Compute an experiment, write its files into ``stage``, and publish ``stage`` as
    ``out_dir``; :func:`run_experiment` holds the lock of ``out_dir``."""
    name = meta["experiment"]
    began = time.perf_counter()
    try:
        results = module.run(config, executor or LocalExecutor())
    except (ValueError, TypeError, OverflowError) as err:
        changed = registry.overrides(module, config, quick)
        if changed and refused_by_library(err):
            given = " ".join(f"{key}={shown(value)}" for key, (value, _) in changed.items())
            raise SettingRefused(f"{name} --set {given}: {err}") from err
        raise
    save_numbers(stage / NUMBERS, results)
    numbers = load_numbers(stage / NUMBERS)  # draw exactly what was stored
    figures, plot_error = draw(module, numbers, stage, config)
    files = [NUMBERS] + [Path(p).name for p in figures]
    if hasattr(module, "table"):
        save_csv(stage / f"{name}.csv", *module.table(numbers))
        files.append(f"{name}.csv")
    verdicts = judge(module, numbers, config, quick)
    failures = failures_of(verdicts)
    seconds = time.perf_counter() - began
    save_json(stage / CONFIG, {**meta, **provenance(module, config, quick),
                               "plot_error": plot_error,
                               "checks": [v.record() for v in verdicts],
                               "failed_checks": failures, "files": files,
                               "digests": digests(stage, files), "seconds": round(seconds, 2)})
    publish(stage, out_dir)
    return Outcome(name, skipped=False, failures=failures, seconds=seconds, files=files,
                   verdicts=verdicts, plot_error=plot_error)


def draw(module: ModuleType, numbers: dict, stage: Path, config) -> tuple[list, str | None]:
    """The experiment's figures drawn into ``stage``, and ``None``; or, when the drawing
    code fails (not the disk), no figures and why (the figures it had drawn are
    removed): a computation is worth keeping though its figure is not (``--replot``
    draws it again)."""
    try:
        return module.plot(numbers, stage, config), None
    except OSError:  # a file that could not be written stops the run (WriteError)
        raise
    except Exception as err:  # any failure of the drawing code, which the numbers outlive
        for path in stage.iterdir():
            if path.name != NUMBERS:
                path.unlink()
        return [], f"{type(err).__name__}: {err}"


class NotFinished(FileNotFoundError):
    """``--replot`` of an experiment that has no finished, intact run to redraw."""


class PlotFailed(RuntimeError):
    """``--replot`` whose figures could not be drawn from the stored numbers."""


def intact_numbers(out_dir: Path, stored) -> bool:
    """Whether the record ``stored`` of ``out_dir`` lists the numbers with digests and
    every file of numbers has its digest (the figures, which a replot redraws, may be
    missing)."""
    if not isinstance(stored, dict) or not isinstance(stored.get("digests"), dict):
        return False
    kept = [f for f in stored["digests"] if str(f).endswith(NUMBER_SUFFIXES)]
    try:
        return NUMBERS in kept and all(digest(out_dir / f) == stored["digests"][f]
                                       for f in kept)
    except OSError:
        return False


def replot(name: str, out: Path, wait: float | None = None) -> list[Path]:
    """Redraw an experiment's figures from its stored numbers (no recomputing), holding
    the directory's lock as :func:`run_experiment` does, and publish them with the
    numbers and an updated record as a run does. A folder whose record or numbers
    are missing or do not match their digests raises :class:`NotFinished`; figures that
    cannot be drawn raise :class:`PlotFailed`."""
    check_wait(wait)
    out_dir = Path(out) / name
    if not Path(out).is_dir():  # taking the lock would create it
        raise NotFinished(f"{out} is not a directory: run {name} first")
    with lock(out_dir, wait, waiting):
        recover(out_dir)
        try:
            stored = json.loads((out_dir / CONFIG).read_text())
        except (OSError, ValueError) as err:
            raise NotFinished(f"{out_dir} holds no finished run of {name} ({err}): "
                              "run it first") from None
        if not intact_numbers(out_dir, stored):
            raise NotFinished(f"{out_dir} holds a damaged run of {name} (its numbers do not "
                              "match the digests of its record): run it again with --force")
        numbers = load_numbers(out_dir / NUMBERS)
        module = registry.load(name)
        config = dataclasses.replace(module.Config(), **stored["config"])
        stage = staging(out_dir)
        try:
            figures, plot_error = draw(module, numbers, stage, config)
            if plot_error is not None:
                raise PlotFailed(f"{name}: the figures could not be drawn from "
                                 f"{out_dir / NUMBERS}: {plot_error}")
            kept = [f for f in stored["digests"] if f.endswith(NUMBER_SUFFIXES)]
            for name_kept in kept:
                shutil.copy2(out_dir / name_kept, stage / name_kept)
            files = kept + [Path(p).name for p in figures]
            save_json(stage / CONFIG, {**stored, "files": files, "plot_error": None,
                                       "digests": digests(stage, files)})
            publish(stage, out_dir)
        except BaseException:
            discard(stage, out_dir)
            raise
        return [out_dir / Path(p).name for p in figures]
