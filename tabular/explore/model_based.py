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
    bernstein_tail,
    dirichlet_draw,
    hoeffding_bonus,
    normal_posterior_draw,
    simplified_bernstein_bonus,
)
from tabular.types import MDPLike

UCBVI, PSRL = 0, 1


class Successors(NamedTuple):
    """The successors seen of each pair, in the order first seen: ``states[s, a, :n[s, a]]``
    and (UCBVI-BF only, empty otherwise) their counts ``counts[s, a, :n[s, a]]``, copied
    from ``N(s, a, .)`` at each plan (UCBVI's backups sum over these only); the slots
    past ``n[s, a]`` hold state 0 and count 0, so that a Bernstein backup may run over
    the same number of slots for every pair (:func:`_successor_sums`)."""

    states: np.ndarray
    counts: np.ndarray
    n: np.ndarray


class PairTerms(NamedTuple):
    """UCBVI-BF's scratch of one plan, one entry per pair ``p = s A + a``: what does not
    change with ``h`` (``inverse = 1 / N``, ``base = r^``, ``tail`` the second term of
    the Bernstein bonus, each 0 for an unvisited pair) and
    what each stage fills (the sums ``mean = sum_y N(y) V(y)`` and ``second = sum_y
    N(y) V(y)^2`` over the successors seen, then ``q``)."""

    inverse: np.ndarray
    base: np.ndarray
    tail: np.ndarray
    mean: np.ndarray
    second: np.ndarray
    q: np.ndarray


SIMPLIFIED_BERNSTEIN = 2
#: UCBVI's bonuses: the two it shares with optimistic Q-learning and rlberry-scool's.
UCBVI_BONUSES = {**BONUSES, "simplified_bernstein": SIMPLIFIED_BERNSTEIN}


@njit(cache=True, inline="always")
def _pair_terms(params, visits, reward_sum, terms):
    """Fill what UCBVI-BF's plan keeps for every stage of an episode (:class:`PairTerms`)."""
    H, span = params.horizon, params.r_max - params.r_min
    n_pairs = params.n_states * params.n_actions
    visits, reward_sum = visits.reshape(n_pairs), reward_sum.reshape(n_pairs)
    # local names: one reference count a plan, not one a pair (numba's plain pipeline)
    inverse, base, tail = terms.inverse, terms.base, terms.tail
    for p in range(n_pairs):
        n = visits[p]
        inverse[p], base[p], tail[p] = 0.0, 0.0, 0.0
        if n > 0.0:
            inverse[p] = 1.0 / n
            base[p] = reward_sum[p] / n
            tail[p] = bernstein_tail(n, H, span, params.log_term)


@njit(cache=True, inline="always")
def _gather_seen_counts(counts, seen):
    """Copy each pair's counts ``N(s, a, y)`` into the slots of its successors seen;
    return ``widest``, the most successors any pair has."""
    states, seen_counts, n = seen
    widest = 0
    for s in range(n.shape[0]):
        for a in range(n.shape[1]):
            for j in range(n[s, a]):
                seen_counts[s, a, j] = counts[s, a, states[s, a, j]]
            widest = max(widest, n[s, a])
    return widest


@njit(cache=True, inline="always")
def _successor_sums(states, counts, widest, V, h, mean, second):
    """``mean[p] = sum_j N_j V[h, y_j]`` and ``second[p] = sum_j N_j V[h, y_j]^2``
    over the successors ``y_j`` of pair ``p`` in the order first seen, every pair over
    its first ``widest`` slots (the most successors any pair has). A slot past a pair's
    own adds ``0 V`` and ``0 V V``, signed zeros, to sums that start at ``+0``: ``x + 0 =
    x`` for ``x != 0`` and ``+0 + (-0) = +0``, and a sum rounded to nearest is ``-0``
    only when both its terms are, so every sum has the bits of the sum over the pair's
    own successors. One trip count for all pairs: a loop over each pair's own count,
    different from pair to pair, was slower (RiverSwim, H = 20: 119 against 103 ns a
    step; docs/decisions/2026-12-07-explore-drivers.md)."""
    for p in range(mean.shape[0]):
        total, squares = 0.0, 0.0
        for j in range(widest):
            v = V[h, states[p, j]]
            total += counts[p, j] * v
            squares += counts[p, j] * v * v
        mean[p], second[p] = total, squares


