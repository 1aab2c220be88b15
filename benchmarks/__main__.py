"""``python -m benchmarks [--no-write | --write] [NAME ...]``: run the benchmarks; ``make bench``.

- No name: every ``bench_*`` module, in name order, each printing its tables as it
  goes; at the end ``docs/performance.md`` is written from this run: the machine
  (CPUs, versions, date, commit, load), a summary of the ratios the benches return
  (:class:`benchmarks.timing.Headline`), then each bench's docstring (what it
  measures, how to read it) and the tables it printed. The page is written to a
  temporary file beside it and renamed over it, so a run that fails or is interrupted
  leaves the previous page whole. Nobody edits that page by hand: rerun this.
- ``--no-write``: the same run, printed only.
- Names (with or without the ``bench_`` prefix: ``dp`` or ``bench_dp``): only those
  benches, printed only, since a page from part of the benches drops the others'
  tables; ``--write`` writes it all the same (on a busy machine, the fastest benches
  only), and the page names the benches it lacks.
- The modules of :data:`OPT_IN` (``huge``: value iteration on 10^8 states, ~9 GiB;
  ``compile_share``: the test suite and the quick experiments from an empty numba
  cache; ``inlining``: the plain jitted functions that stay calls in compiled kernels)
  run only when named, and never write the page.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib
import io
import os
import pkgutil
import platform
import re
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import benchmarks
from benchmarks.timing import Headline

#: Benchmarks too long or too large for ``make bench``: run only when named.
OPT_IN = ("huge", "compile_share", "inlining")
ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "performance.md"
VERSIONS = ("numpy", "numba", "gymnasium", "scipy", "mdptoolbox-hiive", "mdpsolver",
            "jax")


def available() -> list[str]:
    """The benchmark modules found next to this file, sorted by name."""
    return sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                  if m.name.startswith("bench_"))


class _Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy of what was written."""

    def __init__(self, terminal):
        self.terminal, self.kept = terminal, io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.terminal.write(text)

    def flush(self) -> None:
        self.terminal.flush()


def run(module: str) -> tuple[str, list[Headline]]:
    """``(what it printed, the headlines it returned)`` of one bench's ``main()``."""
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        headlines = importlib.import_module(f"benchmarks.{module}").main() or []
    return tee.kept.getvalue(), headlines


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine() -> dict[str, str]:
    """What the figures depend on: the machine, the versions, the date and the commit."""
    import numba

    cpu = ""
    with contextlib.suppress(OSError):
        found = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        cpu = f", {found.group(1)}" if found else ""
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    if _git("status", "--porcelain", "--untracked-files=no"):
        commit += " with uncommitted changes"
    versions = []
    for name in VERSIONS:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions.append(f"{name} {metadata.version(name)}")
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "CPUs": f"{os.cpu_count()} (numba threads {numba.config.NUMBA_NUM_THREADS}){cpu}",
        "platform": platform.platform(),
        "Python": platform.python_version(),
        "packages": ", ".join(versions),
    }


def markdown(docstring: str | None) -> str:
    """A bench's docstring as Markdown: Sphinx roles and double backticks become code."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", (docstring or "").strip())
    return text.replace("``", "`")


def page(info: dict[str, str], sections: list[tuple[str, str]],
         headlines: list[Headline]) -> str:
    """The text of ``docs/performance.md``."""
    missing = sorted(set(available()) - {module for module, _ in sections})
    lacks = [f"This run left out {', '.join(f'`{m}`' for m in missing)}: `make bench` "
             "runs every bench.", ""] if missing else []
    lines = [
        "# Performance",
        "",
        "Written by `make bench` (`python -m benchmarks`, see `benchmarks/__main__.py`) "
        "from one run of every benchmark of `benchmarks/`: do not edit it by hand, rerun it.",
        "The machine may have been shared: absolute times move with its load (the load "
        "averages below), and a ratio whose two sides were measured in alternated rounds "
        "(printed as median [min-max]) is steadier than either side. Ratios above 1 mean "
        "this library is faster.",
        "",
        *lacks,
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        *(f"| {key} | {value} |" for key, value in info.items()),
        "",
        "## Summary",
        "",
        "| what | this library | reference | ratio |",
        "|---|---|---|---|",
        *(f"| {h.what} | {h.ours} | {h.reference} | {h.ratio} |" for h in headlines),
    ]
    for module, printed in sections:
        doc = importlib.import_module(f"benchmarks.{module}").__doc__
        lines += ["", f"## {module}", "", markdown(doc), "", "```text", printed.rstrip(), "```"]
    lines += ["", "## Not run by `make bench`", "",
              "Run by name (`python -m benchmarks NAME`), they print only: "
              + "; ".join(f"`{name}`: {markdown(_first_line(name))}" for name in OPT_IN) + "."]
    return "\n".join(lines) + "\n"


def _first_line(module: str) -> str:
    doc = importlib.import_module(f"benchmarks.{module}").__doc__ or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ").rstrip(".")


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    flags = {"--no-write", "--write"}
    names = [a for a in args if a not in flags]
    write = "--write" in args or not ("--no-write" in args or names)
    found = available()
    chosen = []
    for name in names or found:
        module = name if name.startswith("bench_") or name in OPT_IN else f"bench_{name}"
        if module not in found + list(OPT_IN):
            print(f"unknown benchmark {name!r}; available: {', '.join(found + list(OPT_IN))}",
                  file=sys.stderr)
            return 2
        chosen.append(module)
    if write and set(chosen) & set(OPT_IN):
        print(f"{', '.join(OPT_IN)} never write docs/performance.md: run them without --write",
              file=sys.stderr)
        return 2
    info = machine()
    load_before, start = os.getloadavg(), time.perf_counter()
    sections, headlines = [], []
    for module in chosen:
        print(f"=== {module} ===", flush=True)
        printed, returned = run(module)
        sections.append((module, printed))
        headlines += returned
    if write:
        load_after = os.getloadavg()
        info["load average (1 min) at start, end"] = f"{load_before[0]:.1f}, {load_after[0]:.1f}"
        info["wall time of the run"] = f"{(time.perf_counter() - start) / 60:.1f} min"
        write_atomically(PAGE, page(info, sections, headlines))
        print(f"wrote {PAGE.relative_to(ROOT)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
