"""The bad-input catalogue: every public entry point, given what a user gets wrong, raises
a clear error that names the parameter (and the state, action or cell) at the boundary,
never a NaN, a hang, a traceback from deep inside, or a silent coercion.

Each row is ``(call, exception type, fragment of the message)``; the learners' shared
arguments are crossed with every learner. A new public function adds its rows here.
"""

from __future__ import annotations

import ast
import inspect
import math
from pathlib import Path

import gymnasium as gym
import matplotlib.pyplot as plt
import numpy as np
import pytest
from conftest import clear_error_test, option_rows, own_q_learning, own_q_learning_target
from rows_linear import bad_rows as linear_rows

import tabular
import tabular.linear
from tabular import (
    BanditTestbed,
    MDPError,
    SoftmaxPolicy,
    TabularMDP,
    envs,
    plot,
    rlhf,
    schedules,
    testing,
)
from tabular.envs import CarRental, GridWorld, Racetrack, TokenMDP
from tabular.envs.mazes import changing_maze
from tabular.experiments.harness import cli, registry
from tabular.rlhf import best_of_n, bradley_terry_loss, distill, response_distribution
from tabular.rlhf.process import fit_process_reward_model, process_rewards

NAN, INF = math.nan, math.inf
C128, NP_TRUE = np.complex128(0.5), np.bool_(True)  # NumPy's complex and bool scalars

# Small valid objects that the bad calls are made around.
CHAIN = TabularMDP.from_dense(np.array([[[0.0, 1.0]], [[0.0, 1.0]]]), np.array([-1.0, 0.0]),
                              terminal=np.array([False, True]), start=np.array([1.0, 0.0]))
TRAP = TabularMDP(np.array([[[1]], [[1]]]), np.ones((2, 1, 1)), np.array([[[-INF]], [[0.0]]]),
                  np.ones((2, 1, 1), dtype=bool), np.array([1.0, 0.0]))
UNIFORM = np.full((2, 1), 1.0)
FROZEN = TabularMDP.from_gymnasium(gym.make("FrozenLake-v1"))
TOKENS = TokenMDP(("Say hello.",), {"hello": 1.0}, max_len=2)
TOKEN_POLICY = SoftmaxPolicy.tabular(TOKENS.to_mdp().n_states, TOKENS.to_mdp().n_actions)


def labelled(method, desirable=True, **options):
    """A call of ``method`` (:func:`tabular.kto` or :func:`tabular.kto_optimum`) on
    ``TOKENS`` with one labelled response, "hello" to "Say hello.", desirable or not."""
    return lambda: method(TOKENS, TOKEN_POLICY, [("Say hello.", "hello", desirable)],
                          **options)


LM = tabular.NGramLM.create([t for t in TOKENS.vocab if t != TOKENS.eos], 2)


def table(P):
    return lambda: TabularMDP.from_transitions(P)


def dense(P, R=None, **kwargs):
    R = np.zeros(2) if R is None else R
    return lambda: TabularMDP.from_dense(P, R, **kwargs)


P_OK = np.array([[[0.0, 1.0]], [[0.0, 1.0]]])
MODEL_ROWS = [
    # model constructors: type, range and finiteness, with the place named
    ("from_transitions 0.7 next state", table({0: {0: [(1.0, 0.7, 0.0, False)]}}), MDPError,
     "next_state 0.7"),
    ("from_transitions reward None", table({0: {0: [(1.0, 0, None, False)]}}), MDPError,
     "reward None"),
    ("from_transitions text flag", table({0: {0: [(1.0, 0, 0.0, "False")]}}), MDPError,
     "terminated 'False'"),
    ("from_transitions NaN prob", table({0: {0: [(NAN, 0, 0.0, False)]}}), MDPError,
     "prob nan"),
    ("from_transitions short entry", table({0: {0: [(1.0, 0)]}}), MDPError,
     "is not (prob, next_state, reward, terminated)"),
    ("from_transitions empty", table({}), MDPError, "no states"),
    ("from_transitions no outcomes", table({0: {0: []}}), MDPError, "lists no outcomes"),
    ("from_transitions ragged", table({0: {0: [(1.0, 0, 0.0, True)]}, 1: {}}), MDPError,
     "P[1] has 0 actions"),
    ("from_transitions sum", table({0: {0: [(0.5, 0, 0.0, True)]}}), MDPError, "sum to 0.5"),
    ("from_transitions next out of range", table({0: {0: [(1.0, 3, 0.0, True)]}}), MDPError,
     "outside [0, 1)"),
    ("from_transitions +inf reward", table({0: {0: [(1.0, 0, INF, True)]}}), MDPError,
     "reward inf"),
    ("from_transitions huge reward", table({0: {0: [(1.0, 0, 1e308, True)]}}), MDPError,
     "at most 1e+100"),
    ("from_dense NaN", dense(np.where(P_OK > 0, NAN, 0.0)), MDPError, "state 0, action 0"),
    ("from_dense negative", dense(P_OK - 0.5), MDPError, "-0.5 is not a probability"),
    ("from_dense NaN reward", dense(P_OK, np.array([NAN, 0.0])), MDPError, "R holds NaN"),
    ("from_dense text terminal", dense(P_OK, terminal=["False", "True"]), MDPError,
     "terminal must hold numbers"),
    ("from_dense fractional terminal", dense(P_OK, terminal=[0.5, 0.0]), MDPError,
     "is not a flag"),
    ("from_dense bad layout", dense(P_OK, layout="XYZ"), MDPError, "layout must be"),
    ("from_dense bad R shape", dense(P_OK, np.zeros(3)), MDPError, "R has shape"),
    ("TabularMDP fractional next", lambda: TabularMDP(
        np.full((1, 1, 1), 0.7), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.zeros((1, 1, 1)),
        [1.0]), MDPError, "next_state[0, 0, 0] = 0.7"),
    ("TabularMDP NaN start", lambda: TabularMDP(
        np.zeros((1, 1, 1)), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1, 1)),
        [NAN]), MDPError, "start must be a probability distribution"),
    ("TabularMDP text reward", lambda: TabularMDP(
        np.zeros((1, 1, 1)), np.ones((1, 1, 1)), np.array([[["1"]]]), np.ones((1, 1, 1)),
        [1.0]), MDPError, "reward must hold numbers"),
    ("TabularMDP empty", lambda: TabularMDP(
        np.zeros((0, 1, 1)), np.ones((0, 1, 1)), np.zeros((0, 1, 1)), np.ones((0, 1, 1)),
        np.zeros(0)), MDPError, "at least one state"),
    ("TabularMDP reward_sd negative", lambda: TabularMDP(
        np.zeros((1, 1, 1)), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1, 1)),
        [1.0], reward_sd=[[[-1.0]]]), MDPError,
     "reward_sd[0, 0, 0] = -1.0 of outcome 0 at state 0, action 0 must be in [0, 1e+100]"),
    ("TabularMDP reward_sd NaN", lambda: TabularMDP(
        np.zeros((1, 1, 1)), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1, 1)),
        [1.0], reward_sd=[[[NAN]]]), MDPError, "reward_sd[0, 0, 0] = nan"),
    ("TabularMDP reward_sd inf", lambda: TabularMDP(
        np.zeros((1, 1, 1)), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1, 1)),
        [1.0], reward_sd=[[[INF]]]), MDPError, "reward_sd[0, 0, 0] = inf"),
    ("TabularMDP reward_sd shape", lambda: TabularMDP(
        np.zeros((1, 1, 1)), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1, 1)),
        [1.0], reward_sd=np.ones(2)), MDPError, "reward_sd has shape (2,), the outcomes have"),
    ("TabularMDP reward_sd text", lambda: TabularMDP(
        np.zeros((1, 1, 1)), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1, 1)),
        [1.0], reward_sd=[[["1"]]]), MDPError, "reward_sd must hold numbers"),
    ("from_arrays reward_sd shape", lambda: TabularMDP.from_arrays(
        np.zeros((1, 1, 1)), None, np.zeros(0), np.zeros((1, 1, 1)), reward_sd=np.ones(3)),
     MDPError, "reward_sd has shape (3,)"),
    ("from_arrays successor out of range", lambda: TabularMDP.from_arrays(
        np.full((1, 1, 1), 1), None, np.zeros(0), np.zeros((1, 1, 1))), MDPError,
     "successor 1 of outcome 0 at state 0, action 0 is outside [-1, 1)"),
    ("from_arrays code past the tables", lambda: TabularMDP.from_arrays(
        np.zeros((1, 1, 1)), np.full((1, 1, 1), 2), np.ones(2), np.zeros(2)), MDPError,
     "code[0, 0, 0] = 2 is not a row"),
    ("from_arrays NaN reward in a table", lambda: TabularMDP.from_arrays(
        np.zeros((1, 1, 1)), np.zeros((1, 1, 1), int), np.ones(1), np.array([NAN])), MDPError,
     "reward nan of outcome 0 at state 0, action 0"),
    ("from_arrays probabilities off 1", lambda: TabularMDP.from_arrays(
        np.zeros((1, 1, 2)), np.array([[[0, 0]]]), np.array([0.3]), np.zeros(1)), MDPError,
     "sum to 0.6"),
    ("from_arrays table shapes", lambda: TabularMDP.from_arrays(
        np.zeros((1, 1, 2)), None, np.ones(3), np.zeros(3)), MDPError,
     "must have shape (1, 1, 2)"),
    ("from_gymnasium no table", lambda: TabularMDP.from_gymnasium(
        gym.make("CartPole-v1")), TypeError, "no transition table"),
    ("from_gymnasium fickle taxi", lambda: TabularMDP.from_gymnasium(
        gym.make("Taxi-v4", fickle_passenger=True)), MDPError,
     "fickle_passenger"),
    ("from_gymnasium bad start", lambda: TabularMDP.from_gymnasium(
        gym.make("tabzoo/CliffWalking-v0"), start=np.zeros(48)), MDPError,
     "start must be a probability distribution"),
]

DP_ROWS = [
    ("value_iteration gamma NaN", lambda: tabular.value_iteration(CHAIN, NAN), ValueError,
     "gamma must be in [0, 1]"),
    ("value_iteration gamma text", lambda: tabular.value_iteration(CHAIN, "0.9"), ValueError,
     "gamma must be a number"),
    ("value_iteration method", lambda: tabular.value_iteration(CHAIN, 0.9, method="jacobi"),
     ValueError, "method"),
    ("value_iteration gauss-seidel", lambda: tabular.value_iteration(
        CHAIN, 0.9, method="gauss-seidel"), ValueError, "Gauss-Seidel is 'inplace'"),
    ("value_iteration tol", lambda: tabular.value_iteration(CHAIN, 0.9, tol=-1.0), ValueError,
     "tol"),
    ("value_iteration max_iter", lambda: tabular.value_iteration(CHAIN, 0.9, max_iter=0),
     ValueError, "max_iter"),
    ("value_iteration V0 shape", lambda: tabular.value_iteration(CHAIN, 0.9, V0=np.zeros(3)),
     ValueError, "V0"),
    ("value_iteration not an MDP", lambda: tabular.value_iteration("mdp", 0.9), TypeError,
     "mdp"),
    ("policy_evaluation policy shape", lambda: tabular.policy_evaluation(
        CHAIN, np.ones((3, 1)), 0.9), ValueError, "policy"),
    ("policy_evaluation NaN policy", lambda: tabular.policy_evaluation(
        CHAIN, np.full((2, 1), NAN), 0.9), ValueError, "policy"),
    ("policy_evaluation action out of range", lambda: tabular.policy_evaluation(
        CHAIN, np.array([0, 5]), 0.9), ValueError, "policy"),
    ("policy_evaluation method", lambda: tabular.policy_evaluation(
        CHAIN, UNIFORM, 0.9, method="fast"), ValueError, "method"),
    ("policy_iteration gamma", lambda: tabular.policy_iteration(CHAIN, 1.5), ValueError,
     "gamma must be in [0, 1]"),
    ("soft_value_iteration beta 0", lambda: tabular.soft_value_iteration(CHAIN, 0.9, 0.0),
     ValueError, "beta"),
    ("soft_value_iteration beta NaN", lambda: tabular.soft_value_iteration(CHAIN, 0.9, NAN),
     ValueError, "beta"),
    ("soft_value_iteration ref shape", lambda: tabular.soft_value_iteration(
        CHAIN, 0.9, 1.0, ref_policy=np.ones((5, 1))), ValueError, "ref_policy"),
    ("bellman_optimality V shape", lambda: tabular.bellman_optimality(CHAIN, np.zeros(5), 0.9),
     ValueError, "V"),
    ("bellman_optimality V NaN", lambda: tabular.bellman_optimality(
        CHAIN, np.array([NAN, 0.0]), 0.9), ValueError, "V"),
    ("soft_policy beta", lambda: tabular.soft_policy(np.zeros((2, 1)), -1.0), ValueError,
     "beta"),
    ("soft_bellman_optimality beta", lambda: tabular.soft_bellman_optimality(
        CHAIN, np.zeros(2), 0.9, NAN), ValueError, "beta"),
    ("bellman_expectation policy", lambda: tabular.bellman_expectation(
        CHAIN, np.zeros(2), np.ones((2, 3)), 0.9), ValueError, "policy"),
    ("q_from_v gamma", lambda: tabular.q_from_v(CHAIN, np.zeros(2), 2.0), ValueError,
     "gamma must be in [0, 1]"),
    ("greedy_policy NaN Q", lambda: tabular.greedy_policy(np.array([[NAN, 0.0]])), ValueError,
     "Q"),
    ("optimal_actions 1-d Q", lambda: tabular.optimal_actions(np.zeros(3)), ValueError, "Q"),
    ("terminating_greedy_policy Q shape", lambda: tabular.terminating_greedy_policy(
        CHAIN, np.zeros((5, 1))), ValueError, "Q"),
]

