"""The first-call notice: one line on stderr when a public entry point first compiles.

A kernel's first call in a process either loads its machine code from numba's on-disk
cache (milliseconds) or compiles it (seconds). Before compiling, and only then, numba
broadcasts a ``"numba:compile"`` event (:mod:`numba.core.event`; a cache hit broadcasts
nothing). A listener on that event finds the public entry point the compile is for, the
outermost frame of a public function or method on the calling thread's stack, and prints
once per entry point::

    tabular: compiling q_learning (first use, cached afterwards; 5-10 s)
    tabular: `tabular-warm` compiles every entry point ahead of time, once (minutes)

The kernel's helpers and any later kernel of the same entry point compile inside calls
already announced, so they print nothing; a call served by the cache prints nothing and
costs nothing (the listener runs only when numba compiles). An entry point is announced
once on a machine, not again when a new variant of it compiles (an ``action_mask=``, a
``history=True``) in a later process: the names announced are kept in
:data:`RECORD_NAME`, in numba's cache directory (:func:`cache_directory`). The second
line, the pointer to ``tabular-warm``, comes with the first notice of a process, until
``tabular-warm`` has run on the machine.

The seconds are measured, never typed in: :data:`DATA_FILE`, shipped with the package,
holds each entry point's first-call CPU seconds on the reference machine, written by
``tabular-warm --measure``; a first call costs that much on an idle machine and up to
about twice as much on a busy one, the range the notice states. Once ``tabular-warm``
has measured this machine (its first calls, kept in :data:`RECORD_NAME`), the notice
states this machine's seconds: its own for that entry point, else the reference
seconds scaled by the median ratio of this machine's measured entry points to the
reference's. ``TABULAR_QUIET=1`` in the environment, or :func:`set_quiet`, switches the
notice off.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import os
import statistics
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import CodeType
from typing import Any, cast

import numba
from numba.core import event

#: The environment variable that switches the notice off (any value but "" and "0").
QUIET_VARIABLE = "TABULAR_QUIET"

#: The prefix of the names of :func:`tabular._numba.runs.over_runs`'s worker threads,
#: followed by the ident of the thread that called it: a kernel first called on a worker
#: compiles there, and the entry point is on the caller's stack.
WORKER_PREFIX = "tabular-runs-"

#: The measured first-call CPU seconds of every entry point on the reference machine
#: (``{"seconds": {name: seconds}, ...}`` with where and when they were measured), shipped
#: with the package and written by ``tabular-warm --measure``.
DATA_FILE = Path(__file__).with_name("compile_seconds.json")

#: The file, in numba's cache directory, that records this machine's first calls:
#: ``{"announced": [names], "seconds": {name: CPU seconds}}``.
RECORD_NAME = "tabular-first-calls.json"

#: How much longer than on the idle reference machine a first call may take on a busy
#: one: the top of the range the notice states (7.5 s for a measured 4 s at load 3).
BUSY_FACTOR = 2.0

#: The pointer printed under the first notice of a process.
WARM_HINT = "tabular: `tabular-warm` compiles every entry point ahead of time, once (minutes)"


@functools.cache
def reference_seconds() -> dict[str, float]:
    """``{entry point: first-call CPU seconds}`` on the reference machine
    (:data:`DATA_FILE`)."""
    return dict(json.loads(DATA_FILE.read_text())["seconds"])


def cache_directory() -> Path:
    """Where numba keeps this package's compiled kernels, as numba chooses it:
    ``NUMBA_CACHE_DIR`` when set, else the ``__pycache__`` beside the package's sources
    when it can be written, else the user's cache directory."""
    if numba.config.CACHE_DIR:
        return Path(numba.config.CACHE_DIR)
    beside = Path(__file__).resolve().parents[1] / "__pycache__"
    if os.access(beside if beside.exists() else beside.parent, os.W_OK):
        return beside
    home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(home) / "numba"


def read_record() -> dict[str, Any]:
    """This machine's record (:data:`RECORD_NAME`): the entry points announced and the
    seconds measured; empty where there is none or it cannot be read."""
    try:
        found = json.loads((cache_directory() / RECORD_NAME).read_text())
        return {"announced": list(found.get("announced", [])),
                "seconds": dict(found.get("seconds", {}))}
    except (OSError, ValueError, AttributeError):
        return {"announced": [], "seconds": {}}


def write_record(announced=(), seconds: Mapping[str, float] | None = None) -> None:
    """Add ``announced`` names and measured ``seconds`` to this machine's record
    (replaced whole, never half-written; a directory that cannot be written is left as
    it is: the notice then speaks once per process)."""
    record = read_record()
    record["announced"] = sorted(set(record["announced"]) | set(announced))
    record["seconds"].update(seconds or {})
    directory = cache_directory()
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tabular-first-calls-")
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
        os.replace(tmp, directory / RECORD_NAME)


