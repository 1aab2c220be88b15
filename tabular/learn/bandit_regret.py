"""Bandit algorithms of the regret literature, measured by regret on known arms.

Each runs on a :class:`~tabular.learn.bandit_arms.BanditArms` (fixed means) and returns a
:class:`RegretResult`: the cumulative realised regret ``sum_{s<=t} (mu* - r_s)``, the
cumulative pseudo-regret ``sum_{s<=t} (mu* - mu_{A_s})`` (exact given the pulls: its
expectation is the expected regret), and the pulls of each arm.

- :func:`thompson_sampling` -- Beta-Bernoulli or Gaussian posterior sampling;
- :func:`kl_ucb` -- the KL upper confidence bound (Garivier and Cappé, 2011);
- :func:`moss` -- MOSS (Audibert and Bubeck, 2009);
- :func:`ucb_v` -- the empirical-Bernstein bound UCB-V (Audibert, Munos and Szepesvári, 2009);
- :func:`explore_then_commit` -- ``m`` pulls of each arm, then the empirical best;
- :func:`exp3` -- EXP3 for adversarial rewards in [0, 1] (Lattimore and Szepesvári, 2020).

Every arm never pulled is pulled first (in index order among ties broken at random) by
the index policies. One loop serves every method (a compile-time constant of each
kernel); each run draws only from its own stream, so run ``i`` of ``runs=n`` is run
``i`` of ``runs=m`` and the same seed gives the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.rng import bernoulli, normal, seed_states
from tabular._numba.runs import over_runs, runs_driver
from tabular.checks import check_positive, check_positive_int, check_size
from tabular.learn.bandit_arms import BERNOULLI, BanditArms, check_arms
from tabular.results import SHARED, RunsResult, check_runs, with_run_axis
from tabular.rules.bandit_indices import (
    beta_posterior_draw,
    exp3_step,
    gaussian_kl_ucb_index,
    gaussian_posterior_draw,
    kl_ucb_index,
    moss_index,
    ucb_v_index,
)
from tabular.rules.policy_gradient import sample_softmax
from tabular.rules.values import greedy_action

THOMPSON, KL_UCB, MOSS, UCB_V, ETC, EXP3 = range(6)
#: The most entries of one recorded regret curve (``runs x steps``): 0.8 GB of float64.
MAX_OUTPUT_ENTRIES = 10**8
#: KL-UCB's default bisection tolerance: the index exceeds the exact one by at most this.
KL_UCB_TOL = 1e-6


class RegretParams(NamedTuple):
    """Hyper-parameters of the regret kernels: ``steps`` (the horizon ``T``), ``explore``
    (explore-then-commit's pulls per arm), ``tol`` (KL-UCB's bisection), ``eta`` (EXP3's
    learning rate)."""

    steps: int
    explore: int
    tol: float
    eta: float


class RegretOutputs(NamedTuple):
    """What the regret kernels fill, each with a leading run axis: cumulative ``regret``
    and ``pseudo_regret`` ``[runs, steps]``, ``pulls`` ``[runs, k]``."""

    regret: np.ndarray
    pseudo_regret: np.ndarray
    pulls: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class RegretResult(RunsResult):
    """What a regret-measured bandit algorithm returns (a leading run axis with ``runs=n``).

    ``regret``: cumulative realised regret ``sum_{s<=t} (mu* - r_s)`` after each step
    (``[steps]``); ``pseudo_regret``: cumulative ``sum_{s<=t} (mu* - mu_{A_s})``;
    ``pulls``: the pulls of each arm (int64 ``[k]``); ``means``: the arms' means (shared
    by the runs, no run axis).
    """

    run_axis_of = ("regret", 1)

    regret: np.ndarray
    pseudo_regret: np.ndarray
    pulls: np.ndarray
    means: np.ndarray = field(metadata=SHARED)


@njit(cache=True, inline="always")
def _index(method, arms, params, counts, sums, squares, a, t):
    """The index of arm ``a`` (pulled ``counts[a] >= 1`` times) at step ``t >= 1``."""
    n = counts[a]
    mean = sums[a] / n
    if method == KL_UCB:
        level = np.log(t) / n
        if arms.law == BERNOULLI:
            return kl_ucb_index(mean, level, params.tol)
        return gaussian_kl_ucb_index(mean, level, arms.sd)
    if method == MOSS:
        return moss_index(mean, n, params.steps, counts.shape[0])
    return ucb_v_index(mean, max(squares[a] / n - mean * mean, 0.0), n, t)


@njit(cache=True, inline="always")
def _choose(method, arms, params, rng, counts, sums, squares, scores, t):
    """The arm pulled at step ``t >= 1`` by an index or posterior-sampling method."""
    k = counts.shape[0]
    for a in range(k):
        if method == THOMPSON:
            if arms.law == BERNOULLI:
                scores[a] = beta_posterior_draw(sums[a], counts[a] - sums[a], rng)
            else:
                scores[a] = gaussian_posterior_draw(sums[a], counts[a], arms.sd, rng)
        elif counts[a] == 0:
            scores[a] = np.inf
        else:
            scores[a] = _index(method, arms, params, counts, sums, squares, a, t)
    return greedy_action(scores, rng)


@njit(cache=True, inline="always")
def _regret_run(method, arms, params, rng, out, run):
    """Run ``run``: ``steps`` pulls of ``method`` (a constant of each driver)."""
    means = arms.means
    k = means.shape[0]
    best = means.max()
    counts = out.pulls[run]
    sums, squares, scores = np.zeros(k), np.zeros(k), np.zeros(k)
    probs = np.empty(k)
    committed = -1
    regret = pseudo = 0.0
    for t in range(params.steps):
        if method == ETC:
            if t < params.explore * k:
                a = t % k
            else:
                if committed < 0:
                    for b in range(k):
                        scores[b] = sums[b] / counts[b]
                    committed = greedy_action(scores, rng)
                a = committed
        elif method == EXP3:
            a = sample_softmax(scores, probs, rng)
        else:
            a = _choose(method, arms, params, rng, counts, sums, squares, scores, t + 1)
        if arms.law == BERNOULLI:
            reward = 1.0 if bernoulli(rng, means[a]) else 0.0
        else:
            reward = means[a] + arms.sd * normal(rng)
        counts[a] += 1
        sums[a] += reward
        squares[a] += reward * reward
        if method == EXP3:
            exp3_step(scores, a, reward, probs, params.eta)
        regret += best - reward
        pseudo += best - means[a]
        out.regret[run, t] = regret
        out.pseudo_regret[run, t] = pseudo


_DRIVERS = {method: runs_driver(_regret_run, method)
            for method in (THOMPSON, KL_UCB, MOSS, UCB_V, ETC, EXP3)}


def _regret(method: int, name: str, arms, *, steps, seed, runs, explore=1, tol=KL_UCB_TOL,
            eta=0.0, bernoulli_only=False) -> RegretResult:
    """Check the arguments, run ``method``'s kernel and shape its outputs."""
    checked = check_arms(arms)
    if bernoulli_only and checked.law != BERNOULLI:
        raise ValueError(f"{name} needs rewards in [0, 1]: arms.law must be 'bernoulli', "
                         f"got {arms.law!r}")
    steps = check_positive_int("steps", steps)
    n, k = check_runs(runs), checked.means.shape[0]
    check_size(f"runs={n} x steps={steps}", n * steps, MAX_OUTPUT_ENTRIES, 16, "regret steps")
    check_size(f"runs={n} x k={k}", n * k, MAX_OUTPUT_ENTRIES, 8, "pull counts")
    params = RegretParams(steps, explore, tol, eta)
    out = RegretOutputs(np.zeros((n, steps)), np.zeros((n, steps)),
                        np.zeros((n, k), dtype=np.int64))
    over_runs(_DRIVERS[method], checked, params, seed_states(seed, n), out)
    return RegretResult(*(with_run_axis(x, runs) for x in out), means=checked.means.copy())




