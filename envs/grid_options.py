"""Checking a gridworld's options against its layout: each error names the option, the
cell and the layout character at fault.

:class:`~tabular.envs.GridWorld` turns its keyword arguments into arrays over the layout here
(landing rewards, teleport targets, wind), so that the model builder of
:mod:`tabular.envs.gridworld` only sees checked arrays.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from tabular.checks import check_number, real_array

from .layout import (
    CLIFF,
    GOAL,
    LEGEND,
    MARKED,
    TELEPORT,
    TRAP,
    WALL,
    available_layouts,
    layout_text,
    looks_like_a_name,
    parse_layout,
)


def reward_option(name: str, value, allow_minus_inf: bool = False) -> float:
    """The ``value`` of the reward option ``name`` as a float: a real number (text and
    ``True`` are refused, not coerced); NaN and ``+inf`` are rejected, and ``-inf`` too
    unless ``allow_minus_inf`` (default ``False``)."""
    value = check_number(name, value)
    if math.isnan(value) or value == math.inf or (value == -math.inf and not allow_minus_inf):
        allowed = "a finite number or -inf" if allow_minus_inf else "a finite number"
        raise ValueError(f"{name} must be {allowed}, got {value}")
    return value


def mapping_option(name: str, value) -> dict:
    """The option ``name`` (``None`` or a mapping) as a new dict; a ``ValueError`` naming it
    for anything else (a list of pairs is not read as a mapping)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a dict or None, got {type(value).__name__}")
    return dict(value)


def parse_grid(layout, teleports: dict, cell_rewards: dict) -> np.ndarray:
    """The layout's ``uint8 [H, W]`` character codes, with the characters that
    ``teleports`` and ``cell_rewards`` declare allowed beside the legend.

    ``layout``: anything :func:`tabular.envs.layout.layout_text` reads; ``teleports``:
    ``{char: (target, reward)}``; ``cell_rewards``: ``{(row, col) or char: reward}``.
    """
    extra = set()
    for name, keys in (("teleports", teleports), ("cell_rewards", cell_rewards)):
        for key in keys:
            if isinstance(key, str):
                if len(key) != 1 or key in LEGEND or key.isspace() or not key.isascii():
                    raise ValueError(f"{name} key {key!r} must be one ASCII character "
                                     f"outside the legend {' '.join(LEGEND)}")
                extra.add(key)
    for key, spec in teleports.items():
        if not isinstance(key, str):
            raise ValueError(f"teleports key {key!r} must be a layout character")
        if not (isinstance(spec, (tuple, list)) and len(spec) == 2):
            raise ValueError(f"teleports[{key!r}] must be (target, reward), got {spec!r}")
        if isinstance(spec[0], str):
            if len(spec[0]) != 1 or spec[0] in LEGEND or not spec[0].isascii():
                raise ValueError(f"teleports[{key!r}] target {spec[0]!r} must be one "
                                 "layout character outside the legend, or (row, col)")
            extra.add(spec[0])
    text = layout_text(layout)
    try:
        return parse_layout(text, extra)
    except ValueError as err:
        if looks_like_a_name(layout):
            raise ValueError(f"{err}; note: no layout file named {layout.strip()!r} "
                             f"either (shipped: {', '.join(available_layouts())})") from None
        raise


def cell_kinds(chars: np.ndarray, teleports: dict) -> np.ndarray:
    """``int8 [H, W]`` cell kinds of :mod:`tabular.envs.layout` for the character codes ``chars``:
    the legend's, ``TELEPORT`` for the keys of ``teleports``, ``MARKED`` for any other
    declared character."""
    kind_of_code = np.full(256, MARKED, dtype=np.int8)
    for ch, kind in LEGEND.items():
        kind_of_code[ord(ch)] = kind
    for ch in teleports:
        kind_of_code[ord(ch)] = TELEPORT
    return kind_of_code[chars]


