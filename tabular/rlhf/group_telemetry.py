"""What :func:`tabular.rlhf.grpo` records with ``history=True``, beside the exact metrics of
:mod:`tabular.pg.telemetry`: the metrics TRL's ``GRPOTrainer`` logs, under its names, of
the batch the learner draws at each evaluation, and exact ones of the policy.

TRL's names (as ``GRPOTrainer._generate_and_score_completions`` and ``compute_loss`` log
them), from the group the learner draws next at the evaluation (one prompt's
``group_size`` responses):

- ``reward``: the mean reward of the responses; ``reward_std``: the mean over groups of
  the group's standard deviation of rewards (TRL: Bessel's correction, as here);
  ``frac_reward_zero_std``: the share of groups whose rewards all agree;
- ``kl``: the mean over tokens of ``k3`` to the reference (TRL computes it only with
  ``beta > 0``; here always, the reference being given); ``entropy``: the mean over
  tokens of the entropy of ``pi(.|s_t)``;
- ``completions/mean_length``, ``completions/min_length``, ``completions/max_length``,
  ``completions/clipped_ratio`` (the share of responses cut before their ``eos``);
- ``clip_ratio/low_mean``, ``clip_ratio/high_mean``, ``clip_ratio/region_mean``: the
  shares of token updates the clip held in the last iteration before the evaluation
  (0 at iteration 0).

Exact, from the response tree: ``exact/expected_length`` ``E[|o|]`` and
``exact/entropy``, the entropy of the response distribution ``-E[log pi(y|x)]``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tabular.model.graph import tree_levels, tree_roots
from tabular.model.policy import SoftmaxPolicy
from tabular.rlhf.group_config import truncating_actions
from tabular.solve.tree import ending_probabilities

#: TRL GRPOTrainer's metric names recorded by :func:`grpo`.
TRL_GRPO = ("reward", "reward_std", "frac_reward_zero_std", "kl", "entropy",
            "completions/mean_length", "completions/min_length", "completions/max_length",
            "completions/clipped_ratio", "clip_ratio/low_mean", "clip_ratio/high_mean",
            "clip_ratio/region_mean")

#: The exact metrics :func:`grpo` adds.
EXACT_GRPO = ("exact/expected_length", "exact/entropy")


def batch_metrics(batch: tuple, rollout, group_size: int, cuts: np.ndarray,
                  probs_of: Callable[[np.ndarray], np.ndarray]) -> dict[str, float]:
    """TRL's batch metrics of ``batch`` (``(paths, seen, lengths, returns)`` of
    :func:`~tabular.pg.telemetry.sample_batch`, groups of ``group_size`` in order);
    ``cuts [S, A]``: the pairs that end a response without its ``eos`` or do not end
    it (a response stopped there was cut by ``max_steps``); ``probs_of(states)`` gives
    ``pi(.|s)`` of each state ``[n, A]``."""
    paths, seen, lengths, returns = batch
    groups = returns.reshape(-1, group_size)
    std = groups.std(axis=1, ddof=1)
    on = np.arange(seen.shape[2]) < lengths[:, None]
    states, actions = paths[:, 0, :-1][on], paths[:, 1, :-1][on]
    x = seen[:, 1][on] - rollout.ref_log_probs[rollout.ref_row[states], actions]
    p = probs_of(states)
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1)
    rows = np.arange(lengths.shape[0])
    last_s, last_a = paths[rows, 0, lengths - 1], paths[rows, 1, lengths - 1]
    cut = cuts[last_s, last_a]
    return {"reward": float(returns.mean()), "reward_std": float(std.mean()),
            "frac_reward_zero_std": float(np.mean(np.ptp(groups, axis=1) == 0.0)),
            "kl": float(np.mean(np.exp(-x) - 1.0 + x)), "entropy": float(entropy.mean()),
            "completions/mean_length": float(lengths.mean()),
            "completions/min_length": float(lengths.min()),
            "completions/max_length": float(lengths.max()),
            "completions/clipped_ratio": float(cut.mean())}


def exact_metrics(mdp, policy: SoftmaxPolicy, depth: np.ndarray) -> dict[str, float]:
    """``exact/expected_length`` and ``exact/entropy`` of ``policy`` on the tree ``mdp``
    (``depth [S]``: the tokens before each state)."""
    ends = ending_probabilities(mdp, policy)
    s, a = np.nonzero(ends)
    p = ends[s, a]
    given = p / mdp.start[tree_roots(mdp)[s]]
    return {"exact/expected_length": float(p @ (depth[s] + 1)),
            "exact/entropy": float(-(p @ np.log(given)))}


def depths(mdp) -> np.ndarray:
    """The tokens before each state of the tree ``mdp`` (0 at a prompt)."""
    depth = np.zeros(mdp.n_states, dtype=np.int64)
    for s, a, k in tree_levels(mdp):
        depth[mdp.next_state[s, a, k]] = depth[s] + 1
    return depth


def group_sampler(su, out, group_size: int, sample_group) -> Callable[[int, int], dict]:
    """``sampled(run, iteration)`` for
    :func:`~tabular.pg.arguments.PolicyGradientArgs.recorder`: the
    :func:`~tabular.pg.telemetry.batch_metrics` of the group the learner draws next from
    run ``run``'s stream (a copy), TRL's GRPO metrics of it, the clip shares of the
    iteration before and the exact metrics."""
    from tabular.pg.telemetry import batch_metrics as objective_metrics

    cuts = truncating_actions(su.mdp) | ~su.mdp.done[:, :, 0]
    depth = depths(su.mdp)
    row_of_state = su.policy.row_of_state

    def sampled(run: int, iteration: int) -> dict[str, float]:
        theta = out.logits[run]
        batch = sample_group(su.mdp.arrays, su.rollout, theta, su.rng_states[run].copy(),
                             group_size)

        def probs_of(states):
            z = theta[row_of_state[states]]
            z = np.exp(z - z.max(axis=1, keepdims=True))
            return z / z.sum(axis=1, keepdims=True)

        metrics = objective_metrics(batch, su.rollout)
        metrics.update(batch_metrics(batch, su.rollout, group_size, cuts, probs_of))
        low = float(out.clipped[run, 0, iteration - 1]) if iteration > 0 else 0.0
        high = float(out.clipped[run, 1, iteration - 1]) if iteration > 0 else 0.0
        metrics.update({"clip_ratio/low_mean": low, "clip_ratio/high_mean": high,
                        "clip_ratio/region_mean": low + high})
        metrics.update(exact_metrics(su.mdp, SoftmaxPolicy(theta.copy(), row_of_state.copy()),
                                     depth))
        return metrics
    return sampled
