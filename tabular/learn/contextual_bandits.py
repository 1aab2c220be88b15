"""Linear contextual bandits (Sutton & Barto, section 2.9's associative search, with the
rewards linear in known features): LinUCB and linear Thompson sampling.

A :class:`ContextualArms` holds ``C`` contexts (the book's "bandit tasks"), drawn
uniformly and independently each step, and the features ``x[c, a]`` in ``R^d`` of every
arm in every context; rewards are ``x[c, a] . theta + N(0, sd^2)`` with ``theta`` unknown
to the learner. One-hot features (``d = C k``) give the book's tabular associative
search; shared features let what is learnt in one context carry to the others. Both
learners keep the ridge-regression statistics ``A = lambda I + sum x x^T``,
``b = sum r x`` of all pulls (one ``theta`` shared by the arms: Chu et al., 2011's
LinUCB, and Agrawal and Goyal, 2013) and return a
:class:`~tabular.learn.bandit_regret.BanditRegretResult` whose pseudo-regret is exact:
``sum_t max_a x[c_t, a] . theta - x[c_t, A_t] . theta``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import normal, randint, seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import (
    check_finite,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_size,
    real_array,
)
from tabular.learn.bandit_regret import MAX_OUTPUT_ENTRIES, BanditRegretResult, RegretOutputs
from tabular.model.mdp import MAX_REWARD
from tabular.results import check_runs, with_run_axis
from tabular.rules.linear_bandits import gaussian_draw, lin_ucb_index, sherman_morrison
from tabular.rules.values import greedy_action

LIN_UCB, LIN_TS = 0, 1
#: The largest feature dimension: the kernels keep ``d x d`` matrices and factor one per
#: step for Thompson sampling (``O(d^3)``).
MAX_DIMENSION = 256


class ContextualArms(NamedTuple):
    """``features`` ``[C, k, d]`` (the feature vector of arm ``a`` in context ``c``),
    ``theta`` ``[d]`` (the true parameter), ``sd`` (the reward noise, > 0). Contexts
    are drawn uniformly each step."""

    features: np.ndarray
    theta: np.ndarray
    sd: float = 1.0


class ContextualArrays(NamedTuple):
    """What the kernels read: ``features`` ``[C, k, d]``, ``theta`` ``[d]``, ``sd``."""

    features: np.ndarray
    theta: np.ndarray
    sd: float


class LinearParams(NamedTuple):
    """``steps``; ``alpha`` (LinUCB's width) or ``v`` (Thompson sampling's scale);
    ``regularization`` (``lambda``)."""

    steps: int
    width: float
    regularization: float


def check_contextual_arms(arms) -> ContextualArrays:
    """``arms`` checked, as the kernels read it: finite features and parameter of size at
    most the model's reward bound, mean rewards too, ``sd`` in (0, that bound]."""
    if not isinstance(arms, ContextualArms):
        raise TypeError(f"arms must be a tabular.learn.contextual_bandits.ContextualArms, "
                        f"got {type(arms).__name__}")
    features = real_array("arms.features", arms.features)
    if features.ndim != 3 or min(features.shape) < 1:
        raise ValueError(f"arms.features must have shape [contexts, k, d], all >= 1, got "
                         f"{list(features.shape)}")
    d = features.shape[2]
    if d > MAX_DIMENSION:
        raise ValueError(f"arms.features' dimension d must be at most {MAX_DIMENSION}, got {d}")
    theta = real_array("arms.theta", arms.theta, (d,))
    for name, values in (("arms.features", features), ("arms.theta", theta)):
        if not np.isfinite(values).all() or np.abs(values).max() > MAX_REWARD:
            raise ValueError(f"{name} must hold finite numbers of size at most {MAX_REWARD:g}")
    means = features @ theta
    if np.abs(means).max() > MAX_REWARD:
        raise ValueError(f"arms' mean rewards features @ theta must be at most {MAX_REWARD:g} "
                         f"in size")
    sd = check_positive("arms.sd", arms.sd)
    if sd > MAX_REWARD:
        raise ValueError(f"arms.sd must be at most {MAX_REWARD:g}, got {sd:g}")
    return ContextualArrays(np.ascontiguousarray(features, dtype=np.float64),
                            np.ascontiguousarray(theta, dtype=np.float64), sd)


@njit(cache=True, inline="always")
def _linear_run(method, arms, params, rng, out, run):
    """Run ``run``: ``steps`` contexts, each answered by ``method``'s pull."""
    contexts, k, d = arms.features.shape
    inverse = np.zeros((d, d))
    for i in range(d):
        inverse[i, i] = 1.0 / params.regularization
    b, theta_hat, sample = np.zeros(d), np.zeros(d), np.zeros(d)
    factor, scratch, scores = np.zeros((d, d)), np.zeros(d), np.zeros(k)
    regret = pseudo = 0.0
    for t in range(params.steps):
        c = randint(rng, contexts)
        x = arms.features[c]
        for i in range(d):  # theta_hat = A^{-1} b
            total = 0.0
            for j in range(d):
                total += inverse[i, j] * b[j]
            theta_hat[i] = total
        if method == LIN_TS:
            gaussian_draw(theta_hat, inverse, params.width, rng, factor, sample)
        best = -np.inf
        for a in range(k):
            mean = 0.0
            for i in range(d):
                mean += x[a, i] * arms.theta[i]
            best = max(best, mean)
            if method == LIN_UCB:
                scores[a] = lin_ucb_index(x[a], theta_hat, inverse, params.width)
            else:
                score = 0.0
                for i in range(d):
                    score += x[a, i] * sample[i]
                scores[a] = score
        a = greedy_action(scores, rng)
        mean = 0.0
        for i in range(d):
            mean += x[a, i] * arms.theta[i]
        reward = mean + arms.sd * normal(rng)
        sherman_morrison(inverse, x[a], scratch)
        for i in range(d):
            b[i] += reward * x[a, i]
        out.pulls[run, c, a] += 1
        regret += best - reward
        pseudo += best - mean
        out.regret[run, t] = regret
        out.pseudo_regret[run, t] = pseudo


