"""Exact regret of an episodic learner, from the policies it followed.

The (expected) regret of episode ``k`` is ``V*_0(s0) - V^{pi_k}_0(s0)``: what the best
time-dependent policy earns in ``H`` steps minus what the policy the learner actually
followed in that episode earns, both exact expectations over the dynamics and the start
distribution (:mod:`tabular.explore.evaluation`). The realised return of episode ``k``
is an unbiased sample of ``V^{pi_k}_0(s0)`` given ``pi_k``; the regret here holds no
sampling noise of its own, only the randomness of which policies the learner came to
follow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from tabular.checks import check_unit_interval
from tabular.explore.evaluation import optimal_value, policy_values, worst_value
from tabular.explore.results import ExplorationResult
from tabular.explore.setup import reward_range
from tabular.model.mdp import as_mdp
from tabular.results import SHARED, RunsResult
from tabular.types import MDPLike


@dataclass(frozen=True, eq=False, repr=False)
class RegretResult(RunsResult):
    """What :func:`regret` returns (a leading run axis when the policies had one).

    ``per_episode``: ``V*_0(s0) - V^{pi_k}_0(s0)`` of each episode ``[K]``;
    ``cumulative``: its running sum; ``normalised``: ``cumulative / (V* - V_worst)``,
    the regret counted in episodes of the worst policy (Colosseum's normalisation: a
    learner that played the worst policy in every episode has ``normalised[k] = k +
    1``; 0 where ``V* = V_worst``); ``values``: ``V^{pi_k}_0(s0)``; ``optimal_value``
    ``V*``, ``worst_value`` ``V_worst`` (shared by all runs).
    """

    run_axis_of = ("per_episode", 1)

    per_episode: np.ndarray
    cumulative: np.ndarray
    normalised: np.ndarray
    values: np.ndarray
    optimal_value: float = field(default=0.0, metadata=SHARED)
    worst_value: float = field(default=0.0, metadata=SHARED)


def regret(mdp: MDPLike, policies: ExplorationResult | npt.ArrayLike, *,
           epsilon: float | None = None) -> RegretResult:
    """The exact per-episode, cumulative and normalised regret of the policies followed.

    ``mdp``: the model the learner explored (a :class:`~tabular.TabularMDP` or a
    Gymnasium env with a transition table), with finite rewards; ``policies``: an
    :class:`~tabular.explore.results.ExplorationResult` (its ``policy`` and ``epsilon``
    are read), or the greedy action tables ``[K, H, S]`` (``[runs, K, H, S]``) of integer
    actions, ``policies[k, h, s]`` the action at step ``h`` in state ``s`` in episode
    ``k``; ``epsilon``: with an array, the probability of a uniformly random action
    instead (default ``None``: 0, or the result's own), in [0, 1].

    ``H`` is the length of the tables' step axis; ``V*`` comes from
    :func:`~tabular.finite_horizon` over ``H`` steps, ``V^{pi_k}`` from the exact
    backward evaluation of ``pi_k``, both averaged over ``mdp.start``.
    """
    mdp = as_mdp(mdp)
    reward_range(mdp, "regret")
    if isinstance(policies, ExplorationResult):
        if epsilon is not None:
            raise ValueError("epsilon: an ExplorationResult carries its own epsilon; pass "
                             "epsilon only with an array of policies")
        table, epsilon = policies.policy, policies.epsilon
    else:
        table = _check_policies(mdp, policies)
        epsilon = 0.0 if epsilon is None else check_unit_interval("epsilon", epsilon)
    if table.ndim not in (3, 4):
        raise ValueError(f"policies must have shape [K, H, S] or [runs, K, H, S], got "
                         f"shape {table.shape}")
    if table.shape[-1] != mdp.n_states:
        raise ValueError(f"policies must have S = {mdp.n_states} entries on the last axis "
                         f"(one action per state), got shape {table.shape}")
    horizon = table.shape[-2]
    best, worst = optimal_value(mdp, horizon), worst_value(mdp, horizon)
    values = policy_values(mdp, table, epsilon)
    per_episode = best - values
    cumulative = np.cumsum(per_episode, axis=-1)
    width = best - worst
    normalised = cumulative / width if width > 0.0 else np.zeros_like(cumulative)
    return RegretResult(per_episode, cumulative, normalised, values, optimal_value=best,
                        worst_value=worst)


def _check_policies(mdp, policies) -> np.ndarray:
    """``policies`` as an int64 array of actions in ``[0, A)``: a clear error for a float,
    bool or out-of-range entry."""
    table = np.asarray(policies)
    if table.dtype == bool or not np.issubdtype(table.dtype, np.integer):
        raise ValueError(f"policies must be integer actions (greedy tables [K, H, S]), got "
                         f"dtype {table.dtype}")
    if table.size and (table.min() < 0 or table.max() >= mdp.n_actions):
        bad = tuple(int(i) for i in np.argwhere((table < 0) | (table >= mdp.n_actions))[0])
        raise ValueError(f"policies{list(bad)} = {int(table[bad])} is not an action in "
                         f"[0, {mdp.n_actions})")
    return table.astype(np.int64)
