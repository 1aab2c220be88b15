"""GRPO's variants: RLOO's leave-one-out baseline, ReMax's greedy baseline, and the three
ways of averaging token terms, each measured against the exact KL-regularised optimum."""

from __future__ import annotations

import numpy as np
import pytest

from tabular import SoftmaxPolicy, grpo
from tabular.envs import TokenMDP, load_scenario
from tabular.rlhf import kl_objective, kl_optimum, train_pipeline
from tabular.rlhf.group import group_relative_advantages, leave_one_out_advantages


@pytest.fixture(scope="module")
def ex():
    """The running example, trained (pre-training, SFT, reward model)."""
    return train_pipeline(load_scenario())


def test_leave_one_out_is_a_rescaled_group_mean_baseline():
    returns = np.random.default_rng(0).normal(size=7)
    loo = np.empty(7)
    leave_one_out_advantages(returns, loo)
    centred = group_relative_advantages(returns, normalise=False)
    np.testing.assert_allclose(loo, 7 / 6 * centred, atol=1e-14)
    for i in range(7):  # the baseline of response i does not involve R_i
        assert loo[i] == pytest.approx(returns[i] - np.delete(returns, i).mean(), abs=1e-14)


@pytest.mark.parametrize("advantage, tolerance", [("grpo", 5e-3), ("rloo", 1e-3),
                                                  ("remax", 1e-3)])
def test_every_advantage_reaches_the_exact_optimum(ex, advantage, tolerance):
    beta = 1.0
    result = grpo(ex.mdp, ex.reference, ref_policy=ex.reference, beta=beta, iterations=1000,
                  alpha=0.2, advantage=advantage, seed=0)
    gap = kl_optimum(ex.mdp, ex.reference, beta).value - kl_objective(
        ex.mdp, result.policy, ex.reference, beta)
    assert 0.0 <= gap < tolerance


def test_sequence_and_token_averages_agree_when_every_response_has_one_length():
    env = TokenMDP(("a",), {"a b": 1.0, "b a": 0.5}, vocab=("a", "b"), max_len=2)
    mdp = env.to_mdp()
    logits = np.zeros((mdp.n_states, mdp.n_actions))
    logits[:, env.eos_id] = -np.inf  # no early end: every response has max_len tokens
    start = SoftmaxPolicy(logits, np.arange(mdp.n_states))
    kwargs = dict(iterations=200, alpha=0.5, seed=3)
    per_response = grpo(mdp, start, aggregation="sequence", **kwargs)
    per_token = grpo(mdp, start, aggregation="token", **kwargs)
    assert np.all(per_response.episode_lengths == 2)
    np.testing.assert_allclose(per_response.logits, per_token.logits, atol=1e-12)
    summed = grpo(mdp, start, aggregation="sum", **kwargs)  # the same direction, twice as long
    assert not np.allclose(summed.logits, per_token.logits)
