"""Registration of the ``tabular/`` namespace with Gymnasium."""

from __future__ import annotations

import gymnasium

NAMESPACE = "tabular"

BUILTINS = {
    "TrapTreasure-v0": ("envs.trap_treasure:TrapTreasure", None),
    "Gridworld5x5-v0": ("envs.sutton_barto:Gridworld5x5", 100),
    "Gridworld4x4-v0": ("envs.sutton_barto:Gridworld4x4", None),
    "Gambler-v0": ("envs.sutton_barto:Gambler", None),
    "RandomWalk-v0": ("envs.sutton_barto:RandomWalk", None),
    "WindyGridworld-v0": ("envs.sutton_barto:WindyGridworld", None),
    "CliffWalking-v0": ("envs.sutton_barto:CliffWalking", None),
    "ShortCorridor-v0": ("envs.sutton_barto:ShortCorridor", None),
    "TokenMDP-v0": ("envs.token:TokenMDP", None),
    "CapitalOfFrance-v0": ("envs.scenarios:capital_of_france", None),
}


def drop_gymnasium_tabular_envs() -> None:
    """Remove the ``tabular/*`` ids that Gymnasium itself pre-registers.

    Gymnasium 1.x registers ``tabular/CliffWalking-v0`` and ``tabular/Blackjack-v0``
    as JAX functional envs (which need JAX, not installed here). Registering ours
    over them would print an override warning and leave the namespace shared, so
    Gymnasium's own entries (entry points inside ``gymnasium.``) are deleted first.
    """
    for env_id, spec in list(gymnasium.registry.items()):
        entry = spec.entry_point if isinstance(spec.entry_point, str) else ""
        if spec.namespace == NAMESPACE and entry.startswith("gymnasium."):
            del gymnasium.registry[env_id]


def register_builtins() -> None:
    """Register every built-in env under ``tabular/`` (done on ``import envs``):
    ``BUILTINS`` maps each name to its entry point and ``max_episode_steps``."""
    drop_gymnasium_tabular_envs()
    for name, (entry_point, max_steps) in BUILTINS.items():
        gymnasium.register(id=f"{NAMESPACE}/{name}", entry_point=entry_point,
                           max_episode_steps=max_steps)


def register_gridworld(env_id: str, layout, *, max_episode_steps: int | None = None,
                       **options) -> None:
    """Register a :class:`~envs.GridWorld` so that ``gymnasium.make(env_id)`` builds it.

    ``env_id``: the id to register, e.g. ``"my/Maze-v0"``; ``layout``: layout text or
    a file path/name (see :func:`envs.layout.layout_text`); ``max_episode_steps``:
    Gymnasium's time limit (default ``None``: none); ``options``: GridWorld keyword
    arguments (rewards, slip, wind, teleports, ...). The layout and options are
    checked now, so a bad layout fails here rather than at ``make``.
    """
    from .gridworld import GridWorld
    from .layout import layout_text

    text = layout_text(layout)
    GridWorld(text, **options)  # raises ValueError naming the row/column or option
    gymnasium.register(id=env_id, entry_point="envs.gridworld:GridWorld",
                       kwargs={"layout": text, **options}, max_episode_steps=max_episode_steps)
