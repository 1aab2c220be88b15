"""Feature matrices for linear function approximation (Sutton & Barto, section 9.5).

A feature matrix ``X`` is ``float64 [S, d]``: row ``s`` is ``x(s)``, and the linear
estimate is ``v(s, w) = x(s) . w`` (eq. 9.8). Every constructor here returns one, so a
user's own features are just another array (checked by :func:`check_features`).

- :func:`one_hot` -- ``X = I``: the tabular case, in which every linear method is its
  tabular counterpart;
- :func:`state_aggregation` -- one feature per group of states (section 9.3);
- :func:`polynomial`, :func:`fourier` -- the bases of section 9.5.1 and 9.5.2 over a
  state's coordinates in ``[0, 1]^k``;
- :func:`tile_coding` -- overlapping grids offset by the book's asymmetric
  displacement (section 9.5.4);
- :func:`state_coordinates` -- the coordinates those bases read: a gridworld's cells,
  or the position in the row of states;
- :func:`state_action_features` -- the features of control, ``[S, A, d]``: row
  ``(s, a)`` is ``x(s, a)`` and ``q(s, a, w) = x(s, a) . w`` (section 10.1), one block
  of a state's features per action (any user array of that shape is checked by
  :func:`check_state_action_features`).

Features of states where the episode has ended never enter an update (no value flows
from them), so their rows may be anything.
"""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

from tabular.checks import check_positive_int
from tabular.model.mdp import TabularMDP, as_mdp

#: The largest feature matrix built or accepted, in entries (800 MB of float64).
MAX_FEATURE_ENTRIES = 10**8


