"""RLHF on the token MDP, measured against its exact KL-regularised optimum.

- :mod:`~tabular.solve.tree` -- exact sums over the prefix tree (visit and ending
  probabilities, expected return, sequence KL, the RLHF objective) and the closed-form
  optimum ``pi*(y|x) ∝ pi_ref(y|x) exp(r(x, y) / beta)``;
- :mod:`~tabular.rlhf.reward_model` -- the Bradley-Terry reward model;
- :mod:`~tabular.rlhf.preference` -- direct preference methods (DPO, IPO, iterated DPO
  on comparisons sampled from the current policy: :func:`iterated_dpo`);
- :mod:`~tabular.rlhf.losses` -- DPO's family of pairwise losses as TRL names them, and
  :mod:`~tabular.rlhf.loss_optimum` -- each loss's population optimum
  (:func:`loss_optimum`);
- :mod:`~tabular.rlhf.preference_model` -- a general preference ``P(y > y' | x)``
  (:func:`bradley_terry_preference`, :func:`preference_table`) and its regularised Nash
  equilibrium (:func:`nash_equilibrium`, :func:`preference_gap`), reached by exact Nash
  mirror descent (:func:`nash_md`), and :mod:`~tabular.rlhf.nash_md_sampled` -- Nash-MD
  sampled token by token as TRL's ``NashMDTrainer`` runs it (:func:`sampled_nash_md`);
- :mod:`~tabular.rlhf.kto` -- KTO on unpaired desirable/undesirable labels (:func:`kto`)
  and its optimum on the tree (:func:`kto_optimum`);
- :mod:`~tabular.rlhf.group` -- group-relative on-policy methods (GRPO);
- :mod:`~tabular.rlhf.best_of_n` -- best-of-N sampling, its exact distribution and KL;
- :mod:`~tabular.rlhf.distillation` -- on-policy distillation toward a teacher;
- :mod:`~tabular.rlhf.process` -- potential-based process rewards
  (:func:`process_rewards`, :func:`prefix_values`) and a process reward model fitted to
  Monte Carlo step labels (:func:`fit_process_reward_model`);
- :mod:`~tabular.rlhf.pipeline` -- a scenario trained end to end (pre-training, SFT,
  reward model: :func:`train_pipeline`) and measured against the exact optimum;
- :mod:`~tabular.rlhf.results` -- what the learners, the fits and the exact solvers
  return;
- :class:`TrainingHistory` (:mod:`tabular.pg.telemetry`) -- what every RLHF learner
  records with ``history=True``: the exact objective, gap and KLs on the tree every
  ``eval_every`` iterations, beside TRL's metrics of the sampled batches.

The other RLHF learners are :func:`tabular.reinforce`, :func:`tabular.actor_critic`,
:func:`tabular.ppo` and :func:`tabular.trpo`, used as they are with a ``ref_policy`` and
``beta``.
"""

from tabular.pg.results import TrainingHistory
from tabular.rlhf.best_of_n import BestOfN, best_of_n
from tabular.rlhf.distillation import distill
from tabular.rlhf.group import group_relative_advantages, grpo
from tabular.rlhf.group_config import GRPOConfig
from tabular.rlhf.group_exact import (
    ExpectedUpdate,
    FixedPoint,
    expected_fixed_point,
    expected_update,
)
from tabular.rlhf.kto import KTOOptimum, kto, kto_optimum
from tabular.rlhf.lm import NGramLM, pretrain, sft
from tabular.rlhf.loss_optimum import LossOptimum, loss_optimum
from tabular.rlhf.nash_md_sampled import sampled_nash_md
from tabular.rlhf.pipeline import (
    Frontier,
    FrontierPoint,
    RLHFPipeline,
    ScenarioData,
    train_pipeline,
)
from tabular.rlhf.preference import dpo, iterated_dpo, response_path
from tabular.rlhf.preference_model import (
    NashEquilibrium,
    NashMDResult,
    PreferenceModel,
    bradley_terry_preference,
    nash_equilibrium,
    nash_md,
    preference_gap,
    preference_table,
)
from tabular.rlhf.process import (
    ProcessRewardModel,
    fit_process_reward_model,
    prefix_values,
    process_rewards,
)
from tabular.rlhf.results import (
    DPOResult,
    GRPOResult,
    IteratedDPOResult,
    KTOResult,
    SampledNashMDResult,
)
from tabular.rlhf.reward_model import (
    RewardModel,
    bradley_terry_loss,
    sample_preferences,
    train_reward_model,
)
from tabular.solve.tree import (
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

__all__ = [
    "BestOfN", "DPOResult", "ExpectedUpdate", "FixedPoint", "Frontier", "FrontierPoint",
    "GRPOConfig", "GRPOResult", "IteratedDPOResult", "KLOptimum", "KTOOptimum", "KTOResult",
    "LossOptimum", "NGramLM", "NashEquilibrium", "NashMDResult", "PreferenceModel",
    "ProcessRewardModel", "RLHFPipeline", "RewardModel", "SampledNashMDResult", "ScenarioData",
    "TrainingHistory",
    "best_of_n", "bradley_terry_loss", "bradley_terry_preference", "distill", "dpo",
    "ending_probabilities", "expected_fixed_point", "expected_return", "expected_update",
    "fit_process_reward_model", "group_relative_advantages", "grpo", "iterated_dpo",
    "kl_objective", "kl_optimum", "kto", "kto_optimum", "loss_optimum", "nash_equilibrium",
    "nash_md", "path_returns", "preference_gap", "preference_table", "prefix_values",
    "pretrain", "process_rewards", "response_distribution", "response_path",
    "sample_preferences", "sampled_nash_md", "sequence_kl", "sft", "train_pipeline",
    "train_reward_model", "visit_probabilities",
]
