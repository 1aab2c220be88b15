"""One copy of a callee's scope per inlining, while this library's kernels compile.

numba's IR inliner (``InlineWorker.inline_ir``, behind ``inline="always"``) copies the
callee's IR block by block, each block with ``copy.deepcopy`` and a memo of its own.
Every block refers to the callee's one scope, which lists all the callee's variables,
so each block's copy copies the whole scope again: an inlined function costs blocks x
variables (numba issue 8989), up to a quarter of a first call here (docs/internals.md).
The copies are then renamed by name and merged into the caller's one scope, so the
duplicates are thrown away.

While a kernel of this library compiles, the block copies of one call of
``inline_ir`` share one memo per scope: the scope is copied once, as a deep copy of
the callee's whole IR would copy it, and the machine code is the same. Any other
compile in the process (a user's own kernels) copies as numba does: the stand-in for
the ``copy`` module of ``numba.core.inline_closurecall`` passes through unless one of
our compiles is under way, and numba compiles one function at a time under its
compiler lock. It is installed only on the numba versions it was checked on, and only
where ``inline_ir`` is the method this was written against; elsewhere numba's own copy
runs, slower and the same.
"""

from __future__ import annotations

import copy
import threading
import types

import numba
from numba.core import event, inline_closurecall, ir

#: The numba versions whose ``inline_ir`` copies blocks as described above.
CHECKED_VERSIONS = ("0.68.",)


class _SharedScopeCopies(types.ModuleType):
    """The ``copy`` module as ``numba.core.inline_closurecall`` sees it: ``deepcopy`` of
    a block shares a memo with the other blocks of its scope in the same ``inline_ir``
    call, while one of our compiles is under way."""

    def __init__(self) -> None:
        super().__init__("copy")
        self.__dict__.update(copy.__dict__)
        del self.__dict__["deepcopy"]  # the method below, not the module's function

    def deepcopy(self, x, memo=None, _nil=None):
        """``copy.deepcopy``, sharing the memo of the blocks of one scope."""
        if memo is None and _state.memos is not None and isinstance(x, ir.Block):
            memo = _state.memos.setdefault(id(x.scope), {})
        return copy.deepcopy(x, memo)


class _State(threading.local):
    """``memos``: the block memos of the ``inline_ir`` call under way, by scope (``None``
    outside our compiles); ``depth``: how many of our compiles are open (nested: a
    kernel compiles its callees)."""

    memos: dict[int, dict] | None = None
    depth = 0


_state = _State()


def _inline_ir(self, *args, **kwargs):
    """numba's ``inline_ir``, with fresh memos for this call's copies."""
    if not _state.depth:
        return _numba_inline_ir(self, *args, **kwargs)
    outer, _state.memos = _state.memos, {}
    try:
        return _numba_inline_ir(self, *args, **kwargs)
    finally:
        _state.memos = outer


class _OurCompiles(event.Listener):
    """Switches the shared copies on for the compiles of this library's functions."""

    def on_start(self, ev) -> None:
        if _ours(ev):
            _state.depth += 1

    def on_end(self, ev) -> None:
        if _ours(ev):
            _state.depth -= 1


def _ours(ev) -> bool:
    return getattr(ev.data["dispatcher"].py_func, "__module__", "").startswith("tabular.")


_numba_inline_ir = inline_closurecall.InlineWorker.inline_ir


def install() -> bool:
    """Install the shared copies where numba is a checked version whose inliner copies
    through its module's ``copy``; returns whether it did (not a second time)."""
    nested = inline_closurecall.InlineWorker.inline_ir.__code__.co_consts
    if not (numba.__version__.startswith(CHECKED_VERSIONS)
            and inline_closurecall.copy is copy
            and any(getattr(code, "co_name", None) == "copy_ir" for code in nested)):
        return False
    inline_closurecall.copy = _SharedScopeCopies()
    inline_closurecall.InlineWorker.inline_ir = _inline_ir
    event.register("numba:compile", _OurCompiles())
    return True
