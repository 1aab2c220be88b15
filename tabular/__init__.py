"""Tabular reinforcement learning: one model format, Numba kernels, exact ground truth.

The model
    :class:`TabularMDP` (padded ``[S, A, K]`` arrays and a start distribution; from
    a Gymnasium env, a dense ``P[s, a, s']``, a transition table or the stored form,
    :meth:`TabularMDP.from_arrays`), :class:`MDPError`; stored compactly and chosen
    automatically (:mod:`tabular.model.compact`: int32 successors carrying ``done``, codes
    into the distinct ``(prob, reward)`` pairs, no probability when ``K = 1``).

Dynamic programming (exact, :mod:`tabular.solve.dp`, :mod:`tabular.solve.bellman`)
    :func:`policy_evaluation`, :func:`value_iteration`, :func:`policy_iteration`,
    :func:`soft_value_iteration` (``method="sync" | "inplace" | "exact"`` where it
    applies, and ``"blocked"`` for value iteration: Gauss-Seidel in parallel blocks;
    ``strict=`` on every iterative solver, :class:`ConvergenceError`); the Bellman
    operators :func:`bellman_expectation`, :func:`bellman_optimality`,
    :func:`soft_bellman_optimality`, :func:`q_from_v`; the policies they read off,
    :func:`greedy_policy`, :func:`optimal_actions`, :func:`terminating_greedy_policy`,
    :func:`soft_policy`.

Two-player games (:mod:`tabular.solve.games`, :mod:`tabular.learn.afterstates`)
    :class:`GameTree`, :func:`minimax`, :func:`expectimax` (backward induction, exact;
    :class:`GameValues`) and section 1.5's learning player :func:`afterstate_td` with
    its greedy policy :func:`afterstate_greedy` (``tabular.envs.TicTacToe``).

Average reward and finite horizons
    (:mod:`tabular.solve.average_reward`, :mod:`tabular.learn.differential`)
    :func:`relative_value_iteration`, :func:`average_reward_solve` (the gain and bias
    of a unichain policy), :func:`finite_horizon` (backward induction);
    :func:`differential_sarsa` (section 10.3) and :func:`r_learning` (Schwartz, 1993)
    learn the average reward from samples.

Bandits (:mod:`tabular.learn.bandits`)
    :func:`epsilon_greedy_bandit`, :func:`ucb_bandit`, :func:`gradient_bandit` on a
    :class:`BanditTestbed` (chapter 2), each returning a :class:`BanditResult`;
    (:mod:`tabular.learn.bandit_regret`) :func:`thompson_sampling`, :func:`kl_ucb`,
    :func:`bayes_ucb`, :func:`moss`, :func:`ucb_v`, :func:`explore_then_commit`, :func:`exp3` on
    :class:`BanditArms` of known means, returning a :class:`RegretResult` (regret,
    pseudo-regret, pulls); :func:`lai_robbins_constant` of an instance; for means that
    change, :func:`discounted_ucb`, :func:`sliding_window_ucb`,
    :func:`discounted_thompson_sampling`; (:mod:`tabular.learn.contextual_bandits`)
    :func:`lin_ucb`, :func:`linear_thompson_sampling` on :class:`ContextualArms`.

Learning from samples
    Every learner takes ``seed=`` (same seed, same numbers) and ``runs=`` (``None``: one
    run, no run axis; ``n``: a leading run axis of length ``n``, ``result.run(i)`` one
    of them); step sizes ``alpha`` (``alpha_value`` for a learned state value) and
    exploration may be :mod:`tabular.schedules`.

    - prediction, a :class:`PredictionResult`: :func:`td0` (n-step with ``n_step=``),
      :func:`mc_prediction`, :func:`off_policy_mc_prediction` (ordinary and weighted
      importance sampling), :func:`batch_prediction` (batch TD(0) and MC, section 6.3),
      :func:`offline_lambda_return`, :func:`td_lambda`, :func:`true_online_td_lambda`
      (chapter 12);
    - control, a :class:`ControlResult`: :func:`sarsa`, :func:`expected_sarsa`,
      :func:`q_learning`, :func:`double_q_learning`, :func:`mc_control`; n-step
      (chapter 7) :func:`n_step_sarsa`, :func:`n_step_expected_sarsa`,
      :func:`off_policy_n_step_sarsa`, :func:`tree_backup`, :func:`q_sigma`; traces
      (chapter 12) :func:`sarsa_lambda`, :func:`true_online_sarsa_lambda`,
      :func:`watkins_q_lambda`; your own one-step rule as a learner:
      :func:`td_control` (docs/own_rule.md);
    - planning with a learned model (chapter 8), a :class:`PlanningResult`:
      :func:`dyna_q`, :func:`dyna_q_plus`, :func:`prioritized_sweeping` (``switch=``
      for a maze that changes, :mod:`tabular.envs.mazes`); expected updates spread uniformly or
      along trajectories, an :class:`ExpectedUpdatesResult`:
      :func:`uniform_expected_updates`, :func:`trajectory_sampling` on
      :func:`branching_task` tasks (section 8.6);
    - policy gradients, a :class:`PolicyGradientResult` of a :class:`SoftmaxPolicy`:
      :func:`reinforce`, :func:`actor_critic`, :func:`ppo` (clipped or adaptive KL,
      minibatches) and :func:`trpo` (a :class:`TrustRegionResult`, with the KL of every
      step).

RLHF on the token MDP (:mod:`tabular.rlhf`, :mod:`tabular.rlhf.lm`)
    :class:`NGramLM`, :func:`pretrain`, :func:`sft`; the reward model
    (:func:`sample_preferences`, :func:`train_reward_model`, :class:`RewardModel`);
    the exact optimum and objective (:func:`kl_optimum`, :func:`kl_objective`,
    :func:`sequence_kl`); :func:`dpo` (and IPO), :func:`iterated_dpo` (online, on
    comparisons sampled from the current policy), :func:`kto` (unpaired labels; its
    optimum :func:`kto_optimum`), :func:`grpo` (and its RLOO and ReMax variants), and
    :func:`reinforce`, :func:`actor_critic`, :func:`ppo`, :func:`trpo` with ``ref_policy=``
    and the KL coefficient ``beta=``; :func:`train_pipeline` trains a scenario end to end
    (:class:`RLHFPipeline`); best-of-N sampling (:func:`best_of_n`), on-policy
    distillation (:func:`distill`), process rewards (:func:`process_rewards`,
    :func:`prefix_values`, :func:`fit_process_reward_model`) and the exact sums over
    the prefix tree (:func:`response_distribution`, :func:`visit_probabilities`,
    :func:`ending_probabilities`, :func:`expected_return`, :func:`path_returns`); every
    function of :mod:`tabular.rlhf` is here too.

Exploration with exact regret (:mod:`tabular.explore`)
    Episodic learners that record the policy of every episode: :func:`ucbvi`,
    :func:`psrl`, :func:`rlsvi`, :func:`optimistic_q_learning`,
    :func:`epsilon_greedy_q_learning` (an :class:`ExplorationResult`); :func:`regret`
    (exact, a :class:`RegretResult`) and :func:`hardness` (diameter, gaps, spans,
    communication class; a :class:`Hardness`); average reward: :func:`ucrl2` (a
    :class:`UCRL2Result`) and :func:`average_regret` (an :class:`AverageRegretResult`);
    discounted: :func:`mbie_eb`, :func:`rmax`, :func:`delayed_q_learning` (a
    :class:`DiscountedResult`) and
    :func:`sample_complexity` (a :class:`SampleComplexityResult`).

Not imported here (import them by name): :mod:`tabular.plot` (value heatmaps, policy
arrows, learning curves with confidence bands; needs matplotlib),
:mod:`tabular.testing` (hypothesis strategies for random MDPs, policies and layouts)
and :mod:`tabular.model.graph` (reachability on the model's transition graph).

Environments are in :mod:`tabular.envs` (Gymnasium, namespace ``tabzoo/``).
"""

