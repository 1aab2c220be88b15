"""Best-of-N against sampling and against the formula it is often replaced by."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabular import SoftmaxPolicy
from tabular.envs import TokenMDP
from tabular.rlhf import ending_probabilities, path_returns, sequence_kl
from tabular.rlhf.best_of_n import best_of_n


def token_mdp(seed: int, levels: int, vocab=("a", "b", "c"), max_len: int = 2):
    """A small token MDP whose response rewards take ``levels`` distinct values (ties)."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=levels)
    rewards = {}

    def reward(prompt, response):
        return float(rewards.setdefault(response, values[rng.integers(levels)]))

    env = TokenMDP((vocab[0],), reward, vocab=vocab, max_len=max_len)
    mdp = env.to_mdp()
    logits = rng.normal(size=(mdp.n_states, mdp.n_actions))
    return mdp, SoftmaxPolicy(logits, np.arange(mdp.n_states))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**16), st.integers(1, 6), st.integers(1, 40))
def test_best_of_n_is_a_distribution_below_the_formula(seed, levels, n):
    mdp, policy = token_mdp(seed, levels)
    result = best_of_n(mdp, policy, n)
    assert result.endings.sum() == pytest.approx(1.0, abs=1e-12)
    assert result.kl <= result.kl_bound + 1e-12
    assert sequence_kl(mdp, result.policy, policy) == pytest.approx(result.kl, abs=1e-10)
    np.testing.assert_allclose(ending_probabilities(mdp, result.policy), result.endings,
                               atol=1e-12)
    if n == 1:
        np.testing.assert_allclose(result.endings, ending_probabilities(mdp, policy),
                                   atol=1e-15)


def test_sampling_agrees_with_the_exact_distribution():
    mdp, policy = token_mdp(3, levels=3)  # ties: several responses share a reward
    n, draws = 5, 200_000
    ends = ending_probabilities(mdp, policy)
    s, a = np.nonzero(ends)
    p, scores = ends[s, a], path_returns(mdp)[s, a]
    rng = np.random.default_rng(0)
    picks = rng.choice(len(p), size=(draws, n), p=p / p.sum())
    best = scores[picks].max(axis=1, keepdims=True)
    tied = scores[picks] == best
    choice = np.argmax(tied * rng.random((draws, n)), axis=1)  # uniform among tied draws
    counts = np.bincount(picks[np.arange(draws), choice], minlength=len(p))
    exact = best_of_n(mdp, policy, n).endings[s, a]
    sd = np.sqrt(exact * (1 - exact) / draws)
    assert np.all(np.abs(counts / draws - exact) <= 5 * sd + 1e-12)


def test_the_formula_is_the_limit_of_many_small_distinct_responses():
    vocab = tuple(f"w{i}" for i in range(40))
    env = TokenMDP(("w0",), lambda x, y: float(zlib.crc32(y.encode())), vocab=vocab, max_len=2)
    mdp = env.to_mdp()
    uniform = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    result = best_of_n(mdp, uniform, 4)
    assert result.kl < result.kl_bound
    assert result.kl == pytest.approx(result.kl_bound, rel=0.02)


def test_a_larger_n_concentrates_on_the_best_responses():
    mdp, policy = token_mdp(1, levels=4)
    rewards = [best_of_n(mdp, policy, n).reward for n in (1, 2, 8, 64, 1024)]
    assert all(later > earlier for earlier, later in zip(rewards, rewards[1:], strict=False))
    top = path_returns(mdp)[ending_probabilities(mdp, policy) > 0].max()
    assert rewards[-1] == pytest.approx(top, abs=1e-6)
