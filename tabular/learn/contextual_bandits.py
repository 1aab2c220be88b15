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
from tabular.rules.linear_bandits import (
    REORDERED,
    gaussian_draw,
    ldl_rank_one_update,
    lin_ucb_indices,
    sherman_morrison_factor,
)
from tabular.rules.values import greedy_action

LIN_UCB, LIN_TS = 0, 1
#: The largest feature dimension: the kernels keep ``d x d`` matrices, ``O(d^2)`` work a
#: step.
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
def _true_means(arms):
    """``means[c, a] = x[c, a] . theta`` ``[C, k]`` and each context's best ``[C]``, once a
    run: the exact pseudo-regret's terms."""
    contexts, k, d = arms.features.shape
    means, best = np.zeros((contexts, k)), np.full(contexts, -np.inf)
    for c in range(contexts):
        for a in range(k):
            mean = 0.0
            for i in range(d):
                mean += arms.features[c, a, i] * arms.theta[i]
            means[c, a] = mean
            best[c] = max(best[c], mean)
    return means, best


@njit(cache=True, inline="always")
def _lengths(arms):
    """``|x[c, a]|`` ``[C, k]``, once a run: the factor of LinUCB's bounds."""
    contexts, k, d = arms.features.shape
    lengths = np.zeros((contexts, k))
    for c in range(contexts):
        for a in range(k):
            total = 0.0
            for i in range(d):
                total += arms.features[c, a, i] * arms.features[c, a, i]
            lengths[c, a] = np.sqrt(total)
    return lengths


@njit(cache=True, inline="always")
def _pull(arms, means, best, b, rng, out, run, t, c, a, regret, pseudo):
    """Arm ``a`` pulled in context ``c`` at step ``t``: its reward drawn and added into
    ``b += r x``, the pull counted and the cumulative regrets written; returns them."""
    x = arms.features[c, a]
    reward = means[c, a] + arms.sd * normal(rng)
    for i in range(x.shape[0]):
        b[i] += reward * x[i]
    out.pulls[run, c, a] += 1
    regret += best[c] - reward
    pseudo += best[c] - means[c, a]
    out.regret[run, t] = regret
    out.pseudo_regret[run, t] = pseudo
    return regret, pseudo


@njit(cache=True, inline="always")
def _lin_ucb_run(arms, params, rng, out, run):
    """Run ``run`` of LinUCB: ``A^{-1}`` kept by Sherman-Morrison, the update of a pull
    applied as the next step reads ``A^{-1}``, and only the widths of the arms that may
    be greedy computed (:func:`~tabular.rules.linear_bandits.lin_ucb_indices`)."""
    contexts, k, d = arms.features.shape
    means, best = _true_means(arms)
    lengths = _lengths(arms)
    inverse = np.zeros((d, d))
    for i in range(d):
        inverse[i, i] = 1.0 / params.regularization
    b, products, widths, indices = np.zeros(d), np.zeros((k, d)), np.zeros(k), np.zeros(k)
    theta_hat, estimates, bounds, pending = np.zeros(d), np.zeros(k), np.zeros(k), np.zeros(d)
    computed = np.zeros(k, dtype=np.bool_)
    regret = pseudo = 0.0
    for t in range(params.steps):
        c = randint(rng, contexts)
        lin_ucb_indices(arms.features[c], lengths[c], inverse, pending, b, params.width,
                        theta_hat, estimates, bounds, products, widths, indices, computed)
        a = greedy_action(indices, rng, computed)
        regret, pseudo = _pull(arms, means, best, b, rng, out, run, t, c, a, regret, pseudo)
        sherman_morrison_factor(products[a], widths[a], pending)


@njit(cache=True, inline="always")
def _lin_ts_run(arms, params, rng, out, run):
    """Run ``run`` of linear Thompson sampling: ``A = L D L^T`` and ``L^{-1} b`` kept by a
    rank-one update a pull (:func:`~tabular.rules.linear_bandits.ldl_rank_one_update`),
    each step's draw one triangular solve
    (:func:`~tabular.rules.linear_bandits.gaussian_draw`)."""
    contexts, k, d = arms.features.shape
    means, best = _true_means(arms)
    upper = np.eye(d)
    inverse_diagonal = np.full(d, 1.0 / params.regularization)
    deviations = np.sqrt(inverse_diagonal)
    b, solved, z, sample = np.zeros(d), np.zeros(d), np.zeros(d), np.zeros(d)
    scratch, scores = np.zeros(d), np.zeros(k)
    regret = pseudo = 0.0
    for t in range(params.steps):
        c = randint(rng, contexts)
        x = arms.features[c]
        for i in range(d):
            z[i] = normal(rng)
        gaussian_draw(solved, upper, inverse_diagonal, deviations, params.width, z, sample)
        for a in range(k):
            score = 0.0
            for i in range(d):
                score += x[a, i] * sample[i]
            scores[a] = score
        a = greedy_action(scores, rng)
        regret, pseudo = _pull(arms, means, best, b, rng, out, run, t, c, a, regret, pseudo)
        ldl_rank_one_update(upper, inverse_diagonal, deviations, x[a], b, scratch, solved)


@runs_kernel(fastmath=REORDERED)
def _lin_ucb(model, params, rng_states, out):
    """Every run of :func:`_lin_ucb_run`."""
    for run in range(rng_states.shape[0]):
        _lin_ucb_run(model, params, local_stream(rng_states[run]), out, run)


@runs_kernel(fastmath=REORDERED)
def _lin_ts(model, params, rng_states, out):
    """Every run of :func:`_lin_ts_run`."""
    for run in range(rng_states.shape[0]):
        _lin_ts_run(model, params, local_stream(rng_states[run]), out, run)


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
