"""Every array write numba's dead-code removal deletes while the library's kernels compile.

numba drops a write ``x[i] = v`` it believes dead; through a NamedTuple the kernel built,
that belief can be wrong and the write silently lost (numba issue #7135,
``docs/decisions/2026-12-06-numba-tuple-alias.md``). This runs the identity harness
(every public entry point, :mod:`benchmarks.identity`) with a spy on
``numba.core.ir_utils.remove_dead_block`` and lists each deleted write with its source
line (a write to an array nothing reads again is rightly deleted: read each line); run
it after a numba upgrade or a change to a kernel's records. From an empty
cache only, so that every kernel compiles (about 4 minutes on one core)::

    NUMBA_CACHE_DIR=$(mktemp -d) python -m benchmarks.dropped_writes [-k TEXT]

2026-12-06, numba 0.68.1: no write deleted in any of the 186 cases.
"""

from __future__ import annotations

import argparse
import os
import sys

from numba.core import ir, ir_utils

from benchmarks import identity


def spy_on_dead_code_removal(deleted: set[tuple[str, int, str]]) -> None:
    """Wraps numba's ``remove_dead_block`` so that each array write it deletes lands in
    ``deleted`` as ``(file, line, statement)``."""
    remove_dead_block = ir_utils.remove_dead_block

    def spying(block, *args):
        writes = [s for s in block.body if isinstance(s, (ir.SetItem, ir.StaticSetItem))]
        removed = remove_dead_block(block, *args)
        kept = {id(s) for s in block.body}
        deleted.update((s.loc.filename, s.loc.line, str(s)) for s in writes
                       if id(s) not in kept)
        return removed

    ir_utils.remove_dead_block = spying


def main(argv: list[str] | None = None) -> int:
    """Runs the identity harness's cases (``-k TEXT``: those whose name contains it),
    then prints the deleted writes; exit status 1 if any."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dropped_writes",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="only", default="",
                        help="only the cases whose name contains this text")
    args = parser.parse_args(argv)
    if not os.environ.get("NUMBA_CACHE_DIR"):
        parser.error("set NUMBA_CACHE_DIR to an empty directory: from a warm cache "
                     "nothing compiles and nothing is checked")
    deleted: set[tuple[str, int, str]] = set()
    spy_on_dead_code_removal(deleted)
    _, _, errors = identity.compute([n for n in identity.CASES if args.only in n], False)
    for name, message in errors.items():
        print(f"ERROR    {name}: {message}")
    for file, line, statement in sorted(deleted):
        print(f"{file}:{line}: deleted {statement}")
    print(f"{len(deleted)} array writes deleted")
    return 1 if deleted or errors else 0


if __name__ == "__main__":
    sys.exit(main())