def check_integer_count(name: str, value: object, high: int | None = None) -> int:
    """``value`` as an int; a ``ValueError`` naming ``name`` unless it is an integer
    (``int`` or a numpy integer: a float, even a whole one such as ``2.0``, a bool, text
    and complex numbers are refused) in ``[1, high]``. The linear family's counts
    (tilings, tiles, orders, sizes) are read by this one rule."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r} "
                         f"({type(value).__name__})")
    return check_positive_int(name, value, high)  # type: ignore[arg-type]  # a numpy int passes too


def check_features(X: npt.ArrayLike, n_states: int, name: str = "features") -> np.ndarray:
    """``X`` as a C-contiguous ``float64 [S, d]`` matrix of finite numbers; a
    ``ValueError`` naming ``name`` and the offending state otherwise (its size is
    checked before the copy, so a broadcast view of a huge ``d`` is never copied)."""
    arr = np.asarray(X)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] != n_states or arr.shape[1] < 1:
        raise ValueError(f"{name} must have shape [{n_states}, d] (one row per state, "
                         f"d >= 1), got {list(arr.shape)}")
    _check_size(name, arr.shape[0], arr.shape[1])
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        s = int(np.argmax(bad))
        raise ValueError(f"{name}[{s}] = {arr[s]} is not finite (state {s})")
    _check_norms(name, np.einsum("ij,ij->i", arr, arr), "state")
    return arr


def _check_norms(name: str, squared: np.ndarray, what: str) -> None:
    """A ``ValueError`` naming ``name`` when a feature vector's squared norm overflows
    float64: no step size and no exact quantity can use it (``alpha ||x||^2`` and
    ``x^T x`` are both inf)."""
    if not np.isfinite(squared).all():
        s = int(np.argmax(~np.isfinite(squared)))
        raise ValueError(f"{name} of {what} {s} is too large: its squared norm overflows "
                         "float64 (scale the features down)")


def check_state_action_features(X: npt.ArrayLike, n_states: int, n_actions: int,
                                name: str = "features") -> np.ndarray:
    """``X`` as a C-contiguous ``float64 [S, A, d]`` array of finite numbers (``x(s, a)``
    of section 10.1); a ``ValueError`` naming ``name`` and the offending pair otherwise."""
    arr = np.asarray(X)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 3 or arr.shape[:2] != (n_states, n_actions) or arr.shape[2] < 1:
        raise ValueError(f"{name} must have shape [{n_states}, {n_actions}, d] (one row per "
                         f"state-action pair, d >= 1; state_action_features builds one from "
                         f"state features [S, d]), got {list(arr.shape)}")
    _check_size(name, arr.shape[0] * arr.shape[1], arr.shape[2])
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr).all(axis=2)
    if bad.any():
        s, a = np.argwhere(bad)[0]
        raise ValueError(f"{name}[{s}, {a}] = {arr[s, a]} is not finite (state {s}, action {a})")
    _check_norms(name, np.einsum("ijk,ijk->ij", arr, arr).ravel(), "state-action pair")
    return arr


def _check_size(name: str, rows: int, columns: int) -> None:
    if rows * columns > MAX_FEATURE_ENTRIES:
        raise ValueError(f"{name} would be a {rows:,} x {columns:,} matrix "
                         f"({8 * rows * columns / 2**30:.1f} GiB); at most "
                         f"{MAX_FEATURE_ENTRIES:,} entries are built")


def one_hot(n_states: int) -> np.ndarray:
    """``I [S, S]``: one feature per state, the tabular case (section 9.3's remark that
    tabular methods are a special case of linear ones)."""
    n_states = check_integer_count("n_states", n_states)
    _check_size(f"one_hot(n_states={n_states})", n_states, n_states)
    return np.eye(n_states)


def state_aggregation(groups: npt.ArrayLike) -> np.ndarray:
    """One feature per group, 1 for the states of that group (section 9.3, Example 9.1).

    ``groups``: int ``[S]``, the group of each state, numbered ``0 .. d - 1`` (every
    number used). For Example 9.1's ten groups of 100 states of the 1000-state walk,
    ``groups = np.r_[0, np.arange(1000) // 100, 9]`` (the end states join their
    neighbours; their rows are never read).
    """
    _refuse_bools("groups", groups)
    g = np.asarray(groups)
    if g.ndim != 1 or g.size == 0 or not np.issubdtype(g.dtype, np.integer):
        raise ValueError(f"groups must be a non-empty int array [S], got dtype {g.dtype} "
                         f"and shape {list(g.shape)}")
    if g.min() < 0:
        s = int(np.argmin(g))
        raise ValueError(f"groups[{s}] = {g[s]} is negative (state {s})")
    d = int(g.max()) + 1
    _check_size("state_aggregation (groups)", g.size, d)  # before anything of size d
    used = np.unique(g)
    if used.size < d:
        missing = int(np.flatnonzero(used != np.arange(used.size))[0])  # the first gap
        raise ValueError(f"groups must use every number 0..{d - 1}; group {missing} "
                         "has no state (it would be a feature that is always 0)")
    X = np.zeros((g.size, d))
    X[np.arange(g.size), g] = 1.0
    return X


def _refuse_bools(name: str, value: object) -> None:
    """A ``ValueError`` naming ``name[i]`` when a list or tuple holds a bool (numpy reads
    ``[0, 1, True]`` as the integers ``[0, 1, 1]``: a silent coercion)."""
    if isinstance(value, list | tuple):
        flat = np.asarray(value, dtype=object).ravel()
        for i, item in enumerate(flat):
            if isinstance(item, bool | np.bool_):
                raise ValueError(f"{name}[{i}] = {item!r} is a bool, not an integer")


def state_coordinates(mdp: TabularMDP) -> np.ndarray:
    """Each state's coordinates scaled to ``[0, 1]``, ``[S, k]``: ``(row, col)`` of a
    gridworld's cell (``state_cells``, ``k = 2``), else the state's position in the row
    of states, ``s / (S - 1)`` (``k = 1``; the random walks' order)."""
    mdp = as_mdp(mdp)
    if mdp.state_cells is not None and mdp.grid_shape is not None:
        H, W = mdp.grid_shape
        return mdp.state_cells / np.maximum(np.array([H - 1, W - 1], dtype=float), 1.0)
    S = mdp.n_states
    return (np.arange(S, dtype=float) / max(S - 1, 1))[:, None]


def _coordinates(coordinates: npt.ArrayLike) -> np.ndarray:
    _refuse_bools("coordinates", coordinates)
    c = np.asarray(coordinates)
    if c.ndim == 1:
        c = c[:, None]
    if (c.ndim != 2 or c.shape[0] < 1 or c.dtype == np.bool_
            or not np.issubdtype(c.dtype, np.number) or np.iscomplexobj(c)):
        raise ValueError("coordinates must be a real array [S] or [S, k], got dtype "
                         f"{c.dtype} and shape {list(c.shape)}")
    c = c.astype(np.float64)
    bad = ~((c >= 0.0) & (c <= 1.0)).all(axis=1)  # also NaN
    if bad.any():
        s = int(np.argmax(bad))
        raise ValueError(f"coordinates[{s}] = {c[s]} is not in [0, 1] (state {s}); scale "
                         "them first (state_coordinates does)")
    return c


def _exponents(order: int, k: int, name: str) -> np.ndarray:
    """Every ``c`` in ``{0, ..., order}^k``, ``[(order + 1)^k, k]``, lowest first."""
    if isinstance(order, bool | np.bool_) or not isinstance(order, int | np.integer) or order < 0:
        raise ValueError(f"{name} order must be an integer >= 0, got {order!r}")
    order = int(order)
    count = (order + 1) ** k
    if count > MAX_FEATURE_ENTRIES:
        raise ValueError(f"{name} of order {order} in {k} dimensions has {count:,} features")
    return np.array(list(itertools.product(range(order + 1), repeat=k)), dtype=float)


def polynomial(coordinates: npt.ArrayLike, order: int) -> np.ndarray:
    """The polynomial basis of eq. 9.17: ``x_i(s) = prod_j s_j^{c_ij}`` for every
    ``c_i`` in ``{0, ..., order}^k``, ``(order + 1)^k`` features (``0^0 = 1``, the
    constant feature). ``coordinates``: ``[S, k]`` in ``[0, 1]`` (:func:`state_coordinates`)."""
    c = _coordinates(coordinates)
    powers = _exponents(order, c.shape[1], "polynomial")
    _check_size("polynomial", c.shape[0], powers.shape[0])
    return np.prod(c[:, None, :] ** powers[None, :, :], axis=2)


def fourier(coordinates: npt.ArrayLike, order: int) -> np.ndarray:
    """The Fourier cosine basis of eq. 9.18: ``x_i(s) = cos(pi s . c_i)`` for every
    ``c_i`` in ``{0, ..., order}^k``, ``(order + 1)^k`` features.
    ``coordinates``: ``[S, k]`` in ``[0, 1]``."""
    c = _coordinates(coordinates)
    freqs = _exponents(order, c.shape[1], "fourier")
    _check_size("fourier", c.shape[0], freqs.shape[0])
    return np.cos(np.pi * c @ freqs.T)


def tile_coding(coordinates: npt.ArrayLike, *, tilings: int, tiles: int) -> np.ndarray:
    """Tile coding (section 9.5.4): ``tilings`` grids of ``tiles`` tiles per dimension
    over ``[0, 1]^k``, tiling ``t`` offset by ``t / tilings`` of a tile times the
    asymmetric displacement ``(1, 3, 5, ...)`` (the book's recommendation, after
    Miller and Glanz). Each grid has one more tile per dimension than ``tiles``, so the
    offset grids still cover the unit cube; every state has exactly ``tilings`` active
    features. ``coordinates``: ``[S, k]`` in ``[0, 1]``."""
    c = _coordinates(coordinates)
    tilings = check_integer_count("tilings", tilings)
    tiles = check_integer_count("tiles", tiles)
    S, k = c.shape
    per_tiling = (tiles + 1) ** k
    _check_size(f"tile_coding(tilings={tilings}, tiles={tiles})", S, tilings * per_tiling)
    displacement = 2.0 * np.arange(k) + 1.0
    X = np.zeros((S, tilings * per_tiling))
    strides = (tiles + 1) ** np.arange(k)
    for t in range(tilings):
        offset = (t * displacement / tilings) % 1.0  # in tile widths
        index = np.minimum(np.floor(c * tiles + offset).astype(np.int64), tiles)
        X[np.arange(S), t * per_tiling + index @ strides] = 1.0
    return X


def state_action_features(X: npt.ArrayLike, n_actions: int) -> np.ndarray:
    """The state-action features ``[S, A, A d]`` of state features ``X [S, d]``, one
    block per action: ``x(s, a)`` is ``x(s)`` in columns ``a d .. (a + 1) d - 1`` and 0
    elsewhere, so ``q(s, a, w) = x(s) . w_a`` with ``w_a = w[a d:(a + 1) d]``
    (``w.reshape(A, d)`` holds one weight vector per action).

    This is the layout of section 10.1's linear ``q`` when nothing is shared between
    actions: each action gets its own linear function of the state, an update of one
    action's value moves no other's, and one-hot ``X`` makes ``x(s, a)`` one-hot over
    the pairs (the tabular case, ``Q[s, a] = w[a S + s]``). Features that do share
    weights between actions (tile coding over state and action, as in the Mountain
    Car example) are any ``[S, A, d]`` array of your own.
    """
    shape = np.shape(X)
    X = check_features(X, shape[0] if shape else 1, "X")  # any number of states
    n_actions = check_integer_count("n_actions", n_actions)
    S, d = X.shape
    _check_size(f"state_action_features(n_actions={n_actions})", S * n_actions, n_actions * d)
    out = np.zeros((S, n_actions, n_actions * d))
    for a in range(n_actions):
        out[:, a, a * d:(a + 1) * d] = X
    return out
