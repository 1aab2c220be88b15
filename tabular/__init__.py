"""Tabular reinforcement learning: one model format, Numba kernels, exact ground truth."""

from .dp import (
    ConvergenceError,
    bellman_expectation,
    bellman_optimality,
    greedy_policy,
    optimal_actions,
    policy_evaluation,
    policy_iteration,
    q_from_v,
    soft_bellman_optimality,
    soft_policy,
    soft_value_iteration,
    terminating_greedy_policy,
    value_iteration,
)
from .lm import NGramLM, pretrain, sft
from .mc import mc_control, mc_prediction
from .mdp import MDPError, TabularMDP
from .pg import PolicyGradientResult, actor_critic, ppo, reinforce
from .policy import SoftmaxPolicy
from .rlhf import (
    RewardModel,
    dpo,
    grpo,
    kl_objective,
    kl_optimum,
    sample_preferences,
    sequence_kl,
    train_reward_model,
)
from .kernels.rng import seed_states
from .td import double_q_learning, expected_sarsa, q_learning, sarsa, td0

__version__ = "0.1.0"