# The arguments every learner shares, each wrong in one way.
SHARED_BAD = [
    ({"gamma": -0.1}, "gamma must be in [0, 1]"),
    ({"gamma": NAN}, "gamma must be in [0, 1]"),
    ({"seed": -1}, "seed must be None or an int >= 0"),
    ({"seed": 1.5}, "seed must be None or an int >= 0"),
    ({"runs": 0}, "runs"),
    ({"runs": 2.5}, "runs"),
    ({"max_steps": 0}, "max_steps must be an integer >= 1"),
    ({"max_steps": 10**11}, "max_steps must be at most 100,000,000"),
    ({"max_steps": INF}, "max_steps must be an integer >= 1"),
    ({"alpha": NAN}, "alpha"),
    ({"alpha": 0.0}, "alpha"),
    ({"alpha": "0.1"}, "alpha"),
    ({"alpha": schedules.constant(-1.0)}, "alpha"),
    ({"gamma": C128}, "gamma must be a number"),
    ({"gamma": NP_TRUE}, "gamma must be a number"),
    ({"alpha": C128}, "alpha"),
]
EPISODES_BAD = [({"episodes": 0}, "episodes must be an integer >= 1"),
                ({"episodes": None}, "episodes must be an integer >= 1"),
                ({"alpha": 1.5}, "alpha")]
PREDICTION_BAD = EPISODES_BAD + [
    ({"initial_V": NAN}, "initial_V must be finite"),
    ({"initial_V": np.zeros(3)}, "initial_V must be a number or an array"),
    ({"policy": np.full((2, 1), NAN)}, "policy")]
CONTROL_BAD = EPISODES_BAD + [
    ({"epsilon": 1.5}, "epsilon"), ({"epsilon": NAN}, "epsilon"),
    ({"initial_Q": NAN}, "initial_Q must be finite"),
    ({"initial_Q": np.zeros((3, 3))}, "initial_Q must be a number or an array")]
MASK_BAD = [({"action_mask": np.ones((3, 1), dtype=bool)}, "action_mask must have shape (2, 1)"),
            ({"action_mask": np.full((2, 1), NAN)}, "action_mask must be bool (or 0/1)"),
            ({"action_mask": np.array([[True], [False]])},
             "action_mask leaves state 1 no available action")]
PG_BAD = [({"beta": -1.0}, "beta must be a finite number >= 0"),
          ({"beta": NAN}, "beta must be a finite number >= 0"),
          ({"beta": 0.5}, "beta > 0 needs a ref_policy"),
          ({"alpha_value": 1.5}, "alpha_value"),
          ({"reward_floor": NAN}, "reward_floor"),
          ({"reward_floor": -1e300}, "reward_floor must be a number of magnitude at most"),
          ({"ref_policy": np.ones((5, 1)), "beta": 0.1}, "ref_policy")]


LEARNERS = {
    "td0": lambda policy=UNIFORM, **kw: tabular.td0(CHAIN, policy, **kw),
    "td_control": lambda **kw: own_q_learning(CHAIN, **kw),
    "mc_prediction": lambda policy=UNIFORM, **kw: tabular.mc_prediction(CHAIN, policy, **kw),
    "sarsa": lambda **kw: tabular.sarsa(CHAIN, **kw),
    "expected_sarsa": lambda **kw: tabular.expected_sarsa(CHAIN, **kw),
    "q_learning": lambda **kw: tabular.q_learning(CHAIN, **kw),
    "double_q_learning": lambda **kw: tabular.double_q_learning(CHAIN, **kw),
    "mc_control": lambda **kw: tabular.mc_control(CHAIN, **kw),
    "n_step_sarsa": lambda **kw: tabular.n_step_sarsa(CHAIN, **kw),
    "n_step_expected_sarsa": lambda **kw: tabular.n_step_expected_sarsa(CHAIN, **kw),
    "off_policy_n_step_sarsa": lambda **kw: tabular.off_policy_n_step_sarsa(CHAIN, **kw),
    "tree_backup": lambda **kw: tabular.tree_backup(CHAIN, **kw),
    "q_sigma": lambda **kw: tabular.q_sigma(CHAIN, **kw),
    "dyna_q": lambda **kw: tabular.dyna_q(CHAIN, **kw),
    "dyna_q_plus": lambda **kw: tabular.dyna_q_plus(CHAIN, **kw),
    "prioritized_sweeping": lambda **kw: tabular.prioritized_sweeping(CHAIN, **kw),
    "reinforce": lambda **kw: tabular.reinforce(CHAIN, **kw),
    "actor_critic": lambda **kw: tabular.actor_critic(CHAIN, **kw),
    "ppo": lambda **kw: tabular.ppo(CHAIN, **kw),
    "trpo": lambda **kw: tabular.trpo(CHAIN, **kw),
    "grpo": lambda **kw: tabular.grpo(CHAIN, **kw),
    "offline_lambda_return": lambda policy=UNIFORM, **kw: tabular.offline_lambda_return(
        CHAIN, policy, **kw),
    "td_lambda": lambda policy=UNIFORM, **kw: tabular.td_lambda(CHAIN, policy, **kw),
    "true_online_td_lambda": lambda policy=UNIFORM, **kw: tabular.true_online_td_lambda(
        CHAIN, policy, **kw),
    "sarsa_lambda": lambda **kw: tabular.sarsa_lambda(CHAIN, **kw),
    "true_online_sarsa_lambda": lambda **kw: tabular.true_online_sarsa_lambda(CHAIN, **kw),
    "watkins_q_lambda": lambda **kw: tabular.watkins_q_lambda(CHAIN, **kw),
    "off_policy_mc_prediction": lambda policy=UNIFORM, **kw: tabular.off_policy_mc_prediction(
        CHAIN, policy, UNIFORM, **kw),
}
PREDICTION = {"td0", "mc_prediction", "offline_lambda_return", "td_lambda",
              "true_online_td_lambda", "off_policy_mc_prediction"}
NO_ALPHA = {"off_policy_mc_prediction",  # sample averages (eqs. 5.5, 5.6): no step size
            "trpo"}  # the trust region sizes the policy's step
PG = {"reinforce", "actor_critic", "ppo", "trpo", "grpo"}
NO_GAMMA = {"grpo"}  # a whole-response return: no discount, no value estimate
MASKED = {"sarsa", "expected_sarsa", "q_learning", "double_q_learning",  # take action_mask
          "td_control"}


# A learner's own options, each wrong in one way (rows of conftest's option_rows, on CHAIN):
# ``(id, the options, fragment of the ValueError)``, the id starting with a key of LEARNERS.
#: of the prediction learners
PREDICTION_OPTION_BAD = [
    ("off_policy_mc_prediction importance sampling", {"importance_sampling": "biased"},
     "importance_sampling"),
    ("td0 n_step 0", {"n_step": 0}, "n_step must be an integer >= 1"),
    ("td0 n_step > max_steps", {"n_step": 10**11}, "n_step must be at most 10,000"),
]
#: of the control learners
CONTROL_OPTION_BAD = [
    ("q_sigma sigma 1.5", {"sigma": 1.5}, "sigma must be in [0, 1]"),
    ("q_sigma sigma NaN", {"sigma": NAN}, "sigma must be in [0, 1]"),
    ("q_sigma sigma text", {"sigma": "0.5"}, "sigma must be a number"),
    ("mc_control method", {"method": "sideways"}, "method"),
    ("mc_control importance sampling", {"method": "off_policy", "importance_sampling": "biased"},
     "importance_sampling"),
    ("dyna_q_plus kappa -1", {"kappa": -1.0}, "kappa must be a finite number >= 0"),
    ("dyna_q_plus kappa NaN", {"kappa": NAN}, "kappa must be a finite number >= 0"),
    ("prioritized_sweeping theta NaN", {"theta": NAN}, "theta must be a finite number >= 0"),
    ("prioritized_sweeping theta -1", {"theta": -1.0}, "theta must be a finite number >= 0"),
    ("prioritized_sweeping planning_steps 0", {"planning_steps": 0},
     "planning_steps must be an integer in [1, 100,000,000]"),
]
#: of the policy-gradient learners
PG_OPTION_BAD = [
    ("ppo clip", {"clip": NAN}, "clip"),
    ("ppo lam", {"lam": 2.0}, "lam"),
    ("ppo epochs", {"epochs": 0}, "epochs"),
    ("ppo entropy_coef", {"entropy_coef": NAN}, "entropy_coef"),
    ("ppo minibatches", {"minibatches": 0}, "minibatches must be an integer >= 1"),
    ("ppo objective", {"objective": "kl"}, "objective must be one of ['adaptive_kl', 'clip']"),
    ("ppo kl_target", {"kl_target": NAN}, "kl_target must be a finite number > 0"),
    ("ppo kl_penalty_init", {"kl_penalty_init": 0.0},
     "kl_penalty_init must be a finite number > 0"),
    ("ppo normalise", {"normalise": "yes"}, "normalise must be True or False"),
    ("ppo value_coef", {"value_coef": NAN}, "value_coef must be a finite number > 0"),
    ("ppo value_coef and alpha_value", {"value_coef": 0.5, "alpha_value": 0.1},
     "alpha_value and value_coef exclude each other"),
    ("ppo clip text", {"clip": "0.2"}, "clip must be a number"),
    ("trpo max_kl 0", {"max_kl": 0.0}, "max_kl must stay in (0.0, 1000000.0]"),
    ("trpo max_kl NaN", {"max_kl": NAN}, "max_kl must be a finite number"),
    ("trpo max_kl text", {"max_kl": "0.01"},
     "max_kl must be a number or a tabular.schedules.Schedule"),
    ("trpo cg_iterations", {"cg_iterations": 0}, "cg_iterations must be an integer >= 1"),
    ("trpo cg_iterations huge", {"cg_iterations": 10**9}, "cg_iterations must be at most 10,000"),
    ("trpo line_search_steps", {"line_search_steps": 2.5},
     "line_search_steps must be an integer >= 1"),
    ("trpo line_search_steps huge", {"line_search_steps": 2000},
     "line_search_steps must be at most 1,075"),
    ("trpo lam", {"lam": NAN}, "lam must be in [0, 1]"),
    ("trpo iterations", {"iterations": 0}, "iterations must be an integer >= 1"),
    ("trpo episodes_per_batch", {"episodes_per_batch": 0},
     "episodes_per_batch must be an integer >= 1"),
    ("grpo group_size", {"group_size": 1}, "group_size"),
    ("grpo advantage", {"advantage": "ppo"}, "advantage must be one of"),
    ("grpo aggregation", {"aggregation": "mean"}, "aggregation must be one of"),
]


