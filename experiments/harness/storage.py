"""How an experiment's outputs reach the disk: atomically, file by file and as a whole,
one run at a time.

An experiment's directory ``OUT/NAME/`` changes in one step. A run first takes the
directory's lock (:func:`lock`, an ``flock`` on ``OUT/.NAME.lock``), so a second run into
the same directory waits for it or, with a timeout, gives up with :class:`Busy` naming the
process that holds it. Under the lock the run writes every file into a staging directory
of its own beside the target (``OUT/.NAME.staging-XXXXXXXX``, :func:`staging`), the record
``config.json`` last, then publishes it (:func:`publish`): the old directory is marked
superseded, the two are swapped in one step by Linux's ``renameat2(RENAME_EXCHANGE)``
(:func:`exchange`), and the old one is renamed to a trash name and deleted. A reader of
``OUT/NAME`` sees the old directory or the new one, never nothing and never a mix. Where
there is no exchange (another system, a file system without it) the old directory is
renamed aside (``OUT/.NAME.replaced``) and the staging directory renamed in its place:
between those two renames ``OUT/NAME`` is absent for a moment.

A kill at any point leaves ``OUT/NAME`` whole (the old run or the new one) and loses no
finished computation: the next run's :func:`recover` publishes a finished staging
directory that was not published (its record and files agree and it is not marked
superseded), then deletes what is superseded, unfinished or half deleted. A run that
fails removes its staging directory unless it is finished (:func:`discard`).

The record names the SHA-256 of every file it lists, so :func:`finished` trusts a
directory only when each file is there with the bytes the record describes: a
truncated ``numbers.npz``, a corrupt or foreign ``config.json`` mean "not finished".

A file that cannot be written (a full disk, a read-only directory) raises
:class:`WriteError`, an ``OSError`` whose message names the path; so does a directory that
cannot be published.
"""

from __future__ import annotations

import contextlib
import csv
import ctypes
import errno
import fcntl
import functools
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
    """Where the fallback of :func:`publish` moves the old directory aside."""
    return out_dir.with_name(f".{out_dir.name}.replaced")


def _trash(out_dir: Path) -> str:
    """How the names of the directories that are being deleted begin."""
    return f".{out_dir.name}.trash"


#: The file that marks a directory as superseded: written into ``OUT/NAME`` just before
#: a new one takes its place, so that wherever the old one is left by a kill it is
#: never taken for a finished run that still waits to be published.
SUPERSEDED = ".superseded"

#: ``renameat2``'s flag that swaps two paths in one step (``linux/fs.h``), and the
#: directory descriptor that means "relative to the working directory".
RENAME_EXCHANGE, AT_FDCWD = 2, -100
#: What ``renameat2`` answers where the system or the file system has no exchange.
NO_EXCHANGE = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP}


@functools.cache
def _renameat2():
    """libc's ``renameat2`` (Linux, glibc >= 2.28), or ``None`` where there is none."""
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                         ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def exchange(a: Path, b: Path) -> bool:
    """Swap the directories ``a`` and ``b`` in one step (``renameat2(RENAME_EXCHANGE)``):
    a reader of either path sees the one or the other, never nothing. ``False`` where
    the platform or the file system cannot (nothing is changed then)."""
    function = _renameat2()
    if function is None:
        return False
    if function(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in NO_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), str(b))


def staging(out_dir: Path) -> Path:
    """A new, empty staging directory of this run beside ``out_dir``, so that
    :func:`publish` is one exchange on the same file system (mode 0755, as ``mkdir``
    gives; mkdtemp's is 0700)."""
    out_dir = Path(out_dir)
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f"{_staged(out_dir)}-"))
        os.chmod(stage, 0o755)
    except OSError as err:
        raise write_error(err, out_dir.parent) from err
    return stage


def _delete(path: Path, out_dir: Path) -> None:
    """Delete a superseded or unfinished directory: first renamed to a trash name (one
    step), so that a kill while it is half deleted leaves nothing that looks like a
    run."""
    trash = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f"{_trash(out_dir)}-"))
    os.rename(path, trash / "old")
    shutil.rmtree(trash, ignore_errors=True)


def _mark_superseded(out_dir: Path) -> None:
    (out_dir / SUPERSEDED).touch()


def publish(stage: Path, out_dir: Path) -> None:
    """Make the finished staging directory ``out_dir`` (the module docstring says how).

    The old ``out_dir`` is marked superseded, then swapped with ``stage`` in one step
    (:func:`exchange`), then deleted. Where the system has no exchange, the old directory
    is renamed aside and ``stage`` renamed in its place: two steps, between which
    ``out_dir`` is absent for a moment. A failure is a :class:`WriteError` naming both
    paths; the finished ``stage`` is left for the next run's :func:`recover` to
    publish."""
    stage, out_dir = Path(stage), Path(out_dir)
    try:
        if not out_dir.exists():
            os.rename(stage, out_dir)
            return
        _mark_superseded(out_dir)
        if exchange(stage, out_dir):
            old = stage
        else:
            old = _replaced(out_dir)
            os.rename(out_dir, old)
            os.rename(stage, out_dir)
        _delete(old, out_dir)
    except OSError as err:
        error = WriteError(f"could not publish {stage} as {out_dir}: "
                           f"{err.strerror or err} (the finished run stays in {stage}; "
                           "the next run publishes it)")
        error.errno = err.errno
        raise error from err


def pending(out_dir: Path) -> list[Path]:
    """The finished runs of ``out_dir`` that a killed or failed run did not publish:
    staging directories whose record and files agree and which are not marked
    superseded, oldest record first."""
    found = []
    for stage in Path(out_dir).parent.glob(f"{glob.escape(_staged(out_dir))}-*"):
        if not (stage / SUPERSEDED).exists() and finished(stage, {}) is not None:
            found.append(stage)
    return sorted(found, key=lambda stage: (stage / CONFIG).stat().st_mtime_ns)


def recover(out_dir: Path) -> None:
    """Finish what an interrupted or killed run left, so that no finished computation is
    lost: publish each finished run still in a staging directory (:func:`pending`,
    oldest first, so the newest ends in ``out_dir``), then delete every superseded,
    unfinished or half-deleted directory and an unused mark. Call it holding
    ``out_dir``'s :func:`lock`: a staging directory is then never a live run's."""
    out_dir = Path(out_dir)
    for stage in pending(out_dir):
        publish(stage, out_dir)
    leftovers = (f"{glob.escape(_staged(out_dir))}-*", f"{glob.escape(_trash(out_dir))}-*",
                 glob.escape(_replaced(out_dir).name))
    for pattern in leftovers:
        for path in out_dir.parent.glob(pattern):
            shutil.rmtree(path, ignore_errors=True)
    (out_dir / SUPERSEDED).unlink(missing_ok=True)


def discard(stage: Path, out_dir: Path) -> None:
    """After a run failed: delete its staging directory unless it holds a finished run
    that was not published (the next run's :func:`recover` publishes it), and the mark
    of a swap that did not happen."""
    stage = Path(stage)
    if stage.exists() and ((stage / SUPERSEDED).exists() or finished(stage, {}) is None):
        shutil.rmtree(stage, ignore_errors=True)
    (Path(out_dir) / SUPERSEDED).unlink(missing_ok=True)
