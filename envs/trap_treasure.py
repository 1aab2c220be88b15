"""The trap/treasure grid: a policy-gradient illustration of a ``-inf`` reward.

An agent walks a 1-indexed grid of cells ``(i, j)``; ``R`` takes it from ``(i, j)`` to
``(i+1, j)``, ``L`` to ``(i-1, j)``, ``U`` to ``(i, j-1)`` and ``D`` to ``(i, j+1)``, so
``i`` counts columns from the left and ``j`` rows from the top. Traps and treasures
sit at fixed cells. Stepping into a trap "depletes the agent's energy
immediately": the episode ends with reward ``float('-inf')``. The point of the
example is that a policy-gradient learner must drive ``pi(R | cell left of a trap)``
to 0.
"""

from __future__ import annotations

import math

import numpy as np

from .grid_options import reward_option
from .gridworld import GridWorld
from .layout import FLOOR, MARKED, START, TRAP, LayoutSpec


class TrapTreasure(GridWorld):
    """The trap/treasure grid, a :class:`GridWorld` with the example's conventions.

    ## Description
    The default layout (``envs/layouts/trap_treasure.txt``, 5x5) starts top-left, has
    a treasure ``G`` in the bottom-right corner, two traps ``T`` (row 2, column 3 and
    row 4, column 2) and three walls; the cell left of the first trap is an ordinary
    floor cell on the way to the treasure (``left_of_trap``). Cells are also named
    ``(i, j)``, column then row from 1 (``state_of`` / ``cell_of``).

    ## Action Space
    ``Discrete(4)``, the GridWorld indices with the example's names: 0 = ``U``,
    1 = ``R``, 2 = ``D``, 3 = ``L``.

    ## Observation Space
    ``Discrete(S)``: the non-wall cells row by row; 22 with the default layout.

    ## Starting State
    The ``S`` cell (top-left, state 0, with the default layout).

    ## Rewards
    ``trap_reward`` on entering a trap, ``treasure_reward`` on entering the treasure,
    ``step_reward`` for any other move (a blocked one included).

    ## Episode End
    Termination: entering a trap or the treasure. Truncation:
    ``tabzoo/TrapTreasure-v0`` is registered with ``max_episode_steps=1000``.

    ## Arguments
    * ``layout``: a :class:`GridWorld` layout (default ``"trap_treasure"``, the file
      above).
    * ``trap_reward``: reward on entering a trap (default ``-inf``); make it finite
      (e.g. -10) for algorithms that cannot take ``-inf``.
    * ``treasure_reward``: reward on entering a treasure (default 1).
    * ``step_reward``: reward of any other move (default 0).
    * ``slip``: :class:`GridWorld`'s slip probability (default 0).
    * ``render_mode``: ``"ansi"``, ``"rgb_array"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (registered as ``tabzoo/TrapTreasure-v0``; the
      ``tabular/TrapTreasure-v0`` id of earlier releases now raises an error naming
      the new id).
    """

    action_names = ("U", "R", "D", "L")

    def __init__(self, layout: LayoutSpec = "trap_treasure", *, trap_reward: float = -math.inf,
                 treasure_reward: float = 1.0, step_reward: float = 0.0, slip: float = 0.0,
                 render_mode: str | None = None) -> None:
        treasure_reward = reward_option("treasure_reward", treasure_reward)
        super().__init__(layout, step_reward=step_reward, goal_reward=treasure_reward,
                         trap_reward=trap_reward, slip=slip, render_mode=render_mode)

    def label_states(self, cells: np.ndarray) -> list[str]:
        """States are named by the example's ``(i, j)`` of their ``cells`` (``int [S, 2]``
        rows and columns): column then row, 1-indexed."""
        rows, cols = cells[:, 0].tolist(), cells[:, 1].tolist()
        return [f"({c + 1}, {r + 1})" for r, c in zip(rows, cols, strict=True)]

    def state_of(self, i: int, j: int) -> int:
        """The state id of cell ``(i, j)`` (column ``i``, row ``j``, both from 1)."""
        for name, value in (("i", i), ("j", j)):
            if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
                raise ValueError(f"{name} must be an integer (from 1), got {value!r}")
        return self.state_of_cell(j - 1, i - 1)

    def cell_of(self, s: int) -> tuple[int, int]:
        """``(i, j)`` of state ``s`` (1-indexed column, row)."""
        row, col = self.cell_of_state(s)
        return col + 1, row + 1

    @property
    def left_of_trap(self) -> int:
        """The state of the first (row by row) floor cell whose right neighbour is a trap."""
        kinds = self.kinds
        walkable = np.isin(kinds[:, :-1], (FLOOR, START, MARKED))
        rows, cols = np.nonzero(walkable & (kinds[:, 1:] == TRAP))
        if rows.size == 0:
            raise ValueError("this layout has no floor cell directly left of a trap")
        return self.state_of_cell(int(rows[0]), int(cols[0]))
