"""Run experiments, store their numbers and figures, and skip what is already done.

Each experiment is a module of this package with

- ``Config``: a :class:`~tabular.experiments.settings.Settings` dataclass (one docstring per
  field) with a ``quick()`` variant;
- ``run(config, executor) -> dict[str, np.ndarray]``: all the computing;
- ``plot(results, out_dir) -> list[Path]``: figures drawn from the numbers alone;
- its checks, functions ``(results) -> list[Measure]`` marked with
  :func:`tabular.experiments.checks.check` and the settings each holds at: every comparison
  made, each with its published or exact value, measured value and tolerance;
- optionally ``table(results) -> (header, rows)``: a small table, also written as CSV.

For experiment ``NAME`` the runner writes, under ``OUT/NAME/``, ``numbers.npz``,
the PNGs, ``NAME.csv`` for a table, and last ``config.json`` (the config and the
settings a run overrode, ``tabular.__version__``, the seed, each check's verdict and
comparisons, ``failed_checks`` (the failures of the checks that applied), what the
experiment reproduces, the commit, the date, the run time and the SHA-256 of every
file). After running, the command line rewrites the gallery ``OUT/index.html`` and
``OUT/checks.md`` from every record under ``OUT`` (:mod:`tabular.experiments.gallery`).
The directory changes as a whole (:mod:`tabular.experiments.storage`): an interrupted
run leaves the previous results untouched, and a rerun with the same config skips an
experiment only when its files are exactly the ones its record describes.

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

Any field of an experiment's ``Config`` can be set from the command line
(``--set epsilon=0.2``, typed from the field) or from Python
(``run_experiment("cliff_walking", "results", settings={"epsilon": 0.2})``); both
write the same files. A check that depends on a setting the run changed is reported
not applicable rather than run (:mod:`tabular.experiments.checks`).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import importlib
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import typing
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from tqdm.auto import tqdm

import tabular

from . import gallery
from .checks import NOT_APPLICABLE, Verdict, failures_of, judge
from .executor import BACKENDS, RAY_MISSING, LocalExecutor, make_executor
from .settings import check_value, parse_value, shown, type_name
from .storage import (
    CONFIG,
    NUMBERS,
    Busy,
    WriteError,
    digests,
    finished,
    jsonable,
    load_numbers,
    lock,
    publish,
    recover,
    save_csv,
    save_json,
    save_numbers,
    staging,
)

#: Every experiment, in the order ``make experiments`` runs them.
EXPERIMENTS: tuple[str, ...] = (
    "bandits",
    "tic_tac_toe",  # chapter 1; bandits stays first, as the runner tests use it
    "gridworld_values",
    "policy_evaluation",
    "contraction",
    "gambler",
    "car_rental",
    "blackjack",
    "racetrack",
    "random_walk",
    "batch_walk",
    "n_step_walk",
    "dyna_maze",
    "prioritized_sweeping",
    "expected_vs_sample",
    "trajectory_sampling",
    "lambda_walk",
    "state_aggregation",
    "n_step_aggregation",
    "fourier_polynomial",
    "tile_coding_walk",
    "mountain_car",
    "baird",
    "access_control",
    "gradient_td",
    "windy_gridworld",
    "cliff_walking",
    "cliff_alpha",
    "maximization_bias",
    "short_corridor",
    "short_corridor_baseline",
    "trap_treasure",
    "frozenlake",
    "token_rlhf",
    "process_rewards",
    "grpo_stationary",
    "grpo_kl_estimators",
    "grpo_length_bias",
    "grpo_clip_higher",
    "grpo_group_size",
    "grpo_token_sequence",
    "rlhf_leaderboard",
    "speed",
)


def load(name: str) -> ModuleType:
    """The module of experiment ``name``."""
    if name not in EXPERIMENTS:
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
    return importlib.import_module(f"tabular.experiments.{name}")


def summary(name: str) -> str:
    """The experiment's description: the first paragraph of its docstring, on one line."""
    doc = (load(name).__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split())


def config_fields(module: ModuleType) -> dict[str, tuple[type, str]]:
    """``{field: (type, docstring)}`` of an experiment's ``Config``, in order."""
    hints = typing.get_type_hints(module.Config)
    body = ast.parse(textwrap.dedent(inspect.getsource(module.Config))).body[0].body
    docs = {node.target.id: after.value.value
            for node, after in zip(body, body[1:], strict=False)
            if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)}
    return {f.name: (hints[f.name], docs.get(f.name, ""))
            for f in dataclasses.fields(module.Config)}