def cells_of(chars: np.ndarray, kinds: np.ndarray, key, name: str) -> np.ndarray:
    """Boolean ``[H, W]`` mask of the cells that ``key`` names (a layout character, or a
    non-wall ``(row, col)``) in the layout of codes ``chars`` and kinds ``kinds``; errors
    start with ``name``, the option being checked."""
    H, W = chars.shape
    if isinstance(key, str):
        mask = chars == ord(key)
        if not mask.any():
            raise ValueError(f"{name}: no cell {key!r} in the layout")
        return mask
    if not (isinstance(key, tuple | list) and len(key) == 2 and all(
            isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_) for x in key)):
        raise ValueError(f"{name}: a cell is a layout character or (row, col), two "
                         f"integers, got {key!r}")
    r, c = int(key[0]), int(key[1])
    if not (0 <= r < H and 0 <= c < W):
        raise ValueError(f"{name}: cell (row {r}, column {c}) is outside the "
                         f"{H}x{W} layout")
    if kinds[r, c] == WALL:
        raise ValueError(f"{name}: cell (row {r}, column {c}) is a wall")
    mask = np.zeros(chars.shape, dtype=bool)
    mask[r, c] = True
    return mask


def landing_rewards(chars: np.ndarray, kinds: np.ndarray, *, goal_reward, trap_reward,
                    cliff_reward, cell_rewards: dict) -> np.ndarray:
    """``[H, W]`` reward on entering each cell of the layout of codes ``chars`` and kinds
    ``kinds`` (NaN: the cell pays the step reward).

    ``goal_reward``, ``trap_reward`` (``-inf`` allowed), ``cliff_reward``: the rewards of
    the ``G``, ``T``, ``C`` cells; ``cell_rewards``: ``{(row, col) or char: reward}``,
    overriding them (``-inf`` allowed).
    """
    landing = np.full(chars.shape, np.nan)
    landing[kinds == GOAL] = reward_option("goal_reward", goal_reward)
    landing[kinds == TRAP] = reward_option("trap_reward", trap_reward, True)
    landing[kinds == CLIFF] = reward_option("cliff_reward", cliff_reward)
    for key, value in cell_rewards.items():
        name = f"cell_rewards[{key!r}]"
        landing[cells_of(chars, kinds, key, name)] = reward_option(name, value, True)
    return landing


def teleport_table(chars: np.ndarray, kinds: np.ndarray, state_id: np.ndarray,
                   teleports: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(target state [H, W], reward [H, W])`` of the teleport cells of the layout of
    codes ``chars`` and kinds ``kinds`` (target -1 and reward 0 elsewhere).

    ``state_id``: ``[H, W]`` state of each cell (:func:`tabular.envs.gridworld.number_states`);
    ``teleports``: ``{char: (target, reward)}``, the target a character that appears
    once in the layout or a ``(row, col)`` cell, neither a wall nor a cliff.
    """
    target_state = np.full(chars.shape, -1, dtype=np.int64)
    reward = np.zeros(chars.shape)
    for key, spec in teleports.items():
        name = f"teleports[{key!r}]"
        if not (chars == ord(key)).any():
            raise ValueError(f"{name}: no cell {key!r} in the layout")
        target = spec[0]
        if isinstance(target, str):
            cells = np.argwhere(chars == ord(target))
            if len(cells) != 1:
                raise ValueError(f"{name}: target {target!r} must appear exactly once in the "
                                 f"layout, found {len(cells)} times")
            r, c = (int(x) for x in cells[0])
        else:
            r, c = (int(x) for x in np.argwhere(cells_of(chars, kinds, target, name))[0])
        if kinds[r, c] in (CLIFF, WALL):
            raise ValueError(f"{name}: target cell (row {r}, column {c}) is a "
                             f"{'cliff' if kinds[r, c] == CLIFF else 'wall'}")
        source = chars == ord(key)
        target_state[source] = state_id[r, c]
        reward[source] = reward_option(f"{name} reward", spec[1])
    return target_state, reward


def wind_option(wind, shape: tuple[int, int]) -> np.ndarray:
    """``int64 [W]``: the upward push of each column of a grid of ``shape`` ``(H, W)``.

    ``wind``: ``None`` (no wind) or one integer per column; a push stronger than the
    grid's height moves no further, so it is clipped to ``[-H, H]``.
    """
    H, W = shape
    if wind is None:
        return np.zeros(W, dtype=np.int64)
    values = real_array("wind", wind)  # bools, text and complex refused, not coerced
    if values.shape != (W,):
        raise ValueError(f"wind must give one integer per column: the layout has {W} "
                         f"columns, got shape {values.shape}")
    bad = ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        c = int(np.argmax(bad))
        raise ValueError(f"wind[{c}] = {values[c]} (column {c}) is not an integer")
    return np.clip(values, -H, H).astype(np.int64)
