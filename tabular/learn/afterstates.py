"""The learning player of Sutton & Barto's section 1.5: TD(0) on afterstate values in
a two-player game against a fixed opponent.

The player keeps a value for every position *after its own move* (an afterstate), its
estimate of the probability of winning from there: 1 after a win, 0 after a loss or a
draw, ``initial_value`` (0.5) elsewhere at first. It moves greedily on the table (ties
at random) but for an exploratory move, uniformly random, with probability
``epsilon``; after each greedy move it backs the previous afterstate's value up toward
the new one, ``V(S_t) <- V(S_t) + alpha [V(S_{t+1}) - V(S_t)]`` (the book's update of
section 1.5, TD(0) of eq. 6.2 with no reward and no discount), and after a move of the
opponent that ends the game, toward the end's value. An exploratory move is followed
by no backup (the book's Figure 1.1: "exploratory moves do not result in learning").

It plays on a :class:`~tabular.solve.games.GameTree` (the maximiser) against the
``opponent``'s move probabilities, the same tree that :func:`tabular.minimax` and
:func:`tabular.expectimax` solve exactly; the greedy player of a table is
:func:`afterstate_greedy`, a policy for the game's env (``tabular.envs.TicTacToe``),
which policy evaluation scores exactly.
"""

from __future__ import annotations

from typing import NamedTuple, cast

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import categorical, randint, seed_states, uniform
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import check_positive_int, check_unit_interval
from tabular.learn.outputs import prediction_outputs
from tabular.learn.results import PredictionResult
from tabular.results import check_runs, with_run_axis
from tabular.rules.values import td_target, update_toward
from tabular.solve.games import GameTree, check_game, check_opponent


class GameArrays(NamedTuple):
    """The game as the kernel reads it: ``children`` ``[N, M]``, ``terminal`` ``[N]``,
    ``maximiser`` ``[N]``, ``payoff`` ``[N]`` and the ``opponent``'s move
    probabilities ``[N, M]``."""

    children: np.ndarray
    terminal: np.ndarray
    maximiser: np.ndarray
    payoff: np.ndarray
    opponent: np.ndarray


class AfterstateParams(NamedTuple):
    """``games`` per run, the step size ``alpha`` and the exploration ``epsilon``."""

    games: int
    alpha: float
    epsilon: float


@njit(cache=True, inline="always")
def _greedy_move(V, children, p, rng):
    """The move of ``p`` whose afterstate the table values most, ties at random."""
    best, count, move = -np.inf, 0, -1
    for m in range(children.shape[1]):
        child = children[p, m]
        if child < 0:
            continue
        if V[child] > best:
            best, count, move = V[child], 1, m
        elif V[child] == best:
            count += 1
            if randint(rng, count) == 0:  # reservoir: each tied move with prob 1/count
                move = m
    return move


@njit(cache=True, inline="always")
def _random_move(children, p, rng):
    """A uniformly random legal move of ``p``."""
    n = 0
    for m in range(children.shape[1]):
        n += children[p, m] >= 0
    k = randint(rng, n)
    for m in range(children.shape[1]):
        if children[p, m] >= 0:
            if k == 0:
                return m
            k -= 1
    return -1


@njit(cache=True, inline="always")
def _afterstate_run(model, params, rng, out, run):
    """Run ``run``: ``params.games`` games from position 0 (section 1.5's player)."""
    V, returns, lengths = out.V[run], out.returns[run], out.lengths[run]
    children, terminal, opponent = model.children, model.terminal, model.opponent
    for game in range(params.games):
        p, previous, moves = 0, -1, 0
        while True:
            if not model.maximiser[p]:  # the opponent moves first from here
                p = children[p, categorical(rng, opponent[p])]
                if terminal[p]:
                    if previous >= 0:
                        V[previous] = update_toward(V[previous], td_target(
                            0.0, 1.0, V[p], False), params.alpha)
                    break
                continue
            moves += 1
            if uniform(rng) < params.epsilon:
                after = children[p, _random_move(children, p, rng)]
            else:
                after = children[p, _greedy_move(V, children, p, rng)]
                if previous >= 0:
                    V[previous] = update_toward(V[previous], td_target(
                        0.0, 1.0, V[after], False), params.alpha)
            previous = after
            p = after
            if terminal[p]:
                break
        returns[game] = model.payoff[p]
        lengths[game] = moves


