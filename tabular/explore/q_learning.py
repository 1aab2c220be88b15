"""Model-free episodic exploration: optimistic Q-learning (Jin, Allen-Zhu, Bubeck & Jordan,
2018) and, as the dithering baseline it is measured against, epsilon-greedy Q-learning
on the same time-indexed tables.

Both keep one table ``Q_h(s, a)`` per step ``h`` of the episode and move it toward
``r + V_{h+1}(s')`` with Jin et al.'s step size ``(H + 1) / (H + t)``. Within an episode
step ``h`` updates only ``Q_h``, after acting, so the greedy table at the start of the
episode is exactly the policy followed (with the ``epsilon`` mixing of the baseline):
it is recorded for :func:`tabular.explore.regret`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import randint, uniform
from tabular._numba.runs import runs_kernel
from tabular.checks import check_nonnegative, check_unit_interval
from tabular.explore.results import ExplorationResult
from tabular.explore.setup import (
    BERNSTEIN,
    HOEFFDING,
    ExploreParams,
    check_bonus,
    check_delta,
    confidence_log,
    learner_setup,
    run_learner,
)
from tabular.model.sampling import sample_start, sample_step
from tabular.rules.exploration import (
    first_argmax,
    jin_bernstein_bonus,
    jin_bernstein_width,
    jin_hoeffding_bonus,
    jin_step_size,
)
from tabular.types import MDPLike

OPTIMISTIC, DITHERING = 0, 1


@njit(cache=True, inline="always")
def _bernstein_step(mean, squares, width, h, s, a, t, v_next, params):
    """UCB-Bernstein's bookkeeping at the ``t``-th visit of ``(h, s, a)`` (Jin et al.,
    2018, Algorithm 2, lines 7-10): add ``V_{h+1}(s')`` to the pair's running mean and
    sum of squared deviations (Welford's update: the paper's ``mu / t`` and ``sigma -
    mu^2 / t``, kept this way so that the variance ``W_t`` cannot turn negative by
    round-off), then return the bonus ``b_t`` and keep the width ``beta_t``."""
    deviation = v_next - mean[h, s, a]
    mean[h, s, a] += deviation / t
    squares[h, s, a] += deviation * (v_next - mean[h, s, a])
    beta = jin_bernstein_width(t, squares[h, s, a] / t, params.horizon,
                               params.r_max - params.r_min, params.log_term,
                               params.n_states * params.n_actions, params.scale)
    bonus = jin_bernstein_bonus(t, beta, width[h, s, a], params.horizon)
    width[h, s, a] = beta
    return bonus


@njit(cache=True, inline="always")
def _q_learning_run(method, model, params, rng, out, run):
    """Run ``run`` of optimistic (``method = OPTIMISTIC``: ``Q`` starts at the cap, the
    ``params.bonus`` bonus is added, ``V`` is capped) or epsilon-greedy (``DITHERING``:
    ``Q`` starts at 0, no bonus) Q-learning."""
    S, A, H = params.n_states, params.n_actions, params.horizon
    span = params.r_max - params.r_min
    Q = np.zeros((H, S, A))
    if method == OPTIMISTIC:
        for h in range(H):
            Q[h] = (H - h) * params.r_max
    visits = np.zeros((H, S, A))
    # UCB-Bernstein's running statistics of V_{h+1}(s') and its last width beta_{t-1}
    mean, squares, width = np.zeros((H, S, A)), np.zeros((H, S, A)), np.zeros((H, S, A))
    greedy = np.zeros((H, S), dtype=np.int16)  # argmax_a Q[h, s], kept up to date
    for k in range(params.episodes):
        out.policy[run, k] = greedy
        s = sample_start(model, rng)
        total, length = 0.0, 0
        for h in range(H):
            a = greedy[h, s]
            if method == DITHERING and uniform(rng) < params.epsilon:
                a = randint(rng, A)
            s_next, r, done = sample_step(model, s, a, rng)
            visits[h, s, a] += 1.0
            n = visits[h, s, a]
            v_next = 0.0  # V_{H}(.) = 0 and nothing follows the end of the episode
            if not done and h + 1 < H:
                v_next = Q[h + 1, s_next, greedy[h + 1, s_next]]
                if method == OPTIMISTIC:
                    v_next = min(v_next, (H - h - 1) * params.r_max)
            target = r + v_next
            if method == OPTIMISTIC:
                if params.bonus == BERNSTEIN:
                    target += _bernstein_step(mean, squares, width, h, s, a, n, v_next,
                                              params)
                else:
                    target += jin_hoeffding_bonus(n, H, span, params.log_term, params.scale)
            Q[h, s, a] += jin_step_size(n, H) * (target - Q[h, s, a])
            greedy[h, s] = first_argmax(Q[h, s])
            total += r
            length += 1
            if done:
                break
            s = s_next
        out.returns[run, k] = total
        out.lengths[run, k] = length


@runs_kernel
def _optimistic(model, params, rng_states, out):
    """Every run of :func:`_q_learning_run`, the method ``OPTIMISTIC``."""
    for run in range(rng_states.shape[0]):
        _q_learning_run(OPTIMISTIC, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel
def _dithering(model, params, rng_states, out):
    """Every run of :func:`_q_learning_run`, the method ``DITHERING``."""
    for run in range(rng_states.shape[0]):
        _q_learning_run(DITHERING, model, params, local_stream(rng_states[run]), out, run)


def optimistic_q_learning(mdp: MDPLike, *, horizon: int, episodes: int = 1000,
                          bonus: str = "hoeffding", scale: float = 1.0, delta: float = 0.1,
                          seed: int | None = 0, runs: int | None = None) -> ExplorationResult:
    """Q-learning with UCB exploration (Jin, Allen-Zhu, Bubeck & Jordan, 2018), episodic:
    UCB-Hoeffding (their Algorithm 1, the default) or UCB-Bernstein (Algorithm 2).

    The algorithm box: ``Q_h(s, a) <- H`` and ``N_h(s, a) <- 0`` for all ``h, s, a``;
    for each episode, at each step ``h``: take ``a_h = argmax_a Q_h(s_h, a)``, observe
    ``s_{h+1}``; ``t = N_h(s_h, a_h) += 1``; ``Q_h(s_h, a_h) <- (1 - alpha_t) Q_h(s_h,
    a_h) + alpha_t [r_h + V_{h+1}(s_{h+1}) + b_t]`` with ``alpha_t = (H + 1) / (H + t)``;
    ``V_h(s) <- min(H, max_a Q_h(s, a))``. The bonus ``b_t``:

    - ``"hoeffding"``: ``b_t = c sqrt(H^3 iota / t)``
      (:func:`~tabular.rules.exploration.jin_hoeffding_bonus`);
    - ``"bernstein"``: ``b_t = (beta_t - (1 - alpha_t) beta_{t-1}) / (2 alpha_t)``, the
      width ``beta_t = min{c1 (sqrt(H / t (W_t + H) iota) + sqrt(H^7 S A) iota / t),
      c2 sqrt(H^3 iota / t)}`` from the empirical variance ``W_t`` of the ``t`` values
      ``V_{h+1}(s_{h+1})`` seen after the pair
      (:func:`~tabular.rules.exploration.jin_bernstein_width`,
      :func:`~tabular.rules.exploration.jin_bernstein_bonus`). Its second-order term
      ``sqrt(H^7 S A) iota / t`` keeps the ``c2`` branch, a Hoeffding width, in force
      until ``t > H^4 S A iota / (1 - sqrt((W_t + H) / H^2))^2`` (at ``W_t = 0``: 746
      ``iota`` visits for ``H = 2, S A = 4``): on small problems and runs the two
      bonuses differ only in how the width is spread over the visits.

    Constants chosen where the paper leaves them open: ``c = scale`` for Hoeffding,
    ``c1 = c2 = 2 scale`` for Bernstein (the reason is in
    :func:`~tabular.rules.exploration.jin_bernstein_width`), ``scale`` default 1 (the
    paper proves its bounds for "some absolute constant(s)"); ``iota = ln(S A T /
    delta)``, ``T = K H``; rewards in ``[r_min, r_max]`` of the model, so ``H`` in the
    bonus is ``H (r_max - r_min)`` and the initial value and cap at step ``h`` are
    ``(H - h) r_max``; ties go to the lowest action.

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
    horizon : ``H``; episodes : ``K`` (default 1000).
    bonus : ``"hoeffding"`` (default) or ``"bernstein"``.
    scale : ``c`` >= 0, default 1. delta : in (0, 1), default 0.1.
    seed, runs : as for every learner.

    Returns an :class:`~tabular.explore.results.ExplorationResult`.
    """
    mdp, horizon, episodes, n, r_min, r_max = learner_setup(mdp, horizon, episodes, runs,
                                                            "optimistic_q_learning")
    bonus_kind = check_bonus(bonus)
    scale = check_nonnegative("scale", scale)
    delta = check_delta(delta)
    params = _params(mdp, horizon, episodes, r_min, r_max,
                     log_term=confidence_log(mdp, horizon, episodes, delta, 1.0), scale=scale,
                     bonus=bonus_kind)
    return run_learner(_optimistic, mdp, params, seed, runs, n)


def epsilon_greedy_q_learning(mdp: MDPLike, *, horizon: int, episodes: int = 1000,
                              epsilon: float = 0.1, seed: int | None = 0,
                              runs: int | None = None) -> ExplorationResult:
    """Epsilon-greedy Q-learning on time-indexed tables: the dithering baseline of the
    exploration literature (Osband et al., 2016, 2019), on the footing of
    :func:`optimistic_q_learning` without its optimism.

    ``Q_h(s, a)`` starts at 0; each step takes a uniformly random action with
    probability ``epsilon`` (else the greedy one, the lowest on ties) and moves
    ``Q_h(s_h, a_h)`` toward ``r_h + max_a Q_{h+1}(s_{h+1}, a)`` with the step size
    ``(H + 1) / (H + t)``. On DeepSea it finds the treasure with probability about
    ``(epsilon / 2)^N`` per episode: regret linear in ``K`` until then.

    Parameters: ``mdp``, ``horizon``, ``episodes``, ``seed``, ``runs`` as in
    :func:`optimistic_q_learning`; ``epsilon`` in [0, 1], default 0.1.

    Returns an :class:`~tabular.explore.results.ExplorationResult` whose ``epsilon`` is
    this one: episode ``k`` followed ``(1 - epsilon) pi_k + epsilon uniform``.
    """
    mdp, horizon, episodes, n, r_min, r_max = learner_setup(mdp, horizon, episodes, runs,
                                                            "epsilon_greedy_q_learning")
    params = _params(mdp, horizon, episodes, r_min, r_max, log_term=0.0, scale=0.0,
                     epsilon=check_unit_interval("epsilon", epsilon))
    return run_learner(_dithering, mdp, params, seed, runs, n)


def _params(mdp, horizon, episodes, r_min, r_max, *, log_term, scale, epsilon=0.0,
            bonus=HOEFFDING):
    return ExploreParams(n_states=mdp.n_states, n_actions=mdp.n_actions, horizon=horizon,
                         episodes=episodes, r_min=r_min, r_max=r_max, log_term=log_term,
                         bonus=bonus, scale=scale, epsilon=epsilon, prior_count=0.0,
                         reward_precision=1.0)
