"""What the planning learners of :mod:`tabular.plan.dyna` share: their kernel records, their
result, the checks of their arguments and their docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tabular._numba.rng import seed_states
from tabular.checks import check_gamma, check_positive_int
from tabular.learn.results import ControlResult
from tabular.learn.setup import check_episode_args, control_outputs, initial_values
from tabular.model.mdp import TabularMDP, as_mdp
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
    threshold (each read only by its method); ``switch_step``: the time step at which
    the environment switches to the kernel's second model.
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
    switch_step: int


class PlanningOutputs(NamedTuple):
    """What a planning kernel fills: ``ControlOutputs``' ``Q``, ``returns``, ``lengths``
    and ``updates``, the number of updates of ``Q`` in each episode (int64 ``[n,
    episodes]``)."""

    Q: np.ndarray
    returns: np.ndarray
    lengths: np.ndarray
    updates: np.ndarray


@dataclass(frozen=True, eq=False)
class PlanningResult:
    """What the planning learners return: the fields of a
    :class:`~tabular.results.ControlResult` and ``episode_updates``.

    ``Q`` ``[S, A]``; ``episode_returns`` (undiscounted sum of rewards) and
    ``episode_lengths`` (steps) ``[episodes]``; ``episode_updates`` (int64
    ``[episodes]``): the updates of ``Q`` made in each episode, real and planned; each
    with a leading run axis when ``runs=n``. ``policy``, ``V``, ``runs``, ``episodes``
    and ``run(i)`` are those of a ``ControlResult``; ``control`` is the result as one.
    """

    episode_returns: np.ndarray
    episode_lengths: np.ndarray
    Q: np.ndarray
    episode_updates: np.ndarray

    @property
    def control(self) -> ControlResult:
        """The result without ``episode_updates``, as every control learner returns it."""
        return ControlResult(episode_returns=self.episode_returns,
                             episode_lengths=self.episode_lengths, Q=self.Q)

    @property
    def policy(self) -> np.ndarray:
        """The greedy policy ``argmax_a Q(s, a)`` (int64, lowest action on ties)."""
        return self.control.policy

    @property
    def V(self) -> np.ndarray:
        """``max_a Q(s, a)``."""
        return self.control.V

    @property
    def runs(self) -> int | None:
        """``None`` for a single-run result (no run axis), else the number of runs."""
        return self.control.runs

    @property
    def episodes(self) -> int:
        return self.control.episodes

    def run(self, i: int) -> PlanningResult:
        """Run ``i`` of a multi-run result, as a single-run result."""
        one = self.control.run(i)
        return PlanningResult(one.episode_returns, one.episode_lengths, one.Q,
                              self.episode_updates[i])


# --------------------------------------------------------------------- arguments


def _check_planning_steps(value, low: int) -> int:
    """``planning_steps`` as an int in ``[low, MAX_PLANNING_STEPS]``."""
    if (isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number)
            or not np.isfinite(value) or int(value) != value
            or not low <= value <= MAX_PLANNING_STEPS):
        raise ValueError(f"planning_steps must be an integer in [{low}, "
                         f"{MAX_PLANNING_STEPS:,}], got {value!r}")
    return int(value)


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


def plan(driver, method, mdp, *, planning_steps, min_planning_steps, kappa, theta, model,
         switch, gamma, episodes, alpha, epsilon, initial_Q, seed, runs,
         max_steps) -> PlanningResult:
    """Check the arguments of a planning learner, run ``method`` with its ``driver``,
    return the result."""
    mdp = as_mdp(mdp)
    gamma = check_gamma(gamma)
    episodes, n_runs, max_steps = check_episode_args(mdp, episodes, runs, max_steps)
    alpha = as_schedule("alpha", alpha)
    epsilon = as_schedule("epsilon", epsilon, low_inclusive=True)
    Q, returns, lengths = control_outputs(
        initial_values("initial_Q", initial_Q, (mdp.n_states, mdp.n_actions)), n_runs,
        episodes)
    planning_steps = _check_planning_steps(planning_steps, min_planning_steps)
    switch_step, other = _check_switch(mdp, switch)
    mdps = [mdp] if other is None else [mdp, other]
    counts = _counts_model(model, mdps)
    capacity = sum(m.n_outcomes for m in mdps) if counts else 1  # distinct outcomes seen
    params = PlanningParams(method, gamma, alpha.params, epsilon.params, episodes, max_steps,
                            planning_steps, counts, capacity, kappa, theta, switch_step)
    out = PlanningOutputs(Q, returns, lengths, np.zeros((n_runs, episodes), dtype=np.int64))
    driver(mdp.arrays, (mdp if other is None else other).arrays, params,
           seed_states(seed, n_runs), out)
    return PlanningResult(*(with_run_axis(x, runs) for x in (returns, lengths, Q, out.updates)))


_PLANNING_ARGS = """
    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
    planning_steps : {planning_steps}
    {method_args}gamma : discount in [0, 1], default 1.0.
    episodes : episodes per run, default 500.
    alpha : step size in (0, 1], or a :mod:`tabular.schedules` schedule over the
        updates of each pair ``(s, a)``, real and planned, default 0.5.
    epsilon : exploration in [0, 1], or a schedule over episodes, default 0.1.
    initial_Q : the initial estimate, a finite number or ``[S, A]`` array, default 0.0.
    {model_arg}switch : ``None`` (default), or ``(step, other_mdp)``: after ``step`` time
        steps (real steps over the run's episodes) the environment becomes
        ``other_mdp``, a model with the same states and actions (the changing mazes
        of Figures 8.4 and 8.5, :func:`envs.mazes.changing_maze`).
    seed : seed of the runs' random streams (same seed, same numbers), default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs, a
        leading run axis of length ``n`` (also for ``n = 1``).
    max_steps : the step limit per episode (a cut episode still bootstraps from the
        state reached), default ``None``: the env's time limit
        (``mdp.max_episode_steps``), else 10,000.

    Returns a :class:`PlanningResult`: ``Q`` ``[S, A]``; ``policy``, its greedy policy;
    ``V = max_a Q``; ``episode_returns`` (undiscounted sum of rewards),
    ``episode_lengths`` (steps) and ``episode_updates`` ({updates}) of each episode,
    ``[episodes]``; each with a leading run axis when ``runs=n``.
"""

_MODEL_ARG = """model : the model learned: ``"last"``, the last outcome of each pair (the
        box's deterministic model, which follows a changing environment); ``"counts"``,
        every outcome seen with its count, planning drawing them in proportion (a
        stochastic environment); default ``"auto"``: ``"last"`` when every pair of the
        environment (and of ``switch``'s) has one outcome, else ``"counts"``.
    """


def planning_doc(summary: str, planning_steps: str, updates: str, method_args: str = "",
                  model_arg: str = _MODEL_ARG):
    """Give a planning learner its docstring: ``summary`` and the shared arguments."""
    def decorate(fn):
        fn.__doc__ = summary + _PLANNING_ARGS.format(
            planning_steps=planning_steps, method_args=method_args, model_arg=model_arg,
            updates=updates)
        return fn
    return decorate


