"""Policy gradients on softmax policies (Sutton & Barto, chapter 13; PPO, TRPO).

- :mod:`~tabular.pg.learners` -- REINFORCE (with or without a baseline), one-step
  actor-critic, PPO (clipped or adaptive KL);
- :mod:`~tabular.pg.trpo` -- TRPO: natural-gradient steps in a KL trust region;
- :mod:`~tabular.pg.rollout` and :mod:`~tabular.pg.batches` -- sampling an episode and
  the episode batches of PPO and TRPO;
- :mod:`~tabular.pg.arguments` and :mod:`~tabular.pg.results` -- the argument checks shared
  with the RLHF learners, and the results.
"""

from tabular.pg.learners import actor_critic, ppo, reinforce
from tabular.pg.results import PolicyGradientResult, TrustRegionResult
from tabular.pg.trpo import trpo

__all__ = ["PolicyGradientResult", "TrustRegionResult", "actor_critic", "ppo", "reinforce",
           "trpo"]
