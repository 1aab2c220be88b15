"""The first-call notice: one line on stderr when a public entry point starts compiling.

A kernel's first call in a process either loads its machine code from numba's on-disk
cache (milliseconds) or compiles it (seconds). Before compiling, and only then, numba
broadcasts a ``"numba:compile"`` event (:mod:`numba.core.event`; a cache hit broadcasts
nothing). A listener on that event finds the public entry point the compile is for, the
outermost frame of a public function or method on the calling thread's stack, and prints
once per entry point and process::

    tabular: compiling q_learning (first use, cached afterwards, ~5 s)

The kernel's helpers and any later kernel of the same entry point compile inside calls
already announced, so they print nothing; a call served by the cache prints nothing and
costs nothing (the listener runs only when numba compiles). ``TABULAR_QUIET=1`` in the
environment, or :func:`set_quiet`, switches the notice off; ``tabular-warm`` fills the
cache so that no call compiles.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
from collections.abc import Callable
from types import CodeType
from typing import Any, cast

from numba.core import event

#: The environment variable that switches the notice off (any value but "" and "0").
QUIET_VARIABLE = "TABULAR_QUIET"

#: The prefix of the names of :func:`tabular._numba.runs.over_runs`'s worker threads,
#: followed by the ident of the thread that called it: a kernel first called on a worker
#: compiles there, and the entry point is on the caller's stack.
WORKER_PREFIX = "tabular-runs-"

#: Rough seconds of each entry point's first call from an empty cache: its compile CPU
#: seconds, one entry point per fresh process (``tabular-warm --measure``), times 0.4,
#: the ratio of idle-machine first calls to those CPU seconds, which were measured
#: under heavy load (see docs/internals.md). Members of a family that shares one
#: kernel get the family's figure; entry points not listed are "a few seconds".
COMPILE_SECONDS: dict[str, float] = {
    "value_iteration": 8, "policy_evaluation": 6, "soft_value_iteration": 5,
    "bellman_expectation": 2, "bellman_optimality": 2, "soft_bellman_optimality": 2,
    "epsilon_greedy_bandit": 3, "ucb_bandit": 3, "gradient_bandit": 3, "td0": 3,
    "mc_prediction": 5, "off_policy_mc_prediction": 5, "batch_prediction": 3,
    "offline_lambda_return": 5, "td_lambda": 5, "true_online_td_lambda": 5, "sarsa": 5,
    "expected_sarsa": 6, "q_learning": 5, "double_q_learning": 5, "mc_control": 9,
    "n_step_sarsa": 12, "n_step_expected_sarsa": 12, "off_policy_n_step_sarsa": 12,
    "tree_backup": 12, "q_sigma": 12, "sarsa_lambda": 4, "watkins_q_lambda": 4,
    "true_online_sarsa_lambda": 4, "differential_sarsa": 3, "r_learning": 3, "dyna_q": 14,
    "dyna_q_plus": 14, "prioritized_sweeping": 14, "uniform_expected_updates": 3,
    "trajectory_sampling": 5, "reinforce": 5, "actor_critic": 5, "ppo": 11, "trpo": 12,
    "pretrain": 2, "sample_preferences": 1, "ending_probabilities": 1, "dpo": 3,
}

_modules: tuple[str, ...] = ()
_public: dict[CodeType, str] | None = None
_announced: set[str] = set()
_quiet = False


def set_quiet(quiet: bool = True) -> None:
    """Switch the notice off (``quiet=True``) or back on for this process; the variable
    :data:`QUIET_VARIABLE` switches it off whatever this says."""
    global _quiet
    _quiet = bool(quiet)


def is_quiet() -> bool:
    """Whether the notice is off, by :func:`set_quiet` or by :data:`QUIET_VARIABLE`."""
    return _quiet or os.environ.get(QUIET_VARIABLE, "") not in ("", "0")


def message(name: str) -> str:
    """The line printed when entry point ``name`` compiles."""
    seconds = COMPILE_SECONDS.get(name)
    expected = "a few seconds" if seconds is None else f"~{seconds:.0f} s"
    return f"tabular: compiling {name} (first use, cached afterwards, {expected})"


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
    """Prints :func:`message` at the start of the first compile of each entry point."""

    def on_start(self, ev) -> None:
        if is_quiet():
            return
        name = entry_point(ev.data["dispatcher"])
        if name is not None and name not in _announced:
            _announced.add(name)  # numba holds its compiler lock here: no race
            print(message(name), file=sys.stderr, flush=True)

    def on_end(self, ev) -> None:
        pass


def install(*modules: str) -> None:
    """Announce the first compile of every public entry point of the packages
    ``modules`` (names; read from ``sys.modules`` when numba first compiles)."""
    global _modules, _public
    if not _modules:
        event.register("numba:compile", _FirstCompile())
    _modules, _public = tuple(modules), None
