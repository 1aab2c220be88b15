"""Every public callable annotates each parameter and its return, and every field of a
result it returns is annotated (issue 26).

The public API: the callables and classes in ``__all__`` of :data:`ALL_MODULES`, and
the public functions and classes defined in :data:`PUBLIC_MODULES`. For a class: its
``__init__`` and every public method and property defined in the package (inherited
ones included, so an env's ``step`` and ``reset`` are checked). The result types are the
classes of the package named in those annotations (resolved, so every annotation must
evaluate) and, recursively, in their fields.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import typing

import pytest

ALL_MODULES = ["tabular", "tabular.rlhf", "tabular.learn", "tabular.solve", "tabular.plan",
               "tabular.pg", "tabular.model", "tabular.envs", "tabular.linear"]
PUBLIC_MODULES = ["tabular.plot", "tabular.testing", "tabular.schedules", "tabular.checks"]


def ours(obj: object) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "tabular"


def public_objects() -> dict[str, object]:
    """``qualified name -> object`` of the public callables and classes."""
    found: dict[str, object] = {}
    for name in ALL_MODULES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if callable(obj) and ours(obj):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if (not attr.startswith("_") and getattr(obj, "__module__", None) == name
                    and (inspect.isfunction(obj) or inspect.isclass(obj)
                         or hasattr(obj, "py_func"))):
                found.setdefault(f"{name}.{obj.__qualname__}", obj)
    return found


def members(cls: type) -> dict[str, object]:
    """``__init__`` and the public methods and properties that ``cls`` has from the
    package's own classes (the nearest definition of each name)."""
    found: dict[str, object] = {}
    for base in reversed(cls.__mro__):
        if not ours(base):
            continue
        for name, value in vars(base).items():
            if name.startswith("_") and name not in ("__init__", "__call__"):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                value = value.fget
            if inspect.isfunction(value) and ours(value):  # not a Protocol's own __init__
                found[name] = value
    if dataclasses.is_dataclass(cls) or _is_namedtuple(cls):
        found.pop("__init__", None)  # generated from the fields, checked as fields
    return found


def _is_namedtuple(cls: type) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def unannotated(func: typing.Callable[..., object], *, bound: bool = False) -> list[str]:
    """The parameters of ``func`` without an annotation, and ``return`` if it lacks one.
    ``bound``: the first parameter is ``self`` or ``cls``, which needs none."""
    func = getattr(func, "py_func", func)  # a numba dispatcher: its Python function
    params = list(inspect.signature(func).parameters.values())
    if bound:
        params = params[1:]
    missing = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    if inspect.signature(func).return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def callables() -> dict[str, tuple[typing.Callable[..., object], bool]]:
    """``name -> (function, bound)`` for every public function and class member."""
    found: dict[str, tuple[typing.Callable[..., object], bool]] = {}
    for qualname, obj in public_objects().items():
        if inspect.isclass(obj):
            for name, member in members(obj).items():
                static = isinstance(inspect.getattr_static(obj, name, None), staticmethod)
                found[f"{qualname}.{name}"] = (member, not static)
        else:
            found[qualname] = (obj, False)
    return found


def classes_in(hint: object) -> list[type]:
    """The package's classes named in the resolved annotation ``hint``."""
    if inspect.isclass(hint) and ours(hint):
        return [hint]
    return [c for arg in typing.get_args(hint) for c in classes_in(arg)]


def hints(obj: object) -> dict[str, object]:
    """The resolved annotations of a function, or those a class declares itself (not its
    bases'). The aliases of :mod:`tabular.types` that name Gymnasium are strings
    (``import tabular`` does not import it), resolved here."""
    import gymnasium

    import tabular.types
    names = {**vars(tabular.types), "gym": gymnasium}
    names["MDPLike"] = eval(tabular.types.MDPLike, names)
    if inspect.isclass(obj):
        module = vars(importlib.import_module(obj.__module__))
        return {name: eval(ann, dict(module), names) if isinstance(ann, str) else ann
                for name, ann in vars(obj).get("__annotations__", {}).items()}
    return typing.get_type_hints(getattr(obj, "py_func", obj), localns=names)


def result_classes() -> dict[str, type]:
    """The package's classes in the public API, in the annotations of its callables, and
    in their fields, recursively."""
    todo = [obj for obj in public_objects().values() if inspect.isclass(obj)]
    for func, _ in callables().values():
        todo += [c for hint in hints(func).values() for c in classes_in(hint)]
    seen: dict[str, type] = {}
    while todo:
        cls = todo.pop()
        name = f"{cls.__module__}.{cls.__qualname__}"
        if name in seen:
            continue
        seen[name] = cls
        for base in cls.__mro__:
            if ours(base):
                todo += [c for hint in hints(base).values() for c in classes_in(hint)]
    return seen


def unannotated_fields(cls: type) -> list[str]:
    """The fields of a dataclass or NamedTuple ``cls`` (the attributes its instances
    carry) that have no annotation."""
    if dataclasses.is_dataclass(cls):
        names = [f.name for f in dataclasses.fields(cls)]
    elif _is_namedtuple(cls):
        names = list(cls._fields)
    else:
        return []
    annotated = set()
    for base in cls.__mro__:
        annotated.update(vars(base).get("__annotations__", {}))
    return [n for n in names if n not in annotated]


CALLABLES = callables()


def test_the_walk_finds_the_api():
    # a floor, so that a broken walk (an import moved, a renamed module) cannot pass
    assert len(CALLABLES) > 300
    assert "tabular.solve.dp.value_iteration" in CALLABLES
    assert "tabular.model.mdp.TabularMDP.from_dense" in CALLABLES
    assert "tabular.envs.base.ModelEnv.step" in CALLABLES
    assert "tabular.solve.results.ValueIterationResult" in result_classes()


def test_every_public_callable_is_annotated():
    missing = {name: gaps for name, (func, bound) in sorted(CALLABLES.items())
               if (gaps := unannotated(func, bound=bound))}
    assert not missing, (f"{len(missing)} of {len(CALLABLES)} public callables lack "
                         "annotations:\n" + "\n".join(f"  {n}: {', '.join(g)}"
                                                      for n, g in missing.items()))


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_annotations_evaluate(name):
    # a string annotation that names nothing would be a promise mypy cannot check
    hints(CALLABLES[name][0])


def test_every_result_field_is_annotated():
    missing = {name: gaps for name, cls in sorted(result_classes().items())
               if (gaps := unannotated_fields(cls))}
    assert not missing, "result fields without annotations:\n" + "\n".join(
        f"  {n}: {', '.join(g)}" for n, g in missing.items())
