"""Two-player games solved exactly: minimax and expectimax by backward induction on the
game tree (Sutton & Barto, section 1.5; Russell and Norvig, sections 5.2 and 5.5).

A :class:`GameTree` holds a finite game of alternating moves between a maximiser and a
minimiser as arrays, its positions numbered so that every move leads to a higher number
(a topological order: the tree, or the graph of positions reached by more than one
line of play, has no cycle). One backward pass over the positions then values them all:

- :func:`minimax`: both players play perfectly, ``V(p) = max_m V(child)`` where the
  maximiser moves and ``min_m`` where the minimiser does (von Neumann's value of a
  zero-sum game of perfect information);
- :func:`expectimax`: the minimiser is replaced by a fixed stochastic ``opponent``,
  ``V(p) = sum_m opponent(m | p) V(child)`` at its positions: the maximiser's best
  response to that opponent, which is value iteration on the MDP the opponent makes of
  the game (``tabular.envs.TicTacToe`` is that MDP for tic-tac-toe), in one sweep.

Both are finite-horizon DP (:func:`~tabular.finite_horizon`'s backward induction) on a
graph whose order is known, so one sweep is exact and no tolerance enters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular.checks import first_bad

MAX, MIN, CHANCE = 0, 1, 2


@dataclass(frozen=True, eq=False)
class GameTree:
    """A finite game of alternating moves, positions ``0 .. N-1`` in topological order.

    ``children``: int64 ``[N, M]``, the position move ``m`` leads to (a larger number),
    or -1 where the move is not legal; ``payoff``: float64 ``[N]``, the maximiser's
    payoff at a terminal position (+1 a win, 0 a draw, -1 a loss for tic-tac-toe; 0
    elsewhere); ``terminal``: bool ``[N]``, the game is over (no legal move);
    ``maximiser``: bool ``[N]``, the maximiser moves (ignored at terminal positions).
    Position 0 is where the game starts.
    """

    children: np.ndarray
    payoff: np.ndarray
    terminal: np.ndarray
    maximiser: np.ndarray

    def __post_init__(self) -> None:
        children = np.asarray(self.children)
        if children.ndim != 2 or children.dtype.kind not in "iu" or children.shape[0] == 0:
            raise ValueError(f"GameTree: children must be an integer [N, M] array, got "
                             f"{children.dtype} shape {list(children.shape)}")
        n = children.shape[0]
        arrays = {}
        for name, kind in (("payoff", "f"), ("terminal", "b"), ("maximiser", "b")):
            value = np.asarray(getattr(self, name))
            if value.shape != (n,) or (value.dtype.kind != kind and not (
                    kind == "f" and value.dtype.kind in "iu")):
                raise ValueError(f"GameTree: {name} must be {'float' if kind == 'f' else 'bool'}"
                                 f" [{n}], got {value.dtype} shape {list(value.shape)}")
            arrays[name] = value
        if not np.isfinite(arrays["payoff"]).all():
            raise ValueError(f"GameTree: payoff{first_bad(~np.isfinite(arrays['payoff']))} is "
                             "not finite")
        legal = children >= 0
        below = legal & (children <= np.arange(n)[:, None])
        if below.any() or (children >= n).any():
            bad = below | (children >= n)
            raise ValueError(f"GameTree: children{first_bad(bad)} = {children[bad][0]} is not a "
                             "later position (positions must be in topological order, < N)")
        stuck = ~arrays["terminal"] & ~legal.any(axis=1)
        if stuck.any():
            raise ValueError(f"GameTree: position {int(np.argmax(stuck))} is not terminal but "
                             "has no legal move")
        over = arrays["terminal"] & legal.any(axis=1)
        if over.any():
            raise ValueError(f"GameTree: terminal position {int(np.argmax(over))} has a legal "
                             "move")
        for name, value in (("children", children.astype(np.int64)),
                            ("payoff", arrays["payoff"].astype(np.float64)),
                            ("terminal", arrays["terminal"]), ("maximiser", arrays["maximiser"])):
            value = np.array(value)
            value.flags.writeable = False
            object.__setattr__(self, name, value)

    @property
    def n_positions(self) -> int:
        return self.children.shape[0]

    @property
    def n_moves(self) -> int:
        return self.children.shape[1]

    @property
    def legal(self) -> np.ndarray:
        """Bool ``[N, M]``: the legal moves of each position."""
        return self.children >= 0


@dataclass(frozen=True, eq=False)
class GameValues:
    """What :func:`minimax` and :func:`expectimax` return.

    ``V``: float64 ``[N]``, the maximiser's value of each position; ``Q``: float64
    ``[N, M]``, the value of each legal move (the value of the position it leads to;
    ``-inf`` for an illegal move where the maximiser moves, ``+inf`` where the
    minimiser does, so that ``argmax`` / ``argmin`` never pick one; 0 at terminal and
    chance positions' illegal moves); ``best``: bool ``[N, M]``, the moves that keep
    the value for the player who moves (ties included; none at terminal positions, and
    for :func:`expectimax` none at the opponent's positions).
    """

    V: np.ndarray
    Q: np.ndarray
    best: np.ndarray


@njit(cache=True)
def _backward_induction(children, payoff, terminal, mode, weights, V, Q):
    """One backward pass: ``V[p]`` from its children's values, last position first;
    ``mode[p]``: MAX, MIN or CHANCE (``weights[p]`` the chance probabilities)."""
    n, m = children.shape
    for p in range(n - 1, -1, -1):
        if terminal[p]:
            V[p] = payoff[p]
            continue
        best = -np.inf if mode[p] == MAX else np.inf
        total = 0.0
        for move in range(m):
            child = children[p, move]
            if child < 0:
                Q[p, move] = -np.inf if mode[p] == MAX else (np.inf if mode[p] == MIN else 0.0)
                continue
            Q[p, move] = V[child]
            if mode[p] == MAX:
                best = max(best, V[child])
            elif mode[p] == MIN:
                best = min(best, V[child])
            elif weights[p, move] > 0.0:
                total += weights[p, move] * V[child]
        V[p] = total if mode[p] == CHANCE else best


def _solve(game: GameTree, mode: np.ndarray, weights: np.ndarray) -> GameValues:
    V = np.zeros(game.n_positions)
    Q = np.zeros((game.n_positions, game.n_moves))
    _backward_induction(game.children, game.payoff, game.terminal, mode, weights, V, Q)
    best = np.zeros(Q.shape, dtype=bool)
    for kind in (MAX, MIN):
        rows = (mode == kind) & ~game.terminal
        best[rows] = game.legal[rows] & (Q[rows] == V[rows, None])
    return GameValues(V, Q, best)


def minimax(game: GameTree) -> GameValues:
    """The minimax value of every position of ``game`` (a :class:`GameTree`): both players
    perfect, the maximiser taking ``max`` over its moves and the minimiser ``min``, by
    one backward pass (exact). Returns :class:`GameValues`; ``V[0]`` is the game's value
    (0 for tic-tac-toe: a draw under perfect play)."""
    game = check_game(game)
    mode = np.where(game.maximiser, MAX, MIN).astype(np.int64)
    return _solve(game, mode, np.zeros((1, 1)))


def expectimax(game: GameTree, opponent: npt.ArrayLike) -> GameValues:
    """The maximiser's best response to a fixed stochastic ``opponent``: at the
    minimiser's positions the value is the ``opponent``-weighted mean of the moves'
    values, at the maximiser's the best move's, by one backward pass (exact).

    ``opponent``: float ``[N, M]``, a probability distribution over the legal moves of
    each of the minimiser's positions (its other rows are not read). Returns
    :class:`GameValues` (``best`` marks the maximiser's best responses only)."""
    game = check_game(game)
    weights = check_opponent(game, opponent, "expectimax")
    mode = np.where(game.maximiser, MAX, CHANCE).astype(np.int64)
    return _solve(game, mode, weights)


def check_opponent(game: GameTree, opponent: object, where: str,
                   maximiser: bool = False) -> np.ndarray:
    """``opponent`` as float ``[N, M]`` move probabilities, checked on the rows of the
    positions where the opponent moves (the minimiser's, or the maximiser's with
    ``maximiser=True``): a distribution over their legal moves; a ``ValueError``
    naming ``where`` and the first bad position otherwise. Other rows are not read."""
    weights = None if isinstance(opponent, bool | str) else np.array(opponent, dtype=float)
    if weights is None or weights.shape != game.children.shape:
        raise ValueError(f"{where}: opponent must be a float [{game.n_positions}, "
                         f"{game.n_moves}] array of move probabilities, got "
                         f"{repr(opponent) if weights is None else list(weights.shape)}")
    for p in np.flatnonzero((game.maximiser == maximiser) & ~game.terminal):
        row, legal = weights[p], game.legal[p]
        if not (np.isfinite(row).all() and (row >= 0.0).all() and (row[~legal] == 0.0).all()
                and abs(row.sum() - 1.0) <= 1e-9):
            raise ValueError(f"{where}: opponent[{p}] = {row.tolist()} is not a "
                             f"distribution over the legal moves of position {p}")
    return weights


def check_game(game: object) -> GameTree:
    if not isinstance(game, GameTree):
        raise TypeError(f"game must be a tabular.solve.games.GameTree (e.g. "
                        f"tabular.envs.TicTacToe.game()), got {type(game).__name__}")
    return game
