"""``python -m benchmarks [NAME ...]``: run every ``bench_*`` module, or only the named ones.

A name may be given with or without its ``bench_`` prefix (``dp`` or ``bench_dp``). The
modules of ``OPT_IN`` (``huge``: value iteration on 10^8 states, minutes and ~9 GiB;
``compile_share``: the test suite and the quick experiments from an empty numba cache;
``inlining``: the plain jitted functions that stay calls in compiled kernels) run only
when named.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import benchmarks

#: Benchmarks too long or too large for ``make bench``: run only when named.
OPT_IN = ("huge", "compile_share", "inlining")


def available() -> list[str]:
    """The benchmark modules found next to this file, sorted by name."""
    return sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                  if m.name.startswith("bench_"))


def main(argv: list[str] | None = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    found = available()
    chosen = []
    for name in names or found:
        module = name if name.startswith("bench_") or name in OPT_IN else f"bench_{name}"
        if module not in found + list(OPT_IN):
            print(f"unknown benchmark {name!r}; available: {', '.join(found + list(OPT_IN))}",
                  file=sys.stderr)
            return 2
        chosen.append(module)
    for module in chosen:
        print(f"=== {module} ===", flush=True)
        importlib.import_module(f"benchmarks.{module}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
