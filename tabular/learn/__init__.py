"""Learning values from samples (Sutton & Barto, chapters 2, 5-7, 10.3 and 12).

- :mod:`~tabular.learn.afterstates` -- the learning player of a two-player game
  (section 1.5's tic-tac-toe player, :func:`afterstate_td`);
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
- :mod:`~tabular.learn.custom` -- your own one-step TD control rule as a learner
  (:func:`td_control`);
- what they share, one job per module: :mod:`~tabular.learn.arguments` (the argument
  checks), :mod:`~tabular.learn.episodes` (the Numba helpers of the episode loops),
  :mod:`~tabular.learn.outputs` (the kernels' output records),
  :mod:`~tabular.learn.divergence` (the checks of learned estimates) and
  :mod:`~tabular.learn.results` (the results).

Every learner is a thin Python function in front of one Numba kernel: it checks the
arguments, builds the kernel's records and turns the filled outputs into a result.
Every kernel is a runs driver of :mod:`tabular._numba.runs` over one run function
``_x_run(model, params, rng, out, run)``: the episode loop of run ``run``, composed of
:mod:`tabular.rules`, reading the model only through the sampling kernels and filling
row ``run`` of ``out``. Where a family's methods differ inside the inner loop (SARSA,
expected SARSA and Q-learning; the bandit methods; differential SARSA and R-learning)
each method has a driver of its own (a :func:`~tabular._numba.runs.runs_kernel`) that
passes the method as a compile-time constant, so the other methods' branches compile
away; elsewhere the method is a field of the parameters, read at run time, and
one kernel serves the family. An optional argument that the inner loop reads (an action
mask) is ``None`` when absent and compiles away (:mod:`tabular._numba.optional`). Every
kernel is a sequential driver that :func:`~tabular._numba.runs.over_runs` spreads over
threads; the short TD loops are inlined into it, the longer Monte Carlo and n-step loops
are compiled on their own.
"""

from tabular.learn.afterstates import afterstate_greedy, afterstate_td
from tabular.learn.bandit_arms import BanditArms, lai_robbins_constant
from tabular.learn.bandit_regret import (
    BanditRegretResult,
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
from tabular.learn.bandits import BanditTestbed, epsilon_greedy_bandit, gradient_bandit, ucb_bandit
from tabular.learn.batch_updating import batch_prediction
from tabular.learn.contextual_bandits import ContextualArms, lin_ucb, linear_thompson_sampling
from tabular.learn.custom import td_control
from tabular.learn.differential import differential_sarsa, r_learning
from tabular.learn.mc import mc_control, mc_prediction
from tabular.learn.mc_off_policy import off_policy_mc_prediction
from tabular.learn.nstep import (
    n_step_expected_sarsa,
    n_step_sarsa,
    off_policy_n_step_sarsa,
    q_sigma,
    tree_backup,
)
from tabular.learn.results import (
    BanditResult,
    ControlResult,
    DifferentialResult,
    PredictionResult,
)
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
    "BanditArms", "BanditRegretResult", "BanditResult", "BanditTestbed", "ContextualArms",
    "ControlResult", "DifferentialResult", "PredictionResult", "afterstate_greedy",
    "afterstate_td", "batch_prediction", "bayes_ucb", "differential_sarsa",
    "discounted_thompson_sampling", "discounted_ucb", "double_q_learning",
    "epsilon_greedy_bandit", "exp3", "expected_sarsa", "explore_then_commit",
    "gradient_bandit", "kl_ucb", "lai_robbins_constant", "lin_ucb", "linear_thompson_sampling",
    "mc_control", "mc_prediction", "moss", "n_step_expected_sarsa", "n_step_sarsa",
    "off_policy_mc_prediction", "off_policy_n_step_sarsa", "offline_lambda_return",
    "q_learning", "q_sigma", "r_learning", "sarsa", "sarsa_lambda", "sliding_window_ucb",
    "td0", "td_control", "td_lambda", "thompson_sampling", "tree_backup",
    "true_online_sarsa_lambda", "true_online_td_lambda", "ucb_bandit", "ucb_v",
    "watkins_q_lambda",
]
