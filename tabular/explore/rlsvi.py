"""RLSVI, randomized least-squares value iteration (Osband, Van Roy & Wen, 2016), tabular
and episodic.

With one-hot features of ``(h, s, a)`` the least-squares regression of RLSVI decouples
into one Bayesian mean per triple, so each episode draws ``Q~_h(s, a)`` from the Normal
posterior of the targets ``r + max_a' Q~_{h+1}(s', a')`` seen at ``(h, s, a)``. The
learner keeps, per triple, the successor counts and the reward sum, from which the sum of
the targets under the new ``Q~_{h+1}`` is exact.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import normal
from tabular._numba.runs import runs_kernel
from tabular.checks import check_positive, check_size
from tabular.explore.results import ExplorationResult
from tabular.explore.setup import learner_setup, run_learner
from tabular.model.sampling import sample_start, sample_step
from tabular.types import MDPLike


class RLSVIParams(NamedTuple):
    """``n_states``, ``n_actions``, ``horizon``, ``episodes``; ``noise_sd``: ``sigma``,
    the standard deviation of a target; ``prior_sd``: ``sigma_0``, of the prior on a
    value; ``epsilon``: 0 (the result's mixing)."""

    n_states: int
    n_actions: int
    horizon: int
    episodes: int
    noise_sd: float
    prior_sd: float
    epsilon: float


@njit(cache=True, inline="always")
def _randomized_values(params, rng, counts, reward_sum, visits, Q, greedy):
    """One draw of ``Q~`` backwards from ``h = H - 1``: ``Q~_h(s, a) ~ N(m, 1 / lambda)``,
    ``lambda = 1 / sigma_0^2 + n / sigma^2``, ``m = (sum of targets / sigma^2) / lambda``
    (prior mean 0), the targets ``r + max_a' Q~_{h+1}(s', a')`` (0 after the end);
    ``greedy[h, s]`` the lowest maximising action."""
    S, A, H = params.n_states, params.n_actions, params.horizon
    noise_precision = 1.0 / params.noise_sd ** 2
    prior_precision = 1.0 / params.prior_sd ** 2
    for h in range(H - 1, -1, -1):
        for s in range(S):
            best, best_a = -np.inf, 0
            for a in range(A):
                total = reward_sum[h, s, a]
                if h + 1 < H:
                    for t in range(S):
                        c = counts[h, s, a, t]
                        if c > 0.0:
                            total += c * Q[h + 1, t, greedy[h + 1, t]]
                precision = prior_precision + visits[h, s, a] * noise_precision
                q = noise_precision * total / precision + normal(rng) / np.sqrt(precision)
                Q[h, s, a] = q
                if q > best:
                    best, best_a = q, a
            greedy[h, s] = best_a


@njit(cache=True, inline="always")
def _rlsvi_run(model, params, rng, out, run):
    """Run ``run`` of RLSVI."""
    S, A, H = params.n_states, params.n_actions, params.horizon
    counts = np.zeros((H, S, A, S))  # successors that continue; the end adds nothing
    reward_sum = np.zeros((H, S, A))
    visits = np.zeros((H, S, A))
    Q = np.zeros((H, S, A))
    greedy = np.zeros((H, S), dtype=np.int16)
    for k in range(params.episodes):
        _randomized_values(params, rng, counts, reward_sum, visits, Q, greedy)
        out.policy[run, k] = greedy
        s = sample_start(model, rng)
        total, length = 0.0, 0
        for h in range(H):
            a = greedy[h, s]
            s_next, r, done = sample_step(model, s, a, rng)
            visits[h, s, a] += 1.0
            reward_sum[h, s, a] += r
            if not done:
                counts[h, s, a, s_next] += 1.0
            total += r
            length += 1
            if done:
                break
            s = s_next
        out.returns[run, k] = total
        out.lengths[run, k] = length


@runs_kernel(simplifying=False)
def _rlsvi(model, params, rng_states, out):
    """Every run of :func:`_rlsvi_run`."""
    for run in range(rng_states.shape[0]):
        _rlsvi_run(model, params, local_stream(rng_states[run]), out, run)


def rlsvi(mdp: MDPLike, *, horizon: int, episodes: int = 1000, noise_sd: float = 0.1,
          prior_sd: float = 1.0, seed: int | None = 0,
          runs: int | None = None) -> ExplorationResult:
    """RLSVI, randomized least-squares value iteration (Osband, Van Roy & Wen, 2016,
    Algorithm 1), with tabular (one-hot) features of ``(h, s, a)``.

    The algorithm box: for each episode, for ``h = H - 1, ..., 0``: regress the targets
    ``y = r + max_a' Q~_{h+1}(s', a')`` of every transition seen at step ``h`` on the
    features, with the Gaussian prior ``N(0, sigma_0^2 I)`` and noise variance
    ``sigma^2``, and draw ``Q~_h`` from the posterior; then act greedily on ``Q~`` for the
    episode. One-hot features make the regression one posterior per triple:
    ``Q~_h(s, a) ~ N(m, 1 / lambda)``, ``lambda = 1 / sigma_0^2 + n / sigma^2``,
    ``m = (sum y / sigma^2) / lambda``.

    Constants (the paper leaves them to the user): ``noise_sd = sigma`` (default 0.1)
    and ``prior_sd = sigma_0`` (default 1, the scale of DeepSea's and RiverSwim's
    optimal values); ties go to the lowest action.

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
    horizon : ``H``; episodes : ``K`` (default 1000).
    noise_sd, prior_sd : finite numbers > 0.
    seed, runs : as for every learner.

    Returns an :class:`~tabular.explore.results.ExplorationResult`.
    """
    mdp, horizon, episodes, n, _, _ = learner_setup(mdp, horizon, episodes, runs, "rlsvi")
    S, A = mdp.n_states, mdp.n_actions
    check_size(f"horizon={horizon} x S={S} x A={A} x S", horizon * S * A * S, 10**8, 8,
               "successor counts")
    params = RLSVIParams(mdp.n_states, mdp.n_actions, horizon, episodes,
                         check_positive("noise_sd", noise_sd),
                         check_positive("prior_sd", prior_sd), 0.0)
    return run_learner(_rlsvi, mdp, params, seed, runs, n)
