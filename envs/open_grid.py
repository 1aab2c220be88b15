"""Open gridworlds of any size, generated straight into the stored model form.

:func:`open_grid_mdp` is the model that :class:`~tabular.envs.GridWorld` builds from the
layout of an open ``height x width`` grid with the start ``S`` in the top-left corner
and the goal ``G`` in the bottom-right one (``tests/envs/test_open_grid.py`` checks that
they are identical), but generated a block of rows at a time with NumPy, directly
as int32 signed successors and uint16 codes into the table of the three rewards (a
move, entering the goal, the goal's own loop): :mod:`tabular.model.compact`'s form, with
no wide array and no per-cell label. A 10,000 x 10,000 grid (10^8 states, 4
actions) costs 2.4 GB (``benchmarks/huge.py`` solves it).
"""

from __future__ import annotations

import numpy as np

from tabular import TabularMDP
from tabular.checks import check_finite, check_size
from tabular.model.compact import index_dtype

from .gridworld import ACTION_NAMES, MOVES

#: Rows generated at a time: bounds the int64 temporaries, whatever the grid's size.
ROWS_PER_BLOCK = 256
#: The largest grid built, in states: 4 int32 successors, 4 uint16 codes and the float64
#: start of each state (``STATE_BYTES``), 6.4 GB at this size.
MAX_STATES = 2 * 10**8
STATE_BYTES = 32


def open_grid_mdp(height: int, width: int, *, step_reward: float = -1.0,
                  goal_reward: float = 0.0) -> TabularMDP:
    """The exact model of the open ``height x width`` gridworld (start top-left, goal
    bottom-right; states numbered row by row; actions up, right, down, left; a move
    into the edge stays put), as :class:`~tabular.envs.GridWorld` defines it.

    ``height``, ``width``: the grid's size, integers >= 1 with at least two cells;
    ``step_reward`` (default -1): the reward of every move, bumps included;
    ``goal_reward`` (default 0): the reward of entering the goal, which ends the
    episode (the goal is absorbing: every action loops back with reward 0).
    """
    for name, value in (("height", height), ("width", width)):
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) \
                or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    height, width = int(height), int(width)
    S = height * width
    if S < 2:
        raise ValueError("the grid needs at least two cells, one for S and one for G")
    check_size(f"height={height:,} x width={width:,}", S, MAX_STATES, STATE_BYTES, "states")
    step_reward = check_finite("step_reward", step_reward)
    goal_reward = check_finite("goal_reward", goal_reward)
    # the table as tabular.model.compact orders it: the distinct rewards by their bits
    rewards = np.array([step_reward, goal_reward, 0.0])
    table = np.unique(rewards.view(np.uint64))
    step_code, goal_code, loop_code = np.searchsorted(table, rewards.view(np.uint64))
    successor = np.empty((S, 4, 1), dtype=index_dtype(S))
    code = np.empty((S, 4, 1), dtype=np.uint16)
    goal = S - 1
    for top in range(0, height, ROWS_PER_BLOCK):
        states = np.arange(top * width, min(top + ROWS_PER_BLOCK, height) * width)
        row, col = np.divmod(states, width)
        for a, (dr, dc) in enumerate(MOVES):
            r = np.clip(row + dr, 0, height - 1)
            c = np.clip(col + dc, 0, width - 1)
            nxt = r * width + c
            ends = nxt == goal
            successor[states, a, 0] = np.where(ends, -1 - nxt, nxt)
            code[states, a, 0] = np.where(ends, goal_code, step_code)
    successor[goal], code[goal] = -1 - goal, loop_code  # absorbing: loops back, reward 0
    start = np.zeros(S)
    start[0] = 1.0
    return TabularMDP.from_arrays(successor, code, np.zeros(0), table.view(np.float64),
                                  start, action_names=ACTION_NAMES,
                                  grid_shape=(height, width))
