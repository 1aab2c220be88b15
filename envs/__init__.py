"""Gymnasium environments for the tabular zoo; ``import envs`` registers ``tabular/*``.

    import gymnasium as gym
    import envs
    env = gym.make("tabular/CliffWalking-v0")
    mdp = env.unwrapped.to_mdp()
"""

from .base import ModelEnv
from .gridworld import GridWorld
from .registration import register_builtins, register_gridworld
from .sutton_barto import (
    CliffWalking,
    Gambler,
    Gridworld4x4,
    Gridworld5x5,
    RandomWalk,
    ShortCorridor,
    WindyGridworld,
)
from .token import TokenMDP  # registers tabular/TokenMDP-v0, tabular/CapitalOfFrance-v0
from .trap_treasure import TrapTreasure

register_builtins()
