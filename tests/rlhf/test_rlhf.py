"""RLHF against the exact KL-regularised optimum: the closed form, soft value iteration,
the Bradley-Terry reward model, DPO and the policy-gradient learners."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabular import (
    SoftmaxPolicy,
    TabularMDP,
    actor_critic,
    ppo,
    reinforce,
    soft_value_iteration,
)
from tabular.envs import load_scenario
from tabular.envs.token import TokenMDP
from tabular.rlhf import (
    bradley_terry_loss,
    dpo,
    ending_probabilities,
    expected_return,
    group_relative_advantages,
    grpo,
    kl_objective,
    kl_optimum,
    response_distribution,
    sample_preferences,
    sequence_kl,
    train_reward_model,
    visit_probabilities,
)
from tabular.rlhf.pipeline import train_pipeline
from tabular.rlhf.reward_model import sigmoid

BETAS = [0.5, 1.0, 2.0]


def random_token_mdp(seed, n_prompts=2, max_len=3):
    """Every response over {a, b} up to max_len tokens, with random rewards per prompt."""
    rng = np.random.default_rng(seed)
    table = {}

    def reward(prompt, response):
        return table.setdefault((prompt, response), float(rng.normal()))

    env = TokenMDP(["a", "b", "a b"][:n_prompts], reward, vocab=["a", "b"], max_len=max_len,
                   prompt_probs=rng.dirichlet(np.ones(n_prompts)))
    ref = SoftmaxPolicy(rng.normal(size=(env.n_states, len(env.vocab))), np.arange(env.n_states))
    return env, env.to_mdp(), ref


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([0.1, 0.5, 1.0, 3.0]))
def test_closed_form_optimum_equals_soft_value_iteration(seed, beta):
    """pi*(y|x) = ref(y|x) exp(r(x, y) / beta) / Z(x) over whole responses is what soft VI
    reaches token by token, and its value is E_x[beta log Z(x)]."""
    env, mdp, ref = random_token_mdp(seed)
    opt = kl_optimum(mdp, ref, beta)
    soft = soft_value_iteration(mdp, gamma=1.0, beta=beta, ref_policy=ref)
    np.testing.assert_allclose(ending_probabilities(mdp, soft.policy), opt.endings, atol=1e-12)
    assert mdp.start @ soft.V == pytest.approx(opt.value, abs=1e-10)
    assert kl_objective(mdp, soft.policy, ref, beta) == pytest.approx(opt.value, abs=1e-10)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([0.2, 1.0, 5.0]))
def test_objective_gap_is_beta_times_kl_to_the_optimum(seed, beta):
    """J(pi*) - J(pi) = beta KL(pi || pi*) for every policy pi: the optimum is unique and the
    gap reported for the learners below is exactly beta times their KL to it."""
    env, mdp, ref = random_token_mdp(seed)
    star = soft_value_iteration(mdp, gamma=1.0, beta=beta, ref_policy=ref).policy
    pi = SoftmaxPolicy(np.random.default_rng(seed + 1).normal(size=ref.logits.shape) * 2,
                       np.arange(env.n_states))
    gap = kl_objective(mdp, star, ref, beta) - kl_objective(mdp, pi, ref, beta)
    assert gap == pytest.approx(beta * sequence_kl(mdp, pi, star), rel=1e-9, abs=1e-12)
    assert gap > 0


# ------------------------------------------------------------ Bradley-Terry
@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=4, max_size=4), st.floats(-10, 10),
       st.floats(-10, 10))
def test_bradley_terry_loss_ignores_a_per_prompt_shift(scores, c1, c2):
    """Responses 0, 1 answer prompt x1 and 2, 3 answer x2: r + c(x) has the same loss."""
    scores = np.array(scores)
    winners, losers = [0, 1, 2, 3], [1, 0, 3, 2]
    shifted = scores + np.array([c1, c1, c2, c2])
    assert bradley_terry_loss(shifted, winners, losers) == pytest.approx(
        bradley_terry_loss(scores, winners, losers), rel=1e-12, abs=1e-12)


def test_reward_model_recovers_scores_and_is_normalised_to_the_references():
    truth = np.array([1.0, -0.5, 0.3, 2.0])
    ys = ["w", "x", "y", "z"]
    prefs = [(1000 * sigmoid(truth[i] - truth[j]), "p", ys[i], ys[j])
             for i in range(4) for j in range(4) if i != j]  # the expected counts, exactly
    rm = train_reward_model(prefs, reference=[("p", "w"), ("p", "x")])
    got = np.array([rm.score("p", y) for y in ys])
    np.testing.assert_allclose(got, truth - truth[:2].mean(), atol=1e-8)
    assert rm.score("p", "never compared") == 0.0
    with pytest.raises(ValueError, match="itself"):
        train_reward_model([("p", "w", "w")])


def test_sampled_preferences_follow_the_bradley_terry_model():
    prefs = sample_preferences("p", ["u", "v"], [1.0, 0.0], 4000, seed=3)
    wins = {(w, lo): c for c, _, w, lo in prefs}
    # P(u beats v) = sigma(1) = 0.731; the binomial sd over 4000 draws is 0.007, allow 4
    assert abs(wins[("u", "v")] / 4000 - sigmoid(1.0)) < 0.028
    assert prefs == sample_preferences("p", ["u", "v"], [1.0, 0.0], 4000, seed=3)


# ----------------------------------------------------- the running example
@pytest.fixture(scope="module")
def ex():
    return train_pipeline(load_scenario())


def test_base_and_sft_models_answer_correctly_22_and_76_percent(ex):
    """Trained on the shipped corpus and demonstrations, by exact enumeration of the six
    replies: pre-training leaves the question mostly continued, SFT makes it answered."""
    base = ex.correct_rate(ex.policy(ex.base))
    tuned = ex.correct_rate(ex.reference)
    assert base == pytest.approx(0.218, abs=0.0005)
    assert tuned == pytest.approx(0.764, abs=0.0005)
    for policy in (ex.policy(ex.base), ex.reference):  # no mass outside the six replies
        assert sum(ex.answer_distribution(policy).values()) == pytest.approx(1.0, abs=1e-12)
    dist = ex.answer_distribution(ex.policy(ex.base))
    # the base model mostly continues the document (quiz list, forum thread)
    assert dist["What about Spain?"] + dist["I have the same question."] > 0.5


def test_reward_model_scores_the_flattering_reply_highest_at_2_2(ex):
    sc, rm = ex.scenario, ex.reward_model
    scores = [rm.score(sc.prompt, y) for y in sc.replies]
    assert np.argmax(scores) == 5 and scores[5] == pytest.approx(2.199, abs=0.0005)
    assert np.mean(scores) == pytest.approx(0.0, abs=1e-12)  # the normalisation
    assert sorted(sc.gold).index(sc.gold[5]) == 1  # ... while the gold reward ranks it 5th
    # the labeller triple (x, y4, y3): most labellers prefer the full sentence
    wins = {(w, lo): c for c, w, lo in sc.preferences}
    y3, y4 = sc.replies[2], sc.replies[3]
    assert wins[(y4, y3)] > wins[(y3, y4)]
    assert rm.score(sc.prompt, y4) > rm.score(sc.prompt, y3)


def test_value_of_the_prompt_under_sft_and_the_reward_model_is_0_60(ex):
    """V(x) = sum_y SFT(y|x) r(x, y), by exact policy evaluation on the prefix tree."""
    assert ex.value(ex.reference) == pytest.approx(0.6015, abs=0.00005)


def test_the_pipeline_reads_any_scenario_with_the_right_attributes():
    """train_pipeline duck-types its scenario: two replies, 9 of 10 labellers prefer "yes",
    so the Bradley-Terry fit is r(yes) - r(no) = log 9, centred on the replies; SFT on
    3:1 demonstrations moves the model towards "yes"."""
    from types import SimpleNamespace

    def env(reward=None):
        return TokenMDP(["Q"], reward or {"yes": 1.0, "no": 0.0}, vocab=["Q", "no", "yes"],
                        max_len=2, grammar=["yes", "no"])

    scenario = SimpleNamespace(prompt="Q", replies=("yes", "no"), correct=(True, False),
                               corpus=("Q no", "Q yes", "Q no"), n=2, env=env,
                               sft=((3, "yes"), (1, "no")),
                               preferences=((9, "yes", "no"), (1, "no", "yes")))
    ex = train_pipeline(scenario, pretrain_epochs=30, sft_epochs=30)
    assert ex.reward_model.score("Q", "yes") == pytest.approx(np.log(9) / 2, abs=1e-9)
    assert ex.value(ex.reference, "gold") == pytest.approx(ex.correct_rate(ex.reference))
    assert ex.correct_rate(ex.reference) > ex.correct_rate(ex.policy(ex.base))
    again = train_pipeline(scenario, pretrain_epochs=30, sft_epochs=30)
    assert np.array_equal(again.sft.logits, ex.sft.logits)  # seeded: the same models


def test_tabular_imports_neither_envs_nor_gymnasium():
    import subprocess
    import sys

    code = ("import sys, tabular, tabular.rlhf.pipeline; "
            "assert not {'envs', 'gymnasium'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_exact_sums_take_every_policy_form_and_ref_policy_by_name(ex):
    """A greedy int [S] policy, its [S, A] matrix and a SoftmaxPolicy give the same sums."""
    star = ex.optimum(1.0)
    greedy = star.argmax(axis=1)
    one_hot = np.eye(ex.mdp.n_actions)[greedy]
    with np.errstate(divide="ignore"):  # log 0 = -inf masks the tokens pi* never takes
        softmax = SoftmaxPolicy(np.log(star), np.arange(ex.mdp.n_states))
    for policy in (greedy, one_hot):
        assert sequence_kl(ex.mdp, policy, ref_policy=ex.reference) == pytest.approx(
            sequence_kl(ex.mdp, greedy, ex.reference.probs()), rel=1e-12)
    assert kl_objective(ex.mdp, softmax, ref_policy=ex.reference.probs(), beta=1.0) == (
        pytest.approx(kl_objective(ex.mdp, star, ex.reference, 1.0), rel=1e-12))
    assert kl_optimum(ex.mdp, ref_policy=softmax, beta=2.0).value == pytest.approx(
        kl_optimum(ex.mdp, star, 2.0).value, rel=1e-12)
    assert sequence_kl(ex.mdp, ex.reference, ref_policy=greedy) == np.inf


def test_reward_hacking_gold_rises_then_falls_along_the_exact_optimum(ex):
    """Gao et al. (2023): as beta shrinks, KL to SFT and the proxy rise monotonically; the
    gold reward first rises above SFT's, then falls below it."""
    betas = np.array([8.0, 4.0, 2.0, 1.0, 0.5, 0.25, 0.1])
    f = ex.frontier(betas)
    sft_gold = ex.value(ex.reference, "gold")
    assert np.all(np.diff(f.kl) > 0) and np.all(np.diff(f.proxy) > 0)
    peak = int(np.argmax(f.gold))
    assert 0 < peak < len(betas) - 1
    assert f.gold[peak] > sft_gold + 0.1
    assert f.gold[-1] < sft_gold - 0.5  # near the proxy's favourite, the flattering y6
    assert ex.answer_distribution(ex.optimum(0.1))[ex.scenario.replies[5]] > 0.9
    # the KL penalty keeps the policy near SFT: at beta = 8 the KL is below 0.01 nats
    assert f.kl[0] < 0.01