def thompson_sampling(arms: BanditArms, *, steps: int = 1000, seed: int | None = 0,
                      runs: int | None = None) -> RegretResult:
    """Thompson sampling: draw a mean for every arm from its posterior, pull the largest.

    Bernoulli arms: the Beta-Bernoulli sampler of Agrawal and Goyal (2012, Algorithm 1),
    uniform ``Beta(1, 1)`` priors, posterior ``Beta(1 + successes, 1 + failures)``.
    Gaussian arms of known ``sd``: Agrawal and Goyal (2013, section 2.2), the posterior
    ``N(sum / (n + 1), sd^2 / (n + 1))`` of a ``N(0, sd^2)`` prior. Both attain the
    Lai-Robbins constant asymptotically (Kaufmann, Korda and Munos, 2012; Honda and
    Takemura, 2014).

    Parameters
    ----------
    arms : a :class:`~tabular.learn.bandit_arms.BanditArms`.
    steps : the horizon ``T``, pulls per run, default 1000.
    seed : seed of the runs' random streams, default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs.

    Returns a :class:`RegretResult`.
    """
    return _regret(THOMPSON, "thompson_sampling", arms, steps=steps, seed=seed, runs=runs)


def kl_ucb(arms: BanditArms, *, tol: float = KL_UCB_TOL, steps: int = 1000,
           seed: int | None = 0, runs: int | None = None) -> RegretResult:
    """KL-UCB (Garivier and Cappé, 2011): pull
    ``argmax_a max {q : N_a KL(mu_hat_a, q) <= log t}``.

    The exploration level is ``log t``: SMPyBandits' ``klUCB`` with its default ``c = 1``
    multiplying ``log t``, and the setting of Garivier and Cappé's experiments (their
    Theorem 1 takes ``log t + 3 log log t``). Bernoulli arms use the Bernoulli KL, the
    index found by bisection to ``tol`` (default 1e-6, SMPyBandits' 1e-4: the index is at
    most ``tol`` above the exact one); Gaussian arms the closed form
    ``mu_hat + sd sqrt(2 log t / N_a)``.

    Parameters
    ----------
    tol : the bisection's tolerance, in (0, 0.1], default 1e-6.
    arms : a :class:`~tabular.learn.bandit_arms.BanditArms`.
    steps : the horizon ``T``, pulls per run, default 1000.
    seed : seed of the runs' random streams, default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs.

    Returns a :class:`RegretResult`.
    """
    tol = check_positive("tol", tol)
    if tol > 0.1:
        raise ValueError(f"tol must be in (0, 0.1], got {tol:g}")
    return _regret(KL_UCB, "kl_ucb", arms, steps=steps, seed=seed, runs=runs, tol=tol)


