"""Average-reward control from samples: differential SARSA (Sutton & Barto, section 10.3,
restricted to tables) and R-learning (Schwartz, 1993; the first edition's section 6.7).

A continuing task has no episodes and no discount; a policy is judged by its average
reward ``r(pi)`` (eq. 10.6), and action values are differential: returns measured
against the average, ``R_{t+1} - r(pi) + R_{t+2} - r(pi) + ...`` (eq. 10.9). The
learner keeps an estimate ``Rbar`` of the average reward beside ``Q`` and moves both
by the differential TD error ``delta = R - Rbar + Q(S', A') - Q(S, A)`` (eq. 10.10, the
box of section 10.3 with a tabular ``q``). R-learning is its off-policy counterpart:
the target takes ``max_a Q(S', a)`` and ``Rbar`` moves only on greedy steps. The exact
answer is
:func:`tabular.relative_value_iteration`'s gain and
:func:`tabular.average_reward_solve`'s gain of a policy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import check_positive_int
from tabular.learn.arguments import initial_values, per_run
from tabular.learn.paragraphs import shares_paragraphs
from tabular.learn.results import DifferentialResult
from tabular.model.mdp import TabularMDP, as_mdp
from tabular.model.sampling import sample_start, sample_step
from tabular.results import check_runs, with_run_axis
from tabular.rules.values import epsilon_greedy_action, max_value, update_toward
from tabular.schedules import as_schedule, read_schedule, schedule_value
from tabular.types import MDPLike, StepSize

#: The most time steps of one run (the kernel keeps nothing per step, but a call this
#: long would take hours).
MAX_TIME_STEPS = 10**10
SARSA, R_LEARNING = 0, 1


class DifferentialParams(NamedTuple):
    """Hyper-parameters of differential SARSA and R-learning (a kernel argument):
    ``steps`` per run; the step-size schedules ``alpha`` (over the visits of each pair)
    and ``alpha_average`` (over time steps, for ``Rbar``); ``epsilon`` (over time steps,
    counted in blocks of ``epsilon_block`` steps)."""

    steps: int
    alpha: np.ndarray
    alpha_average: np.ndarray
    epsilon: np.ndarray
    epsilon_block: int


class DifferentialOutputs(NamedTuple):
    """What the kernel fills, each with a leading run axis: ``Q`` ``[runs, S, A]``,
    ``average_reward`` (the final ``Rbar``) and ``reward_rate`` (the reward per step
    actually collected) ``[runs]``."""

    Q: np.ndarray
    average_reward: np.ndarray
    reward_rate: np.ndarray


@njit(cache=True)
def differential_td_error(reward, average_reward, next_value, value):
    """``delta = R - Rbar + Q(S', A') - Q(S, A)`` (eq. 10.10, tabular)."""
    return reward - average_reward + next_value - value


@njit(cache=True)
def r_learning_average_update(average, reward, next_max, greedy_value, beta):
    """``Rbar <- Rbar + beta [R - Rbar + max_a Q(S', a) - max_a Q(S, a)]``: R-learning's
    average-reward step, taken when the action was greedy (Schwartz, 1993)."""
    return average + beta * (reward - average + next_max - greedy_value)


@njit(cache=True, inline="always")
def _differential_run(method, model, params, rng, out, run):
    """Run ``run`` of the box of section 10.3 (tabular ``q``) or of R-learning;
    ``method`` is a constant of each driver."""
    Q = out.Q[run]
    alpha, alpha_average = read_schedule(params.alpha), read_schedule(params.alpha_average)
    epsilon = read_schedule(params.epsilon)
    visits = np.zeros(Q.shape, dtype=np.int64)
    average, total = 0.0, 0.0
    s = sample_start(model, rng)
    a = epsilon_greedy_action(Q[s], schedule_value(epsilon, 1), rng)
    for t in range(params.steps):
        s_next, r, _ = sample_step(model, s, a, rng)
        eps = schedule_value(epsilon, t // params.epsilon_block + 1)
        a_next = epsilon_greedy_action(Q[s_next], eps, rng)
        visits[s, a] += 1
        step = schedule_value(alpha, visits[s, a])
        if method == SARSA:
            delta = differential_td_error(r, average, Q[s_next, a_next], Q[s, a])
            average += schedule_value(alpha_average, t + 1) * delta
            Q[s, a] = update_toward(Q[s, a], Q[s, a] + delta, step)
        else:
            next_max = max_value(Q[s_next])
            delta = differential_td_error(r, average, next_max, Q[s, a])
            Q[s, a] = update_toward(Q[s, a], Q[s, a] + delta, step)
            if Q[s, a] == max_value(Q[s]):
                average = r_learning_average_update(
                    average, r, next_max, Q[s, a], schedule_value(alpha_average, t + 1))
        total += r
        s, a = s_next, a_next
    out.average_reward[run], out.reward_rate[run] = average, total / params.steps


@runs_kernel
def _differential_sarsa(model, params, rng_states, out):
    """Every run of :func:`_differential_run`, the method ``SARSA``."""
    for run in range(rng_states.shape[0]):
        _differential_run(SARSA, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _r_learning(model, params, rng_states, out):
    """Every run of :func:`_differential_run`, the method ``R_LEARNING``."""
    for run in range(rng_states.shape[0]):
        _differential_run(R_LEARNING, model, params, local_stream(rng_states[run]), out, run)


def check_continuing_task(mdp: MDPLike, name: str) -> TabularMDP:
    """``mdp`` as a :class:`~tabular.TabularMDP`; a ``ValueError`` naming learner ``name``
    when an outcome of positive probability ends the episode or pays ``-inf``."""
    mdp = as_mdp(mdp)
    bad = (mdp.prob > 0.0) & (mdp.done | ~np.isfinite(mdp.reward))
    if bad.any():
        s, a, _ = np.argwhere(bad)[0]
        raise ValueError(f"{name} needs a continuing task with finite rewards: "
                         f"state {mdp.state_name(int(s))}, action {mdp.action_name(int(a))} "
                         "ends the episode or pays -inf")
    return mdp


def _learn(driver, name, mdp, *, steps, alpha, alpha_average, epsilon, epsilon_block,
           initial_Q, seed, runs) -> DifferentialResult:
    """Check the arguments of learner ``name``, run ``driver`` and shape its outputs."""
    mdp = check_continuing_task(mdp, name)
    steps = check_positive_int("steps", steps, high=MAX_TIME_STEPS)
    n = check_runs(runs)
    params = DifferentialParams(
        steps=steps, alpha=as_schedule("alpha", alpha).params,
        alpha_average=as_schedule("alpha_average", alpha_average).params,
        epsilon=as_schedule("epsilon", epsilon, low_inclusive=True).params,
        epsilon_block=check_positive_int("epsilon_block", epsilon_block))
    Q0 = initial_values("initial_Q", initial_Q, (mdp.n_states, mdp.n_actions))
    out = DifferentialOutputs(per_run(Q0, n), np.zeros(n), np.zeros(n))
    over_runs(driver, mdp.arrays, params, seed_states(seed, n), out)
    return DifferentialResult(*(with_run_axis(x, runs) for x in out))


@shares_paragraphs
def differential_sarsa(mdp: MDPLike, *, steps: int = 100_000, alpha: StepSize = 0.1,
                       alpha_average: StepSize = 0.01, epsilon: StepSize = 0.1,
                       epsilon_block: int = 1, initial_Q: npt.ArrayLike = 0.0,
                       seed: int | None = 0, runs: int | None = None) -> DifferentialResult:
    """Differential semi-gradient SARSA with a tabular ``q`` (the box of section 10.3):
    one continuing run of ``steps`` time steps, acting epsilon-greedily on ``Q``, moving
    ``Q(S, A)`` by ``alpha delta`` and ``Rbar`` by ``alpha_average delta``, with the
    differential TD error ``delta = R - Rbar + Q(S', A') - Q(S, A)`` (eq. 10.10).

    Parameters
    ----------
    {mdp_continuing steps alpha_differential alpha_average epsilon_blocks epsilon_block}
    {initial_Q seed_plain runs_plain}

    Returns a :class:`DifferentialResult`.
    """
    return _learn(_differential_sarsa, "differential_sarsa", mdp, steps=steps, alpha=alpha,
                  alpha_average=alpha_average, epsilon=epsilon, epsilon_block=epsilon_block,
                  initial_Q=initial_Q, seed=seed, runs=runs)


@shares_paragraphs
def r_learning(mdp: MDPLike, *, steps: int = 100_000, alpha: StepSize = 0.1,
               alpha_average: StepSize = 0.01, epsilon: StepSize = 0.1, epsilon_block: int = 1,
               initial_Q: npt.ArrayLike = 0.0, seed: int | None = 0, runs: int | None = None
               ) -> DifferentialResult:
    """R-learning (Schwartz, 1993; Sutton & Barto, 1st edition, section 6.7): one
    continuing run of ``steps`` time steps, acting epsilon-greedily on ``Q``;
    ``Q(S, A) += alpha [R - Rbar + max_a Q(S', a) - Q(S, A)]``, then, if ``A`` is (now)
    greedy in ``S``, ``Rbar += alpha_average [R - Rbar + max_a Q(S', a) - max_a Q(S, a)]``.
    Off-policy: ``Q`` and ``Rbar`` estimate the greedy policy's values and gain.

    Parameters
    ----------
    {mdp_continuing steps alpha_differential alpha_average epsilon_blocks epsilon_block}
    {initial_Q seed_plain runs_plain}

    Returns a :class:`DifferentialResult`.
    """
    return _learn(_r_learning, "r_learning", mdp, steps=steps, alpha=alpha,
                  alpha_average=alpha_average, epsilon=epsilon, epsilon_block=epsilon_block,
                  initial_Q=initial_Q, seed=seed, runs=runs)
