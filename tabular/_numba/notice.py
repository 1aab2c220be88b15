"""The first-call notice: one line on stderr when a public entry point starts compiling.

A kernel's first call in a process either loads its machine code from numba's on-disk
cache (milliseconds) or compiles it (seconds). Before compiling, and only then, numba
broadcasts a ``"numba:compile"`` event (:mod:`numba.core.event`; a cache hit broadcasts
nothing). A listener on that event finds the public entry point the compile is for, the
outermost frame of a public function or method on the calling thread's stack, and prints
once per entry point and process::

    tabular: compiling q_learning (first use, cached afterwards, up to ~5 s)

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

#: Seconds of each entry point's compilation from an empty cache, as ``tabular-warm
#: --measure`` reports them on the 2-vCPU reference machine with nothing else running
#: (CPU seconds, rounded up, at least 1): one fresh process per entry point, each making
#: the calls ``tabular-warm`` makes, which compile every method and option it has. So
#: the figure bounds one call from above (docs/internals.md compares the two), and the
#: notice says "up to" it; an entry point not listed says "a few seconds".
COMPILE_SECONDS: dict[str, float] = {
    "value_iteration": 7, "policy_evaluation": 5, "policy_iteration": 2,
    "soft_value_iteration": 5, "terminating_greedy_policy": 1, "bellman_expectation": 1,
    "bellman_optimality": 2, "soft_bellman_optimality": 1, "q_from_v": 1,
    "relative_value_iteration": 2, "average_reward_solve": 1, "finite_horizon": 3,
    "epsilon_greedy_bandit": 2, "ucb_bandit": 2, "gradient_bandit": 2, "td0": 3,
    "reward_process": 1, "gradient_mc": 3, "semi_gradient_td": 3,
    "off_policy_semi_gradient_td": 2, "tdc": 3, "gtd2": 3, "emphatic_td": 2, "lstd": 3,
    "semi_gradient_td_lambda": 3, "true_online_linear_td_lambda": 3,
    "semi_gradient_sarsa": 3, "n_step_semi_gradient_sarsa": 3,
    "semi_gradient_sarsa_lambda": 4, "true_online_linear_sarsa_lambda": 3,
    "differential_semi_gradient_sarsa": 3, "mc_prediction": 3,
    "off_policy_mc_prediction": 3, "batch_prediction": 3, "offline_lambda_return": 4,
    "td_lambda": 4, "true_online_td_lambda": 5, "sarsa": 4, "expected_sarsa": 5,
    "q_learning": 5, "double_q_learning": 5, "mc_control": 5, "n_step_sarsa": 5,
    "n_step_expected_sarsa": 5, "off_policy_n_step_sarsa": 5, "tree_backup": 5,
    "q_sigma": 5, "sarsa_lambda": 4, "watkins_q_lambda": 4,
    "true_online_sarsa_lambda": 4, "differential_sarsa": 3, "r_learning": 3,
    "dyna_q": 6, "dyna_q_plus": 6, "prioritized_sweeping": 6,
    "uniform_expected_updates": 3, "trajectory_sampling": 5, "reinforce": 4,
    "actor_critic": 4, "ppo": 11, "trpo": 9, "pretrain": 2, "sft": 1,
    "NGramLM.generate": 1, "NGramLM.log_prob": 1, "NGramLM.next_token_probs": 2,
    "NGramLM.policy": 2, "sample_preferences": 1, "train_reward_model": 1,
    "bradley_terry_loss": 1, "ending_probabilities": 1, "kl_optimum": 1,
    "prefix_values": 2, "process_rewards": 1, "distill": 11, "response_distribution": 1,
    "dpo": 3, "iterated_dpo": 8, "kto": 5, "kto_optimum": 2, "grpo": 8,
    "group_relative_advantages": 1, "fit_process_reward_model": 4, "train_pipeline": 2,
    "RLHFPipeline.policy": 2, "RLHFPipeline.answer_distribution": 1,
    "RLHFPipeline.correct_rate": 1, "RLHFPipeline.value": 2, "RLHFPipeline.optimum": 4,
    "RLHFPipeline.measure": 2, "RLHFPipeline.frontier": 3,
    "RLHFPipeline.learner_frontier": 6,
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
    expected = "a few seconds" if seconds is None else f"up to ~{seconds:.0f} s"
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