def learner_rows():
    for name, call in LEARNERS.items():
        bad = SHARED_BAD + (PG_BAD if name in PG else PREDICTION_BAD if name in PREDICTION
                            else CONTROL_BAD) + (MASK_BAD if name in MASKED else [])
        for kwargs, fragment in bad:
            if name in NO_GAMMA and ("gamma" in kwargs or "alpha_value" in kwargs):
                continue
            if name in NO_ALPHA and "alpha" in kwargs:
                continue
            yield (f"{name} {kwargs!r}"[:80], lambda call=call, kw=kwargs: call(**kw),
                   ValueError, fragment)
    tree = envs.TicTacToe.game()
    yield ("minimax not a game", lambda: tabular.minimax(CHAIN), TypeError,
           "game must be a tabular.solve.games.GameTree")
    yield ("expectimax opponent on a taken cell", lambda: tabular.expectimax(
        tree, np.full((tree.n_positions, 9), 1 / 9)), ValueError,
        "expectimax: opponent[1] = ")
    yield ("expectimax opponent shape", lambda: tabular.expectimax(tree, np.ones((2, 9))),
           ValueError, "expectimax: opponent must be a float [5478, 9] array")
    yield ("afterstate_td alpha 0", lambda: tabular.afterstate_td(
        tree, envs.TicTacToe().opponent_policy, alpha=0.0), ValueError,
        "alpha must be in (0, 1]")
    yield ("afterstate_td epsilon NaN", lambda: tabular.afterstate_td(
        tree, envs.TicTacToe().opponent_policy, epsilon=NAN), ValueError,
        "epsilon must be in [0, 1]")
    yield ("afterstate_greedy V shape", lambda: tabular.afterstate_greedy(tree, np.zeros(3)),
           ValueError, "V must be a finite [5478] array")
    yield ("GameTree moves backwards", lambda: tabular.GameTree(
        np.array([[1], [0]]), np.zeros(2), np.array([False, False]), np.ones(2, bool)),
        ValueError, "children[1, 0] = 0 is not a later position")
    yield ("td_control not a function", lambda: tabular.td_control(3), TypeError,
           "target must be a function")
    yield ("td_control two arguments", lambda: tabular.td_control(lambda r, g: r), TypeError,
           "must take the seven arguments reward, gamma, q_next, done, next_action")
    for name in ("offline_lambda_return", "td_lambda", "true_online_td_lambda",
                 "sarsa_lambda", "true_online_sarsa_lambda", "watkins_q_lambda"):
        yield (f"{name} lam 1.5", lambda call=LEARNERS[name]: call(lam=1.5), ValueError,
               "lam must be in [0, 1]")
        yield (f"{name} lam NaN", lambda call=LEARNERS[name]: call(lam=NAN), ValueError,
               "lam must be in [0, 1]")
    for name in ("td_lambda", "sarsa_lambda", "watkins_q_lambda"):
        yield (f"{name} trace fancy", lambda call=LEARNERS[name]: call(trace="fancy"),
               ValueError, "trace must be one of 'accumulating', 'replacing', 'dutch'")
    yield ("td_lambda trace clearing (no actions to clear)",
           lambda: LEARNERS["td_lambda"](trace="clearing"), ValueError,
           "trace must be one of 'accumulating', 'replacing', 'dutch', got 'clearing'")
    for name in ("sarsa_lambda", "watkins_q_lambda"):
        yield (f"{name} trace Clearing", lambda call=LEARNERS[name]: call(trace="Clearing"),
               ValueError, "trace must be one of 'accumulating', 'replacing', 'dutch', "
               "'clearing', got 'Clearing'")
    for targets in ("current", None, True):
        yield (f"offline_lambda_return targets {targets!r}",
               lambda targets=targets: LEARNERS["offline_lambda_return"](targets=targets),
               ValueError, f"targets must be one of 'frozen', 'sweep', got {targets!r}")
    yield from option_rows(PREDICTION_OPTION_BAD, LEARNERS.get)
    yield ("off_policy_mc_prediction behaviour NaN", lambda: tabular.off_policy_mc_prediction(
        CHAIN, UNIFORM, np.full((2, 1), NAN)), ValueError, "behaviour_policy")
    yield ("off_policy_mc_prediction behaviour shape",
           lambda: tabular.off_policy_mc_prediction(CHAIN, UNIFORM, np.ones((5, 1))),
           ValueError, "behaviour_policy must have shape")
    yield ("off_policy_mc_prediction no coverage", lambda: tabular.off_policy_mc_prediction(
        FROZEN, np.zeros(16, dtype=int), np.ones(16, dtype=int)), ValueError,
        "behaviour_policy must cover target_policy")
    yield ("off_policy_mc_prediction on a string", lambda: tabular.off_policy_mc_prediction(
        "Blackjack", UNIFORM, UNIFORM), TypeError, "mdp")
    for name in ("n_step_sarsa", "n_step_expected_sarsa", "off_policy_n_step_sarsa",
                 "tree_backup", "q_sigma"):
        call = LEARNERS[name]
        yield (f"{name} n_step 0", lambda call=call: call(n_step=0), ValueError,
               "n_step must be an integer >= 1")
        yield (f"{name} n_step > max_steps", lambda call=call: call(n_step=3, max_steps=2),
               ValueError, "n_step must be at most 2")
    for name in ("off_policy_n_step_sarsa", "tree_backup", "q_sigma"):
        call = LEARNERS[name]
        yield (f"{name} target_epsilon 1.5", lambda call=call: call(target_epsilon=1.5),
               ValueError, "target_epsilon must stay in [0.0, 1.0]")
        yield (f"{name} target_epsilon NaN", lambda call=call: call(target_epsilon=NAN),
               ValueError, "target_epsilon must be a finite number")
    yield from option_rows(CONTROL_OPTION_BAD, LEARNERS.get)
    yield ("reinforce -inf reward without floor", lambda: tabular.reinforce(TRAP), ValueError,
           "pass reward_floor")
    yield from option_rows(PG_OPTION_BAD, LEARNERS.get)
    yield ("trpo -inf reward without floor", lambda: tabular.trpo(TRAP), ValueError,
           "pass reward_floor")
    for name in ("dyna_q", "dyna_q_plus"):
        call = LEARNERS[name]
        yield (f"{name} planning_steps -1", lambda call=call: call(planning_steps=-1),
               ValueError, "planning_steps must be an integer in [0, 100,000,000]")
        yield (f"{name} planning_steps 2.5", lambda call=call: call(planning_steps=2.5),
               ValueError, "planning_steps must be an integer in [0, 100,000,000]")
        yield (f"{name} model", lambda call=call: call(model="exact"), ValueError,
               "model must be one of 'auto', 'last', 'counts'")
    for name in ("dyna_q", "dyna_q_plus", "prioritized_sweeping"):
        call = LEARNERS[name]
        yield (f"{name} switch not a pair", lambda call=call: call(switch=5), ValueError,
               "switch must be None or (step, mdp)")
        yield (f"{name} switch step 0", lambda call=call: call(switch=(0, CHAIN)), ValueError,
               "switch step must be an integer >= 1")
        yield (f"{name} switch sizes", lambda call=call: call(switch=(5, FROZEN)), ValueError,
               "switch mdp has 16 states and 4 actions, mdp has 2 and 1")
        yield (f"{name} switch on a string", lambda call=call: call(switch=(5, "maze")),
               TypeError, "switch mdp must be a tabular.TabularMDP")
    yield ("learner on a string", lambda: tabular.q_learning("CliffWalking"), TypeError, "mdp")


SCHEDULE_ROWS = [
    ("exponential decay > 1", lambda: schedules.exponential(0.5, 1.5), ValueError,
     "0 < decay <= 1"),
    ("exponential floor > start", lambda: schedules.exponential(0.1, 0.9, 0.5), ValueError,
     "floor <= start"),
    ("inverse offset < 0", lambda: schedules.inverse(offset=-1.0), ValueError, "offset >= 0"),
    ("inverse power 0", lambda: schedules.inverse(power=0.0), ValueError, "power > 0"),
    ("linear steps 0", lambda: schedules.linear(1.0, 0.0, 0.0), ValueError, "steps >= 1"),
    ("unknown kind", lambda: schedules.Schedule(7, 1.0), ValueError, "unknown schedule kind"),
    ("NaN parameter", lambda: schedules.Schedule(1, 1.0, NAN), ValueError,
     "power must be a finite number"),
    ("constant text", lambda: schedules.constant("0.1"), ValueError, "must be a number"),
    ("alpha past 1 later", lambda: tabular.q_learning(
        CHAIN, alpha=schedules.linear(0.5, 2.0, 10.0)), ValueError, "alpha must stay in"),
    ("seed_states runs 0", lambda: tabular.seed_states(0, 0), ValueError, "runs"),
]

POLICY_ROWS = [
    ("SoftmaxPolicy NaN logits", lambda: SoftmaxPolicy(np.array([[NAN, 0.0]]), [0, 0]),
     ValueError, "NaN and +inf rejected"),
    ("SoftmaxPolicy dead row", lambda: SoftmaxPolicy(np.full((1, 2), -INF), [0, 0]),
     ValueError, "-inf everywhere"),
    ("SoftmaxPolicy row out of range", lambda: SoftmaxPolicy(np.zeros((1, 2)), np.array([0, 3])),
     ValueError, "row_of_state[1] = 3"),
    ("reinforce policy shape", lambda: tabular.reinforce(CHAIN, np.ones((5, 1))), ValueError,
     "policy"),
]

ENV_ROWS = [
    ("TokenMDP illegal_reward NaN", lambda: TokenMDP(illegal_reward=NAN), ValueError,
     "illegal_reward"),
    ("TokenMDP default_reward text", lambda: TokenMDP(default_reward="0"), ValueError,
     "default_reward must be a number"),
    ("TokenMDP prompt_probs NaN", lambda: TokenMDP(("a", "b"), prompt_probs=[NAN, 1.0]),
     ValueError, "prompt_probs"),
    ("TokenMDP reward None", lambda: TokenMDP(reward=lambda x, y: None), ValueError,
     "must be a number, got None"),
    ("TokenMDP reward NaN", lambda: TokenMDP(reward=lambda x, y: NAN), ValueError,
     "NaN refused"),
    ("TokenMDP max_len 0", lambda: TokenMDP(max_len=0), ValueError, "max_len"),
    ("TokenMDP step before reset", lambda: TokenMDP().step(0), RuntimeError, "reset()"),
    ("changing_maze sizes", lambda: changing_maze("S.G", "S..G"), ValueError,
     "before and after must have the same size"),
    ("changing_maze more than walls", lambda: changing_maze("S.G", "SG."), ValueError,
     "before and after must differ only in walls"),
    ("GridWorld slip NaN", lambda: GridWorld("S.G", slip=NAN), ValueError, "slip"),
    ("GridWorld no start", lambda: GridWorld("..G"), ValueError, "start"),
    ("GridWorld bad cell", lambda: GridWorld("S?G"), ValueError, "row 0, column 1"),
    ("register_gridworld bad layout", lambda: envs.register_gridworld("x/Bad-v0", "S?G"),
     ValueError, "row 0, column 1"),
    ("MaximizationBias n_b_actions 1", lambda: envs.MaximizationBias(1), ValueError,
     "n_b_actions must be at least 2"),
    ("MaximizationBias n_b_actions text", lambda: envs.MaximizationBias("10"), ValueError,
     "n_b_actions must be an integer >= 1"),
]


def stepped(action):
    env = gym.make("tabzoo/CliffWalking-v0")
    env.reset(seed=0)
    return lambda: env.step(action)


for action, fragment in ((1.7, "got 1.7"), ("1", "got '1'"), (None, "got None"),
                         (True, "got True"), (9, "action 9 is outside [0, 4)")):
    ENV_ROWS.append((f"step({action!r})", stepped(action), ValueError, fragment))

