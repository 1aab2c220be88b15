"""Fill numba's on-disk cache with the kernels of every public entry point.

``tabular-warm`` (a console script; also ``python -m tabular.warm`` and ``make warm``;
``make`` runs it once after installing) calls each public function and method that runs
a numba kernel once, on small models of the form every model is stored in
(:mod:`tabular.model.compact`), so that a user's first call loads compiled code instead
of compiling it (seconds per entry point from an empty cache, milliseconds from a warm
one; :mod:`tabular._numba.notice` announces a compile that happens all the same).
Kernels are cached per argument type, and every model built the usual way has the same
types, so what is warmed here serves every model. Where an option selects a kernel of
its own (a DP sweep's ``method``, an ``action_mask``) each is warmed.

:data:`CALLS` holds one call per entry point, :data:`NO_KERNEL` every other public
callable with the reason it needs no warming; ``tests/house/test_first_call.py`` checks that the
two together are the public API. The entry points of :data:`FAMILIES` share kernels
and are warmed one after another in one process; the rest in parallel, one process per
core, and those of :data:`LATER` last.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import cache
from multiprocessing import get_context

import numba
import numpy as np

import tabular
import tabular.rlhf as rlhf
from tabular import SoftmaxPolicy, TabularMDP
from tabular._numba import notice
from tabular.solve.bellman import PARALLEL_MIN_OUTCOMES


# ------------------------------------------------------------------ small models
@cache
def game() -> tabular.GameTree:
    """The smallest game: the maximiser's one move, to a win or a loss."""
    return tabular.GameTree(np.array([[1, 2], [-1, -1], [-1, -1]]), np.array([0.0, 1.0, -1.0]),
                            np.array([False, True, True]), np.array([True, True, True]))


def chain() -> TabularMDP:
    """A two-state chain with a slip (``K = 2``): walk right to the end."""
    next_state = np.array([[[0, 1], [1, 0]], [[1, 1], [1, 1]]])
    prob = np.array([[[0.9, 0.1], [0.8, 0.2]], [[1.0, 0.0], [1.0, 0.0]]])
    reward = np.array([[[-1.0, -1.0], [0.0, -1.0]], [[0.0, 0.0], [1.0, 0.0]]])
    done = np.array([[[False, False], [False, False]], [[True, False], [True, False]]])
    return TabularMDP(next_state, prob, reward, done, np.array([1.0, 0.0]))


@cache
def wide() -> TabularMDP:
    """A corridor with a slip, long enough (``S A K`` at least ``PARALLEL_MIN_OUTCOMES``)
    that the DP solvers sweep it on every thread, through their parallel drivers."""
    S = PARALLEL_MIN_OUTCOMES // 4
    here = np.arange(S)
    next_state = np.stack([np.minimum(here + 1, S - 1), here], axis=-1)[:, None, :]
    next_state = np.repeat(next_state, 2, axis=1)
    prob = np.broadcast_to([0.9, 0.1], next_state.shape)
    done = next_state == S - 1
    return TabularMDP(next_state, prob, np.full(next_state.shape, -1.0), done,
                      np.eye(S)[0])


def _also_wide(call: Callable[[TabularMDP], object]) -> Callable[[], object]:
    """``call(chain())``, then, where numba runs more than one thread, ``call(wide())``:
    the solver's parallel drivers compile only for such a model."""
    def both():
        call(chain())
        if numba.config.NUMBA_NUM_THREADS > 1:
            call(wide())
    return both


def contexts() -> tabular.ContextualArms:
    """Two contexts of two arms with one-hot features."""
    return tabular.ContextualArms(np.eye(4).reshape(2, 2, 4), np.array([0.1, 0.2, 0.3, 0.4]))


@cache
def continuing() -> TabularMDP:
    """A two-state continuing MDP: every transition may reach either state."""
    return TabularMDP.from_dense(np.full((2, 2, 2), 0.5), np.array([[1.0, 0.0], [0.0, 1.0]]))


def uniform(mdp: TabularMDP) -> np.ndarray:
    return np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)


def mask(mdp: TabularMDP) -> np.ndarray:
    """Every action legal: the ``action_mask`` form of the learners' masked kernels."""
    return np.ones((mdp.n_states, mdp.n_actions), dtype=bool)


