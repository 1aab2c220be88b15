"""The exact expected update of the GRPO family (tabular.rlhf.expected_update) against the
average of the sampled learner's own updates, and the exact gradient of the
KL-regularised objective."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabular import SoftmaxPolicy
from tabular.envs import TokenMDP
from tabular.rlhf import expected_update, grpo, kl_objective
from tabular.testing import property_settings, token_mdps

#: Estimators whose first-epoch update the property checks, one per kind of weight: the
#: group mean with the std (enumerated), RLOO with every option that drops or masks,
#: token-count normalisers, the KL as a loss term, ReMax, CISPO's cap below 1.
ESTIMATORS = [
    dict(),
    dict(advantage="rloo", loss_type="grpo", dynamic_sampling=True,
         mask_truncated_completions=True, truncation_penalty=0.3),
    dict(loss_type="bnpo", group_size=3, scale_rewards="none", dynamic_sampling=True),
    dict(advantage="rloo", loss_type="dr_grpo", kl_estimator="k3", kl_placement="loss",
         entropy_coef=0.1, groups=2),
    dict(advantage="remax", scale_rewards="group", kl_estimator="k2"),
    dict(loss_type="cispo", epsilon_high=0.5, group_size=3, kl_estimator="k1",
         kl_placement="loss"),
]

#: Independent sampled updates averaged per example.
DRAWS = 3000


def random_policy(mdp, rng, scale=1.0):
    return SoftmaxPolicy(scale * rng.normal(size=(mdp.n_states, mdp.n_actions)),
                         np.arange(mdp.n_states))


@pytest.mark.parametrize("options", ESTIMATORS, ids=[str(o) for o in ESTIMATORS])
@property_settings(max_examples=4)
@given(env=token_mdps(), seed=st.integers(0, 2**31 - 1))
def test_the_exact_expected_update_is_the_mean_of_the_sampled_updates(options, env, seed):
    """Each run of ``grpo(iterations=1, alpha=1)`` moves the logits by one sampled
    update. Projected on the exact update and on 4 random directions ``v``, the mean of
    ``<step, v>`` over DRAWS runs is within 5 standard errors (estimated from the same
    draws; projections mix every visited pair, so their mean is close to normal where a
    rarely visited coordinate's is not) of ``<E[d], v>``; a projection that never varies
    must agree to rounding."""
    mdp = env.to_mdp()
    rng = np.random.default_rng(seed)
    policy, ref = random_policy(mdp, rng), random_policy(mdp, rng, 0.5)
    group_size = options.get("group_size", 4)
    kw = dict(ref_policy=ref, beta=0.7, **{**options, "group_size": group_size})
    exact = expected_update(mdp, policy, **kw)
    assert exact.method in ("closed form", "enumeration")
    sampled = grpo(mdp, policy, iterations=1, alpha=1.0, runs=DRAWS, seed=seed, **kw)
    steps = (sampled.logits - policy.logits).reshape(DRAWS, -1)
    V = np.column_stack([exact.direction.ravel(), rng.normal(size=(steps.shape[1], 4))])
    X = steps @ V
    mean, se = X.mean(axis=0), X.std(axis=0, ddof=1) / np.sqrt(DRAWS)
    target = exact.direction.ravel() @ V
    rounding = 1e-9 * (1.0 + np.abs(V).sum(axis=0) * np.abs(exact.direction).max())
    assert np.all(np.abs(mean - target) <= 5.0 * se + rounding), (mean - target) / se


@property_settings(max_examples=10)
@given(env=token_mdps(max_prompts=3, max_words=3), seed=st.integers(0, 2**31 - 1),
       beta=st.sampled_from([0.1, 1.0, 5.0]))
def test_k1_in_the_reward_with_rloo_is_the_exact_gradient(env, seed, beta):
    """RLOO's baseline leaves the score-function estimator unbiased, and k1 in the reward
    makes it the gradient of ``E[r] - beta KL`` (the KL's own ``grad log pi`` term has
    mean 0): the expected update is the gradient, to 1e-10."""
    mdp = env.to_mdp()
    rng = np.random.default_rng(seed)
    policy, ref = random_policy(mdp, rng), random_policy(mdp, rng)
    u = expected_update(mdp, policy, ref_policy=ref, beta=beta, advantage="rloo",
                        kl_estimator="k1", kl_placement="reward")
    assert np.abs(u.direction - u.gradient).max() <= 1e-10 * (1 + np.abs(u.gradient).max())
    assert u.relative_error < 1e-10


def test_the_exact_gradient_is_the_objectives_derivative():
    """Central differences of ``kl_objective`` along random directions of the logits."""
    env = TokenMDP(("x", "y"), {"x": 1.0, "y x": 0.4, "x y": -0.3}, vocab=("x", "y"),
                   max_len=2, prompt_probs=(0.3, 0.7))
    mdp = env.to_mdp()
    rng = np.random.default_rng(1)
    policy, ref = random_policy(mdp, rng), random_policy(mdp, rng)
    g = expected_update(mdp, policy, ref_policy=ref, beta=0.8).gradient
    for _ in range(3):
        v = rng.normal(size=g.shape)
        h = 1e-5
        up = kl_objective(mdp, SoftmaxPolicy(policy.logits + h * v, policy.row_of_state), ref,
                          0.8)
        down = kl_objective(mdp, SoftmaxPolicy(policy.logits - h * v, policy.row_of_state),
                            ref, 0.8)
        # central differences: error O(h^2 |J'''|) + rounding O(eps |J| / h)
        assert (up - down) / (2 * h) == pytest.approx(np.sum(g * v), abs=1e-8)


def test_sequence_and_token_ratios_agree_on_one_token_responses():
    """GSPO's ``(pi(y)/pi_old(y))^(1/|y|)`` is the token ratio when ``|y| = 1``: every
    epoch after the first takes the same step at both levels."""
    env = TokenMDP(("x",), {"x": 1.0, "y": 0.2}, vocab=("x", "y"), max_len=1)
    kw = dict(iterations=30, alpha=2.0, num_iterations=4, epsilon=0.1, seed=5)
    token = grpo(env.to_mdp(), importance_sampling_level="token", **kw)
    sequence = grpo(env.to_mdp(), importance_sampling_level="sequence", **kw)
    np.testing.assert_allclose(token.logits, sequence.logits, rtol=0, atol=1e-12)
    assert token.clip_ratio_high.max() > 0  # the later epochs reach the clip
    np.testing.assert_array_equal(token.clip_ratio_high, sequence.clip_ratio_high)