RLHF_ROWS = [
    ("expected_update group_size 1", lambda: rlhf.expected_update(
        TOKENS, TOKEN_POLICY, group_size=1), ValueError, "group_size must be >= 2"),
    ("expected_fixed_point beta 0", lambda: rlhf.expected_fixed_point(
        TOKENS, TOKEN_POLICY, ref_policy=TOKEN_POLICY, beta=0.0), ValueError,
     "beta must be"),
    ("sample_preferences NaN scores", lambda: tabular.sample_preferences(
        "x", ["a", "b"], [NAN, 0.0], 10), ValueError, "scores must be finite"),
    ("sample_preferences one response", lambda: tabular.sample_preferences(
        "x", ["a"], [0.0], 10), ValueError, "at least 2"),
    ("sample_preferences n 0", lambda: tabular.sample_preferences("x", ["a", "b"], [0, 1], 0),
     ValueError, "n must be an integer >= 1"),
    ("train_reward_model NaN count", lambda: tabular.train_reward_model(
        [(NAN, "x", "a", "b")]), ValueError, "count of preference 0"),
    ("train_reward_model zero count", lambda: tabular.train_reward_model(
        [(0, "x", "a", "b")]), ValueError, "count of preference 0"),
    ("train_reward_model negative count", lambda: tabular.train_reward_model(
        [(-2, "x", "a", "b")]), ValueError, "count of preference 0"),
    ("train_reward_model malformed", lambda: tabular.train_reward_model([("x", "a")]),
     ValueError, "preference 0 is ('x', 'a')"),
    ("train_reward_model self comparison", lambda: tabular.train_reward_model(
        [("x", "a", "a")]), ValueError, "with itself"),
    ("train_reward_model empty", lambda: tabular.train_reward_model([]), ValueError,
     "no preferences"),
    ("bradley_terry_loss NaN", lambda: bradley_terry_loss([NAN, 0.0], [0], [1]), ValueError,
     "scores"),
    ("bradley_terry_loss zero count", lambda: bradley_terry_loss([0.0, 0.0], [0], [1], [0]),
     ValueError, "counts"),
    ("bradley_terry_loss index", lambda: bradley_terry_loss([0.0, 0.0], [0], [5]), ValueError,
     "losers"),
    ("dpo self comparison", lambda: tabular.dpo(
        TOKENS, TOKEN_POLICY, [("Say hello.", "hello", "hello")], beta=0.1), ValueError,
     "with itself"),
    ("dpo unknown prompt", lambda: tabular.dpo(
        TOKENS, TOKEN_POLICY, [("Say bye.", "hello", "Say")], beta=0.1), ValueError,
     "prompt 'Say bye.' is not"),
    ("dpo loss", lambda: tabular.dpo(TOKENS, TOKEN_POLICY, [("Say hello.", "hello", "Say")],
                                     beta=0.1, loss="kto"), ValueError,
     "loss must be one of"),
    ("dpo beta 0", lambda: tabular.dpo(TOKENS, TOKEN_POLICY, [("Say hello.", "hello", "Say")],
                                       beta=0.0), ValueError, "beta"),
    ("kto feedback malformed", lambda: tabular.kto(
        TOKENS, TOKEN_POLICY, [("Say hello.", "hello")], beta=0.1), ValueError,
     "feedback 0 is ('Say hello.', 'hello')"),
    ("kto desirable not a bool", lambda: tabular.kto(
        TOKENS, TOKEN_POLICY, [("Say hello.", "hello", "yes")], beta=0.1), ValueError,
     "desirable must be True or False"),
    ("kto unknown prompt", lambda: tabular.kto(
        TOKENS, TOKEN_POLICY, [("Say bye.", "hello", True)], beta=0.1), ValueError,
     "prompt 'Say bye.' is not"),
    ("kto kl_samples 0", labelled(tabular.kto, beta=0.1, kl_samples=0), ValueError, "kl_samples"),
    ("kto lambda_u NaN", labelled(tabular.kto, beta=0.1, lambda_u=NAN), ValueError, "lambda_u"),
    ("kto steps 0", labelled(tabular.kto, beta=0.1, steps=0), ValueError, "steps"),
    ("kto runs 0", labelled(tabular.kto, beta=0.1, runs=0), ValueError, "runs"),
    ("kto_optimum beta 1", labelled(tabular.kto_optimum, beta=1.0),
     ValueError, "beta must be in (0, 1)"),
    ("kto_optimum only undesirable", labelled(tabular.kto_optimum, desirable=False, beta=0.5),
     ValueError, "no response to prompt 'Say hello.'"),
    ("iterated_dpo rounds 0", lambda: tabular.iterated_dpo(
        TOKENS, TOKEN_POLICY, beta=0.5, rounds=0), ValueError, "rounds"),
    ("iterated_dpo pairs 1.5", lambda: tabular.iterated_dpo(
        TOKENS, TOKEN_POLICY, beta=0.5, pairs=1.5), ValueError, "pairs"),
    ("iterated_dpo loss", lambda: tabular.iterated_dpo(
        TOKENS, TOKEN_POLICY, beta=0.5, loss="hinge"), ValueError,
     "loss must be 'sigmoid' or 'ipo'"),
    ("iterated_dpo beta NaN", lambda: tabular.iterated_dpo(TOKENS, TOKEN_POLICY, beta=NAN),
     ValueError, "beta"),
    ("sequence_kl ref shape", lambda: tabular.sequence_kl(
        TOKENS.to_mdp(), TOKEN_POLICY, np.ones((2, 2))), ValueError, "ref_policy"),
    ("kl_objective beta NaN", lambda: tabular.kl_objective(
        TOKENS.to_mdp(), TOKEN_POLICY, TOKEN_POLICY, NAN), ValueError, "beta"),
    ("train_pipeline not a scenario", lambda: tabular.train_pipeline("capital"), TypeError,
     "scenario"),
    ("load_grammar_scenario unknown", lambda: envs.load_grammar_scenario("no_such_scenario"),
     FileNotFoundError, "no_such_scenario.txt"),
    ("distill learner", lambda: distill(TOKENS.to_mdp(), TOKEN_POLICY, TOKEN_POLICY,
                                        learner="dpo"), ValueError, "learner must be one of"),
    ("distill beta", lambda: distill(TOKENS.to_mdp(), TOKEN_POLICY, TOKEN_POLICY, beta=2.0),
     ValueError, "distill sets ['beta']"),
    ("distill teacher shape", lambda: distill(TOKENS.to_mdp(), TOKEN_POLICY, np.ones((2, 2))),
     ValueError, "teacher"),
    ("process_rewards potential shape", lambda: process_rewards(TOKENS.to_mdp(), np.zeros(2)),
     ValueError, "potential must be"),
    ("process_rewards not a tree", lambda: process_rewards(
        TabularMDP.from_dense(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.zeros(2)),
        np.zeros(2)), ValueError, "tree MDP"),
    ("fit_process_reward_model responses 0", lambda: fit_process_reward_model(
        TOKENS.to_mdp(), TOKEN_POLICY, responses=0), ValueError, "responses"),
    ("fit_process_reward_model completions 1.5", lambda: fit_process_reward_model(
        TOKENS.to_mdp(), TOKEN_POLICY, completions=1.5), ValueError, "completions"),
    ("fit_process_reward_model runs 0", lambda: fit_process_reward_model(
        TOKENS.to_mdp(), TOKEN_POLICY, runs=0), ValueError, "runs"),
    ("fit_process_reward_model not a tree", lambda: fit_process_reward_model(
        TabularMDP.from_dense(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.zeros(2)),
        np.full((2, 1), 1.0)), ValueError, "tree MDP"),
    ("best_of_n n 0", lambda: best_of_n(TOKENS.to_mdp(), TOKEN_POLICY, 0), ValueError,
     "n must be an integer >= 1"),
    ("best_of_n reward shape", lambda: best_of_n(TOKENS.to_mdp(), TOKEN_POLICY, 2,
                                                 reward=np.zeros(3)), ValueError, "reward must be"),
    ("kl_optimum beta NaN", lambda: tabular.kl_optimum(TOKENS.to_mdp(), None, NAN),
     ValueError, "beta"),
    ("response_distribution not a token env", lambda: response_distribution(CHAIN, UNIFORM),
     (TypeError, ValueError, AttributeError), ""),
    ("sft fractional count", lambda: tabular.sft(LM, [(2.5, "Say hello.", "hello")]),
     ValueError, "count of SFT pair 0 must be an integer >= 1"),
    ("sft malformed pair", lambda: tabular.sft(LM, [("Say hello.",)]), ValueError,
     "SFT pair 0 is"),
    ("sft unknown token", lambda: tabular.sft(LM, [("Say hello.", "bonjour")]), ValueError,
     "'bonjour'"),
    ("pretrain empty corpus", lambda: tabular.pretrain(LM, []), ValueError, "corpus is empty"),
    ("pretrain epochs", lambda: tabular.pretrain(LM, ["hello"], epochs=0), ValueError,
     "epochs"),
]

APART = TabularMDP.from_dense(np.array([[[1.0, 0.0]], [[0.0, 1.0]]]), np.array([1.0, 2.0]))
LOOP_TRAP = TabularMDP(np.zeros((1, 1, 1)), np.ones((1, 1, 1)), np.full((1, 1, 1), -INF),
                       np.zeros((1, 1, 1), dtype=bool), [1.0])
