"""KTO against its optimum on the prefix tree: the trained policy lands where the gradient
with the reference point held constant vanishes (tabular.rlhf.kto_optimum)."""

import numpy as np
import pytest

from tabular import SoftmaxPolicy
from tabular.envs import load_scenario
from tabular.envs.token import TokenMDP
from tabular.rlhf import (
    ending_probabilities,
    kto,
    kto_optimum,
    response_distribution,
    response_path,
    train_pipeline,
)
from tabular.rlhf.reward_model import sigmoid


def labelled(env, ref, p_desirable, total=1000.0):
    """The expected labels of ``total`` responses drawn from ``ref``: response ``y`` to
    ``x`` is desirable with probability ``p_desirable(x, y)``."""
    feedback = []
    for (x, y), mass in response_distribution(env, ref).items():
        p = p_desirable(x, y)
        feedback += [(total * mass * p, x, y, True), (total * mass * (1 - p), x, y, False)]
    return [f for f in feedback if f[0] > 0]


def tv(a, b):
    return 0.5 * np.abs(a - b).sum()


@pytest.fixture(scope="module")
def ex():
    return train_pipeline(load_scenario())


@pytest.mark.parametrize("beta, alpha", [(0.3, 5.0), (0.7, 2.0)])
def test_kto_reaches_its_optimum_on_the_running_example(ex, beta, alpha):
    """Labels drawn as a labeller would give them (desirable with probability
    sigma(2 r_gold)): KTO keeps the two correct replies, in the proportions of the fixed
    point (total variation under 5e-3 in every run after 4,000 steps; measured 6e-4 to
    1e-3 at beta 0.3, 1e-3 to 4e-3 at 0.7), and its sampled reference point settles
    at the optimum's KL."""
    gold = dict(zip(ex.scenario.replies, ex.scenario.gold, strict=True))
    feedback = labelled(ex.gold_env, ex.reference, lambda x, y: sigmoid(2 * gold[y]))
    opt = kto_optimum(ex.gold_env, ex.reference, feedback, beta=beta)
    kept = {y for y in ex.scenario.replies
            if opt.endings[_ending(ex.gold_env, ex.scenario.prompt, y)] > 1e-12}
    assert kept == {"Paris.", "The capital of France is Paris."}
    res = kto(ex.gold_env, ex.reference, feedback, beta=beta, steps=4000, alpha=alpha,
              kl_samples=16, runs=4)
    for i in range(4):
        assert tv(ending_probabilities(ex.gold_mdp, res.run(i).policy), opt.endings) < 5e-3
    assert res.reference_point[:, -500:].mean() == pytest.approx(opt.reference_point,
                                                                  abs=0.02)
    assert res.loss[:, -1].max() < res.loss[:, 0].min()


