"""What every experiment's ``Config`` shares: the quick variant, typed tuple settings, and
where the defaults come from.

An experiment's ``Config`` is a frozen dataclass deriving from :class:`Settings`, one
docstring per field. ``python -m tabular.experiments NAME --set KEY=VALUE`` sets a field from
its declared type (:func:`parse_value`): ``bool`` (``true`` or ``false``, nothing else), ``int``,
``float``, ``str``, or a ``tuple[T, ...]`` / ``list[T]`` of them written comma-separated
(``--set td_alphas=0.05,0.1``). A value given from Python must already have the type
(:func:`check_value`): ``1`` is not a bool, ``1.5`` not an int.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
import typing
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

#: The item types a sequence setting may hold.
SCALARS = (bool, int, float, str)


@dataclass(frozen=True)
class Settings:
    """The base of every experiment's ``Config``.

    Its defaults are the settings of the source the experiment reproduces (the book,
    unless :attr:`REFERENCE` names another); the checks that compare against that
    source hold at those settings only (:mod:`tabular.experiments.harness.checks`).
    """

    QUICK: ClassVar[dict] = {}
    """The settings ``--quick`` changes, with their small values (empty: the full run is
    already quick)."""
    REFERENCE: ClassVar[str] = "the book"
    """Whose settings the defaults are, as a check that no longer applies names them
    ("gamma = 0.95, the book uses 0.9")."""
    MAY_BE_EMPTY: ClassVar[tuple[str, ...]] = ()
    """The sequence settings that may be set empty (that part of the experiment is then
    left out); any other sequence setting needs a value."""

    @classmethod
    def quick(cls):
        """The config of ``--quick``: the defaults with :attr:`QUICK` applied."""
        return cls(**cls.QUICK)

    def __post_init__(self):
        """Hold each sequence setting as its declared type with items of its declared
        type, whatever sequence it was given (a list read back from ``config.json``,
        numpy numbers from a sweep): records and ``--set`` then see one form."""
        for name, (container, item) in sequence_fields(type(self)).items():
            object.__setattr__(self, name, container(item(v) for v in getattr(self, name)))


@functools.cache
def sequence_fields(cls) -> dict[str, tuple[type, type]]:
    """``{field: (tuple or list, item type)}`` of the sequence fields of a config class."""
    hints = typing.get_type_hints(cls)
    found = {}
    for f in dataclasses.fields(cls):
        container, item = sequence_type(hints[f.name])
        if container is not None:
            found[f.name] = (container, item)
    return found


def sequence_type(kind) -> tuple[type | None, type | None]:
    """``(tuple, float)`` for ``tuple[float, ...]``, ``(list, int)`` for ``list[int]``;
    ``(None, None)`` for a scalar type. A bare ``tuple`` or a mixed tuple is an error: a
    sequence setting declares one item type, which ``--set`` parses its items as."""
    container = typing.get_origin(kind) or kind
    if container not in (tuple, list):
        return None, None
    args = typing.get_args(kind)
    if container is tuple and len(args) == 2 and args[1] is Ellipsis:
        args = args[:1]
    if len(args) != 1 or args[0] not in SCALARS:
        raise TypeError(f"a sequence setting is tuple[T, ...] or list[T] with T one of "
                        f"bool, int, float, str; got {kind}")
    return container, args[0]


def type_name(kind) -> str:
    """How ``--help`` names a setting's type: ``float``, ``comma-separated floats``."""
    container, item = sequence_type(kind)
    if container is None:
        return getattr(kind, "__name__", str(kind))
    return f"comma-separated {item.__name__}s"


def parse_value(name: str, kind, text: str):
    """``text`` as a value of the setting ``name`` of type ``kind``; the error names the
    setting, its type and the text it could not read."""
    container, item = sequence_type(kind)
    if container is not None:
        inner = text.strip()
        if inner[:1] + inner[-1:] in ("()", "[]"):  # --set 'alphas=(0.1, 0.2)'
            inner = inner[1:-1]
        parts = [part.strip() for part in inner.split(",")]
        try:
            return container(parse_scalar(item, part) for part in parts if part)
        except ValueError as err:
            raise ValueError(f"{name} takes {type_name(kind)}, got {text!r}: {err}") from None
    if kind not in SCALARS:
        raise ValueError(f"{name} has type {kind}, which --set cannot parse")
    try:
        return parse_scalar(kind, text.strip() if kind is not str else text)
    except ValueError as err:
        raise ValueError(f"{name} takes a {kind.__name__}, got {text!r}: {err}") from None