@cache
def token():
    """``(env, mdp, ref)``: a token MDP of one prompt over {a, b}, up to 2 tokens, and a
    softmax reference."""
    from tabular.envs import TokenMDP

    env = TokenMDP(["a"], lambda prompt, response: float(response.count("a")), vocab=["a", "b"],
                   max_len=2)
    ref = SoftmaxPolicy(np.zeros((env.n_states, len(env.vocab))), np.arange(env.n_states))
    return env, env.to_mdp(), ref


@cache
def preference():
    """The Bradley-Terry preference of :func:`token`'s responses under its reward."""
    return rlhf.bradley_terry_preference(token()[0], token()[2])


def comparisons():
    """``(count, prompt, chosen, rejected)`` comparisons of :func:`token`'s responses."""
    return [(3, "a", "a", "b"), (1, "a", "a b", "b b")]


def feedback():
    """``(count, prompt, response, desirable)`` labels of :func:`token`'s responses."""
    return [(2, "a", "a", True), (1, "a", "b", False)]


@cache
def lm():
    return tabular.pretrain(tabular.NGramLM.create(["a", "b"], 2), ["a b", "b a a"], epochs=2).lm


@cache
def pipeline():
    """The shipped running example, trained briefly."""
    from tabular.envs import load_scenario

    return tabular.train_pipeline(load_scenario(), pretrain_epochs=2, sft_epochs=2,
                                  reward_steps=10)


def _value_iteration():
    tabular.value_iteration(chain(), 0.9, method="inplace")
    for method in ("sync", "blocked"):  # and their sweeps' parallel drivers
        _also_wide(lambda mdp, m=method: tabular.value_iteration(mdp, 0.9, method=m))()
    tabular.value_iteration(chain(), 1.0)  # gamma = 1: the greedy policy that ends


def _control(learner) -> Callable[[], object]:
    """A TD control learner, without and with an action mask (two kernels)."""
    def call():
        learner(chain(), episodes=2)
        return learner(chain(), episodes=2, action_mask=mask(chain()))
    return call


def _pipeline_methods(method: str) -> Callable[[], object]:
    def call():
        ex = pipeline()
        args = {"policy": (ex.base,), "value": (ex.reference,), "optimum": (1.0,),
                "frontier": ([1.0],), "learner_frontier": (tabular.reinforce, [1.0])}
        kwargs = {"learner_frontier": {"episodes": 2}}
        return getattr(ex, method)(*args.get(method, (ex.reference,)), **kwargs.get(method, {}))
    return call


