"""Chapter 1's tic-tac-toe: exact minimax values over the game tree, and the book's
learning player against a random and a perfect opponent, its results computed exactly.

Every position reachable from the empty board is enumerated (5,478 of them) and
valued by minimax, a DP over the tree, and by expectimax against the random player
(the best response to it, which wins 191/192 of the games). A player here is a Markov policy on the
board, so the outcome probabilities of any two players are exact too: a recursion
over the positions they reach. The learner (section 1.5) keeps a table of the
probability of winning from each position after its own move (an afterstate), 0.5 at
first, 1 after a win and 0 after a loss or a draw; it moves greedily on the table but
for an exploratory move with probability epsilon, and after each greedy move backs
the previous afterstate's value up towards the new one,
``V(S_t) <- V(S_t) + alpha [V(S_{t+1}) - V(S_t)]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, within
from tabular.experiments.harness.settings import Settings

#: The rows, columns and diagonals of the 3 x 3 board, cells numbered 0-8 row by row.
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8),
         (2, 4, 6))
EMPTY, X, O = 0, 1, 2
#: Positions reachable from the empty board with X to move first, the games' ends
#: included (the known count).
REACHABLE = 5478
#: The outcome of two random players, exactly (X wins 737/1260 of games, O wins
#: 363/1260, a draw 160/1260).
RANDOM_PLAY = (737 / 1260, 160 / 1260, 363 / 1260)

Board = tuple[int, ...]
#: A player: the probability of each legal move from a board, ``{cell: p}``.
Player = Callable[[Board], dict[int, float]]

#: What the experiment reproduces, as the gallery names it.
REPRODUCES = ("Sutton & Barto (2018), section 1.5 (tic-tac-toe), with exact minimax "
              "values and exact outcome probabilities")


@dataclass(frozen=True)
class Config(Settings):
    """Section 1.5: the learner plays X against a random O."""

    games: int = 20_000
    """Training games against the random player."""
    alpha: float = 0.1
    """Step size of the value backups."""
    epsilon: float = 0.1
    """Probability of an exploratory (random) move; no backup follows one."""
    evaluations: int = 40
    """Points of the learning curve (exact outcome probabilities of the greedy learner)."""
    seed: int = 0
    """Seed of NumPy's generator for the training games."""

    QUICK = {"games": 5_000, "evaluations": 20}


def winner(board: Board) -> int:
    """X or O if a line is theirs, else EMPTY."""
    for a, b, c in LINES:
        if board[a] != EMPTY and board[a] == board[b] == board[c]:
            return board[a]
    return EMPTY


def is_over(board: Board) -> bool:
    return winner(board) != EMPTY or EMPTY not in board


def mover(board: Board) -> int:
    """Whose turn it is: X moves first."""
    return X if board.count(X) == board.count(O) else O


def moves(board: Board) -> list[int]:
    return [i for i, v in enumerate(board) if v == EMPTY]


def play(board: Board, cell: int) -> Board:
    return board[:cell] + (mover(board),) + board[cell + 1:]


START: Board = (EMPTY,) * 9


def reachable() -> list[Board]:
    """Every position reachable from the empty board, in the order first met."""
    seen, order, stack = {START}, [START], [START]
    while stack:
        board = stack.pop()
        if is_over(board):
            continue
        for cell in moves(board):
            child = play(board, cell)
            if child not in seen:
                seen.add(child)
                order.append(child)
                stack.append(child)
    return order


def minimax_values(positions: list[Board]) -> dict[Board, int]:
    """The game's value for X (+1 a win, 0 a draw, -1 a loss) from every position
    under perfect play, by DP over the tree: the children first (more marks later)."""
    value: dict[Board, int] = {}
    for board in sorted(positions, key=lambda b: -sum(v != EMPTY for v in b)):
        w = winner(board)
        if w != EMPTY or EMPTY not in board:
            value[board] = 1 if w == X else -1 if w == O else 0
            continue
        children = [value[play(board, c)] for c in moves(board)]
        value[board] = max(children) if mover(board) == X else min(children)
    return value


