"""Gymnasium environments for the tabular zoo; ``from tabular import envs`` registers
``tabzoo/*``. (The repository's ``envs/`` folder installs as ``tabular.envs``.) In
short::

    import gymnasium as gym
    from tabular import envs
    env = gym.make("tabzoo/CliffWalking-v0")
    mdp = env.unwrapped.to_mdp()

- :class:`ModelEnv`: an env that steps from the :class:`tabular.TabularMDP` it holds
  (every env here is one);
- :class:`GridWorld` (ASCII layouts, :func:`register_gridworld` for your own),
  :class:`PickupGridWorld` (one-time rewards, the collected set in the state),
  :class:`TrapTreasure` and the Sutton & Barto examples (:class:`CarRental`, Example 4.2;
  :class:`MountainCar`, Example 10.1, on a grid;
  :class:`AccessControl`, Example 10.2;
  :class:`Blackjack`, Example 5.1, and :class:`Racetrack`, Exercise 5.12, with their
  exact models);
- :class:`TicTacToe` (section 1.5): the game against a given opponent as an MDP, and
  its game tree for :func:`tabular.minimax` and :func:`tabular.expectimax`;
- the exploration benchmarks (:mod:`tabular.envs.exploration`): :class:`RiverSwim`,
  :class:`Chain`, :class:`DeepSea`, :class:`FourRoom`, :class:`NRoom` and the seeded
  random family :class:`RandomMDP`;
- :class:`TokenMDP`: text generation as an MDP; :func:`load_scenario` reads a
  scenario of ``envs/data`` (a prompt, its replies, demonstrations, comparisons and a
  corpus) and :meth:`Scenario.env` builds its token MDP; :func:`load_grammar_scenario`
  reads a bigger one (:class:`GrammarScenario`: several prompts, responses from a
  grammar, a tree of 10^5 prefixes, sampled comparisons).
"""

if __name__ != "tabular.envs":  # a second copy would register every env twice
    raise ImportError(f"import this package as tabular.envs (from tabular import envs), "
                      f"not as {__name__}")

from .base import ModelEnv
from .blackjack import Blackjack
from .car_rental import CarRental
from .exploration import Chain, DeepSea, FourRoom, NRoom, RandomMDP, RiverSwim
from .gridworld import GridWorld
from .pickups import PickupGridWorld
from .racetrack import Racetrack
from .registration import register_builtins, register_gridworld
from .scenarios import GrammarScenario, Scenario, load_grammar_scenario, load_scenario
from .sutton_barto import (
    AccessControl,
    BairdCounterexample,
    CliffWalking,
    Gambler,
    Gridworld4x4,
    Gridworld5x5,
    MaximizationBias,
    MountainCar,
    RandomWalk,
    ShortCorridor,
    WindyGridworld,
)
from .tic_tac_toe import TicTacToe
from .token import TokenMDP
from .trap_treasure import TrapTreasure

__all__ = [
    "AccessControl", "BairdCounterexample", "Blackjack", "CarRental", "Chain", "CliffWalking",
    "DeepSea", "FourRoom", "Gambler", "GrammarScenario", "GridWorld", "Gridworld4x4",
    "Gridworld5x5", "MaximizationBias", "ModelEnv", "MountainCar", "NRoom", "PickupGridWorld",
    "Racetrack", "RandomMDP", "RandomWalk", "RiverSwim", "Scenario", "ShortCorridor",
    "TicTacToe", "TokenMDP", "TrapTreasure", "WindyGridworld", "load_grammar_scenario",
    "load_scenario", "register_builtins", "register_gridworld",
]

register_builtins()
