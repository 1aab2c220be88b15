"""Every name a public docstring points to is public: a reader who follows
``:func:`name``` in ``help(f)`` can import it.

A bare reference (``:func:`preference_metrics```) must be a name a user imports from a
package (the ``__all__`` of ``tabular``, ``tabular.rlhf``, ``tabular.linear``,
``tabular.envs``) or a member of the documented class (a method, attribute or field);
any other name is written with its module (``:func:`~tabular.learn.mc.exploring_start_states```),
which ``help()`` shows, and that dotted path must import, with no part private.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

import tabular
import tabular.linear
import tabular.rlhf
from tabular import envs

PACKAGES = (tabular, tabular.rlhf, tabular.linear, envs)
ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc):`~?([^`<>]+?)`")
PUBLIC = {name for package in PACKAGES for name in package.__all__}


def public_objects():
    """Every public callable and class of the packages, and its methods."""
    seen = {}
    for package in PACKAGES:
        for name in package.__all__:
            obj = getattr(package, name)
            seen[f"{package.__name__}.{name}"] = obj
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and (inspect.isfunction(member)
                                                     or isinstance(member, property)):
                        seen[f"{package.__name__}.{name}.{attr}"] = member
    return seen


def member_of(cls, name: str) -> bool:
    """Whether ``name`` is an attribute or a dataclass field of the class ``cls``."""
    return inspect.isclass(cls) and (hasattr(cls, name) or name in getattr(
        cls, "__dataclass_fields__", {}) or name in getattr(cls, "__annotations__", {}))


def resolves(target: str, obj) -> bool:
    target = target.strip().rstrip("()")
    if "." not in target:
        return target in PUBLIC
    parts = target.split(".")
    if any(part.startswith("_") for part in parts):
        return False
    if parts[0] != "tabular":  # numpy, gymnasium, ...: not ours to check
        return True
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for part in parts[cut:]:
            if not (hasattr(found, part) or member_of(found, part)):
                return False
            found = getattr(found, part, None)
        return True
    return False


OBJECTS = public_objects()


@pytest.mark.parametrize("where", sorted(OBJECTS))
def test_docstring_references_are_public(where):
    obj = OBJECTS[where]
    doc = inspect.getdoc(obj.fget if isinstance(obj, property) else obj) or ""
    owner = where.rsplit(".", 1)[0]
    bad = []
    for target in ROLE.findall(doc):
        # a class's or a method's reference to a member of its class, ``:meth:`probs```
        if "." not in target and any(member_of(OBJECTS.get(where_), target.rstrip("()"))
                                     for where_ in (where, owner)):
            continue
        if not resolves(target, obj):
            bad.append(target)
    assert not bad, f"help({where}) points to names a user cannot import: {bad}"
