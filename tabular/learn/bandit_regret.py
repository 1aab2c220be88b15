"""Bandit algorithms of the regret literature, measured by regret on known arms.

Each runs on a :class:`~tabular.learn.bandit_arms.BanditArms` (fixed means) and returns a
:class:`BanditRegretResult`: the cumulative realised regret ``sum_{s<=t} (mu* - r_s)``, the
cumulative pseudo-regret ``sum_{s<=t} (mu* - mu_{A_s})`` (exact given the pulls: its
expectation is the expected regret), and the pulls of each arm.

- :func:`thompson_sampling` -- Beta-Bernoulli or Gaussian posterior sampling;
- :func:`kl_ucb` -- the KL upper confidence bound (Garivier and Cappé, 2011);
- :func:`bayes_ucb` -- the posterior quantile index (Kaufmann, Cappé and Garivier, 2012);
- :func:`moss` -- MOSS (Audibert and Bubeck, 2009);
- :func:`ucb_v` -- the empirical-Bernstein bound UCB-V (Audibert, Munos and Szepesvári, 2009);
- :func:`explore_then_commit` -- ``m`` pulls of each arm, then the empirical best;
- :func:`exp3` -- EXP3 for adversarial rewards in [0, 1] (Lattimore and Szepesvári, 2020);
- :func:`discounted_ucb`, :func:`sliding_window_ucb` (Garivier and Moulines, 2011) and
  :func:`discounted_thompson_sampling` (Raj and Kalyani, 2017) -- for arms whose means
  change (:class:`~tabular.learn.bandit_arms.BanditArms` with ``changes``).

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

from tabular._numba.frame import local_stream
from tabular._numba.rng import bernoulli, normal, seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import check_positive, check_positive_int, check_size, check_unit_interval
from tabular.learn.bandit_arms import BERNOULLI, GAUSSIAN, BanditArms, check_arms
from tabular.learn.bisected_argmax import bisected_greedy, new_brackets, open_brackets
from tabular.learn.certified_argmax import certified_argmax
from tabular.learn.paragraphs import shares_paragraphs
from tabular.learn.quantile_certificates import new_certificates, renew
from tabular.results import SHARED, RunsResult, check_runs, with_run_axis
from tabular.rules.bandit_indices import (
    beta_posterior_constants,
    beta_posterior_draw,
    discounted_ucb_index,
    exp3_step,
    gaussian_kl_ucb_index,
    gaussian_posterior_draw,
    kept_beta_posterior_draw,
    moss_index,
    normal_quantile,
    sliding_window_ucb_index,
    ucb_v_index,
)
from tabular.rules.policy_gradient import sample_softmax
from tabular.rules.values import greedy_action

THOMPSON, KL_UCB, MOSS, UCB_V, ETC, EXP3, D_UCB, SW_UCB, BAYES_UCB = range(9)
#: The most entries of one recorded regret curve (``runs x steps``): 0.8 GB of float64.
MAX_OUTPUT_ENTRIES = 10**8
#: KL-UCB's default bisection tolerance: the index exceeds the exact one by at most this.
KL_UCB_TOL = 1e-6


class RegretParams(NamedTuple):
    """Hyper-parameters of the regret kernels: ``steps`` (the horizon ``T``), ``explore``
    (explore-then-commit's pulls per arm), ``tol`` (KL-UCB's bisection), ``eta`` (EXP3's
    learning rate), ``discount`` (the statistics' ``gamma``; 1: none), ``window`` (the
    sliding window's length), ``xi`` (the non-stationary UCBs' exploration constant)."""

    steps: int
    explore: int
    tol: float
    eta: float
    discount: float
    window: int
    xi: float


class RegretOutputs(NamedTuple):
    """What the regret kernels fill, each with a leading run axis: cumulative ``regret``
    and ``pseudo_regret`` ``[runs, steps]``, ``pulls`` ``[runs, segments, k]``."""

    regret: np.ndarray
    pseudo_regret: np.ndarray
    pulls: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class BanditRegretResult(RunsResult):
    """What a regret-measured bandit algorithm returns (a leading run axis with ``runs=n``).

    ``regret``: cumulative realised regret ``sum_{s<=t} (mu* - r_s)`` after each step
    (``[steps]``); ``pseudo_regret``: cumulative ``sum_{s<=t} (mu* - mu_{A_s})``;
    ``pulls``: the pulls of each arm (int64 ``[k]``; ``[segments, k]``, the pulls while
    each row of means held, for arms with ``changes``); ``means``: the arms' means as
    given (``[k]`` or ``[segments, k]``, shared by the runs, no run axis). So
    ``pseudo_regret[-1] = sum(pulls * (means.max(-1, keepdims=True) - means))``.
    """

    run_axis_of = ("regret", 1)

    regret: np.ndarray
    pseudo_regret: np.ndarray
    pulls: np.ndarray
    means: np.ndarray = field(metadata=SHARED)


@njit(cache=True, inline="always")
def _index(method, arms, params, counts, sums, squares, a, t, shared):
    """The index of arm ``a`` (``counts[a] > 0``: its pulls, discounted or in the window
    for the non-stationary methods) at step ``t >= 1``; ``shared`` is what every arm's
    index of the step uses alike (:func:`_shared`)."""
    n = counts[a]
    mean = sums[a] / n
    if method == D_UCB:
        return discounted_ucb_index(sums[a], n, shared, params.xi)
    if method == SW_UCB:
        return sliding_window_ucb_index(sums[a], n, t, params.window, params.xi)
    if method == BAYES_UCB:  # Gaussian arms (Bernoulli: _choose); the 1 - 1/t quantile
        return sums[a] / (n + 1.0) + arms.sd / np.sqrt(n + 1.0) * shared  # of TS's posterior
    if method == KL_UCB:  # Gaussian arms
        return gaussian_kl_ucb_index(mean, np.log(t) / n, arms.sd)
    if method == MOSS:
        return moss_index(mean, n, params.steps, counts.shape[0])
    return ucb_v_index(mean, max(squares[a] / n - mean * mean, 0.0), n, t)


@njit(cache=True, inline="always")
def _shared(method, arms, params, counts, t):
    """What every arm's index at step ``t`` uses alike, computed once per step: discounted
    UCB's total weight ``n_t``, Gaussian Bayes-UCB's ``1 - 1/t`` normal quantile."""
    if method == D_UCB:
        return counts.sum()
    if method == BAYES_UCB and arms.law == GAUSSIAN:
        return normal_quantile(1.0 - 1.0 / t, params.tol)
    return 0.0


@njit(cache=True, inline="always")
def _choose(method, arms, params, rng, counts, sums, squares, scores, t, brackets,
            certificates, posteriors):
    """The arm pulled at step ``t >= 1`` by an index or posterior-sampling method.
    MOSS's index changes with the pulled arm's statistics only: ``scores`` keeps the
    others' (:func:`_rescore`). Bernoulli KL-UCB halves its brackets only
    as far as the choice needs (:mod:`tabular.learn.bisected_argmax`); Bernoulli
    Bayes-UCB proves the argmax of its quantiles from brackets kept while an arm was not
    pulled (:mod:`tabular.learn.certified_argmax`); Bernoulli Thompson sampling keeps each
    arm's gamma constants ``posteriors`` between its pulls (discounted, every arm's change
    every step: none kept)."""
    if method == MOSS:
        return greedy_action(scores, rng)
    if method == KL_UCB and arms.law == BERNOULLI:
        log_t = np.log(t)
        open_brackets(counts, sums, log_t, brackets)
        return bisected_greedy(counts, sums, log_t, params.tol, brackets, rng)
    if method == BAYES_UCB and arms.law == BERNOULLI:
        return certified_argmax(counts, sums, 1.0 - 1.0 / t, params.tol, certificates, rng)
    k = counts.shape[0]
    shared = _shared(method, arms, params, counts, t)
    for a in range(k):
        if method == THOMPSON:
            if arms.law == BERNOULLI and params.discount == 1.0:
                scores[a] = kept_beta_posterior_draw(posteriors[a], rng)
            elif arms.law == BERNOULLI:
                scores[a] = beta_posterior_draw(sums[a], counts[a] - sums[a], rng)
            else:
                scores[a] = gaussian_posterior_draw(sums[a], counts[a], arms.sd, rng)
        elif counts[a] <= 0.0:
            scores[a] = np.inf
        else:
            scores[a] = _index(method, arms, params, counts, sums, squares, a, t, shared)
    return greedy_action(scores, rng)


@njit(cache=True, inline="always")
def _rescore(method, arms, params, counts, sums, scores, posteriors, a):
    """Bring what the index methods keep between steps up to date after arm ``a``'s pull:
    MOSS's index of ``a``, undiscounted Bernoulli Thompson sampling's gamma constants of
    ``a``."""
    if method == MOSS:
        scores[a] = moss_index(sums[a] / counts[a], counts[a], params.steps, counts.shape[0])
    if method == THOMPSON and arms.law == BERNOULLI and params.discount == 1.0:
        beta_posterior_constants(sums[a], counts[a] - sums[a], posteriors[a])


@njit(cache=True, inline="always")
def _forget(method, params, counts, sums, history, rewards, t):
    """Age the statistics before step ``t`` (0-based): discount every arm's (discounted
    UCB and discounted Thompson sampling), or drop the pull that leaves the window."""
    if params.discount < 1.0:
        for b in range(counts.shape[0]):
            counts[b] *= params.discount
            sums[b] *= params.discount
    if method == SW_UCB and t >= params.window:
        old = history[t % params.window]
        counts[old] -= 1.0
        sums[old] -= rewards[t % params.window]


@njit(cache=True, inline="always")
def _regret_run(method, arms, params, rng, out, run):
    """Run ``run``: ``steps`` pulls of ``method`` (a constant of each driver)."""
    k = arms.means.shape[1]
    segment, means = 0, arms.means[0]
    best = means.max()
    # pulls (discounted, or in the window, for the non-stationary methods), reward sums
    counts, sums, squares, scores = np.zeros(k), np.zeros(k), np.zeros(k), np.zeros(k)
    if method == MOSS:
        scores[:] = np.inf  # untried arms first
    brackets = new_brackets(k)
    certificates = new_certificates(k if method == BAYES_UCB else 0)
    posteriors = np.zeros((k if method == THOMPSON else 0, 4))
    for b in range(posteriors.shape[0]):
        beta_posterior_constants(0.0, 0.0, posteriors[b])
    probs = np.empty(k)
    window = params.window if method == SW_UCB else 1
    history, rewards = np.zeros(window, dtype=np.int64), np.zeros(window)
    committed = -1
    regret = pseudo = 0.0
    for t in range(params.steps):
        if segment + 1 < arms.starts.shape[0] and t == arms.starts[segment + 1]:
            segment += 1
            means = arms.means[segment]
            best = means.max()
        _forget(method, params, counts, sums, history, rewards, t)
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
            a = _choose(method, arms, params, rng, counts, sums, squares, scores, t + 1,
                        brackets, certificates, posteriors)
        if arms.law == BERNOULLI:
            reward = 1.0 if bernoulli(rng, means[a]) else 0.0
        else:
            reward = means[a] + arms.sd * normal(rng)
        counts[a] += 1.0
        sums[a] += reward
        squares[a] += reward * reward
        _rescore(method, arms, params, counts, sums, scores, posteriors, a)
        if method == BAYES_UCB and arms.law == BERNOULLI:
            renew(certificates, a, sums[a] + 1.0, counts[a] - sums[a] + 1.0, reward > 0.0,
                  1.0 - 1.0 / (t + 2))  # the next step's p
        if method == SW_UCB:
            history[t % window], rewards[t % window] = a, reward
        if method == EXP3:
            exp3_step(scores, a, reward, probs, params.eta)
        out.pulls[run, segment, a] += 1
        regret += best - reward
        pseudo += best - means[a]
        out.regret[run, t] = regret
        out.pseudo_regret[run, t] = pseudo


@runs_kernel
def _thompson(model, params, rng_states, out):
    """Every run of :func:`_regret_run`, the method ``THOMPSON``."""
    for run in range(rng_states.shape[0]):
        _regret_run(THOMPSON, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _kl_ucb(model, params, rng_states, out):
    """Every run of :func:`_regret_run`, the method ``KL_UCB``."""
    for run in range(rng_states.shape[0]):
        _regret_run(KL_UCB, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _moss(model, params, rng_states, out):
    """Every run of :func:`_regret_run`, the method ``MOSS``."""
    for run in range(rng_states.shape[0]):
        _regret_run(MOSS, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _ucb_v(model, params, rng_states, out):
    """Every run of :func:`_regret_run`, the method ``UCB_V``."""
    for run in range(rng_states.shape[0]):
        _regret_run(UCB_V, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _etc(model, params, rng_states, out):
    """Every run of :func:`_regret_run`, the method ``ETC``."""
    for run in range(rng_states.shape[0]):
        _regret_run(ETC, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _exp3(model, params, rng_states, out):
    """Every run of :func:`_regret_run`, the method ``EXP3``."""
    for run in range(rng_states.shape[0]):
        _regret_run(EXP3, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _d_ucb(model, params, rng_states, out):
    """Every run of :func:`_regret_run`, the method ``D_UCB``."""
    for run in range(rng_states.shape[0]):
        _regret_run(D_UCB, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _sw_ucb(model, params, rng_states, out):
    """Every run of :func:`_regret_run`, the method ``SW_UCB``."""
    for run in range(rng_states.shape[0]):
        _regret_run(SW_UCB, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _bayes_ucb(model, params, rng_states, out):
    """Every run of :func:`_regret_run`, the method ``BAYES_UCB``."""
    for run in range(rng_states.shape[0]):
        _regret_run(BAYES_UCB, model, params, local_stream(rng_states[run]), out, run)


_DRIVERS = {THOMPSON: _thompson, KL_UCB: _kl_ucb, MOSS: _moss, UCB_V: _ucb_v, ETC: _etc,
            EXP3: _exp3, D_UCB: _d_ucb, SW_UCB: _sw_ucb, BAYES_UCB: _bayes_ucb}


def _regret(method: int, name: str, arms, *, steps, seed, runs, explore=1, tol=KL_UCB_TOL,
            eta=0.0, discount=1.0, window=1, xi=0.0, bernoulli_only=False) -> BanditRegretResult:
    """Check the arguments, run ``method``'s kernel and shape its outputs."""
    checked = check_arms(arms)
    if bernoulli_only and checked.law != BERNOULLI:
        raise ValueError(f"{name} needs rewards in [0, 1]: arms.law must be 'bernoulli', "
                         f"got {arms.law!r}")
    steps = check_positive_int("steps", steps)
    n, (segments, k) = check_runs(runs), checked.means.shape
    check_size(f"runs={n} x steps={steps}", n * steps, MAX_OUTPUT_ENTRIES, 16, "regret steps")
    check_size(f"runs={n} x segments={segments} x k={k}", n * segments * k,
               MAX_OUTPUT_ENTRIES, 8, "pull counts")
    params = RegretParams(steps, explore, tol, eta, discount, window, xi)
    out = RegretOutputs(np.zeros((n, steps)), np.zeros((n, steps)),
                        np.zeros((n, segments, k), dtype=np.int64))
    over_runs(_DRIVERS[method], checked, params, seed_states(seed, n), out)
    shape = np.shape(arms.means)  # [k] or [segments, k], as given
    pulls = out.pulls.reshape((n, *shape))
    return BanditRegretResult(with_run_axis(out.regret, runs),
                              with_run_axis(out.pseudo_regret, runs), with_run_axis(pulls, runs),
                              means=checked.means.reshape(shape).copy())




