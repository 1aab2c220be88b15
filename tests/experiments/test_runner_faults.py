"""Fault injection for the experiments runner: an interruption at any write point, a full
disk, a corrupted stored file or a second run into the same folder never lets a rerun skip
over numbers that are not its own, nor publishes a folder that is not one run's, whole.

A tiny experiment stands in for the real ones (the runner does not care what it
computes): two figures, a table, numbers that depend on every config field. Each
interruption test stops ``run_experiment`` at one write point with ``KeyboardInterrupt``
and then reruns with the same or with another config: the rerun must either skip with
files that are exactly those of a clean run of its config, or recompute them. The
concurrency tests run the command line on the same fake in other processes
(``python tests/experiments/test_runner_faults.py GATE ARGS``, see the end of this file), whose
computation waits for the test to open its gate.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tabular.experiments.harness import cli, registry, runner, storage
from tabular.experiments.harness.checks import check
from tabular.experiments.harness.settings import Settings

NAME = registry.EXPERIMENTS[0]  # the fake experiment borrows a real name


@dataclass(frozen=True)
class Config(Settings):
    scale: float = 1.0
    """What the numbers are multiplied by."""
    seed: int = 0
    """Seed of the numbers."""


def compute(config, executor):
    fake.computed += 1
    rng = np.random.default_rng(config.seed)
    return {"values": config.scale * rng.standard_normal(5), "n": np.array(config.seed)}


def plot(results, out_dir, config):
    paths = []
    for i in (1, 2):  # two figures, so there is a write point between them
        path = Path(out_dir) / f"figure{i}.png"
        storage.atomic_write(path, lambda f, i=i: f.write(results["values"].tobytes() * i))
        paths.append(path)
        fake.after_figure(i)
    return paths


fake = SimpleNamespace(
    __name__=f"tabular.experiments.{NAME}", __doc__="A fake experiment.", Config=Config,
    run=compute,
    REPRODUCES="nothing published: a fake",
    plot=plot, finite=check()(lambda results: [] if np.isfinite(results["values"]).all()
                              else ["not finite"]),
    table=lambda results: (["i", "value"], list(enumerate(results["values"].tolist()))),
    computed=0, after_figure=lambda i: None)


def use_fake(patch: pytest.MonkeyPatch) -> None:
    """Make ``run_experiment(NAME, ...)`` and the command line run the fake experiment."""
    patch.setattr(registry, "load", lambda name: fake)
    patch.setattr(registry, "config_fields", lambda module: {
        "scale": (float, ""), "seed": (int, "")})


@pytest.fixture(autouse=True)
def fake_experiment(monkeypatch):
    use_fake(monkeypatch)
    fake.computed, fake.after_figure = 0, lambda i: None


def run(out: Path, wait: float | None = None, **settings) -> runner.Outcome:
    return runner.run_experiment(NAME, out, settings=settings, wait=wait)


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file's bytes, except the record's timing and date (the rest of the record is
    compared)."""
    files = {}
    for path in sorted(Path(directory).iterdir()):
        data = path.read_bytes()
        if path.name == storage.CONFIG:
            record = json.loads(data)
            record.pop("seconds")
            record.pop("finished")
            data = json.dumps(record, sort_keys=True).encode()
        files[path.name] = data
    return files


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A clean run's files for each config the tests use."""
    out = tmp_path_factory.mktemp("clean")
    files = {}
    for seed in (0, 1):
        with pytest.MonkeyPatch.context() as mp:
            use_fake(mp)
            run(out / str(seed), seed=seed)
        files[seed] = snapshot(out / str(seed) / NAME)
    return files


class Interrupt(KeyboardInterrupt):
    pass