@njit(cache=True, inline="always")
def _stage_greedy(q, n_actions, h, V, greedy):
    """``V[h, s] = max_a q[s A + a]``, ``greedy[h, s]`` the lowest maximising action
    (indexed, not through the views ``V[h]``: on numba's plain pipeline each view is a
    reference count)."""
    for s in range(greedy.shape[1]):
        best, best_a = -np.inf, 0
        for a in range(n_actions):
            if q[s * n_actions + a] > best:
                best, best_a = q[s * n_actions + a], a
        V[h, s] = best
        greedy[h, s] = best_a


@njit(cache=True, inline="always")
def _hoeffding_plan(params, counts, seen, visits, reward_sum, V, greedy):
    """UCBVI-CH's optimistic backward induction (Azar et al., 2017, Algorithm 2,
    ``UCB-Q-values``): ``Q_h(s, a) = min(cap_h, r^(s, a) + P^(.|s, a) V_{h+1} + b(s, a))``
    for a visited pair, ``b`` the Hoeffding bonus, ``cap_h = (H - h) r_max`` for an
    unvisited one; ``V_h = max_a Q_h``, ``greedy[h, s]`` the lowest maximising action.
    One loop over the pairs of a stage: without a square root or a division in a
    backup, the three passes of :func:`_bernstein_plan` cost more than they save
    (RiverSwim, H = 20: 50 -> 72 ns a step)."""
    S, A, H = params.n_states, params.n_actions, params.horizon
    span = params.r_max - params.r_min
    # what does not change with h, once per episode: 1 / N and r^ plus the bonus
    inverse = np.zeros((S, A))
    base = np.zeros((S, A))
    for s in range(S):
        for a in range(A):
            n = visits[s, a]
            if n > 0.0:
                inverse[s, a] = 1.0 / n
                base[s, a] = reward_sum[s, a] / n
                base[s, a] += hoeffding_bonus(n, H, span, params.log_term, params.scale)
    for h in range(H - 1, -1, -1):
        cap = (H - h) * params.r_max
        for s in range(S):
            best, best_a = -np.inf, 0
            for a in range(A):
                q = cap
                if inverse[s, a] > 0.0:
                    mean = 0.0
                    for j in range(seen.n[s, a]):  # the successors seen, not all S + 1
                        t = seen.states[s, a, j]
                        mean += counts[s, a, t] * V[h + 1, t]
                    q = min(cap, base[s, a] + mean * inverse[s, a])
                if q > best:
                    best, best_a = q, a
            V[h, s] = best
            greedy[h, s] = best_a