@shares_paragraphs
def thompson_sampling(arms: BanditArms, *, steps: int = 1000, seed: int | None = 0,
                      runs: int | None = None) -> BanditRegretResult:
    """Thompson sampling: draw a mean for every arm from its posterior, pull the largest.

    Bernoulli arms: the Beta-Bernoulli sampler of Agrawal and Goyal (2012, Algorithm 1),
    uniform ``Beta(1, 1)`` priors, posterior ``Beta(1 + successes, 1 + failures)``.
    Gaussian arms of known ``sd``: Agrawal and Goyal (2013, section 2.2), the posterior
    ``N(sum / (n + 1), sd^2 / (n + 1))`` of a ``N(0, sd^2)`` prior. Both attain the
    Lai-Robbins constant asymptotically (Kaufmann, Korda and Munos, 2012; Honda and
    Takemura, 2014).

    Parameters
    ----------
    {arms horizon seed_plain runs_plain}

    {regret_result}
    """
    return _regret(THOMPSON, "thompson_sampling", arms, steps=steps, seed=seed, runs=runs)


@shares_paragraphs
def kl_ucb(arms: BanditArms, *, tol: float = KL_UCB_TOL, steps: int = 1000,
           seed: int | None = 0, runs: int | None = None) -> BanditRegretResult:
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
    {tol_bisection arms horizon seed_plain runs_plain}

    {regret_result}
    """
    return _regret(KL_UCB, "kl_ucb", arms, steps=steps, seed=seed, runs=runs,
                   tol=_check_tol(tol))


@shares_paragraphs
def bayes_ucb(arms: BanditArms, *, tol: float = KL_UCB_TOL, steps: int = 1000,
              seed: int | None = 0, runs: int | None = None) -> BanditRegretResult:
    """Bayes-UCB (Kaufmann, Cappé and Garivier, 2012, Algorithm 1): pull the arm whose
    posterior has the largest ``1 - 1 / (t (log T)^c)`` quantile, with ``c = 0`` (the
    setting of their experiments; their theorem takes ``c >= 5``). The posteriors are
    Thompson sampling's (:func:`thompson_sampling`): ``Beta(1 + successes, 1 + failures)``
    for Bernoulli arms, ``N(sum / (n + 1), sd^2 / (n + 1))`` for Gaussian ones. Bernoulli
    arms: the pull is proved the largest quantile from brackets of the regularised
    incomplete beta function kept between steps (:mod:`tabular.learn.certified_argmax`),
    exact unless the two largest quantiles are less than ``tol`` apart, where it is drawn
    among arms whose quantiles are within ``tol`` of the largest. Gaussian arms: each
    quantile by bisection to ``tol`` on ``erfc``. Untried arms are pulled first.

    Parameters
    ----------
    tol : in [1e-12, 0.1], default 1e-6: the pull's quantile is within ``tol`` of the
        largest (Bernoulli arms), each quantile's bisection tolerance (Gaussian arms).
    {arms horizon seed_plain runs_plain}

    {regret_result}
    """
    return _regret(BAYES_UCB, "bayes_ucb", arms, steps=steps, seed=seed, runs=runs,
                   tol=_check_tol(tol))


#: The smallest bisection tolerance: a bracket cannot shrink below the float spacing of
#: its ends (2.2e-16 in [0, 1], 7.1e-15 for the normal quantile's [-40, 40]), so a
#: smaller ``tol`` would never end the bisection.
MIN_TOL = 1e-12


def _check_tol(tol: float) -> float:
    tol = check_positive("tol", tol)
    if not MIN_TOL <= tol <= 0.1:
        raise ValueError(f"tol must be in [{MIN_TOL:g}, 0.1], got {tol:g}")
    return tol


@shares_paragraphs
def moss(arms: BanditArms, *, steps: int = 1000, seed: int | None = 0,
         runs: int | None = None) -> BanditRegretResult:
    """MOSS (Audibert and Bubeck, 2009): pull
    ``argmax_a mu_hat_a + sqrt(max(0, log(T / (k N_a))) / N_a)``, the horizon ``T = steps``
    known in advance; minimax-optimal ``O(sqrt(k T))``. Rewards in [0, 1]: Bernoulli arms
    only.

    Parameters
    ----------
    {arms horizon seed_plain runs_plain}

    {regret_result}
    """
    return _regret(MOSS, "moss", arms, steps=steps, seed=seed, runs=runs, bernoulli_only=True)


@shares_paragraphs
def ucb_v(arms: BanditArms, *, steps: int = 1000, seed: int | None = 0,
          runs: int | None = None) -> BanditRegretResult:
    """UCB-V (Audibert, Munos and Szepesvári, 2009): pull
    ``argmax_a mu_hat_a + sqrt(2 V_a log t / N_a) + 3 log t / N_a``, ``V_a`` the empirical
    variance (their constants ``c = 1``, ``b = 1``, exploration function ``log t``, as
    SMPyBandits' ``UCBV``). Rewards in [0, 1]: Bernoulli arms only.

    Parameters
    ----------
    {arms horizon seed_plain runs_plain}

    {regret_result}
    """
    return _regret(UCB_V, "ucb_v", arms, steps=steps, seed=seed, runs=runs, bernoulli_only=True)


@shares_paragraphs
def explore_then_commit(arms: BanditArms, *, explore: int = 10, steps: int = 1000,
                        seed: int | None = 0, runs: int | None = None) -> BanditRegretResult:
    """Explore-then-commit (Lattimore and Szepesvári, 2020, Algorithm 1): pull the arms in
    turn ``explore`` times each (``m`` in the book), then the arm of the highest sample
    mean (ties at random) until ``steps``.

    Parameters
    ----------
    explore : pulls of each arm before committing, an int >= 1, default 10.
    {arms horizon seed_plain runs_plain}

    {regret_result}
    """
    explore = check_positive_int("explore", explore)
    return _regret(ETC, "explore_then_commit", arms, steps=steps, seed=seed, runs=runs,
                   explore=explore)


@shares_paragraphs
def exp3(arms: BanditArms, *, eta: float | None = None, steps: int = 1000,
         seed: int | None = 0, runs: int | None = None) -> BanditRegretResult:
    """EXP3 for adversarial rewards in [0, 1], in the form of Lattimore and Szepesvári
    (2020, Algorithm 9): ``P_t = softmax(eta S_{t-1})`` with the importance-weighted
    reward estimates ``S_t(b) = S_{t-1}(b) + 1 - 1[A_t = b] (1 - X_t) / P_t(b)``; no
    explicit uniform mixing (Auer et al.'s 2002 ``gamma``). Default learning rate
    ``eta = sqrt(2 log k / (k T))`` (their Theorem 11.2: regret at most
    ``sqrt(2 T k log k)`` against any sequence). On stochastic Bernoulli arms here.

    Parameters
    ----------
    eta : the learning rate, > 0 (default ``None``: ``sqrt(2 log k / (k T))``).
    {arms horizon seed_plain runs_plain}

    {regret_result}
    """
    k = check_arms(arms).means.shape[1]
    steps_checked = check_positive_int("steps", steps)
    if eta is None:
        eta = np.sqrt(2.0 * np.log(max(k, 2)) / (k * steps_checked))
    eta = check_positive("eta", eta)
    return _regret(EXP3, "exp3", arms, steps=steps, seed=seed, runs=runs, eta=eta,
                   bernoulli_only=True)


#: The exploration constant ``xi`` of the non-stationary UCBs: Garivier and Moulines'
#: simulations' 0.6 (their analysis needs ``xi > 1/2``).
XI = 0.6


def _check_xi(xi: float) -> float:
    xi = check_positive("xi", xi)
    if xi > 100.0:
        raise ValueError(f"xi must be in (0, 100], got {xi:g}")
    return xi


@shares_paragraphs
def discounted_ucb(arms: BanditArms, *, discount: float | None = None, xi: float = XI,
                   steps: int = 1000, seed: int | None = 0,
                   runs: int | None = None) -> BanditRegretResult:
    """Discounted UCB (Garivier and Moulines, 2011, section 3; Kocsis and Szepesvári, 2006):
    statistics discounted by ``gamma`` per step, ``N_t(a) = sum_s gamma^(t-s) 1[A_s = a]``,
    and the pull ``argmax_a Xbar_t(a) + 2 sqrt(xi log n_t / N_t(a))``, ``n_t = sum_a
    N_t(a)``, rewards bounded by ``B = 1``: Bernoulli arms only.

    Parameters
    ----------
    discount : ``gamma`` in (0, 1] (default ``None``: ``1 - 1 / (4 sqrt(T))``, their choice
        for an unknown number of changes).
    xi : the exploration constant, in (0, 100], default 0.6 (their simulations').
    {arms_changing horizon seed_plain runs_plain}

    {regret_result}
    """
    steps_checked = check_positive_int("steps", steps)
    if discount is None:
        discount = 1.0 - 1.0 / (4.0 * np.sqrt(steps_checked))
    discount = _check_discount(discount)
    return _regret(D_UCB, "discounted_ucb", arms, steps=steps, seed=seed, runs=runs,
                   discount=discount, xi=_check_xi(xi), bernoulli_only=True)


def _check_discount(discount: float) -> float:
    discount = check_unit_interval("discount", discount)
    if discount == 0.0:
        raise ValueError("discount must be in (0, 1], got 0")
    return discount


@shares_paragraphs
def sliding_window_ucb(arms: BanditArms, *, window: int | None = None, xi: float = XI,
                       steps: int = 1000, seed: int | None = 0,
                       runs: int | None = None) -> BanditRegretResult:
    """Sliding-window UCB (Garivier and Moulines, 2011, section 4): the statistics of the
    last ``tau`` pulls only, and the pull ``argmax_a Xbar_t(tau, a) + sqrt(xi log min(t,
    tau) / N_t(tau, a))`` (an arm absent from the window is pulled first), rewards bounded
    by ``B = 1``: Bernoulli arms only.

    Parameters
    ----------
    window : ``tau``, an int >= 1 (default ``None``: ``ceil(2 sqrt(T log T))``, their
        choice for an unknown number of changes), at most ``steps``.
    xi : the exploration constant, in (0, 100], default 0.6 (their simulations').
    {arms_changing horizon seed_plain runs_plain}

    {regret_result}
    """
    steps_checked = check_positive_int("steps", steps)
    if window is None:
        window = int(np.ceil(2.0 * np.sqrt(steps_checked * np.log(max(steps_checked, 2)))))
        window = min(window, steps_checked)
    window = check_positive_int("window", window, high=steps_checked)
    return _regret(SW_UCB, "sliding_window_ucb", arms, steps=steps, seed=seed, runs=runs,
                   window=window, xi=_check_xi(xi), bernoulli_only=True)


@shares_paragraphs
def discounted_thompson_sampling(arms: BanditArms, *, discount: float = 0.95,
                                 steps: int = 1000, seed: int | None = 0,
                                 runs: int | None = None) -> BanditRegretResult:
    """Discounted Thompson sampling (Raj and Kalyani, 2017, Algorithm 2) for Bernoulli
    arms: every step every arm's successes and failures are multiplied by ``gamma`` and
    the pulled arm's then incremented; the draw is ``Beta(S + 1, F + 1)`` (their
    ``alpha_0 = beta_0 = 1``). ``gamma = 1`` is :func:`thompson_sampling`, draw for draw.

    Parameters
    ----------
    discount : ``gamma`` in (0, 1], default 0.95 (within the range of their experiments).
    arms : a :class:`~tabular.learn.bandit_arms.BanditArms` of Bernoulli arms, ``changes``
        allowed.
    {horizon seed_plain runs_plain}

    {regret_result}
    """
    return _regret(THOMPSON, "discounted_thompson_sampling", arms, steps=steps, seed=seed,
                   runs=runs, discount=_check_discount(discount), bernoulli_only=True)
