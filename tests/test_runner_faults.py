"""Fault injection for the experiments runner: an interruption at any write point, or a
corrupted stored file, never lets a rerun skip over numbers that are not its own.

A tiny experiment stands in for the real ones (the runner does not care what it
computes): two figures, a table, numbers that depend on every config field. Each
test interrupts ``run_experiment`` at one write point with ``KeyboardInterrupt`` and
then reruns with the same or with another config: the rerun must either skip with
files that are exactly those of a clean run of its config, or recompute them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tabular.experiments import runner, storage
from tabular.experiments.checks import check
from tabular.experiments.settings import Settings

NAME = runner.EXPERIMENTS[0]  # the fake experiment borrows a real name


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


@pytest.fixture(autouse=True)
def fake_experiment(monkeypatch):
    """``run_experiment(NAME, ...)`` runs the fake experiment."""
    monkeypatch.setattr(runner, "load", lambda name: fake)
    monkeypatch.setattr(runner, "config_fields", lambda module: {
        "scale": (float, ""), "seed": (int, "")})
    fake.computed, fake.after_figure = 0, lambda i: None


def run(out: Path, **settings) -> runner.Outcome:
    return runner.run_experiment(NAME, out, settings=settings)


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file's bytes, except the record's timing and date (the rest of the record is
    compared)."""
    files = {}
    for path in sorted(Path(directory).iterdir()):
        data = path.read_bytes()
        if path.name == runner.CONFIG:
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
            mp.setattr(runner, "load", lambda name: fake)
            mp.setattr(runner, "config_fields", lambda module: {
                "scale": (float, ""), "seed": (int, "")})
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
    elif point in ("old moved aside", "new moved in"):
        real_rename = os.rename
        moving_in = point == "new moved in"

        def rename(src, dst):
            real_rename(src, dst)
            if (".staging-" in Path(src).name) == moving_in:
                raise Interrupt(point)
        monkeypatch.setattr(storage.os, "rename", rename)
    else:
        raise ValueError(point)


WRITE_POINTS = ("numbers", "figure 1", "figure 2", "table", "record", "old moved aside",
                "new moved in")
#: (what the directory held before, where the run was interrupted); with nothing
#: before there is no old directory to move aside.
MATRIX = [(before, point) for before in ("nothing", "finished seed 0") for point in WRITE_POINTS
          if (before, point) != ("nothing", "old moved aside")]


@pytest.mark.parametrize("before, point", MATRIX)
@pytest.mark.parametrize("rerun_seed", [0, 1])
def test_an_interrupted_run_never_lets_a_rerun_skip_over_foreign_numbers(
        tmp_path, monkeypatch, clean, before, point, rerun_seed):
    if before == "finished seed 0":
        run(tmp_path, seed=0)
    with monkeypatch.context() as mp:
        interrupt_after(mp, point)
        with pytest.raises(Interrupt):
            runner.run_experiment(NAME, tmp_path, settings={"seed": 1}, force=True)
    out_dir = tmp_path / NAME
    # Whatever is under NAME is a whole directory: the old one or the new one.
    runner.recover(out_dir)
    if out_dir.exists():
        assert snapshot(out_dir) in (clean[0], clean[1]), point
    elif before == "finished seed 0":
        pytest.fail(f"the finished run of seed 0 was lost when interrupted at {point}")
    fake.computed = 0
    outcome = run(tmp_path, seed=rerun_seed)
    assert snapshot(out_dir) == clean[rerun_seed]
    assert outcome.skipped == (fake.computed == 0)
    no_leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert no_leftovers == [NAME], no_leftovers


@pytest.mark.parametrize("damage", ["truncate", "flip a byte", "delete"])
@pytest.mark.parametrize("victim", [runner.NUMBERS, "figure1.png", "figure2.png", f"{NAME}.csv"])
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
    (tmp_path / NAME / runner.CONFIG).write_text(record)
    assert not run(tmp_path, seed=0).skipped
    assert snapshot(tmp_path / NAME) == clean[0]


def test_a_record_of_another_config_is_not_trusted(tmp_path, clean):
    run(tmp_path, seed=0)
    assert not run(tmp_path, seed=1).skipped
    assert snapshot(tmp_path / NAME) == clean[1]
    assert run(tmp_path, seed=1).skipped
