"""Model-based episodic exploration: UCBVI (Azar, Osband & Munos, 2017) and PSRL (Osband,
Russo & Van Roy, 2013).

Both keep the counts of what they saw, ``N(s, a, s')`` and the reward sums, plan by
backward induction over the ``H`` steps of an episode on a model built from them, and
act greedily on the plan for the whole episode: UCBVI on the estimated model plus a
bonus (optimism), PSRL on one model drawn from the posterior (posterior sampling). An
outcome that ends the episode sends the learner's model to an absorbing end state of
value 0 (index ``S``). The greedy action table of each episode is recorded, so that
:func:`tabular.explore.regret` evaluates exactly the policy that was followed.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.runs import runs_kernel
from tabular.checks import check_nonnegative, check_positive
from tabular.explore.results import ExplorationResult
from tabular.explore.setup import (
    BERNSTEIN,
    BONUSES,
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
    bernstein_bonus,
    dirichlet_draw,
    hoeffding_bonus,
    normal_posterior_draw,
    simplified_bernstein_bonus,
)
from tabular.types import MDPLike

UCBVI, PSRL = 0, 1


class Successors(NamedTuple):
    """The successors seen of each pair, in the order first seen: ``states[s, a, :n[s, a]]``
    (UCBVI's backups sum over these only)."""

    states: np.ndarray
    n: np.ndarray


SIMPLIFIED_BERNSTEIN = 2
#: UCBVI's bonuses: the two it shares with optimistic Q-learning and rlberry-scool's.
UCBVI_BONUSES = {**BONUSES, "simplified_bernstein": SIMPLIFIED_BERNSTEIN}


@njit(cache=True, inline="always")
def _ucbvi_plan(params, counts, seen, visits, reward_sum, V, greedy):
    """UCBVI's optimistic backward induction (Azar et al., 2017, Algorithm 2,
    ``UCB-Q-values``): ``Q_h(s, a) = min(cap_h, r^(s, a) + P^(.|s, a) V_{h+1} + b(s, a))``
    for a visited pair, ``cap_h = (H - h) r_max`` for an unvisited one; ``V_h = max_a
    Q_h``, ``greedy[h, s]`` the lowest maximising action."""
    S, A, H = params.n_states, params.n_actions, params.horizon
    span = params.r_max - params.r_min
    # what does not change with h, once per episode: 1 / N, r^ and the Hoeffding bonus
    inverse = np.zeros((S, A))
    base = np.zeros((S, A))
    for s in range(S):
        for a in range(A):
            n = visits[s, a]
            if n > 0.0:
                inverse[s, a] = 1.0 / n
                base[s, a] = reward_sum[s, a] / n
                if params.bonus == HOEFFDING:
                    base[s, a] += hoeffding_bonus(n, H, span, params.log_term, params.scale)
    for h in range(H - 1, -1, -1):
        cap = (H - h) * params.r_max
        for s in range(S):
            best, best_a = -np.inf, 0
            for a in range(A):
                q = cap
                if inverse[s, a] > 0.0:
                    mean, second = 0.0, 0.0
                    for j in range(seen.n[s, a]):  # the successors seen, not all S + 1
                        t = seen.states[s, a, j]
                        v = V[h + 1, t]
                        mean += counts[s, a, t] * v
                        second += counts[s, a, t] * v * v
                    mean *= inverse[s, a]
                    q = base[s, a] + mean
                    if params.bonus == BERNSTEIN:
                        variance = max(second * inverse[s, a] - mean * mean, 0.0)
                        q += bernstein_bonus(visits[s, a], variance, H, span, params.log_term,
                                             params.scale)
                    q = min(cap, q)
                if q > best:
                    best, best_a = q, a
            V[h, s] = best
            greedy[h, s] = best_a


@njit(cache=True, inline="always")
def _value_span(params):
    """rlberry's reward range ``span = r_max - r_min``, taken as 1 when it is 0 (its
    ``UCBVIAgent`` does the same): the unit of its bonuses and caps."""
    span = params.r_max - params.r_min
    return span if span > 0.0 else 1.0


@njit(cache=True, inline="always")
def _simplified_plan(params, counts, seen, visits, reward_sum, stage_bonus, V, greedy):
    """rlberry-scool's UCBVI plan (``backward_induction_reward_sd`` on ``R_hat + B_sa``):
    ``Q_h(s, a) = r^(s, a) + B[h, s, a] + P^(.|s, a) V_{h+1}``, an unvisited pair with
    ``r^ = 0`` and the uniform law over the ``S`` states; ``V_h = min(max_a Q_h, H span)``
    (the one cap of every stage), ``greedy[h, s]`` the lowest action maximising the
    uncapped ``Q_h``. ``B`` is the stage bonus table :func:`_model_based_run` refreshes."""
    S, A, H = params.n_states, params.n_actions, params.horizon
    cap = H * _value_span(params)
    for h in range(H - 1, -1, -1):
        uniform = 0.0
        for t in range(S):
            uniform += V[h + 1, t]
        uniform /= S
        for s in range(S):
            best, best_a = -np.inf, 0
            for a in range(A):
                n = visits[s, a]
                if n > 0.0:
                    mean = 0.0
                    for j in range(seen.n[s, a]):  # the successors seen
                        t = seen.states[s, a, j]
                        mean += counts[s, a, t] * V[h + 1, t]
                    q = reward_sum[s, a] / n + stage_bonus[h, s, a] + mean / n
                else:
                    q = stage_bonus[h, s, a] + uniform
                if q > best:
                    best, best_a = q, a
            V[h, s] = min(best, cap)
            greedy[h, s] = best_a


@njit(cache=True, inline="always")
def _initial_stage_bonus(params):
    """rlberry's stage bonus table ``B[h, s, a]`` before any visit: ``v_h = (H - h) span``,
    the largest value from stage ``h``; empty unless the bonus is the simplified one."""
    S, A, H = params.n_states, params.n_actions, params.horizon
    if params.bonus != SIMPLIFIED_BERNSTEIN:
        return np.zeros((0, S, A))
    stage_bonus = np.empty((H, S, A))
    for h in range(H):
        stage_bonus[h] = (H - h) * _value_span(params)
    return stage_bonus


@njit(cache=True, inline="always")
def _posterior_sample(params, rng, counts, visits, reward_sum, P, R, concentration):
    """One model from PSRL's posterior: ``P(.|s, a) ~ Dirichlet(prior_count + N(s, a, .))``
    over the ``S + 1`` successors (the end included), ``R(s, a)`` from the Normal
    posterior of the mean reward (prior ``N(r_max, 1 / tau)``, noise precision ``tau``);
    ``concentration`` is scratch ``[S + 1]``."""
    for s in range(params.n_states):
        for a in range(params.n_actions):
            for t in range(params.n_states + 1):
                concentration[t] = params.prior_count + counts[s, a, t]
            dirichlet_draw(rng, concentration, P[s, a])
            R[s, a] = normal_posterior_draw(rng, reward_sum[s, a], visits[s, a], params.r_max,
                                            params.reward_precision, params.reward_precision)


@njit(cache=True, inline="always")
def _plan_on(params, P, R, V, greedy):
    """Backward induction on the model ``(P, R)``: ``Q_h(s, a) = R(s, a) + P(.|s, a)
    V_{h+1}``, ``V_h = max_a Q_h``, ``greedy[h, s]`` the lowest maximising action."""
    S, A, H = params.n_states, params.n_actions, params.horizon
    for h in range(H - 1, -1, -1):
        for s in range(S):
            best, best_a = -np.inf, 0
            for a in range(A):
                q = R[s, a]
                for t in range(S + 1):
                    q += P[s, a, t] * V[h + 1, t]
                if q > best:
                    best, best_a = q, a
            V[h, s] = best
            greedy[h, s] = best_a


@njit(cache=True, inline="always")
def _model_based_run(method, model, params, rng, out, run):
    """Run ``run`` of UCBVI or PSRL (``method``, a constant of each driver)."""
    S, A, H = params.n_states, params.n_actions, params.horizon
    counts = np.zeros((S, A, S + 1))
    seen = Successors(np.zeros((S, A, S + 1), dtype=np.int64), np.zeros((S, A), dtype=np.int64))
    visits = np.zeros((S, A))
    reward_sum = np.zeros((S, A))
    V = np.zeros((H + 1, S + 1))  # V[H] and the end state S stay 0
    greedy = np.zeros((H, S), dtype=np.int16)
    P = np.zeros((S, A, S + 1)) if method == PSRL else np.zeros((0, 0, 0))
    R = np.zeros((S, A)) if method == PSRL else np.zeros((0, 0))
    concentration = np.empty(S + 1)
    stage_bonus = _initial_stage_bonus(params) if method == UCBVI else np.zeros((0, S, A))
    for k in range(params.episodes):
        if method == UCBVI and stage_bonus.shape[0] > 0:
            _simplified_plan(params, counts, seen, visits, reward_sum, stage_bonus, V, greedy)
        elif method == UCBVI:
            _ucbvi_plan(params, counts, seen, visits, reward_sum, V, greedy)
        else:
            _posterior_sample(params, rng, counts, visits, reward_sum, P, R, concentration)
            _plan_on(params, P, R, V, greedy)
        out.policy[run, k] = greedy
        s = sample_start(model, rng)
        total, length = 0.0, 0
        for h in range(H):
            a = greedy[h, s]
            s_next, r, done = sample_step(model, s, a, rng)
            landing = S if done else s_next
            if counts[s, a, landing] == 0.0:
                seen.states[s, a, seen.n[s, a]] = landing
                seen.n[s, a] += 1
            counts[s, a, landing] += 1.0
            visits[s, a] += 1.0
            reward_sum[s, a] += r
            if stage_bonus.shape[0] > 0:  # rlberry refreshes the stage of the visit only
                stage_bonus[h, s, a] = simplified_bernstein_bonus(
                    visits[s, a], (H - h) * _value_span(params), params.scale)
            total += r
            length += 1
            if done:
                break
            s = s_next
        out.returns[run, k] = total
        out.lengths[run, k] = length


# numba's plain pipeline: the simplifying one (tabular._numba.runs) miscompiled UCBVI's
# loop over the successors seen (the second episode's plan of the two-state test chose
# the other action; the same function under the plain pipeline matched the hand value)
@runs_kernel(simplifying=False)
def _ucbvi(model, params, rng_states, out):
    """Every run of :func:`_model_based_run`, the method ``UCBVI``."""
    for run in range(rng_states.shape[0]):
        _model_based_run(UCBVI, model, params, local_stream(rng_states[run]), out, run)


@runs_kernel(simplifying=False)
def _psrl(model, params, rng_states, out):
    """Every run of :func:`_model_based_run`, the method ``PSRL``."""
    for run in range(rng_states.shape[0]):
        _model_based_run(PSRL, model, params, local_stream(rng_states[run]), out, run)


def ucbvi(mdp: MDPLike, *, horizon: int, episodes: int = 1000, bonus: str = "bernstein",
          scale: float = 1.0, delta: float = 0.1, seed: int | None = 0,
          runs: int | None = None) -> ExplorationResult:
    """UCBVI, upper-confidence value iteration (Azar, Osband & Munos, 2017), episodic.

    The algorithm box (their Algorithms 1 and 2): for each episode ``k = 1..K``,

    1. from the counts, ``P^(s'|s, a) = N(s, a, s') / N(s, a)`` and the mean reward
       ``r^(s, a)``;
    2. backward induction, ``h = H..1``: ``Q_h(s, a) = min(Q_cap, r^(s, a) + P^(.|s, a)
       V_{h+1} + b(s, a))`` for a visited pair (``Q_cap`` for an unvisited one),
       ``V_h(s) = max_a Q_h(s, a)``;
    3. play ``pi_h(s) = argmax_a Q_h(s, a)`` for ``H`` steps and add what was seen to
       the counts.

    Bonuses (``L = ln(5 S A T / delta)``, ``T = K H``, ``N = N(s, a)``):

    - ``"hoeffding"`` (UCBVI-CH, ``bonus_1``): ``b = 7 H L sqrt(1 / N)``;
    - ``"bernstein"`` (UCBVI-BF, ``bonus_2`` without its third term):
      ``b = sqrt(8 L Var_{P^}(V_{h+1}) / N) + 14 H L / (3 N)``
      (:func:`~tabular.rules.exploration.bernstein_bonus` says why the term is left out);
    - ``"simplified_bernstein"``: rlberry-scool's UCBVI (``UCBVIAgent``, 0.7.3, its
      default ``bonus_type``), the whole algorithm and not only its bonus, so that the two
      can be compared run for run: a stage table ``B[h, s, a]``, at first ``v_h = (H -
      h) span``, of which only the entry of the stage of a visit is refreshed, to
      ``min(scale sqrt(1 / N) + v_h / N, v_h)``
      (:func:`~tabular.rules.exploration.simplified_bernstein_bonus`, ``scale`` its
      ``bonus_scale_factor``; ``delta`` unused); ``Q_h = r^ + B[h] + P^ V_{h+1}``
      uncapped, an unvisited pair with ``r^ = 0`` and the uniform law over the ``S``
      states, and ``V_h = min(max_a Q_h, H span)`` (``span`` taken as 1 when every
      reward is the same, as rlberry does).

    Constants chosen where the paper leaves them open: rewards are taken in
    ``[r_min, r_max]``, the range of the model's rewards (known in advance, as ``S``,
    ``A`` and ``H`` are), so ``H`` in the bonuses is ``H (r_max - r_min)`` and the cap
    ``Q_cap`` at step ``h`` is ``(H - h) r_max``; the paper's extra ``min`` with the
    previous episode's ``Q`` is not taken (as in rlberry); ties go to the lowest action.

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
    horizon : ``H``, the steps of an episode (it may end sooner if the model ends it).
    episodes : ``K``, default 1000.
    bonus : ``"bernstein"`` (default), ``"hoeffding"`` or ``"simplified_bernstein"``.
    scale : multiplies the bonus (default 1: the paper's constants; for
        ``"simplified_bernstein"``, its ``sqrt(1 / N)`` term: rlberry's default is 1), a
        finite number >= 0.
    delta : the confidence level in (0, 1), default 0.1.
    seed, runs : as for every learner (same seed, same numbers; ``runs=n``: a run axis).

    Returns an :class:`~tabular.explore.results.ExplorationResult` whose ``policy`` is
    the greedy table of each episode.
    """
    return _model_based(_ucbvi, "ucbvi", mdp, horizon, episodes, seed, runs, bonus=bonus,
                        scale=scale, delta=delta)


def psrl(mdp: MDPLike, *, horizon: int, episodes: int = 1000, prior_count: float | None = None,
         reward_precision: float | None = None, seed: int | None = 0,
         runs: int | None = None) -> ExplorationResult:
    """PSRL, posterior sampling for reinforcement learning (Osband, Russo & Van Roy, 2013),
    episodic.

    The algorithm box (their Algorithm 1): for each episode ``k = 1..K``,

    1. draw one MDP ``M_k`` from the posterior given everything seen so far;
    2. compute its optimal time-dependent policy ``pi_k`` by backward induction over
       ``H`` steps;
    3. play ``pi_k`` for the episode and update the posterior.

    The posterior (the choices the paper leaves open): transitions
    ``P(.|s, a) ~ Dirichlet(prior_count + N(s, a, .))`` over the ``S + 1`` successors
    (the absorbing end included), ``prior_count`` default ``1 / (S + 1)`` (a prior worth
    one observation per pair); mean rewards Normal with known noise precision ``tau =
    reward_precision`` and prior ``N(r_max, 1 / tau)`` (one pseudo-observation of the
    largest reward of the model, so that an untried pair is drawn around the best
    reward there is; TabulaRL uses the same Normal-Normal pair with prior mean 0 and
    ``tau = 1``). The default ``tau = 4 / (r_max - r_min)^2`` is the precision of the
    widest law on ``[r_min, r_max]`` (variance at most ``span^2 / 4``; a reward in that
    range is ``span / 2``-sub-Gaussian): with ``tau = 1`` on rewards in ``[0, 1]`` the
    posterior stays four times too wide, and on DeepSea of size 8 PSRL's regret over
    the last 50 of 300 episodes was 0.80 per episode against 0.55.

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table.
    horizon : ``H``; episodes : ``K`` (default 1000).
    prior_count : the Dirichlet concentration of each successor, > 0 (default
        ``None``: ``1 / (S + 1)``).
    reward_precision : ``tau`` > 0, default ``None``: ``4 / (r_max - r_min)^2`` (1 when
        every reward is the same).
    seed, runs : as for every learner.

    Returns an :class:`~tabular.explore.results.ExplorationResult`.
    """
    return _model_based(_psrl, "psrl", mdp, horizon, episodes, seed, runs,
                        prior_count=prior_count, reward_precision=reward_precision)


def _model_based(driver, name, mdp, horizon, episodes, seed, runs, *, bonus="bernstein",
                 scale=1.0, delta=0.1, prior_count=None, reward_precision=None):
    """Check the arguments, build the parameters and run ``driver``."""
    mdp, horizon, episodes, n, r_min, r_max = learner_setup(mdp, horizon, episodes, runs,
                                                            name)
    bonus_kind = check_bonus(bonus, UCBVI_BONUSES)
    scale = check_nonnegative("scale", scale)
    delta = check_delta(delta)
    prior_count = (1.0 / (mdp.n_states + 1) if prior_count is None
                   else check_positive("prior_count", prior_count))
    params = ExploreParams(
        n_states=mdp.n_states, n_actions=mdp.n_actions, horizon=horizon, episodes=episodes,
        r_min=r_min, r_max=r_max,
        log_term=confidence_log(mdp, horizon, episodes, delta, 5.0), bonus=bonus_kind,
        scale=scale, epsilon=0.0, prior_count=prior_count,
        reward_precision=(4.0 / (r_max - r_min) ** 2 if reward_precision is None and r_max > r_min
                          else 1.0 if reward_precision is None
                          else check_positive("reward_precision", reward_precision)))
    return run_learner(driver, mdp, params, seed, runs, n)