from tabular._numba import notice as _notice
from tabular._numba.rng import seed_states
from tabular.explore import (
    AverageRegretResult,
    DiscountedResult,
    ExplorationResult,
    Hardness,
    RegretResult,
    SampleComplexityResult,
    UCRL2Result,
    average_regret,
    delayed_q_learning,
    epsilon_greedy_q_learning,
    hardness,
    mbie_eb,
    optimistic_q_learning,
    psrl,
    regret,
    rlsvi,
    rmax,
    sample_complexity,
    ucbvi,
    ucrl2,
)
from tabular.learn import (
    BanditArms,
    BanditRegretResult,
    BanditResult,
    BanditTestbed,
    ContextualArms,
    ControlResult,
    DifferentialResult,
    PredictionResult,
    afterstate_greedy,
    afterstate_td,
    batch_prediction,
    bayes_ucb,
    differential_sarsa,
    discounted_thompson_sampling,
    discounted_ucb,
    double_q_learning,
    epsilon_greedy_bandit,
    exp3,
    expected_sarsa,
    explore_then_commit,
    gradient_bandit,
    kl_ucb,
    lai_robbins_constant,
    lin_ucb,
    linear_thompson_sampling,
    mc_control,
    mc_prediction,
    moss,
    n_step_expected_sarsa,
    n_step_sarsa,
    off_policy_mc_prediction,
    off_policy_n_step_sarsa,
    offline_lambda_return,
    q_learning,
    q_sigma,
    r_learning,
    sarsa,
    sarsa_lambda,
    sliding_window_ucb,
    td0,
    td_control,
    td_lambda,
    thompson_sampling,
    tree_backup,
    true_online_sarsa_lambda,
    true_online_td_lambda,
    ucb_bandit,
    ucb_v,
    watkins_q_lambda,
)
from tabular.model import MDPError, SoftmaxPolicy, TabularMDP
from tabular.pg import PolicyGradientResult, TrustRegionResult, actor_critic, ppo, reinforce, trpo
from tabular.plan import (
    ExpectedUpdatesResult,
    PlanningResult,
    branching_task,
    dyna_q,
    dyna_q_plus,
    prioritized_sweeping,
    trajectory_sampling,
    uniform_expected_updates,
)
from tabular.rlhf import (
    NGramLM,
    RewardModel,
    RLHFPipeline,
    best_of_n,
    bradley_terry_loss,
    bradley_terry_preference,
    distill,
    dpo,
    ending_probabilities,
    expected_fixed_point,
    expected_return,
    expected_update,
    fit_process_reward_model,
    group_relative_advantages,
    grpo,
    iterated_dpo,
    kl_objective,
    kl_optimum,
    kto,
    kto_optimum,
    loss_optimum,
    nash_equilibrium,
    nash_md,
    path_returns,
    preference_gap,
    preference_table,
    prefix_values,
    pretrain,
    process_rewards,
    response_distribution,
    response_path,
    sample_preferences,
    sampled_nash_md,
    sequence_kl,
    sft,
    train_pipeline,
    train_reward_model,
    visit_probabilities,
)
from tabular.solve import (
    ConvergenceError,
    GameTree,
    GameValues,
    average_reward_solve,
    bellman_expectation,
    bellman_optimality,
    expectimax,
    finite_horizon,
    greedy_policy,
    minimax,
    optimal_actions,
    policy_evaluation,
    policy_iteration,
    q_from_v,
    relative_value_iteration,
    soft_bellman_optimality,
    soft_policy,
    soft_value_iteration,
    terminating_greedy_policy,
    value_iteration,
)

