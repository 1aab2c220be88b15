"""Batch updating (section 6.3) against ground truth: both methods see the same episodes,
both settle to the true values of a policy as the batch grows, and a batch that cannot
settle is a ConvergenceError, never a hang."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    ConvergenceError,
    TabularMDP,
    policy_evaluation,
)
from tabular.learn.batch_updating import batch_prediction
from tabular.testing import acyclic_mdps


def walk():
    mdp = TabularMDP.from_gymnasium(gym.make("tabzoo/RandomWalk-v0"))
    return mdp, np.ones((mdp.n_states, mdp.n_actions))


def test_both_methods_see_the_same_episodes():
    mdp, policy = walk()
    td = batch_prediction(mdp, policy, method="td0", episodes=30, runs=3, seed=5)
    mc = batch_prediction(mdp, policy, method="mc", episodes=30, runs=3, seed=5)
    assert (td.episode_lengths >= 1).all()  # the kernel wrote them
    np.testing.assert_array_equal(td.episode_lengths, mc.episode_lengths)
    np.testing.assert_array_equal(td.episode_returns, mc.episode_returns)
    assert not np.array_equal(td.V, mc.V)


@settings(max_examples=15, deadline=None)
@given(acyclic_mdps(max_states=6, max_actions=2, max_outcomes=2))
def test_a_large_batch_settles_near_the_true_values(mdp):
    policy = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    true = policy_evaluation(mdp, policy, gamma=1.0).V
    start = int(np.argmax(mdp.start))
    for method in ("td0", "mc"):
        V = batch_prediction(mdp, policy, method=method, episodes=300, alpha=0.0005,
                             tol=1e-6, seed=1).V
        scale = 1.0 + np.abs(mdp.reward).max() * mdp.n_states
        assert abs(V[start] - true[start]) < 0.15 * scale, method


def test_batch_td_is_closer_than_batch_mc_on_the_walk():
    mdp, policy = walk()
    true = policy_evaluation(mdp, policy, gamma=1.0).V[1:-1]
    errors = {m: np.sqrt(((batch_prediction(mdp, policy, method=m, episodes=50, runs=40,
                                            initial_V=0.5, seed=0).V[:, 1:-1] - true) ** 2)
                         .mean(axis=1)).mean() for m in ("td0", "mc")}
    assert errors["td0"] < errors["mc"]


def test_a_batch_that_cannot_settle_is_an_error_not_a_hang():
    mdp, policy = walk()
    with pytest.raises(ConvergenceError, match="lower alpha"):
        batch_prediction(mdp, policy, episodes=40, max_sweeps=2)
    loose = batch_prediction(mdp, policy, episodes=40, max_sweeps=2, strict=False)
    assert loose.V.shape == (mdp.n_states,) and np.isfinite(loose.V).all()


@pytest.mark.parametrize("method", ["td0", "mc"])
@pytest.mark.parametrize("strict", [True, False])
def test_a_batch_that_diverges_is_an_error_whatever_strict_says(method, strict):
    # alpha times a state's visits in the batch above 2 overshoots (MC: V += alpha n (mean - V))
    mdp, policy = walk()
    with pytest.raises(FloatingPointError, match="diverged in episode .* lower alpha"):
        batch_prediction(mdp, policy, method=method, episodes=40, alpha=1.0, strict=strict)


def test_the_default_alpha_on_the_random_walk_diverges_loudly_past_its_batch_size():
    # 0.001 times the visits of a batch of ~500 walks passes 2 (issue 28's -inf)
    mdp = TabularMDP.from_gymnasium(gym.make("tabzoo/RandomWalk-v0"))
    uniform = np.ones((mdp.n_states, 1))
    assert np.isfinite(batch_prediction(mdp, uniform, episodes=400).V).all()
    with pytest.raises(FloatingPointError, match="batch td0 diverged"):
        batch_prediction(mdp, uniform, episodes=500)


def test_history_and_runs_shapes():
    mdp, policy = walk()
    res = batch_prediction(mdp, policy, episodes=7, runs=2, history=True)
    assert res.V.shape == (2, mdp.n_states) and res.V_history.shape == (2, 7, mdp.n_states)
    np.testing.assert_array_equal(res.V_history[:, -1], res.V)
    single = batch_prediction(mdp, policy, episodes=7)
    np.testing.assert_array_equal(single.V, res.V[0])