def moss(arms: BanditArms, *, steps: int = 1000, seed: int | None = 0,
         runs: int | None = None) -> RegretResult:
    """MOSS (Audibert and Bubeck, 2009): pull
    ``argmax_a mu_hat_a + sqrt(max(0, log(T / (k N_a))) / N_a)``, the horizon ``T = steps``
    known in advance; minimax-optimal ``O(sqrt(k T))``. Rewards in [0, 1]: Bernoulli arms
    only.

    Parameters
    ----------
    arms : a :class:`~tabular.learn.bandit_arms.BanditArms`.
    steps : the horizon ``T``, pulls per run, default 1000.
    seed : seed of the runs' random streams, default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs.

    Returns a :class:`RegretResult`.
    """
    return _regret(MOSS, "moss", arms, steps=steps, seed=seed, runs=runs, bernoulli_only=True)


def ucb_v(arms: BanditArms, *, steps: int = 1000, seed: int | None = 0,
          runs: int | None = None) -> RegretResult:
    """UCB-V (Audibert, Munos and Szepesvári, 2009): pull
    ``argmax_a mu_hat_a + sqrt(2 V_a log t / N_a) + 3 log t / N_a``, ``V_a`` the empirical
    variance (their constants ``c = 1``, ``b = 1``, exploration function ``log t``, as
    SMPyBandits' ``UCBV``). Rewards in [0, 1]: Bernoulli arms only.

    Parameters
    ----------
    arms : a :class:`~tabular.learn.bandit_arms.BanditArms`.
    steps : the horizon ``T``, pulls per run, default 1000.
    seed : seed of the runs' random streams, default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs.

    Returns a :class:`RegretResult`.
    """
    return _regret(UCB_V, "ucb_v", arms, steps=steps, seed=seed, runs=runs, bernoulli_only=True)


def explore_then_commit(arms: BanditArms, *, explore: int = 10, steps: int = 1000,
                        seed: int | None = 0, runs: int | None = None) -> RegretResult:
    """Explore-then-commit (Lattimore and Szepesvári, 2020, Algorithm 1): pull the arms in
    turn ``explore`` times each (``m`` in the book), then the arm of the highest sample
    mean (ties at random) until ``steps``.

    Parameters
    ----------
    explore : pulls of each arm before committing, an int >= 1, default 10.
    arms : a :class:`~tabular.learn.bandit_arms.BanditArms`.
    steps : the horizon ``T``, pulls per run, default 1000.
    seed : seed of the runs' random streams, default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs.

    Returns a :class:`RegretResult`.
    """
    explore = check_positive_int("explore", explore)
    return _regret(ETC, "explore_then_commit", arms, steps=steps, seed=seed, runs=runs,
                   explore=explore)


def exp3(arms: BanditArms, *, eta: float | None = None, steps: int = 1000,
         seed: int | None = 0, runs: int | None = None) -> RegretResult:
    """EXP3 for adversarial rewards in [0, 1], in the form of Lattimore and Szepesvári
    (2020, Algorithm 9): ``P_t = softmax(eta S_{t-1})`` with the importance-weighted
    reward estimates ``S_t(b) = S_{t-1}(b) + 1 - 1[A_t = b] (1 - X_t) / P_t(b)``; no
    explicit uniform mixing (Auer et al.'s 2002 ``gamma``). Default learning rate
    ``eta = sqrt(2 log k / (k T))`` (their Theorem 11.2: regret at most
    ``sqrt(2 T k log k)`` against any sequence). On stochastic Bernoulli arms here.

    Parameters
    ----------
    eta : the learning rate, > 0 (default ``None``: ``sqrt(2 log k / (k T))``).
    arms : a :class:`~tabular.learn.bandit_arms.BanditArms`.
    steps : the horizon ``T``, pulls per run, default 1000.
    seed : seed of the runs' random streams, default 0.
    runs : ``None`` (default): one run, no run axis; ``n``: ``n`` independent runs.

    Returns a :class:`RegretResult`.
    """
    k = check_arms(arms).means.shape[0]
    steps_checked = check_positive_int("steps", steps)
    if eta is None:
        eta = np.sqrt(2.0 * np.log(max(k, 2)) / (k * steps_checked))
    eta = check_positive("eta", eta)
    return _regret(EXP3, "exp3", arms, steps=steps, seed=seed, runs=runs, eta=eta,
                   bernoulli_only=True)
