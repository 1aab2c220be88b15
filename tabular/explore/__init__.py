"""Exploration with exact regret: episodic learners, the regret of the policies they
followed, and the hardness constants of a model.

Learners (episodic, horizon ``H``, time-dependent greedy policies ``pi_h(s)``; each
returns an :class:`ExplorationResult` recording the policy of every episode):
:func:`ucbvi` (Azar et al., 2017; Hoeffding and Bernstein bonuses), :func:`psrl`
(Osband et al., 2013), :func:`optimistic_q_learning` (Jin et al., 2018, UCB-Hoeffding)
and the dithering baseline :func:`epsilon_greedy_q_learning`.

Measures: :func:`regret` (per episode, cumulative and normalised, exact by policy
evaluation, a :class:`RegretResult`) and :func:`hardness` (communication class,
diameter, gain and bias span, gaps, a :class:`Hardness`).
"""

from tabular.explore.hardness import Hardness, hardness
from tabular.explore.model_based import psrl, ucbvi
from tabular.explore.q_learning import epsilon_greedy_q_learning, optimistic_q_learning
from tabular.explore.regret import RegretResult, regret
from tabular.explore.results import ExplorationResult

__all__ = ["ExplorationResult", "Hardness", "RegretResult", "epsilon_greedy_q_learning",
           "hardness", "optimistic_q_learning", "psrl", "regret", "ucbvi"]
