"""Learning values from samples (Sutton & Barto, chapters 2, 5-7, 10.3 and 12).

- :mod:`~tabular.learn.bandits` -- the k-armed testbed and its learners (chapter 2);
- :mod:`~tabular.learn.bandit_arms` and :mod:`~tabular.learn.bandit_regret` -- bandits of
  known means and the regret literature's algorithms (Thompson sampling, KL-UCB, ...);
- :mod:`~tabular.learn.contextual_bandits` -- LinUCB and linear Thompson sampling;
- :mod:`~tabular.learn.mc` and :mod:`~tabular.learn.mc_off_policy` -- Monte Carlo
  prediction and control, off-policy prediction by importance sampling (chapter 5);
- :mod:`~tabular.learn.td` -- TD(0), SARSA, expected SARSA, Q-learning and double
  Q-learning (chapter 6);
- :mod:`~tabular.learn.batch_updating` -- batch TD(0) and batch MC (section 6.3);
- :mod:`~tabular.learn.nstep` -- the n-step methods (chapter 7);
- :mod:`~tabular.learn.traces` -- lambda-returns and eligibility traces (chapter 12);
- :mod:`~tabular.learn.differential` -- average-reward learners (section 10.3);
- :mod:`~tabular.learn.setup` and :mod:`~tabular.learn.results` -- what they share: the
  argument checks, the kernels' output records and the results.
"""

from tabular.learn.bandit_arms import BanditArms, lai_robbins_constant
from tabular.learn.bandit_regret import (
    RegretResult,
    bayes_ucb,
    discounted_thompson_sampling,
    discounted_ucb,
    exp3,
    explore_then_commit,
    kl_ucb,
    moss,
    sliding_window_ucb,
    thompson_sampling,
    ucb_v,
)
from tabular.learn.bandits import (
    BanditResult,
    BanditTestbed,
    epsilon_greedy_bandit,
    gradient_bandit,
    ucb_bandit,
)
from tabular.learn.batch_updating import batch_prediction
from tabular.learn.contextual_bandits import ContextualArms, lin_ucb, linear_thompson_sampling
from tabular.learn.differential import DifferentialResult, differential_sarsa, r_learning
from tabular.learn.mc import mc_control, mc_prediction
from tabular.learn.mc_off_policy import off_policy_mc_prediction
from tabular.learn.nstep import (
    n_step_expected_sarsa,
    n_step_sarsa,
    off_policy_n_step_sarsa,
    q_sigma,
    tree_backup,
)
from tabular.learn.results import ControlResult, PredictionResult
from tabular.learn.td import double_q_learning, expected_sarsa, q_learning, sarsa, td0
from tabular.learn.traces import (
    offline_lambda_return,
    sarsa_lambda,
    td_lambda,
    true_online_sarsa_lambda,
    true_online_td_lambda,
    watkins_q_lambda,
)

__all__ = [
    "BanditResult", "BanditTestbed", "ControlResult", "DifferentialResult",
    "PredictionResult", "batch_prediction", "differential_sarsa", "double_q_learning",
    "epsilon_greedy_bandit", "expected_sarsa", "gradient_bandit", "mc_control",
    "mc_prediction", "n_step_expected_sarsa", "n_step_sarsa", "off_policy_mc_prediction",
    "off_policy_n_step_sarsa", "offline_lambda_return", "q_learning", "q_sigma",
    "r_learning", "sarsa", "sarsa_lambda", "td0", "td_lambda", "tree_backup",
    "true_online_sarsa_lambda", "true_online_td_lambda", "ucb_bandit", "watkins_q_lambda",
    "BanditArms", "RegretResult", "exp3", "explore_then_commit", "kl_ucb",
    "lai_robbins_constant", "moss", "thompson_sampling", "ucb_v", "discounted_ucb",
    "discounted_thompson_sampling", "sliding_window_ucb", "ContextualArms", "lin_ucb",
    "linear_thompson_sampling", "bayes_ucb",
]
