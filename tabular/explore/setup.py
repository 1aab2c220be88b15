"""What the episodic exploration learners share: argument checks, the kernel records,
and the call that runs a kernel and shapes its result.

Every learner is a thin Python function in front of a runs driver
(:mod:`tabular._numba.runs`) over one run function ``_x_run(model, params, rng, out,
run)``, in the shape of :mod:`tabular.learn`: the model is reached only through
:func:`~tabular.model.sampling.sample_step` and
:func:`~tabular.model.sampling.sample_start`; what the learner may know in advance
(``S``, ``A``, ``H``, the range of one reward) comes in :class:`ExploreParams`.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, cast

import numpy as np

from tabular._numba.rng import seed_states
from tabular._numba.runs import over_runs
from tabular.checks import check_positive_int, check_size, check_unit_interval
from tabular.explore.results import ExplorationResult
from tabular.model.mdp import TabularMDP, as_mdp
from tabular.results import check_runs, with_run_axis

#: The most recorded policy entries ``runs x episodes x H x S`` (int16: 0.2 GB).
MAX_POLICY_ENTRIES = 10**8
#: The longest horizon: ``H`` steps of planning per episode.
MAX_HORIZON = 100_000
#: The most actions a recorded (int16) policy can name.
MAX_ACTIONS = 2**15 - 1
#: The confidence bonuses of the optimistic learners (:attr:`ExploreParams.bonus`).
HOEFFDING, BERNSTEIN = 0, 1
BONUSES = {"hoeffding": HOEFFDING, "bernstein": BERNSTEIN}


class ExploreParams(NamedTuple):
    """The learners' hyper-parameters and prior knowledge (a kernel argument).

    ``n_states``, ``n_actions``, ``horizon`` (``H``), ``episodes`` (``K``);
    ``r_min``, ``r_max``: the range of one reward (bonuses scale with ``r_max - r_min``,
    value caps are ``(H - h) r_max``); ``log_term``: the confidence logarithm;
    ``bonus``: the bonus kind (a learner's constant); ``scale``: the bonus multiplier;
    ``epsilon``: the probability of a uniformly random action; ``prior_count``: the
    Dirichlet concentration of each successor (PSRL); ``reward_precision``: the
    precision of the reward noise and of the prior on a mean reward (PSRL).
    """

    n_states: int
    n_actions: int
    horizon: int
    episodes: int
    r_min: float
    r_max: float
    log_term: float
    bonus: int
    scale: float
    epsilon: float
    prior_count: float
    reward_precision: float


class ExploreOutputs(NamedTuple):
    """What the kernels fill, with a leading run axis: ``returns`` and ``lengths``
    ``[runs, K]``, ``policy`` int16 ``[runs, K, H, S]``."""

    returns: np.ndarray
    lengths: np.ndarray
    policy: np.ndarray


def check_horizon(horizon: object) -> int:
    """``horizon`` (``H``) as an int in ``[1, MAX_HORIZON]``."""
    return check_positive_int("horizon", cast(int, horizon), high=MAX_HORIZON)


def check_delta(delta: object) -> float:
    """The confidence level ``delta`` as a float in ``(0, 1)``."""
    delta = check_unit_interval("delta", cast(float, delta))
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return delta


def check_bonus(bonus: object, kinds: dict[str, int] = BONUSES) -> int:
    """The bonus kind named ``bonus`` as its code in ``kinds`` (default ``BONUSES``,
    ``"hoeffding"`` and ``"bernstein"``); a ``ValueError`` naming ``bonus`` otherwise,
    a non-string included (a list is not hashable)."""
    if not isinstance(bonus, str) or bonus not in kinds:
        raise ValueError(f"bonus must be one of {sorted(kinds)}, got {bonus!r}")
    return kinds[bonus]


def reward_range(mdp: TabularMDP, name: str) -> tuple[float, float]:
    """``(r_min, r_max)`` over the outcomes of positive probability; a ``ValueError``
    naming the state and action of a ``-inf`` reward, which no bonus or regret can
    measure."""
    live = mdp.prob > 0.0
    bad = live & ~np.isfinite(mdp.reward)
    if bad.any():
        s, a, _ = np.argwhere(bad)[0]
        raise ValueError(f"{name}: state {mdp.state_name(int(s))}, action "
                         f"{mdp.action_name(int(a))} can pay a reward of -inf: exploration "
                         "bonuses and regret need finite rewards (e.g. "
                         "gymnasium.make('tabzoo/TrapTreasure-v0', trap_reward=-10.0))")
    rewards = mdp.reward[live]
    return float(rewards.min()), float(rewards.max())


def learner_setup(mdp, horizon, episodes, runs,
                  name: str) -> tuple[TabularMDP, int, int, int, float, float]:
    """``(mdp, H, K, n_runs, r_min, r_max)`` checked: ``mdp`` a model (or an env with a
    transition table), ``H`` and ``K`` integers >= 1, the recorded policies within
    :data:`MAX_POLICY_ENTRIES`."""
    mdp = as_mdp(mdp)
    horizon = check_horizon(horizon)
    episodes = check_positive_int("episodes", episodes)
    n = check_runs(runs)
    if mdp.n_actions > MAX_ACTIONS:
        raise ValueError(f"{name} records int16 policies: at most {MAX_ACTIONS} actions, "
                         f"got {mdp.n_actions}")
    check_size(f"runs={n} x episodes={episodes} x horizon={horizon} x S={mdp.n_states}",
               n * episodes * horizon * mdp.n_states, MAX_POLICY_ENTRIES, 2,
               "recorded policy entries")
    r_min, r_max = reward_range(mdp, name)
    return mdp, horizon, episodes, n, r_min, r_max


def confidence_log(mdp: TabularMDP, horizon: int, episodes: int, delta: float,
                   factor: float) -> float:
    """``L = ln(factor S A T / delta)``, ``T = K H`` the steps of the whole run."""
    return math.log(factor * mdp.n_states * mdp.n_actions * horizon * episodes / delta)


def run_learner(driver, mdp: TabularMDP, params: Any, seed, runs,
                n: int) -> ExplorationResult:
    """Run ``driver`` over ``n`` runs of ``seed`` and shape its outputs (``params``: the
    driver's record, :class:`ExploreParams` or a learner's own, such as RLSVI's)."""
    K, H, S = params.episodes, params.horizon, params.n_states
    out = ExploreOutputs(np.zeros((n, K)), np.zeros((n, K), dtype=np.int64),
                         np.zeros((n, K, H, S), dtype=np.int16))
    over_runs(driver, mdp.arrays, params, seed_states(seed, n), out)
    return ExplorationResult(with_run_axis(out.returns, runs), with_run_axis(out.lengths, runs),
                             with_run_axis(out.policy, runs), epsilon=params.epsilon,
                             horizon=H)