def best_response_values(positions: list[Board]) -> dict[Board, float]:
    """X's largest probability of winning from every position against the uniformly
    random O, by DP over the tree (expectimax, the children first): X takes its best
    child, O averages over its moves. It is what the learner's table, which counts a
    draw as a loss, would hold for its greedy moves if it had converged."""
    value: dict[Board, float] = {}
    for board in sorted(positions, key=lambda b: -sum(v != EMPTY for v in b)):
        if is_over(board):
            value[board] = float(winner(board) == X)
            continue
        children = [value[play(board, c)] for c in moves(board)]
        value[board] = max(children) if mover(board) == X else sum(children) / len(children)
    return value


def random_player(board: Board) -> dict[int, float]:
    legal = moves(board)
    return {c: 1.0 / len(legal) for c in legal}


def perfect_player(value: dict[Board, int]) -> Player:
    """The moves that keep the minimax value for the mover, ties split evenly."""
    def probs(board: Board) -> dict[int, float]:
        sign = 1 if mover(board) == X else -1
        scores = {c: sign * value[play(board, c)] for c in moves(board)}
        best = [c for c, v in scores.items() if v == max(scores.values())]
        return {c: 1.0 / len(best) for c in best}
    return probs


def greedy_player(V: dict[Board, float]) -> Player:
    """The learner without exploration: the moves whose afterstate it values most."""
    def probs(board: Board) -> dict[int, float]:
        scores = {c: afterstate_value(V, play(board, c)) for c in moves(board)}
        best = [c for c, v in scores.items() if v == max(scores.values())]
        return {c: 1.0 / len(best) for c in best}
    return probs


def afterstate_value(V: dict[Board, float], board: Board) -> float:
    """The learner's (X's) estimate: 1 after a win, 0 after a loss or draw, else its
    table, 0.5 where it has no entry yet."""
    w = winner(board)
    if w != EMPTY or EMPTY not in board:
        return 1.0 if w == X else 0.0
    return V.get(board, 0.5)


def outcome(player_x: Player, player_o: Player) -> np.ndarray:
    """``[P(X wins), P(draw), P(O wins)]`` from the empty board, exactly: the players'
    move probabilities multiplied along every game they can play."""
    memo: dict[Board, np.ndarray] = {}

    def of(board: Board) -> np.ndarray:
        if board in memo:
            return memo[board]
        w = winner(board)
        if w != EMPTY or EMPTY not in board:
            result = np.array([w == X, w == EMPTY, w == O], dtype=float)
        else:
            player = player_x if mover(board) == X else player_o
            result = sum(p * of(play(board, c)) for c, p in player(board).items())
        memo[board] = result
        return result

    return of(START)


def train(games: int, alpha: float, epsilon: float, checkpoints: list[int],
          rng: np.random.Generator) -> tuple[dict[Board, float], list[np.ndarray]]:
    """The learner's table after ``games`` games as X against the random player, and
    its greedy outcome against that player at each of ``checkpoints`` (games played)."""
    V: dict[Board, float] = {}
    curve = []
    previous: Board | None = None  # the learner's last afterstate in the current game

    def backup(towards: Board) -> None:
        """The previous afterstate's value a step ``alpha`` towards ``towards``'s."""
        if previous is not None:
            v = afterstate_value(V, previous)
            V[previous] = v + alpha * (afterstate_value(V, towards) - v)

    for game in range(games + 1):
        if game in checkpoints:
            curve.append(outcome(greedy_player(V), random_player))
        if game == games:
            break
        board, previous = START, None  # previous: the learner's last afterstate
        while True:
            legal = moves(board)
            if rng.random() < epsilon:  # exploratory: no backup
                after = play(board, legal[rng.integers(len(legal))])
            else:
                scores = np.array([afterstate_value(V, play(board, c)) for c in legal])
                best = np.flatnonzero(scores == scores.max())
                after = play(board, legal[best[rng.integers(best.size)]])
                backup(after)
            previous = after
            if is_over(after):
                break
            reply = moves(after)
            board = play(after, reply[rng.integers(len(reply))])
            if is_over(board):  # the opponent ended it: a loss or a draw, worth 0
                backup(board)
                break
    return V, curve