LEARNERS = {
    "reinforce": (reinforce, dict(episodes=3000, alpha=0.1, baseline=True, alpha_value=0.1)),
    "actor_critic": (actor_critic, dict(episodes=3000, alpha=0.1, alpha_value=0.2,
                                        lam=0.9)),
    "ppo": (ppo, dict(iterations=200, episodes_per_batch=16, epochs=4, alpha=0.5,
                      alpha_value=0.2, lam=0.95)),
    "grpo": (grpo, dict(iterations=1000, group_size=8, alpha=0.2)),
}


@pytest.mark.parametrize("name", list(LEARNERS))
def test_rlhf_learners_reach_the_kl_regularised_optimum(ex, name):
    """Each learner, started at SFT with the KL penalty to SFT folded into its reward,
    ends within 0.01 of the optimal objective and 0.02 nats of pi* for every beta.
    (Measured at these seeds: gaps below 3e-3 at beta = 0.5 and below 2e-5 above for
    REINFORCE, actor-critic and PPO; GRPO's normalised advantages keep it jittering at
    about 1e-3.)"""
    fn, kwargs = LEARNERS[name]
    for beta in BETAS:
        star = ex.optimum(beta)
        res = fn(ex.mdp, ex.reference, ref_policy=ex.reference, beta=beta, seed=0, **kwargs)
        gap = kl_objective(ex.mdp, star, ex.reference, beta) - kl_objective(
            ex.mdp, res.policy, ex.reference, beta)
        assert 0 <= gap < 0.01, beta
        assert sequence_kl(ex.mdp, res.policy, star) < 0.02, beta


