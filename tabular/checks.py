"""Argument checks shared by every public function: each error names the parameter.

Every function that takes a policy accepts the three forms: a greedy ``int [S]``
array of actions, a stochastic ``[S, A]`` matrix, or a :class:`~tabular.SoftmaxPolicy`.
:func:`policy_matrix` is the one converter to ``[S, A]`` probabilities (planning,
exact sums, prediction); :func:`tabular.model.policy.as_softmax_policy`, built on it, the
one converter to a :class:`~tabular.SoftmaxPolicy` (policy-gradient learners).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Protocol

import numpy as np
import numpy.typing as npt


class HasSizes(Protocol):
    """What the checks read of a model (a :class:`~tabular.TabularMDP`): its sizes and
    the names of its states, for errors."""

    @property
    def n_states(self) -> int: ...

    @property
    def n_actions(self) -> int: ...

    def state_name(self, s: int) -> str: ...


def check_gamma(gamma: float) -> float:
    """The discount ``gamma`` as a float; a ``ValueError`` unless it is in ``[0, 1]``."""
    return check_unit_interval("gamma", gamma)


#: The real number types a numeric argument may have: Python's and NumPy's integers and
#: floats. Not ``bool``/``np.bool_`` (a flag is not a count or a rate) and not
#: ``complex``/``np.complexfloating`` (``float()`` of one drops its imaginary part, with
#: only a ComplexWarning; ``np.complex128`` is also a ``np.number``, hence the list).
REAL_TYPES = (int, float, np.integer, np.floating)


def is_real(value: object) -> bool:
    """``value`` is a real number (:data:`REAL_TYPES`), not a bool."""
    return isinstance(value, REAL_TYPES) and not isinstance(value, bool | np.bool_)


def check_number(name: str, value: object) -> float:
    """``value`` as a float; a ``ValueError`` naming ``name`` unless it is a real number
    (``None``, text, ``True``, ``np.bool_`` and complex numbers, Python's or NumPy's, are
    refused rather than coerced; NaN passes: the caller says which range it wants)."""
    if not is_real(value):
        raise ValueError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    try:
        return float(value)  # type: ignore[arg-type]  # is_real: a real number
    except OverflowError:  # an int beyond the float range
        raise ValueError(f"{name} must be a number within the float range, "
                         f"got {value!r:.40}") from None


def check_flag(name: str, value: object) -> bool:
    """``value`` as a bool; a ``ValueError`` naming ``name`` unless it is ``True`` or
    ``False`` (no truthiness: ``"no"`` is not ``False``)."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_unit_interval(name: str, value: float) -> float:
    """``value`` as a float; a ``ValueError`` naming ``name`` unless it is in ``[0, 1]``."""
    value = check_number(name, value)
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return value


def check_positive(name: str, value: float, high: float | None = None) -> float:
    """``value`` as a float; a ``ValueError`` naming ``name`` unless it is finite and > 0
    (and, with ``high``, at most ``high``: the largest value that keeps what it scales
    in the float range, said in the error)."""
    value = check_number(name, value)
    if not 0.0 < value < np.inf:  # also rejects NaN
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be at most {high:g}, got {value:g}")
    return value


def check_nonnegative(name: str, value: float) -> float:
    """``value`` as a float; a ``ValueError`` naming ``name`` unless it is finite and >= 0."""
    value = check_number(name, value)
    if not 0.0 <= value < np.inf:  # also rejects NaN
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def check_finite(name: str, value: float) -> float:
    """``value`` as a float; a ``ValueError`` naming ``name`` unless it is finite."""
    value = check_number(name, value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    return value


#: The largest count that drives a loop (steps, samples, epochs, rounds, pairs): 10^8
#: iterations of even the cheapest loop take minutes, and a larger count is a slip.
MAX_COUNT = 10**8

#: The largest integer a kernel can hold (int64): the bound of every integer argument
#: that names no smaller one, so that none overflows on its way into a kernel.
MAX_INT64 = 2**63 - 1


def _is_whole(value: object) -> bool:
    """``value`` is an integer, as an int or a whole float, and not a bool (a Python int
    of any size: ``10**30`` is whole, and too large for a float check)."""
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, int | np.integer):
        return True
    return isinstance(value, float | np.floating) and bool(np.isfinite(value)) \
        and int(value) == value


def check_positive_int(name: str, value: int, high: float | None = None) -> int:
    """``value`` as an int; a ``ValueError`` naming ``name`` unless it is an integer in
    ``[1, high]`` (``high``: the largest value that makes sense, said in the error;
    ``None``: :data:`MAX_INT64`, the most a kernel's integer holds; ``math.inf`` for a
    count the caller clamps before any kernel sees it)."""
    if not _is_whole(value) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    high = MAX_INT64 if high is None else high
    if value > high:
        raise ValueError(f"{name} must be at most {high:,}, got {value!r}")
    return int(value)


def check_count(name: str, value: int, low: int, high: int) -> int:
    """``value`` as an int; a ``ValueError`` naming ``name`` unless it is an integer in
    ``[low, high]`` (a count that may be 0, or must be at least 2)."""
    if not _is_whole(value) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low:,}, {high:,}], got {value!r}")
    return int(value)