def make_config(module: ModuleType, quick: bool = False, runs: int | None = None,
                settings: dict | None = None):
    """The experiment's config: full or quick, with ``runs`` and ``settings`` (field ->
    value; a string is parsed as the field's type, anything else must have it) applied.
    Unknown fields are an error that lists the valid ones."""
    config = module.Config.quick() if quick else module.Config()
    fields = config_fields(module)
    if runs is not None and (isinstance(runs, bool) or not isinstance(runs, int) or runs < 1):
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    if runs is not None and "runs" in fields:
        config = dataclasses.replace(config, runs=runs)
    settings = dict(settings or {})
    unknown = sorted(set(settings) - set(fields))
    if unknown:
        raise ValueError(f"{module.__name__.rsplit('.', 1)[-1]} has no setting "
                         f"{', '.join(unknown)}; its settings are {', '.join(fields)}")
    values = {key: parse_value(key, fields[key][0], value)
              if isinstance(value, str) and fields[key][0] is not str
              else check_value(key, fields[key][0], value) for key, value in settings.items()}
    return dataclasses.replace(config, **values)


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

    @property
    def not_applicable(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status == NOT_APPLICABLE]


def metadata(name: str, config, quick: bool) -> dict:
    """What ``config.json`` records about a run (before its outcome is known)."""
    return {
        "experiment": name,
        "config": json.loads(json.dumps(dataclasses.asdict(config), default=jsonable)),
        "quick": quick,
        "seed": getattr(config, "seed", None),
        "version": tabular.__version__,
    }


def provenance(module: ModuleType, config, quick: bool) -> dict:
    """What the gallery shows beside a run, recorded with it but not part of what makes
    two runs the same (:func:`metadata`): what the experiment reproduces, the settings
    the run changed from the mode's defaults (with the defaults), the commit and the
    date."""
    name = module.__name__.rsplit(".", 1)[-1]
    base = module.Config.quick() if quick else module.Config()
    changed = {f.name: getattr(base, f.name) for f in dataclasses.fields(config)
               if getattr(config, f.name) != getattr(base, f.name)}
    return {
        "description": summary(name),
        "reproduces": module.REPRODUCES,
        "overrides": json.loads(json.dumps(changed, default=jsonable)),
        "commit": commit(),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
    }


@functools.cache
def commit() -> str | None:
    """The checkout's commit, ``+dirty`` when tracked files differ from it (None outside
    a git checkout, e.g. an installed wheel)."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=30)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD"],
                               capture_output=True, timeout=30).returncode != 0
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip() + ("+dirty" if dirty else "")


# ------------------------------------------------------------------ running
PROG = "python -m tabular.experiments"


def waiting(line: str) -> None:
    """Say on stderr, once, that a run waits for another run's lock."""
    tqdm.write(f"{line} (Ctrl-C to stop)", file=sys.stderr)


def check_wait(wait) -> None:
    """``wait`` is ``None`` or a number of seconds >= 0 (``inf``: as long as ``None``)."""
    if wait is not None and (isinstance(wait, bool) or not isinstance(wait, int | float)
                             or not wait >= 0):
        raise ValueError(f"wait must be None or a number of seconds >= 0, got {wait!r}")


def run_experiment(name: str, out: Path = Path("results"), executor=None, quick: bool = False,
                   runs: int | None = None, force: bool = False,
                   settings: dict | None = None, wait: float | None = None) -> Outcome:
    """Run (or skip) one experiment and write its files under ``out/name``: what
    ``python -m tabular.experiments NAME`` does. ``settings`` sets ``Config`` fields (as
    ``--set``); ``executor`` defaults to a serial :class:`LocalExecutor`. While another
    run holds ``out/name`` this one waits, up to ``wait`` seconds (``None``: as long as
    it takes), then raises :class:`~tabular.experiments.storage.Busy` naming the holder."""
    check_wait(wait)
    module = load(name)
    config = make_config(module, quick, runs, settings)
    out_dir = Path(out) / name
    meta = metadata(name, config, quick)
    with lock(out_dir, wait, waiting):
        recover(out_dir)
        stored = None if force else finished(out_dir, meta)
        if stored is not None:
            return Outcome(name, skipped=True, failures=stored.get("failed_checks", []),
                           files=stored.get("files", []),
                           verdicts=[Verdict.from_record(r) for r in stored.get("checks", [])])
        stage = staging(out_dir)
        try:
            return compute(module, config, quick, stage, out_dir, meta, executor)
        except BaseException:
            recover(out_dir)  # drops the staging directory; puts back a half-swapped one
            raise


