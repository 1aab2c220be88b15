"""A Gymnasium env that is its own exact model.

Every env in this package holds a :class:`tabular.TabularMDP` and steps by sampling
it, so what an agent experiences through ``env.step`` and what a planner reads
from ``env.unwrapped.to_mdp()`` can never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from tabular import TabularMDP
from tabular.checks import check_seed


def constant(values, dtype: type = np.float64) -> np.ndarray:
    """``values`` as a read-only array, for a module's or a class's constant: shared by
    every user of the module, so one user's in-place edit must fail rather than change
    it for every later one (copy it to change it)."""
    array: np.ndarray = np.array(values, dtype=dtype)
    array.flags.writeable = False
    return array


#: An action as :meth:`ModelEnv.step` takes it: an integer id (Python, NumPy, or a 0-d
#: array).
ActionLike: TypeAlias = int | np.integer[Any] | np.ndarray

#: The most outcome slots ``S * A * K`` an env's model may have, checked from its options
#: before anything is built: 25 bytes each in the wide arrays (0.5 GB at this size), and
#: the builders' temporaries a few times that.
MAX_OUTCOME_SLOTS = 2 * 10**7
OUTCOME_BYTES = 25


def draw_outcome(cumulative: np.ndarray, prob: np.ndarray, u: float) -> int:
    """The index of the outcome that a uniform ``u`` in ``[0, 1)`` selects (inverse CDF).

    ``cumulative`` is ``np.cumsum(prob)``. Zero-probability (padding) outcomes are
    never selected, even when rounding leaves ``u`` above the last partial sum.
    """
    k = min(int(np.searchsorted(cumulative, u, side="right")), len(prob) - 1)
    while prob[k] == 0.0:
        k -= 1
    return k


class ModelEnv(gym.Env):
    """A ``gymnasium.Env`` whose dynamics are exactly the :class:`TabularMDP` it holds.

    ## Description
    The base of every env of this package; what the sections below say holds for all
    of them. ``reset`` and ``step`` sample the model with the env's own ``np_random``
    (so ``reset(seed=...)`` makes an episode reproducible); ``to_mdp()`` returns that
    model, so ``env.step`` and a planner can never disagree. For code written against
    FrozenLake, ``P[s][a] = [(prob, next_state, reward, terminated), ...]`` (outcomes
    of positive probability) and ``initial_state_distrib`` give the model in
    Gymnasium toy-text's format, derived from it. The info dict of ``reset`` and
    ``step`` is ``{"prob": p}``, the probability of the outcome drawn, as in
    Gymnasium's toy-text envs (a subclass may add keys).

    ## Action Space
    ``Discrete(A)``, ``A = mdp.n_actions``. An action must be an integer id in
    ``[0, A)`` (Python, NumPy or a 0-d array): a non-integer (``1.7``, ``"1"``,
    ``True``, ``None``) or an id out of range raises ``ValueError``.

    ## Observation Space
    ``Discrete(S)``, ``S = mdp.n_states``: the state id.

    ## Starting State
    Drawn from ``mdp.start`` (``initial_state_distrib``).

    ## Rewards
    ``mdp.reward[s, a, k]`` of outcome ``k`` of ``(s, a)``, drawn with probability
    ``mdp.prob[s, a, k]``.

    ## Episode End
    Termination: the outcome drawn has ``mdp.done[s, a, k]``. Truncation: never by the
    env itself (``truncated`` is ``False``); each registered ``tabzoo/`` id adds
    Gymnasium's ``max_episode_steps`` time limit. ``step`` before ``reset`` raises
    ``RuntimeError``.

    ## Arguments
    * ``mdp``: the model; the env steps from it and ``to_mdp()`` returns it.
    * ``render_mode``: ``"ansi"`` (``render()`` returns :meth:`render_text`) or
      ``None`` (default: no rendering).

    ## Version History
    * v0: the initial version (subclasses registered as ``tabzoo/...-v0``).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, mdp: TabularMDP, render_mode: str | None = None) -> None:
        if not isinstance(mdp, TabularMDP):
            raise TypeError(f"mdp must be a tabular.TabularMDP, got {type(mdp).__name__}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} "
                             f"or None, got {render_mode!r}")
        self.render_mode = render_mode
        self._mdp = mdp
        self._cumulative = np.cumsum(mdp.prob, axis=2)
        self._start_cumulative = np.cumsum(mdp.start)
        self.observation_space = spaces.Discrete(mdp.n_states)
        self.action_space = spaces.Discrete(mdp.n_actions)
        self.s: int | None = None
        self.last_action: int | None = None

    def to_mdp(self) -> TabularMDP:
        """The exact model this env samples from."""
        return self._mdp

    @property
    def P(self) -> dict[int, dict[int, list[tuple[float, int, float, bool]]]]:
        """The model in Gymnasium toy-text's format, for code written against FrozenLake:
        ``P[s][a] = [(prob, next_state, reward, terminated), ...]``, the outcomes of
        positive probability (a new dict; the model stays the source of truth; a noisy
        reward appears as its mean, which is all the format holds)."""
        m = self._mdp
        return {s: {a: [(float(m.prob[s, a, k]), int(m.next_state[s, a, k]),
                         float(m.reward[s, a, k]), bool(m.done[s, a, k]))
                        for k in range(m.n_outcomes) if m.prob[s, a, k] > 0.0]
                    for a in range(m.n_actions)}
                for s in range(m.n_states)}

    @property
    def initial_state_distrib(self) -> np.ndarray:
        """The start distribution ``[S]`` (toy-text's name for ``mdp.start``)."""
        return self._mdp.start

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[int, dict[str, Any]]:
        """Draw a start state from ``mdp.start``; ``seed`` (default ``None``: keep the
        current generator; else an int >= 0) reseeds ``np_random``; ``options``: none are
        taken (``None`` or an empty dict; anything else is an error, not ignored).
        Returns ``(state, info)``."""
        seed = check_seed(seed)
        if options is not None and (not isinstance(options, Mapping) or options):
            raise ValueError(f"options: {type(self).__name__}.reset takes no options, got "
                             f"{options!r}")
        super().reset(seed=seed)
        self.s = draw_outcome(self._start_cumulative, self._mdp.start, self.np_random.random())
        self.last_action = None
        return self.s, self._info(float(self._mdp.start[self.s]))

    def step(self, action: ActionLike) -> tuple[int, float, bool, bool, dict[str, Any]]:
        """Take ``action`` (an id in ``[0, A)``): returns ``(next state, reward,
        terminated, truncated=False, info)``, the outcome drawn from the model (its
        Gaussian reward noise too, where ``mdp.reward_sd > 0``)."""
        if self.s is None:
            raise RuntimeError("call reset() before step()")
        a = self._action_id(action)
        s = self.s
        k = draw_outcome(self._cumulative[s, a], self._mdp.prob[s, a], self.np_random.random())
        self.s = int(self._mdp.next_state[s, a, k])
        self.last_action = a
        reward = float(self._mdp.reward[s, a, k])
        sd = 0.0 if self._mdp.reward_sd is None else float(self._mdp.reward_sd[s, a, k])
        if sd > 0.0:  # Gaussian reward noise: only such outcomes draw more
            reward += sd * float(self.np_random.normal())
        terminated = bool(self._mdp.done[s, a, k])
        return self.s, reward, terminated, False, self._info(float(self._mdp.prob[s, a, k]))

    def _action_id(self, action: ActionLike) -> int:
        """``action`` as an id of ``Discrete(A)``: an integer (Python, NumPy or a 0-d
        array) in ``[0, A)``; anything else (``1.7``, ``"1"``, ``None``, ``True``) is an
        error that names it, not a silent ``int()``."""
        value = action.item() if isinstance(action, np.ndarray) and action.ndim == 0 else action
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
            raise ValueError(f"action must be an integer id in [0, {self._mdp.n_actions}) of "
                             f"{self.action_space}, got {action!r} ({type(action).__name__})")
        if not 0 <= value < self._mdp.n_actions:
            raise ValueError(f"action {action!r} is outside [0, {self._mdp.n_actions}) of "
                             f"{self.action_space}")
        return int(value)

    def _info(self, prob: float) -> dict:
        """The info dict after ``reset`` or ``step``: ``prob``, the probability of the
        outcome drawn; a subclass adds what describes its current state ``self.s``."""
        return {"prob": prob}

    def render(self) -> str | np.ndarray | None:
        """:meth:`render_text` in mode ``"ansi"``, ``None`` without a render mode."""
        if self.render_mode == "ansi":
            return self.render_text()
        return None

    def render_text(self) -> str:
        """The current state (and the last action) as one line of text."""
        if self.s is None:
            return "(not reset)\n"
        text = f"state {self._mdp.state_name(self.s)}"
        if self.last_action is not None:
            text += f" after action {self._mdp.action_name(self.last_action)}"
        return text + "\n"
