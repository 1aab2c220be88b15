"""Bad input to DPO's loss options, the preference model, its Nash equilibrium and the
losses' optima: each a clear error naming the parameter, in the catalogue's row format
``(name, call, exception, message fragment)``."""

import numpy as np
from conftest import clear_error_test

from tabular.envs import TokenMDP
from tabular.model.policy import SoftmaxPolicy
from tabular.rlhf import (
    bradley_terry_preference,
    dpo,
    iterated_dpo,
    loss_optimum,
    nash_equilibrium,
    nash_md,
    preference_gap,
    preference_table,
    sampled_nash_md,
)

TOKENS = TokenMDP(("Say hello.",), {"hello": 1.0}, max_len=2)
POLICY = SoftmaxPolicy.tabular(TOKENS.to_mdp().n_states, TOKENS.to_mdp().n_actions)
PAIR = [("Say hello.", "hello", "Say")]
MOVES = ["rock", "paper", "scissors"]
GAME = TokenMDP(("Play.",), {"rock": 1.0}, max_len=2, grammar=MOVES)
GAME_POLICY = np.where(GAME.legal, 1.0, 0.0) + (~GAME.legal.any(axis=1))[:, None]
GAME_POLICY /= GAME_POLICY.sum(axis=1, keepdims=True)
RPS = [[0.5, 0.0, 1.0], [1.0, 0.5, 0.0], [0.0, 1.0, 0.5]]
UNANIMOUS = [[0.5, 1.0, 1.0], [0.0, 0.5, 1.0], [0.0, 0.0, 0.5]]  # DPO's optimum: at infinity


def _dpo(**options):
    return lambda: dpo(TOKENS, POLICY, PAIR, beta=0.5, steps=2, **options)


def _game():
    return preference_table(GAME, {"Play.": (MOVES, RPS)})


