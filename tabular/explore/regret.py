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

from tabular.checks import check_positive_int, check_unit_interval
from tabular.explore.communication import MULTICHAIN, communication_class, continuing_kernel
from tabular.explore.evaluation import optimal_value, policy_values, worst_value
from tabular.explore.hardness import MAX_STATES, optimal_bias
from tabular.explore.results import ExplorationResult
from tabular.explore.setup import reward_range
from tabular.explore.ucrl2 import UCRL2Result
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


@dataclass(frozen=True, eq=False, repr=False)
class AverageRegretResult(RunsResult):
    """What :func:`average_regret` returns (a leading run axis when the trajectory had
    one): ``per_step``: ``rho* - r(s_t, a_t)`` ``[T]``; ``cumulative``: its running sum;
    ``optimal_gain``: ``rho*`` (shared)."""

    run_axis_of = ("per_step", 1)

    per_step: np.ndarray
    cumulative: np.ndarray
    optimal_gain: float = field(default=0.0, metadata=SHARED)


def average_regret(mdp: MDPLike, trajectory: UCRL2Result, *,
                   max_iter: int = 1_000_000) -> AverageRegretResult:
    """The regret of a continuing learner against the optimal gain (Jaksch et al., 2010,
    section 2): ``sum_t rho* - r(s_t, a_t)``, with ``r(s, a)`` the exact expected reward of
    each pair it took, so that the measure holds no reward noise (given the pairs).

    ``mdp``: the model the learner ran on (outcomes that end the episode restart it from
    the start distribution, as the learner did); weakly communicating (so that ``rho*``
    is one number), at most 1000 states; ``trajectory``: a :class:`UCRL2Result`;
    ``max_iter``: the sweep limit of the relative value iteration that computes ``rho*``.
    """
    mdp = as_mdp(mdp)
    reward_range(mdp, "average_regret")
    if not isinstance(trajectory, UCRL2Result):
        raise TypeError(f"trajectory must be a UCRL2Result (what ucrl2 returns), got "
                        f"{type(trajectory).__name__}")
    if mdp.n_states > MAX_STATES:
        raise ValueError(f"average_regret solves for rho* densely: at most {MAX_STATES} "
                         f"states, got {mdp.n_states}")
    if trajectory.states.max() >= mdp.n_states or trajectory.actions.max() >= mdp.n_actions:
        raise ValueError("trajectory visits states or actions the mdp does not have: pass "
                         "the model the learner ran on")
    P, r = continuing_kernel(mdp)
    if communication_class(P > 0.0) == MULTICHAIN:
        raise ValueError("average_regret: the model is not weakly communicating, so its "
                         "optimal gain depends on the start state")
    gain, _ = optimal_bias(P, r, check_positive_int("max_iter", max_iter))
    per_step = gain - r[trajectory.states, trajectory.actions]
    return AverageRegretResult(per_step, np.cumsum(per_step, axis=-1), optimal_gain=gain)