#: One call per public entry point that runs a numba kernel.
CALLS: dict[str, Callable[[], object]] = {
    # dynamic programming
    "value_iteration": _value_iteration,
    "policy_evaluation": lambda: [
        *(tabular.policy_evaluation(chain(), uniform(chain()), 0.9, method=m)
          for m in ("exact", "inplace")),
        _also_wide(lambda mdp: tabular.policy_evaluation(mdp, uniform(mdp), 0.9,
                                                         method="sync"))()],
    "policy_iteration": lambda: tabular.policy_iteration(chain(), 0.9),
    "soft_value_iteration": lambda: [
        tabular.soft_value_iteration(chain(), 0.9, 1.0, method="inplace"),
        _also_wide(lambda mdp: tabular.soft_value_iteration(mdp, 0.9, 1.0, method="sync"))()],
    "terminating_greedy_policy": lambda: tabular.terminating_greedy_policy(
        chain(), np.zeros((2, 2))),
    "bellman_expectation": lambda: tabular.bellman_expectation(chain(), np.zeros(2),
                                                               uniform(chain()), 0.9),
    "bellman_optimality": lambda: tabular.bellman_optimality(chain(), np.zeros(2), 0.9),
    "soft_bellman_optimality": lambda: tabular.soft_bellman_optimality(chain(), np.zeros(2),
                                                                       0.9, 1.0),
    "q_from_v": lambda: tabular.q_from_v(chain(), np.zeros(2), 0.9),
    "relative_value_iteration": lambda: tabular.relative_value_iteration(continuing()),
    "average_reward_solve": lambda: tabular.average_reward_solve(continuing(),
                                                                 uniform(continuing())),
    "finite_horizon": _also_wide(lambda mdp: tabular.finite_horizon(mdp, 2)),
    # two-player games
    "minimax": lambda: tabular.minimax(game()),
    "expectimax": lambda: tabular.expectimax(game(), np.full((3, 2), 0.5)),
    "afterstate_td": lambda: tabular.afterstate_td(game(), np.full((3, 2), 0.5), games=2),
    # bandits
    "epsilon_greedy_bandit": lambda: tabular.epsilon_greedy_bandit(steps=2),
    "ucb_bandit": lambda: tabular.ucb_bandit(steps=2),
    "gradient_bandit": lambda: tabular.gradient_bandit(steps=2),
    # bandits by regret (one kernel family; Gaussian arms for the methods that take them)
    **{name: (lambda name=name: getattr(tabular, name)(tabular.BanditArms((0.5, 0.4)), steps=4))  # type: ignore[misc]  # default-bound lambda
       for name in ("thompson_sampling", "kl_ucb", "bayes_ucb", "moss", "ucb_v",
                    "explore_then_commit", "exp3", "discounted_ucb", "sliding_window_ucb",
                    "discounted_thompson_sampling")},
    "lin_ucb": lambda: tabular.lin_ucb(contexts(), steps=4),
    "linear_thompson_sampling": lambda: tabular.linear_thompson_sampling(contexts(), steps=4),
    # prediction
    "td0": lambda: [tabular.td0(chain(), uniform(chain()), episodes=2, n_step=n)
                    for n in (1, 2)],  # TD(0)'s own loop, and the n-step loop
    # linear function approximation
    "reward_process": lambda: tabular.linear.reward_process(chain(), uniform(chain()),
                                                            gamma=0.9),
    "gradient_mc": lambda: tabular.linear.gradient_mc(chain(), uniform(chain()), np.eye(2),
                                                      episodes=2),
    "semi_gradient_td": lambda: tabular.linear.semi_gradient_td(chain(), uniform(chain()),
                                                                np.eye(2), episodes=2),
    "off_policy_semi_gradient_td": lambda: tabular.linear.off_policy_semi_gradient_td(
        chain(), uniform(chain()), uniform(chain()), np.eye(2), episodes=2, history=True),
    "tdc": lambda: tabular.linear.tdc(chain(), uniform(chain()), uniform(chain()), np.eye(2),
                                      episodes=2, history=True),
    "gtd2": lambda: tabular.linear.gtd2(chain(), uniform(chain()), uniform(chain()),
                                        np.eye(2), episodes=2, history=True),
    "emphatic_td": lambda: tabular.linear.emphatic_td(chain(), uniform(chain()),
                                                      uniform(chain()), np.eye(2), episodes=2,
                                                      history=True),
    "lstd": lambda: tabular.linear.lstd(chain(), uniform(chain()), np.eye(2), episodes=2),
    "semi_gradient_td_lambda": lambda: tabular.linear.semi_gradient_td_lambda(
        chain(), uniform(chain()), np.eye(2), episodes=2, history=True),
    "true_online_linear_td_lambda": lambda: tabular.linear.true_online_linear_td_lambda(
        chain(), uniform(chain()), np.eye(2), episodes=2, history=True),
    "semi_gradient_sarsa": lambda: tabular.linear.semi_gradient_sarsa(
        chain(), tabular.linear.state_action_features(np.eye(2), 2), episodes=2),
    "n_step_semi_gradient_sarsa": lambda: tabular.linear.n_step_semi_gradient_sarsa(
        chain(), tabular.linear.state_action_features(np.eye(2), 2), n_step=2, episodes=2),
    "semi_gradient_sarsa_lambda": lambda: tabular.linear.semi_gradient_sarsa_lambda(
        chain(), tabular.linear.state_action_features(np.eye(2), 2), episodes=2),
    "true_online_linear_sarsa_lambda": lambda: tabular.linear.true_online_linear_sarsa_lambda(
        chain(), tabular.linear.state_action_features(np.eye(2), 2), episodes=2),
    "differential_semi_gradient_sarsa": lambda: tabular.linear.differential_semi_gradient_sarsa(
        continuing(), tabular.linear.state_action_features(np.eye(2), 2), steps=2),
    "mc_prediction": lambda: tabular.mc_prediction(chain(), uniform(chain()), episodes=2),
    "off_policy_mc_prediction": lambda: tabular.off_policy_mc_prediction(
        chain(), uniform(chain()), uniform(chain()), episodes=2),
    "batch_prediction": lambda: tabular.batch_prediction(chain(), uniform(chain()),
                                                         episodes=2),
    "offline_lambda_return": lambda: tabular.offline_lambda_return(
        chain(), uniform(chain()), lam=0.5, episodes=2),
    "td_lambda": lambda: tabular.td_lambda(chain(), uniform(chain()), lam=0.5, episodes=2),
    "true_online_td_lambda": lambda: tabular.true_online_td_lambda(
        chain(), uniform(chain()), lam=0.5, episodes=2),
    # control
    "sarsa": _control(tabular.sarsa),
    "expected_sarsa": _control(tabular.expected_sarsa),
    "q_learning": _control(tabular.q_learning),
    "double_q_learning": _control(tabular.double_q_learning),
    "mc_control": lambda: tabular.mc_control(chain(), episodes=2),
    "n_step_sarsa": lambda: tabular.n_step_sarsa(chain(), n_step=2, episodes=2),
    "n_step_expected_sarsa": lambda: tabular.n_step_expected_sarsa(chain(), n_step=2,
                                                                   episodes=2),
    "off_policy_n_step_sarsa": lambda: tabular.off_policy_n_step_sarsa(chain(), n_step=2,
                                                                       episodes=2),
    "tree_backup": lambda: tabular.tree_backup(chain(), n_step=2, episodes=2),
    "q_sigma": lambda: tabular.q_sigma(chain(), n_step=2, episodes=2),
    "sarsa_lambda": lambda: tabular.sarsa_lambda(chain(), lam=0.5, episodes=2),
    "watkins_q_lambda": lambda: tabular.watkins_q_lambda(chain(), lam=0.5, episodes=2),
    "true_online_sarsa_lambda": lambda: tabular.true_online_sarsa_lambda(chain(), lam=0.5,
                                                                         episodes=2),
    "differential_sarsa": lambda: tabular.differential_sarsa(continuing(), steps=2),
    "r_learning": lambda: tabular.r_learning(continuing(), steps=2),
    "ucbvi": lambda: tabular.ucbvi(chain(), horizon=2, episodes=2),
    "psrl": lambda: tabular.psrl(chain(), horizon=2, episodes=2),
    "rlsvi": lambda: tabular.rlsvi(chain(), horizon=2, episodes=2),
    "optimistic_q_learning": lambda: tabular.optimistic_q_learning(chain(), horizon=2,
                                                                   episodes=2),
    "epsilon_greedy_q_learning": lambda: tabular.epsilon_greedy_q_learning(chain(), horizon=2,
                                                                           episodes=2),
    "ucrl2": lambda: tabular.ucrl2(continuing(), steps=2),
    "mbie_eb": lambda: tabular.mbie_eb(continuing(), steps=2),
    "rmax": lambda: tabular.rmax(continuing(), steps=2),
    "delayed_q_learning": lambda: tabular.delayed_q_learning(continuing(), steps=2),
    # planning
    "dyna_q": lambda: tabular.dyna_q(chain(), planning_steps=1, episodes=2),
    "dyna_q_plus": lambda: tabular.dyna_q_plus(chain(), planning_steps=1, episodes=2),
    "prioritized_sweeping": lambda: tabular.prioritized_sweeping(chain(), planning_steps=1,
                                                                 episodes=2),
    "uniform_expected_updates": lambda: tabular.uniform_expected_updates(
        chain(), updates=4, evaluate_every=2),
    "trajectory_sampling": lambda: tabular.trajectory_sampling(chain(), updates=4,
                                                               evaluate_every=2),
    # policy gradients
    "reinforce": lambda: tabular.reinforce(chain(), gamma=0.9, episodes=2),
    "actor_critic": lambda: tabular.actor_critic(chain(), gamma=0.9, episodes=2),
    "ppo": lambda: [tabular.ppo(chain(), gamma=0.9, iterations=1, episodes_per_batch=2),
                    # with a history: its batch sampler and clip fraction
                    tabular.ppo(token()[1], token()[2], ref_policy=token()[2], beta=1.0,
                                iterations=1, episodes_per_batch=2, history=True)],
    "trpo": lambda: tabular.trpo(chain(), gamma=0.9, iterations=1, episodes_per_batch=2),
    # the language model and the reward model
    "pretrain": lm,
    "sft": lambda: tabular.sft(lm(), [(1, "a", "b")], epochs=2),
    "NGramLM.generate": lambda: lm().generate("a", max_len=2),
    "NGramLM.log_prob": lambda: lm().log_prob("a", "b"),
    "NGramLM.next_token_probs": lambda: lm().next_token_probs(lm().encode("a")),
    "NGramLM.policy": lambda: lm().policy(token()[0]),
    "sample_preferences": lambda: tabular.sample_preferences("p", ["u", "v"], [1.0, 0.0], 2),
    "train_reward_model": lambda: tabular.train_reward_model([(1, "p", "u", "v")], steps=2),
    "bradley_terry_loss": lambda: rlhf.bradley_terry_loss(np.zeros(2), [0], [1]),
    # RLHF on the token MDP
    "ending_probabilities": lambda: rlhf.ending_probabilities(token()[1], token()[2]),
    "kl_optimum": lambda: tabular.kl_optimum(token()[1], token()[2], 1.0),
    "prefix_values": lambda: rlhf.prefix_values(token()[1], token()[2]),
    "process_rewards": lambda: rlhf.process_rewards(token()[1], np.zeros(token()[1].n_states)),
    "distill": lambda: [rlhf.distill(token()[1], token()[2], token()[2], learner=learner,
                                     **({"iterations": 1} if learner == "ppo" else
                                        {"episodes": 2}))
                        for learner in ("reinforce", "actor_critic", "ppo")],
    "response_distribution": lambda: rlhf.response_distribution(token()[0], token()[2]),
    "dpo": lambda: tabular.dpo(token()[0], token()[2], comparisons(), beta=1.0, steps=2),
    "iterated_dpo": lambda: tabular.iterated_dpo(token()[0], token()[2], beta=1.0, rounds=1,
                                                 pairs=2, steps=2),
    "kto": lambda: tabular.kto(token()[0], token()[2], feedback(), beta=1.0, steps=2),
    "kto_optimum": lambda: tabular.kto_optimum(token()[0], token()[2], feedback(), beta=0.5),
    "grpo": lambda: [tabular.grpo(token()[1], token()[2], iterations=1, group_size=2,
                                  **telemetry)
                     for telemetry in ({}, {"ref_policy": token()[2], "beta": 1.0,
                                            "history": True})],
    "group_relative_advantages": lambda: rlhf.group_relative_advantages(np.zeros(2)),
    "expected_update": lambda: [rlhf.expected_update(token()[1], token()[2], group_size=2,
                                                     **options)
                                for options in ({}, {"advantage": "rloo"}, {"samples": 2,
                                                                            "max_groups": 1})],
    "expected_fixed_point": lambda: rlhf.expected_fixed_point(
        token()[1], token()[2], ref_policy=token()[2], beta=1.0, iterations=2, group_size=2),
    "bradley_terry_preference": lambda: preference(),
    "preference_table": lambda: rlhf.preference_table(
        token()[0], {"a": (["a", "b"], [[0.5, 0.7], [0.3, 0.5]])}),
    "nash_equilibrium": lambda: rlhf.nash_equilibrium(token()[0], token()[2], preference(),
                                                      beta=1.0),
    "preference_gap": lambda: rlhf.preference_gap(token()[0], token()[2], token()[2],
                                                  preference(), beta=1.0),
    "nash_md": lambda: rlhf.nash_md(token()[0], token()[2], preference(), beta=1.0,
                                    iterations=2),
    "loss_optimum": lambda: rlhf.loss_optimum(token()[0], token()[2], preference(), beta=1.0),
    "sampled_nash_md": lambda: rlhf.sampled_nash_md(token()[0], token()[2], beta=1.0,
                                                    iterations=2, pairs=2),
    "fit_process_reward_model": lambda: rlhf.fit_process_reward_model(
        token()[1], token()[2], responses=2, completions=1),
    "train_pipeline": pipeline,
    **{f"RLHFPipeline.{method}": _pipeline_methods(method)
       for method in ("policy", "answer_distribution", "correct_rate", "value", "optimum",
                      "measure", "frontier", "learner_frontier")},
}

