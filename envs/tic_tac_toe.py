"""Tic-tac-toe (Sutton & Barto, section 1.5): the game tree and the game as an MDP
against a given opponent."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from tabular import TabularMDP
from tabular.checks import check_finite
from tabular.solve.games import GameTree, check_opponent, minimax

from .base import ModelEnv

#: The rows, columns and diagonals of the 3 x 3 board, cells numbered 0-8 row by row.
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8),
         (2, 4, 6))
EMPTY, X, O = 0, 1, 2
MARKS = ".XO"


def winner(board: tuple[int, ...]) -> int:
    """X or O if a line is theirs, else EMPTY."""
    for a, b, c in LINES:
        if board[a] != EMPTY and board[a] == board[b] == board[c]:
            return board[a]
    return EMPTY


@cache
def _positions() -> tuple[np.ndarray, np.ndarray]:
    """Every position reachable from the empty board (X first), breadth first, so that a
    move always leads to a later one (a topological order), and the move table:
    ``(boards int8 [N, 9], children int64 [N, 9])`` (-1: the cell is taken or the game
    is over)."""
    start = (EMPTY,) * 9
    order: list[tuple[int, ...]] = [start]
    index: dict[tuple[int, ...], int] = {start: 0}
    children: list[list[int]] = []
    i = 0
    while i < len(order):
        board = order[i]
        row = [-1] * 9
        if winner(board) == EMPTY and EMPTY in board:
            mark = X if board.count(X) == board.count(O) else O
            for cell in range(9):
                if board[cell] == EMPTY:
                    child = board[:cell] + (mark,) + board[cell + 1:]
                    if child not in index:
                        index[child] = len(order)
                        order.append(child)
                    row[cell] = index[child]
        children.append(row)
        i += 1
    boards = np.array(order, dtype=np.int8)
    table = np.array(children, dtype=np.int64)
    boards.flags.writeable = table.flags.writeable = False
    return boards, table


class TicTacToe(ModelEnv):
    """Tic-tac-toe against a fixed opponent (Sutton & Barto, section 1.5): a two-player
    game seen from one player as an MDP, the opponent's moves part of the dynamics.

    ## Description
    The agent plays ``player`` ("X", who moves first, or "O") on the 3 x 3 board;
    after each of its moves the ``opponent`` replies by its policy, a probability over
    the free cells of each position. A line of three ends the game, as does a full
    board. The whole game tree (5,478 positions) is the state space, so
    :meth:`game` with :func:`tabular.minimax` / :func:`tabular.expectimax` and
    value iteration on :meth:`to_mdp` answer the same questions exactly: the MDP's
    optimal values are expectimax's against the opponent.

    ## Action Space
    ``Discrete(9)``: the cell to mark, numbered 0-8 row by row. A taken cell is an
    illegal move: it ends the game as a loss (so no learner is rewarded for it);
    ``action_mask`` (bool ``[S, 9]``) and ``info["action_mask"]`` say which cells
    are free, for the learners' ``action_mask=``.

    ## Observation Space
    ``Discrete(5478)``: the position (row ``s`` of :attr:`boards`, 0 the empty board),
    always one where the agent is to move or the game is over.

    ## Starting State
    The empty board as X; as O, the board after the opponent's first move.

    ## Rewards
    ``rewards = (win, draw, loss)`` (default ``(1, 0, -1)``) on the move that ends the
    game, 0 otherwise. ``(1, 0, 0)`` makes the values probabilities of winning (the
    book's player counts a draw as a loss); ``(0, 1, 0)`` of drawing.

    ## Episode End
    Termination: a line, a full board or an illegal move. Registered with a limit of
    100 steps (never reached: a game has at most 5 moves of one player).

    ## Arguments
    * ``opponent``: ``"random"`` (default: uniform over the free cells),
      ``"minimax"`` (perfect play, ties split evenly) or a float ``[5478, 9]`` array
      of move probabilities (rows of the opponent's positions read).
    * ``player``: ``"X"`` (default) or ``"O"``.
    * ``rewards``: ``(win, draw, loss)``, finite numbers.
    * ``render_mode``: ``"ansi"`` or ``None``.

    ## Version History
    * v0: the initial version.
    """

    def __init__(self, opponent: str | npt.ArrayLike = "random", player: str = "X", *,
                 rewards: tuple[float, float, float] = (1.0, 0.0, -1.0),
                 render_mode: str | None = None) -> None:
        if not isinstance(player, str) or player not in ("X", "O"):
            raise ValueError(f"player must be 'X' or 'O', got {player!r}")
        if np.ndim(rewards) != 1 or len(rewards) != 3:
            raise ValueError(f"rewards must be (win, draw, loss), three numbers, got "
                             f"{rewards!r}")
        self.rewards = tuple(check_finite(f"rewards[{i}]", r) for i, r in enumerate(rewards))
        self.player = player
        self.opponent_policy = self._opponent(opponent)
        self.action_mask = np.zeros((len(self.boards), 9), dtype=bool)
        game = self.game()
        agent = self._agent_positions(game)
        self.action_mask[agent] = game.legal[agent]
        self.action_mask[~agent, 0] = True  # the others never occur; one action each
        self.action_mask.flags.writeable = False
        super().__init__(self.model(), render_mode)

    @property
    def boards(self) -> np.ndarray:
        """int8 ``[5478, 9]``: the board of each position (0 free, 1 X, 2 O), cells row by
        row."""
        return _positions()[0]

    @staticmethod
    def game(payoffs: tuple[float, ...] = (1.0, 0.0, -1.0)) -> GameTree:
        """The game tree (:class:`~tabular.solve.games.GameTree`) of every position
        reachable from the empty board, X the maximiser; ``payoffs`` = (X wins, draw, O
        wins), default ``(1, 0, -1)``."""
        payoffs = tuple(check_finite(f"payoffs[{i}]", p) for i, p in enumerate(payoffs))
        return _game(payoffs)

    def _agent_positions(self, game: GameTree) -> np.ndarray:
        mine = game.maximiser if self.player == "X" else ~game.maximiser
        return mine & ~game.terminal

    def _opponent(self, opponent: object) -> np.ndarray:
        game = self.game()
        theirs = (~game.maximiser if self.player == "X" else game.maximiser) & ~game.terminal
        legal = game.legal.astype(np.float64)
        if isinstance(opponent, str):
            if opponent == "random":
                probs = legal / legal.sum(axis=1, keepdims=True).clip(1.0)
            elif opponent == "minimax":
                best = minimax(game).best.astype(np.float64)
                probs = best / best.sum(axis=1, keepdims=True).clip(1.0)
            else:
                raise ValueError(f"opponent must be 'random', 'minimax' or a [5478, 9] array "
                                 f"of move probabilities, got {opponent!r}")
        else:
            probs = check_opponent(game, opponent, "TicTacToe", maximiser=self.player == "O")
        probs[~theirs] = 0.0
        probs.flags.writeable = False
        return probs

    def model(self) -> TabularMDP:
        """The exact MDP: from each of the agent's positions, each move, then each reply
        of the opponent with its probability."""
        game, (win, draw, loss) = self.game(), self.rewards
        me = X if self.player == "X" else O
        boards, children = _positions()
        n = len(boards)
        outcome = np.zeros(n)  # the agent's reward at each terminal position
        for s in np.flatnonzero(game.terminal):
            w = winner(tuple(boards[s]))
            outcome[s] = draw if w == EMPTY else win if w == me else loss
        K = 8  # the opponent replies in at most 8 free cells
        next_state = np.tile(np.arange(n)[:, None, None], (1, 9, K))
        prob = np.zeros((n, 9, K))
        prob[:, :, 0] = 1.0
        reward = np.zeros((n, 9, K))
        done = np.ones((n, 9, K), dtype=bool)
        for s in np.flatnonzero(self._agent_positions(game)):
            for a in range(9):
                after = children[s, a]
                if after < 0:  # a taken cell: the game is lost
                    reward[s, a, 0] = loss
                    continue
                if game.terminal[after]:
                    next_state[s, a, 0], reward[s, a, 0] = after, outcome[after]
                    continue
                replies = np.flatnonzero(self.opponent_policy[after] > 0)
                k = np.arange(len(replies))
                nxt = children[after, replies]
                next_state[s, a, k], prob[s, a, k] = nxt, self.opponent_policy[after, replies]
                reward[s, a, k], done[s, a, k] = outcome[nxt], game.terminal[nxt]
        start = np.zeros(n)
        if self.player == "X":
            start[0] = 1.0
        else:
            first = self.opponent_policy[0]
            start[children[0, first > 0]] = first[first > 0]
        labels = ["".join(MARKS[v] for v in board) for board in boards]
        return TabularMDP(next_state, prob, reward, done, start, state_labels=labels,
                          action_names=[f"cell {c}" for c in range(9)])

    def _info(self, prob: float) -> dict[str, Any]:
        return {"prob": prob, "action_mask": self.action_mask[self.s].copy()}

    def render_text(self) -> str:
        """The board, three rows of ``X``, ``O`` and ``.``."""
        if self.s is None:
            return "(not reset)\n"
        board = "".join(MARKS[v] for v in self.boards[self.s])
        return "\n".join(board[i:i + 3] for i in (0, 3, 6)) + "\n"


@cache
def _game(payoffs: tuple[float, ...]) -> GameTree:
    boards, children = _positions()
    terminal: np.ndarray = (children < 0).all(axis=1)  # type: ignore[assignment]  # .all(axis=) of an array is an array
    x_count, o_count = (boards == X).sum(axis=1), (boards == O).sum(axis=1)
    payoff = np.zeros(len(boards))
    for s in np.flatnonzero(terminal):
        w = winner(tuple(boards[s]))
        payoff[s] = payoffs[0] if w == X else payoffs[2] if w == O else payoffs[1]
    return GameTree(children, payoff, terminal, x_count == o_count)
