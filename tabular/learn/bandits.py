"""k-armed bandits (Sutton & Barto, chapter 2): the testbed and the methods of the chapter.

- :class:`BanditTestbed` -- the 10-armed testbed of section 2.3 (true values
  ``q*(a) ~ N(mean, spread^2)`` drawn per run, rewards ``N(q*(a), reward_sd^2)``),
  non-stationary when ``walk_sd > 0`` (Exercise 2.5: every ``q*(a)`` takes an
  independent ``N(0, walk_sd^2)`` step after each time step);
- :func:`epsilon_greedy_bandit` -- epsilon-greedy action values (sections 2.2-2.4) with
  sample averages (eq. 2.3) or a constant step size (eq. 2.5), and optimistic initial
  values (section 2.6);
- :func:`ucb_bandit` -- upper-confidence-bound selection (eq. 2.10, section 2.7);
- :func:`gradient_bandit` -- preferences updated by eq. 2.12, with or without the
  average-reward baseline (section 2.8).

A bandit is the one-state case of an MDP whose rewards are Gaussian, sampled inside
the kernel. Each run draws its own testbed and its rewards from its own stream: same
seed, same numbers, and run ``i`` of ``runs=n`` is run ``i`` of ``runs=m``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import normal, seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import (
    check_finite,
    check_flag,
    check_nonnegative,
    check_positive_int,
    check_size,
)
from tabular.learn.results import BanditResult
from tabular.model.mdp import MAX_REWARD
from tabular.results import check_runs, with_run_axis
from tabular.rules.bandits import incremental_mean, ucb_action
from tabular.rules.policy_gradient import log_prob_grad, sample_softmax
from tabular.rules.values import epsilon_greedy_action, update_toward
from tabular.schedules import as_schedule, inverse, read_schedule, schedule_value
from tabular.types import StepSize

EPSILON_GREEDY, UCB, GRADIENT = 0, 1, 2
#: The most entries of one recorded output (``runs x steps`` rewards, ``runs x k`` values),
#: checked before anything is allocated: 0.8 GB of float64 at this size.
MAX_OUTPUT_ENTRIES = 10**8


class BanditTestbed(NamedTuple):
    """The k-armed testbed (section 2.3): ``k`` arms whose true values ``q*(a)`` are drawn
    per run from ``N(mean, spread^2)`` (``spread = 0``: all equal to ``mean``), rewards
    ``N(q*(a), reward_sd^2)``; with ``walk_sd > 0`` every ``q*(a)`` then random-walks by
    ``N(0, walk_sd^2)`` per step (Exercise 2.5). Defaults: the book's 10-armed testbed."""

    k: int = 10
    mean: float = 0.0
    spread: float = 1.0
    reward_sd: float = 1.0
    walk_sd: float = 0.0


class BanditParams(NamedTuple):
    """Hyper-parameters of the bandit methods (a kernel argument): ``steps`` per run;
    ``epsilon`` (schedule over steps) and ``c`` for selection; ``alpha`` (schedule over an
    arm's pulls for action values, over steps for preferences); ``initial`` value or
    preference; ``baseline`` of the gradient bandit."""

    steps: int
    epsilon: np.ndarray
    c: float
    alpha: np.ndarray
    initial: float
    baseline: bool


class BanditOutputs(NamedTuple):
    """What the bandit kernels fill, each with a leading run axis: ``rewards`` and
    ``optimal`` (the arm pulled was a best one) ``[runs, steps]``, the final
    ``estimates`` (``Q`` or preferences ``H``) and true values ``means`` ``[runs, k]``."""

    rewards: np.ndarray
    optimal: np.ndarray
    estimates: np.ndarray
    means: np.ndarray


