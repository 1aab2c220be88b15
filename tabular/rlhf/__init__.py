"""RLHF on the token MDP, measured against its exact KL-regularised optimum.

- :mod:`~tabular.rlhf.exact` -- exact sums over the prefix tree (visit and ending
  probabilities, expected return, sequence KL, the RLHF objective) and the closed-form
  optimum ``pi*(y|x) ∝ ref(y|x) exp(r(x, y) / beta)``;
- :mod:`~tabular.rlhf.reward_model` -- the Bradley-Terry reward model;
- :mod:`~tabular.rlhf.preference` -- direct preference methods (DPO);
- :mod:`~tabular.rlhf.group` -- group-relative on-policy methods (GRPO).

The other RLHF learners are :func:`tabular.reinforce`, :func:`tabular.actor_critic`
and :func:`tabular.ppo`, used as they are with a ``ref_policy`` and ``beta``.
"""

from .exact import (
    KLOptimum,
    ending_probabilities,
    expected_return,
    kl_objective,
    kl_optimum,
    path_returns,
    response_distribution,
    sequence_kl,
    visit_probabilities,
)
from .group import group_relative_advantages, grpo
from .preference import DPOResult, dpo, response_path
from .reward_model import (
    RewardModel,
    bradley_terry_loss,
    sample_preferences,
    train_reward_model,
)
