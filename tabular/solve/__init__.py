"""Exact solutions by dynamic programming (Sutton & Barto, chapters 3-4; average reward,
section 10.3; finite horizons).

- :mod:`~tabular.solve.bellman` -- the Bellman operators and the policies read off
  ``Q``;
- :mod:`~tabular.solve.dp` -- policy evaluation, value and policy iteration, soft value
  iteration;
- :mod:`~tabular.solve.exact` -- the linear solve ``(I - gamma P_pi) v = r_pi``;
- :mod:`~tabular.solve.average_reward` -- relative value iteration, a policy's gain and
  bias, backward induction;
- :mod:`~tabular.solve.tree` -- exact sums over a tree MDP (a token MDP's prefixes) and
  its KL-regularised optimum, which :mod:`tabular.rlhf` measures its learners against;
- :mod:`~tabular.solve.results` -- the records they return;
- :mod:`~tabular.solve.sweeps` and :mod:`~tabular.solve.evaluation` -- their kernels.
"""

from tabular.solve.average_reward import (
    average_reward_solve,
    finite_horizon,
    relative_value_iteration,
)
from tabular.solve.bellman import (
    ConvergenceError,
    bellman_expectation,
    bellman_optimality,
    greedy_policy,
    optimal_actions,
    q_from_v,
    soft_bellman_optimality,
    soft_policy,
    terminating_greedy_policy,
)
from tabular.solve.dp import (
    policy_evaluation,
    policy_iteration,
    soft_value_iteration,
    value_iteration,
)
from tabular.solve.games import GameTree, GameValues, expectimax, minimax

__all__ = [
    "ConvergenceError", "GameTree", "GameValues", "average_reward_solve", "bellman_expectation",
    "bellman_optimality", "expectimax", "finite_horizon", "greedy_policy", "minimax",
    "optimal_actions", "policy_evaluation", "policy_iteration", "q_from_v",
    "relative_value_iteration", "soft_bellman_optimality", "soft_policy", "soft_value_iteration",
    "terminating_greedy_policy", "value_iteration",
]
