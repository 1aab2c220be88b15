"""The standard benchmarks of the exploration literature, each its own exact model.

- :class:`RiverSwim` (Strehl & Littman, 2008; the parameters of Osband et al., 2013);
- :class:`Chain` (Dearden, Friedman & Russell, 1998; Strens, 2000): the slipping chain;
- :class:`DeepSea` (Osband et al., 2019, bsuite): the deterministic ``N x N`` sea;
- :class:`FourRoom` (Sutton, Precup & Singh, 1999) and :class:`NRoom` (rooms in a row):
  gridworld layouts with a single rewarding goal;
- :class:`RandomMDP`: a seeded Garnet family (Archibald et al., 1995; Bhatnagar et al.,
  2009): ``S`` states, ``A`` actions, ``branching`` successors per pair.

The continuing ones (RiverSwim, Chain, RandomMDP) never end an episode: their
registered ids cut episodes at Gymnasium's time limit (1000 steps, as every
``tabzoo/`` id); the episodic learners of :mod:`tabular.explore` take the horizon ``H``
as an argument (20 for RiverSwim in Osband et al., 2013).
"""

from __future__ import annotations

import numpy as np

from tabular import TabularMDP
from tabular.checks import (
    check_count,
    check_positive_int,
    check_seed,
    check_size,
    check_unit_interval,
)

from .base import MAX_OUTCOME_SLOTS, OUTCOME_BYTES, ModelEnv
from .grid_options import reward_option
from .gridworld import GridWorld

LEFT, RIGHT = 0, 1