AVERAGE_REWARD_ROWS = [
    ("relative_value_iteration tol 0", lambda: tabular.relative_value_iteration(
        APART, tol=0.0), ValueError, "tol must be a finite number > 0"),
    ("relative_value_iteration tol NaN", lambda: tabular.relative_value_iteration(
        APART, tol=NAN), ValueError, "tol"),
    ("relative_value_iteration max_iter", lambda: tabular.relative_value_iteration(
        APART, max_iter=0), ValueError, "max_iter must be an integer >= 1"),
    ("relative_value_iteration strict text", lambda: tabular.relative_value_iteration(
        APART, strict="no"), ValueError, "strict must be True or False"),
    ("relative_value_iteration episodic", lambda: tabular.relative_value_iteration(CHAIN),
     ValueError, "state 0, action 0 ends the episode"),
    ("relative_value_iteration -inf reward", lambda: tabular.relative_value_iteration(
        LOOP_TRAP), ValueError, "can pay a reward of -inf"),
    ("relative_value_iteration multichain", lambda: tabular.relative_value_iteration(
        APART, max_iter=20), tabular.ConvergenceError, "multichain"),
    ("relative_value_iteration not an MDP", lambda: tabular.relative_value_iteration("mdp"),
     TypeError, "mdp"),
    ("average_reward_solve not unichain", lambda: tabular.average_reward_solve(
        APART, np.array([0, 0])), ValueError, "policy is not unichain"),
    ("average_reward_solve policy shape", lambda: tabular.average_reward_solve(
        APART, np.ones((3, 1))), ValueError, "policy"),
    ("average_reward_solve NaN policy", lambda: tabular.average_reward_solve(
        APART, np.full((2, 1), NAN)), ValueError, "policy"),
    ("average_reward_solve episodic", lambda: tabular.average_reward_solve(CHAIN, UNIFORM),
     ValueError, "ends the episode"),
    ("finite_horizon horizon 0", lambda: tabular.finite_horizon(CHAIN, 0), ValueError,
     "horizon must be an integer >= 1"),
    ("finite_horizon horizon 2.5", lambda: tabular.finite_horizon(CHAIN, 2.5), ValueError,
     "horizon must be an integer >= 1"),
    ("finite_horizon horizon huge", lambda: tabular.finite_horizon(CHAIN, 10**9), ValueError,
     "use a shorter horizon"),
    ("finite_horizon gamma NaN", lambda: tabular.finite_horizon(CHAIN, 3, gamma=NAN),
     ValueError, "gamma must be in [0, 1]"),
    ("finite_horizon terminal_values shape", lambda: tabular.finite_horizon(
        CHAIN, 3, terminal_values=np.zeros(5)), ValueError, "terminal_values"),
    ("finite_horizon terminal_values NaN", lambda: tabular.finite_horizon(
        CHAIN, 3, terminal_values=np.array([NAN, 0.0])), ValueError, "terminal_values[0]"),
]
AVERAGE_REWARD_ROWS += [
    row for name in ("differential_sarsa", "r_learning") for row in (
        (f"{name} episodic", lambda name=name: getattr(tabular, name)(CHAIN), ValueError,
         f"{name} needs a continuing task"),
        (f"{name} reward -inf", lambda name=name: getattr(tabular, name)(TRAP), ValueError,
         "continuing task with finite rewards"),
        (f"{name} steps", lambda name=name: getattr(tabular, name)(APART, steps=0),
         ValueError, "steps must be an integer >= 1"),
        (f"{name} alpha_average", lambda name=name: getattr(tabular, name)(
            APART, alpha_average=NAN), ValueError, "alpha_average"),
        (f"{name} alpha", lambda name=name: getattr(tabular, name)(APART, alpha=0.0),
         ValueError, "alpha"),
        (f"{name} epsilon", lambda name=name: getattr(tabular, name)(APART, epsilon=2.0),
         ValueError, "epsilon"),
        (f"{name} epsilon_block", lambda name=name: getattr(tabular, name)(
            APART, epsilon_block=0), ValueError, "epsilon_block"),
        (f"{name} initial_Q NaN", lambda name=name: getattr(tabular, name)(
            APART, initial_Q=NAN), ValueError, "initial_Q"),
        (f"{name} seed", lambda name=name: getattr(tabular, name)(APART, seed=-1),
         ValueError, "seed"),
        (f"{name} runs", lambda name=name: getattr(tabular, name)(APART, runs=0),
         ValueError, "runs"),
    )
]
PLANNING_ROWS = [
    ("uniform_expected_updates updates 0", lambda: tabular.uniform_expected_updates(
        CHAIN, updates=0, evaluate_every=1), ValueError, "updates must be an integer >= 1"),
    ("uniform_expected_updates evaluate_every 2.5", lambda: tabular.uniform_expected_updates(
        CHAIN, updates=10, evaluate_every=2.5), ValueError,
     "evaluate_every must be an integer >= 1"),
    ("uniform_expected_updates too many evaluations", lambda: tabular.uniform_expected_updates(
        CHAIN, updates=10**9, evaluate_every=1), ValueError, "evaluate less often"),
    ("uniform_expected_updates gamma NaN", lambda: tabular.uniform_expected_updates(
        CHAIN, updates=10, evaluate_every=5, gamma=NAN), ValueError, "gamma must be in [0, 1]"),
    ("uniform_expected_updates initial_Q NaN", lambda: tabular.uniform_expected_updates(
        CHAIN, updates=10, evaluate_every=5, initial_Q=NAN), ValueError,
     "initial_Q must be finite"),
    ("uniform_expected_updates not an MDP", lambda: tabular.uniform_expected_updates(
        "mdp", updates=10, evaluate_every=5), TypeError, "mdp"),
    ("uniform_expected_updates endless episodes", lambda: tabular.uniform_expected_updates(
        APART, updates=10, evaluate_every=5), tabular.ConvergenceError,
     "its value cannot be summed"),
    ("trajectory_sampling updates None", lambda: tabular.trajectory_sampling(
        CHAIN, updates=None, evaluate_every=5), ValueError, "updates must be an integer >= 1"),
    ("trajectory_sampling evaluate_every 0", lambda: tabular.trajectory_sampling(
        CHAIN, updates=10, evaluate_every=0), ValueError,
     "evaluate_every must be an integer >= 1"),
    ("trajectory_sampling epsilon 1.5", lambda: tabular.trajectory_sampling(
        CHAIN, updates=10, evaluate_every=5, epsilon=1.5), ValueError, "epsilon"),
    ("trajectory_sampling epsilon NaN", lambda: tabular.trajectory_sampling(
        CHAIN, updates=10, evaluate_every=5, epsilon=NAN), ValueError, "epsilon"),
    ("trajectory_sampling gamma 1.5", lambda: tabular.trajectory_sampling(
        CHAIN, updates=10, evaluate_every=5, gamma=1.5), ValueError, "gamma must be in [0, 1]"),
    ("trajectory_sampling seed -1", lambda: tabular.trajectory_sampling(
        CHAIN, updates=10, evaluate_every=5, seed=-1), ValueError,
     "seed must be None or an int >= 0"),
    ("trajectory_sampling runs 0", lambda: tabular.trajectory_sampling(
        CHAIN, updates=10, evaluate_every=5, runs=0), ValueError, "runs"),
    ("trajectory_sampling initial_Q shape", lambda: tabular.trajectory_sampling(
        CHAIN, updates=10, evaluate_every=5, initial_Q=np.zeros((3, 3))), ValueError,
     "initial_Q must be a number or an array"),
    ("trajectory_sampling not an MDP", lambda: tabular.trajectory_sampling(
        "mdp", updates=10, evaluate_every=5), TypeError, "mdp"),
    ("branching_task n_states 0", lambda: tabular.branching_task(0, 1), ValueError,
     "n_states must be an integer >= 1"),
    ("branching_task branching > n_states", lambda: tabular.branching_task(10, 11), ValueError,
     "branching must be at most 10"),
    ("branching_task n_actions 2.5", lambda: tabular.branching_task(10, 2, n_actions=2.5),
     ValueError, "n_actions must be an integer >= 1"),
    ("branching_task termination NaN", lambda: tabular.branching_task(
        10, 2, termination=NAN), ValueError, "termination must be in [0, 1]"),
    ("branching_task seed text", lambda: tabular.branching_task(10, 2, seed="1"), ValueError,
     "seed must be None or an int >= 0"),
    ("branching_task too large", lambda: tabular.branching_task(10**8, 10), ValueError,
     "outcome slots are too many"),
]
RACETRACK_ROWS = [
    ("Racetrack noise 1.5", lambda: Racetrack(noise=1.5), ValueError, "noise must be in [0, 1]"),
    ("Racetrack noise NaN", lambda: Racetrack(noise=NAN), ValueError, "noise"),
    ("Racetrack max_speed 0", lambda: Racetrack(max_speed=0), ValueError,
     "max_speed must be an integer >= 1"),
    ("Racetrack max_speed 11", lambda: Racetrack(max_speed=11), ValueError,
     "max_speed must be at most 10"),
    ("Racetrack layout goal cell", lambda: Racetrack("..F\nSSG"), ValueError,
     "layout uses 'G'"),
    ("Racetrack layout no finish", lambda: Racetrack("...\nSS#"), ValueError,
     "layout has no finish cell"),
    ("Racetrack layout no start", lambda: Racetrack("..F\n..#"), ValueError,
     "layout has no start cell"),
    ("Racetrack layout not text", lambda: Racetrack(5), ValueError, "layout must be a string"),
    ("Racetrack trajectory start_cell 6", lambda: Racetrack().trajectory(
        np.zeros(7158, dtype=int), 6), ValueError, "start_cell must be in [0, 6)"),
    ("Racetrack trajectory policy shape", lambda: Racetrack().trajectory(
        np.zeros(3, dtype=int), 0), ValueError, "policy must be 7158 action ids"),
]
CAR_RENTAL_ROWS = [
    ("CarRental max_cars 0", lambda: CarRental(max_cars=0), ValueError, "max_cars"),
    ("CarRental max_cars 31", lambda: CarRental(max_cars=31), ValueError,
     "max_cars must be at most 30"),
    ("CarRental request_rates NaN", lambda: CarRental(request_rates=(NAN, 4.0)), ValueError,
     "request_rates[0]"),
    ("CarRental return_rates one", lambda: CarRental(return_rates=(3.0,)), ValueError,
     "return_rates must be two Poisson means"),
    ("CarRental free_moves 1.5", lambda: CarRental(free_moves=1.5), ValueError,
     "free_moves must be an integer >= 0"),
    ("CarRental parking_limit -1", lambda: CarRental(parking_limit=-1), ValueError,
     "parking_limit"),
    ("CarRental move_cost NaN", lambda: CarRental(move_cost=NAN), ValueError, "move_cost"),
]

BATCH_ROWS = [
    ("batch_prediction method", lambda: tabular.batch_prediction(CHAIN, UNIFORM, method="td1"),
     ValueError, "method must be one of"),
    ("batch_prediction alpha", lambda: tabular.batch_prediction(CHAIN, UNIFORM, alpha=2.0),
     ValueError, "alpha must be in (0, 1]"),
    ("batch_prediction tol", lambda: tabular.batch_prediction(CHAIN, UNIFORM, tol=NAN),
     ValueError, "tol"),
    ("batch_prediction max_sweeps", lambda: tabular.batch_prediction(
        CHAIN, UNIFORM, max_sweeps=0), ValueError, "max_sweeps"),
    ("batch_prediction -inf rewards", lambda: tabular.batch_prediction(TRAP, np.ones((2, 1))),
     ValueError, "finite rewards"),
    ("batch_prediction episodes", lambda: tabular.batch_prediction(CHAIN, UNIFORM, episodes=0),
     ValueError, "episodes"),
]

BANDIT_ROWS = [
    ("epsilon_greedy_bandit epsilon", lambda: tabular.epsilon_greedy_bandit(epsilon=1.5),
     ValueError, "epsilon"),
    ("epsilon_greedy_bandit alpha", lambda: tabular.epsilon_greedy_bandit(alpha=NAN),
     ValueError, "alpha"),
    ("epsilon_greedy_bandit initial", lambda: tabular.epsilon_greedy_bandit(initial=INF),
     ValueError, "initial must be a finite number"),
    ("epsilon_greedy_bandit steps", lambda: tabular.epsilon_greedy_bandit(steps=0),
     ValueError, "steps must be an integer >= 1"),
    ("epsilon_greedy_bandit testbed", lambda: tabular.epsilon_greedy_bandit((10, 0.0)),
     TypeError, "testbed must be a tabular.learn.bandits.BanditTestbed"),
    ("epsilon_greedy_bandit testbed k", lambda: tabular.epsilon_greedy_bandit(
        tabular.BanditTestbed(k=0)), ValueError, "testbed.k"),
    ("epsilon_greedy_bandit reward_sd", lambda: tabular.epsilon_greedy_bandit(
        tabular.BanditTestbed(reward_sd=NAN)), ValueError, "testbed.reward_sd"),
    ("ucb_bandit c", lambda: tabular.ucb_bandit(c=-1.0), ValueError, "c must be"),
    ("ucb_bandit seed", lambda: tabular.ucb_bandit(seed=-3), ValueError, "seed"),
    ("gradient_bandit alpha", lambda: tabular.gradient_bandit(alpha=0.0), ValueError, "alpha"),
    ("gradient_bandit runs", lambda: tabular.gradient_bandit(runs=0), ValueError, "runs"),
]

RUNNER_ROWS = [
    ("make_config unknown key", lambda: registry.make_config(
        registry.load("cliff_walking"), settings={"epsilonn": "0.2"}), ValueError,
     "no setting epsilonn"),
    ("make_config wrong type", lambda: registry.make_config(
        registry.load("cliff_walking"), settings={"episodes": "many"}), ValueError,
     "episodes takes a int"),
    ("unknown experiment", lambda: registry.load("cliff"), KeyError, "unknown experiment"),
]

# Issue 28's probes of the core: text and bools taken for numbers, flags read by
# truthiness, counts too large for a float check, and divergence that came back silently.
WALK = TabularMDP.from_gymnasium(gym.make("tabzoo/RandomWalk-v0"))
WALK_POLICY = np.ones((WALK.n_states, 1))
WIDE = testing.random_mdp(np.random.default_rng(0), 10**5, 1, 1, done_rate=1.0)


def flag_rows():
    """Every learner's and solver's bool parameter given "no", 1 and None."""
    calls = dict(LEARNERS, batch_prediction=lambda **kw: tabular.batch_prediction(
        CHAIN, UNIFORM, **kw), value_iteration=lambda **kw: tabular.value_iteration(
        CHAIN, gamma=0.9, **kw), policy_evaluation=lambda **kw: tabular.policy_evaluation(
        CHAIN, UNIFORM, gamma=0.9, **kw), policy_iteration=lambda **kw: tabular.policy_iteration(
        CHAIN, gamma=0.9, **kw), gradient_bandit=lambda **kw: tabular.gradient_bandit(
        steps=5, **kw), td_control=lambda **kw: tabular.td_control(own_q_learning_target, **kw))
    for name, call in calls.items():
        function = getattr(tabular, name)
        for param in inspect.signature(function).parameters.values():
            if isinstance(param.default, bool):
                for bad in ("no", 1, None):
                    yield (f"{name} {param.name}={bad!r}", lambda c=call, k=param.name, b=bad:
                           c(**{k: b}), ValueError, f"{param.name} must be True or False")


