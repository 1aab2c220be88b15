"""Chapter 1's tic-tac-toe in the library: the game tree, its exact minimax and
expectimax values, the env (the game as an MDP against a given opponent) checked by
value iteration against expectimax, and the learning player of section 1.5."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tabular import (
    TabularMDP,
    afterstate_greedy,
    afterstate_td,
    expectimax,
    minimax,
    policy_evaluation,
    value_iteration,
)
from tabular.envs import TicTacToe

#: Reachable positions from the empty board, the games' ends included (the known count).
REACHABLE = 5478
#: Two random players: X wins 737/1260, a draw 160/1260, O wins 363/1260 (known exactly).
RANDOM_PLAY = (737 / 1260, 160 / 1260, 363 / 1260)


@pytest.fixture(scope="module")
def game():
    return TicTacToe.game()


@pytest.fixture(scope="module")
def random_env():
    return TicTacToe(opponent="random")


def test_the_game_tree(game):
    assert game.n_positions == REACHABLE and game.n_moves == 9
    assert game.legal[0].all() and not game.terminal[0] and game.maximiser[0]
    assert game.terminal.sum() == 958  # the known number of finished games' positions


def test_minimax_value_of_the_empty_board_is_a_draw(game):
    values = minimax(game)
    assert values.V[0] == 0.0
    assert set(np.unique(values.V)) == {-1.0, 0.0, 1.0}
    assert values.best[0].sum() == 9  # every first move keeps the draw


def test_expectimax_against_random_wins_191_of_192(game):
    """The best response to the random player wins with probability 191/192 when a
    draw counts as a loss (the learner's view), by one backward pass."""
    opponent = TicTacToe(opponent="random").opponent_policy
    wins_only = TicTacToe.game(payoffs=(1.0, 0.0, 0.0))
    assert expectimax(wins_only, opponent).V[0] == pytest.approx(191 / 192, abs=1e-12)


def test_the_env_is_the_expectimax_mdp(game, random_env):
    """Value iteration on the env's MDP (the opponent folded into the dynamics) equals
    expectimax on the tree at every position where the agent moves."""
    mdp = TabularMDP.from_gymnasium(random_env)
    solved = value_iteration(mdp, gamma=1.0)
    exact = expectimax(game, random_env.opponent_policy)
    mine = game.maximiser & ~game.terminal
    np.testing.assert_allclose(solved.V[mine], exact.V[mine], atol=1e-12)


def test_random_players_outcome_is_exact(game, random_env):
    """The random X against the random O: policy evaluation of the uniform-over-legal
    policy with win, draw and loss indicator rewards gives the known 737, 160, 363 of
    1260."""
    mask = random_env.action_mask  # the free cells where the agent moves
    uniform = mask / mask.sum(axis=1, keepdims=True)
    outcome = [policy_evaluation(TicTacToe(opponent="random", rewards=r).to_mdp(),
                                 uniform, gamma=1.0, method="sync").V[0]
               for r in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))]
    np.testing.assert_allclose(outcome, RANDOM_PLAY, atol=1e-12)


def test_a_perfect_opponent_never_loses(game):
    env = TicTacToe(opponent="minimax")
    best = value_iteration(env.to_mdp(), gamma=1.0)
    assert best.V[0] == 0.0  # X's best against perfect O is a draw
    as_o = TicTacToe(opponent="minimax", player="O")
    start = as_o.to_mdp().start
    assert start @ value_iteration(as_o.to_mdp(), gamma=1.0).V == 0.0


def test_the_env_passes_the_checker_and_plays():
    env = gym.make("tabzoo/TicTacToe-v0")
    check_env(env.unwrapped)
    s, info = env.reset(seed=0)
    assert s == 0 and info["action_mask"].all()
    s, r, done, _, info = env.step(4)
    assert not done and not info["action_mask"][4] and info["action_mask"].sum() == 7
    s, r, done, _, _ = env.step(4)  # an occupied cell: an illegal move loses
    assert done and r == -1.0


def test_learning_player_beats_random_and_is_seeded(game, random_env):
    """Section 1.5's player: after training as X against the random O it wins more
    often, and loses less, than untrained (exactly evaluated, no tolerance needed);
    the same seed gives the same table; run i of runs=n is run i of runs=m."""
    opponent = random_env.opponent_policy
    res = afterstate_td(game, opponent, games=3000, alpha=0.1, epsilon=0.1, seed=0)
    wins = TicTacToe(opponent="random", rewards=(1.0, 0.0, 0.0)).to_mdp()
    losses = TicTacToe(opponent="random", rewards=(0.0, 0.0, 1.0)).to_mdp()
    untrained = afterstate_greedy(game, np.full(game.n_positions, 0.5))
    trained = afterstate_greedy(game, res.V)
    def value(mdp, policy):
        return policy_evaluation(mdp, policy, gamma=1.0, method="sync").V[0]

    win0, win = value(wins, untrained), value(wins, trained)
    loss0, loss = value(losses, untrained), value(losses, trained)
    assert win > win0 and loss < loss0
    assert win <= 191 / 192 + 1e-12  # never above the best response
    again = afterstate_td(game, opponent, games=3000, alpha=0.1, epsilon=0.1, seed=0)
    np.testing.assert_array_equal(res.V, again.V)
    three = afterstate_td(game, opponent, games=200, seed=5, runs=3)
    two = afterstate_td(game, opponent, games=200, seed=5, runs=2)
    np.testing.assert_array_equal(three.V[:2], two.V)
    assert set(np.unique(res.episode_returns)) <= {-1.0, 0.0, 1.0}


def test_fewer_games_are_the_first_games_of_a_longer_run(game, random_env):
    """The same seed draws the same stream, so ``games=g`` plays the first g games of
    any longer run (the experiment's learning curve relies on it)."""
    short = afterstate_td(game, random_env.opponent_policy, games=100, seed=3)
    long = afterstate_td(game, random_env.opponent_policy, games=300, seed=3)
    np.testing.assert_array_equal(short.episode_returns, long.episode_returns[:100])
    np.testing.assert_array_equal(short.episode_lengths, long.episode_lengths[:100])


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(opponent="clever"), ValueError, "opponent must be 'random', 'minimax' or"),
    (dict(player="Z"), ValueError, "player must be 'X' or 'O'"),
    (dict(rewards=(1.0, np.nan, 0.0)), ValueError, "rewards"),
    (dict(opponent=np.ones((3, 9))), ValueError, "opponent"),
])
def test_bad_env_options_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        TicTacToe(**kwargs)
