"""The racetrack: Sutton & Barto 2nd ed., Exercise 5.12 (Figure 5.5), with its exact model.

A layout (``envs/layouts/racetrack_1.txt`` and ``racetrack_2.txt`` are the book's left
and right tracks) uses ``#`` for
outside the track, ``.`` for track, ``S`` for the start line and ``F`` for the
finish line; the car drives up (towards row 0) and right (towards the last column).

One step from cell ``(row, col)`` with velocity ``(vx, vy)`` (``vx`` to the right,
``vy`` up) and action ``(dvx, dvy)``:

1. Noise: with probability ``noise`` both increments are zero whatever the action.
2. The new velocity is ``clip(v + dv, 0, max_speed)`` per component. Both components
   cannot be zero except on the start line (the book), so a change that would stop
   a moving car is ignored (the velocity stays as it was), and one that would keep a
   car at rest on the start line gives ``(0, 1)``: the car pulls off straight up.
   Only the noise leaves a car standing (one step lost); otherwise a policy could
   idle on the start line forever, which no learner should have to rule out.
3. The car moves from ``(row, col)`` to ``(row - vy, col + vx)``. Its path is the cells
   of the integer points of the segment, ``(row - round(vy t / m), col + round(vx t / m))``
   for ``t = 1 .. m``, ``m = max(vx, vy)`` (rounding halves up): consecutive points
   are neighbours (at most one row and one column apart), so the path cannot step
   over a cell. The first of those cells that is off the grid, outside the track or
   on the finish line decides: the finish line ends the episode; off the grid or
   outside the track, the car goes back to a uniformly random start cell with zero
   velocity and the episode goes on; otherwise the car lands on the last cell.
4. Every step pays -1, the finishing one and a crash too.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tabular import TabularMDP
from tabular.checks import (
    check_actions,
    check_index,
    check_positive_int,
    check_seed,
    check_size,
    check_unit_interval,
)
from tabular.learn.arguments import MAX_STEPS

from .base import MAX_OUTCOME_SLOTS, OUTCOME_BYTES, ModelEnv, constant
from .layout import LayoutSpec, as_text, layout_text, parse_layout

TRACK_CHARS = {"#": "outside", ".": "track", "S": "start", "F": "finish"}
#: The nine actions ``(dvx, dvy)``, action id ``3 * (dvx + 1) + (dvy + 1)``.
INCREMENTS = constant([(dvx, dvy) for dvx in (-1, 0, 1) for dvy in (-1, 0, 1)], np.int64)
ON_TRACK, FINISHED, CRASHED = range(3)


class Racetrack(ModelEnv):
    """Exercise 5.12 (Figure 5.5): drive a car round a turn as fast as possible.

    ## Description
    The dynamics of one step are in the module docstring. The exact model has one
    state per track cell and legal velocity, and at most ``2 * (start cells)``
    outcomes per action (action applied or noise, each either one next state or a
    uniformly random start cell after a crash). The book's left track has 7,158
    states (298 cells), 9 actions and 12 outcome slots; its right track 12,383 states
    (515 cells), 9 actions and 46 outcome slots.
    Attributes: ``chars`` (``uint8 [H, W]``), ``grid_shape``, ``state_cells``
    (``int64 [S, 2]``), ``state_velocity`` (``int64 [S, 2]``, ``(vx, vy)``),
    ``state_index`` (``int64 [H, W, V, V]``, the state of a cell and velocity, -1 where
    there is none), ``start_cells`` (``int64 [n, 2]``).

    ## Action Space
    ``Discrete(9)``: action ``3 * (dvx + 1) + (dvy + 1)`` adds ``(dvx, dvy)``, each in
    ``-1, 0, +1``, to the velocity (names ``"(+1, -1)"`` ...).

    ## Observation Space
    ``Discrete(S)``: the states ``(cell, vx, vy)`` with ``0 <= vx, vy <= max_speed``,
    not both zero except on the start line, numbered by cell (row by row) then ``vx``
    then ``vy``. Finish cells are states too: where an episode ends.

    ## Starting State
    A uniformly random start cell with velocity ``(0, 0)``.

    ## Rewards
    -1 per step.

    ## Episode End
    Termination: the car's path reaches a finish cell (absorbing afterwards: every
    action loops back, reward 0). Truncation: none by the env itself (the registered
    id adds Gymnasium's ``max_episode_steps``).

    ## Arguments
    * ``layout``: the track (text, rows, a ``.txt`` path or the name of a file in
      ``envs/layouts/``; default ``"racetrack_1"``, Figure 5.5 left; ``"racetrack_2"``
      is its right track).
    * ``noise``: the probability in ``[0, 1]`` that both increments are zero (default
      0.1, the book's).
    * ``max_speed``: the largest velocity component (default 4: the book's "less than 5").
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version.
    """

    def __init__(self, layout: LayoutSpec = "racetrack_1", *, noise: float = 0.1,
                 max_speed: int = 4, render_mode: str | None = None) -> None:
        self.noise = check_unit_interval("noise", noise)
        self.max_speed = check_positive_int("max_speed", max_speed, high=10)
        self.chars = track_chars(layout)
        self.grid_shape = self.chars.shape
        check_track_size(self.chars, self.max_speed)
        self.state_index, self.state_cells, self.state_velocity = number_states(
            self.chars, self.max_speed)
        self.start_cells = np.argwhere(self.chars == ord("S")).astype(np.int64)
        self.next_state, self.outcome = self._deterministic_steps()
        super().__init__(self._model(), render_mode)

    # ------------------------------------------------------------------ model
    def _deterministic_steps(self):
        """``(next_state, outcome)``, each ``int64 [S, A]``: where each action takes each
        state without noise, and whether the car stays ``ON_TRACK``, ``FINISHED`` or
        ``CRASHED`` (a crash's ``next_state`` is the state it started from; the model
        replaces it by the start line)."""
        v = self.state_velocity[:, None, :] + INCREMENTS[None, :, :]  # [S, A, 2]
        v = np.clip(v, 0, self.max_speed)
        stopped = (v == 0).all(axis=2)[..., None]
        at_rest = (self.state_velocity == 0).all(axis=1)[:, None, None]
        # a car at rest that is told to stay pulls off straight ahead (no idling)
        kept = np.where(at_rest, np.array([0, 1]), self.state_velocity[:, None, :])
        return self._drive(np.where(stopped, kept, v))

    def _drive(self, velocity):
        """Move every state's car with ``velocity`` (``int [S, ..., 2]``, ``(vx, vy)``
        after the change): ``(next_state, outcome)``, each ``int64 [S, ...]``."""
        H, W = self.grid_shape
        shape = velocity.shape[:-1]
        extra = (1,) * (len(shape) - 1)
        row = self.state_cells[:, 0].reshape(-1, *extra)
        col = self.state_cells[:, 1].reshape(-1, *extra)
        vx, vy = velocity[..., 0], velocity[..., 1]
        m = np.maximum(np.maximum(vx, vy), 1)
        outcome = np.full(shape, ON_TRACK)
        end_r, end_c = np.broadcast_to(row, shape).copy(), np.broadcast_to(col, shape).copy()
        for t in range(1, self.max_speed + 1):
            # the t-th point of the segment, rounding halves up: floor((2 v t + m) / 2m)
            r = row - (2 * vy * t + m) // (2 * m)
            c = col + (2 * vx * t + m) // (2 * m)
            on_grid = (r >= 0) & (r < H) & (c >= 0) & (c < W)
            char = self.chars[np.clip(r, 0, H - 1), np.clip(c, 0, W - 1)]
            moving = (outcome == ON_TRACK) & (t <= m)
            outcome[moving & (~on_grid | (char == ord("#")))] = CRASHED
            outcome[moving & on_grid & (char == ord("F"))] = FINISHED
            # the car is where its path was last still undecided or finished
            went = moving & (outcome != CRASHED)
            end_r[went], end_c[went] = np.broadcast_to(r, shape)[went], np.broadcast_to(
                c, shape)[went]
        # a crash leaves the car (for the model to send it to the start) as it was
        crashed = (outcome == CRASHED)[..., None]
        here_v = np.broadcast_to(self.state_velocity.reshape(-1, *extra, 2), velocity.shape)
        v = np.where(crashed, here_v, velocity)
        end_r = np.where(crashed[..., 0], np.broadcast_to(row, shape), end_r)
        end_c = np.where(crashed[..., 0], np.broadcast_to(col, shape), end_c)
        next_state = self.state_index[end_r, end_c, v[..., 0], v[..., 1]]
        return next_state, outcome

    def _model(self) -> TabularMDP:
        """The exact model: outcome slots ``[applied, noise] x [start cells]``; a move
        that stays on the track or finishes uses the first slot of its block, a crash
        spreads over the start cells (padding slots stay in place with probability 0)."""
        S, A = self.next_state.shape
        n = len(self.start_cells)
        noisy_next, noisy_outcome = self._drive(np.broadcast_to(
            self.state_velocity[:, None, :], (S, A, 2)))
        branch_next = np.stack([self.next_state, noisy_next], axis=2)  # [S, A, 2]
        branch_outcome = np.stack([self.outcome, noisy_outcome], axis=2)
        branch_prob = np.array([1.0 - self.noise, self.noise])
        starts = self.state_index[self.start_cells[:, 0], self.start_cells[:, 1], 0, 0]
        crash = (branch_outcome == CRASHED)[..., None]
        first = np.arange(n) == 0
        here = np.arange(S)[:, None, None, None]
        next_state = np.where(crash, starts, np.where(first, branch_next[..., None], here))
        prob = branch_prob[:, None] * np.where(crash, 1.0 / n, first)
        done = np.broadcast_to((branch_outcome == FINISHED)[..., None], prob.shape)
        reward = np.full(prob.shape, -1.0)
        finish = self.chars[self.state_cells[:, 0], self.state_cells[:, 1]] == ord("F")
        next_state[finish] = np.arange(S)[finish, None, None, None]
        prob[finish] = np.where(first, branch_prob[:, None], 0.0)
        reward[finish] = 0.0
        done = done | finish[:, None, None, None]
        K = 2 * n
        start = np.zeros(S)
        start[starts] = 1.0 / n
        return TabularMDP(next_state.reshape(S, A, K), prob.reshape(S, A, K),
                          reward.reshape(S, A, K), done.reshape(S, A, K), start,
                          state_labels=self.label_states(),
                          action_names=[f"({dvx:+d}, {dvy:+d})" for dvx, dvy in INCREMENTS],
                          grid_shape=self.grid_shape, state_cells=self.state_cells)

    def label_states(self) -> list[str]:
        """``"(row, col) v=(vx, vy)"`` of each state."""
        return [f"({r}, {c}) v=({vx}, {vy})" for (r, c), (vx, vy)
                in zip(self.state_cells.tolist(), self.state_velocity.tolist(), strict=True)]

    # ---------------------------------------------------------- trajectories
    def trajectory(self, policy: npt.ArrayLike, start_cell: int, *, seed: int = 0,
                   max_steps: int = 200) -> tuple[np.ndarray, int, bool]:
        """Drive ``policy`` (int ``[S]`` actions) without noise, as Exercise 5.12 asks,
        from start cell number ``start_cell`` (a row of ``start_cells``) at rest.

        A crash sends the car to a start cell drawn with ``seed`` (the only randomness
        left without noise); under the optimal policy that happens only on purpose:
        from a poor start cell, hitting the wall at once is a cheap new draw.
        Returns ``(cells, crashes, finished)``: ``int64 [T + 1, 2]``, the cells visited
        (the start first, a crash's new start cell after it), the number of crashes,
        and whether the car crossed the finish line within ``max_steps`` steps."""
        policy = np.asarray(policy)
        S, A = self.next_state.shape
        if policy.shape != (S,):
            raise ValueError(f"policy must be {S} action ids, got shape {policy.shape}")
        if not np.issubdtype(policy.dtype, np.integer):
            raise ValueError(f"policy must hold integer action ids, got {policy.dtype}")
        check_actions("policy", policy, A, self._mdp.state_name)
        start_cell = check_index("start_cell", start_cell, len(self.start_cells))
        max_steps = check_positive_int("max_steps", max_steps, high=MAX_STEPS)
        rng = np.random.default_rng(check_seed(seed))
        starts = self.state_index[self.start_cells[:, 0], self.start_cells[:, 1], 0, 0]
        s = int(starts[start_cell])
        cells, crashes = [self.state_cells[s]], 0
        for _ in range(max_steps):
            a = int(policy[s])
            outcome = int(self.outcome[s, a])
            s = int(starts[rng.integers(len(starts))] if outcome == CRASHED
                    else self.next_state[s, a])
            crashes += outcome == CRASHED
            cells.append(self.state_cells[s])
            if outcome == FINISHED:
                return np.array(cells), crashes, True
        return np.array(cells), crashes, False

    # ---------------------------------------------------------------- render
    def render_text(self) -> str:
        """The track with the car drawn as ``@`` and its velocity."""
        rows = [list(line) for line in as_text(self.chars).splitlines()]
        if self.s is None:
            return "\n".join("".join(row) for row in rows) + "\n"
        r, c = self.state_cells[self.s]
        rows[r][c] = "@"
        vx, vy = self.state_velocity[self.s]
        text = f"v = ({vx}, {vy})"
        if self.last_action is not None:
            text += f" after {self._mdp.action_name(self.last_action)}"
        return text + "\n" + "\n".join("".join(row) for row in rows) + "\n"

    def _info(self, prob: float) -> dict:
        """The base info, ``cell`` ``(row, col)`` and ``velocity`` ``(vx, vy)`` now."""
        r, c = self.state_cells[self.s]
        vx, vy = self.state_velocity[self.s]
        return {**super()._info(prob), "cell": (int(r), int(c)), "velocity": (int(vx), int(vy))}


def track_chars(layout) -> np.ndarray:
    """The track's ``uint8 [H, W]`` characters; a ``ValueError`` naming ``layout``
    unless it uses only ``# . S F`` and has both start and finish cells."""
    chars = parse_layout(layout_text(layout), extra_chars={"F"})
    unknown = set(chars.tobytes().decode("ascii")) - set(TRACK_CHARS)
    if unknown:
        raise ValueError(f"layout uses {''.join(sorted(unknown))!r}; a racetrack has only "
                         + ", ".join(f"{k!r} ({v})" for k, v in TRACK_CHARS.items()))
    for char, name in (("S", "start"), ("F", "finish")):
        if not (chars == ord(char)).any():
            raise ValueError(f"layout has no {name} cell {char!r}")
    return chars


def check_track_size(chars: np.ndarray, max_speed: int) -> None:
    """Refuse, before building it, a track whose model (``S * 9 * K`` outcome slots, ``K =
    2 x`` start cells) or cell-velocity table (``H * W * V^2``, ``V = max_speed + 1``) has
    more than ``MAX_OUTCOME_SLOTS`` entries."""
    H, W = chars.shape
    V = max_speed + 1
    track = int((chars != ord("#")).sum())
    starts = int((chars == ord("S")).sum())
    S = track * (V * V - 1) + starts  # a start cell also holds the car at rest
    what = f"the {H}x{W} layout with max_speed={max_speed}"
    check_size(what, H * W * V * V, MAX_OUTCOME_SLOTS, 8, "cell-velocity entries")
    check_size(f"{what} ({S:,} states x 9 actions x {2 * starts} outcomes)",
               S * 9 * 2 * starts, MAX_OUTCOME_SLOTS, OUTCOME_BYTES)


def number_states(chars: np.ndarray, max_speed: int):
    """The states ``(cell, vx, vy)``: every track cell with every velocity in
    ``0 .. max_speed`` per component, not both zero except on the start line.

    Returns ``(state_index int64 [H, W, V, V]`` (-1: no state), ``cells int64 [S, 2]``,
    ``velocity int64 [S, 2])``, numbered by cell (row by row), then ``vx``, then ``vy``."""
    H, W = chars.shape
    V = max_speed + 1
    legal = np.ones((H, W, V, V), dtype=bool)
    legal[chars == ord("#")] = False
    legal[:, :, 0, 0] = chars == ord("S")
    found = np.argwhere(legal).astype(np.int64)
    state_index = np.full(legal.shape, -1, dtype=np.int64)
    state_index[legal] = np.arange(len(found))
    return state_index, found[:, :2].copy(), found[:, 2:].copy()
