"""How an experiment's outputs reach the disk: atomically, file by file and as a whole.

An experiment's directory ``OUT/NAME/`` changes in one step. A run writes every
file into a staging directory beside it (``OUT/.NAME.staging``), the record
``config.json`` last, then swaps it in: the old directory is renamed aside
(``OUT/.NAME.replaced``), the staging directory takes its name, and the old one is
deleted. An interruption at any point leaves either the old directory or the new
one under ``OUT/NAME`` (:func:`recover` puts the old one back if the process died
between the two renames), never a mix of the two.

The record names the SHA-256 of every file it lists, so :func:`finished` trusts a
directory only when each file is there with the bytes the record describes: a
truncated ``numbers.npz``, a corrupt or foreign ``config.json`` mean "not finished".
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

NUMBERS = "numbers.npz"
CONFIG = "config.json"


def atomic_write(path: Path, write) -> None:
    """Call ``write(binary_file)`` on a temp file next to ``path``, then rename it over
    ``path`` (mode 0644, like any file written with ``open``; mkstemp's is 0600)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_numbers(path: Path, results: dict) -> None:
    """Store an experiment's numbers (plain arrays or strings only) as ``.npz``."""
    arrays = {key: np.asarray(value) for key, value in results.items()}
    bad = [key for key, value in arrays.items() if value.dtype == object]
    if bad:
        raise TypeError(f"results {bad} are not plain arrays (object dtype); "
                        "an experiment must return numbers or strings")
    atomic_write(path, lambda f: np.savez(f, **arrays))


def load_numbers(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def save_csv(path: Path, header, rows) -> None:
    def write(f):
        text = io.StringIO()
        writer = csv.writer(text)
        writer.writerow(header)
        writer.writerows(rows)
        f.write(text.getvalue().encode())

    atomic_write(path, write)


def jsonable(value):
    """``json.dumps``'s ``default=`` for numpy scalars and arrays."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def save_json(path: Path, payload: dict) -> None:
    text = json.dumps(payload, indent=2, sort_keys=True, default=jsonable) + "\n"
    atomic_write(path, lambda f: f.write(text.encode()))


def digest(path: Path) -> str:
    """SHA-256 of a file's bytes, in hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def digests(directory: Path, files: list[str]) -> dict[str, str]:
    return {name: digest(Path(directory) / name) for name in files}


def finished(out_dir: Path, meta: dict) -> dict | None:
    """The stored record if ``out_dir`` holds a finished run of exactly ``meta`` whose
    files all have the digests the record lists; else ``None``."""
    out_dir = Path(out_dir)
    try:
        stored = json.loads((out_dir / CONFIG).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or any(stored.get(key) != meta[key] for key in meta):
        return None
    files = stored.get("digests")
    if not isinstance(files, dict) or NUMBERS not in files:
        return None
    for name, expected in files.items():
        try:
            if digest(out_dir / name) != expected:
                return None
        except OSError:
            return None
    return stored


def _staged(out_dir: Path) -> Path:
    return out_dir.with_name(f".{out_dir.name}.staging")


def _replaced(out_dir: Path) -> Path:
    return out_dir.with_name(f".{out_dir.name}.replaced")


def staging(out_dir: Path) -> Path:
    """A fresh, empty staging directory beside ``out_dir`` (a stale one is removed)."""
    stage = _staged(Path(out_dir))
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    return stage


def recover(out_dir: Path) -> None:
    """Clean up after an interrupted run: put the old directory back if the swap was
    cut between its two renames, and drop an unfinished staging directory."""
    out_dir = Path(out_dir)
    old = _replaced(out_dir)
    if old.exists() and not out_dir.exists():
        os.rename(old, out_dir)
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(_staged(out_dir), ignore_errors=True)


def publish(stage: Path, out_dir: Path) -> None:
    """Make the finished staging directory ``out_dir`` (see the module docstring)."""
    out_dir = Path(out_dir)
    old = _replaced(out_dir)
    shutil.rmtree(old, ignore_errors=True)  # left by a run cut after its swap
    if out_dir.exists():
        os.rename(out_dir, old)
    os.rename(stage, out_dir)
    shutil.rmtree(old, ignore_errors=True)