def memory_limit() -> int:
    """The most memory one call may ask for: half the physical memory, in bytes (``2**34``
    where the platform does not say). Linux overcommits, so a larger request is not
    refused by numpy but swaps or meets the out-of-memory killer."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError, AttributeError):
        return 2**34


def check_fits(name: str, n_bytes: int, what: str = "its arrays") -> None:
    """A ``ValueError`` naming ``name`` when ``n_bytes`` (what ``name`` makes a call
    allocate) exceed :func:`memory_limit`: said before anything is allocated."""
    limit = memory_limit()
    if n_bytes > limit:
        raise ValueError(f"{name} is too large: {what} would need {_bytes(n_bytes)}, more "
                         f"than the {_bytes(limit)} (half this machine's memory) a call may use")


def _bytes(n: int) -> str:
    """``n`` bytes in the largest unit that keeps a number >= 1."""
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            return f"{size:,.0f} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{float(n):.3g} bytes"


def real_array(name: str, value: object, shape: tuple[int, ...] | None = None
               ) -> npt.NDArray[np.float64]:
    """``value`` as a float64 array; a ``ValueError`` naming ``name`` unless it holds real
    numbers (integers or floats: text, bools, complex numbers and objects are refused,
    not coerced) and, with ``shape``, has that shape. Finiteness is the caller's to say."""
    try:
        arr = np.asarray(value)
    except ValueError as error:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array of numbers: {error}") from None
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers, got "
                         f"{type(value).__name__ if arr.ndim == 0 else arr.dtype} {value!r:.60}")
    where = bool_inside(value, arr)
    if where is not None:
        raise ValueError(f"{name}{where} is a bool: {name} must hold real numbers, not flags")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have shape {list(shape)}, got {list(arr.shape)}")
    return arr.astype(np.float64, copy=False)


def bool_inside(value: object, arr: np.ndarray) -> list[int] | None:
    """The index of the first ``True``/``False`` among the elements of ``value``, a list
    (or other non-array) that NumPy read as the numbers ``arr`` (``[True, 0]`` becomes
    ``int64 [1, 0]``: the dtype alone cannot tell), else ``None``."""
    if isinstance(value, np.ndarray) or arr.dtype.kind == "b":
        return None
    if arr.ndim == 0:
        return [] if isinstance(value, bool | np.bool_) else None
    try:
        elements = np.asarray(value, dtype=object)
    except ValueError:  # nested sequences NumPy read as numbers but not as objects
        return None
    if elements.shape != arr.shape:
        return None
    is_bool = np.frompyfunc(lambda v: isinstance(v, bool | np.bool_), 1, 1)(elements)
    is_bool = np.asarray(is_bool, dtype=bool)
    return np.argwhere(is_bool)[0].tolist() if is_bool.any() else None


def index_array(name: str, value: object) -> npt.NDArray[np.int64]:
    """``value`` as an int64 array; a ``ValueError`` naming ``name`` unless it holds
    integers (``1.0``, ``1.5``, ``True``, text refused: an index is not rounded or read
    from a flag). The range is the caller's to say."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" or bool_inside(value, arr) is not None:
        raise ValueError(f"{name} must hold integer indices, got "
                         f"{type(value).__name__ if arr.ndim == 0 else arr.dtype} {value!r:.60}")
    return arr.astype(np.int64, copy=False)


def first_bad(bad: npt.NDArray[np.bool_]) -> str:
    """The index of the first ``True`` of ``bad``, as ``[i, j]`` text for an error."""
    return str(np.argwhere(bad)[0].tolist())


def check_index(name: str, value: object, size: int) -> int:
    """``value`` as an int; a ``ValueError`` naming ``name`` unless it is an integer id in
    ``[0, size)`` (``True``, ``1.0`` and ``-1`` are refused, not read as ``1`` or the last)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer in [0, {size}), got {value!r}")
    if not 0 <= value < size:
        raise ValueError(f"{name} must be in [0, {size}): {value!r} is outside")
    return int(value)


def check_seed(seed: object) -> int | None:
    """``seed`` as ``None`` or an int; a ``ValueError`` unless it is ``None`` or an integer
    >= 0 (``True`` and ``1.0`` are refused)."""
    if seed is not None and (isinstance(seed, bool | np.bool_)
                             or not isinstance(seed, int | np.integer) or seed < 0):
        raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")
    return None if seed is None else int(seed)


def check_size(what: str, count: int, limit: int, entry_bytes: int,
               unit: str = "outcome slots") -> None:
    """Refuse, before anything is allocated, ``count`` entries of ``entry_bytes`` bytes
    each when more than ``limit``: a ``ValueError`` saying ``what`` asks for them (the
    parameters, e.g. ``"max_move=1000"``), how many ``unit`` and how many bytes."""
    if count > limit:
        raise ValueError(f"{what} makes {count:,} {unit} ({_bytes(entry_bytes * count)}); "
                         f"at most {limit:,} are built")


