"""Publishing an experiment's folder in one step (issue 45 part 3): Linux's
``renameat2(RENAME_EXCHANGE)`` swaps the staged folder with ``OUT/NAME``, so a reader
polling ``OUT/NAME`` during republishes never finds it absent nor mixed; an unswappable
``OUT/NAME`` is one line and exit status 74, and its finished run is published later.
(The kill at each step of publishing is in ``tests/test_runner_faults.py``.)"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import textwrap
import time

import pytest

from tabular.experiments.harness import cli, storage

#: A reader in its own process: until STOP exists it opens OUT/NAME and reads both files
#: through that one directory handle, counting polls, absences, mixed generations and
#: reads of an old folder deleted under it after its swap (``gone``, which the README
#: tells readers to expect).
POLLER = textwrap.dedent("""
    import os, sys
    out, stop = sys.argv[1], sys.argv[2]
    polls = absent = mixed = gone = 0
    open(stop + ".ready", "w").close()
    while not os.path.exists(stop):
        polls += 1
        try:
            fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:
            absent += 1
            continue
        try:
            parts = []
            for name in ("a", "b"):
                f = os.open(name, os.O_RDONLY, dir_fd=fd)
                parts.append(os.read(f, 100))
                os.close(f)
            mixed += parts[0] != parts[1]
        except FileNotFoundError:
            gone += 1
        finally:
            os.close(fd)
    print(polls, absent, mixed, gone)
