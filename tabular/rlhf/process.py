"""Process rewards: credit for every step of a response, not only for the outcome.

An outcome reward pays ``R(x, y)`` when the response ends; a process reward pays each
step as it is taken. The process rewards here are potential-based (Ng, Harada and
Russell, 1999): a step from prefix ``s`` to ``s'`` pays ``Phi(s') - Phi(s)``, with
``Phi = 0`` once the response has ended, on top of the outcome. Along a whole response
they add up to ``-Phi(x)``, a constant per prompt, so every policy's return changes by
that constant: the optimal policy and the KL-regularised optimum ``pi*`` do not move,
and neither does any policy's KL or ranking. What changes is the credit: with
``Phi(s) = E_ref[R | s]``, the value of a prefix under a reference policy (a process
reward model that scores partial responses), the return from step ``t`` on is
``R - Phi(s_t)``: each token is judged against what was expected before it.

A process reward model is fitted from step-level labels
(:func:`fit_process_reward_model`), as Math-Shepherd labels the steps of sampled
solutions (Wang et al., 2024): each prefix of a sampled response is completed several
times by a policy, and the mean outcome of its completions labels it, an unbiased
estimate of the prefix's value ``E_pi[R | s]``. The tabular model is the mean label of
each prefix (the least-squares fit of one number per prefix), so it tends to
:func:`prefix_values` as the labels grow; used as the potential, any fit keeps the
optimum where it is, and a better fit gives better credit.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.runs import over_runs, run_keeping_stream, runs_kernel
from tabular.checks import MAX_COUNT, check_positive_int, policy_matrix, real_array
from tabular.model.graph import tree_edges
from tabular.model.mdp import TabularMDP, as_mdp
from tabular.pg.arguments import policy_gradient_args
from tabular.pg.rollout import continue_episode, episode_buffers, sample_episode
from tabular.results import with_run_axis
from tabular.rlhf.results import ProcessRewardModel
from tabular.solve.dp import policy_evaluation
from tabular.types import MDPLike, PolicyLike


def prefix_values(mdp: MDPLike, policy: PolicyLike) -> np.ndarray:
    """``[S]``: the expected return from each prefix (state) of the token MDP ``mdp``
    under ``policy``, ``E_pi[R | s]``, exactly (gamma = 1 on the tree)."""
    mdp = as_mdp(mdp)
    return policy_evaluation(mdp, policy_matrix(mdp, policy), 1.0).V


def process_rewards(mdp: MDPLike, potential: npt.ArrayLike) -> TabularMDP:
    """The token MDP ``mdp`` with the potential-based process rewards of ``potential``
    (``[S]``, finite: e.g. :func:`prefix_values` of a reference policy) added to its
    own: a step ``s -> s'`` pays ``Phi(s') - Phi(s)`` more (``Phi = 0`` after the last
    step). Returns a new :class:`~tabular.TabularMDP` with the same optimum."""
    mdp = as_mdp(mdp)
    phi = real_array("potential", potential)
    if phi.shape != (mdp.n_states,) or not np.isfinite(phi).all():
        raise ValueError(f"potential must be {mdp.n_states} finite numbers, one per state, "
                         f"got shape {list(phi.shape)}")
    tree_edges(mdp)  # a tree: every step moves forwards
    after = np.where(mdp.done, 0.0, phi[mdp.next_state])
    bonus = np.where(mdp.prob > 0.0, after - phi[:, None, None], 0.0)
    return dataclasses.replace(mdp, reward=mdp.reward + bonus)


class StepLabelParams(NamedTuple):
    """:func:`fit_process_reward_model`'s sampling as its kernel reads it: ``responses``
    sampled, ``completions`` per prefix, and the logits ``theta`` ``[R, A]`` of the policy
    that samples and completes."""

    responses: int
    completions: int
    theta: np.ndarray


@njit(cache=True)
def _step_labels_run(model, p, rollout, rng, out, run):
    """Run ``run``, into row ``run`` of the :class:`StepLabels` ``out``: ``p.responses``
    responses sampled from the policy ``p.theta``; every prefix ``s_t`` they pass through
    is completed ``p.completions`` times, each completion's return from ``s_t`` on added
    to ``totals[s_t]`` (a Monte Carlo label of its value)."""
    theta, totals, counts = p.theta, out.totals[run], out.counts[run]
    paths, seen, dones, dist = episode_buffers(2, rollout.max_steps, theta.shape[1])
    for _ in range(p.responses):
        T, _ = sample_episode(model, rollout, theta, rng, paths[0], seen[0], dones[0], dist)
        for t in range(T):
            s = paths[0, 0, t]
            for _ in range(p.completions):
                paths[1, 0, 0] = s
                _, label = continue_episode(model, rollout, theta, rng, paths[1], seen[1],
                                            dones[1], dist)
                totals[s] += label
                counts[s] += 1


class StepLabels(NamedTuple):
    """What the step-label kernel fills, each ``[runs, S]``: the sum of the labels of
    each prefix and their number."""

    totals: np.ndarray
    counts: np.ndarray


@runs_kernel
def _step_labels(model, params, rollout, rng_states, out):
    """Every run of :func:`_step_labels_run`, each stream kept for the next chunk."""
    for run in range(rng_states.shape[0]):
        run_keeping_stream(_step_labels_run, model, params, rollout, rng_states, out, run)


def fit_process_reward_model(mdp: MDPLike, policy: PolicyLike, *, responses: int = 100,
                             completions: int = 4, reward_floor: float | None = None,
                             seed: int | None = 0, runs: int | None = None) -> ProcessRewardModel:
    """Fit a process reward model to Monte Carlo step labels (Wang et al., 2024).

    Samples ``responses`` responses from ``policy``; each prefix they pass through is
    completed ``completions`` times by ``policy``, and each completion's outcome (its
    return from the prefix on) is a label of the prefix. The model is the mean label
    of each prefix, an unbiased estimate of ``E_pi[R | s]`` (:func:`prefix_values`)
    whose error shrinks like one over the square root of its labels.

    Parameters
    ----------
    mdp : the token MDP (a tree, e.g. ``env.to_mdp()``) paying the outcome reward.
    policy : the policy that samples and completes (a :class:`~tabular.SoftmaxPolicy`
        or an ``[S, A]`` matrix of probabilities), e.g. the reference.
    responses : sampled responses whose prefixes are labelled (>= 1), default 100.
    completions : completions per prefix (>= 1), default 4.
    reward_floor : label with ``max(r, reward_floor)`` (required when the MDP can pay
        ``-inf``), default ``None``.
    seed : seed of the sampling streams (``None``: fresh entropy), default 0.
    runs : ``None`` (default): one model; ``n``: ``n`` models fitted to independent
        labels, with a leading run axis.

    Returns a :class:`ProcessRewardModel`.
    """
    responses = check_positive_int("responses", responses, high=MAX_COUNT)
    completions = check_positive_int("completions", completions, high=MAX_COUNT // responses)
    mdp = as_mdp(mdp)
    su = policy_gradient_args(mdp, policy, ref_policy=None, beta=0.0, reward_floor=reward_floor,
                              gamma=1.0, episodes=responses, max_steps=None, runs=runs, seed=seed,
                              made_by=f"responses={responses:,}")
    parent = _tree_parents(mdp)
    n = su.rng_states.shape[0]
    labels = StepLabels(np.zeros((n, mdp.n_states)), np.zeros((n, mdp.n_states)))
    params = StepLabelParams(su.episodes, completions, su.policy.logits)
    over_runs(_step_labels, mdp.arrays, params, su.rollout, su.rng_states, labels)
    totals, counts = labels
    values = np.divide(totals, counts, out=np.zeros_like(totals), where=counts > 0)
    labelled = counts > 0
    known = labelled | (parent == np.arange(mdp.n_states))  # a root without labels: 0
    while not known.all():  # each pass reaches one level deeper into the tree
        values = np.where(known, values, values[:, parent])
        known = known | known[:, parent]
    return ProcessRewardModel(with_run_axis(values, runs), with_run_axis(counts, runs))


def _tree_parents(mdp) -> np.ndarray:
    """``[S]``: the parent of each state of a tree MDP (a root is its own parent)."""
    parent = np.arange(mdp.n_states)
    s, a, k = tree_edges(mdp)
    parent[mdp.next_state[s, a, k]] = s
    return parent
