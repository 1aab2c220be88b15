"""Planning and learning with a model (Sutton & Barto, chapter 8).

- :mod:`~tabular.plan.dyna` -- Dyna-Q, Dyna-Q+ and prioritized sweeping on a model
  learned from samples (:mod:`~tabular.plan.model`: the learned model, the priority
  queue, the predecessor lists; :mod:`~tabular.plan.planner`: their records and
  checks; :mod:`~tabular.plan.results`: the results);
- :mod:`~tabular.plan.expected_updates` -- expected updates spread uniformly or along
  on-policy trajectories (section 8.6), on :func:`branching_task` tasks.
"""

from tabular.plan.dyna import dyna_q, dyna_q_plus, prioritized_sweeping
from tabular.plan.expected_updates import (
    branching_task,
    trajectory_sampling,
    uniform_expected_updates,
)
from tabular.plan.results import ExpectedUpdatesResult, PlanningResult

__all__ = [
    "ExpectedUpdatesResult", "PlanningResult", "branching_task", "dyna_q", "dyna_q_plus",
    "prioritized_sweeping", "trajectory_sampling", "uniform_expected_updates",
]