def parse_scalar(kind: type, text: str):
    """One ``bool``, ``int``, ``float`` (not NaN) or ``str`` from ``text``."""
    if kind is bool:  # strictly: "1", "yes" or "off" could be a count or a typo
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise ValueError(f"{text!r} is not a bool (true or false)")
        return lowered == "true"
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a {kind.__name__}") from None
    if value != value:  # no setting means "not a number"
        raise ValueError(f"{text!r} is NaN")
    return value


def is_a(kind: type, value) -> bool:
    """Whether ``value`` is a value of the scalar setting type ``kind``. numpy's numbers
    count; a bool is a number to Python but not a count or a rate here, and a number is
    not a bool."""
    if isinstance(value, bool | np.bool_):
        return kind is bool
    if kind is int:
        return isinstance(value, numbers.Integral)
    if kind is float:
        return isinstance(value, numbers.Real)
    return isinstance(value, kind)


def check_value(name: str, kind, value):
    """``value`` as the setting ``name``'s type ``kind`` if it is one (an int is a
    float; a sequence setting takes a tuple or list of its item type); else a
    ``TypeError`` naming the setting, its type and the value (``ValueError`` for NaN)."""
    container, item = sequence_type(kind)
    if container is None:
        if not is_a(kind, value):
            raise TypeError(f"{name} takes a {type_name(kind)}, got {value!r} "
                            f"({type(value).__name__})")
        values = [value]
    elif not isinstance(value, tuple | list) or not all(is_a(item, v) for v in value):
        raise TypeError(f"{name} takes {type_name(kind)} (a tuple or list), got {value!r}")
    else:
        values = value
    if any(v != v for v in values):
        raise ValueError(f"{name} is NaN; a setting must be a number")
    return kind(value) if container is None else container(item(v) for v in value)


#: The largest magnitude of an integer setting: what a NumPy int64 holds.
INT_LIMIT = 2 ** 63 - 1


def limits_error(cls, name: str, value, default) -> str:
    """Why ``value`` breaks the limits that setting ``name`` of the config class ``cls``
    keeps in every experiment (``""``: it keeps them). They come from the setting's type
    and its default, so that no run starts on a value no experiment can mean:

    - a sequence setting is not empty (unless :attr:`Settings.MAY_BE_EMPTY` names it or
      its default is empty);
    - a float is finite;
    - an integer fits in int64, and is a count ``>= 1`` where the default's are, ``>= 0``
      where they are ``>= 0`` (a seed, a number of planning steps).

    Ranges that depend on the algorithm (a step size in (0, 1], an epsilon) are the
    library's to check: a run that the library refuses ends in one line naming the
    settings the run changed (:class:`~tabular.experiments.harness.runner.SettingRefused`).
    """
    kind = typing.get_type_hints(cls)[name]
    container, item = sequence_type(kind)
    values, defaults = (value, default) if container is not None else ((value,), (default,))
    item = item if container is not None else kind
    if container is not None and not values:
        if defaults and name not in cls.MAY_BE_EMPTY:
            return f"{name} is empty; it takes {type_name(kind)} (default {shown(default)})"
        return ""
    if item is float and not all(np.isfinite(values)):
        return f"{name} must be finite, got {shown(value)}"
    if item is int:
        if any(abs(v) > INT_LIMIT for v in values):
            return f"{name} must fit in int64 (at most {INT_LIMIT}), got {shown(value)}"
        low = next((low for low in (1, 0) if defaults and min(defaults) >= low), None)
        if low is not None and min(values) < low:
            what = "a count" if low == 1 else "a number"
            return (f"{name} must be {'integers' if container else 'an integer'} >= {low} "
                    f"({what}, as its default {shown(default)}), got {shown(value)}")
    return ""


def shown(value) -> str:
    """A setting's value as ``--set`` would take it (``0.05,0.1`` for a tuple, ``()`` for
    an empty one)."""
    if isinstance(value, tuple | list):
        return ",".join(map(shown, value)) if value else "()"
    return str(value).lower() if isinstance(value, bool) else str(value)