def run(config: Config, executor) -> dict:
    positions = reachable()
    value = minimax_values(positions)
    perfect = perfect_player(value)
    best = best_response_values(positions)
    checkpoints = sorted({round(g) for g in np.linspace(0, config.games, config.evaluations)})
    V, curve = train(config.games, config.alpha, config.epsilon, checkpoints,
                     np.random.default_rng(config.seed))
    learner = greedy_player(V)
    return {
        "positions": np.array(len(positions)),
        "empty_value": np.array(value[START]),
        "games": np.array(checkpoints),
        "learning_curve": np.array(curve),  # [checkpoint, (win, draw, loss)] against random
        # [X player, O player] pairs: (win, draw, loss) from X's side
        "random_random": outcome(random_player, random_player),
        "perfect_random": outcome(perfect, random_player),
        "random_perfect": outcome(random_player, perfect),
        "perfect_perfect": outcome(perfect, perfect),
        "learner_perfect": outcome(learner, perfect),
        "best_response_win": np.array(best[START]),  # X's best P(win) against random, DP
        # the greedy player on those values against random: its P(win) must be the DP's
        "best_response_random": outcome(greedy_player(best), random_player),
    }


def plot(results: dict, out_dir, config: Config) -> list:
    fig, axes = style.figure(1, 1, width=6.0, height=4.2,
                             title="Section 1.5: tic-tac-toe, the learner (X) against a "
                                   "random O")
    ax = axes[0, 0]
    games, curve = results["games"], results["learning_curve"]
    for j, label in enumerate(("win", "draw", "loss")):
        ax.plot(games, curve[:, j], marker="o", markersize=3, color=style.PALETTE[j],
                label=f"learner, P({label}), exact")
        ax.axhline(results["random_random"][j], color=style.PALETTE[j], linestyle=":",
                   linewidth=1)
    ax.axhline(results["perfect_random"][0], color="black", linestyle="--", linewidth=1,
               label=f"perfect X: P(win) {results['perfect_random'][0]:.3f}, never loses")
    best = float(results["best_response_win"])
    ax.axhline(best, color="0.5", linestyle="-.", linewidth=1,
               label=f"best response to random: P(win) {best:.3f} (DP)")
    ax.plot([], [], color="0.4", linestyle=":", label="random X (dotted, by colour)")
    lp = results["learner_perfect"]
    ax.set(xlabel="training games", ylabel="probability against the random player",
           ylim=(0, 1),
           title=f"alpha = {config.alpha:g}, epsilon = {config.epsilon:g}; against the "
                 f"perfect O it draws {lp[1]:.2f}, loses {lp[2]:.2f}")
    ax.title.set_fontsize(9)
    ax.legend(fontsize=7, loc="center right")
    return [style.save(fig, out_dir / "tic_tac_toe.png")]


@check()
def the_game_tree(results: dict) -> list[Measure]:
    """The reachable positions are the known 5,478, and the empty board is a draw under
    perfect play: the minimax value, by DP over the tree, is 0."""
    n, v = int(results["positions"]), int(results["empty_value"])
    return [fact("positions reachable from the empty board", passed=n == REACHABLE,
                 expected=f"{REACHABLE:,}", measured=f"{n:,}",
                 failure=f"{n:,} positions, not {REACHABLE:,}"),
            fact("minimax value of the empty board", passed=v == 0, expected="0 (a draw)",
                 measured=str(v), failure=f"the empty board's minimax value is {v}, not a draw")]