def interrupt_after(monkeypatch, point: str):
    """Make ``run_experiment`` stop with :class:`Interrupt` right after ``point``."""
    def after(fn):
        def wrapped(*args, **kwargs):
            fn(*args, **kwargs)
            raise Interrupt(point)
        return wrapped

    if point == "numbers":
        monkeypatch.setattr(runner, "save_numbers", after(storage.save_numbers))
    elif point in ("figure 1", "figure 2"):
        def stop(i, point=point):
            if point == f"figure {i}":
                raise Interrupt(point)
        monkeypatch.setattr(fake, "after_figure", stop)
    elif point == "table":
        monkeypatch.setattr(runner, "save_csv", after(storage.save_csv))
    elif point == "record":
        monkeypatch.setattr(runner, "save_json", after(storage.save_json))
    elif point == "marked superseded":
        monkeypatch.setattr(storage, "_mark_superseded", after(storage._mark_superseded))
    elif point == "exchanged":
        monkeypatch.setattr(storage, "exchange", after(storage.exchange))
    elif point in ("moved to trash", "fallback: old moved aside", "fallback: new moved in"):
        real_rename = os.rename
        if point.startswith("fallback"):  # a system without renameat2's exchange
            monkeypatch.setattr(storage, "exchange", lambda a, b: False)
        target = {"moved to trash": ".trash-", "fallback: old moved aside": ".replaced",
                  "fallback: new moved in": NAME}[point]

        def rename(src, dst):
            real_rename(src, dst)
            if target in str(dst) and (target != NAME or Path(dst).name == NAME):
                raise Interrupt(point)
        monkeypatch.setattr(storage.os, "rename", rename)
    else:
        raise ValueError(point)


PUBLISH_POINTS = ("marked superseded", "exchanged", "moved to trash",
                  "fallback: old moved aside", "fallback: new moved in")
WRITE_POINTS = ("numbers", "figure 1", "figure 2", "table", "record", *PUBLISH_POINTS)
#: (what the directory held before, where the run was interrupted); with nothing
#: before there is no old directory to mark or move aside.
MATRIX = [(before, point) for before in ("nothing", "finished seed 0") for point in WRITE_POINTS
          if before == "finished seed 0" or point not in PUBLISH_POINTS[:-1]]


def whole(directory: Path) -> dict[str, bytes]:
    """A directory's files as :func:`snapshot` gives them, without the mark of a swap
    that is under way (a reader may see it beside the old run's files)."""
    files = snapshot(directory)
    files.pop(storage.SUPERSEDED, None)
    return files


@pytest.mark.parametrize("before, point", MATRIX)
@pytest.mark.parametrize("rerun_seed", [0, 1])
def test_an_interrupted_run_never_lets_a_rerun_skip_over_foreign_numbers(
        tmp_path, monkeypatch, clean, before, point, rerun_seed):
    """Interrupted at each write and at each step of publishing, LOOKED AT BEFORE any
    recovery: ``NAME`` is a whole run (never absent where the exchange is used, never a
    mix), and a finished computation is there or waits, whole, to be published; the next
    run publishes it and deletes nothing finished."""
    if before == "finished seed 0":
        run(tmp_path, seed=0)
    with monkeypatch.context() as mp:
        interrupt_after(mp, point)
        with pytest.raises(Interrupt):
            runner.run_experiment(NAME, tmp_path, settings={"seed": 1}, force=True)
    out_dir = tmp_path / NAME
    # before any recovery
    if out_dir.exists():
        assert whole(out_dir) in (clean[0], clean[1]), point
    else:
        assert before == "nothing" or point == "fallback: old moved aside", point
    finished_new = WRITE_POINTS.index(point) >= WRITE_POINTS.index("record")
    waiting = storage.pending(out_dir)
    assert [whole(stage) for stage in waiting] == (
        [clean[1]] if finished_new and not (out_dir.exists() and whole(out_dir) == clean[1])
        else []), point
    storage.recover(out_dir)
    if finished_new:  # the finished computation of seed 1 is published, not deleted
        assert whole(out_dir) == clean[1] and storage.SUPERSEDED not in snapshot(out_dir)
    elif before == "finished seed 0":
        assert snapshot(out_dir) == clean[0], point
    fake.computed = 0
    outcome = run(tmp_path, seed=rerun_seed)
    assert snapshot(out_dir) == clean[rerun_seed]
    assert outcome.skipped == (fake.computed == 0)
    no_leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert no_leftovers == [NAME], no_leftovers


@pytest.mark.parametrize("damage", ["truncate", "flip a byte", "delete"])
@pytest.mark.parametrize("victim", [storage.NUMBERS, "figure1.png", "figure2.png", f"{NAME}.csv"])
def test_a_damaged_file_means_not_finished(tmp_path, clean, damage, victim):
    run(tmp_path, seed=0)
    path = tmp_path / NAME / victim
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip a byte":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    else:
        path.unlink()
    fake.computed = 0
    assert not run(tmp_path, seed=0).skipped
    assert fake.computed == 1
    assert snapshot(tmp_path / NAME) == clean[0]