CORE_ROWS = list(flag_rows()) + [
    ("q_learning initial_Q text", lambda: tabular.q_learning(CHAIN, initial_Q="5"), ValueError,
     "initial_Q must hold real numbers"),
    ("q_learning initial_Q True", lambda: tabular.q_learning(CHAIN, initial_Q=True), ValueError,
     "initial_Q must hold real numbers, got bool"),
    ("td0 initial_V text", lambda: tabular.td0(CHAIN, UNIFORM, initial_V="0"), ValueError,
     "initial_V must hold real numbers"),
    ("sarsa gamma complex", lambda: tabular.sarsa(CHAIN, gamma=0.9 + 0j), ValueError,
     "gamma must be a number"),
    ("q_learning episodes 10**30", lambda: tabular.q_learning(CHAIN, episodes=10**30),
     ValueError, "episodes must be at most 9,223,372,036,854,775,807"),
    ("sarsa episodes and runs beyond memory", lambda: tabular.sarsa(
        CHAIN, episodes=10**9, runs=10**3), ValueError, "would need"),
    ("td0 history beyond memory", lambda: tabular.td0(
        WIDE, np.zeros(WIDE.n_states, dtype=int), episodes=10**5, runs=10, history=True),
     ValueError, "history is too large"),
    ("q_learning runs text", lambda: tabular.q_learning(CHAIN, runs="3"), ValueError,
     "runs must be an integer >= 1, got '3'"),
    ("value_iteration V0 text", lambda: tabular.value_iteration(CHAIN, gamma=0.9, V0="ab"),
     ValueError, "V0 must hold real numbers"),
    ("value_iteration max_iter huge", lambda: tabular.value_iteration(
        CHAIN, gamma=0.9, max_iter=10**12), ValueError, "max_iter must be at most 10,000,000"),
    ("finite_horizon terminal_values text", lambda: tabular.finite_horizon(
        CHAIN, 3, terminal_values="ab"), ValueError, "terminal_values must hold real numbers"),
    ("greedy_policy Q text", lambda: tabular.greedy_policy("abc"), ValueError,
     "Q must hold real numbers"),
    ("optimal_actions Q bools", lambda: tabular.optimal_actions(np.ones((2, 2), dtype=bool)),
     ValueError, "Q must hold real numbers"),
    ("q_from_v V text", lambda: tabular.q_from_v(CHAIN, "ab", 0.9), ValueError,
     "V must hold real numbers"),
    ("soft_policy Q NaN", lambda: tabular.soft_policy(np.array([[NAN, 0.0]]), 1.0), ValueError,
     "Q[0, 0] is nan"),
    ("policy_iteration tie_tol text", lambda: tabular.policy_iteration(
        CHAIN, gamma=0.9, tie_tol="0"), ValueError, "tie_tol must be a number"),
    ("td_lambda accumulating lam 1 diverges", lambda: tabular.td_lambda(
        WALK, WALK_POLICY, episodes=200, lam=1.0, alpha=0.9), FloatingPointError,
     "the learned V diverged: V[1]"),
    ("sarsa_lambda accumulating lam 1 diverges", lambda: tabular.sarsa_lambda(
        WALK, episodes=200, lam=1.0, alpha=0.9), FloatingPointError, "lower alpha"),
    ("watkins_q_lambda accumulating lam 1 diverges", lambda: tabular.watkins_q_lambda(
        WALK, episodes=200, lam=1.0, alpha=0.9), FloatingPointError, "lower alpha"),
    ("batch_prediction default alpha past 490 walks", lambda: tabular.batch_prediction(
        WALK, WALK_POLICY, episodes=500), FloatingPointError, "batch td0 diverged"),
    ("epsilon_greedy_bandit reward_sd 1e308", lambda: tabular.epsilon_greedy_bandit(
        BanditTestbed(reward_sd=1e308), steps=5), ValueError,
     "testbed.reward_sd must be in [0, 1e+100]"),
    ("ucb_bandit spread 1e308", lambda: tabular.ucb_bandit(BanditTestbed(spread=1e308), steps=5),
     ValueError, "testbed.spread must be in [0, 1e+100]"),
    ("gradient_bandit k beyond memory", lambda: tabular.gradient_bandit(
        BanditTestbed(k=10**9), steps=5, runs=10), ValueError, "makes 10,000,000,000 arm values"),
    ("dyna_q_plus kappa 1e308", lambda: tabular.dyna_q_plus(CHAIN, kappa=1e308), ValueError,
     "kappa must be at most 1e+100"),
]

RLHF_EDGE_ROWS = [
    ("dpo on a TabularMDP", lambda: tabular.dpo(
        TOKENS.to_mdp(), TOKEN_POLICY, [("Say hello.", "hello", "Say")], beta=0.1), TypeError,
     "mdp must be a token MDP"),
    ("dpo ipo beta 1e-300", lambda: tabular.dpo(
        TOKENS, TOKEN_POLICY, [("Say hello.", "hello", "Say")], beta=1e-300, loss="ipo"),
     ValueError, "beta must be at least"),
    ("dpo ipo diverging alpha", lambda: tabular.dpo(
        TOKENS, TOKEN_POLICY, [("Say hello.", "hello", "Say")], beta=0.1, loss="ipo"),
     FloatingPointError, "the ipo loss diverged"),
    ("dpo steps huge", lambda: tabular.dpo(
        TOKENS, TOKEN_POLICY, [("Say hello.", "hello", "Say")], beta=0.1, steps=10**12),
     ValueError, "steps must be at most 100,000,000"),
    ("kto kl_samples 10**9", labelled(tabular.kto, beta=0.1, kl_samples=10**9),
     ValueError, "kl_samples must be at most 50,000"),
    ("kto_optimum on a string", lambda: tabular.kto_optimum(
        "tokens", TOKEN_POLICY, [("Say hello.", "hello", True)], beta=0.1), TypeError,
     "mdp must be a token MDP"),
    ("bradley_terry_preference on a TabularMDP", lambda: rlhf.bradley_terry_preference(
        TOKENS.to_mdp(), TOKEN_POLICY), TypeError, "mdp must be a token MDP"),
    ("preference_table missing prompt", lambda: rlhf.preference_table(TOKENS, {}),
     ValueError, "table must give every prompt"),
    ("nash_equilibrium beta 0", lambda: rlhf.nash_equilibrium(
        TOKENS, TOKEN_POLICY, rlhf.bradley_terry_preference(TOKENS, TOKEN_POLICY), beta=0.0),
     ValueError, "beta must be a finite number > 0"),
    ("preference_gap beta NaN", lambda: rlhf.preference_gap(
        TOKENS, TOKEN_POLICY, TOKEN_POLICY, rlhf.bradley_terry_preference(TOKENS, TOKEN_POLICY),
        beta=float("nan")), ValueError, "beta must be a finite number >= 0"),
    ("nash_md alpha beta above 1", lambda: rlhf.nash_md(
        TOKENS, TOKEN_POLICY, rlhf.bradley_terry_preference(TOKENS, TOKEN_POLICY), beta=0.5,
        alpha=4.0), ValueError, "alpha * beta must be at most 1"),
    ("loss_optimum hinge", lambda: rlhf.loss_optimum(
        TOKENS, TOKEN_POLICY, rlhf.bradley_terry_preference(TOKENS, TOKEN_POLICY), beta=0.5,
        loss="hinge"), ValueError, "has a set of optima"),
    ("iterated_dpo rounds times pairs", lambda: tabular.iterated_dpo(
        TOKENS, TOKEN_POLICY, beta=0.1, rounds=10**4, pairs=10**5), ValueError,
     "pairs must be at most 10,000"),
    ("ppo epochs 10**9", lambda: tabular.ppo(CHAIN, epochs=10**9), ValueError,
     "epochs must be at most 10,000"),
    ("ppo minibatches 2.5", lambda: tabular.ppo(CHAIN, minibatches=2.5), ValueError,
     "minibatches must be an integer >= 1"),
    ("pretrain epochs 10**9", lambda: tabular.pretrain(LM, ["hello"], epochs=10**9),
     ValueError, "epochs must be at most 100,000,000"),
    ("best_of_n n 10**9", lambda: rlhf.best_of_n(TOKENS.to_mdp(), TOKEN_POLICY, 10**9),
     ValueError, "n must be at most 100,000,000"),
    ("response_distribution on a TabularMDP", lambda: rlhf.response_distribution(
        TOKENS.to_mdp(), TOKEN_POLICY), TypeError, "mdp must be a token MDP"),
    ("ending_probabilities policy shape", lambda: rlhf.ending_probabilities(
        TOKENS.to_mdp(), np.ones((2, 2))), ValueError, "policy must have shape"),
    ("visit_probabilities policy NaN", lambda: rlhf.visit_probabilities(
        TOKENS.to_mdp(), np.full(TOKEN_POLICY.probs().shape, NAN)), ValueError,
     "not a probability distribution"),
    ("expected_return on a string", lambda: rlhf.expected_return("tree", TOKEN_POLICY),
     TypeError, "mdp"),
    ("prefix_values policy action", lambda: rlhf.prefix_values(
        TOKENS.to_mdp(), np.full(TOKENS.to_mdp().n_states, 99)), ValueError, "not an action"),
    ("path_returns on a cyclic model", lambda: rlhf.path_returns(FROZEN), ValueError, "tree"),
    ("response_path unknown prompt", lambda: rlhf.response_path(TOKENS, "Hi.", "hello"),
     ValueError, "prompt 'Hi.' is not one of the env's prompts"),
    ("group_relative_advantages one return", lambda: rlhf.group_relative_advantages([1.0]),
     ValueError, "at least 2 returns"),
    ("group_relative_advantages -inf", lambda: rlhf.group_relative_advantages([1.0, -INF]),
     ValueError, "returns[1] is not finite"),
    ("group_relative_advantages text flag", lambda: rlhf.group_relative_advantages(
        [1.0, 2.0], "yes"), ValueError, "normalise must be True or False"),
]

GRID = TabularMDP.from_gymnasium(gym.make("tabzoo/Gridworld4x4-v0"))
GRID_V = np.zeros(GRID.n_states)


def axes():
    return plot.figure()[1][0, 0]


