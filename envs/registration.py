"""Registration of the project's envs with Gymnasium, under the ``tabzoo/`` namespace.

``import envs`` registers every built-in env; without it, Gymnasium's own
``"module:id"`` syntax imports this package first, so a fresh interpreter that
imports only ``gymnasium`` can ``gymnasium.make("tabular.envs:tabzoo/CliffWalking-v0")``.
(Gymnasium 1.0 removed the ``gymnasium.envs`` entry-point plug-ins of 0.26-0.29, so
an id without the module part cannot load a third-party package by itself.)

The namespace is the project's own: Gymnasium 1.x registers ``tabular/CliffWalking-v0``
and ``tabular/Blackjack-v0`` (its JAX functional envs), which stay untouched. The
ids this project used before (``tabular/TrapTreasure-v0``, ...) are kept as entries
that raise an error naming their new id, except where Gymnasium owns the id.
"""

from __future__ import annotations

from typing import Any

import gymnasium

from tabular.checks import check_positive_int
from tabular.learn.arguments import MAX_STEPS

from .layout import LayoutSpec

NAMESPACE = "tabzoo"
OLD_NAMESPACE = "tabular"

#: Each built-in env: its entry point and Gymnasium's time limit ``max_episode_steps``
#: (long enough for every published figure; a learner given the env stops there).
BUILTINS = {
    "TrapTreasure-v0": ("tabular.envs.trap_treasure:TrapTreasure", 1_000),
    "Gridworld5x5-v0": ("tabular.envs.sutton_barto:Gridworld5x5", 100),
    "Gridworld4x4-v0": ("tabular.envs.sutton_barto:Gridworld4x4", 1_000),
    "Gambler-v0": ("tabular.envs.sutton_barto:Gambler", 10_000),
    "RandomWalk-v0": ("tabular.envs.sutton_barto:RandomWalk", 10_000),
    "WindyGridworld-v0": ("tabular.envs.sutton_barto:WindyGridworld", 10_000),
    "CliffWalking-v0": ("tabular.envs.sutton_barto:CliffWalking", 10_000),
    "ShortCorridor-v0": ("tabular.envs.sutton_barto:ShortCorridor", 1_000),
    "MaximizationBias-v0": ("tabular.envs.sutton_barto:MaximizationBias", 100),
    "TicTacToe-v0": ("tabular.envs.tic_tac_toe:TicTacToe", 100),
    "TokenMDP-v0": ("tabular.envs.token:TokenMDP", 1_000),
    "CapitalOfFrance-v0": ("tabular.envs.scenarios:capital_of_france", 1_000),
    "CarRental-v0": ("tabular.envs.car_rental:CarRental", 1_000),
    "Blackjack-v0": ("tabular.envs.blackjack:Blackjack", 100),
    "Racetrack-v0": ("tabular.envs.racetrack:Racetrack", 1_000),
    "BairdCounterexample-v0": ("tabular.envs.sutton_barto:BairdCounterexample", 1_000),
    "AccessControl-v0": ("tabular.envs.sutton_barto:AccessControl", 10_000),
    "MountainCar-v0": ("tabular.envs.sutton_barto:MountainCar", 10_000),
    "RiverSwim-v0": ("tabular.envs.exploration:RiverSwim", 1_000),
    "Chain-v0": ("tabular.envs.exploration:Chain", 1_000),
    "DeepSea-v0": ("tabular.envs.exploration:DeepSea", 1_000),
    "FourRoom-v0": ("tabular.envs.exploration:FourRoom", 1_000),
    "NRoom-v0": ("tabular.envs.exploration:NRoom", 1_000),
    "RandomMDP-v0": ("tabular.envs.exploration:RandomMDP", 1_000),
}


class RenamedEnvError(gymnasium.error.Error):
    """An id of the old ``tabular/`` namespace was made."""


def renamed(old_id: str, new_id: str):
    """An entry point for ``old_id`` that says where the env went."""
    def make(**kwargs):
        raise RenamedEnvError(f"{old_id} is now {new_id} (the tabular/ namespace is "
                              "Gymnasium's own): gymnasium.make(\"" + new_id + "\")")
    return make


def register_builtins() -> None:
    """Register every built-in env under ``tabzoo/`` (done on ``import envs``), and the
    old ``tabular/`` ids that Gymnasium does not own as pointers to the new ones."""
    for name, (entry_point, max_steps) in BUILTINS.items():
        env_id, old_id = f"{NAMESPACE}/{name}", f"{OLD_NAMESPACE}/{name}"
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point,
                               max_episode_steps=max_steps)
        if old_id not in gymnasium.registry:
            gymnasium.register(id=old_id, entry_point=renamed(old_id, env_id))


def register_gridworld(env_id: str, layout: LayoutSpec, *,
                       max_episode_steps: int | None = None, **options: Any) -> None:
    """Register a :class:`~tabular.envs.GridWorld` that ``gymnasium.make(env_id)`` builds.

    ``env_id``: the id to register, e.g. ``"my/Maze-v0"``; ``layout``: layout text or
    a file path/name (see :func:`tabular.envs.layout.layout_text`); ``max_episode_steps``:
    Gymnasium's time limit (default ``None``: none); ``options``: GridWorld keyword
    arguments (rewards, slip, wind, teleports, ...). The layout and options are
    checked now, so a bad layout fails here rather than at ``make``; so is
    ``max_episode_steps`` (an integer in ``[1, 10^8]``, the learners' ``MAX_STEPS``).
    """
    from .gridworld import GridWorld
    from .layout import layout_text

    if not isinstance(env_id, str):
        raise ValueError(f"env_id must be a string such as 'my/Maze-v0', got {env_id!r}")
    if max_episode_steps is not None:
        max_episode_steps = check_positive_int("max_episode_steps", max_episode_steps,
                                               high=MAX_STEPS)
    text = layout_text(layout)
    GridWorld(text, **options)  # raises ValueError naming the row/column or option
    gymnasium.register(id=env_id, entry_point="tabular.envs.gridworld:GridWorld",
                       kwargs={"layout": text, **options}, max_episode_steps=max_episode_steps)