#: Entry points that share kernels: warmed in this order, in one process.
FAMILIES: tuple[tuple[str, ...], ...] = (
    ("value_iteration", "terminating_greedy_policy"),
    ("offline_lambda_return", "td_lambda", "true_online_td_lambda"),
    ("n_step_sarsa", "n_step_expected_sarsa", "off_policy_n_step_sarsa", "tree_backup",
     "q_sigma"),
    ("sarsa_lambda", "watkins_q_lambda", "true_online_sarsa_lambda"),
    ("dyna_q", "dyna_q_plus", "prioritized_sweeping"),
    ("reinforce", "actor_critic"),
    ("tdc", "gtd2"),
    ("semi_gradient_td_lambda", "true_online_linear_td_lambda"),
    ("semi_gradient_sarsa_lambda", "true_online_linear_sarsa_lambda"),
    ("policy_evaluation", "policy_iteration", "q_from_v", "finite_horizon",
     "average_reward_solve", "prefix_values", "process_rewards"),
    ("bellman_optimality", "relative_value_iteration"),
    ("ending_probabilities", "response_distribution", "kl_optimum"),
    ("bradley_terry_preference", "preference_table", "nash_equilibrium", "preference_gap",
     "nash_md", "loss_optimum"),
    ("pretrain", "sft", "NGramLM.generate", "NGramLM.log_prob", "NGramLM.next_token_probs",
     "NGramLM.policy"),
    ("sample_preferences", "train_reward_model", "bradley_terry_loss"),
    ("thompson_sampling", "kl_ucb", "bayes_ucb", "moss", "ucb_v", "explore_then_commit",
     "exp3", "discounted_ucb", "sliding_window_ucb", "discounted_thompson_sampling"),
    ("lin_ucb", "linear_thompson_sampling"),
)