@njit(cache=True, inline="always")
def _bandit_run(method, testbed, params, rng, out, run):
    """Run ``run``: draw the testbed, then ``steps`` pulls of ``method`` (a constant of
    each driver)."""
    rewards, optimal = out.rewards[run], out.optimal[run]
    estimates, means = out.estimates[run], out.means[run]
    k = testbed.k
    epsilon, alpha = read_schedule(params.epsilon), read_schedule(params.alpha)
    for a in range(k):
        means[a] = testbed.mean + testbed.spread * normal(rng)
        estimates[a] = params.initial
    counts = np.zeros(k, dtype=np.int64)
    probs = np.empty(k)  # the softmax (gradient bandit) or the UCB scores
    average = 0.0  # the gradient bandit's baseline R-bar
    for t in range(params.steps):
        if method == EPSILON_GREEDY:
            a = epsilon_greedy_action(estimates, schedule_value(epsilon, t + 1), rng)
        elif method == UCB:
            a = ucb_action(estimates, counts, t + 1, params.c, rng, probs)
        else:
            a = sample_softmax(estimates, probs, rng)
        reward = means[a] + testbed.reward_sd * normal(rng)
        if t == 0 or testbed.walk_sd > 0.0:  # the best arm moves only on a drifting testbed
            best = means[0]
            for b in range(1, k):
                best = max(best, means[b])
        rewards[t], optimal[t] = reward, means[a] == best
        counts[a] += 1
        if method == GRADIENT:
            average = incremental_mean(average, reward, t + 1)
            baseline = average if params.baseline else 0.0
            step = schedule_value(alpha, t + 1) * (reward - baseline)
            for b in range(k):  # eq. 2.12 with the pi that picked a (H has not moved since)
                estimates[b] += step * log_prob_grad(probs, a, b)
        else:
            estimates[a] = update_toward(estimates[a], reward,
                                         schedule_value(alpha, counts[a]))
        if testbed.walk_sd > 0.0:
            for b in range(k):
                means[b] += testbed.walk_sd * normal(rng)


