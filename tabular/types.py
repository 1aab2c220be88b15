"""The type aliases of the public signatures: each names one form an argument may take.

- :data:`MDPLike` -- the model: a :class:`~tabular.TabularMDP`, or a Gymnasium env with
  a transition table (compiled by :func:`~tabular.model.mdp.as_mdp`);
- :data:`PolicyLike` -- a policy in any of its forms: a greedy ``int [S]`` array of
  actions, a stochastic ``[S, A]`` array, or a :class:`~tabular.SoftmaxPolicy`;
- :data:`StepSize` -- a step size or exploration rate: a number, or a
  :class:`~tabular.schedules.Schedule` evaluated at a count;
- :data:`FloatArray`, :data:`IntArray`, :data:`BoolArray` -- what a function returns,
  by dtype (float64, int64, bool); inputs are ``numpy.typing.ArrayLike`` where the
  function converts them with ``np.asarray``;
- :class:`TokenEnv` -- what the RLHF functions read of a token MDP
  (:class:`tabular.envs.TokenMDP` is one), so that :mod:`tabular` needs neither
  :mod:`tabular.envs` nor Gymnasium to import.

The aliases that name Gymnasium are strings, evaluated only by a type checker (and by
``typing.get_type_hints`` given ``gym``): importing :mod:`gymnasium` takes 0.4 s, and
``import tabular`` does not pay it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from tabular.model.mdp import TabularMDP
from tabular.model.policy import SoftmaxPolicy
from tabular.schedules import Schedule

if TYPE_CHECKING:
    import gymnasium as gym

__all__ = ["BoolArray", "FloatArray", "IntArray", "MDPLike", "PolicyLike", "StepSize",
           "TokenEnv"]

#: The model: a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
MDPLike: TypeAlias = "TabularMDP | gym.Env[Any, Any]"

#: A greedy ``int [S]`` policy, a stochastic ``[S, A]`` one, or a :class:`SoftmaxPolicy`.
PolicyLike: TypeAlias = SoftmaxPolicy | npt.ArrayLike

#: A number, or a :class:`~tabular.schedules.Schedule` of the count it is evaluated at.
StepSize: TypeAlias = float | Schedule

#: A float64 array (a value table, a distribution, weights).
FloatArray: TypeAlias = npt.NDArray[np.float64]
#: An int64 array (states, actions, counts).
IntArray: TypeAlias = npt.NDArray[np.int64]
#: A bool array (masks, flags).
BoolArray: TypeAlias = npt.NDArray[np.bool_]


class TokenEnv(Protocol):
    """A token MDP as the RLHF functions read it (:class:`tabular.envs.TokenMDP` is
    one): its tree model, its prompts and vocabulary, its states and their text."""

    @property
    def prompts(self) -> Sequence[str]: ...

    @property
    def vocab(self) -> Sequence[str]: ...

    @property
    def eos_id(self) -> int: ...

    @property
    def max_len(self) -> int: ...

    @property
    def n_states(self) -> int: ...

    @property
    def state_response(self) -> tuple[tuple[int, ...], ...]: ...

    @property
    def state_prompt(self) -> npt.NDArray[np.integer[Any]]: ...

    @property
    def terminal(self) -> BoolArray: ...

    @property
    def legal(self) -> BoolArray: ...

    def to_mdp(self) -> TabularMDP: ...

    def encode(self, text: str, what: str = ...) -> tuple[int, ...]: ...

    def state_of(self, prompt: int | str, response: str | Sequence[int] = ...) -> int: ...

    def context(self, s: int) -> tuple[int, ...]: ...

    def text(self, s: int) -> str: ...