def random_feedback_mdp(seed):
    """Every response over {a, b} up to 3 tokens to two prompts, a random reference, and
    random label counts: to prompt "a" about half the responses lean desirable, to "b"
    three of the fifteen. ``lambda_u`` balances the labels as the paper advises,
    ``lambda_D n_D / (lambda_U n_U) >= 4/3`` for each prompt."""
    rng = np.random.default_rng(seed)
    env = TokenMDP(["a", "b"], {}, vocab=["a", "b"], max_len=3,
                   prompt_probs=rng.dirichlet(np.ones(2)))
    ref = SoftmaxPolicy(rng.normal(size=(env.n_states, len(env.vocab))), np.arange(env.n_states))
    responses = list(response_distribution(env, ref))
    to_b = [i for i, (x, _) in enumerate(responses) if x == "b"]
    chosen = {responses[i] for i in rng.choice(to_b, 3, replace=False)}
    feedback = []
    for x, y in responses:
        good, bad = rng.uniform(0.5, 3.0, size=2)
        if x == "b":
            good, bad = (max(good, bad), min(good, bad)) if (x, y) in chosen else (
                min(good, bad) / 2, max(good, bad))
        feedback += [(good, x, y, True), (bad, x, y, False)]
    lambda_u = 0.75 * min(sum(c for c, x, _, good in feedback if x == p and good)
                          / sum(c for c, x, _, good in feedback if x == p and not good)
                          for p in env.prompts)
    return env, ref, feedback, lambda_u


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_optimum_is_a_stationary_point_and_kto_reaches_it(seed):
    """At kto_optimum every kept response has g_y = d_y s(u_y) proportional to pi(y|x)
    (the gradient with z0 held constant vanishes), the others have no mass, z0 is the
    exact KL; KTO trained from the reference ends there (total variation under 0.05
    after 6,000 steps; measured 0.005 to 0.028, still shrinking: the responses driven
    out decay like a power of the step count)."""
    env, ref, feedback, lambda_u = random_feedback_mdp(seed)
    beta = 0.5
    opt = kto_optimum(env, ref, feedback, beta=beta, lambda_u=lambda_u)
    mdp = env.to_mdp()
    ref_ends = ending_probabilities(mdp, ref)
    gaps = {}
    for c, x, y, good in feedback:
        gaps[(x, y)] = gaps.get((x, y), 0.0) + (c if good else -lambda_u * c)
    kl = 0.0
    for prompt in env.prompts:
        p_x = mdp.start[env.state_of(prompt)]
        g, pi = [], []
        for (x, y), d in gaps.items():
            if x != prompt:
                continue
            pi_y = opt.endings[_ending(env, x, y)] / p_x
            assert (pi_y > 0.0) == (d > 0.0)
            if d <= 0.0:
                continue
            log_ratio = np.log(pi_y / (ref_ends[_ending(env, x, y)] / p_x))
            kl += p_x * pi_y * log_ratio
            u = beta * (log_ratio - opt.reference_point)
            g.append(d * sigmoid(u) * sigmoid(-u))
            pi.append(pi_y)
        g, pi = np.array(g), np.array(pi)
        assert pi.sum() == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(g, pi * g.sum(), rtol=1e-9)
    assert kl == pytest.approx(opt.reference_point, abs=1e-10)
    res = kto(env, ref, feedback, beta=beta, lambda_u=lambda_u, steps=6000, alpha=5.0,
              kl_samples=32, seed=seed)
    assert tv(ending_probabilities(mdp, res.policy), opt.endings) < 0.05
    assert res.reference_point[-100:].mean() == pytest.approx(opt.reference_point, abs=0.15)


def test_kto_optimum_refuses_a_prompt_whose_responses_all_lean_undesirable():
    env, ref, feedback, _ = random_feedback_mdp(0)
    only_bad_b = [(c, x, y, good) for c, x, y, good in feedback if x == "a" or not good]
    with pytest.raises(ValueError, match="no response to prompt 'b'"):
        kto_optimum(env, ref, only_bad_b, beta=0.5)


def _ending(env, x, y):
    """The (state, token) that ends response ``y`` to ``x``."""
    s, a = response_path(env, x, y)
    return s[-1], a[-1]


def test_kto_runs_are_reproducible_and_independent(ex):
    feedback = [(3, ex.scenario.prompt, "Paris.", True),
                (2, ex.scenario.prompt, "What about Spain?", False)]
    a = kto(ex.gold_env, ex.reference, feedback, beta=0.5, steps=50, runs=3, seed=7)
    b = kto(ex.gold_env, ex.reference, feedback, beta=0.5, steps=50, runs=3, seed=7)
    one = kto(ex.gold_env, ex.reference, feedback, beta=0.5, steps=50, seed=7)
    np.testing.assert_array_equal(a.logits, b.logits)
    np.testing.assert_array_equal(a.run(0).logits, one.logits)
    assert not np.array_equal(a.run(0).reference_point, a.run(1).reference_point)
    assert one.loss.shape == one.reference_point.shape == (50,)
    assert (one.reference_point >= 0).all()
