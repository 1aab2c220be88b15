"""The token MDP: its prefix tree, its model, and its Gymnasium behaviour."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

from tabular.envs import ModelEnv, load_scenario
from tabular.envs.scenarios import capital_of_france
from tabular.envs.token import TokenMDP
from tabular.rlhf.lm import detokenize, tokenize


def count_reward(prompt, response):
    """A reward that depends on both strings: the number of tokens times the prompt length."""
    return len(tokenize(response)) * len(prompt) / 10.0


@st.composite
def token_mdps_and_grammars(draw):
    words = ["a", "b", "c"][: draw(st.integers(1, 3))]
    prompts = draw(st.lists(st.lists(st.sampled_from(words), max_size=2).map(" ".join),
                            min_size=1, max_size=3, unique=True))
    grammar = None
    if draw(st.booleans()):
        grammar = draw(st.lists(st.lists(st.sampled_from(words), min_size=1, max_size=4)
                                .map(" ".join), min_size=1, max_size=4))
    env = TokenMDP(prompts, count_reward, vocab=words, max_len=draw(st.integers(1, 4)),
                   grammar=grammar, illegal_reward=-2.0)
    return env, grammar


@settings(max_examples=30, deadline=None)
@given(token_mdps_and_grammars(), st.integers(0, 2**32 - 1))
def test_random_steps_agree_with_the_model_and_the_text_rules(env_and_grammar, seed):
    """The env steps from its own model (to_mdp() is the very object it samples), and
    each random step obeys the rules written on text: a token that keeps the response a
    prefix of a grammar reply (plus eos) appends itself, a finished response (eos or
    max_len) pays reward(prompt, response), any other token ends the episode in place
    with illegal_reward."""
    env, grammar = env_and_grammar
    assert isinstance(env, ModelEnv) and env.to_mdp() is env.to_mdp()
    mdp = env.to_mdp()
    replies = None if grammar is None else [tokenize(y) + ["<eos>"] for y in grammar]
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    prompt, tokens = info["prompt"], []
    for _ in range(4 * env.max_len):
        a = int(rng.integers(env.action_space.n))
        s = obs
        obs, r, terminated, truncated, info = env.step(a)
        assert (obs, r, terminated) == (mdp.next_state[s, a, 0], mdp.reward[s, a, 0],
                                        mdp.done[s, a, 0])
        assert not truncated
        grown = [*tokens, env.vocab[a]]
        if replies is None or any(y[:len(grown)] == grown for y in replies):
            tokens = grown
            ended = tokens[-1] == "<eos>" or len(tokens) == env.max_len
            text = detokenize([t for t in tokens if t != "<eos>"])
            assert r == (count_reward(prompt, text) if ended else 0.0)
            assert terminated == ended and info["response"] == text
            assert info["tokens"] == tuple(tokens)
        else:
            assert (obs, r, terminated) == (s, -2.0, True)
            assert info["tokens"] == tuple(tokens)
        assert info["prompt"] == prompt
        if terminated:
            obs, info = env.reset()
            prompt, tokens = info["prompt"], []


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3), st.integers(1, 4), st.integers(1, 3))
def test_tree_size_without_grammar_is_the_closed_form(extra, L, P):
    """Open prefixes (no eos, shorter than L) plus finished ones, per prompt."""
    prompts = [f"p{i}" for i in range(P)]
    env = TokenMDP(prompts, count_reward, vocab=prompts + [f"w{i}" for i in range(extra)],
                   max_len=L)
    A = P + extra + 1
    open_prefixes = sum((A - 1) ** k for k in range(L))
    finished = sum((A - 1) ** k for k in range(L - 1)) + A * (A - 1) ** (L - 1)
    assert env.n_states == P * (open_prefixes + finished)
    assert env.terminal.sum() == P * finished


def test_too_large_a_tree_is_refused_before_it_is_built():
    with pytest.raises(ValueError, match=r"max_states=1000.*max_len \(=10\)"):
        TokenMDP(["x"], count_reward, vocab=[f"w{i}" for i in range(50)] + ["x"], max_len=10,
                 max_states=1000)


def test_episode_ends_at_eos_or_max_len_with_the_reward_on_the_last_token():
    env = TokenMDP(["Say hi."], lambda x, y: {"hi": 1.0, "hi hi": 0.5}.get(y, -0.1),
                   vocab=["Say", "hi", ".", "<eos>"], max_len=2)
    hi, eos = env.token_id["hi"], env.eos_id
    obs, _ = env.reset(seed=0)
    obs, r, term, _, info = env.step(hi)
    assert (r, term, info["response"], info["tokens"]) == (0.0, False, "hi", ("hi",))
    obs, r, term, _, info = env.step(eos)
    assert (r, term, info["response"]) == (1.0, True, "hi")
    env.reset(seed=0)
    env.step(hi)
    _, r, term, _, info = env.step(hi)  # max_len reached without eos
    assert (r, term, info["response"]) == (0.5, True, "hi hi")
    env.reset(seed=0)
    _, r, term, _, _ = env.step(eos)  # the empty response
    assert (r, term) == (-0.1, True)


def test_forbidden_tokens_end_the_episode_in_place_with_the_illegal_reward():
    env = TokenMDP(["Q"], {"yes": 1.0}, vocab=["Q", "yes", "no"], max_len=3, grammar=["yes"],
                   illegal_reward=-5.0)
    obs, info = env.reset(seed=0)
    assert info["legal"].tolist() == [False, True, False, False]
    obs2, r, term, _, info = env.step(env.token_id["no"])
    assert (obs2, r, term, info["response"]) == (obs, -5.0, True, "")
    mdp = env.to_mdp()
    # root, "yes", "yes <eos>": the grammar's trie, nothing else
    assert env.n_states == 3 and mdp.n_actions == 4
    assert mdp.reward[env.state_of(0, "yes"), env.eos_id, 0] == 1.0


def test_render_and_info_show_the_decoded_prefix():
    env = capital_of_france(render_mode="ansi")
    env.reset(seed=0)
    for tok in tokenize("The capital of"):
        _, _, _, _, info = env.step(env.token_id[tok])
    assert info["prompt"] == "What is the capital of France?"
    assert info["response"] == "The capital of"
    assert env.render() == "User: What is the capital of France?\nAssistant: The capital of\n"
    for tok in tokenize("France is Paris."):
        env.step(env.token_id[tok])
    _, r, term, _, info = env.step(env.eos_id)
    assert term and r == 1.0 and info["response"] == "The capital of France is Paris."
    assert env.render().endswith("Paris. <eos>\n")


@pytest.mark.parametrize("env_id", ["tabzoo/TokenMDP-v0", "tabzoo/CapitalOfFrance-v0"])
def test_registered_token_envs_pass_the_gymnasium_checker(env_id):
    env = gym.make(env_id, render_mode="ansi")
    check_env(env.unwrapped, skip_render_check=False)
    mdp = env.unwrapped.to_mdp()
    assert mdp.n_states == env.observation_space.n and mdp.n_actions == env.action_space.n


def test_multi_prompt_start_distribution_and_state_ids():
    env = TokenMDP(["a", "b"], count_reward, vocab=["a", "b"], max_len=2, prompt_probs=[0.25, 0.75])
    mdp = env.to_mdp()
    assert mdp.start[:2].tolist() == [0.25, 0.75] and mdp.start[2:].sum() == 0
    for s in range(env.n_states):  # breadth-first: a prefix precedes its continuations
        for a in np.flatnonzero(~mdp.done[s, :, 0]):
            assert mdp.next_state[s, a, 0] > s
    counts = np.bincount([env.reset(seed=i)[0] for i in range(400)], minlength=2)
    assert abs(counts[1] / 400 - 0.75) < 0.07  # 3.2 standard deviations of a binomial(400)


def test_errors_name_the_culprit():
    with pytest.raises(ValueError, match="'Berlin'"):
        TokenMDP(["Q"], {}, vocab=["Q"], grammar=["Berlin"])
    with pytest.raises(ValueError, match="prompt_probs"):
        TokenMDP(["a"], {}, vocab=["a"], prompt_probs=[0.5])
    with pytest.raises(ValueError, match="grammar lists no responses for prompt 'b'"):
        TokenMDP(["a", "b"], {}, vocab=["a", "b"], grammar={"a": ["a"]})
    with pytest.raises(ValueError, match="NaN refused"):
        TokenMDP(["a"], lambda x, y: float("nan"), vocab=["a"], max_len=1)


def test_tokenizer_round_trips_the_scenario_texts():
    sc = load_scenario()
    for text in (sc.prompt, *sc.replies, *sc.corpus):
        assert detokenize(tokenize(text)) == text
    assert tokenize("Paris.") == ["Paris", "."]