def policy_matrix(mdp: HasSizes | tuple[int, int], policy: object,
                  name: str = "policy") -> npt.NDArray[np.float64]:
    """A policy as a stochastic ``float64 [S, A]`` matrix (a new, C-contiguous array).

    ``mdp``: the :class:`~tabular.TabularMDP` the policy acts in (its sizes, and the
    state names in errors), or a shape ``(S, A)`` where no model is at hand.
    ``policy``: a greedy ``int [S]`` array of actions, a stochastic ``[S, A]`` array
    whose rows are distributions (to ``1e-9``), or a :class:`~tabular.SoftmaxPolicy`
    (anything with a ``probs()`` method). ``name`` (default ``"policy"``): how errors
    name the argument. Errors name the offending state.
    """
    S, A, state_name = _sizes(mdp)
    if hasattr(policy, "probs"):  # a SoftmaxPolicy (duck-typed: tabular.model.policy imports this)
        sizes = (getattr(policy, "n_states", S), getattr(policy, "n_actions", A))
        if sizes != (S, A):
            raise ValueError(f"{name} covers {sizes[0]} states and {sizes[1]} actions; "
                             f"the MDP has {S} states and {A} actions")
        policy = policy.probs()
    try:
        pi = np.asarray(policy)
    except ValueError:  # ragged nested lists
        raise ValueError(f"{name} must be an array [{S}] (actions) or [{S}, {A}] "
                         f"(probabilities), got ragged lists {policy!r:.60}") from None
    if pi.shape == (S,):
        if not np.issubdtype(pi.dtype, np.integer):
            raise ValueError(f"{name} of shape [{S}] must hold integer actions, got {pi.dtype}")
        check_actions(name, pi, A, state_name)
        check_fits(name, 8 * S * A, f"a [{S:,}, {A:,}] matrix")
        one_hot = np.zeros((S, A))
        one_hot[np.arange(S), pi] = 1.0
        return one_hot
    if pi.shape != (S, A):
        raise ValueError(f"{name} must have shape [{S}] (actions) or [{S}, {A}] "
                         f"(probabilities), got {pi.shape}")
    if pi.dtype.kind not in "biuf":  # complex refused: its imaginary part would be dropped
        raise ValueError(f"{name} must hold numbers, got {pi.dtype}")
    pi = pi.astype(np.float64)
    # whole-matrix test first, in reductions without temporaries (a NaN or inf entry
    # fails it); a product with ones is the fastest row sum of short rows
    sums = pi @ np.ones(A)
    if pi.size == 0 or (sums.min() >= 1 - 1e-9 and sums.max() <= 1 + 1e-9 and pi.min() >= 0):
        return np.ascontiguousarray(pi)
    bad = ~np.isfinite(pi).all(axis=1) | (pi < 0).any(axis=1) | (np.abs(pi.sum(axis=1) - 1) > 1e-9)
    if bad.any():
        s = int(np.argmax(bad))
        raise ValueError(f"{name}[{s}] = {pi[s]} is not a probability distribution "
                         f"(state {state_name(s)})")
    return np.ascontiguousarray(pi)


def check_actions(name: str, actions: np.ndarray, n_actions: int,
                  state_name: Callable[[int], str]) -> None:
    """Refuse an integer array of actions ``[S]`` with an entry outside ``[0, n_actions)``,
    naming the first such state (``state_name(s)``: how the model names it)."""
    bad = (actions < 0) | (actions >= n_actions)
    if bad.any():
        s = int(np.argmax(bad))
        raise ValueError(f"{name}[{s}] = {actions[s]} is not an action in [0, {n_actions}) "
                         f"(state {state_name(s)})")


def _sizes(mdp):
    """``(S, A, state_name)`` of a model or of a shape ``(S, A)``."""
    if isinstance(mdp, tuple):
        S, A = mdp
        return int(S), int(A), str
    return mdp.n_states, mdp.n_actions, mdp.state_name


def check_action_mask(mdp: HasSizes, action_mask: npt.ArrayLike | None
                      ) -> npt.NDArray[np.bool_] | None:
    """``action_mask`` as a read-only bool ``[S, A]`` array (``None`` stays ``None``); a
    ``ValueError`` naming the problem (and the state with no available action)."""
    if action_mask is None:
        return None
    mask = np.asarray(action_mask)
    shape = (mdp.n_states, mdp.n_actions)
    if mask.shape != shape:
        raise ValueError(f"action_mask must have shape {shape} (states, actions), got "
                         f"{mask.shape}")
    if mask.dtype != np.bool_:
        if not (np.issubdtype(mask.dtype, np.integer) and np.isin(mask, (0, 1)).all()):
            raise ValueError(f"action_mask must be bool (or 0/1), got dtype {mask.dtype}")
    mask = np.ascontiguousarray(mask, dtype=np.bool_)
    closed = ~mask.any(axis=1)
    if closed.any():
        s = int(np.flatnonzero(closed)[0])
        raise ValueError(f"action_mask leaves state {mdp.state_name(s)} no available action "
                         f"({int(closed.sum())} such state(s))")
    mask.flags.writeable = False
    return mask