def test_learners_follow_the_gold_curve(ex):
    """PPO at the gold peak beats SFT on the gold reward; with a weak penalty it hacks.

    Margins, measured over seeds 0-5 at these settings: the gold reward within 0.02 of
    the exact curve; KL within 1e-12 at beta = 2 but short by up to 0.071 nats (3%) at
    beta = 0.1, where y6 already holds 98% of the mass and the last nats come slowly.
    """
    sft_gold = ex.value(ex.reference, "gold")
    fn, kwargs = LEARNERS["ppo"]
    betas = [2.0, 0.1]
    followed = ex.learner_frontier(fn, betas, seed=1, **kwargs)
    exact = ex.frontier(betas)
    assert followed.gold[0] > sft_gold > followed.gold[1]
    np.testing.assert_allclose(followed.gold, exact.gold, atol=0.05)
    np.testing.assert_allclose(followed.kl, exact.kl, atol=0.1)


@pytest.mark.parametrize("beta", BETAS)
def test_dpo_on_bradley_terry_preferences_reaches_the_same_optimum(ex, beta):
    """DPO's implicit reward is the Bradley-Terry fit, so on comparisons drawn from a BT
    model of the reward model's scores it lands on pi*_beta of those scores: exactly with
    the expected counts, within sampling error with 20,000 simulated labellers."""
    sc = ex.scenario
    r = np.array([ex.reward_model.score(sc.prompt, y) for y in sc.replies])
    star = ex.optimum(beta)
    expected = [(100 * sigmoid(r[i] - r[j]), sc.prompt, sc.replies[i], sc.replies[j])
                for i in range(6) for j in range(6) if i != j]
    res = dpo(ex.env, ex.reference, expected, beta=beta)
    assert sequence_kl(ex.mdp, res.policy, star) < 1e-6
    sampled = sample_preferences(sc.prompt, sc.replies, r, 20_000, seed=1)
    res = dpo(ex.env, ex.reference, sampled, beta=beta)
    # measured 1.1e-3, 2.9e-4, 8.7e-5 at beta 0.5, 1, 2: the score error of ~1300
    # comparisons per pair (about 0.06) divided by beta, squared
    assert sequence_kl(ex.mdp, res.policy, star) < 0.01
    assert res.loss[-1] < res.loss[0]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=2, max_size=8))