@runs_kernel
def _epsilon_greedy(model, params, rng_states, out):
    """Every run of :func:`_bandit_run`, the method ``EPSILON_GREEDY``."""
    for run in range(rng_states.shape[0]):
        _bandit_run(EPSILON_GREEDY, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _ucb(model, params, rng_states, out):
    """Every run of :func:`_bandit_run`, the method ``UCB``."""
    for run in range(rng_states.shape[0]):
        _bandit_run(UCB, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _gradient(model, params, rng_states, out):
    """Every run of :func:`_bandit_run`, the method ``GRADIENT``."""
    for run in range(rng_states.shape[0]):
        _bandit_run(GRADIENT, model, params, local_stream(rng_states[run]), out, run)


def check_testbed(testbed) -> BanditTestbed:
    """``testbed`` (``None``: the 10-armed testbed) with every field checked."""
    if testbed is None:
        return BanditTestbed()
    if not isinstance(testbed, BanditTestbed):
        raise TypeError(f"testbed must be a tabular.learn.bandits.BanditTestbed, got "
                        f"{type(testbed).__name__}")
    return BanditTestbed(check_positive_int("testbed.k", testbed.k),
                         *(_check_scale(f"testbed.{name}", getattr(testbed, name), low)
                           for name, low in (("mean", -MAX_REWARD), ("spread", 0.0),
                                             ("reward_sd", 0.0), ("walk_sd", 0.0))))


def _check_scale(name: str, value: float, low: float) -> float:
    """A testbed number in ``[low, MAX_REWARD]``: the model's bound on a reward, so that
    sums of rewards over 10^8 steps stay far from float overflow."""
    value = check_finite(name, value)
    if not low <= value <= MAX_REWARD:
        raise ValueError(f"{name} must be in [{low:g}, {MAX_REWARD:g}], got {value:g}")
    return value


def _bandit(driver, testbed, *, steps, seed, runs, epsilon=0.0, c=0.0, alpha=None,
            initial=0.0, baseline=False, alpha_high=1.0) -> BanditResult:
    """Check the arguments, run ``driver`` and shape its outputs."""
    testbed = check_testbed(testbed)
    steps = check_positive_int("steps", steps)
    n = check_runs(runs)
    check_size(f"runs={n} x steps={steps}", n * steps, MAX_OUTPUT_ENTRIES, 9, "recorded steps")
    check_size(f"runs={n} x testbed.k={testbed.k}", n * testbed.k, MAX_OUTPUT_ENTRIES, 16,
               "arm values")
    params = BanditParams(
        steps=steps, epsilon=as_schedule("epsilon", epsilon, low_inclusive=True).params,
        c=check_nonnegative("c", c),
        alpha=(inverse() if alpha is None
               else as_schedule("alpha", alpha, high=alpha_high)).params,
        initial=check_finite("initial", initial), baseline=check_flag("baseline", baseline))
    out = BanditOutputs(rewards=np.zeros((n, steps)), optimal=np.zeros((n, steps), dtype=np.bool_),
                        estimates=np.zeros((n, testbed.k)), means=np.zeros((n, testbed.k)))
    over_runs(driver, testbed, params, seed_states(seed, n), out)
    return BanditResult(*(with_run_axis(x, runs) for x in out))


def epsilon_greedy_bandit(testbed: BanditTestbed | None = None, *, epsilon: StepSize = 0.1,
                          alpha: StepSize | None = None, initial: float = 0.0, steps: int = 1000,
                          seed: int | None = 0, runs: int | None = None) -> BanditResult:
    """Epsilon-greedy action values (sections 2.2-2.6): pull a greedy arm (ties at
    random), a uniformly random one with probability epsilon, and move ``Q(a)`` toward
    the reward (eq. 2.4).

    Parameters
    ----------
    testbed : a :class:`BanditTestbed` (default ``None``: the 10-armed testbed).
    epsilon : exploration in [0, 1], or a :mod:`tabular.schedules` schedule over steps,
        default 0.1.
    alpha : default ``None``: sample averages (step ``1/N(a)``, eq. 2.3); a constant in
        (0, 1] (eq. 2.5, which tracks a non-stationary testbed) or a schedule over an
        arm's pulls.
    initial : ``Q_1(a)``, default 0 (section 2.6: e.g. 5 for optimistic values).
    steps : pulls per run, default 1000.
    seed : seed of the runs' random streams (testbeds and rewards), default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs.

    Returns a :class:`BanditResult`.
    """
    return _bandit(_epsilon_greedy, testbed, steps=steps, seed=seed, runs=runs,
                   epsilon=epsilon, alpha=alpha, initial=initial)


def ucb_bandit(testbed: BanditTestbed | None = None, *, c: float = 2.0,
               alpha: StepSize | None = None, initial: float = 0.0, steps: int = 1000,
               seed: int | None = 0, runs: int | None = None) -> BanditResult:
    """Upper-confidence-bound selection (eq. 2.10, section 2.7): pull
    ``argmax_a Q(a) + c sqrt(ln t / N(a))`` (untried arms first) and move ``Q(a)``
    toward the reward.

    ``c``: the degree of exploration, a finite number >= 0, default 2; ``alpha``,
    ``initial``, ``testbed``, ``steps``, ``seed``, ``runs``: as in
    :func:`epsilon_greedy_bandit`. Returns a :class:`BanditResult`.
    """
    return _bandit(_ucb, testbed, steps=steps, seed=seed, runs=runs, c=c, alpha=alpha,
                   initial=initial)


def gradient_bandit(testbed: BanditTestbed | None = None, *, alpha: StepSize = 0.1,
                    baseline: bool = True, steps: int = 1000, seed: int | None = 0,
                    runs: int | None = None) -> BanditResult:
    """The gradient bandit (section 2.8): pull an arm with probability
    ``pi(a) = softmax(H)(a)`` and update ``H(b) += alpha (R_t - Rbar_t)(1[b = A_t] - pi(b))``
    (eq. 2.12), ``Rbar_t`` the average of the rewards up to and including step ``t``.

    ``alpha``: the step size (> 0, at most 1e6) or a schedule over steps, default 0.1;
    ``baseline``: subtract ``Rbar_t`` (default True; without it the baseline is 0);
    ``testbed``, ``steps``, ``seed``, ``runs``: as in :func:`epsilon_greedy_bandit`.
    Returns a :class:`BanditResult` whose ``estimates`` are the preferences ``H``.
    """
    return _bandit(_gradient, testbed, steps=steps, seed=seed, runs=runs, alpha=alpha,
                   baseline=baseline, alpha_high=1e6)
