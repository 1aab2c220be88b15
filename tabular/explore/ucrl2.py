"""UCRL2 (Jaksch, Ortner & Auer, 2010): optimism in the face of uncertainty for the
average-reward (continuing) setting, with extended value iteration.

The learner runs one long continuing trajectory of ``steps`` steps; an outcome that
ends the episode restarts it from the start distribution (the episodic model as a
continuing one, as in :mod:`tabular.explore.communication`). It records the state,
action and reward of every step, so that :func:`tabular.explore.regret.average_regret`
measures its regret against the optimal gain exactly (given the state-action pairs
visited).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from tabular._numba.frame import local_stream
from tabular._numba.rng import seed_states
from tabular._numba.runs import over_runs, runs_kernel
from tabular.checks import check_nonnegative, check_positive_int, check_size
from tabular.explore.setup import check_delta, reward_range
from tabular.model.mdp import as_mdp
from tabular.model.sampling import sample_start, sample_step
from tabular.results import RunsResult, check_runs, with_run_axis
from tabular.types import MDPLike

#: The most recorded steps ``runs x steps`` (13 bytes each).
MAX_RECORDED_STEPS = 10**8
#: Extended value iteration's sweep limit (a kernel error past it).
MAX_SWEEPS = 1_000_000
#: The aperiodicity transform's weight (Puterman, 1994, section 8.5.4).
TAU = 0.5


class UCRL2Params(NamedTuple):
    """``n_states``, ``n_actions``, ``steps`` (``T``); the reward range ``r_min``,
    ``r_max``; ``delta``; ``scale``: multiplies both confidence widths."""

    n_states: int
    n_actions: int
    steps: int
    r_min: float
    r_max: float
    delta: float
    scale: float


class UCRL2Outputs(NamedTuple):
    """``states``, ``actions`` int32 and ``rewards`` ``[runs, T]``; ``episodes`` int64
    ``[runs]``: the number of UCRL2 episodes (policy changes) of each run."""

    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    episodes: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class UCRL2Result(RunsResult):
    """What :func:`ucrl2` returns (a leading run axis with ``runs=n``): ``states``,
    ``actions`` (int32) and ``rewards`` of each step ``[T]``; ``episodes``: the number of
    UCRL2 episodes (the optimistic policy was recomputed that many times)."""

    run_axis_of = ("rewards", 1)

    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    episodes: np.ndarray | int


@njit(cache=True, inline="always")
def _optimistic_transition(p, row, n, width, order):
    """The inner maximisation of extended value iteration (Jaksch et al., 2010, Figure 2):
    the law within L1 distance ``width`` of the estimate ``row / n`` that puts the most
    mass on the best states (``order``: states by decreasing value). Written into ``p``."""
    S = p.shape[0]
    for t in range(S):
        p[t] = row[t] / n
    best = order[0]
    p[best] = min(1.0, p[best] + 0.5 * width)
    total = 0.0
    for t in range(S):
        total += p[t]
    j = S - 1
    while total > 1.0 and j >= 0:
        worst = order[j]
        cut = min(total - 1.0, p[worst]) if worst != best else 0.0
        p[worst] -= cut
        total -= cut
        j -= 1


@njit(cache=True, inline="always")
def _extended_value_iteration(params, counts, visits, reward_sum, t_k, u, u_next, p, policy):
    """Extended value iteration (Jaksch et al., 2010, section 3.1.2) on the aperiodic
    transform ``tau T + (1 - tau) I`` until the span of ``u_{i+1} - u_i`` is below
    ``tau / sqrt(t_k)``; ``policy`` gets the optimistic greedy policy."""
    S, A = params.n_states, params.n_actions
    span = params.r_max - params.r_min
    reward_width = params.scale * span * np.sqrt(7.0 * np.log(2.0 * S * A * t_k / params.delta)
                                                 / 2.0)
    transition_width = params.scale * np.sqrt(14.0 * S * np.log(2.0 * A * t_k / params.delta))
    stop = TAU / np.sqrt(t_k)
    u[:] = 0.0
    for _ in range(MAX_SWEEPS):
        order = np.argsort(-u)
        for s in range(S):
            best, best_a = -np.inf, 0
            for a in range(A):
                n = max(1.0, visits[s, a])
                mean = reward_sum[s, a] / n if visits[s, a] > 0.0 else params.r_max
                value = min(params.r_max, mean + reward_width / np.sqrt(n))
                if visits[s, a] > 0.0:
                    _optimistic_transition(p, counts[s, a], visits[s, a],
                                           transition_width / np.sqrt(n), order)
                    for t in range(S):
                        value += p[t] * u[t]
                else:  # nothing seen: any law, all mass on the best state
                    value += u[order[0]]
                if value > best:
                    best, best_a = value, a
            u_next[s] = TAU * best + (1.0 - TAU) * u[s]
            policy[s] = best_a
        low, high = np.inf, -np.inf
        for s in range(S):
            change = u_next[s] - u[s]
            low, high = min(low, change), max(high, change)
        for s in range(S):
            u[s] = u_next[s] - u_next[0]
        if high - low < stop:
            return
    raise RuntimeError("ucrl2: extended value iteration did not converge")


@njit(cache=True, inline="always")
def _ucrl2_run(model, params, rng, out, run):
    """Run ``run`` of UCRL2 (Jaksch et al., 2010, Figure 1)."""
    S, A, T = params.n_states, params.n_actions, params.steps
    counts = np.zeros((S, A, S))
    visits = np.zeros((S, A))
    at_start = np.zeros((S, A))  # N_k: the visits before the episode
    in_episode = np.zeros((S, A))  # nu_k
    reward_sum = np.zeros((S, A))
    u, u_next, p = np.zeros(S), np.zeros(S), np.zeros(S)
    policy = np.zeros(S, dtype=np.int64)
    s = sample_start(model, rng)
    t, episodes = 0, 0
    while t < T:
        _extended_value_iteration(params, counts, visits, reward_sum, t + 1.0, u, u_next, p,
                                  policy)
        episodes += 1
        at_start[:] = visits
        in_episode[:] = 0.0
        while t < T:
            a = policy[s]
            if in_episode[s, a] >= max(1.0, at_start[s, a]):
                break  # the visits of (s, a) doubled: a new episode
            s_next, r, done = sample_step(model, s, a, rng)
            if done:
                s_next = sample_start(model, rng)
            out.states[run, t], out.actions[run, t], out.rewards[run, t] = s, a, r
            in_episode[s, a] += 1.0
            visits[s, a] += 1.0
            counts[s, a, s_next] += 1.0
            reward_sum[s, a] += r
            s = s_next
            t += 1
    out.episodes[run] = episodes


@runs_kernel(simplifying=False)
def _ucrl2(model, params, rng_states, out):
    """Every run of :func:`_ucrl2_run`."""
    for run in range(rng_states.shape[0]):
        _ucrl2_run(model, params, local_stream(rng_states[run]), out, run)


def ucrl2(mdp: MDPLike, *, steps: int = 10_000, delta: float = 0.1, scale: float = 1.0,
          seed: int | None = 0, runs: int | None = None) -> UCRL2Result:
    """UCRL2 (Jaksch, Ortner & Auer, 2010), average reward, one continuing trajectory.

    The algorithm box (their Figure 1): for episodes ``k = 1, 2, ...`` starting at step
    ``t_k``:

    1. with ``N_k(s, a)`` the visits so far, the estimates ``r^(s, a)``, ``p^(.|s, a)``
       and the set of plausible MDPs ``|r~ - r^| <= sqrt(7 ln(2 S A t_k / delta) / (2
       max(1, N_k)))``, ``||p~ - p^||_1 <= sqrt(14 S ln(2 A t_k / delta) / max(1, N_k))``;
    2. extended value iteration: the optimistic MDP and policy ``pi~_k`` of that set,
       to accuracy ``1 / sqrt(t_k)``;
    3. play ``pi~_k`` until some pair's visits in the episode reach ``max(1, N_k(s, a))``.

    Constants chosen: the reward width times ``r_max - r_min`` (the paper has rewards in
    ``[0, 1]``) and the optimistic reward capped at ``r_max``; both widths times
    ``scale`` (1: the paper's); extended value iteration runs on the aperiodic
    transform ``tau T + (1 - tau) I``, ``tau = 1/2``, with the stopping span scaled by
    ``tau`` (the same greedy policy; it converges on periodic models too); an untried
    pair may lead anywhere, so its optimistic law puts all mass on the best state.

    Parameters
    ----------
    mdp : a :class:`~tabular.TabularMDP` or a Gymnasium env with a transition table
        (an outcome that ends the episode restarts it from the start distribution).
    steps : ``T``, default 10000. delta : in (0, 1), default 0.1.
    scale : multiplies the confidence widths, >= 0, default 1.
    seed, runs : as for every learner.

    Returns a :class:`UCRL2Result`; :func:`~tabular.explore.average_regret` gives its
    regret.
    """
    mdp = as_mdp(mdp)
    steps = check_positive_int("steps", steps)
    n = check_runs(runs)
    check_size(f"runs={n} x steps={steps}", n * steps, MAX_RECORDED_STEPS, 16,
               "recorded steps")
    r_min, r_max = reward_range(mdp, "ucrl2")
    params = UCRL2Params(mdp.n_states, mdp.n_actions, steps, r_min, r_max,
                         check_delta(delta), check_nonnegative("scale", scale))
    out = UCRL2Outputs(np.zeros((n, steps), dtype=np.int32), np.zeros((n, steps), dtype=np.int32),
                       np.zeros((n, steps)), np.zeros(n, dtype=np.int64))
    over_runs(_ucrl2, mdp.arrays, params, seed_states(seed, n), out)
    states, actions, rewards = (with_run_axis(x, runs) for x in out[:3])
    return UCRL2Result(states, actions, rewards,
                       episodes=out.episodes if runs is not None else int(out.episodes[0]))
