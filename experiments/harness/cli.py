"""The command line, ``python -m tabular.experiments``: its arguments, what it prints and
its exit statuses."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import itertools
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

from tqdm.auto import tqdm

from tabular.experiments.harness import gallery, registry
from tabular.experiments.harness.executor import BACKENDS, RAY_MISSING, make_executor
from tabular.experiments.harness.registry import EXPERIMENTS
from tabular.experiments.harness.runner import (
    NotFinished,
    Outcome,
    PlotFailed,
    SettingRefused,
    replot,
    run_experiment,
)
from tabular.experiments.harness.settings import sequence_type, shown, type_name
from tabular.experiments.harness.storage import Busy, WriteError

PROG = "python -m tabular.experiments"


def out_path(text: str) -> Path:
    """``--out``'s value: a directory, not ``""`` (which ``Path`` reads as ``.``; an unset
    shell variable gives it)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"takes a directory, got {text!r}")
    return Path(text)


def wait_seconds(text: str) -> float:
    """``--wait``'s value: a number of seconds >= 0 (``inf``: as long as it takes)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"takes a number of seconds >= 0, got {text!r}")
    return value


#: The options ``--replot`` cannot honour: it draws the stored numbers of the stored config.
NOT_WITH_REPLOT = (("force", "--force"), ("settings", "--set"), ("runs", "--runs"))


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run the experiments and write their figures and numbers.")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="experiments to run (default: all; see --list)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: every experiment in about a minute")
    parser.add_argument("--out", type=out_path, default=Path("results"),
                        help="output directory (default: results)")
    parser.add_argument("--runs", type=int, default=None,
                        help="override the number of independent runs of every experiment")
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="where sweeps run: in this process or on Ray")
    parser.add_argument("--force", action="store_true",
                        help="recompute experiments that already finished")
    parser.add_argument("--replot", action="store_true",
                        help="redraw figures from stored numbers without recomputing")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="set a Config field of the named experiments (repeatable; "
                             "NAME --help lists the fields); a comma list given to a "
                             "one-value field sweeps it, each point into OUT/NAME@KEY=VALUE")
    parser.add_argument("--wait", type=wait_seconds, default=None, metavar="SECONDS",
                        help="how long to wait for another run that is writing an "
                             "experiment's folder (default: as long as it takes; 0: refuse "
                             "at once)")
    parser.add_argument("--list", action="store_true", help="list the experiments and exit")
    argv = sys.argv[1:] if argv is None else list(argv)
    named = [a for a in argv if a in EXPERIMENTS]
    if named and ("-h" in argv or "--help" in argv):
        print(settings_help(named), end="")
        parser.exit()
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in EXPERIMENTS]
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}; known: "
                     f"{', '.join(EXPERIMENTS)}")
    if args.runs is not None and args.runs < 1:
        parser.error(f"--runs must be >= 1, got {args.runs}")
    if args.backend == "ray" and importlib.util.find_spec("ray") is None:
        parser.exit(2, f"{parser.prog}: error: {RAY_MISSING}\n")  # one line, no usage
    args.settings = {}
    for item in args.set:
        key, equals, value = item.partition("=")
        key = key.strip()
        if not equals or not key:
            parser.error(f"--set takes KEY=VALUE, got {item!r}")
        if key in args.settings:
            parser.error(f"--set {key} given twice ({args.settings[key]!r} and {value!r})")
        args.settings[key] = value
    if args.replot:
        given = [option for key, option in NOT_WITH_REPLOT if getattr(args, key)]
        if given:
            parser.error(f"--replot draws the stored numbers of the stored config; "
                         f"{given[0]} cannot apply to it")
    if args.settings and not args.names:
        parser.error("--set needs the experiment(s) it applies to: python -m tabular.experiments "
                     "NAME --set KEY=VALUE")
    args.points = {}
    for name in args.names:
        module = registry.load(name)
        try:
            args.points[name] = sweep(module, args.settings)
            for _, point in args.points[name]:
                registry.make_config(module, args.quick, args.runs, point)
        except ValueError as err:  # one line, no usage: the setting is named
            parser.exit(2, f"{parser.prog}: error: {err}\n")
    if args.replot and not args.out.is_dir():
        parser.error(f"--out {args.out} is not a directory: nothing to replot")
    problem = "" if args.list or args.replot else unwritable(args.out)
    if problem:  # last: the probe creates OUT, which only a run that will start should do
        parser.error(f"--out {args.out}: {problem}")
    return args


def sweep(module, settings: dict[str, str]) -> list[tuple[str | None, dict[str, str]]]:
    """The runs that ``--set`` asks of experiment ``module``: ``[(folder, settings)]``.

    A comma-separated list given to a setting that holds one value (``--set
    alpha=0.1,0.5``) is a sweep: one run per value (per combination, when several
    settings list values), each into its own folder ``NAME@alpha=0.1`` (``NAME@alpha=0.1
    @epsilon=0.2`` for two; the folder names the swept settings only). A setting that
    holds a sequence takes its list as one value (``--set td_alphas=0.05,0.1``). Without
    a sweep there is one run, into ``NAME`` (folder ``None``)."""
    name = module.__name__.rsplit(".", 1)[-1]
    fields = registry.config_fields(module)
    swept = {key: [part.strip() for part in text.split(",")] for key, text in settings.items()
             if key in fields and sequence_type(fields[key][0])[0] is None
             and fields[key][0] is not str and "," in text}
    if not swept:
        return [(None, dict(settings))]
    points = []
    for values in itertools.product(*swept.values()):
        point = dict(zip(swept, values, strict=True))
        folder = "@".join([name, *(f"{key}={value}" for key, value in point.items())])
        points.append((folder, {**settings, **point}))
    return points


def unwritable(out: Path) -> str:
    """Why the experiments could not write under ``out`` (``""``: they can), checked
    before anything is computed by creating ``out`` and a file in it (permissions alone
    do not tell, e.g. for root)."""
    existing = Path(out).absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a directory"
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as err:
        return f"cannot write there ({err.strerror or err})"
    return ""


def settings_help(names) -> str:
    """Each named experiment's settings (its ``Config`` fields), with types, full and
    quick defaults and docstrings: what ``python -m tabular.experiments NAME --help`` prints."""
    lines = []
    for name in names:
        module = registry.load(name)
        full, quick = module.Config(), module.Config.quick()
        lines.append(fill(f"{name}: ", registry.summary(name)))
        lines.append("settings (--set KEY=VALUE):")
        for key, (kind, doc) in registry.config_fields(module).items():
            default = getattr(full, key)
            small = getattr(quick, key)
            extra = "" if small == default else f", --quick {shown(small)}"
            lines.append(f"  {key} ({type_name(kind)}, default {shown(default)}{extra})")
            if doc:
                lines.append(textwrap.indent(textwrap.fill(doc, 76), "      "))
        lines.append("")
    return "\n".join(lines) + "\n"


def fill(head: str, text: str) -> str:
    """``head`` then ``text`` wrapped to the terminal's width, continued under the text."""
    width = max(shutil.get_terminal_size().columns, len(head) + 30)
    return textwrap.fill(text, width, initial_indent=head, subsequent_indent=" " * len(head),
                         break_on_hyphens=False)