PLOT_ROWS = [
    ("plot.figure ncols huge", lambda: plot.figure(10**6), ValueError,
     "ncols must be at most 50"),
    ("plot.figure width NaN", lambda: plot.figure(width=NAN), ValueError, "width"),
    ("plot.figure title number", lambda: plot.figure(title=5), TypeError, "title"),
    ("plot.grid_image cell outside", lambda: plot.grid_image([1.0], [[4, 0]], (4, 4)),
     ValueError, "cells[0] = [4, 0] is outside the 4 x 4 grid"),
    ("plot.grid_image values text", lambda: plot.grid_image("a", [[0, 0]], (4, 4)),
     ValueError, "values must hold real numbers"),
    ("plot.grid_image shape", lambda: plot.grid_image([1.0], [[0, 0]], (4,)), ValueError,
     "shape must be (rows, columns)"),
    ("plot.heatmap image 1-d", lambda: plot.heatmap(axes(), np.zeros(3)), ValueError,
     "image must have 2 dimension(s)"),
    ("plot.heatmap +inf", lambda: plot.heatmap(axes(), np.full((2, 2), INF)), ValueError,
     "image[0, 0] = inf"),
    ("plot.heatmap fmt", lambda: plot.heatmap(axes(), np.zeros((2, 2)), fmt="{:d}"), ValueError,
     "fmt must be a format string"),
    ("plot.heatmap vmin above vmax", lambda: plot.heatmap(axes(), np.zeros((2, 2)), vmin=1,
                                                          vmax=0), ValueError, "vmin=1"),
    ("plot.heatmap annotate text", lambda: plot.heatmap(axes(), np.zeros((2, 2)),
                                                        annotate="no"), ValueError,
     "annotate must be True or False"),
    ("plot.grid_axes shape 0", lambda: plot.grid_axes(axes(), (0, 3)), ValueError,
     "shape rows must be an integer >= 1"),
    ("plot.best_actions action out of range", lambda: plot.best_actions(np.array([0, 7]), 4),
     ValueError, "policy[1] = 7 is not an action in [0, 4)"),
    ("plot.best_actions action -1", lambda: plot.best_actions(np.array([-1]), 4), ValueError,
     "policy[0] = -1 is not an action"),
    ("plot.policy_arrows unknown name", lambda: plot.policy_arrows(
        axes(), np.zeros((1, 2), dtype=int), np.array([0]), ["sideways"]), ValueError,
     "action_names ['sideways'] have no arrow"),
    ("plot.policy_arrows mask shape", lambda: plot.policy_arrows(
        axes(), np.zeros((1, 2), dtype=int), np.array([0]), ["up"], mask=np.ones(3, bool)),
     ValueError, "mask must be bool [1]"),
    ("plot.terminal_states on a string", lambda: plot.terminal_states("grid"), TypeError, "mdp"),
    ("plot.value_map V NaN", lambda: plot.value_map(GRID, np.full(GRID.n_states, NAN)),
     ValueError, "V[0] = nan"),
    ("plot.value_map Q NaN", lambda: plot.value_map(
        GRID, GRID_V, Q=np.full((GRID.n_states, 4), NAN)), ValueError, "Q[0, 0] = nan"),
    ("plot.value_map tol NaN", lambda: plot.value_map(
        GRID, GRID_V, Q=np.zeros((GRID.n_states, 4)), tol=NAN), ValueError,
     "tol must be a finite number >= 0"),
    ("plot.value_map policy action 9", lambda: plot.value_map(
        GRID, GRID_V, policy=np.full(GRID.n_states, 9)), ValueError, "is not an action"),
    ("plot.value_map V shape", lambda: plot.value_map(GRID, np.zeros(3)), ValueError,
     f"V must have shape [{GRID.n_states}]"),
    ("plot.value_map no grid", lambda: plot.value_map(CHAIN, np.zeros(2)), ValueError,
     "this model has no grid"),
    ("plot.mean_band NaN", lambda: plot.mean_band(axes(), None, [[1.0, NAN]]), ValueError,
     "runs[0, 1] = nan"),
    ("plot.mean_band x length", lambda: plot.mean_band(axes(), [1, 2, 3], [[1.0, 2.0]]),
     ValueError, "x must be 2 finite numbers"),
    ("plot.mean_band smooth beyond", lambda: plot.mean_band(axes(), None, [[1.0, 2.0]],
                                                            smooth=3), ValueError,
     "smooth must be at most 2"),
    ("plot.mean_band band_alpha", lambda: plot.mean_band(axes(), None, [[1.0]], band_alpha=2),
     ValueError, "band_alpha must be in [0, 1]"),
    ("plot.mean_band ax", lambda: plot.mean_band("axes", None, [[1.0]]), TypeError,
     "ax must be a matplotlib Axes"),
    ("plot.learning_curve NaN", lambda: plot.learning_curve(np.array([[1.0, NAN]])),
     ValueError, "result[0, 1] = nan"),
    ("plot.learning_curve field", lambda: plot.learning_curve(
        tabular.q_learning(CHAIN, episodes=2), field="rewards"), ValueError,
     "the result has no field 'rewards'"),
    ("plot.frontier NaN", lambda: plot.frontier([NAN], [1.0]), ValueError, "kl[0] = nan"),
    ("plot.frontier lengths", lambda: plot.frontier([0.0, 1.0], [1.0]), ValueError,
     "kl and reward must be"),
    ("plot.frontier negative kl", lambda: plot.frontier([-1.0], [1.0]), ValueError,
     "kl[0] is negative"),
    ("plot.draw_path empty", lambda: plot.draw_path(axes(), np.zeros((0, 2)), "red"),
     ValueError, "cells must be a finite [T, 2] array"),
    ("plot.greedy_path action 99", lambda: plot.greedy_path(GRID, np.full(GRID.n_states, 99)),
     ValueError, "policy[0] = 99 is not an action"),
    ("plot.greedy_path action 0.5", lambda: plot.greedy_path(GRID, np.full(GRID.n_states, 0.5)),
     ValueError, "must hold integer actions"),
    ("plot.greedy_path max_steps", lambda: plot.greedy_path(
        GRID, np.zeros(GRID.n_states, dtype=int), max_steps=10**9), ValueError,
     "max_steps must be at most 1,000,000"),
]

RNG = np.random.default_rng(0)
TESTING_ROWS = [
    ("testing.property_settings 0", lambda: testing.property_settings(0), ValueError,
     "max_examples must be an integer >= 1"),
    ("testing.token_mdps max_len 0", lambda: testing.token_mdps(max_len=0), ValueError,
     "max_len must be an integer >= 1"),
    ("testing.gammas 1.5", lambda: testing.gammas(1.5), ValueError,
     "max_gamma must be in [0, 1]"),
    ("testing.random_policy zero_rate NaN", lambda: testing.random_policy(RNG, 2, 2, NAN),
     ValueError, "zero_rate must be in [0, 1]"),
    ("testing.random_policy rng", lambda: testing.random_policy(0, 2, 2), TypeError,
     "rng must be a numpy.random.Generator"),
    ("testing.random_mdp 0 states", lambda: testing.random_mdp(RNG, 0, 2, 1), ValueError,
     "S must be an integer >= 1"),
    ("testing.random_mdp done_rate NaN", lambda: testing.random_mdp(RNG, 2, 2, 1,
                                                                   done_rate=NAN),
     ValueError, "done_rate must be in [0, 1]"),
    ("testing.random_mdp beyond memory", lambda: testing.random_mdp(RNG, 10**8, 10**4, 4),
     ValueError, "S is too large"),
    ("testing.mdps reward_scale NaN", lambda: testing.mdps(reward_scale=NAN), ValueError,
     "reward_scale must be a finite number >= 0"),
    ("testing.mdps max_states text", lambda: testing.mdps("abc"), ValueError,
     "max_states must be an integer >= 1"),
    ("testing.mdps traps text", lambda: testing.mdps(traps="yes"), ValueError,
     "traps must be True or False"),
    ("testing.acyclic_mdps max_outcomes huge", lambda: testing.acyclic_mdps(max_outcomes=10**6),
     ValueError, "max_outcomes must be at most 1,000"),
    ("testing.policies on a string", lambda: testing.policies("mdp"), TypeError, "mdp"),
    ("testing.policies zero_rate NaN", lambda: testing.policies(CHAIN, zero_rate=NAN),
     ValueError, "zero_rate must be in [0, 1]"),
    ("testing.layouts max_rows 0", lambda: testing.layouts(0), ValueError,
     "max_rows must be an integer >= 1"),
]

LINEAR_ROWS = linear_rows()


def tiny_pipeline():
    return tabular.train_pipeline(envs.load_scenario(), pretrain_epochs=1, sft_epochs=1,
                                  reward_steps=1)


# Issue 45, part 2: the older API at its edges, each kind fixed once in tabular.checks.
HELLO = [("Say hello.", "hello", "Say")]
GRAMMAR_TOKENS = TokenMDP(("Say hello.",), {"hello": 1.0}, max_len=2, grammar=["hello"])
GRAMMAR_POLICY = SoftmaxPolicy.tabular(GRAMMAR_TOKENS.to_mdp().n_states,
                                       GRAMMAR_TOKENS.to_mdp().n_actions)