def test_group_relative_advantages_are_centred_and_scaled(returns):
    returns = np.array(returns)
    out = group_relative_advantages(returns, normalise=False)
    np.testing.assert_allclose(out, returns - returns.mean(), atol=1e-9)
    out = group_relative_advantages(returns)
    assert abs(out.mean()) < 1e-9
    if returns.std() > 1e-12 * (1.0 + abs(returns.mean())):
        assert out.std() == pytest.approx(1.0, rel=1e-6)
    else:  # a group that agrees (to rounding) is left centred: no division by ~0
        np.testing.assert_allclose(out, returns - returns.mean(), atol=1e-9)


def test_exact_sums_on_the_prefix_tree(ex):
    """Expected return by enumeration equals the reply-weighted average of scores."""
    dist = ex.answer_distribution(ex.reference)
    rm = ex.reward_model
    assert expected_return(ex.mdp, ex.reference) == pytest.approx(
        sum(p * rm.score(ex.scenario.prompt, y) for y, p in dist.items()), abs=1e-12)
    assert sequence_kl(ex.mdp, ex.reference, ex.reference) == 0.0


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31))
def test_endings_of_a_softmax_policy_sum_its_logits_like_its_matrix(seed):
    """The kernel that sums a SoftmaxPolicy's response distribution straight from its
    logits (rows shared between states, masked tokens) agrees with the sum over its
    probability matrix, and the distribution sums to 1."""
    env, mdp, _ = random_token_mdp(seed, n_prompts=3)
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(5, len(env.vocab))) * 3
    logits[rng.random(logits.shape) < 0.2] = -np.inf
    logits[:, 0] = np.where(np.isinf(logits).all(axis=1), 0.0, logits[:, 0])
    policy = SoftmaxPolicy(logits, rng.integers(0, 5, size=env.n_states))
    ends = ending_probabilities(mdp, policy)
    np.testing.assert_allclose(ends, ending_probabilities(mdp, policy.probs()), rtol=1e-13,
                               atol=1e-16)
    assert ends.sum() == pytest.approx(1.0, abs=1e-12)


