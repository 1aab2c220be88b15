"""How an experiment's outputs reach the disk: atomically, file by file and as a whole,
one run at a time.

An experiment's directory ``OUT/NAME/`` changes in one step. A run first takes the
directory's lock (:func:`lock`, an ``flock`` on ``OUT/.NAME.lock``), so a second run into
the same directory waits for it or, with a timeout, gives up with :class:`Busy` naming the
process that holds it. Under the lock the run writes every file into a staging directory
of its own beside the target (``OUT/.NAME.staging-XXXXXXXX``, :func:`staging`), the record
``config.json`` last, then swaps it in: the old directory is renamed aside
(``OUT/.NAME.replaced``), the staging directory takes its name, and the old one is
deleted. An interruption at any point leaves either the old directory or the new one
under ``OUT/NAME`` (:func:`recover` puts the old one back if the process died between
the two renames), never a mix of the two; a run that fails removes its staging directory,
and the next run under the lock removes any that a killed process left.

The record names the SHA-256 of every file it lists, so :func:`finished` trusts a
directory only when each file is there with the bytes the record describes: a
truncated ``numbers.npz``, a corrupt or foreign ``config.json`` mean "not finished".

A file that cannot be written (a full disk, a read-only directory) raises
:class:`WriteError`, an ``OSError`` whose message names the path.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import glob
import hashlib
import io
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

NUMBERS = "numbers.npz"
CONFIG = "config.json"
#: The files of an experiment's folder that hold numbers (the rest are figures).
NUMBER_SUFFIXES = (".npz", ".csv", ".json")


class WriteError(OSError):
    """An output that could not be written (a full disk, a read-only directory): the
    message names the path, ``errno`` is the system's."""


def write_error(err: OSError, path) -> WriteError:
    """``err`` as a :class:`WriteError` naming ``path``."""
    if isinstance(err, WriteError):
        return err
    error = WriteError(f"could not write {path}: {err.strerror or err}")
    error.errno = err.errno
    return error


def atomic_write(path: Path, write) -> None:
    """Call ``write(binary_file)`` on a temp file next to ``path``, then rename it over
    ``path`` (mode 0644, like any file written with ``open``; mkstemp's is 0600). A
    failure leaves ``path`` as it was and no temp file; an ``OSError`` is re-raised as a
    :class:`WriteError` naming ``path``."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise write_error(err, path) from err
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise write_error(err, path) from err
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
    """The stored record if ``out_dir`` holds a finished run of exactly ``meta``: the
    record's fields equal ``meta``'s, it lists a digest for each of its files (the
    numbers among them) and every file has the digest listed; else ``None``."""
    out_dir = Path(out_dir)
    try:
        stored = json.loads((out_dir / CONFIG).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or any(stored.get(key) != meta[key] for key in meta):
        return None
    files, listed = stored.get("digests"), stored.get("files")
    if (not isinstance(files, dict) or NUMBERS not in files or not isinstance(listed, list)
            or not all(isinstance(name, str) for name in listed) or set(listed) != set(files)):
        return None
    for name, expected in files.items():
        try:
            if digest(out_dir / name) != expected:
                return None
        except OSError:
            return None
    return stored


class Busy(RuntimeError):
    """Another process held an output's lock for longer than this one would wait."""


#: How often a run waiting for a lock tries again, in seconds.
POLL = 0.1


def lock_path(path: Path) -> Path:
    """The lock file of ``path``: ``.NAME.lock`` beside it."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


def holder(lock_file: Path) -> str:
    """Who holds a lock, as the lock file names them: ``"process 1234"``, or ``"another
    process"`` before the holder has written its pid."""
    try:
        pid = Path(lock_file).read_text().strip()
    except OSError:
        pid = ""
    return f"process {pid}" if pid.isdigit() else "another process"


@contextlib.contextmanager
def lock(path: Path, timeout: float | None = None,
         notice: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the lock of ``path`` (an output written as a whole) for the ``with`` block.

    The lock is an ``flock`` on :func:`lock_path` ``(path)``, which holds the holder's
    pid. The kernel drops it when the holder exits, however it exits, so a killed run
    never leaves ``path`` locked. While another process holds it, ``notice`` gets one
    line naming that process and the call waits: as long as it takes with
    ``timeout=None`` (or ``inf``), else up to ``timeout`` seconds, then raises
    :class:`Busy`. The holder deletes the lock file before releasing it, so none is left
    behind; a waiter that has locked the deleted file then tries again on the new one.
    """
    path = Path(path)
    file = lock_path(path)
    deadline = None if timeout is None else time.monotonic() + timeout
    told = False
    while True:
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(file, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise write_error(err, file) from err
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            who = holder(file)
            if deadline is not None and time.monotonic() >= deadline:
                raise Busy(f"{path} is in use by {who} (lock {file}); "
                           f"gave up after waiting {timeout:g} s") from None
            if notice is not None and not told:
                notice(f"{path} is in use by {who}; waiting for it to finish")
                told = True
            left = POLL if deadline is None else deadline - time.monotonic()
            time.sleep(max(0.0, min(POLL, left)))
            continue
        try:
            mine = os.fstat(fd)
            current = os.stat(file)
            same = (mine.st_dev, mine.st_ino) == (current.st_dev, current.st_ino)
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # its holder deleted it while this run waited
    try:
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError as err:
            raise write_error(err, file) from err
        yield
    finally:
        file.unlink(missing_ok=True)
        os.close(fd)


def _staged(out_dir: Path) -> str:
    """How the names of ``out_dir``'s staging directories begin."""
    return f".{out_dir.name}.staging"


def _replaced(out_dir: Path) -> Path:
    return out_dir.with_name(f".{out_dir.name}.replaced")


def staging(out_dir: Path) -> Path:
    """A new, empty staging directory of this run beside ``out_dir``, so that
    :func:`publish` is one rename on the same file system (mode 0755, as ``mkdir``
    gives; mkdtemp's is 0700)."""
    out_dir = Path(out_dir)
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f"{_staged(out_dir)}-"))
        os.chmod(stage, 0o755)
    except OSError as err:
        raise write_error(err, out_dir.parent) from err
    return stage


def recover(out_dir: Path) -> None:
    """Clean up after an interrupted or killed run: put the old directory back if the
    swap was cut between its two renames, and drop unfinished staging directories.
    Call it holding ``out_dir``'s :func:`lock`: a staging directory is then never a
    live run's."""
    out_dir = Path(out_dir)
    old = _replaced(out_dir)
    if old.exists() and not out_dir.exists():
        os.rename(old, out_dir)
    shutil.rmtree(old, ignore_errors=True)
    for stage in out_dir.parent.glob(f"{glob.escape(_staged(out_dir))}*"):
        shutil.rmtree(stage, ignore_errors=True)


def publish(stage: Path, out_dir: Path) -> None:
    """Make the finished staging directory ``out_dir`` (see the module docstring)."""
    out_dir = Path(out_dir)
    old = _replaced(out_dir)
    shutil.rmtree(old, ignore_errors=True)  # left by a run cut after its swap
    if out_dir.exists():
        os.rename(out_dir, old)
    os.rename(stage, out_dir)
    shutil.rmtree(old, ignore_errors=True)
