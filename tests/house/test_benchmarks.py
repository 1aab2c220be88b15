"""The benchmarks stay runnable. ``make bench`` takes about 11 minutes and runs on
demand, not in the suite, so a bench broken by a change (a module that no longer
imports, a probe that imports a moved package) would otherwise show only there: each
bench module imports, and the code the benches run in fresh interpreters runs up to
the call they time."""

import importlib
import subprocess
import sys

import pytest

from benchmarks import bench_pg, bench_startup
from benchmarks.__main__ import available


@pytest.mark.parametrize("name", available())
def test_each_bench_module_imports(name):
    assert callable(importlib.import_module(f"benchmarks.{name}").main)


@pytest.mark.parametrize("code", [
    *(bench_pg.SETUP.format(name=name) for name in bench_pg.CALLS),
    bench_startup.PROBE.format(call="pass"),
], ids=[*bench_pg.CALLS, "startup"])
def test_fresh_interpreter_probes_run(code):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
