"""``import tabular`` changes nothing in another library: in a fresh interpreter that has
already imported every module ``import tabular`` loads (numba, NumPy, Gymnasium,
matplotlib and the standard library's), the import leaves each of their attributes, and
each attribute of their classes, the very object it was; it adds no warnings filter,
starts no thread and changes no global setting of NumPy, matplotlib or the interpreter.

The one registration it makes is two listeners on numba's ``"numba:compile"`` event
(numba's documented hook), each acting on the compiles of this library's own kernels
only: the first-call notice (:mod:`tabular._numba.notice`) and the filter of numba's
report that a sequential runs driver made no parallel loop (:mod:`tabular._numba.runs`).
"""

import json
import os
import subprocess
import sys

#: Lists the non-tabular modules that ``import tabular`` loads.
LOADED = """
import json, sys
import tabular
print(json.dumps(sorted(m for m in sys.modules
                        if m.split(".")[0] not in ("tabular", "__main__"))))
"""

#: Imports those modules, takes a snapshot, imports tabular, reports what differs.
COMPARE = r"""
import importlib, inspect, json, os, sys, threading, warnings

for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a module importable only as a side effect of another
        pass

import matplotlib
import numpy as np
from numba.core import event, inline_closurecall


def attributes():
    seen = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] == "tabular" or name.startswith("__"):
            continue
        try:
            members = dict(vars(module))
        except TypeError:
            continue
        for attr, value in members.items():
            seen[(name, attr)] = value
            if inspect.isclass(value) and getattr(value, "__module__", None) == name:
                for cls_attr, cls_value in list(vars(value).items()):
                    seen[(name, f"{attr}.{cls_attr}")] = cls_value
    return seen


def settings():
    return {
        "warnings.filters": repr(warnings.filters),
        "threads": sorted(t.ident for t in threading.enumerate()),
        "active_count": threading.active_count(),
        "numpy.geterr": np.geterr(),
        "numpy.printoptions": repr(np.get_printoptions()),
        "matplotlib.rcParams": repr(dict(matplotlib.rcParams)),
        "matplotlib.backend": matplotlib.get_backend(),
        "recursionlimit": sys.getrecursionlimit(),
        "excepthook": repr(sys.excepthook),
        "meta_path": repr(sys.meta_path),
        "environ": dict(os.environ),
    }


def listeners():
    return {kind: [id(x) for x in found] for kind, found in event._registered.items()}


# Whether module.attr is one its own __getattr__ (PEP 562) gives and keeps, as
# concurrent.futures keeps ThreadPoolExecutor once asked for it.
def lazy(module, attr, value):
    own = vars(sys.modules[module]).get("__getattr__")
    return own is not None and "." not in attr and own(attr) is value


before, before_settings, before_listeners = attributes(), settings(), listeners()
inliner = (inline_closurecall.copy, inline_closurecall.InlineWorker.inline_ir)

import tabular  # noqa: E402

after, after_settings = attributes(), settings()
added = [type(x).__module__ + "." + type(x).__qualname__
         for kind, found in event._registered.items() for x in found
         if id(x) not in before_listeners.get(kind, [])]
print(json.dumps({
    "checked": len(before),
    "changed": sorted(f"{m}.{a}" for (m, a), v in before.items()
                      if (m, a) in after and after[(m, a)] is not v),
    "removed": sorted(f"{m}.{a}" for (m, a) in before if (m, a) not in after),
    "added": sorted(f"{m}.{a}" for (m, a), v in after.items() if (m, a) not in before
                    and not inspect.ismodule(v) and not lazy(m, a, v)),
    "settings": sorted(k for k in before_settings if before_settings[k] != after_settings[k]),
    "inliner": [inline_closurecall.copy is inliner[0],
                inline_closurecall.InlineWorker.inline_ir is inliner[1],
                inline_closurecall.copy is __import__("copy")],
    "listeners": added,
}))
"""


#: Libraries ``import tabular`` does not load but a user's process has beside it.
ALSO = ["gymnasium", "gymnasium.envs.toy_text", "matplotlib", "matplotlib.pyplot"]


def _python(code: str, *args: str) -> str:
    env = {**os.environ, "TABULAR_QUIET": "1", "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-c", code, *args], env=env, check=True,
                          capture_output=True, text=True).stdout.splitlines()[-1]


def test_import_tabular_changes_nothing_in_another_library():
    loaded = json.loads(_python(LOADED))
    assert {"numba", "numpy"} <= {name.split(".")[0] for name in loaded}
    # and the libraries tabular's adapters and plots meet, imported or not
    got = json.loads(_python(COMPARE, json.dumps([*loaded, *ALSO])))
    assert got["checked"] > 10_000  # every attribute of every module it loads
    assert got["inliner"] == [True, True, True], "numba's inliner is numba's own"
    assert got["changed"] == []
    assert got["removed"] == []
    assert got["added"] == []
    assert got["settings"] == [], "no warnings filter, thread or global setting changed"
    assert sorted(got["listeners"]) == ["tabular._numba.notice._FirstCompile",
                                        "tabular._numba.runs._QuietSimplifyingPipeline"]