def test_exact_sums_refuse_a_state_reached_by_two_paths():
    """Sums pushed down a tree level by level need one path to each state: two
    transitions into state 3 are an error that names it; so is a step back to an earlier
    state, also where a softmax policy's responses are summed from its logits."""
    P = {0: {0: [(1.0, 1, 0.0, False)], 1: [(1.0, 2, 0.0, False)]},
         1: {0: [(1.0, 3, 0.0, False)], 1: [(1.0, 1, 0.0, True)]},
         2: {0: [(1.0, 3, 0.0, False)], 1: [(1.0, 2, 0.0, True)]},
         3: {0: [(1.0, 3, 1.0, True)], 1: [(1.0, 3, 0.0, True)]}}
    dag = TabularMDP.from_transitions(P, start=[1.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="state 3 is reached by 2 transitions"):
        visit_probabilities(dag, np.full((4, 2), 0.5))
    back = TabularMDP.from_transitions({**P, 2: {0: [(1.0, 1, 0.0, False)],
                                                 1: [(1.0, 2, 0.0, True)]}},
                                       start=[1.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="leads back to an earlier state"):
        ending_probabilities(back, SoftmaxPolicy.tabular(4, 2))


def test_dpo_refuses_a_response_the_policy_cannot_produce(ex):
    sc = ex.scenario
    masked = SoftmaxPolicy(ex.reference.logits.copy(), ex.reference.row_of_state)
    root = ex.env.state_of(0, "")
    masked.logits[root, ex.env.token_id["Paris"]] = -np.inf
    with pytest.raises(ValueError, match="'Paris.'.*probability 0 under policy"):
        dpo(ex.env, masked, [(sc.prompt, sc.replies[2], sc.replies[0])], beta=1.0,
            ref_policy=ex.reference)


def test_dpo_and_grpo_take_every_policy_form():
    """An [S, A] matrix (starting policy or reference) is the SoftmaxPolicy of its logs: the
    same numbers come out, and runs=None / runs=n follow numpy's size= convention."""
    env, mdp, ref = random_token_mdp(3, max_len=2)
    probs = ref.probs()
    as_logits = SoftmaxPolicy(np.log(probs), np.arange(env.n_states))
    prefs = [(3, "a", "a", "b"), (1, "b", "", "a b"), ("a", "b a", "")]
    a = dpo(env, probs, prefs, beta=0.5, ref_policy=probs, steps=50)
    b = dpo(env, as_logits, prefs, beta=0.5, ref_policy=as_logits, steps=50)
    np.testing.assert_array_equal(a.logits, b.logits)
    np.testing.assert_array_equal(a.loss, b.loss)
    np.testing.assert_array_equal(a.policy.logits, a.logits)
    assert a.loss.shape == (50,) and a.loss[-1] < a.loss[0]
    kwargs = dict(iterations=20, group_size=3, alpha=0.3, beta=0.5, seed=2)
    one = grpo(mdp, probs, ref_policy=probs, **kwargs)
    same = grpo(mdp, as_logits, ref_policy=as_logits, **kwargs)
    many = grpo(mdp, as_logits, ref_policy=as_logits, runs=2, **kwargs)
    np.testing.assert_array_equal(one.logits, same.logits)
    assert one.logits.shape == ref.logits.shape and one.episode_returns.shape == (60,)
    assert many.logits.shape == (2, *ref.logits.shape) and one.V is None and many.V is None
    np.testing.assert_array_equal(many.logits[0], one.logits)  # run 0 whatever runs is
    np.testing.assert_array_equal(one.policy.logits, one.logits)
    with pytest.raises(ValueError, match="greedy int"):
        dpo(env, np.zeros(env.n_states, dtype=int), prefs, beta=0.5)


def test_grpo_runs_are_reproducible_and_independent_of_threads(ex):
    import numba

    kwargs = dict(iterations=50, group_size=4, alpha=0.2, ref_policy=ex.reference,
                  beta=1.0, seed=3, runs=3)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = grpo(ex.mdp, ex.reference, **kwargs)
    finally:
        numba.set_num_threads(threads)
    many = grpo(ex.mdp, ex.reference, **kwargs)
    assert np.array_equal(one.logits, many.logits)
    assert np.array_equal(one.episode_returns, many.episode_returns)
    assert one.logits.shape == (3, *ex.reference.logits.shape)
    assert not np.array_equal(one.logits[0], one.logits[1])  # independent streams


def test_dpo_on_the_labellers_comparisons_lands_on_the_reward_models_optimum(ex):
    """DPO and the reward model fit the same Bradley-Terry likelihood to the same 3,000
    comparisons, so DPO's policy is pi*_beta of the trained reward model."""
    sc = ex.scenario
    prefs = [(c, sc.prompt, w, lo) for c, w, lo in sc.preferences]
    res = dpo(ex.env, ex.reference, prefs, beta=1.0)
    assert sequence_kl(ex.mdp, res.policy, ex.optimum(1.0)) < 1e-6
    assert res.loss[-1] == pytest.approx(ex.reward_model.loss, abs=1e-6)


def test_the_scenarios_trigram_rows_never_conflict(ex):
    """The six replies were written so that states sharing a trigram context allow the same
    tokens: the shared-row model and its per-prefix copy generate identical replies."""
    for lm in (ex.base, ex.sft):
        shared = ex.answer_distribution(lm.policy(ex.env))
        exact = ex.answer_distribution(lm.policy(ex.env, per_state=True))
        assert shared == pytest.approx(exact, abs=1e-12)
        assert sum(shared.values()) == pytest.approx(1.0, abs=1e-12)


def test_rlhf_trains_the_trigram_language_model_itself(ex):
    """The learners take the SFT trigram model's shared rows as they are (one code path
    with gridworlds); every branching prefix of the scenario has its own trigram, so the
    trained n-gram model reaches pi*, and its logits go back into an NGramLM."""
    lm_policy = ex.sft.policy(ex.env)
    assert lm_policy.logits.shape[0] == len(ex.sft.rows) + 1  # the model's rows, not states
    fn, kwargs = LEARNERS["ppo"]
    res = fn(ex.mdp, lm_policy, ref_policy=lm_policy, beta=1.0, seed=0, **kwargs)
    assert sequence_kl(ex.mdp, res.policy, ex.optimum(1.0)) < 0.02
    tuned = ex.sft.with_logits(res.logits)
    assert ex.answer_distribution(tuned.policy(ex.env)) == pytest.approx(
        ex.answer_distribution(res.policy), abs=1e-12)
    assert tuned.generate(ex.scenario.prompt, greedy=True) == "The capital of France is Paris."


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_ipo_regresses_a_unanimous_gap_to_one_over_two_beta(beta):
    """IPO's fixed point (Azar et al., 2024): a pair preferred every time ends with the
    log-ratio gap h = 1/(2 beta) exactly, where DPO's would grow without bound."""
    env = TokenMDP(("a",), {"a b": 1.0}, vocab=("a", "b"), max_len=2)
    mdp = env.to_mdp()
    ref = SoftmaxPolicy(np.zeros((mdp.n_states, mdp.n_actions)), np.arange(mdp.n_states))
    prefs = [(10, "a", "a b", "b a")]

    def gap(policy):
        d, d0 = response_distribution(env, policy), response_distribution(env, ref)
        return (np.log(d[("a", "a b")] / d0[("a", "a b")])
                - np.log(d[("a", "b a")] / d0[("a", "b a")]))

    ipo = dpo(env, ref, prefs, beta=beta, loss="ipo", steps=3000, alpha=0.1)
    assert gap(ipo.policy) == pytest.approx(1 / (2 * beta), abs=1e-9)
    assert ipo.loss[-1] < 1e-18
    plain = dpo(env, ref, prefs, beta=beta, steps=3000, alpha=0.1)
    assert gap(plain.policy) > 2 / beta  # DPO keeps pushing the unanimous pair apart
