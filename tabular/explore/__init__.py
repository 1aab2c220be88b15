"""Exploration with exact regret: episodic learners, the regret of the policies they
followed, and the hardness constants of a model.

Learners (episodic, horizon ``H``, time-dependent greedy policies ``pi_h(s)``; each
returns an :class:`ExplorationResult` recording the policy of every episode):
:func:`ucbvi` (Azar et al., 2017; Hoeffding and Bernstein bonuses), :func:`psrl`
(Osband et al., 2013), :func:`rlsvi` (Osband et al., 2016, tabular),
:func:`optimistic_q_learning` (Jin et al., 2018; UCB-Hoeffding and, with
``bonus="bernstein"``, UCB-Bernstein) and the dithering baseline
:func:`epsilon_greedy_q_learning`. Average reward, one continuing trajectory:
:func:`ucrl2` (Jaksch et al., 2010, extended value iteration), a :class:`UCRL2Result`
recording every step.

Measures: :func:`regret` (per episode, cumulative and normalised, exact by policy
evaluation, a :class:`RegretResult`), :func:`average_regret` (against the optimal gain,
an :class:`AverageRegretResult`), :func:`sample_complexity` (the steps at which the
policy followed was epsilon-suboptimal, exactly; a :class:`SampleComplexityResult`)
and :func:`hardness` (communication class, diameter, gain and bias span, gaps, a
:class:`Hardness`).
"""

from tabular.explore.discounted import (
    DiscountedResult,
    SampleComplexityResult,
    delayed_q_learning,
    mbie_eb,
    rmax,
    sample_complexity,
)
from tabular.explore.hardness import Hardness, hardness
from tabular.explore.model_based import psrl, ucbvi
from tabular.explore.q_learning import epsilon_greedy_q_learning, optimistic_q_learning
from tabular.explore.regret import AverageRegretResult, RegretResult, average_regret, regret
from tabular.explore.results import ExplorationResult
from tabular.explore.rlsvi import rlsvi
from tabular.explore.ucrl2 import UCRL2Result, ucrl2

__all__ = ["AverageRegretResult", "DiscountedResult", "ExplorationResult", "Hardness",
           "RegretResult", "SampleComplexityResult", "UCRL2Result", "average_regret",
           "delayed_q_learning", "epsilon_greedy_q_learning", "hardness", "mbie_eb",
           "optimistic_q_learning", "psrl", "regret", "rlsvi", "rmax", "sample_complexity",
           "ucbvi", "ucrl2"]