__version__ = "0.1.0"

__all__ = [
    "AverageRegretResult", "BanditArms", "BanditRegretResult", "BanditResult", "BanditTestbed",
    "ContextualArms", "ControlResult", "ConvergenceError", "DifferentialResult",
    "DiscountedResult", "ExpectedUpdatesResult", "ExplorationResult", "GameTree", "GameValues",
    "Hardness", "MDPError", "NGramLM", "PlanningResult", "PolicyGradientResult",
    "PredictionResult", "RLHFPipeline", "RegretResult", "RewardModel",
    "SampleComplexityResult", "SoftmaxPolicy", "TabularMDP", "TrustRegionResult",
    "UCRL2Result", "actor_critic", "afterstate_greedy", "afterstate_td", "average_regret",
    "average_reward_solve", "batch_prediction", "bayes_ucb", "bellman_expectation",
    "bellman_optimality", "best_of_n", "bradley_terry_loss", "bradley_terry_preference",
    "branching_task", "delayed_q_learning", "differential_sarsa",
    "discounted_thompson_sampling", "discounted_ucb", "distill", "double_q_learning", "dpo",
    "dyna_q", "dyna_q_plus", "ending_probabilities", "epsilon_greedy_bandit",
    "epsilon_greedy_q_learning", "exp3", "expected_fixed_point", "expected_return",
    "expected_sarsa", "expected_update", "expectimax", "explore_then_commit", "finite_horizon",
    "fit_process_reward_model", "gradient_bandit", "greedy_policy",
    "group_relative_advantages", "grpo", "hardness", "iterated_dpo", "kl_objective",
    "kl_optimum", "kl_ucb", "kto", "kto_optimum", "lai_robbins_constant", "lin_ucb",
    "linear_thompson_sampling", "loss_optimum", "mbie_eb", "mc_control", "mc_prediction",
    "minimax", "moss", "n_step_expected_sarsa", "n_step_sarsa", "nash_equilibrium", "nash_md",
    "off_policy_mc_prediction", "off_policy_n_step_sarsa", "offline_lambda_return",
    "optimal_actions", "optimistic_q_learning", "path_returns", "policy_evaluation",
    "policy_iteration", "ppo", "preference_gap", "preference_table", "prefix_values",
    "pretrain", "prioritized_sweeping", "process_rewards", "psrl", "q_from_v", "q_learning",
    "q_sigma", "r_learning", "regret", "reinforce", "relative_value_iteration",
    "response_distribution", "response_path", "rlsvi", "rmax", "sample_complexity",
    "sample_preferences", "sampled_nash_md", "sarsa", "sarsa_lambda", "seed_states",
    "sequence_kl", "sft",
    "sliding_window_ucb", "soft_bellman_optimality", "soft_policy", "soft_value_iteration",
    "td0", "td_control", "td_lambda", "terminating_greedy_policy", "thompson_sampling",
    "train_pipeline", "train_reward_model", "trajectory_sampling", "tree_backup", "trpo",
    "true_online_sarsa_lambda", "true_online_td_lambda", "ucb_bandit", "ucb_v", "ucbvi",
    "ucrl2", "uniform_expected_updates", "value_iteration", "visit_probabilities",
    "watkins_q_lambda",
]

from tabular import linear  # noqa: E402  (after the API it builds on; not re-exported)

_notice.install("tabular", "tabular.rlhf", "tabular.linear")