#: Entry points made of the others' kernels, warmed once all the rest are, so that they
#: load those kernels rather than compile them again beside the process compiling them.
LATER: tuple[tuple[str, ...], ...] = (
    ("train_pipeline", *(name for name in CALLS if name.startswith("RLHFPipeline."))),
    ("distill",),
)

_RECORD = "a result record: holds arrays and reads them, runs no kernel"
_NUMPY = "runs no numba kernel (NumPy only; compiles nothing from an empty cache)"

#: Every other public callable, and why it needs no warming.
NO_KERNEL: dict[str, str] = {
    **dict.fromkeys(
        ["BanditResult", "ControlResult", "ControlResult.V", "ControlResult.policy",
         "DifferentialResult", "DifferentialResult.policy", "ExpectedUpdatesResult",
         "ExpectedUpdatesResult.policy", "ExpectedUpdatesResult.runs", "PlanningResult",
         "PlanningResult.control", "PolicyGradientResult", "PolicyGradientResult.policy",
         "PredictionResult", "TrustRegionResult", "BestOfN", "DPOResult", "Frontier",
         "SampledNashMDResult",
         "Frontier.objective", "FrontierPoint", "IteratedDPOResult", "KLOptimum",
         "KTOOptimum", "KTOResult", "ProcessRewardModel", "ProcessRewardModel.runs",
         "RLHFPipeline", "RewardModel", "LinearPredictionResult", "LinearPredictionResult.V",
         "LinearControlResult", "LinearControlResult.Q", "LinearControlResult.V",
         "LinearControlResult.policy", "LinearDifferentialResult", "LinearDifferentialResult.Q",
         "LinearDifferentialResult.policy",
         "RewardProcess", "RewardProcess.n_states", "TrainingHistory", "TrainingHistory.names",
         "TrainingHistory.runs", "TrainingHistory.run", "GameTree", "GameTree.n_positions",
         "GameTree.n_moves", "GameTree.legal", "GameValues",
         "ExplorationResult", "RegretResult", "AverageRegretResult", "UCRL2Result", "Hardness",
         "DiscountedResult", "SampleComplexityResult", "GRPOResult", "GRPOConfig",
         "GRPOConfig.folds_k1", "GRPOConfig.loss", "ExpectedUpdate", "FixedPoint",
         "PreferenceModel", "PreferenceModel.conditional", "LossOptimum", "NashEquilibrium",
         "NashMDResult", "BanditRegretResult"], _RECORD),
    **dict.fromkeys(
        ["TabularMDP", "TabularMDP.n_states", "TabularMDP.n_actions", "TabularMDP.n_outcomes",
         "TabularMDP.arrays", "TabularMDP.start_cdf", "TabularMDP.expected_reward",
         "TabularMDP.transition_matrix", "TabularMDP.state_name", "TabularMDP.action_name",
         "TabularMDP.from_transitions", "TabularMDP.from_gymnasium", "TabularMDP.from_dense",
         "TabularMDP.from_arrays", "SoftmaxPolicy", "SoftmaxPolicy.tabular",
         "SoftmaxPolicy.n_states", "SoftmaxPolicy.n_actions", "SoftmaxPolicy.copy",
         "SoftmaxPolicy.row_probs", "SoftmaxPolicy.row_log_probs", "SoftmaxPolicy.probs",
         "SoftmaxPolicy.log_probs", "NGramLM", "NGramLM.create", "NGramLM.token_id",
         "NGramLM.eos_id", "NGramLM.encode", "NGramLM.row", "NGramLM.with_logits",
         "RewardModel.score", "greedy_policy", "optimal_actions", "soft_policy", "seed_states",
         "branching_task", "kl_objective", "sequence_kl", "expected_return",
         "visit_probabilities", "path_returns", "response_path", "best_of_n",
         "value_error", "bellman_error", "bellman_error_vector", "projected_bellman_error",
         "ve_minimiser", "td_fixed_point", "expected_td_update", "expected_tdc_update",
         "expected_gtd2_update", "expected_emphasis", "expected_emphatic_td_update",
         "emphatic_fixed_point", "one_hot", "state_aggregation", "polynomial", "fourier",
         "tile_coding", "state_coordinates", "state_action_features", "afterstate_greedy",
         "lai_robbins_constant"],
        _NUMPY),
    **dict.fromkeys(["regret", "average_regret", "hardness", "sample_complexity"],
                    "NumPy, and the kernels of finite_horizon, value_iteration and "
                    "policy_evaluation, which are warmed as those"),
    "ScenarioData": "a protocol: the fields a scenario gives train_pipeline",
    "ScenarioData.env": "a protocol's method: each scenario class implements it",
    "td_control": "makes a learner of the user's own target: its kernel is compiled for "
                  "that target, cached beside the user's file",
}


