"""Linear function approximation on finite MDPs, with its exact answers (Sutton & Barto,
chapters 9 and 11).

- :mod:`~tabular.linear.features` -- feature matrices ``X [S, d]``: one-hot (the
  tabular case), state aggregation, polynomial, Fourier and tile coding;
- :mod:`~tabular.linear.exact` -- the policy's reward process and on-policy
  distribution, VE, BE and PBE of any weights, the VE minimiser, the TD(lambda)
  fixed point and the expected TD, TDC, GTD2 and emphatic TD updates under any state
  distribution, with emphatic TD's expected emphasis and fixed point;
- :mod:`~tabular.linear.linalg` -- the linear algebra behind them, in an orthonormal
  basis of the features' span, each answer with a stated error bound and refused
  (:class:`~tabular.linear.linalg.IllConditionedError`) where float64 cannot give it;
- :mod:`~tabular.linear.learners` -- gradient Monte Carlo, semi-gradient n-step TD,
  off-policy semi-gradient TD, TDC, GTD2, emphatic TD, LSTD, and semi-gradient and true
  online TD(lambda) (chapter 12), in the shape of every learner (``seed=``, ``runs=``,
  a run axis);
- :mod:`~tabular.linear.control` -- episodic semi-gradient SARSA and n-step SARSA and
  differential semi-gradient SARSA over state-action features (chapter 10), and
  Sarsa(lambda) with accumulating or replacing traces and true online Sarsa(lambda)
  (chapter 12);
- :mod:`~tabular.linear.results` -- what they return: the learned weights of each
  learner and the policy's reward process.
"""

from tabular.linear.control import (
    differential_semi_gradient_sarsa,
    n_step_semi_gradient_sarsa,
    semi_gradient_sarsa,
    semi_gradient_sarsa_lambda,
    true_online_linear_sarsa_lambda,
)
from tabular.linear.exact import (
    bellman_error,
    bellman_error_vector,
    emphatic_fixed_point,
    expected_emphasis,
    expected_emphatic_td_update,
    expected_gtd2_update,
    expected_td_update,
    expected_tdc_update,
    projected_bellman_error,
    reward_process,
    td_fixed_point,
    value_error,
    ve_minimiser,
)
from tabular.linear.features import (
    fourier,
    one_hot,
    polynomial,
    state_action_features,
    state_aggregation,
    state_coordinates,
    tile_coding,
)
from tabular.linear.learners import (
    emphatic_td,
    gradient_mc,
    gtd2,
    lstd,
    off_policy_semi_gradient_td,
    semi_gradient_td,
    semi_gradient_td_lambda,
    tdc,
    true_online_linear_td_lambda,
)
from tabular.linear.linalg import IllConditionedError
from tabular.linear.results import (
    LinearControlResult,
    LinearDifferentialResult,
    LinearPredictionResult,
    RewardProcess,
)

__all__ = [
    "IllConditionedError", "LinearControlResult", "LinearDifferentialResult",
    "LinearPredictionResult",
    "RewardProcess", "bellman_error", "bellman_error_vector", "differential_semi_gradient_sarsa",
    "emphatic_fixed_point", "emphatic_td", "expected_emphasis", "expected_emphatic_td_update",
    "expected_gtd2_update", "expected_td_update", "expected_tdc_update", "fourier",
    "gradient_mc", "gtd2", "lstd", "n_step_semi_gradient_sarsa", "off_policy_semi_gradient_td",
    "one_hot", "polynomial", "projected_bellman_error", "reward_process", "semi_gradient_sarsa",
    "semi_gradient_sarsa_lambda", "semi_gradient_td", "semi_gradient_td_lambda",
    "state_action_features", "state_aggregation", "state_coordinates", "td_fixed_point", "tdc",
    "tile_coding", "true_online_linear_sarsa_lambda", "true_online_linear_td_lambda",
    "value_error", "ve_minimiser",
]