TOKEN_S, TOKEN_A = TOKENS.to_mdp().n_states, TOKENS.to_mdp().n_actions
EDGE_ROWS = [
    # 1. numbers: NumPy's complex and bool scalars refused as Python's are
    ("value_iteration gamma np.complex128", lambda: tabular.value_iteration(CHAIN, gamma=C128),
     ValueError, "gamma must be a number, got np.complex128"),
    ("value_iteration gamma np.bool_", lambda: tabular.value_iteration(CHAIN, gamma=NP_TRUE),
     ValueError, "gamma must be a number"),
    ("policy_evaluation complex policy", lambda: tabular.policy_evaluation(
        CHAIN, UNIFORM.astype(complex), 0.9), ValueError, "policy must hold numbers"),
    ("schedules.constant np.complex128", lambda: schedules.constant(C128), ValueError,
     "must be a number"),
    ("from_transitions np.complex128 reward", table({0: {0: [(1.0, 0, C128, True)]}}),
     MDPError, "reward np.complex128"),
    ("from_dense complex P", dense(P_OK.astype(complex)), MDPError, "P must hold numbers"),
    ("from_dense R with a bool", dense(P_OK, [True, 0.0]), MDPError, "R[0] is a bool"),
    ("q_learning episodes np.bool_", lambda: tabular.q_learning(CHAIN, episodes=NP_TRUE),
     ValueError, "episodes must be an integer >= 1"),
    ("SoftmaxPolicy bool logits", lambda: SoftmaxPolicy([[True, False]], [0]), ValueError,
     "logits must hold real numbers, got bool"),
    ("SoftmaxPolicy a bool among the logits", lambda: SoftmaxPolicy([[True, 0.5]], [0]),
     ValueError, "logits[0, 0] is a bool"),
    ("SoftmaxPolicy complex logits", lambda: SoftmaxPolicy(np.zeros((1, 2), complex), [0]),
     ValueError, "logits must hold real numbers"),
    # 2. sizes: refused before allocating and before int64, naming the argument passed
    ("batch_prediction max_sweeps 10**30", lambda: tabular.batch_prediction(
        CHAIN, UNIFORM, max_sweeps=10**30), ValueError,
     "max_sweeps must be at most 9,223,372,036,854,775,807"),
    ("differential_sarsa epsilon_block 10**30", lambda: tabular.differential_sarsa(
        APART, epsilon_block=10**30), ValueError, "epsilon_block must be at most"),
    ("q_learning runs 10**10", lambda: tabular.q_learning(CHAIN, runs=10**10), ValueError,
     "runs=10,000,000,000 x episodes=500 is too large"),
    ("ppo iterations 10**12", lambda: tabular.ppo(CHAIN, iterations=10**12), ValueError,
     "iterations=1,000,000,000,000 x episodes_per_batch=8 is too large"),
    ("ppo iterations 10**30", lambda: tabular.ppo(CHAIN, iterations=10**30), ValueError,
     "iterations must be at most 9,223,372,036,854,775,807"),
    ("trpo episodes_per_batch 10**12", lambda: tabular.trpo(
        CHAIN, episodes_per_batch=10**12), ValueError,
     "x episodes_per_batch=1,000,000,000,000 is too large"),
    ("reinforce runs 10**9", lambda: tabular.reinforce(CHAIN, runs=10**9), ValueError,
     "runs=1,000,000,000 x episodes=1,000 is too large"),
    ("kto steps x runs", lambda: tabular.kto(
        TOKENS, TOKEN_POLICY, [("Say hello.", "hello", True)], beta=0.1, steps=10**8,
        kl_samples=1, runs=10**6), ValueError, "runs=1,000,000 x steps=100,000,000 is too large"),
    ("fit_process_reward_model responses x runs", lambda: fit_process_reward_model(
        TOKENS.to_mdp(), TOKEN_POLICY, responses=10**8, completions=1, runs=10**6), ValueError,
     "runs=1,000,000 x responses=100,000,000 is too large"),
    # 3. RLHF inputs through the same checks
    ("SoftmaxPolicy float row_of_state", lambda: SoftmaxPolicy(np.zeros((2, 2)), [0.0, 1.0]),
     ValueError, "row_of_state must hold integer indices"),
    ("SoftmaxPolicy text logits", lambda: SoftmaxPolicy([["0", "1"]], [0]), ValueError,
     "logits must hold real numbers"),
    ("best_of_n text reward", lambda: best_of_n(
        TOKENS.to_mdp(), TOKEN_POLICY, 2, np.full((TOKEN_S, TOKEN_A), "1")), ValueError,
     "reward must hold real numbers"),
    ("best_of_n +inf reward", lambda: best_of_n(
        TOKENS.to_mdp(), TOKEN_POLICY, 2, np.full((TOKEN_S, TOKEN_A), INF)), ValueError,
     "NaN and +inf cannot be ranked"),
    ("bradley_terry_loss counts [True]", lambda: bradley_terry_loss(
        [0.0, 1.0], [0], [1], counts=[True]), ValueError, "counts must hold real numbers"),
    ("bradley_terry_loss float winners", lambda: bradley_terry_loss([0.0, 1.0], [0.0], [1]),
     ValueError, "winners must hold integer indices"),
    ("bradley_terry_loss text scores", lambda: bradley_terry_loss(["0", "1"], [0], [1]),
     ValueError, "scores must hold real numbers"),
    ("process_rewards text potential", lambda: process_rewards(
        TOKENS.to_mdp(), ["a"] * TOKEN_S), ValueError, "potential must hold real numbers"),
    ("process_rewards bool potential", lambda: process_rewards(
        TOKENS.to_mdp(), [True] * TOKEN_S), ValueError, "potential must hold real numbers"),
    ("sample_preferences text scores", lambda: tabular.sample_preferences(
        "x", ["a", "b"], ["1", "2"], 5), ValueError, "scores must hold real numbers"),
    ("sample_preferences response against itself", lambda: tabular.sample_preferences(
        "x", ["a", "a"], [1.0, 2.0], 5), ValueError, "responses must be distinct"),
    ("sample_preferences prompt not text", lambda: tabular.sample_preferences(
        5, ["a", "b"], [1.0, 2.0], 5), ValueError, "prompt must be a string"),
    ("sample_preferences responses one string", lambda: tabular.sample_preferences(
        "x", "ab", [1.0, 2.0], 5), ValueError, "responses must be a list of strings"),
    ("TokenMDP token with a space", lambda: TokenMDP(
        ("Say hello.",), vocab=["hello world", "Say", "hello", "."]), ValueError,
     "vocab[0] = 'hello world' is not one token"),
    ("TokenMDP reward for a non-response", lambda: TokenMDP(("Say hello.",), {"goodbye": 1.0}),
     ValueError, "reward lists 'goodbye', which is not a response"),
    ("TokenMDP reward for a pair of another prompt", lambda: TokenMDP(
        ("Say hello.",), {("Say bye.", "hello"): 1.0}), ValueError,
     "reward lists ('Say bye.', 'hello')"),
    ("pretrain corpus one string", lambda: tabular.pretrain(LM, "a b"), ValueError,
     "corpus must be a list of documents"),
    ("pretrain corpus number", lambda: tabular.pretrain(LM, [5]), ValueError,
     "corpus[0] must be a string"),
    ("dpo preference longer than max_len", lambda: tabular.dpo(
        TOKENS, TOKEN_POLICY, [("Say hello.", "hello hello hello", "hello")], beta=0.1),
     ValueError, "more than the token MDP's max_len=2"),
    ("dpo preference the grammar forbids", lambda: tabular.dpo(
        GRAMMAR_TOKENS, GRAMMAR_POLICY, [("Say hello.", "hello", "Say")], beta=0.1),
     ValueError, "is not a state of this token MDP"),
    ("ppo value_coef 1e300", lambda: tabular.ppo(CHAIN, value_coef=1e300), ValueError,
     "value_coef must be at most 1e+06"),
    ("ppo value_coef overflowing", lambda: tabular.ppo(CHAIN, value_coef=1e6, iterations=20),
     FloatingPointError, "ppo: the updates overflowed the float range"),
    ("kto lambda_u 1e300", labelled(tabular.kto, desirable=False, beta=0.1, lambda_u=1e300),
     ValueError, "lambda_u must be at most 1e+06"),
    ("kto alpha 1e300", labelled(tabular.kto, desirable=False, beta=0.1, alpha=1e300),
     ValueError, "alpha must be at most 1e+06"),
    ("kto_optimum lambda_d 1e300", labelled(tabular.kto_optimum, beta=0.5, lambda_d=1e300),
     ValueError, "lambda_d must be at most 1e+06"),
    ("train_reward_model alpha 1e300", lambda: tabular.train_reward_model(
        [("x", "a", "b")], alpha=1e300), ValueError, "alpha must be at most 1e+06"),
    ("train_reward_model diverging alpha", lambda: tabular.train_reward_model(
        [(2, "x", "a", "b"), ("x", "b", "a")], alpha=1e6, steps=100), ValueError,
     "alpha=1e+06 is too large for these preferences"),
    ("dpo alpha 1e300", lambda: tabular.dpo(TOKENS, TOKEN_POLICY, HELLO, beta=0.1,
                                            alpha=1e300), ValueError, "alpha must be at most"),
    ("sft alpha 1e300", lambda: tabular.sft(LM, [("Say hello.", "hello")], alpha=1e300),
     ValueError, "alpha must be at most 1e+06"),
    ("RLHFPipeline.frontier text betas", lambda: tiny_pipeline().frontier(["0.1"]), ValueError,
     "betas must hold real numbers"),
    ("RLHFPipeline.frontier bool betas", lambda: tiny_pipeline().frontier([True, 0.5]),
     ValueError, "betas[0] is a bool"),
    # 4. errors that name the argument
    ("from_dense empty", dense(np.zeros((0, 0, 0)), np.zeros(0)), MDPError,
     "P of shape (0, 0, 0) has no states or no actions"),
    ("plot.learning_curve empty", lambda: plot.learning_curve(np.zeros(0)), ValueError,
     "result holds no episodes"),
    ("plot.learning_curve 3-d", lambda: plot.learning_curve(np.zeros((2, 2, 2))), ValueError,
     "result must have 1 or 2 dimension(s)"),
    # 5. telemetry: callbacks' metrics checked; a history's memory bounded before it starts
    ("dpo callback metric name not text", lambda: tabular.dpo(
        TOKENS, TOKEN_POLICY, HELLO, beta=0.1, steps=2, history=True,
        callback=lambda i, p, m: {1: 0.0}), ValueError, "callback metric names must be strings"),
    ("dpo callback metric np.complex128", lambda: tabular.dpo(
        TOKENS, TOKEN_POLICY, HELLO, beta=0.1, steps=2, history=True,
        callback=lambda i, p, m: {"x": C128}), ValueError, "callback metric 'x' must be a number"),
    ("dpo callback metric complex", lambda: tabular.dpo(
        TOKENS, TOKEN_POLICY, HELLO, beta=0.1, steps=2, history=True,
        callback=lambda i, p, m: {"x": 1j}), ValueError, "callback metric 'x' must be a number"),
    ("dpo history eval_every 1 over steps 1e8", lambda: tabular.dpo(
        TOKENS, TOKEN_POLICY, HELLO, beta=0.1, steps=1e8, history=True, eval_every=1),
     ValueError, "dpo: eval_every=1 over steps=100,000,000 is too large"),
    ("iterated_dpo history over rounds and runs", lambda: tabular.iterated_dpo(
        TOKENS, TOKEN_POLICY, beta=0.5, rounds=10**6, pairs=1, steps=1, runs=10**6,
        history=True, eval_every=1), ValueError,
     "eval_every=1 over rounds=1,000,000 and runs=1,000,000 is too large"),
    ("ppo history eval_every 1 with runs", lambda: tabular.ppo(
        CHAIN, iterations=10**6, episodes_per_batch=1, runs=100, ref_policy=UNIFORM,
        beta=0.1, history=True, eval_every=1), ValueError,
     "ppo: eval_every=1 over iterations=1,000,000 and runs=100 is too large"),
    # 6. options: reward noise bounded as rewards are
    ("TabularMDP reward_sd bool", lambda: TabularMDP(
        np.zeros((1, 1, 1), int), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1, 1)),
        [1.0], reward_sd=np.ones((1, 1, 1), bool)), MDPError, "reward_sd must hold numbers"),
    ("TabularMDP reward_sd [[[True]]]", lambda: TabularMDP(
        np.zeros((1, 1, 1), int), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1, 1)),
        [1.0], reward_sd=[[[True]]]), MDPError, "reward_sd must hold numbers (not flags)"),
    ("TabularMDP reward_sd 1e300", lambda: TabularMDP(
        np.zeros((1, 1, 1), int), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.ones((1, 1, 1)),
        [1.0], reward_sd=np.full((1, 1, 1), 1e300)), MDPError, "must be in [0, 1e+100]"),
]


CATALOGUE = (MODEL_ROWS + DP_ROWS + list(learner_rows()) + SCHEDULE_ROWS + POLICY_ROWS
             + ENV_ROWS + CAR_RENTAL_ROWS + RACETRACK_ROWS + RLHF_ROWS + BATCH_ROWS + BANDIT_ROWS
             + AVERAGE_REWARD_ROWS + PLANNING_ROWS + RUNNER_ROWS + CORE_ROWS + RLHF_EDGE_ROWS
             + PLOT_ROWS + TESTING_ROWS + EDGE_ROWS + LINEAR_ROWS)


#: after each call, the plot rows' figures are closed
test_bad_input_is_a_clear_error = clear_error_test(CATALOGUE, after=lambda: plt.close("all"))


#: The public modules whose every function the catalogue calls, and the prefix of a row's
#: name there (tabular.rlhf's functions are named bare: most are tabular's too).
COVERED_MODULES = {tabular: "", rlhf: "", tabular.linear: "linear.", plot: "plot.",
                   testing: "testing."}


def public_functions(module) -> list[str]:
    names = getattr(module, "__all__", None) or [
        name for name, value in vars(module).items() if not name.startswith("_")
        and inspect.isfunction(value) and value.__module__ == module.__name__]
    return [name for name in names if callable(getattr(module, name))
            and not isinstance(getattr(module, name), type)]


def rows_elsewhere() -> set[str]:
    """The names of the rows that families keep beside their tests, in a module-level
    ``ROWS`` list of the ``test_*bad_inputs*.py`` files outside this folder (read from
    their source, not imported: a test module is never imported by another)."""
    names = set()
    here = Path(__file__).resolve()
    for path in here.parents[1].rglob("test_*bad_inputs*.py"):
        if path.parent == here.parent:
            continue
        for node in ast.parse(path.read_text()).body:
            if (isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "ROWS" for t in node.targets)
                    and isinstance(node.value, ast.List)):
                names |= {row.elts[0].value.split()[0] for row in node.value.elts
                          if isinstance(row, ast.Tuple) and isinstance(row.elts[0], ast.Constant)}
    return names


def test_the_catalogue_covers_every_public_function():
    # tabular.explore's functions have their rows in tests/explore/test_explore_bad_inputs.py
    covered = ({row[0].split()[0] for row in CATALOGUE} | rows_elsewhere()
               | set(tabular.explore.__all__))
    missing = [prefix + name for module, prefix in COVERED_MODULES.items()
               for name in public_functions(module) if prefix + name not in covered]
    assert not missing, f"no catalogue row calls {missing}"


def test_a_command_line_out_that_is_a_file_fails_before_computing(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("")
    with pytest.raises(SystemExit):
        cli.main(["--out", str(target), "cliff_walking", "--quick"])
    assert "--out" in capsys.readouterr().err


def test_no_actions_is_a_clear_error():
    with pytest.raises(MDPError, match="P lists no actions"):
        TabularMDP.from_transitions({0: {}})


# ---------------------------------------------------------------- valid inputs once refused
def test_merged_probabilities_a_rounding_above_1_are_a_valid_table():
    P = {0: {0: [(p, 0, 0.0, False) for p in (0.33, 0.56, 0.11)]}}
    assert 0.33 + 0.56 + 0.11 > 1.0  # the merged outcome rounds to 1 + ulp
    assert TabularMDP.from_transitions(P).prob[0, 0, 0] == pytest.approx(1.0)


def test_from_gymnasium_takes_a_start_for_a_project_env():
    env = gym.make("tabzoo/CliffWalking-v0")
    start = np.zeros(48)
    start[5] = 1.0
    mdp = TabularMDP.from_gymnasium(env, start=start)
    np.testing.assert_array_equal(mdp.start, start)
    np.testing.assert_array_equal(mdp.prob, env.unwrapped.to_mdp().prob)