@check()
def exact_outcomes(results: dict) -> list[Measure]:
    """Two random players: X wins 737/1260, O 363/1260, a draw 160/1260 (the known
    exact values). The perfect player never loses, as X or O, against the random player,
    the learner or itself (two perfect players always draw)."""
    measures = [within(f"random against random: P({name})", measured=p, expected=q, tolerance=1e-12,
                       failure=f"random play gives P({name}) = {p:.6f}, not {q:.6f}",
                       why="rounding")
                for name, p, q in zip(("X wins", "draw", "O wins"),
                                      results["random_random"], RANDOM_PLAY, strict=True)]
    for key, loss, who in (("perfect_random", 2, "perfect X against random"),
                           ("random_perfect", 0, "perfect O against random"),
                           ("learner_perfect", 0, "perfect O against the learner"),
                           ("perfect_perfect", 0, "perfect X against perfect O")):
        p = float(results[key][loss])
        measures.append(below(f"{who}: P(the perfect player loses)", measured=p, bound=0.0,
                              failure=f"{who}: the perfect player loses with probability {p:.3g}",
                              why="exact"))
    draw = float(results["perfect_perfect"][1])
    measures.append(within("perfect against perfect: P(draw)", measured=draw, expected=1.0,
                           tolerance=1e-12,
                           failure=f"two perfect players draw with probability {draw:.6f}",
                           why="rounding"))
    return measures


@check()
def the_best_response(results: dict) -> list[Measure]:
    """The best response to the random player wins with probability 191/192 (DP over
    the tree); the greedy player on its values, evaluated by the separate recursion over
    the games, wins exactly that often, and no player here wins more often against the
    random O: the perfect player, nor the learner at any point of its curve."""
    best = float(results["best_response_win"])
    measures = [within("best response against random: P(win), DP", measured=best,
                       expected=191 / 192, tolerance=1e-12,
                       failure=f"the best response wins {best:.6f}, not 191/192", why="rounding"),
                within("greedy player on the DP values: P(win), exact outcome",
                       measured=results["best_response_random"][0], expected=best, tolerance=1e-12,
                       failure="the two recursions disagree", why="rounding")]
    for who, win in (("perfect X", results["perfect_random"][0]),
                     ("the learner, best point of its curve",
                      results["learning_curve"][:, 0].max())):
        measures.append(below(f"{who} against random: P(win)", measured=win, bound=best + 1e-12,
                              failure=f"{who} wins {win:.6f} against the random player, more than "
                                      "the best response", why="the best response (+ rounding)"))
    return measures


@check("games", "alpha", "epsilon")
def the_learner_beats_the_random_player(results: dict) -> list[Measure]:
    """Training helps, by exact evaluation of the table trained: against the random
    player the trained greedy learner loses less often than the untrained one (0.120;
    the learning curve's first point) and wins more often than it (0.814) and than a
    random X (0.585). These comparisons are exact and need no tolerance. How close it
    comes to the best response's 191/192 (:func:`the_best_response`; the figure's
    dash-dotted line) is not checked: a constant step size after a finite number of
    games has no convergence bound to hold it to, and one seed gives no standard error
    (seed 0: 0.992 after 20,000 games, losing 0.004)."""
    (win0, _, loss0), (win, _, loss) = results["learning_curve"][[0, -1]]
    random_win = results["random_random"][0]
    return [fact("trained learner against random: P(loss) below the untrained learner's",
                 passed=loss < loss0, expected=f"< {loss0:.3f}", measured=f"{loss:.3f}",
                 failure=f"the trained learner still "
                         f"loses {loss:.3f} of its games to the random player, untrained "
                         f"{loss0:.3f}"),
            fact("trained learner against random: P(win) above the untrained learner's",
                 passed=win > win0, expected=f"> {win0:.3f}", measured=f"{win:.3f}",
                 failure=f"the trained learner wins {win:.3f}, untrained {win0:.3f}"),
            fact("trained learner against random: P(win) above a random X's",
                 passed=win > random_win, expected=f"> {random_win:.3f}", measured=f"{win:.3f}",
                 failure=f"the trained learner wins only {win:.3f}")]