def jobs() -> list[list[tuple[str, ...]]]:
    """The entry points of :data:`CALLS` in two phases of groups, each group warmed in
    one process: the :data:`FAMILIES` and every other entry point on its own, the
    slowest first so that the parallel processes finish together; then :data:`LATER`."""
    grouped = {name for group in FAMILIES + LATER for name in group}
    groups = [*FAMILIES, *((name,) for name in CALLS if name not in grouped)]

    def seconds(group):
        return sum(notice.reference_seconds().get(name, 5.0) for name in group)
    return [sorted(groups, key=seconds, reverse=True), list(LATER)]


def warm(group: tuple[str, ...]) -> list[tuple[str, float | str, float | None]]:
    """``[(name, seconds, cpu)]``: each entry point of ``group`` called once, with the
    seconds its call took (its compilation, from an empty cache), or the error it
    raised in place of the seconds, and its CPU seconds where it compiled a kernel of
    this package (``None`` where the cache served it): this machine's first call."""
    from numba.core import event

    notice.set_quiet()  # this command reports each entry point itself
    times: list[tuple[str, float | str, float | None]] = []
    for name in group:
        recorder = event.RecordingListener()
        start, cpu = time.perf_counter(), time.process_time()
        try:
            with event.install_listener("numba:compile", recorder):
                CALLS[name]()
        except Exception as error:  # noqa: BLE001 - reported; the others are warmed all the same
            times.append((name, f"{type(error).__name__}: {error}", None))
            continue
        compiled = any(ev.data["dispatcher"].py_func.__module__.startswith("tabular")
                       for _, ev in recorder.buffer)
        times.append((name, time.perf_counter() - start,
                      time.process_time() - cpu if compiled else None))
    return times