#: The exit status of a run that another run's lock kept out (``--wait``): EX_TEMPFAIL
#: of sysexits.h, "try again later".
BUSY = 75


#: The exit status of a run that could not write its files (a full disk): EX_IOERR.
WRITE_FAILED = 74


#: The exit status of a command whose reader closed the pipe (128 + SIGPIPE, as a shell
#: reports for a tool that the signal stopped).
PIPE_CLOSED = 141


def main(argv=None) -> int:
    """Command line entry point; returns 1 if a check that applied failed or a figure
    could not be drawn (its numbers are kept). A closed output pipe (``--list | head
    -1``) ends it quietly, with :data:`PIPE_CLOSED`; a folder another run held past
    ``--wait``, a file that could not be written, a setting the library refused, or a
    ``--replot`` of a run that is not there or is damaged, with one line on stderr and
    :data:`BUSY`, :data:`WRITE_FAILED` or 2."""
    try:
        status = command(argv)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except (Busy, WriteError, NotFinished, SettingRefused, PlotFailed) as err:
        tqdm.write(f"{PROG}: error: {err}", file=sys.stderr)
        return {Busy: BUSY, WriteError: WRITE_FAILED, NotFinished: 2, SettingRefused: 2,
                PlotFailed: 1}[type(err)]
    except BrokenPipeError:
        # what is left to print goes nowhere, so that exiting does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return PIPE_CLOSED


def command(argv=None) -> int:
    """What :func:`main` runs: parse the arguments, then list, replot or run."""
    args = parse_args(argv)
    names = args.names or list(EXPERIMENTS)
    if args.list:
        width = max(map(len, EXPERIMENTS), default=0)
        for name in EXPERIMENTS:
            print(fill(f"{name:<{width}}  ", registry.summary(name)))
        return 0
    if args.replot:
        for name in names:
            for path in replot(name, args.out, args.wait):
                print(path)
        gallery.write(args.out, EXPERIMENTS)
        return 0
    runs = [(name, folder, point) for name in names
            for folder, point in args.points.get(name, [(None, {})])]
    executor = make_executor(args.backend)
    outcomes = []
    try:
        bar = tqdm(runs, desc="experiments", unit="exp")
        for name, folder, point in bar:
            bar.set_postfix_str(folder or name)
            outcome = run_experiment(name, args.out, executor, quick=args.quick,
                                     runs=args.runs, force=args.force,
                                     settings=point, wait=args.wait, folder=folder)
            outcomes.append(outcome)
            report(outcome, args.out / (folder or name))
    finally:
        executor.close()
    index, _ = gallery.write(args.out, EXPERIMENTS)
    print(f"results in {args.out.resolve()}; gallery {index.resolve()}")
    return 1 if any(o.failures or o.plot_error for o in outcomes) else 0


def report(outcome: Outcome, folder: Path) -> None:
    """What the command line says about one run, below the progress bar."""
    state = "skipped (finished before)" if outcome.skipped else f"{outcome.seconds:.1f} s"
    verdict = "checks failed" if outcome.failures else "checks passed"
    skipped = outcome.not_applicable
    if skipped:
        verdict += f" ({len(skipped)} not applicable)"
    tqdm.write(f"{folder.name}: {state}, {verdict}")
    if outcome.plot_error:
        again = (f": {PROG} --replot {outcome.name} draws them again"
                 if folder.name == outcome.name else "")
        tqdm.write(f"  FIGURES NOT DRAWN ({outcome.plot_error}); the numbers are kept in "
                   f"{folder}{again}")
    for failure in outcome.failures:
        tqdm.write(f"  FAILED: {failure}")
    for v in skipped:
        tqdm.write(f"  {v.describe()}")


if __name__ == "__main__":
    sys.exit(main())
