"""Iterated (online) DPO: comparisons sampled from the current policy, labelled by
Bradley-Terry on the reward, round after round, measured exactly against pi*."""

import numpy as np
import pytest

from tabular.envs import load_scenario
from tabular.rlhf import iterated_dpo, kl_objective, kl_optimum, train_pipeline


@pytest.fixture(scope="module")
def ex():
    return train_pipeline(load_scenario())


def test_rounds_move_the_policy_toward_the_exact_optimum(ex):
    """With the gold reward labelling, each round closes the exact objective gap
    J* - J(pi) = beta KL(pi || pi*) further, in expectation: over 16 runs every round's
    mean decrease exceeds three standard errors of the paired differences (rounds=k
    with one seed is the first k rounds of a longer call); four rounds of 128
    comparisons and 10 steps take the mean gap from 0.41 to 0.077 (measured: 0.41,
    0.21, 0.12, 0.077; later rounds approach a floor set by the finite comparisons:
    0.053, 0.048, 0.043)."""
    beta, runs = 0.5, 16
    mdp, ref = ex.gold_mdp, ex.reference
    optimum = kl_optimum(mdp, ref, beta).value
    gaps = [np.full(runs, optimum - kl_objective(mdp, ref, ref, beta))]
    for k in range(1, 5):
        res = iterated_dpo(ex.gold_env, ref, beta=beta, rounds=k, pairs=128, steps=10, runs=runs)
        gaps.append(np.array([optimum - kl_objective(mdp, res.run(i).policy, ref, beta)
                              for i in range(runs)]))
    gaps = np.array(gaps)
    assert (gaps >= -1e-12).all()
    decrease = gaps[:-1] - gaps[1:]
    se = decrease.std(axis=1, ddof=1) / np.sqrt(runs)
    assert (decrease.mean(axis=1) > 3 * se).all(), (gaps.mean(axis=1), se)
    assert gaps[-1].mean() < 0.2 * gaps[0].mean()


def test_a_longer_call_repeats_the_first_rounds_and_runs_are_independent(ex):
    a = iterated_dpo(ex.gold_env, ex.reference, beta=1.0, rounds=2, pairs=16, steps=5,
                     runs=3, seed=4)
    b = iterated_dpo(ex.gold_env, ex.reference, beta=1.0, rounds=3, pairs=16, steps=5,
                     runs=3, seed=4)
    one = iterated_dpo(ex.gold_env, ex.reference, beta=1.0, rounds=2, pairs=16, steps=5,
                       seed=4)
    np.testing.assert_array_equal(a.loss, b.loss[:, :2])
    np.testing.assert_array_equal(a.run(0).logits, one.logits)
    assert not np.array_equal(a.run(0).logits, a.run(1).logits)
    assert one.loss.shape == (2, 5) and one.pairs.shape == (2,)
    assert (0 < one.pairs).all() and (one.pairs <= 16).all()
    assert one.loss[0, 0] == pytest.approx(np.log(2))  # the policy starts at the reference
