"""ASCII gridworld layouts: reading, checking and the legend.

A layout is a rectangle of characters, one row per line (surrounding whitespace
of each line and blank lines before and after the rectangle are ignored):

=====  ===========================================================================
char   cell
=====  ===========================================================================
``.``  floor
``#``  wall (not a state)
``S``  start (the episode starts uniformly on the ``S`` cells; otherwise floor)
``G``  goal / treasure: entering it ends the episode (``goal_reward``)
``T``  trap: entering it ends the episode (``trap_reward``, ``-inf`` by default)
``C``  cliff: entering it pays ``cliff_reward`` and sends the agent back to the start
=====  ===========================================================================

Any other character must be declared by the gridworld's options: a key of
``teleports`` (a teleport cell), the target character of a teleport, or a key of
``cell_rewards``. Such cells are floor otherwise.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias

import numpy as np

#: A layout as the envs take it: its text, a list of rows, a ``.txt`` path, or the name
#: of a file in ``envs/layouts/``.
LayoutSpec: TypeAlias = str | os.PathLike[str] | Sequence[str]

LAYOUT_DIR = Path(__file__).parent / "layouts"

FLOOR, WALL, START, GOAL, TRAP, CLIFF, TELEPORT, MARKED = range(8)
#: The cell kind of each character every layout may use (the table above).
LEGEND = {".": FLOOR, "#": WALL, "S": START, "G": GOAL, "T": TRAP, "C": CLIFF}
TERMINAL_KINDS = (GOAL, TRAP)


def available_layouts() -> list[str]:
    """Names of the layout files shipped in ``envs/layouts/``."""
    return sorted(p.stem for p in LAYOUT_DIR.glob("*.txt"))


def layout_text(layout: LayoutSpec) -> str:
    """The text of a layout given as text, a list of rows, a file path, or a file name.

    A string is read by this rule: a single line ending in ``.txt`` is a file path (or
    the name of a file in ``envs/layouts/``); a single line that is the name of a
    shipped layout (:func:`available_layouts`) is that file; any other string, one with
    a newline or one that names no shipped layout, is the layout itself. A
    ``PathLike`` is always a file. (So the file system is only asked about strings that
    end in ``.txt``: ``"S" * 5000`` is a row of 5000 start cells, not a path.)
    """
    if isinstance(layout, (list, tuple)):
        if not all(isinstance(row, str) for row in layout):
            raise ValueError("layout rows must be strings")
        return "\n".join(layout)
    if isinstance(layout, os.PathLike) or (isinstance(layout, str) and "\n" not in layout
                                           and layout.strip().endswith(".txt")):
        return _read_file(layout)
    if not isinstance(layout, str):
        raise ValueError(f"layout must be a string, a list of rows or a path, "
                         f"got {type(layout).__name__}")
    if "\n" not in layout and layout.strip() in available_layouts():
        return (LAYOUT_DIR / f"{layout.strip()}.txt").read_text(encoding="utf-8")
    return layout


def looks_like_a_name(layout: object) -> bool:
    """Whether ``layout`` could be a misspelt layout name (one line of letters, digits,
    ``_`` and ``-``), so that an error about it may list the shipped layouts."""
    return isinstance(layout, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,100}",
                                                   layout.strip()) is not None


def _read_file(layout: str | os.PathLike[str]) -> str:
    """The text of the layout file ``layout`` (a path, or a file of ``envs/layouts/``);
    a ``ValueError`` naming it if it is missing or unreadable."""
    shown = repr(str(layout)) if len(str(layout)) <= 80 else repr(str(layout)[:80]) + "..."
    try:
        path = Path(layout)
        if not path.is_file():
            path = LAYOUT_DIR / path
        if not path.is_file():
            raise ValueError(f"layout file {shown} not found (shipped layouts: "
                             f"{', '.join(available_layouts())})")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"layout file {shown} cannot be read: {err}") from None


def parse_layout(text: str, extra_chars=frozenset()) -> np.ndarray:
    """The layout ``text`` as a ``uint8 [H, W]`` array of character codes.

    Raises ``ValueError`` naming the row (and column) for an empty layout, an empty
    row inside it, ragged rows, or a character neither in :data:`LEGEND` nor in
    ``extra_chars``.
    """
    if not isinstance(text, str):
        raise ValueError(f"layout text must be a string, got {type(text).__name__}")
    rows = [line.strip() for line in text.splitlines()]
    while rows and not rows[0]:
        rows.pop(0)
    while rows and not rows[-1]:
        rows.pop()
    if not rows:
        raise ValueError("layout is empty: it needs at least one row of cells")
    width = len(rows[0])
    allowed = set(LEGEND) | set(extra_chars)
    for r, row in enumerate(rows):
        if not row:
            raise ValueError(f"layout row {r} is empty (rows must all have {width} cells)")
        if len(row) != width:
            raise ValueError(f"layout row {r} has {len(row)} cells, row 0 has {width}: "
                             "rows must have equal length")
        if not row.isascii() or not set(row) <= allowed:
            c = next(c for c, ch in enumerate(row) if ch not in allowed)
            raise ValueError(f"layout row {r}, column {c}: unknown character {row[c]!r} "
                             f"(legend: {' '.join(LEGEND)}; other characters must be "
                             "declared in teleports or cell_rewards)")
    return np.frombuffer("".join(rows).encode("ascii"), dtype=np.uint8).reshape(len(rows), width)


def as_text(chars: np.ndarray) -> str:
    """The layout of character codes ``chars`` back as text, one row per line."""
    return "\n".join(row.tobytes().decode("ascii") for row in chars)