class RiverSwim(ModelEnv):
    """RiverSwim (Strehl & Littman, 2008, Figure 1), with the swim probabilities and
    rewards of Osband, Russo & Van Roy (2013, section 6).

    ## Description
    ``n_states`` states in a row; swimming left (with the current) always succeeds,
    swimming right (against it) from an inner state moves right with probability
    0.35, stays with 0.6 and drifts left with 0.05; from the left bank it moves right
    with 0.6 and stays with 0.4; at the right bank it stays with 0.6 and drifts left
    with 0.4. A small reward waits at the left bank, a large one at the right: a
    dithering learner settles for the small one.

    ## Action Space
    ``Discrete(2)``: 0 = left (with the current), 1 = right (against it).

    ## Observation Space
    ``Discrete(n_states)``: the position, 0 the left bank.

    ## Starting State
    The left bank, state 0 (as in Osband et al.'s experiments and Colosseum; Strehl &
    Littman drew state 1 or 2).

    ## Rewards
    ``small_reward`` (default 5/1000) for swimming left at the left bank,
    ``large_reward`` (default 1) for swimming right at the right bank: Strehl & Littman's
    5 and 10000 scaled by 1/1000 and 1/10000 into ``[0, 1]``, as Osband et al. did.

    ## Episode End
    Termination: never (continuing). Truncation: ``tabzoo/RiverSwim-v0`` is registered
    with ``max_episode_steps=1000``; Osband et al.'s episodes last ``H = 20`` steps
    (the ``horizon`` of :mod:`tabular.explore`'s learners).

    ## Arguments
    * ``n_states``: the length of the river (default 6, the paper's; at least 2).
    * ``small_reward``, ``large_reward``: the two rewards (defaults 0.005 and 1).
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version.
    """

    def __init__(self, n_states: int = 6, small_reward: float = 0.005,
                 large_reward: float = 1.0, render_mode: str | None = None) -> None:
        self.n_states = check_count("n_states", n_states, 2, MAX_OUTCOME_SLOTS // 6)
        self.small_reward = reward_option("small_reward", small_reward)
        self.large_reward = reward_option("large_reward", large_reward)
        super().__init__(self.model(), render_mode)

    def model(self) -> TabularMDP:
        """The exact model: 3 outcome slots (left, stay, right)."""
        n = self.n_states
        s = np.arange(n)
        next_state = np.empty((n, 2, 3), dtype=np.int64)
        next_state[:, :, 0] = np.maximum(s - 1, 0)[:, None]
        next_state[:, :, 1] = s[:, None]
        next_state[:, :, 2] = np.minimum(s + 1, n - 1)[:, None]
        prob = np.zeros((n, 2, 3))
        prob[:, LEFT, 0] = 1.0
        prob[:, RIGHT] = (0.05, 0.6, 0.35)
        prob[0, RIGHT] = (0.0, 0.4, 0.6)
        prob[n - 1, RIGHT] = (0.4, 0.6, 0.0)
        reward = np.zeros((n, 2, 3))
        reward[0, LEFT] = self.small_reward
        reward[n - 1, RIGHT] = self.large_reward
        start = np.zeros(n)
        start[0] = 1.0
        return TabularMDP(next_state, prob, reward, np.zeros((n, 2, 3), dtype=bool), start,
                          state_labels=[f"river {i}" for i in range(n)],
                          action_names=["left", "right"])


class Chain(ModelEnv):
    """The chain of Dearden, Friedman & Russell (1998, Figure 1; Strens, 2000).

    ## Description
    ``n_states`` states in a row. Action ``a`` ("forward") moves one state on (at the
    last state it stays there) and pays 0, except at the last state, where it pays
    ``end_reward``; action ``b`` ("back") returns to state 0 and pays ``back_reward``.
    With probability ``slip`` the agent does the other action. Going back pays at once;
    walking forward pays only once the end is reached.

    ## Action Space
    ``Discrete(2)``: 0 = forward (``a``), 1 = back (``b``).

    ## Observation Space
    ``Discrete(n_states)``: the position, 0 the start.

    ## Starting State
    State 0.

    ## Rewards
    ``end_reward`` (default 10) for moving forward at the end, ``back_reward``
    (default 2) for going back, 0 otherwise; the reward is that of the action done,
    not the one chosen.

    ## Episode End
    Termination: never (continuing). Truncation: ``tabzoo/Chain-v0`` is registered with
    ``max_episode_steps=1000`` (the papers' 1000-step runs).

    ## Arguments
    * ``n_states``: the length (default 5, the papers'; at least 2).
    * ``slip``: the probability of doing the other action (default 0.2).
    * ``end_reward``, ``back_reward``: defaults 10 and 2.
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version.
    """

    def __init__(self, n_states: int = 5, slip: float = 0.2, end_reward: float = 10.0,
                 back_reward: float = 2.0, render_mode: str | None = None) -> None:
        self.n_states = check_count("n_states", n_states, 2, MAX_OUTCOME_SLOTS // 4)
        self.slip = check_unit_interval("slip", slip)
        self.end_reward = reward_option("end_reward", end_reward)
        self.back_reward = reward_option("back_reward", back_reward)
        super().__init__(self.model(), render_mode)

    def model(self) -> TabularMDP:
        """The exact model: outcome 0 the action chosen, outcome 1 the other one."""
        n = self.n_states
        s = np.arange(n)
        forward = np.minimum(s + 1, n - 1)
        forward_reward = np.where(s == n - 1, self.end_reward, 0.0)
        back = np.zeros(n, dtype=np.int64)
        back_reward = np.full(n, self.back_reward)
        moves = np.stack([forward, back], axis=1)  # [S, 2]
        rewards = np.stack([forward_reward, back_reward], axis=1)
        next_state = np.stack([moves, moves[:, ::-1]], axis=2)
        reward = np.stack([rewards, rewards[:, ::-1]], axis=2)
        prob = np.empty((n, 2, 2))
        prob[:, :, 0], prob[:, :, 1] = 1.0 - self.slip, self.slip
        start = np.zeros(n)
        start[0] = 1.0
        return TabularMDP(next_state, prob, reward, np.zeros((n, 2, 2), dtype=bool), start,
                          state_labels=[f"link {i}" for i in range(n)],
                          action_names=["forward", "back"])


class DeepSea(ModelEnv):
    """DeepSea (Osband et al., 2019, bsuite's ``deep_sea``; Osband et al., 2016), the
    deterministic version.

    ## Description
    An ``size x size`` grid, entered at the top-left cell. Every step descends one row
    and moves one column right or left (clipped at the edges); the episode ends after
    ``size`` steps, below the last row. Each move right costs ``move_cost / size``; a
    move right in the last column pays 1, so the one path that earns it (right at
    every step) has value ``1 - move_cost``, while every other policy earns at most 0.
    A learner that dithers finds it with probability ``2^-size``.

    ## Action Space
    ``Discrete(2)``. Which action moves right depends on the cell (bsuite's action
    mapping): with ``mapping_seed`` (default 42) the action that goes right at
    ``(row, column)`` is ``np.random.RandomState(mapping_seed).binomial(1, 0.5,
    [size, size])[row, column]``, bsuite's draw; ``mapping_seed=None``: action 1 goes
    right everywhere.

    ## Observation Space
    ``Discrete(size * size + 1)``: cell ``(row, column)`` is state ``row * size +
    column``; state ``size * size`` is the end below the sea (absorbing).

    ## Starting State
    The top-left cell, state 0.

    ## Rewards
    ``-move_cost / size`` for each move right; ``+1`` more for a move right in the last
    column.

    ## Episode End
    Termination: after ``size`` steps. Truncation: ``tabzoo/DeepSea-v0`` is registered
    with ``max_episode_steps=1000``.

    ## Arguments
    * ``size``: ``N`` (default 10; at least 1).
    * ``mapping_seed``: the action mapping's seed (default 42), or ``None``.
    * ``move_cost``: the total cost of moving right ``size`` times (default 0.01, bsuite's).
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version.
    """

    def __init__(self, size: int = 10, mapping_seed: int | None = 42, move_cost: float = 0.01,
                 render_mode: str | None = None) -> None:
        self.size = check_positive_int("size", size, high=2_000)
        self.mapping_seed = check_seed(mapping_seed)
        self.move_cost = check_unit_interval("move_cost", move_cost)
        super().__init__(self.model(), render_mode)

    def right_action(self) -> np.ndarray:
        """int64 ``[size, size]``: the action that moves right in each cell."""
        if self.mapping_seed is None:
            return np.ones((self.size, self.size), dtype=np.int64)
        draw = np.random.RandomState(self.mapping_seed).binomial(1, 0.5, [self.size] * 2)
        return draw.astype(np.int64)

    def model(self) -> TabularMDP:
        """The exact model: one certain outcome per cell and action."""
        n = self.size
        end = n * n
        row, col = np.divmod(np.arange(n * n), n)
        right = self.right_action().ravel()
        next_state = np.full((end + 1, 2, 1), end, dtype=np.int64)
        reward = np.zeros((end + 1, 2, 1))
        done = np.ones((end + 1, 2, 1), dtype=bool)
        for a in (0, 1):
            goes_right = right == a
            column = np.clip(np.where(goes_right, col + 1, col - 1), 0, n - 1)
            below = row + 1 < n
            next_state[:end, a, 0] = np.where(below, (row + 1) * n + column, end)
            done[:end, a, 0] = ~below
            reward[:end, a, 0] = np.where(goes_right, -self.move_cost / n, 0.0) + (
                goes_right & (col == n - 1))
        start = np.zeros(end + 1)
        start[0] = 1.0
        labels = [f"({r}, {c})" for r, c in zip(row, col, strict=True)] + ["end"]
        return TabularMDP(next_state, np.ones((end + 1, 2, 1)), reward, done, start,
                          state_labels=labels, action_names=["0", "1"])


#: Sutton, Precup & Singh (1999, Figure 2): four rooms joined by four doorways.
FOUR_ROOMS = """\
#############
#S....#.....#
#.....#.....#
#...........#
#.....#.....#
#.....#.....#
##.####.....#
#.....###.###
#.....#.....#
#.....#.....#
#...........#
#.....#....G#
#############
"""


class FourRoom(GridWorld):
    """The four rooms of Sutton, Precup & Singh (1999, Figure 2).

    ## Description
    An 11x11 floor (13x13 with the outer wall) split into four rooms joined by four
    doorways; start top-left, goal bottom-right. The only reward is at the goal, so
    the goal is found by exploring.

    ## Action Space
    ``Discrete(4)``: 0 = up, 1 = right, 2 = down, 3 = left; a move into a wall stays.

    ## Observation Space
    ``Discrete(169)``: state id = ``row * 13 + col`` (wall cells are never occupied).

    ## Starting State
    Row 1, column 1.

    ## Rewards
    ``goal_reward`` (default 1) on entering the goal, 0 otherwise.

    ## Episode End
    Termination: entering the goal. Truncation: ``tabzoo/FourRoom-v0`` is registered
    with ``max_episode_steps=1000``.

    ## Arguments
    * ``slip``: GridWorld's slip probability (default 0: deterministic).
    * ``goal_reward``: default 1.
    * ``render_mode``: ``"ansi"``, ``"rgb_array"`` or ``None`` (default).

    ## Version History
    * v0: the initial version.
    """

    def __init__(self, slip: float = 0.0, goal_reward: float = 1.0,
                 render_mode: str | None = None) -> None:
        super().__init__(FOUR_ROOMS, goal_reward=goal_reward, slip=slip,
                         render_mode=render_mode)


def rooms_layout(n_rooms: int, room_size: int) -> str:
    """The layout of ``n_rooms`` square rooms of ``room_size`` cells in a row, each wall
    between two rooms with a doorway in its middle row; ``S`` top-left, ``G``
    bottom-right."""
    width = n_rooms * (room_size + 1) + 1
    rows = [["#"] * width for _ in range(room_size + 2)]
    for i in range(1, room_size + 1):
        for j in range(1, width - 1):
            if j % (room_size + 1):
                rows[i][j] = "."
    door = 1 + room_size // 2
    for wall in range(1, n_rooms):
        rows[door][wall * (room_size + 1)] = "."
    rows[1][1], rows[room_size][width - 2] = "S", "G"
    return "\n".join("".join(row) for row in rows) + "\n"


class NRoom(GridWorld):
    """``n_rooms`` square rooms in a row, joined by one doorway each (Colosseum's and
    MiniGrid's multi-room exploration tasks, on a line).

    ## Description
    Rooms of ``room_size x room_size`` cells separated by walls with a doorway in the
    middle row; start in the top-left cell of the first room, goal in the
    bottom-right cell of the last. The only reward is at the goal.

    ## Action Space
    ``Discrete(4)``: 0 = up, 1 = right, 2 = down, 3 = left; a move into a wall stays.

    ## Observation Space
    ``Discrete((room_size + 2) * (n_rooms * (room_size + 1) + 1))``: the cells of the
    layout with its walls, id = ``row * width + col``.

    ## Starting State
    Row 1, column 1.

    ## Rewards
    ``goal_reward`` (default 1) on entering the goal, 0 otherwise.

    ## Episode End
    Termination: entering the goal. Truncation: ``tabzoo/NRoom-v0`` is registered with
    ``max_episode_steps=1000``.

    ## Arguments
    * ``n_rooms``: default 3 (at least 1); ``room_size``: default 4 (at least 1).
    * ``slip``: GridWorld's slip probability (default 0); ``goal_reward``: default 1.
    * ``render_mode``: ``"ansi"``, ``"rgb_array"`` or ``None`` (default).

    ## Version History
    * v0: the initial version.
    """

    def __init__(self, n_rooms: int = 3, room_size: int = 4, slip: float = 0.0,
                 goal_reward: float = 1.0, render_mode: str | None = None) -> None:
        self.n_rooms = check_positive_int("n_rooms", n_rooms, high=1_000)
        self.room_size = check_positive_int("room_size", room_size, high=1_000)
        check_size(f"n_rooms={self.n_rooms} with room_size={self.room_size}",
                   (self.room_size + 2) * (self.n_rooms * (self.room_size + 1) + 1) * 4 * 3,
                   MAX_OUTCOME_SLOTS, OUTCOME_BYTES)
        if self.n_rooms == 1 and self.room_size == 1:
            raise ValueError("n_rooms=1 with room_size=1 leaves no cell for the goal apart "
                             "from the start: use room_size >= 2")
        super().__init__(rooms_layout(self.n_rooms, self.room_size), goal_reward=goal_reward,
                         slip=slip, render_mode=render_mode)


class RandomMDP(ModelEnv):
    """A seeded random MDP of the Garnet family (Archibald, McKinnon & Thomas, 1995;
    Bhatnagar et al., 2009): ``n_states`` states, ``n_actions`` actions, ``branching``
    successors per state-action pair.

    ## Description
    For each pair ``(s, a)``, ``branching`` distinct successors are drawn uniformly
    without replacement, and their probabilities are the gaps between
    ``branching - 1`` sorted uniform cut points of ``[0, 1]`` (a uniform draw from the
    simplex); the reward ``r(s, a)`` is drawn uniformly from ``[0, 1]``, the same on
    every outcome. Everything is drawn from ``np.random.default_rng(seed)``: the same
    seed gives the same MDP.

    ## Action Space
    ``Discrete(n_actions)``.

    ## Observation Space
    ``Discrete(n_states)``.

    ## Starting State
    State 0.

    ## Rewards
    ``r(s, a)`` in ``[0, 1]``.

    ## Episode End
    Termination: never (continuing). Truncation: ``tabzoo/RandomMDP-v0`` is registered
    with ``max_episode_steps=1000``.

    ## Arguments
    * ``n_states``: default 10; ``n_actions``: default 2; ``branching``: default 3, in
      ``[1, n_states]``; ``seed``: default 0 (an int >= 0).
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version.
    """

    def __init__(self, n_states: int = 10, n_actions: int = 2, branching: int = 3,
                 seed: int = 0, render_mode: str | None = None) -> None:
        self.n_states = check_positive_int("n_states", n_states, high=MAX_OUTCOME_SLOTS)
        self.n_actions = check_positive_int("n_actions", n_actions, high=MAX_OUTCOME_SLOTS)
        self.branching = check_positive_int("branching", branching, high=self.n_states)
        check_size(f"n_states={self.n_states}, n_actions={self.n_actions}, "
                   f"branching={self.branching}", self.n_states * self.n_actions
                   * self.branching, MAX_OUTCOME_SLOTS, OUTCOME_BYTES)
        if seed is None:
            raise ValueError("seed must be an int >= 0 (a random MDP family member is named "
                             "by its seed), got None")
        self.seed = check_seed(seed)
        super().__init__(self.model(), render_mode)

    def model(self) -> TabularMDP:
        """The exact model of this seed."""
        S, A, b = self.n_states, self.n_actions, self.branching
        rng = np.random.default_rng(self.seed)
        next_state = np.empty((S, A, b), dtype=np.int64)
        for s in range(S):
            for a in range(A):
                next_state[s, a] = rng.choice(S, size=b, replace=False)
        cuts = np.sort(rng.random((S, A, b - 1)), axis=2)
        edges = np.concatenate([np.zeros((S, A, 1)), cuts, np.ones((S, A, 1))], axis=2)
        prob = np.diff(edges, axis=2)
        reward = np.broadcast_to(rng.random((S, A, 1)), (S, A, b)).copy()
        start = np.zeros(S)
        start[0] = 1.0
        return TabularMDP(next_state, prob, reward, np.zeros((S, A, b), dtype=bool), start)
