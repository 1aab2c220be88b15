"""The benchmarks stay runnable. ``make bench`` takes about 11 minutes and runs on
demand, not in the suite, so a bench broken by a change (a module that no longer
imports, a probe that imports a moved package) would otherwise show only there: each
bench module imports, and the code the benches run in fresh interpreters runs up to
the call they time."""

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import bench_pg, bench_startup, peers
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


def test_a_peer_call_sends_the_job_and_reads_the_last_line():
    script = ("import json, sys; job = json.load(sys.stdin); print('noise'); "
              "print(json.dumps({'twice': 2 * job['x']}))")
    assert peers.call_peer(Path(sys.executable), script, {"x": 21}) == {"twice": 42}


def test_a_built_peer_is_reused_until_its_requirements_change(tmp_path, monkeypatch):
    monkeypatch.setattr(peers, "PEERS", tmp_path)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / peers.STAMP).write_text("a==1\nb==2")
    assert peers.peer_python("p", ("a==1", "b==2")) == tmp_path / "p" / "bin" / "python"
    built = []
    monkeypatch.setattr(peers.subprocess, "run", lambda args, **kw: built.append(args[:3]))
    peers.peer_python("p", ("a==1", "b==3"))  # another pin: rebuilt, the new pins stamped
    assert built[0] == [sys.executable, "-m", "venv"]
    assert (tmp_path / "p" / peers.STAMP).read_text() == "a==1\nb==3"