ROWS = [
    ("dpo loss unknown", _dpo(loss="aot_pair"), ValueError, "loss must be one of"),
    ("dpo loss empty", _dpo(loss=()), ValueError, "loss must be one of"),
    ("dpo loss not a string", _dpo(loss=3), ValueError, "loss must be one of"),
    ("dpo loss twice", _dpo(loss=("ipo", "ipo")), ValueError, "names a loss twice"),
    ("dpo loss_weights length", _dpo(loss=("sigmoid", "sft"), loss_weights=(1.0,)),
     ValueError, "loss_weights must give one weight per loss"),
    ("dpo loss_weights negative", _dpo(loss=("sigmoid", "sft"), loss_weights=(1.0, -1.0)),
     ValueError, "loss_weights[1] must be a finite number >= 0"),
    ("dpo loss_weights NaN", _dpo(loss_weights=[float("nan")]), ValueError,
     "loss_weights[0] must be a finite number >= 0"),
    ("dpo loss_weights bool", _dpo(loss_weights=[True]), ValueError,
     "loss_weights[0] must be a number"),
    ("dpo loss_weights all zero", _dpo(loss=("sigmoid", "sft"), loss_weights=(0, 0.0)),
     ValueError, "loss_weights must not all be 0"),
    ("dpo loss_weights a string", _dpo(loss_weights="1"), ValueError,
     "loss_weights must give one weight per loss"),
    ("dpo label_smoothing 0.5", _dpo(label_smoothing=0.5), ValueError,
     "label_smoothing must be in [0, 0.5)"),
    ("dpo label_smoothing negative", _dpo(label_smoothing=-0.1), ValueError,
     "label_smoothing must be in [0, 0.5)"),
    ("dpo label_smoothing string", _dpo(label_smoothing="0.1"), ValueError,
     "label_smoothing must be a number"),
    ("dpo f_divergence_type unknown", _dpo(f_divergence_type="kl"), ValueError,
     "f_divergence_type must be one of"),
    ("dpo f_alpha_divergence_coef 1", _dpo(f_divergence_type="alpha_divergence",
                                           f_alpha_divergence_coef=1.0), ValueError,
     "f_alpha_divergence_coef must be in (0, 1)"),
    ("dpo f_alpha_divergence_coef complex", _dpo(f_alpha_divergence_coef=0.5j), ValueError,
     "f_alpha_divergence_coef must be a number"),
    ("dpo discopop_tau 0", _dpo(loss="discopop", discopop_tau=0.0), ValueError,
     "discopop_tau must be a finite number > 0"),
    ("dpo ld_alpha 2", _dpo(ld_alpha=2.0), ValueError, "ld_alpha must be in [0, 1]"),
    ("dpo ld_alpha NaN", _dpo(ld_alpha=float("nan")), ValueError, "ld_alpha must be in [0, 1]"),
    ("dpo average_log_prob string", _dpo(average_log_prob="yes"), ValueError,
     "average_log_prob must be True or False"),
    ("dpo simpo_gamma negative", _dpo(loss="simpo", simpo_gamma=-1.0), ValueError,
     "simpo_gamma must be a finite number >= 0"),
    ("dpo cpo_alpha inf", _dpo(loss="cpo", cpo_alpha=float("inf")), ValueError,
     "cpo_alpha must be a finite number >= 0"),
    ("dpo sigmoid_norm averaged twice", _dpo(loss="sigmoid_norm", average_log_prob=True),
     ValueError, "already divides by the token counts"),
    ("dpo ipo in a mixture beta 1e-300", lambda: dpo(TOKENS, POLICY, PAIR, beta=1e-300,
                                                   loss=("sigmoid", "ipo")),
     ValueError, "beta must be at least"),
    ("dpo discopop diverging", lambda: dpo(TOKENS, POLICY, PAIR, beta=0.5, loss="discopop",
                                           alpha=1e4, steps=50),
     FloatingPointError, "the discopop loss diverged"),
    ("dpo bounded loss with overflowing logits", lambda: dpo(
        TOKENS, POLICY, PAIR, beta=0.5, loss="apo_down", f_divergence_type="forward_kl",
        alpha=1e4, steps=300), FloatingPointError, "the apo_down loss diverged"),
    ("bradley_terry_preference reward shape", lambda: bradley_terry_preference(
        GAME, GAME_POLICY, reward=np.zeros(3)), ValueError, "reward must be a finite"),
    ("bradley_terry_preference reward NaN", lambda: bradley_terry_preference(
        GAME, GAME_POLICY, reward=np.full(GAME_POLICY.shape, np.nan)), ValueError,
     "reward must be a finite"),
    ("bradley_terry_preference on a TabularMDP", lambda: bradley_terry_preference(
        GAME.to_mdp(), GAME_POLICY), TypeError, "mdp must be a token MDP"),
    ("preference_table missing prompt", lambda: preference_table(GAME, {}), ValueError,
     "table must give every prompt"),
    ("preference_table not antisymmetric", lambda: preference_table(
        GAME, {"Play.": (MOVES, np.full((3, 3), 0.6))}), ValueError, "P + P^T = 1"),
    ("preference_table wrong shape", lambda: preference_table(
        GAME, {"Play.": (MOVES, np.full((2, 2), 0.5))}), ValueError, "3 x 3 matrix"),
    ("preference_table probability above 1", lambda: preference_table(
        GAME, {"Play.": (MOVES[:2], [[0.5, 1.5], [-0.5, 0.5]])}), ValueError,
     "matrix of probabilities"),
    ("preference_table repeated response", lambda: preference_table(
        GAME, {"Play.": (["rock", "rock"], [[0.5, 0.5], [0.5, 0.5]])}), ValueError,
     "distinct responses"),
    ("preference_table responses a string", lambda: preference_table(
        GAME, {"Play.": ("rock", [[0.5]])}), ValueError, "distinct responses"),
    ("preference_table unknown token", lambda: preference_table(
        GAME, {"Play.": (["lizard"], [[0.5]])}), ValueError, "not in the vocabulary"),
    ("nash_equilibrium beta 0", lambda: nash_equilibrium(GAME, GAME_POLICY, _game(),
                                                         beta=0.0),
     ValueError, "beta must be a finite number > 0"),
    ("nash_equilibrium tol NaN", lambda: nash_equilibrium(GAME, GAME_POLICY, _game(),
                                                          beta=0.1, tol=float("nan")),
     ValueError, "tol must be a finite number > 0"),
    ("nash_equilibrium max_iter 0", lambda: nash_equilibrium(
        GAME, GAME_POLICY, _game(), beta=0.1, max_iter=0), ValueError,
     "max_iter must be an integer >= 1"),
    ("nash_equilibrium unreachable tol", lambda: nash_equilibrium(
        GAME, _skewed(), _game(), beta=0.1, tol=1e-300, max_iter=3), RuntimeError,
     "raise max_iter or tol"),
    ("nash_equilibrium reference misses a move", lambda: nash_equilibrium(
        GAME, _skewed([0.5, 0.5, 0.0]), _game(), beta=0.1), ValueError,
     "probability 0"),
    ("nash_equilibrium reference off the table", lambda: nash_equilibrium(
        GAME, GAME_POLICY, preference_table(GAME, {"Play.": (MOVES[:2], [[0.5, 1.0],
                                                                          [0.0, 0.5]])}),
        beta=0.1), ValueError, "does not compare"),
    ("preference_gap beta negative", lambda: preference_gap(
        GAME, GAME_POLICY, GAME_POLICY, _game(), beta=-1.0), ValueError,
     "beta must be a finite number >= 0"),
    ("nash_md iterations 0", lambda: nash_md(GAME, GAME_POLICY, _game(), beta=0.5,
                                             iterations=0),
     ValueError, "iterations must be an integer >= 1"),
    ("nash_md alpha NaN", lambda: nash_md(GAME, GAME_POLICY, _game(), beta=0.5,
                                          alpha=float("nan")),
     ValueError, "alpha must be a finite number > 0"),
    ("nash_md reference misses a move", lambda: nash_md(GAME, _skewed([0.5, 0.5, 0.0]),
                                                        _game(), beta=0.5),
     ValueError, "probability 0"),
    ("iterated_dpo xpo_alpha negative", lambda: iterated_dpo(GAME, GAME_POLICY, beta=0.5,
                                                             xpo_alpha=-1.0),
     ValueError, "xpo_alpha must be a finite number >= 0"),
    ("iterated_dpo xpo_alpha string", lambda: iterated_dpo(GAME, GAME_POLICY, beta=0.5,
                                                           xpo_alpha="0.1"),
     ValueError, "xpo_alpha must be a number"),
    ("iterated_dpo judge not a model", lambda: iterated_dpo(GAME, GAME_POLICY, beta=0.5,
                                                            judge=RPS),
     TypeError, "judge must be a tabular.rlhf.PreferenceModel"),
    ("iterated_dpo judge misses a response", lambda: iterated_dpo(
        GAME, GAME_POLICY, beta=0.5, judge=preference_table(
            GAME, {"Play.": (MOVES[:2], [[0.5, 1.0], [0.0, 0.5]])})),
     ValueError, "judge does not compare the response"),
    ("sampled_nash_md mixture_coef above 1", lambda: sampled_nash_md(
        GAME, GAME_POLICY, mixture_coef=1.5), ValueError, "mixture_coef must be in [0, 1]"),
    ("sampled_nash_md mixture_coef NaN", lambda: sampled_nash_md(
        GAME, GAME_POLICY, mixture_coef=float("nan")), ValueError,
     "mixture_coef must be a finite number"),
    ("sampled_nash_md mixture_coef bool", lambda: sampled_nash_md(
        GAME, GAME_POLICY, mixture_coef=True), ValueError, "mixture_coef must be a number"),
    ("sampled_nash_md beta 0", lambda: sampled_nash_md(GAME, GAME_POLICY, beta=0.0),
     ValueError, "beta must be a finite number > 0"),
    ("sampled_nash_md pairs 0", lambda: sampled_nash_md(GAME, GAME_POLICY, pairs=0),
     ValueError, "pairs must be an integer >= 1"),
    ("sampled_nash_md iterations float", lambda: sampled_nash_md(GAME, GAME_POLICY,
                                                                 iterations=2.5),
     ValueError, "iterations must be an integer"),
    ("sampled_nash_md alpha inf", lambda: sampled_nash_md(GAME, GAME_POLICY,
                                                          alpha=float("inf")),
     ValueError, "alpha must be a finite number"),
    ("sampled_nash_md judge not a model", lambda: sampled_nash_md(GAME, GAME_POLICY,
                                                                  judge=RPS),
     TypeError, "judge must be a tabular.rlhf.PreferenceModel"),
    ("sampled_nash_md judge misses a response", lambda: sampled_nash_md(
        GAME, GAME_POLICY, judge=preference_table(
            GAME, {"Play.": (MOVES[:2], [[0.5, 1.0], [0.0, 0.5]])})),
     ValueError, "judge does not compare the response"),
    ("sampled_nash_md eval_every without history", lambda: sampled_nash_md(
        GAME, GAME_POLICY, eval_every=2), ValueError, "eval_every"),
    ("loss_optimum hinge", lambda: loss_optimum(GAME, GAME_POLICY, _game(), beta=0.5,
                                                loss="hinge"),
     ValueError, "has a set of optima"),
    ("loss_optimum aot", lambda: loss_optimum(GAME, GAME_POLICY, _game(), beta=0.5,
                                              loss=("sigmoid", "aot_unpaired")),
     ValueError, "no per-comparison population loss"),
    ("loss_optimum unknown loss", lambda: loss_optimum(GAME, GAME_POLICY, _game(), beta=0.5,
                                                       loss="kto"),
     ValueError, "loss must be one of"),
    ("loss_optimum tol 0", lambda: loss_optimum(GAME, GAME_POLICY, _game(), beta=0.5,
                                                tol=0.0),
     ValueError, "tol must be a finite number > 0"),
    ("loss_optimum data misses a move", lambda: loss_optimum(
        GAME, GAME_POLICY, _game(), beta=0.5, data_policy=_skewed([1.0, 0.0, 0.0])),
     ValueError, "data_policy gives response"),
    ("loss_optimum unanimous preference", lambda: loss_optimum(
        GAME, GAME_POLICY, preference_table(GAME, {"Play.": (MOVES, UNANIMOUS)}), beta=0.5,
        max_iter=20), RuntimeError, "found no stationary point"),
]


def _skewed(probs=(0.6, 0.3, 0.1)):
    ref = GAME_POLICY.copy()
    root = GAME.state_of("Play.")
    ref[root] = 0.0
    ref[root, [GAME.token_id[m] for m in MOVES]] = probs
    return ref


test_bad_dpo_input_is_a_clear_error = clear_error_test(ROWS)
