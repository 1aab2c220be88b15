"""Chapter 1's tic-tac-toe: exact minimax values over the game tree, and the book's
learning player against a random and a perfect opponent, its results computed exactly.

Everything comes from the library: the game tree (5,478 positions,
``tabular.envs.TicTacToe.game()``) valued by :func:`tabular.minimax` and by
:func:`tabular.expectimax` against the random player (the best response to it, which
wins 191/192 of the games); the learner of section 1.5, :func:`tabular.afterstate_td`
(a table of the probability of winning from each position after its own move, 0.5 at
first, 1 after a win and 0 after a loss or a draw; greedy moves but for an exploratory
one with probability epsilon; after each greedy move the previous afterstate's value
backs up toward the new one, ``V(S_t) <- V(S_t) + alpha [V(S_{t+1}) - V(S_t)]``). A
player is a policy of the game's env, ``TicTacToe(opponent)``, whose MDP folds the
opponent into the dynamics; its outcome probabilities are exact by policy evaluation
with win, draw and loss indicator rewards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular import afterstate_greedy, afterstate_td, expectimax, minimax, policy_evaluation
from tabular.envs import TicTacToe
from tabular.experiments.harness import style
from tabular.experiments.harness.checks import Measure, below, check, fact, within
from tabular.experiments.harness.settings import Settings

#: Positions reachable from the empty board with X to move first, the games' ends
#: included (the known count).
REACHABLE = 5478
#: The outcome of two random players, exactly (X wins 737/1260 of games, O wins
#: 363/1260, a draw 160/1260).
RANDOM_PLAY = (737 / 1260, 160 / 1260, 363 / 1260)
#: Indicator rewards (win, draw, loss): the value of each is a probability.
INDICATORS = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))

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
    """Seed of the learner's random stream (``afterstate_td``'s ``seed``)."""

    QUICK = {"games": 5_000, "evaluations": 20}


class Outcomes:
    """Exact ``[P(X wins), P(draw), P(O wins)]`` of an X policy against each opponent:
    policy evaluation on ``TicTacToe(opponent)``'s MDP with indicator rewards (the MDPs
    built once)."""

    def __init__(self) -> None:
        self.mdps = {opponent: [TicTacToe(opponent, rewards=r).to_mdp() for r in INDICATORS]
                     for opponent in ("random", "minimax")}

    def __call__(self, policy: np.ndarray, opponent: str) -> np.ndarray:
        return np.array([policy_evaluation(mdp, policy, gamma=1.0, method="sync").V[0]
                         for mdp in self.mdps[opponent]])


def chosen_policy(chosen: np.ndarray, env: TicTacToe) -> np.ndarray:
    """The policy that splits evenly over ``chosen`` (bool ``[S, 9]``) where X moves and
    over the free cells of the env's other rows (never reached)."""
    rows = np.where(chosen.any(axis=1, keepdims=True), chosen, env.action_mask)
    return rows / rows.sum(axis=1, keepdims=True)


def run(config: Config, executor) -> dict:
    game = TicTacToe.game()
    env = TicTacToe("random")
    outcome = Outcomes()
    perfect = chosen_policy(minimax(game).best & game.maximiser[:, None], env)
    random_x = chosen_policy(np.zeros_like(env.action_mask), env)
    # the best response to random when a draw counts as a loss, the learner's view
    best = expectimax(TicTacToe.game(payoffs=INDICATORS[0]), env.opponent_policy)
    checkpoints = sorted({round(g) for g in np.linspace(0, config.games, config.evaluations)})
    untrained = np.where(game.terminal, (game.payoff > 0).astype(float), 0.5)

    def trained(games: int) -> np.ndarray:
        # the same seed draws the same stream: g games are the first g of any longer run
        if games == 0:
            return untrained
        return afterstate_td(game, env.opponent_policy, games=games, alpha=config.alpha,
                             epsilon=config.epsilon, seed=config.seed).V

    curve = [outcome(afterstate_greedy(game, trained(g)), "random") for g in checkpoints]
    learner = afterstate_greedy(game, trained(config.games))
    return {
        "positions": np.array(game.n_positions),
        "empty_value": np.array(minimax(game).V[0]),
        "games": np.array(checkpoints),
        "learning_curve": np.array(curve),  # [checkpoint, (win, draw, loss)] against random
        # [X player, O player] pairs: (win, draw, loss) from X's side
        "random_random": outcome(random_x, "random"),
        "perfect_random": outcome(perfect, "random"),
        "random_perfect": outcome(random_x, "minimax"),
        "perfect_perfect": outcome(perfect, "minimax"),
        "learner_perfect": outcome(learner, "minimax"),
        "best_response_win": np.array(best.V[0]),  # X's best P(win) against random, DP
        # the greedy player on those values against random: its P(win) must be the DP's
        "best_response_random": outcome(chosen_policy(best.best, env), "random"),
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
    (seed 0: 0.987 after 20,000 games, losing 0.005)."""
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
