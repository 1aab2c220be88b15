"""The bigger token MDP (tabular.envs.load_grammar_scenario): four prompts, responses from a
grammar, a tree of 108,276 prefixes, a reward model fitted on sampled comparisons; solved
exactly, and every learner runs on it with the same code as on the running example."""

import numpy as np
import pytest

from tabular import actor_critic, ppo, reinforce, rlhf, soft_value_iteration
from tabular.envs import load_grammar_scenario
from tabular.rlhf.lm import tokenize


@pytest.fixture(scope="module")
def scenario():
    return load_grammar_scenario()


@pytest.fixture(scope="module")
def ex(scenario):
    return rlhf.train_pipeline(scenario)


def test_the_tree_is_the_set_of_prefixes_of_the_grammars_responses(scenario, ex):
    """Counted independently of the env: the distinct prefixes (eos included when the
    response ends before max_len) of the 14,952 responses, once per prompt."""
    L = scenario.max_len
    prefixes = set()
    for y in scenario.responses:
        tokens = tuple(tokenize(y))
        tokens = tokens + ("<eos>",) if len(tokens) < L else tokens
        prefixes.update(tokens[:d] for d in range(len(tokens) + 1))
    P = len(scenario.prompts)
    assert ex.gold_mdp.n_states == P * len(prefixes) == 108_276
    assert ex.gold_mdp.n_actions == len(scenario.vocab) + 1 == 58
    assert int(ex.gold_env.terminal.sum()) == P * len(scenario.responses) == 59_808
    assert max(len(tokenize(y)) for y in scenario.responses) == L == 8


def test_the_gold_reward_scores_the_entity_the_tokens_and_a_cut(scenario):
    france = scenario.prompts[0]
    assert scenario.gold(france, "Paris.") == pytest.approx(1.1)
    assert scenario.gold(france, "maybe Rome") == pytest.approx(-1.4)
    cut = "Great question! I guess the capital is"
    assert len(tokenize(cut)) == 8
    assert scenario.gold(france, cut) == pytest.approx(-0.3 - 0.3 - 0.5)


def test_the_comparisons_are_sampled_from_the_gold_reward(scenario, ex):
    """Per prompt, 3,000 comparisons among a pool of 120 responses; the reward model fitted
    on them follows the gold reward over the pool (correlation above 0.85; measured 0.89
    to 0.93) and is normalised to average 0 there."""
    for x in scenario.prompts:
        rows = [row for row in scenario.preferences if row[1] == x]
        assert sum(c for c, *_ in rows) == scenario.comparisons
        pool = sorted({y for _, _, w, lo in rows for y in (w, lo)})
        assert len(pool) <= scenario.pool
        gold = np.array([scenario.gold(x, y) for y in pool])
        fitted = np.array([ex.reward_model.score(x, y) for y in pool])
        assert np.corrcoef(gold, fitted)[0, 1] > 0.85
        assert fitted.mean() == pytest.approx(0.0, abs=1e-9)


def test_soft_value_iteration_solves_the_big_tree_exactly(ex):
    beta = 1.0
    opt = rlhf.kl_optimum(ex.mdp, ex.reference, beta)
    soft = soft_value_iteration(ex.mdp, gamma=1.0, beta=beta, ref_policy=ex.reference)
    np.testing.assert_allclose(rlhf.ending_probabilities(ex.mdp, soft.policy), opt.endings,
                               atol=1e-10)
    assert ex.mdp.start @ soft.V == pytest.approx(opt.value, abs=1e-9)


def test_every_learner_runs_on_the_big_tree_with_the_same_code(scenario, ex):
    """A smoke test at a small budget: each RL learner (iterated DPO included: it samples
    and labels with the MDP's reward) closes part of the exact gap J* - J(pi) from the
    reference (0.554 at beta = 1); DPO lowers its loss on a tenth of the comparisons, of
    every prompt; KTO moves toward its own optimum."""
    mdp, ref, env, beta = ex.mdp, ex.reference, ex.env, 1.0
    optimum = rlhf.kl_optimum(mdp, ref, beta).value

    def gap(policy):
        return optimum - rlhf.kl_objective(mdp, policy, ref, beta)

    start = gap(ref)
    prefs = list(scenario.preferences[::10])
    assert {x for _, x, _, _ in prefs} == set(scenario.prompts)
    trained = {
        "reinforce": reinforce(mdp, ref, ref_policy=ref, beta=beta, episodes=500, alpha=0.5),
        "actor_critic": actor_critic(mdp, ref, ref_policy=ref, beta=beta, episodes=500,
                                     alpha=0.5, lam=0.9),
        "ppo": ppo(mdp, ref, ref_policy=ref, beta=beta, iterations=20, episodes_per_batch=8),
        "grpo": rlhf.grpo(mdp, ref, ref_policy=ref, beta=beta, iterations=50, group_size=8),
        "iterated_dpo": rlhf.iterated_dpo(env, ref, beta=beta, rounds=2, pairs=32, steps=5),
    }
    for name, res in trained.items():
        assert gap(res.policy) < start, name
    loss = rlhf.dpo(env, ref, prefs, beta=beta, steps=30).loss
    assert loss[-1] < loss[0] == pytest.approx(np.log(2))
    feedback = ([(c, x, w, True) for c, x, w, _ in prefs]
                + [(c, x, lo, False) for c, x, _, lo in prefs])
    target = rlhf.kto_optimum(env, ref, feedback, beta=0.5).endings
    res = rlhf.kto(env, ref, feedback, beta=0.5, steps=30, alpha=2.0)

    def tv(policy):
        return 0.5 * np.abs(rlhf.ending_probabilities(mdp, policy) - target).sum()

    assert tv(res.policy) < tv(ref)
