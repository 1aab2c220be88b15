"""What ``config.json`` records about a run beside its numbers: what makes two runs the
same (:func:`metadata`), and what the gallery shows beside it (:func:`provenance`)."""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import time
from pathlib import Path
from types import ModuleType

import tabular
from tabular.experiments.harness import registry
from tabular.experiments.harness.storage import jsonable


def metadata(name: str, config, quick: bool) -> dict:
    """What ``config.json`` records about a run (before its outcome is known)."""
    return {
        "experiment": name,
        "config": json.loads(json.dumps(dataclasses.asdict(config), default=jsonable)),
        "quick": quick,
        "seed": getattr(config, "seed", None),
        "version": tabular.__version__,
    }


def provenance(module: ModuleType, config, quick: bool) -> dict:
    """What the gallery shows beside a run, recorded with it but not part of what makes
    two runs the same (:func:`metadata`): what the experiment reproduces, the settings
    the run changed from the mode's defaults (``overrides``, the values it used) and
    those defaults (``defaults``), the commit and the date."""
    name = module.__name__.rsplit(".", 1)[-1]
    changed = registry.overrides(module, config, quick)
    return {
        "description": registry.summary(name),
        "reproduces": module.REPRODUCES,
        "overrides": json.loads(json.dumps({k: v for k, (v, _) in changed.items()},
                                           default=jsonable)),
        "defaults": json.loads(json.dumps({k: d for k, (_, d) in changed.items()},
                                          default=jsonable)),
        "commit": commit(),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
    }


@functools.cache
def commit() -> str | None:
    """The checkout's commit, ``+dirty`` when tracked files differ from it (None outside
    a git checkout, e.g. an installed wheel)."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=30)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD"],
                               capture_output=True, timeout=30).returncode != 0
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip() + ("+dirty" if dirty else "")

