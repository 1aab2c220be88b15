"""The mazes of Sutton & Barto, chapter 8 (reward 1 on reaching ``G``, 0 otherwise).

- :data:`DYNA_MAZE`: Example 8.1's maze (Figure 8.2), 6 x 9 cells, the start ``S`` on
  the left, the goal ``G`` in the top-right corner; the shortest path takes 14 steps.
- :data:`BLOCKING_MAZE`: Example 8.2 (Figure 8.4), the layouts before and after the
  change: the gap right of the barrier closes and one opens on its left.
- :data:`SHORTCUT_MAZE`: Example 8.3 (Figure 8.5): a second gap, a shortcut, opens
  right of the barrier.

:func:`maze` builds a layout's :class:`~tabular.envs.GridWorld`; :func:`changing_maze` builds
the two models of a maze whose walls change, on one numbering of the states, for
the ``switch=(step, other_mdp)`` of the planning learners (:mod:`tabular.plan.dyna`);
:func:`finer_maze` draws a layout at a finer resolution (Example 8.4's mazes);
:func:`greedy_steps` walks a learned ``Q``'s greedy path to the goal.
"""

from __future__ import annotations

import numpy as np

from tabular import TabularMDP
from tabular.checks import check_positive_int, check_size

from .base import MAX_OUTCOME_SLOTS
from .gridworld import GridWorld
from .layout import as_text, layout_text, parse_layout

#: Example 8.1's maze (Figure 8.2).
DYNA_MAZE = """
.......#G
..#....#.
S.#....#.
..#......
.....#...
.........
"""

#: Example 8.2's maze before and after the change (Figure 8.4).
BLOCKING_MAZE = ("""
........G
.........
.........
########.
.........
...S.....
""", """
........G
.........
.........
.########
.........
...S.....
""")

#: Example 8.3's maze before and after the shortcut opens (Figure 8.5).
SHORTCUT_MAZE = ("""
........G
.........
.........
.########
.........
...S.....
""", """
........G
.........
.........
.#######.
.........
...S.....
""")


def maze(layout) -> GridWorld:
    """The gridworld of ``layout`` (text, rows or a file, :func:`tabular.envs.layout.layout_text`)
    with the chapter's rewards: 1 on entering the goal (which ends the episode), 0 for
    every other move."""
    return GridWorld(layout, step_reward=0.0, goal_reward=1.0)


def finer_maze(layout, factor: int) -> str:
    """The layout ``layout`` drawn ``factor`` times finer: every cell becomes a
    ``factor x factor`` block of the same kind, except that the start ``S`` and the
    goal ``G`` stay single cells, at the top-left corner of their blocks (the rest of
    those blocks is open floor). Example 8.4 compares the planners on the Dyna maze
    drawn this way (47 open cells at ``factor = 1``, ``47 factor^2`` in general). A finer
    layout than a :class:`~tabular.envs.GridWorld` can be built of (``MAX_OUTCOME_SLOTS / 4``
    cells) is refused before it is drawn."""
    factor = check_positive_int("factor", factor)
    grid = parse_layout(layout_text(layout))
    H, W = grid.shape
    check_size(f"factor={factor} on the {H}x{W} layout", H * W * factor * factor,
               MAX_OUTCOME_SLOTS // 4, 1, "cells")
    fine = np.repeat(np.repeat(grid, factor, axis=0), factor, axis=1)
    for mark in (b"S", b"G"):
        code = mark[0]
        rows, cols = np.nonzero(grid == code)
        fine[fine == code] = ord(".")
        fine[rows * factor, cols * factor] = code
    return as_text(fine)


def changing_maze(before, after) -> tuple[TabularMDP, TabularMDP]:
    """``(mdp_before, mdp_after)``: the models of a maze whose walls change from layout
    ``before`` to layout ``after`` (two layouts of the same size that differ only in
    walls), on one numbering of the states.

    The states are the cells open in either layout (numbered row by row, as in
    :class:`~tabular.envs.GridWorld`); in each model, a cell that is a wall of its layout is a
    state that no move enters: a move into it bumps (the agent stays, reward 0). So
    the two models have the same states and actions, and a learner can switch from
    one to the other (``switch=(step, mdp_after)``).
    """
    grids = [parse_layout(layout_text(layout)) for layout in (before, after)]
    if grids[0].shape != grids[1].shape:
        raise ValueError(f"before and after must have the same size, got "
                         f"{grids[0].shape} and {grids[1].shape}")
    wall = ord("#")
    walls = [grid == wall for grid in grids]
    if not ((grids[0] == grids[1]) | walls[0] | walls[1]).all():
        raise ValueError("before and after must differ only in walls '#'")
    union = maze(as_text(np.where(walls[0], grids[1], grids[0])))
    mdp = union.to_mdp()
    before, after = (_blocked(mdp, union.state_id[walls[i] & ~(walls[0] & walls[1])])
                     for i in range(2))
    return before, after


def _blocked(mdp: TabularMDP, states: np.ndarray) -> TabularMDP:
    """``mdp`` in which no move enters ``states``: such a move leaves the agent where it
    is, with reward 0 and no end (a bump into a wall of the maze)."""
    S = mdp.n_states
    here = np.broadcast_to(np.arange(S)[:, None, None], mdp.next_state.shape)
    into = np.isin(mdp.next_state, states) & (mdp.prob > 0.0)
    return TabularMDP(np.where(into, here, mdp.next_state), mdp.prob,
                      np.where(into, 0.0, mdp.reward), mdp.done & ~into, mdp.start,
                      state_labels=mdp.state_labels, action_names=mdp.action_names,
                      grid_shape=mdp.grid_shape, state_cells=mdp.state_cells)


def greedy_steps(mdp: TabularMDP, Q: np.ndarray, limit: int) -> int | None:
    """The steps from the start to the end of the episode when following ``argmax_a
    Q(s, a)`` (first maximiser) in the deterministic maze ``mdp``, or ``None`` if the
    episode has not ended after ``limit`` steps (the greedy policy loops or is long).

    ``Q``: finite ``[S, A]`` action values. The walk is deterministic, so one that has
    not ended after ``S`` steps has entered a loop: at most ``min(limit, S)`` steps are
    taken."""
    if not isinstance(mdp, TabularMDP):
        raise TypeError(f"mdp must be a tabular.TabularMDP, got {type(mdp).__name__}")
    limit = check_positive_int("limit", limit)
    Q = np.asarray(Q)
    if Q.shape != (mdp.n_states, mdp.n_actions) or Q.dtype.kind not in "iuf":
        raise ValueError(f"Q must be [{mdp.n_states}, {mdp.n_actions}] action values, got "
                         f"{Q.dtype} of shape {Q.shape}")
    bad = ~np.isfinite(Q).all(axis=1)
    if bad.any():
        s = int(np.argmax(bad))
        raise ValueError(f"Q[{s}] = {Q[s]} is not finite (state {mdp.state_name(s)})")
    s = int(np.argmax(mdp.start))
    policy = Q.argmax(axis=1)
    for n in range(1, min(limit, mdp.n_states) + 1):
        a = policy[s]
        if mdp.done[s, a, 0]:
            return n
        s = int(mdp.next_state[s, a, 0])
    return None
