"""Tabular reinforcement learning: one model format, Numba kernels, exact ground truth."""

from .mc import mc_control, mc_prediction
from .mdp import MDPError, TabularMDP, sample_start, sample_step
from .policy import SoftmaxPolicy
from .rng import seed_states
from .td import double_q_learning, expected_sarsa, q_learning, sarsa, td0

__version__ = "0.1.0"
