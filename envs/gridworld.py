"""``GridWorld``: a Gymnasium env from an ASCII layout, with its exact tabular model.

Actions (every gridworld): 0 = up, 1 = right, 2 = down, 3 = left. States are the
non-wall cells numbered row by row (``state_of_cell`` / ``cell_of_state``).

Dynamics of one step from cell ``(r, c)`` with action ``a``:

1. Terminal cells (``G``, ``T``) are absorbing: every action loops back with reward 0
   and ``done=True`` (as in FrozenLake).
2. A teleport cell sends the agent to its target whatever the action (Sutton & Barto
   Example 3.5: A -> A' with +10).
3. Otherwise the agent moves in direction ``a`` with probability ``1 - slip`` and in
   each of the two perpendicular directions with probability ``slip / 2``. A move
   into the edge or a wall leaves the agent where it is (a "bump").
4. Wind (Sutton & Barto Section 6.5): after the move, the wind of the column the
   agent LEFT pushes it ``wind[c]`` cells up (down if negative), one cell at a time,
   stopping at the edge or a wall. Only the final cell counts.
5. Landing on a cliff cell ``C`` sends the agent to the start (the start
   distribution) without ending the episode (Example 6.6); landing on ``G`` or ``T``
   ends it.

The reward of a step is, in this order of precedence: the teleport reward when
leaving a teleport cell; the reward of the cell entered, if it has one
(``goal_reward``, ``trap_reward``, ``cliff_reward`` or ``cell_rewards``; staying in
place does not count as entering, except that a move ending on a cliff always
falls); ``bump_reward`` for a blocked move, if given;
otherwise ``step_reward``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from tabular import TabularMDP
from tabular.checks import check_index, check_positive_int, check_size, check_unit_interval

from .base import MAX_OUTCOME_SLOTS, OUTCOME_BYTES, ModelEnv, constant
from .grid_options import (
    cell_kinds,
    landing_rewards,
    mapping_option,
    parse_grid,
    reward_option,
    teleport_table,
    wind_option,
)
from .layout import (
    CLIFF,
    FLOOR,
    GOAL,
    MARKED,
    START,
    TELEPORT,
    TERMINAL_KINDS,
    TRAP,
    WALL,
    LayoutSpec,
    as_text,
)

ACTION_NAMES = ("up", "right", "down", "left")
MOVES = constant([(-1, 0), (0, 1), (1, 0), (0, -1)], np.int64)  # (d_row, d_col)

# Colours of the "rgb_array" render, by cell kind.
COLOURS = {
    FLOOR: (236, 236, 236),
    WALL: (64, 64, 72),
    START: (170, 200, 240),
    GOAL: (80, 190, 90),
    TRAP: (215, 50, 50),
    CLIFF: (120, 30, 30),
    TELEPORT: (160, 110, 210),
    MARKED: (215, 195, 240),
}
AGENT_COLOUR = (30, 60, 200)
#: The largest "rgb_array" picture drawn, in pixels (192 MB of uint8 RGB).
MAX_PICTURE_PIXELS = 2**26


class GridWorld(ModelEnv):
    """A gridworld from an ASCII layout (see :mod:`tabular.envs.layout` for the legend).

    ## Description
    One step's dynamics (slip, wind, teleports, cliffs) are in the module docstring.
    Attributes: ``chars`` (``uint8 [H, W]``, the layout's characters), ``grid_shape``
    (``(H, W)``), ``kinds`` (``int8 [H, W]``, the cell kinds of :mod:`tabular.envs.layout`).

    ## Action Space
    ``Discrete(4)``: 0 = up, 1 = right, 2 = down, 3 = left. A move into the edge or a
    wall leaves the agent where it is; with ``slip`` it goes sideways instead.

    ## Observation Space
    ``Discrete(S)``: the non-wall cells, numbered row by row (``state_of_cell`` /
    ``cell_of_state``; ``state_id``, ``int64 [H, W]``, the state of each cell, -1 on
    walls; ``state_cells``, ``int64 [S, 2]``, the ``(row, col)`` of each state).

    ## Starting State
    Uniform over the ``S`` cells (a layout without one is refused).

    ## Rewards
    In this order of precedence: a teleport's reward when leaving its cell; the reward
    of the cell entered, if it has one; ``bump_reward`` for a blocked move; otherwise
    ``step_reward``.

    ## Episode End
    Termination: entering a ``G`` or ``T`` cell (absorbing afterwards: every action
    loops back, reward 0); a ``C`` cell sends the agent to the start instead.
    Truncation: ``GridWorld`` has no built-in id; ``register_gridworld(env_id, layout,
    max_episode_steps=None, **options)`` sets the time limit (default: none).

    ## Arguments
    * ``layout``: the layout text, a list of rows, a ``.txt`` path, or the name of a
      file in ``envs/layouts/``.
    * ``step_reward``: reward of an ordinary move (default 0).
    * ``goal_reward``, ``trap_reward``, ``cliff_reward``: reward on entering a ``G`` /
      ``T`` / ``C`` cell (defaults 1, ``-inf``, -100).
    * ``bump_reward``: reward of a move blocked by the edge or a wall (default: the
      step reward).
    * ``cell_rewards``: ``{(row, col) or char: reward}``, reward on entering those
      cells (overrides the goal/trap/cliff reward; ``-inf`` allowed; default none).
    * ``slip``: probability in ``[0, 1]`` of moving perpendicular to the intended
      direction, half each side (default 0).
    * ``wind``: one integer per column, the upward push of the column the agent
      leaves (default ``None``: no wind).
    * ``teleports``: ``{char: (target, reward)}``; every action from a ``char`` cell
      moves the agent to ``target`` (a character that appears once in the layout, or
      a ``(row, col)`` cell) with ``reward`` (default ``None``: none).
    * ``render_mode``: ``"ansi"``, ``"rgb_array"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (the built-in layouts are registered as subclasses,
      ``tabzoo/...-v0``).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    action_names = ACTION_NAMES

    def __init__(self, layout: LayoutSpec, *, step_reward: float = 0.0,
                 goal_reward: float = 1.0, trap_reward: float = -math.inf,
                 cliff_reward: float = -100.0, bump_reward: float | None = None,
                 cell_rewards: Mapping[tuple[int, int] | str, float] | None = None,
                 slip: float = 0.0, wind: Sequence[int] | None = None,
                 teleports: Mapping[str, tuple[str | tuple[int, int], float]] | None = None,
                 render_mode: str | None = None) -> None:
        teleports = mapping_option("teleports", teleports)
        cell_rewards = mapping_option("cell_rewards", cell_rewards)
        chars = parse_grid(layout, teleports, cell_rewards)
        self.chars = chars
        self.grid_shape = chars.shape
        self.kinds = cell_kinds(chars, teleports)
        if not (self.kinds == START).any():
            raise ValueError("layout has no start cell 'S'")
        slip = check_unit_interval("slip", slip)
        check_model_size(self.kinds, slip)
        self.state_id, self.state_cells = number_states(self.kinds)
        landing = landing_rewards(chars, self.kinds, goal_reward=goal_reward,
                                  trap_reward=trap_reward, cliff_reward=cliff_reward,
                                  cell_rewards=cell_rewards)
        teleport_to, teleport_reward = teleport_table(chars, self.kinds, self.state_id,
                                                      teleports)
        mdp = gridworld_model(
            self.kinds, landing, teleport_to, teleport_reward,
            wind=wind_option(wind, self.grid_shape), slip=slip,
            step_reward=reward_option("step_reward", step_reward),
            bump_reward=None if bump_reward is None else reward_option("bump_reward",
                                                                       bump_reward),
            action_names=self.action_names,
            state_labels=self.label_states(self.state_cells),
        )
        super().__init__(mdp, render_mode)

    def label_states(self, cells: np.ndarray) -> list[str]:
        """How states are named in errors and plots: ``"(row, col)"`` of each of
        ``cells`` (``int [S, 2]``); a subclass may name them its own way."""
        rows, cols = cells[:, 0].tolist(), cells[:, 1].tolist()
        return [f"({r}, {c})" for r, c in zip(rows, cols, strict=True)]

    # ----------------------------------------------------------- coordinates
    def state_of_cell(self, row: int, col: int) -> int:
        """The state id of cell ``(row, col)`` (0-indexed); walls have none."""
        H, W = self.grid_shape
        for name, value in (("row", row), ("col", col)):
            if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
                raise ValueError(f"{name} must be an integer, got {value!r}")
        if not (0 <= row < H and 0 <= col < W):
            raise ValueError(f"cell (row {row}, column {col}) is outside the {H}x{W} layout")
        s = int(self.state_id[row, col])
        if s < 0:
            raise ValueError(f"cell (row {row}, column {col}) is a wall, not a state")
        return s

    def cell_of_state(self, s: int) -> tuple[int, int]:
        """``(row, col)`` of state ``s``."""
        r, c = self.state_cells[check_index("state", s, len(self.state_cells))]
        return int(r), int(c)

    # --------------------------------------------------------------- render
    def render(self) -> str | np.ndarray | None:
        """:meth:`render_rgb` in mode ``"rgb_array"``, :meth:`render_text` in ``"ansi"``."""
        if self.render_mode == "rgb_array":
            return self.render_rgb()
        return super().render()

    def render_text(self) -> str:
        """The layout with the agent drawn as ``@``."""
        rows = [list(line) for line in as_text(self.chars).splitlines()]
        if self.s is not None:
            r, c = self.cell_of_state(self.s)
            rows[r][c] = "@"
        text = "\n".join("".join(row) for row in rows) + "\n"
        if self.last_action is not None:
            text = f"({self.action_names[self.last_action]})\n" + text
        return text

    def render_rgb(self, cell_pixels: int | None = None) -> np.ndarray:
        """A ``uint8 [H * px, W * px, 3]`` picture: cells coloured by kind, agent as a disc.

        ``cell_pixels``: ``px``, the side of a cell in pixels (default ``None``: up to 32,
        so that the picture is at most about 512 pixels wide; at most
        ``MAX_PICTURE_PIXELS`` pixels in all).
        """
        H, W = self.grid_shape
        if cell_pixels is None:
            px = max(1, min(32, 512 // max(H, W)))
        else:
            px = check_positive_int("cell_pixels", cell_pixels)
            check_size(f"cell_pixels={px} on the {H}x{W} layout", H * W * px * px,
                       MAX_PICTURE_PIXELS, 3, "pixels")
        palette = np.zeros((max(COLOURS) + 1, 3), dtype=np.uint8)
        for kind, colour in COLOURS.items():
            palette[kind] = colour
        image = palette[self.kinds].repeat(px, axis=0).repeat(px, axis=1)
        if px >= 6:  # grid lines: darken the last pixel row and column of every cell
            image[px - 1::px, :] = (image[px - 1::px, :] * 0.75).astype(np.uint8)
            image[:, px - 1::px] = (image[:, px - 1::px] * 0.75).astype(np.uint8)
        if self.s is not None:
            r, c = self.cell_of_state(self.s)
            y, x = np.mgrid[0:px, 0:px] + 0.5 - px / 2
            disc = y**2 + x**2 <= (0.35 * px) ** 2 if px >= 3 else np.ones((px, px), bool)
            image[r * px:(r + 1) * px, c * px:(c + 1) * px][disc] = AGENT_COLOUR
        return image


# ---------------------------------------------------------------------- model
def gridworld_model(kinds, landing_reward, teleport_to, teleport_reward, *, wind, slip,
                    step_reward, bump_reward, action_names, state_labels) -> TabularMDP:
    """The exact :class:`TabularMDP` of a checked gridworld, built with array operations.

    ``kinds`` ``[H, W]`` cell kinds; ``landing_reward`` ``[H, W]`` reward on entering a
    cell (NaN: none); ``teleport_to`` ``[H, W]`` target state of teleport cells (-1:
    none) and ``teleport_reward`` ``[H, W]``; ``wind`` ``int [W]``; ``slip`` the
    perpendicular-move probability; ``step_reward`` and ``bump_reward`` (``None``: the
    step reward) the rewards of an ordinary and a blocked move; ``action_names`` and
    ``state_labels`` the model's metadata. See the module docstring for the dynamics.
    Outcomes are not merged: two slips into the same wall are two outcomes with the
    same successor.
    """
    H, W = kinds.shape
    open_cells = kinds != WALL
    state_id, cells = number_states(kinds)
    rows, cols = cells[:, 0], cells[:, 1]
    S = rows.size
    outcomes = slip_outcomes(slip)
    J = len(outcomes)

    end_r = np.empty((S, 4, J), dtype=np.int64)
    end_c = np.empty((S, 4, J), dtype=np.int64)
    bumped = np.empty((S, 4, J), dtype=bool)
    prob = np.empty((S, 4, J))
    push = wind[cols]  # the wind of the column the agent leaves
    for a in range(4):
        for j, (turn, p) in enumerate(outcomes):
            r, c, bumped[:, a, j] = move(open_cells, rows, cols, (a + turn) % 4)
            end_r[:, a, j] = blow(open_cells, r, c, push)
            end_c[:, a, j] = c
            prob[:, a, j] = p

    here = np.broadcast_to(np.arange(S)[:, None, None], (S, 4, J))
    next_state = state_id[end_r, end_c]
    end_kind = kinds[end_r, end_c]
    done = np.isin(end_kind, TERMINAL_KINDS)
    cliff = end_kind == CLIFF
    entered = (next_state != here) | cliff  # a move that ends on a cliff always falls
    landing = landing_reward[end_r, end_c]
    reward = np.full((S, 4, J), step_reward)
    if bump_reward is not None:
        reward[bumped] = bump_reward
    paid = entered & ~np.isnan(landing)
    reward[paid] = landing[paid]

    model = Outcomes(next_state, prob, reward, done)
    start_states = state_id[kinds == START]
    start = np.zeros(S)
    start[start_states] = 1.0 / len(start_states)
    if cliff.any():
        model = back_to_start(model, cliff, start_states, here)

    source = teleport_to[rows, cols] >= 0
    if source.any():
        target = teleport_to[rows, cols][source]
        set_rows(model, source, target, teleport_reward[rows, cols][source],
                 np.isin(kinds[rows[target], cols[target]], TERMINAL_KINDS))
    terminal = np.isin(kinds[rows, cols], TERMINAL_KINDS)
    if terminal.any():
        set_rows(model, terminal, np.flatnonzero(terminal), 0.0, True)
    return TabularMDP(*model, start, state_labels=state_labels,
                      action_names=action_names, grid_shape=(H, W),
                      state_cells=cells)


def check_model_size(kinds, slip: float) -> None:
    """Refuse, before building it, a model of more than ``MAX_OUTCOME_SLOTS`` outcome slots
    for the cell kinds ``kinds``: ``S * 4 * K``, with ``K`` the slip outcomes times the start
    cells when a cliff sends the agent back to them."""
    S = int((kinds != WALL).sum())
    n_start = int((kinds == START).sum()) if (kinds == CLIFF).any() else 1
    K = len(slip_outcomes(slip)) * n_start
    check_size(f"the layout ({S:,} states x 4 actions x {K} outcomes)", S * 4 * K,
               MAX_OUTCOME_SLOTS, OUTCOME_BYTES)


def number_states(kinds):
    """States are the non-wall cells of ``kinds`` (``[H, W]`` cell kinds), numbered row by
    row: ``(state_id [H, W], cells int64 [S, 2])`` with ``state_id = -1`` on walls and
    ``cells[s] = (row, col)``."""
    open_cells = kinds != WALL
    cells = np.argwhere(open_cells).astype(np.int64)
    state_id = np.full(kinds.shape, -1, dtype=np.int64)
    state_id[open_cells] = np.arange(len(cells))
    return state_id, cells


def slip_outcomes(slip: float) -> list[tuple[int, float]]:
    """``(turn, probability)`` of each direction actually taken with slip probability
    ``slip``: turn 0 is the intended direction, 1 and 3 the perpendicular ones
    (clockwise, counter-clockwise); zero-probability turns are left out."""
    outcomes = [(0, 1.0 - slip), (1, slip / 2), (3, slip / 2)]
    return [(turn, p) for turn, p in outcomes if p > 0.0]


def move(open_cells, rows, cols, direction):
    """One step in ``direction`` (an action id) from each cell ``(rows[i], cols[i])``;
    blocked by the edge or a wall (``open_cells`` ``bool [H, W]`` is False on walls).

    Returns ``(rows', cols', bumped)``.
    """
    H, W = open_cells.shape
    dr, dc = MOVES[direction]
    r, c = rows + dr, cols + dc
    inside = (r >= 0) & (r < H) & (c >= 0) & (c < W)
    free = inside & open_cells[np.clip(r, 0, H - 1), np.clip(c, 0, W - 1)]
    return np.where(free, r, rows), np.where(free, c, cols), ~free


def blow(open_cells, rows, cols, push):
    """Push each cell ``(rows[i], cols[i])`` ``push[i]`` cells up (down if negative), one
    cell at a time, stopping at the edge or a wall (``open_cells`` ``bool [H, W]`` is
    False on walls; Sutton & Barto Section 6.5). Returns the new rows."""
    H = open_cells.shape[0]
    direction = -np.sign(push)
    remaining = np.abs(push)
    for _ in range(int(remaining.max(initial=0))):
        r = rows + direction
        free = (remaining > 0) & (r >= 0) & (r < H) & open_cells[np.clip(r, 0, H - 1), cols]
        rows = np.where(free, r, rows)
        remaining = remaining - 1
    return rows


class Outcomes(NamedTuple):
    """The padded ``[S, A, K]`` model arrays, in :class:`~tabular.TabularMDP`'s order,
    while a layout's model is being built."""

    next_state: np.ndarray
    prob: np.ndarray
    reward: np.ndarray
    done: np.ndarray


def back_to_start(outcomes: Outcomes, cliff, start_states, here) -> Outcomes:
    """Replace each outcome that lands on a cliff (``cliff`` ``bool [S, A, J]``) by one
    outcome per state of ``start_states`` (uniform, as the start distribution is);
    other outcomes keep one slot and get padding slots that stay in place (``here``
    ``[S, A, J]``, the state of each row). Returns the new arrays,
    ``K = J * len(start_states)`` outcomes each."""
    next_state, prob, reward, done = outcomes
    n = len(start_states)
    first = np.arange(n) == 0
    c = cliff[..., None]
    S, A, J = prob.shape
    new_next = np.where(c, start_states, np.where(first, next_state[..., None],
                                                  here[..., None]))
    new_prob = prob[..., None] * np.where(c, 1.0 / n, first)
    K = J * n
    return Outcomes(new_next.reshape(S, A, K), new_prob.reshape(S, A, K),
                    np.repeat(reward, n, axis=2), np.repeat(done, n, axis=2))


def set_rows(outcomes: Outcomes, states, target, row_reward, row_done) -> None:
    """Make every action of ``states`` (``bool [S]``) go to ``target`` (one state per
    selected state) with probability 1, paying ``row_reward`` and ending when
    ``row_done`` (scalars or one value per selected state); ``outcomes`` is changed in
    place."""
    next_state, prob, reward, done = outcomes
    idx = np.flatnonzero(states)
    next_state[idx] = idx[:, None, None]
    next_state[idx, :, 0] = np.asarray(target)[:, None]
    prob[idx] = 0.0
    prob[idx, :, 0] = 1.0
    reward[idx] = 0.0
    reward[idx, :, 0] = np.broadcast_to(np.asarray(row_reward, dtype=float), idx.shape)[:, None]
    done[idx] = False
    done[idx, :, 0] = np.broadcast_to(np.asarray(row_done, dtype=bool), idx.shape)[:, None]
