"""One-time rewards: a gridworld whose pickups pay once, then are gone.

A reward paid on every entry of a cell (``cell_rewards``) can be farmed: the optimal
policy of a continuing or undiscounted task walks in and out of it forever. A pickup
pays its reward the first time the agent enters its cell only, so what has been
collected is part of the state (the state is Markov again): with ``m`` pickups the
model has ``S * 2**m`` states, state ``mask * S + s`` being cell state ``s`` with the
pickups of the bits of ``mask`` collected.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tabular import TabularMDP
from tabular.checks import check_index, check_size

from .base import MAX_OUTCOME_SLOTS, OUTCOME_BYTES, ModelEnv
from .grid_options import mapping_option, reward_option
from .gridworld import GridWorld
from .layout import LEGEND, LayoutSpec

#: The most pickups a layout may hold: the state count doubles with each one.
MAX_PICKUPS = 12


def with_pickups(cells: TabularMDP, pickup_states, bonuses) -> TabularMDP:
    """The product of a cell-level model with the set of pickups collected.

    ``pickup_states``: the cell state of each pickup; ``bonuses``: its one-time reward.
    Entering pickup ``i``'s cell with bit ``i`` of the mask unset pays ``bonuses[i]`` on
    top of the move's reward and sets the bit; every other outcome keeps the mask.
    """
    S, A, K = cells.prob.shape
    m = len(pickup_states)
    masks = np.arange(2**m)
    bit_of = np.zeros(S, dtype=np.int64)  # the bit a cell's pickup sets (0: none)
    bonus_of = np.zeros(S)
    for i, (s, bonus) in enumerate(zip(pickup_states, bonuses, strict=True)):
        bit_of[s], bonus_of[s] = 1 << i, bonus
    arriving = bit_of[cells.next_state]  # [S, A, K]
    fresh = (arriving[None] & ~masks[:, None, None, None]) != 0  # [M, S, A, K]
    next_mask = masks[:, None, None, None] | arriving[None]
    next_state = next_mask * S + cells.next_state[None]
    reward = cells.reward[None] + np.where(fresh & (cells.prob[None] > 0.0),
                                           bonus_of[cells.next_state][None], 0.0)
    shape = (2**m * S, A, K)
    start = np.zeros(shape[0])
    start[:S] = cells.start
    labels = None if cells.state_labels is None else [
        f"{label} holding {bin(mask)[2:].zfill(m)[::-1] if m else ''}".rstrip()
        for mask in masks for label in cells.state_labels]
    return TabularMDP(next_state.reshape(shape),
                      np.broadcast_to(cells.prob, (2**m, S, A, K)).reshape(shape),
                      reward.reshape(shape),
                      np.broadcast_to(cells.done, (2**m, S, A, K)).reshape(shape), start,
                      state_labels=labels, action_names=cells.action_names,
                      grid_shape=cells.grid_shape,
                      state_cells=None if cells.state_cells is None
                      else np.tile(cells.state_cells, (2**m, 1)))


class PickupGridWorld(GridWorld):
    """A :class:`GridWorld` with one-time rewards.

    ## Description
    Each character of ``pickups`` marks cells whose reward is paid the first time the
    agent enters them, then is gone (a treasure picked up, a key, a coin). The
    collected set is part of the state, so the optimal policy collects a pickup at
    most once instead of farming it.

    ## Observation Space
    ``Discrete(S * 2**m)`` for ``S`` non-wall cells and ``m`` pickup cells: state
    ``mask * S + s`` is cell state ``s`` (numbered as in :class:`GridWorld`) with the
    pickups of the bits of ``mask`` collected, bit ``i`` for the ``i``-th pickup cell
    in reading order. ``collected()`` lists the pickup cells taken so far.

    ## Rewards
    As in :class:`GridWorld`; entering an uncollected pickup cell adds its reward to
    the move's (a pickup cell is floor otherwise).

    ## Arguments
    * ``layout``: as in :class:`GridWorld`, with the ``pickups`` characters on floor cells.
    * ``pickups``: ``{char: reward}``, the one-time reward of each pickup character (one
      ASCII character outside the legend; at most ``MAX_PICKUPS = 12`` cells in all).
    * ``options``: the keyword arguments of :class:`GridWorld`.
    """

    def __init__(self, layout: LayoutSpec, *, pickups: dict[str, float],
                 render_mode: str | None = None, **options: Any) -> None:
        if not isinstance(pickups, dict) or not pickups:
            raise ValueError(f"pickups must be a non-empty {{char: reward}} dict, got {pickups!r}")
        for char in pickups:
            if not (isinstance(char, str) and len(char) == 1) or char in LEGEND:
                raise ValueError(f"pickups key {char!r} must be one layout character outside "
                                 f"the legend {' '.join(LEGEND)}")
        bonus = {char: reward_option(f"pickups[{char!r}]", value)
                 for char, value in pickups.items()}
        cell_rewards = mapping_option("cell_rewards", options.pop("cell_rewards", None))
        clash = set(bonus) & set(cell_rewards)
        if clash:
            raise ValueError(f"pickup characters {sorted(clash)} are also cell_rewards keys")
        step_reward = reward_option("step_reward", options.get("step_reward", 0.0))
        # a pickup cell is floor: entering it pays the step reward (plus the bonus once)
        super().__init__(layout, cell_rewards={**cell_rewards, **dict.fromkeys(bonus,
                                                                            step_reward)},
                         render_mode=render_mode, **options)
        codes = {ord(char): char for char in bonus}
        where = [(r, c) for r, c in zip(*np.nonzero(np.isin(self.chars, list(codes))),
                                        strict=True)]
        if len(where) > MAX_PICKUPS:
            raise ValueError(f"the layout holds {len(where)} pickup cells; at most "
                             f"{MAX_PICKUPS} (each doubles the state count)")
        self.pickup_cells = [(int(r), int(c)) for r, c in where]
        cells = self.to_mdp()
        check_size(f"the layout with {len(where)} pickups ({cells.n_states:,} cells x "
                   f"2^{len(where)} states x {cells.n_actions} actions x {cells.n_outcomes} "
                   "outcomes)", cells.n_states * 2 ** len(where) * cells.n_actions
                   * cells.n_outcomes, MAX_OUTCOME_SLOTS, OUTCOME_BYTES)
        self.n_cell_states = cells.n_states
        mdp = with_pickups(cells, [self.state_of_cell(r, c) for r, c in self.pickup_cells],
                           [bonus[codes[int(self.chars[r, c])]] for r, c in where])
        self.state_cells = mdp.state_cells
        ModelEnv.__init__(self, mdp, render_mode)

    def state_of_cell(self, row: int, col: int, collected: int = 0) -> int:
        """The state of cell ``(row, col)`` with the pickups of mask ``collected`` taken
        (default 0: none)."""
        s = super().state_of_cell(row, col)
        mask = check_index("collected", collected, 2 ** len(self.pickup_cells))
        return mask * self.n_cell_states + s

    def collected(self) -> list[tuple[int, int]]:
        """The pickup cells taken in the current state."""
        mask = 0 if self.s is None else self.s // self.n_cell_states
        return [cell for i, cell in enumerate(self.pickup_cells) if mask >> i & 1]

    def render_text(self) -> str:
        """The layout with the agent as ``@`` and collected pickups as floor ``.``."""
        text = super().render_text()
        rows = text.splitlines()
        offset = 1 if self.last_action is not None else 0  # the action line
        for r, c in self.collected():
            line = rows[r + offset]
            if line[c] != "@":
                rows[r + offset] = line[:c] + "." + line[c + 1:]
        return "\n".join(rows) + "\n"