def compute(module: ModuleType, config, quick: bool, stage: Path, out_dir: Path, meta: dict,
            executor) -> Outcome:
    """Compute an experiment, write its files into ``stage``, and publish ``stage`` as
    ``out_dir``; :func:`run_experiment` holds the lock of ``out_dir``."""
    name = out_dir.name
    began = time.perf_counter()
    results = module.run(config, executor or LocalExecutor())
    save_numbers(stage / NUMBERS, results)
    numbers = load_numbers(stage / NUMBERS)  # draw exactly what was stored
    figures = module.plot(numbers, stage, config)
    files = [NUMBERS] + [Path(p).name for p in figures]
    if hasattr(module, "table"):
        save_csv(stage / f"{name}.csv", *module.table(numbers))
        files.append(f"{name}.csv")
    verdicts = judge(module, numbers, config, quick)
    failures = failures_of(verdicts)
    seconds = time.perf_counter() - began
    save_json(stage / CONFIG, {**meta, **provenance(module, config, quick),
                               "checks": [v.record() for v in verdicts],
                               "failed_checks": failures, "files": files,
                               "digests": digests(stage, files), "seconds": round(seconds, 2)})
    publish(stage, out_dir)
    return Outcome(name, skipped=False, failures=failures, seconds=seconds, files=files,
                   verdicts=verdicts)


class NotFinished(FileNotFoundError):
    """``--replot`` of an experiment that has no finished run to redraw."""


def replot(name: str, out: Path, wait: float | None = None) -> list[Path]:
    """Redraw an experiment's figures from its stored numbers (no recomputing), holding
    the directory's lock as :func:`run_experiment` does."""
    check_wait(wait)
    out_dir = Path(out) / name
    if not Path(out).is_dir():  # taking the lock would create it
        raise NotFinished(f"{out} is not a directory: run {name} first")
    with lock(out_dir, wait, waiting):
        recover(out_dir)
        try:
            stored = json.loads((out_dir / CONFIG).read_text())
            numbers = load_numbers(out_dir / NUMBERS)
        except (OSError, ValueError) as err:
            raise NotFinished(f"{out_dir} holds no finished run of {name} ({err}): "
                              "run it first") from None
        module = load(name)
        config = dataclasses.replace(module.Config(), **stored["config"])
        return module.plot(numbers, out_dir, config)


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
                             "NAME --help lists the fields)")
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
    for name in args.names:
        try:
            make_config(load(name), args.quick, args.runs, args.settings)
        except ValueError as err:
            parser.error(str(err))
    if args.replot and not args.out.is_dir():
        parser.error(f"--out {args.out} is not a directory: nothing to replot")
    problem = "" if args.list or args.replot else unwritable(args.out)
    if problem:  # last: the probe creates OUT, which only a run that will start should do
        parser.error(f"--out {args.out}: {problem}")
    return args


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
        module = load(name)
        full, quick = module.Config(), module.Config.quick()
        lines.append(fill(f"{name}: ", summary(name)))
        lines.append("settings (--set KEY=VALUE):")
        for key, (kind, doc) in config_fields(module).items():
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
    """Command line entry point; returns 1 if a check that applied failed. A closed
    output pipe (``--list | head -1``) ends it quietly, with :data:`PIPE_CLOSED`; a
    folder another run held past ``--wait``, a file that could not be written, or a
    ``--replot`` of a run that is not there, with one line on stderr and :data:`BUSY`,
    :data:`WRITE_FAILED` or 2."""
    try:
        status = command(argv)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except (Busy, WriteError, NotFinished) as err:
        tqdm.write(f"{PROG}: error: {err}", file=sys.stderr)
        return {Busy: BUSY, WriteError: WRITE_FAILED, NotFinished: 2}[type(err)]
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
            print(fill(f"{name:<{width}}  ", summary(name)))
        return 0
    if args.replot:
        for name in names:
            for path in replot(name, args.out, args.wait):
                print(path)
        gallery.write(args.out, EXPERIMENTS)
        return 0
    executor = make_executor(args.backend)
    outcomes = []
    try:
        bar = tqdm(names, desc="experiments", unit="exp")
        for name in bar:
            bar.set_postfix_str(name)
            outcome = run_experiment(name, args.out, executor, quick=args.quick,
                                     runs=args.runs, force=args.force,
                                     settings=args.settings, wait=args.wait)
            outcomes.append(outcome)
            state = "skipped (finished before)" if outcome.skipped else f"{outcome.seconds:.1f} s"
            verdict = "checks failed" if outcome.failures else "checks passed"
            skipped = outcome.not_applicable
            if skipped:
                verdict += f" ({len(skipped)} not applicable)"
            tqdm.write(f"{name}: {state}, {verdict}")
            for failure in outcome.failures:
                tqdm.write(f"  FAILED: {failure}")
            for v in skipped:
                tqdm.write(f"  {v.describe()}")
    finally:
        executor.close()
    index, _ = gallery.write(args.out, EXPERIMENTS)
    print(f"results in {args.out.resolve()}; gallery {index.resolve()}")
    return 1 if any(o.failures for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