@runs_kernel
def _afterstates(model, params, rng_states, out):
    """Every run of :func:`_afterstate_run`."""
    for run in range(rng_states.shape[0]):
        _afterstate_run(model, params, local_stream(rng_states[run]), out, run)


def afterstate_td(game: GameTree, opponent: npt.ArrayLike, *, games: int = 20_000,
                  alpha: float = 0.1, epsilon: float = 0.1, initial_value: float = 0.5,
                  seed: int | None = 0, runs: int | None = None) -> PredictionResult:
    """Sutton & Barto's section 1.5 player: TD(0) on afterstate values, learned by the
    maximiser of ``game`` against the ``opponent``'s move probabilities (see the module).

    Parameters
    ----------
    game : a :class:`~tabular.solve.games.GameTree` (``tabular.envs.TicTacToe.game()``).
    opponent : float ``[N, M]``, a distribution over the legal moves of each of the
        minimiser's positions (``tabular.envs.TicTacToe(...).opponent_policy``).
    games : games per run, default 20,000.
    alpha : the step size in (0, 1], default 0.1.
    epsilon : the probability of an exploratory move, in [0, 1], default 0.1.
    initial_value : the first estimate of every non-terminal position, in [0, 1]
        (default 0.5: "a 50% chance of winning").
    seed : seed of the runs' random streams (same seed, same numbers), default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs, a
        leading run axis of length ``n`` (run ``i`` of ``runs=n`` is run ``i`` of
        ``runs=m``).

    Returns a :class:`~tabular.learn.results.PredictionResult`: ``V`` ``[N]``, the
    table (1 at a win, 0 at a loss or a draw); ``episode_returns``, each game's payoff
    to the player (``game.payoff`` of its end: +1, 0, -1 for tic-tac-toe), and
    ``episode_lengths``, the player's moves, ``[games]``; each with a leading run axis
    when ``runs=n``.
    """
    game = check_game(game)
    opponent = check_opponent(game, opponent, "afterstate_td")
    params = AfterstateParams(
        games=check_positive_int("games", games, high=10**8),
        alpha=_check_step(alpha),
        epsilon=check_unit_interval("epsilon", epsilon))
    initial_value = check_unit_interval("initial_value", initial_value)
    V0 = np.where(game.terminal, (game.payoff > 0).astype(np.float64), initial_value)
    n_runs = check_runs(runs)
    out = prediction_outputs(V0, n_runs, params.games, False)
    model = GameArrays(game.children, game.terminal, game.maximiser, game.payoff, opponent)
    over_runs(_afterstates, model, params, seed_states(seed, n_runs), out)
    # every backup is a convex combination of values in [0, 1]: no estimate can diverge
    return PredictionResult(episode_returns=with_run_axis(out.returns, runs),
                            episode_lengths=with_run_axis(out.lengths, runs),
                            V=with_run_axis(out.V, runs))


def _check_step(alpha: object) -> float:
    alpha = check_unit_interval("alpha", cast(float, alpha))
    if alpha == 0.0:
        raise ValueError("alpha must be in (0, 1], got 0.0")
    return alpha


def afterstate_greedy(game: GameTree, V: npt.ArrayLike) -> np.ndarray:
    """The greedy player of an afterstate table ``V`` ``[N]``: at each of the
    maximiser's positions, the moves whose afterstate ``V`` values most, ties split
    evenly (float ``[N, M]``; the other rows uniform over their legal moves, or a first
    column of 1 at terminal positions), a policy for the game's env."""
    game = check_game(game)
    V = np.asarray(V, dtype=np.float64)
    if V.shape != (game.n_positions,) or not np.isfinite(V).all():
        raise ValueError(f"V must be a finite [{game.n_positions}] array, got shape "
                         f"{list(V.shape)}")
    values = np.where(game.legal, V[np.maximum(game.children, 0)], -np.inf)
    chosen = np.where(game.maximiser[:, None], values == values.max(axis=1, keepdims=True),
                      game.legal) & game.legal
    chosen[game.terminal, 0] = True
    return chosen / chosen.sum(axis=1, keepdims=True)