@pytest.mark.parametrize("record", ["[]", "null", "{", "", '"text"', "{}", '{"digests": 1}'])
def test_a_corrupt_record_means_not_finished(tmp_path, clean, record):
    run(tmp_path, seed=0)
    (tmp_path / NAME / storage.CONFIG).write_text(record)
    assert not run(tmp_path, seed=0).skipped
    assert snapshot(tmp_path / NAME) == clean[0]


def test_a_record_of_another_config_is_not_trusted(tmp_path, clean):
    run(tmp_path, seed=0)
    assert not run(tmp_path, seed=1).skipped
    assert snapshot(tmp_path / NAME) == clean[1]
    assert run(tmp_path, seed=1).skipped


def test_a_record_whose_files_and_digests_disagree_is_not_trusted(tmp_path, clean):
    run(tmp_path, seed=0)
    path = tmp_path / NAME / storage.CONFIG
    record = json.loads(path.read_text())
    record["files"].append("figure3.png")  # a file the digests do not vouch for
    path.write_text(json.dumps(record))
    assert not run(tmp_path, seed=0).skipped
    assert snapshot(tmp_path / NAME) == clean[0]


def test_a_replot_of_nothing_is_one_line_and_creates_nothing(tmp_path, capsys):
    assert cli.main([NAME, "--replot", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"error: {tmp_path / NAME} holds no finished run of {NAME}" in err, err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- a full disk
def disk_full_at(monkeypatch, victim: str) -> None:
    """Make writing the file ``victim`` fail part-way, as a full disk does."""
    real = storage.atomic_write

    def atomic_write(path, write):
        if Path(path).name != victim:
            return real(path, write)

        def full(f):
            f.write(b"the first block")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, full)

    monkeypatch.setattr(storage, "atomic_write", atomic_write)


@pytest.mark.parametrize("before", ["nothing", "finished seed 0"])
@pytest.mark.parametrize("victim", [storage.NUMBERS, "figure2.png", f"{NAME}.csv", storage.CONFIG])
def test_a_full_disk_names_the_file_and_leaves_no_staging(tmp_path, monkeypatch, clean, before,
                                                          victim):
    if before == "finished seed 0":
        run(tmp_path, seed=0)
    disk_full_at(monkeypatch, victim)
    with pytest.raises(storage.WriteError) as info:
        run(tmp_path, seed=1)
    assert info.value.errno == errno.ENOSPC
    assert f"/{victim}: No space left on device" in str(info.value), info.value
    assert str(tmp_path / f".{NAME}.staging-") in str(info.value)
    left = sorted(p.name for p in tmp_path.iterdir())
    if before == "nothing":
        assert left == []
    else:
        assert left == [NAME] and snapshot(tmp_path / NAME) == clean[0]


def test_a_full_disk_ends_the_command_line_with_one_line(tmp_path, monkeypatch, capsys):
    disk_full_at(monkeypatch, storage.NUMBERS)
    assert cli.main([NAME, "--out", str(tmp_path)]) == cli.WRITE_FAILED
    err = capsys.readouterr().err
    assert f"error: could not write {tmp_path}/.{NAME}.staging-" in err, err
    assert "No space left on device" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("full", ["lock file", "staging folder"])
def test_a_disk_full_already_fails_before_computing(tmp_path, monkeypatch, full):
    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if full == "lock file":
        real_open = os.open
        monkeypatch.setattr(storage.os, "open", lambda path, *args: no_space() if str(
            path).endswith(".lock") else real_open(path, *args))
        where = storage.lock_path(tmp_path / NAME)
    else:
        monkeypatch.setattr(storage.tempfile, "mkdtemp", no_space)
        where = tmp_path
    with pytest.raises(storage.WriteError, match=f"could not write {where}: No space left"):
        run(tmp_path)
    assert fake.computed == 0
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- two runs, one folder
def test_a_run_that_will_not_wait_names_the_holder(tmp_path):
    with storage.lock(tmp_path / NAME):
        with pytest.raises(storage.Busy, match=f"{tmp_path / NAME} is in use by process "
                                               f"{os.getpid()}"):
            run(tmp_path, wait=0)
        began = time.monotonic()
        with pytest.raises(storage.Busy, match="gave up after waiting 0.2 s"):
            run(tmp_path, wait=0.2)
        assert time.monotonic() - began >= 0.2
    assert fake.computed == 0
    assert list(tmp_path.iterdir()) == []  # the holder deleted its lock file


def test_a_waiting_run_says_once_whom_it_waits_for_then_runs(tmp_path, clean, capsys):
    held, hold_for = threading.Event(), 0.5

    def hold():
        with storage.lock(tmp_path / NAME):
            held.set()
            time.sleep(hold_for)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    began = time.monotonic()
    outcome = run(tmp_path, seed=0)
    waited = time.monotonic() - began
    holder.join()
    assert not outcome.skipped and waited > 0.5 * hold_for
    err = capsys.readouterr().err
    assert err.count(f"{tmp_path / NAME} is in use by process {os.getpid()}; waiting") == 1, err
    assert snapshot(tmp_path / NAME) == clean[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [NAME]


HERE = Path(__file__).resolve()


def start(out: Path, gate: Path, stderr, *args) -> subprocess.Popen:
    """The command line on the fake experiment, in another process (the end of this file)."""
    return subprocess.Popen([sys.executable, str(HERE), str(gate), NAME, "--out", str(out),
                             *args], stdout=subprocess.DEVNULL, stderr=stderr,
                            cwd=tempfile.gettempdir())


def wait_for(condition, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_two_runs_into_one_folder_take_turns_and_publish_whole_folders(tmp_path, clean):
    """The issue's race, made certain: the second run starts while the first computes."""
    out, gate = tmp_path / "out", tmp_path / "gate"
    gate.mkdir()
    logs = [tmp_path / "stderr-0", tmp_path / "stderr-1", tmp_path / "stderr-refused"]
    procs = []
    try:
        with open(logs[0], "w") as err0, open(logs[1], "w") as err1, open(logs[2], "w") as err2:
            first = start(out, gate, err0, "--set", "seed=0")
            procs.append(first)
            wait_for((gate / "started-0").exists, "the first run to compute")
            second = start(out, gate, err1, "--set", "seed=1")
            refused = start(out, gate, err2, "--set", "seed=1", "--wait", "0")
            procs += [second, refused]
        assert refused.wait(timeout=120) == cli.BUSY, logs[2].read_text()
        assert f"{out / NAME} is in use by process {first.pid}" in logs[2].read_text()
        assert "Traceback" not in logs[2].read_text()
        wait_for(lambda: "waiting for it to finish" in logs[1].read_text(),
                 "the second run to wait")
        assert f"{out / NAME} is in use by process {first.pid}" in logs[1].read_text()
        (gate / "release-0").touch()
        assert first.wait(timeout=120) == 0, logs[0].read_text()
        wait_for((gate / "started-1").exists, "the second run to compute")
        assert snapshot(out / NAME) == clean[0]  # the first run's, whole, while the second stages
        (gate / "release-1").touch()
        assert second.wait(timeout=120) == 0, logs[1].read_text()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert snapshot(out / NAME) == clean[1]
    assert sorted(p.name for p in out.iterdir()) == [NAME, "checks.md", "index.html"]
    # the issue's later run: seed 0 recomputes rather than serve seed 1's numbers
    assert not run(out, seed=0).skipped
    assert snapshot(out / NAME) == clean[0]


def test_a_killed_run_leaves_the_folder_free_and_its_staging_is_removed(tmp_path, clean):
    gate = tmp_path / "gate"
    gate.mkdir()
    with open(tmp_path / "stderr", "w") as err:
        killed = start(tmp_path, gate, err, "--set", "seed=0")
    try:
        wait_for((gate / "started-0").exists, "the run to compute")
        assert storage.holder(storage.lock_path(tmp_path / NAME)) == f"process {killed.pid}"
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=120)
    finally:
        if killed.poll() is None:
            killed.kill()
            killed.wait()
    stale = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(f".{NAME}."))
    assert [name.split("-")[0] for name in stale] == [f".{NAME}.lock", f".{NAME}.staging"]
    assert not run(tmp_path, wait=0, seed=1).skipped  # the lock died with its holder
    assert snapshot(tmp_path / NAME) == clean[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["gate", NAME, "stderr"])


def gated(config, executor):
    """The fake's computation, announced as ``GATE/started-SEED`` and held until the
    test creates ``GATE/release-SEED``."""
    gate = Path(sys.argv[1])
    (gate / f"started-{config.seed}").touch()
    deadline = time.monotonic() + 120
    while not (gate / f"release-{config.seed}").exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing released {gate}")
        time.sleep(0.02)
    return compute(config, executor)


if __name__ == "__main__":  # python tests/experiments/test_runner_faults.py GATE [command line ...]
    use_fake(pytest.MonkeyPatch())
    fake.run = gated
    sys.exit(cli.main(sys.argv[2:]))