def expected_seconds(name: str, own: Mapping[str, float] | None = None) -> str:
    """What a first compile of ``name`` costs, as the notice says it: this machine's
    measured seconds (``own``, by default :func:`read_record`'s) for ``name``, else the
    reference's scaled by this machine's median ratio to it, else the reference's range
    from idle to busy (:data:`BUSY_FACTOR`), else "a few seconds"."""
    own = read_record()["seconds"] if own is None else own
    if name in own:
        return f"~{own[name]:.0f} s on this machine"
    reference = reference_seconds()
    if name not in reference:
        return "a few seconds"
    ratios = [own[n] / reference[n] for n in own if reference.get(n, 0) > 0]
    if ratios:
        return f"~{reference[name] * statistics.median(ratios):.0f} s on this machine"
    return f"{reference[name]:.0f}-{reference[name] * BUSY_FACTOR:.0f} s"


_modules: tuple[str, ...] = ()
_public: dict[CodeType, str] | None = None
_announced: set[str] = set()
_hinted = False
_quiet = False


def set_quiet(quiet: bool = True) -> None:
    """Switch the notice off (``quiet=True``) or back on for this process; the variable
    :data:`QUIET_VARIABLE` switches it off whatever this says."""
    global _quiet
    _quiet = bool(quiet)


def is_quiet() -> bool:
    """Whether the notice is off, by :func:`set_quiet` or by :data:`QUIET_VARIABLE`."""
    return _quiet or os.environ.get(QUIET_VARIABLE, "") not in ("", "0")


def message(name: str, own: Mapping[str, float] | None = None) -> str:
    """The line printed when entry point ``name`` first compiles (``own``: this
    machine's measured seconds, as :func:`expected_seconds` reads them)."""
    return f"tabular: compiling {name} (first use, cached afterwards; " \
        f"{expected_seconds(name, own)})"


def public_functions(modules) -> dict[str, object]:
    """``{name: function}`` of the public API of ``modules`` (their ``__all__``): each
    function, jitted function and public method of a class (``Class.method``; a class's
    ``__init__`` and ``__post_init__`` under the class's own name)."""
    found: dict[str, object] = {}
    for module in modules:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") and attr not in ("__init__", "__post_init__"):
                        continue
                    member = getattr(member, "__func__", getattr(member, "fget", member))
                    if inspect.isfunction(member):
                        found[name if attr.startswith("_") else f"{name}.{attr}"] = member
            elif callable(obj):
                found[name] = getattr(obj, "py_func", obj)
    return found


def _code_names() -> dict[CodeType, str] | None:
    """``{code object: public name}``, built at the first compile once the package has
    finished importing (compiles during its import belong to no call)."""
    global _public
    if _public is None:
        modules = [sys.modules.get(name) for name in _modules]
        if not modules or any(m is None or not hasattr(m, "__all__") for m in modules):
            return None
        _public = {}
        for name, fn in public_functions(modules).items():
            _public.setdefault(inspect.unwrap(cast("Callable[..., Any]", fn)).__code__, name)
    return _public


def _outermost(frame, names: dict[CodeType, str]) -> str | None:
    found = None
    while frame is not None:
        found = names.get(frame.f_code, found)
        frame = frame.f_back
    return found


def entry_point(dispatcher) -> str | None:
    """The public entry point a compile of ``dispatcher`` on this thread is for: the
    outermost public frame of this thread (or, on a worker of ``over_runs``, of the
    thread that called it), else ``dispatcher`` itself if it is public."""
    names = _code_names()
    if names is None:
        return None
    thread = threading.current_thread()
    frame = sys._getframe()
    if thread.name.startswith(WORKER_PREFIX):
        caller = int(thread.name[len(WORKER_PREFIX):].split("_")[0])
        frame = sys._current_frames().get(caller, frame)
    return _outermost(frame, names) or names.get(dispatcher.py_func.__code__)


class _FirstCompile(event.Listener):
    """Prints :func:`message` at the start of the first compile of each entry point on
    this machine (and, where ``tabular-warm`` has not run, :data:`WARM_HINT` with the
    first of a process)."""

    def on_start(self, ev) -> None:
        if is_quiet():
            return
        name = entry_point(ev.data["dispatcher"])
        if name is None or name in _announced:
            return
        global _hinted
        _announced.add(name)  # numba holds its compiler lock here: no race
        record = read_record()
        if name in record["announced"]:  # a new variant of an entry point announced before
            return
        print(message(name, record["seconds"]), file=sys.stderr, flush=True)
        if not _hinted and not record["seconds"]:  # tabular-warm has not run here
            print(WARM_HINT, file=sys.stderr, flush=True)
        _hinted = True
        write_record(announced=[name])

    def on_end(self, ev) -> None:
        pass


def install(*modules: str) -> None:
    """Announce the first compile of every public entry point of the packages
    ``modules`` (names; read from ``sys.modules`` when numba first compiles)."""
    global _modules, _public
    if not _modules:
        event.register("numba:compile", _FirstCompile())
    _modules, _public = tuple(modules), None