@njit(cache=True, inline="always")
def _bernstein_plan(params, counts, seen, visits, reward_sum, terms, V, greedy):
    """UCBVI-BF's optimistic backward induction (Azar et al., 2017, Algorithm 2,
    ``UCB-Q-values``): ``Q_h(s, a) = min(cap_h, r^(s, a) + P^(.|s, a) V_{h+1} + b(s, a))``
    for a visited pair, ``b`` the Bernstein bonus, ``cap_h = (H - h) r_max`` for an
    unvisited one; ``V_h = max_a Q_h``, ``greedy[h, s]`` the lowest maximising action.

    Each stage in three loops over the pairs: the sums over the successors seen, then
    ``Q_h`` (a loop without branches on the data, which the compiler vectorises: the
    Bernstein bonus's division and square root for eight pairs at once), then the
    greedy choice of each state. The same operations on the same numbers as one loop
    over the pairs: the same bits."""
    S, A, H = params.n_states, params.n_actions, params.horizon
    widest = _gather_seen_counts(counts, seen)
    _pair_terms(params, visits, reward_sum, terms)
    inverse, base, tail, sums, squares, Q = terms
    states = seen.states.reshape(S * A, S + 1)
    seen_counts = seen.counts.reshape(S * A, S + 1)
    visits = visits.reshape(S * A)
    for h in range(H - 1, -1, -1):
        cap = (H - h) * params.r_max
        _successor_sums(states, seen_counts, widest, V, h + 1, sums, squares)
        for p in range(S * A):
            mean = sums[p] * inverse[p]
            q = base[p] + mean
            if params.bonus == BERNSTEIN:
                variance = max(squares[p] * inverse[p] - mean * mean, 0.0)
                # max(N, 1) = N for a visited pair; an unvisited one takes the cap below
                q += bernstein_bonus(max(visits[p], 1.0), variance, tail[p], params.log_term,
                                     params.scale)
            Q[p] = min(cap, q) if inverse[p] > 0.0 else cap
        _stage_greedy(Q, A, h, V, greedy)


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
def _model_based_run(model, params, rng, out, run):
    """Run ``run`` of UCBVI or PSRL (``params.method``)."""
    method, S, A, H = params.method, params.n_states, params.n_actions, params.horizon
    counts = np.zeros((S, A, S + 1))
    pairs = S * A if method == UCBVI and params.bonus == BERNSTEIN else 0  # UCBVI-BF's scratch
    seen = Successors(np.zeros((S, A, S + 1), dtype=np.int64),
                      np.zeros((S, A, S + 1) if pairs > 0 else (0, 0, 0)),
                      np.zeros((S, A), dtype=np.int64))
    terms = PairTerms(np.zeros(pairs), np.zeros(pairs), np.zeros(pairs), np.zeros(pairs),
                      np.zeros(pairs), np.zeros(pairs))
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
        elif method == UCBVI and params.bonus == BERNSTEIN:
            _bernstein_plan(params, counts, seen, visits, reward_sum, terms, V, greedy)
        elif method == UCBVI:
            _hoeffding_plan(params, counts, seen, visits, reward_sum, V, greedy)
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
def _model_based_runs(model, params, rng_states, out):
    """Every run of :func:`_model_based_run`: one kernel for UCBVI and PSRL, the method
    read from ``params`` (a branch an episode: no cost measured, and one compile for
    both learners)."""
    for run in range(rng_states.shape[0]):
        _model_based_run(model, params, local_stream(rng_states[run]), out, run)


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
    return _model_based(UCBVI, "ucbvi", mdp, horizon, episodes, seed, runs, bonus=bonus,
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
    return _model_based(PSRL, "psrl", mdp, horizon, episodes, seed, runs,
                        prior_count=prior_count, reward_precision=reward_precision)


def _model_based(method, name, mdp, horizon, episodes, seed, runs, *, bonus="bernstein",
                 scale=1.0, delta=0.1, prior_count=None, reward_precision=None):
    """Check the arguments, build the parameters and run ``method`` (``UCBVI``, ``PSRL``)."""
    mdp, horizon, episodes, n, r_min, r_max = learner_setup(mdp, horizon, episodes, runs,
                                                            name)
    bonus_kind = check_bonus(bonus, UCBVI_BONUSES)
    scale = check_nonnegative("scale", scale)
    delta = check_delta(delta)
    prior_count = (1.0 / (mdp.n_states + 1) if prior_count is None
                   else check_positive("prior_count", prior_count))
    params = ExploreParams(
        method=method, n_states=mdp.n_states, n_actions=mdp.n_actions, horizon=horizon,
        episodes=episodes, r_min=r_min, r_max=r_max,
        log_term=confidence_log(mdp, horizon, episodes, delta, 5.0), bonus=bonus_kind,
        scale=scale, epsilon=0.0, prior_count=prior_count,
        reward_precision=(4.0 / (r_max - r_min) ** 2 if reward_precision is None and r_max > r_min
                          else 1.0 if reward_precision is None
                          else check_positive("reward_precision", reward_precision)))
    return run_learner(_model_based_runs, mdp, params, seed, runs, n)
