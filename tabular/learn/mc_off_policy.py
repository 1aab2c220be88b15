"""Off-policy Monte Carlo prediction by importance sampling (Sutton & Barto, sections 5.5-5.6).

:func:`off_policy_mc_prediction` estimates ``v_pi`` of a target policy ``pi`` from
episodes of a behaviour policy ``b`` that covers it (``pi(a|s) > 0`` implies
``b(a|s) > 0``, section 5.5). The return ``G_t`` that follows a visit of ``S_t`` is
weighted by the importance-sampling ratio ``rho_{t:T-1} = prod_{k=t}^{T-1}
pi(A_k|S_k) / b(A_k|S_k)`` (eq. 5.3), accumulated backwards as ``W`` over the episode:

- ordinary importance sampling (eq. 5.5): ``V(s)`` is the average of ``rho G`` over
  the visits of ``s`` (:func:`~tabular.rules.returns.importance_weighted_return`):
  unbiased, but its variance can be infinite (Example 5.5, Figure 5.4);
- weighted importance sampling (eq. 5.6), incrementally (eqs. 5.7-5.8, the box of
  section 5.6 for ``V`` in place of ``Q``): ``C(s) <- C(s) + W``,
  ``V(s) <- V(s) + W / C(s) [G - V(s)]``: biased at first (its first estimate is the
  return observed, whatever the ratio), with a bounded variance.

The ratio of ``V(S_t)`` includes the action ``A_t`` (that of ``Q(S_t, A_t)`` in the
box does not). When ``pi == b`` every ratio is 1 and both are the sample average of
:func:`~tabular.learn.mc.mc_prediction`, bit for bit. Off-policy MC control with the same
two weightings is :func:`tabular.learn.mc.mc_control` (``method="off_policy"``), whose
vocabulary (``importance_sampling="ordinary" | "weighted"``) this module shares. An
episode cut at ``max_steps`` bootstraps its tail from ``V(S_T)``, as in
:mod:`tabular.learn.mc`; ``-inf`` rewards are exact (see :mod:`tabular.learn.divergence`). The
kernel is a runs driver (:mod:`tabular._numba.runs`) over one run function.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.frame import borrowed, local_stream
from tabular._numba.rng import seed_states
from tabular._numba.runs import SIMPLIFYING_PIPELINE, over_runs, runs_kernel
from tabular.checks import check_flag, policy_matrix
from tabular.learn.arguments import episode_args, initial_values
from tabular.learn.episodes import episode_buffers, mark_first_visits, record_episode
from tabular.learn.mc import SAMPLINGS, WEIGHTED
from tabular.learn.outputs import (
    close_episode,
    prediction_outputs,
    prediction_result,
)
from tabular.learn.paragraphs import shares_paragraphs
from tabular.learn.results import PredictionResult
from tabular.rules.returns import discounted_return, importance_weighted_return
from tabular.rules.values import update_toward
from tabular.types import MDPLike, PolicyLike


class OffPolicyMCParams(NamedTuple):
    """Hyper-parameters of off-policy MC prediction (a kernel argument).

    ``target``: the target policy ``pi`` and ``behaviour``: the behaviour policy ``b``,
    ``[S, A]`` each; ``sampling``: ``ORDINARY`` or ``WEIGHTED`` importance sampling
    (:mod:`tabular.learn.mc`); ``first_visit``: update at first visits only; ``gamma``:
    discount; ``episodes``: episodes per run; ``max_steps``: step limit per episode.
    """

    target: np.ndarray
    behaviour: np.ndarray
    sampling: int
    first_visit: bool
    gamma: float
    episodes: int
    max_steps: int


@njit(cache=True, parallel=SIMPLIFYING_PIPELINE)  # fewer reference counts: see docs/decisions/
def _off_policy_mc_run(model, params, rng, out, run):
    """Run ``run`` of off-policy MC prediction (the box of section 5.6, for ``V``)."""
    V = borrowed(out.V[run])
    gamma, max_steps, weighted = params.gamma, params.max_steps, params.sampling == WEIGHTED
    n_states = V.shape[0]
    counts = np.zeros(n_states)  # C(s) (eq. 5.8), or N(s), the visits averaged (eq. 5.5)
    first_time = np.full(n_states, -1, dtype=np.int64)
    states, actions, rewards = episode_buffers(max_steps)
    for episode in range(params.episodes):
        T, terminated, total = record_episode(model, params.behaviour, rng, states, actions,
                                              rewards)
        mark_first_visits(states, T, first_time)
        G = 0.0 if terminated else V[states[T]]
        W = 1.0  # rho_{t:T-1} (eq. 5.3)
        for t in range(T - 1, -1, -1):
            G = discounted_return(rewards[t], gamma, G)
            s_t, a_t = states[t], actions[t]
            W *= params.target[s_t, a_t] / params.behaviour[s_t, a_t]
            if weighted and W == 0.0:  # no earlier step can matter (section 5.6)
                break
            if params.first_visit and first_time[s_t] != t:
                continue
            if weighted:
                counts[s_t] += W
                V[s_t] = update_toward(V[s_t], G, W / counts[s_t])
            else:
                counts[s_t] += 1.0
                V[s_t] = update_toward(V[s_t], importance_weighted_return(W, G),
                                       1.0 / counts[s_t])
        for t in range(T):
            first_time[states[t]] = -1
        close_episode(out, run, episode, total, T, V)


@runs_kernel
def _off_policy_mc(model, params, rng_states, out):
    """Every run of :func:`_off_policy_mc_run`."""
    for run in range(rng_states.shape[0]):
        _off_policy_mc_run(model, params, local_stream(rng_states[run]), out, run)


@shares_paragraphs
def off_policy_mc_prediction(mdp: MDPLike, target_policy: PolicyLike, behaviour_policy: PolicyLike,
                             *, importance_sampling: str = "weighted", gamma: float = 1.0,
                             episodes: int = 100, first_visit: bool = True,
                             initial_V: npt.ArrayLike = 0.0, seed: int | None = 0,
                             runs: int | None = None, max_steps: int | None = None,
                             history: bool = False) -> PredictionResult:
    """Estimate ``v_pi`` of ``target_policy`` from episodes of ``behaviour_policy`` by
    importance sampling (off-policy MC prediction, sections 5.5-5.6).

    Parameters
    ----------
    {mdp}
    target_policy : ``pi``, the policy evaluated, any form: greedy ``int [S]``,
        stochastic ``[S, A]`` or a :class:`~tabular.SoftmaxPolicy`.
    behaviour_policy : ``b``, the policy that acts, in any of those forms; it must
        cover ``pi``: ``b(a|s) > 0`` wherever ``pi(a|s) > 0`` (section 5.5).
    importance_sampling : ``"weighted"`` (default; eq. 5.6, incrementally eqs.
        5.7-5.8: step ``W / C(s)``) or ``"ordinary"`` (eq. 5.5: the average of
        ``rho G``).
    {gamma episodes}
    first_visit : update only at the first visit of a state in an episode (else at
        every visit, as the box of section 5.6), default True.
    initial_V : the initial estimate, a finite number or ``[S]`` array, default 0.0;
        a state keeps it until a visit of nonzero ratio (weighted) or any visit
        (ordinary).
    {seed runs max_steps_V history_V}

    Returns a :class:`~tabular.learn.results.PredictionResult`: ``V`` ``[S]``; ``V_history``
    ``[episodes, S]`` when ``history=True``, else ``None``; ``episode_returns``
    (undiscounted sum of rewards, of the behaviour) and ``episode_lengths`` (steps),
    ``[episodes]``; each with a leading run axis when ``runs=n``.
    """
    ep = episode_args(mdp, gamma=gamma, episodes=episodes, runs=runs, max_steps=max_steps)
    mdp = ep.mdp
    if importance_sampling not in SAMPLINGS:
        raise ValueError(f"importance_sampling must be one of {sorted(SAMPLINGS)}, "
                         f"got {importance_sampling!r}")
    target = policy_matrix(mdp, target_policy, "target_policy")
    behaviour = policy_matrix(mdp, behaviour_policy, "behaviour_policy")
    uncovered = (target > 0.0) & (behaviour == 0.0)
    if uncovered.any():
        s, a = np.argwhere(uncovered)[0]
        raise ValueError(f"behaviour_policy must cover target_policy (section 5.5): "
                         f"behaviour_policy[{s}, {a}] = 0 where target_policy[{s}, {a}] = "
                         f"{target[s, a]} (state {mdp.state_name(s)}, action "
                         f"{mdp.action_name(a)})")
    out = prediction_outputs(initial_values("initial_V", initial_V, (mdp.n_states,)),
                             ep.n_runs, ep.episodes, history)
    params = OffPolicyMCParams(target=target, behaviour=behaviour,
                               sampling=SAMPLINGS[importance_sampling],
                               first_visit=check_flag("first_visit", first_visit), gamma=ep.gamma,
                               episodes=ep.episodes, max_steps=ep.max_steps)
    over_runs(_off_policy_mc, mdp.arrays, params, seed_states(seed, ep.n_runs), out)
    return prediction_result(out, runs, ep.mdp)