""")


def generation(out_dir, k: int) -> None:
    """Stage generation ``k`` of ``out_dir`` (two files holding ``k``) and publish it."""
    stage = storage.staging(out_dir)
    for name in ("a", "b"):
        (stage / name).write_text(str(k) * 50)
    storage.publish(stage, out_dir)


def test_exchange_swaps_two_folders_in_one_step(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("from a")
    (b / "y").write_text("from b")
    if not storage.exchange(a, b):
        pytest.skip("this system or file system has no renameat2 exchange (the fallback "
                    "renames twice)")
    assert (a / "y").read_text() == "from b" and (b / "x").read_text() == "from a"
    with pytest.raises(OSError) as info:  # a real error is not taken for "unsupported"
        storage.exchange(a, tmp_path / "missing")
    assert info.value.errno == errno.ENOENT


def test_a_reader_polling_during_republishes_never_finds_the_folder_absent_or_mixed(
        tmp_path):
    out_dir, stop = tmp_path / "out" / "NAME", tmp_path / "stop"
    (tmp_path / "p").mkdir()
    (tmp_path / "q").mkdir()
    if not storage.exchange(tmp_path / "p", tmp_path / "q"):
        pytest.skip("no renameat2 exchange here: the README says what a reader may see")
    generation(out_dir, 0)
    poller = subprocess.Popen([sys.executable, "-c", POLLER, str(out_dir), str(stop)],
                              stdout=subprocess.PIPE, text=True)
    ready = stop.with_name("stop.ready")
    while not ready.exists() and poller.poll() is None:
        time.sleep(0.01)
    try:
        for k in range(1, 41):
            generation(out_dir, k % 10)
    finally:
        stop.touch()
        polls, absent, mixed, gone = map(int, poller.communicate(timeout=60)[0].split())
    assert polls > 40
    assert (absent, mixed) == (0, 0), (polls, absent, mixed, gone)
    assert (out_dir / "a").read_text() == "0" * 50
    assert sorted(p.name for p in out_dir.parent.iterdir()) == ["NAME"]


def test_an_unswappable_folder_is_one_line_74_and_its_run_is_published_later(
        tmp_path, monkeypatch, capsys):
    argv = ["gridworld_values", "--quick", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    first = json.loads((tmp_path / "gridworld_values" / storage.CONFIG).read_text())

    def read_only(a, b):
        raise OSError(errno.EROFS, "Read-only file system", str(b))

    with monkeypatch.context() as mp:
        mp.setattr(storage, "exchange", read_only)
        capsys.readouterr()
        assert cli.main([*argv, "--force", "--set", "gamma=0.8"]) == cli.WRITE_FAILED
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if "error:" in line]
        assert len(lines) == 1 and "Traceback" not in err, err
        assert "could not publish" in lines[0] and "Read-only file system" in lines[0]
    # the old run is still published, unmarked; the finished new one waits beside it
    assert json.loads((tmp_path / "gridworld_values" / storage.CONFIG).read_text()) == first
    assert storage.SUPERSEDED not in {p.name for p in (tmp_path / "gridworld_values").iterdir()}
    [waiting] = storage.pending(tmp_path / "gridworld_values")
    # once the folder can be swapped, the next run publishes it and computes nothing
    assert cli.main([*argv, "--set", "gamma=0.8"]) == 0
    assert "skipped (finished before)" in capsys.readouterr().out
    record = json.loads((tmp_path / "gridworld_values" / storage.CONFIG).read_text())
    assert record["config"]["gamma"] == 0.8 and not waiting.exists()


#: A process that publishes generation 1 over generation 0 of OUT/NAME and is killed
#: (``os._exit``, no clean-up of any kind) right after the step of publishing named by
#: argv[2].
KILLED = textwrap.dedent("""
    import os, shutil, sys
    from pathlib import Path
    from tabular.experiments.harness import storage

    out_dir, point = Path(sys.argv[1]), sys.argv[2]

    def stage_generation(k):
        stage = storage.staging(out_dir)
        (stage / storage.NUMBERS).write_bytes(bytes([k]) * 1000)
        storage.save_json(stage / storage.CONFIG, {
            "generation": k, "files": [storage.NUMBERS],
            "digests": storage.digests(stage, [storage.NUMBERS])})
        return stage

    storage.publish(stage_generation(0), out_dir)
    stage = stage_generation(1)

    def killed_after(fn):
        def step(*args, **kwargs):
            result = fn(*args, **kwargs)
            os._exit(9)
        return step

    if point.startswith("fallback"):
        storage.exchange = lambda a, b: False
    if point == "marked superseded":
        storage._mark_superseded = killed_after(storage._mark_superseded)
    elif point == "exchanged":
        storage.exchange = killed_after(storage.exchange)
    elif point in ("moved to trash", "fallback: old moved aside", "fallback: new moved in"):
        rename = os.rename
        target = {"moved to trash": ".trash-", "fallback: old moved aside": ".replaced",
                  "fallback: new moved in": "NAME"}[point]
        def renamed(src, dst):
            rename(src, dst)
            if target in str(dst) and (target != "NAME" or Path(dst).name == "NAME"):
                os._exit(9)
        storage.os.rename = renamed
    elif point == "half deleted":
        def half(path, ignore_errors=False):
            victim = next(p for p in Path(path).rglob("*") if p.is_file())
            victim.unlink()
            os._exit(9)
        storage.shutil.rmtree = half
    storage.publish(stage, out_dir)
    print("published without a kill")
""")

KILL_POINTS = ("marked superseded", "exchanged", "moved to trash", "half deleted",
               "fallback: old moved aside", "fallback: new moved in")


def generation_of(directory) -> int:
    """The generation a published or pending folder holds, checked whole."""
    assert storage.finished(directory, {}) is not None, sorted(p.name for p in directory.iterdir())
    return json.loads((directory / storage.CONFIG).read_text())["generation"]


@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_kill_inside_publish_leaves_a_whole_folder_and_loses_no_finished_run(tmp_path,
                                                                               point):
    out_dir = tmp_path / "NAME"
    done = subprocess.run([sys.executable, "-c", KILLED, str(out_dir), point],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 9, done.stdout + done.stderr
    # LOOK FIRST, before any recovery: NAME is whole, and generation 1 is there or waits
    if point == "fallback: old moved aside":  # the two renames' documented moment
        assert not out_dir.exists()
    else:
        assert generation_of(out_dir) in (0, 1)
    published = out_dir.exists() and generation_of(out_dir) == 1
    waiting = [generation_of(stage) for stage in storage.pending(out_dir)]
    assert waiting == ([] if published else [1]), (point, waiting)
    # the next run's recovery publishes it and leaves nothing else
    storage.recover(out_dir)
    assert generation_of(out_dir) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["NAME"]
    assert storage.SUPERSEDED not in {p.name for p in out_dir.iterdir()}