@runs_kernel
def _lin_ucb(model, params, rng_states, out):
    """Every run of :func:`_linear_run`, the method ``LIN_UCB``."""
    for run in range(rng_states.shape[0]):
        _linear_run(LIN_UCB, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _lin_ts(model, params, rng_states, out):
    """Every run of :func:`_linear_run`, the method ``LIN_TS``."""
    for run in range(rng_states.shape[0]):
        _linear_run(LIN_TS, model, params, local_stream(rng_states[run]), out, run)


_DRIVERS = {LIN_UCB: _lin_ucb, LIN_TS: _lin_ts}


def _linear(method, arms, *, width, regularization, steps, seed, runs) -> BanditRegretResult:
    checked = check_contextual_arms(arms)
    steps = check_positive_int("steps", steps)
    n = check_runs(runs)
    contexts, k, _ = checked.features.shape
    check_size(f"runs={n} x steps={steps}", n * steps, MAX_OUTPUT_ENTRIES, 16, "regret steps")
    check_size(f"runs={n} x contexts={contexts} x k={k}", n * contexts * k,
               MAX_OUTPUT_ENTRIES, 8, "pull counts")
    reg = check_positive("regularization", regularization)
    if reg > 1e6:
        raise ValueError(f"regularization must be at most 1e6, got {reg:g}")
    params = LinearParams(steps, width, reg)
    out = RegretOutputs(np.zeros((n, steps)), np.zeros((n, steps)),
                        np.zeros((n, contexts, k), dtype=np.int64))
    over_runs(_DRIVERS[method], checked, params, seed_states(seed, n), out)
    regret, pseudo_regret, pulls = (with_run_axis(x, runs) for x in out)
    return BanditRegretResult(regret, pseudo_regret, pulls,
                              means=checked.features @ checked.theta)


def lin_ucb(arms: ContextualArms, *, alpha: float = 1.0, regularization: float = 1.0,
            steps: int = 1000, seed: int | None = 0, runs: int | None = None) -> BanditRegretResult:
    """LinUCB (Li et al., 2010, eq. 5, with one ``theta`` shared by the arms as in Chu et
    al., 2011): pull ``argmax_a x_a^T theta_hat + alpha sqrt(x_a^T A^{-1} x_a)``,
    ``theta_hat = A^{-1} b`` the ridge estimate.

    Parameters
    ----------
    arms : a :class:`ContextualArms`.
    alpha : the confidence width, finite and >= 0, default 1 (Li et al.'s
        ``1 + sqrt(log(2 / delta) / 2)`` is 1.0 to 2.4 for delta from 1 to 0.01; 0 is
        the greedy ridge regression).
    regularization : ``lambda`` > 0 (at most 1e6), default 1.
    steps, seed, runs : as every bandit here (default 1000 steps, seed 0, one run).

    Returns a :class:`~tabular.learn.bandit_regret.BanditRegretResult` whose ``pulls`` and
    ``means`` are ``[C, k]`` (per context).
    """
    alpha = check_nonnegative("alpha", alpha)
    if alpha > 1e6:
        raise ValueError(f"alpha must be at most 1e6, got {alpha:g}")
    return _linear(LIN_UCB, arms, width=alpha, regularization=regularization, steps=steps,
                   seed=seed, runs=runs)


def linear_thompson_sampling(arms: ContextualArms, *, v: float | None = None,
                             regularization: float = 1.0, steps: int = 1000,
                             seed: int | None = 0, runs: int | None = None) -> BanditRegretResult:
    """Linear Thompson sampling (Agrawal and Goyal, 2013, Algorithm 1): draw
    ``theta ~ N(theta_hat, v^2 A^{-1})`` and pull ``argmax_a x_a^T theta``.

    Parameters
    ----------
    arms : a :class:`ContextualArms`.
    v : the posterior's scale, finite and >= 0 (default ``None``: ``arms.sd``, the exact
        Bayesian posterior of a ``N(0, sd^2 / lambda I)`` prior; the paper's
        ``v = R sqrt(24 d log(1 / delta) / epsilon)`` is what its proof needs and explores
        far more).
    regularization : ``lambda`` > 0 (at most 1e6), default 1.
    steps, seed, runs : as every bandit here (default 1000 steps, seed 0, one run).

    Returns a :class:`~tabular.learn.bandit_regret.BanditRegretResult` whose ``pulls`` and
    ``means`` are ``[C, k]`` (per context).
    """
    if v is None:
        v = check_contextual_arms(arms).sd
    v = check_finite("v", v)
    if not 0.0 <= v <= 1e6:
        raise ValueError(f"v must be in [0, 1e6], got {v:g}")
    return _linear(LIN_TS, arms, width=v, regularization=regularization, steps=steps,
                   seed=seed, runs=runs)