def _measure_one(name: str) -> dict:
    """Compile ``name``'s kernels from an empty cache in a new process; what it took."""
    with tempfile.TemporaryDirectory(prefix="tabular-warm-") as cache_dir:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, notice.QUIET_VARIABLE: "1"}
        done = subprocess.run([sys.executable, "-m", "tabular.warm", "--one", name], env=env,
                              check=True, capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])


#: The models an entry point's call builds with kernels of other entry points: built
#: before ``--measure`` times the call.
_NEEDS = {"sft": lm, "NGramLM.generate": lm, "NGramLM.log_prob": lm,
          "RLHFPipeline.answer_distribution": pipeline, "RLHFPipeline.correct_rate": pipeline}


def _one(name: str) -> None:
    """``--one``: the seconds (and the CPU seconds: compiling is single-threaded, so
    those hardly depend on the machine's load) and the kernels compiled by ``name``'s
    call, as one JSON line."""
    from numba.core import event

    if name in _NEEDS:
        _NEEDS[name]()
    recorder = event.RecordingListener()
    with event.install_listener("numba:compile", recorder):
        start, cpu = time.perf_counter(), time.process_time()
        CALLS[name]()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    kernels = sorted({f"{fn.__module__}.{fn.__qualname__}" for fn in
                      (ev.data["dispatcher"].py_func for _, ev in recorder.buffer)
                      if fn.__module__.startswith("tabular")})
    print(json.dumps({"name": name, "seconds": seconds, "cpu": cpu, "kernels": kernels}))


