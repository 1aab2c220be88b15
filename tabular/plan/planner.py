"""What sets each planning learner of :mod:`tabular.plan.dyna` apart (:class:`Planner`), the
records its kernel reads and fills, the checks of its arguments, and :func:`plan`, which
checks them, runs the kernel and returns the result (:mod:`tabular.plan.results`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tabular._numba.rng import seed_states
from tabular._numba.runs import over_runs
from tabular.checks import check_count, check_gamma, check_positive_int
from tabular.learn.arguments import check_episode_args, initial_values
from tabular.learn.divergence import check_estimate
from tabular.learn.outputs import control_outputs
from tabular.model.mdp import ModelArrays, TabularMDP, as_mdp
from tabular.plan.results import PlanningResult
from tabular.results import with_run_axis
from tabular.schedules import as_schedule

#: The most planning updates per real step a learner accepts.
MAX_PLANNING_STEPS = 10**8

#: The learned models: ``"last"`` keeps the last outcome of each pair (the boxes'
#: deterministic model), ``"counts"`` every outcome seen with its count; ``"auto"`` is
#: ``"last"`` for an environment with one outcome per pair, else ``"counts"``.
MODELS = ("auto", "last", "counts")


class PlanningParams(NamedTuple):
    """Hyper-parameters of Dyna-Q, Dyna-Q+ and prioritized sweeping (a kernel argument).

    ``method``: which of the three (``tabular.plan.dyna.DYNA_Q``, ...); ``gamma``: discount;
    ``alpha``: step-size schedule ``float64[4]`` over the updates of each pair;
    ``epsilon``: exploration schedule ``float64[4]`` over episodes;
    ``episodes``, ``max_steps``: episodes per run, step limit per episode;
    ``planning_steps``: the ``n`` of the boxes; ``counts``: the model keeps every
    outcome with its count (else the last outcome); ``capacity``: the outcomes it keeps
    per pair; ``kappa``: Dyna-Q+'s bonus scale, ``theta``: prioritized sweeping's
    threshold (each read only by its method).
    """

    method: int
    gamma: float
    alpha: np.ndarray
    epsilon: np.ndarray
    episodes: int
    max_steps: int
    planning_steps: int
    counts: bool
    capacity: int
    kappa: float
    theta: float


class Dynamics(NamedTuple):
    """The environment a run samples: ``model`` until time step ``switch_step``, then
    ``switched`` (the same model when the environment does not change)."""

    model: ModelArrays
    switched: ModelArrays
    switch_step: int


class PlanningOutputs(NamedTuple):
    """What a planning kernel fills: ``ControlOutputs``' ``Q``, ``returns``, ``lengths``
    and ``updates``, the number of updates of ``Q`` in each episode (int64 ``[n,
    episodes]``)."""

    Q: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray
    updates: np.ndarray


class Planner(NamedTuple):
    """What sets a planning learner apart from the others (checked by its public function).

    ``method``: ``tabular.plan.dyna.DYNA_Q``, ``DYNA_Q_PLUS`` or ``PRIORITIZED_SWEEPING``;
    ``planning_steps``: the ``n`` of the boxes; ``kappa``: Dyna-Q+'s bonus scale;
    ``theta``: prioritized sweeping's threshold (0 where unused); ``model``: the model
    learned, one of :data:`MODELS`.
    """

    method: int
    planning_steps: int
    kappa: float
    theta: float
    model: str


# --------------------------------------------------------------------- arguments


def check_planning_steps(value, low: int) -> int:
    """``planning_steps`` as an int in ``[low, MAX_PLANNING_STEPS]``."""
    return check_count("planning_steps", value, low, MAX_PLANNING_STEPS)


def _check_switch(mdp: TabularMDP, switch) -> tuple[int, TabularMDP | None]:
    """``(step, other_mdp)`` of ``switch=(step, other_mdp)``, or ``(0, None)``."""
    if switch is None:
        return 0, None
    if not isinstance(switch, tuple | list) or len(switch) != 2:
        raise ValueError(f"switch must be None or (step, mdp), got {switch!r}")
    step = check_positive_int("switch step", switch[0], high=np.iinfo(np.int64).max)
    other = as_mdp(switch[1], "switch mdp")
    if (other.n_states, other.n_actions) != (mdp.n_states, mdp.n_actions):
        raise ValueError(f"switch mdp has {other.n_states} states and {other.n_actions} "
                         f"actions, mdp has {mdp.n_states} and {mdp.n_actions}: they must "
                         "have the same")
    return step, other


def _counts_model(model, mdps) -> bool:
    """Whether the learned model keeps counts of outcomes (``model="counts"``, or
    ``"auto"`` where some pair of ``mdps`` has several outcomes) or the last one."""
    if not isinstance(model, str) or model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(map(repr, MODELS))}, got {model!r}")
    if model == "auto":
        return any(((m.prob > 0.0).sum(axis=2) > 1).any() for m in mdps)
    return model == "counts"


def plan(driver, planner: Planner, mdp, *, switch, gamma, episodes, alpha, epsilon, initial_Q,
         seed, runs, max_steps) -> PlanningResult:
    """Check the arguments every planning learner shares, run ``planner`` with the runs
    ``driver`` of :mod:`tabular.plan.dyna`, and return its result (the arguments are
    those of :func:`~tabular.plan.dyna.dyna_q`)."""
    mdp = as_mdp(mdp)
    gamma = check_gamma(gamma)
    episodes, n_runs, max_steps = check_episode_args(mdp, episodes, runs, max_steps)
    alpha = as_schedule("alpha", alpha)
    epsilon = as_schedule("epsilon", epsilon, low_inclusive=True)
    Q, returns, lengths = control_outputs(
        initial_values("initial_Q", initial_Q, (mdp.n_states, mdp.n_actions)), n_runs,
        episodes)
    switch_step, other = _check_switch(mdp, switch)
    mdps = [mdp] if other is None else [mdp, other]
    counts = _counts_model(planner.model, mdps)
    capacity = sum(m.n_outcomes for m in mdps) if counts else 1  # distinct outcomes seen
    params = PlanningParams(method=planner.method, gamma=gamma, alpha=alpha.params,
                            epsilon=epsilon.params, episodes=episodes, max_steps=max_steps,
                            planning_steps=planner.planning_steps, counts=counts, capacity=capacity,
                            kappa=planner.kappa, theta=planner.theta)
    out = PlanningOutputs(Q=Q, returns=returns, lengths=lengths,
                          updates=np.zeros((n_runs, episodes), dtype=np.int64))
    env = Dynamics(mdp.arrays, (mdp if other is None else other).arrays, switch_step)
    over_runs(driver, env, params, seed_states(seed, n_runs), out)
    for m in mdps:  # a -inf value is exact only if one of the models pays -inf
        if np.isneginf(m.arrays.reward).any():
            break
    else:
        check_estimate("Q", with_run_axis(Q, runs), mdp)
    return PlanningResult(*(with_run_axis(x, runs) for x in (returns, lengths, Q, out.updates)))
