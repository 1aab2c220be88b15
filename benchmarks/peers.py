"""Peer libraries in virtual environments of their own, never the project's.

A peer (SMPyBandits, rlberry, ...) may pin what the project cannot have (an old SciPy,
``gymnasium<0.30``), so each bench that compares with one builds, on first use, a
virtual environment under ``.peers/NAME`` with the peer's pinned requirements, and calls
that environment's interpreter with a script: the job goes in as JSON on stdin, the
answer comes back as JSON on the last line of stdout. No network, or a failed build:
:func:`peer_python` says why and returns ``None``, and the bench reports nothing for
that peer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / ".peers"
#: The file a finished build leaves, holding the requirements it installed.
STAMP = ".installed"


def peer_python(name: str, requirements: tuple[str, ...]) -> Path | None:
    """The interpreter of peer environment ``.peers/name`` with ``requirements``
    installed, built on first use (and rebuilt when the requirements change); ``None``,
    and why (printed), if it cannot be built."""
    home = PEERS / name
    python, stamp = home / "bin" / "python", home / STAMP
    wanted = "\n".join(requirements)
    if stamp.exists() and stamp.read_text() == wanted:
        return python
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(home)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *requirements],
                       check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as error:
        print(f"{name} peer: could not build {home}: {(error.stderr or '')[-300:]}")
        return None
    stamp.write_text(wanted)
    return python


def call_peer(python: Path, script: str, job: dict) -> dict:
    """Run ``script`` under the peer's ``python`` with ``job`` as JSON on stdin; the JSON
    object it prints last."""
    done = subprocess.run([str(python), "-c", script], input=json.dumps(job),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])