def write_measurements(cpu: dict[str, float], jobs: int) -> None:
    """Write measured first-call CPU seconds (rounded up to a tenth) into the package's
    data file (:data:`tabular._numba.notice.DATA_FILE`: the other entry points keep
    theirs) and into this machine's record, for the notice."""
    import platform

    data = json.loads(notice.DATA_FILE.read_text())
    data["seconds"].update({name: float(np.ceil(seconds * 10) / 10)
                            for name, seconds in cpu.items()})
    data["seconds"] = {name: data["seconds"][name] for name in CALLS if name in data["seconds"]}
    data["machine"] = (f"{platform.machine()}, {os.cpu_count()} CPUs, {jobs} measured at once, "
                       f"load {os.getloadavg()[0]:.1f} at the end")
    data["measured"] = (f"{time.strftime('%Y-%m-%d')}, numba {numba.__version__}, "
                        f"{len(cpu)} of {len(CALLS)} entry points")
    try:
        notice.DATA_FILE.write_text(json.dumps(data, indent=1) + "\n")
    except OSError as error:
        print(f"tabular-warm: could not write {notice.DATA_FILE}: {error}", file=sys.stderr)
    notice.reference_seconds.cache_clear()
    notice.write_record(seconds={name: round(seconds, 1) for name, seconds in cpu.items()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tabular-warm", description="Compile the numba kernels of every public entry "
        "point of tabular into numba's on-disk cache, so that first calls load them.")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="processes compiling at once (default: one per core)")
    parser.add_argument("--list", action="store_true", help="print the entry points and exit")
    parser.add_argument("--measure", action="store_true",
                        help="time each entry point's compilation from an empty cache, one "
                        "fresh process each, and write the CPU seconds to the data file the "
                        "first-call notice reads (tabular/_numba/compile_seconds.json)")
    parser.add_argument("names", nargs="*", help="with --measure: only these entry points")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        _one(args.one)
        return 0
    if args.list:
        print("\n".join(CALLS))
        return 0
    start = time.perf_counter()
    if args.measure:
        names = args.names or list(CALLS)
        measured = {}
        with ProcessPoolExecutor(args.jobs) as pool:
            for got in pool.map(_measure_one, names):
                print(f"{got['name']:>34}: {got['seconds']:6.2f} s, {got['cpu']:6.2f} s CPU, "
                      f"{len(got['kernels'])} kernels", flush=True)
                measured[got["name"]] = got["cpu"]
        write_measurements(measured, jobs=args.jobs)
        print(f"measured in {time.perf_counter() - start:.1f} s; written to {notice.DATA_FILE}")
        return 0
    # spawn: each process imports tabular afresh (a fork would share the parent's numba state)
    failed, own = [], {}
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        for phase in jobs():
            for done in as_completed([pool.submit(warm, group) for group in phase]):
                for name, seconds, cpu in done.result():
                    if isinstance(seconds, str):
                        failed.append(name)
                        print(f"{name:>34}: FAILED, {seconds}", file=sys.stderr, flush=True)
                    else:
                        print(f"{name:>34}: {seconds:6.2f} s", flush=True)
                    if cpu is not None:
                        own[name] = round(cpu, 1)
    # this machine's first calls, for the notice (phase 2 loads phase 1's kernels: its
    # figures are of what was left to compile, and only the entry points that compiled)
    notice.write_record(announced=own, seconds=own)
    print(f"tabular-warm: {len(CALLS) - len(failed)} of {len(CALLS)} entry points warm in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
