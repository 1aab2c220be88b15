"""Linear TD(lambda) (tabular/linear/learners.py, Sutton & Barto chapter 12), against its
exact answers.

- One-hot features make semi_gradient_td_lambda the tabular td_lambda (accumulating
  trace) and true_online_linear_td_lambda the tabular true_online_td_lambda, bit for
  bit after every episode, for lambda in {0, 0.5, 0.9, 1}, several seeds, runs > 1: the
  same draws in the same order and the same arithmetic (the dutch trace is written so
  that a one-hot x gives the tabular (1 - alpha) z + 1, tabular/rules/linear.py).
- lambda = 0 is semi_gradient_td (n = 1), bit for bit, on random MDPs with random
  features (hypothesis): z = 0 * z + x = x, and the TD error is the same expression.
- With a step so small that the weights barely move, each episode's update of
  TD(lambda) is the offline lambda-return algorithm's (the forward view, eq. 12.4),
  within a first-order bound computed from the episode.
- True online TD(lambda) is the online lambda-return algorithm (section 12.4) written
  out naively on the replayed episodes, with random dense features: the identity of
  section 12.5, to rounding, for any features.
- The expected update vanishes at the exact TD(lambda) fixed point (td_fixed_point with
  the same lam; lam = 1: the VE minimiser): started there with a step so small that
  the weights do not move, the mean over independent runs of each run's summed update
  is 0 within 5 standard errors, and clearly not 0 at weights 0.03 away. As alpha -> 0
  true online TD(lambda) makes the same updates, so it shares the fixed point.
- With a small constant step from TD(0)'s fixed point, the weights averaged over the second half of
  each run's episodes, then over runs, sit at the TD(lambda) fixed point of their own
  lambda within 5 standard errors (of the per-run averages, which are independent),
  and not at TD(0)'s.
"""

import functools

import gymnasium as gym
import numpy as np
import pytest
from conftest import (
    WALK,
    WALK_GROUPS,
    WALK_POLICY,
    linear_online_lambda_return,
    mean_update_z,
    on_one_and_two_threads,
    random_walk,
    replay_episodes,
    slow_examples,
    truncated_lambda_return,
)
from hypothesis import given
from hypothesis import strategies as st

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import TabularMDP, td_lambda, true_online_td_lambda
from tabular.linear import (
    one_hot,
    reward_process,
    semi_gradient_td,
    semi_gradient_td_lambda,
    state_aggregation,
    td_fixed_point,
    true_online_linear_td_lambda,
    ve_minimiser,
)
from tabular.testing import gammas, mdps, policies

LAMS = [0.0, 0.5, 0.9, 1.0]


# ------------------------------------------------------------------ one-hot is tabular


@pytest.mark.parametrize("env_id", ["tabzoo/RandomWalk-v0", "tabzoo/Gridworld4x4-v0"])
@pytest.mark.parametrize("lam", LAMS)
@pytest.mark.parametrize("seed", [0, 7])
def test_one_hot_is_tabular_td_lambda_bit_for_bit(env_id, lam, seed):
    mdp = TabularMDP.from_gymnasium(gym.make(env_id))
    pi = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    X = one_hot(mdp.n_states)
    kw = {"lam": lam, "alpha": 0.1, "episodes": 30, "runs": 3, "seed": seed, "history": True}
    for linear, tabular_learner in ((semi_gradient_td_lambda, td_lambda),
                                    (true_online_linear_td_lambda, true_online_td_lambda)):
        got, expected = linear(mdp, pi, X, **kw), tabular_learner(mdp, pi, **kw)
        np.testing.assert_array_equal(got.w_history, expected.V_history,
                                      err_msg=linear.__name__)
        np.testing.assert_array_equal(got.V, expected.V)
        np.testing.assert_array_equal(got.episode_lengths, expected.episode_lengths)
        np.testing.assert_array_equal(got.episode_returns, expected.episode_returns)


def test_run_i_is_the_same_whatever_the_number_of_runs_and_threads():
    for learner in (semi_gradient_td_lambda, true_online_linear_td_lambda):
        many = learner(WALK, WALK_POLICY, WALK_GROUPS, episodes=20, runs=4, seed=3)
        one = learner(WALK, WALK_POLICY, WALK_GROUPS, episodes=20, runs=2, seed=3)
        single = learner(WALK, WALK_POLICY, WALK_GROUPS, episodes=20, seed=3)
        np.testing.assert_array_equal(many.w[:2], one.w)
        np.testing.assert_array_equal(many.w[0], single.w)
        one_thread, two_threads = on_one_and_two_threads(
            lambda learner=learner: learner(WALK, WALK_POLICY, WALK_GROUPS, episodes=20,
                                            runs=4, seed=3))
        np.testing.assert_array_equal(one_thread.w, many.w)
        np.testing.assert_array_equal(two_threads.w, many.w)


# ------------------------------------------------------------------ identities


@st.composite
def linear_cases(draw):
    """``(mdp, policy, X, gamma, lam, alpha, seed)``: a random MDP and policy, dense
    random features with rows of norm at most 1 (so that ``alpha <= 1`` keeps the
    steps bounded), a discount, a trace decay and a step size."""
    mdp = draw(mdps(max_states=6, max_actions=3, max_outcomes=3))
    policy = draw(policies(mdp))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.normal(size=(mdp.n_states, draw(st.integers(1, 4))))
    X /= np.linalg.norm(X, axis=1).max()
    lam = draw(st.sampled_from(LAMS) | st.floats(0.0, 1.0))
    alpha = draw(st.sampled_from([0.1, 0.5]) | st.floats(0.01, 0.5))
    return mdp, policy, X, draw(gammas()), lam, alpha, draw(st.integers(0, 2**16))


@slow_examples(25)
@given(linear_cases())
def test_lambda_0_is_semi_gradient_td_bit_for_bit(case):
    mdp, policy, X, gamma, _, alpha, seed = case
    kw = {"gamma": gamma, "alpha": alpha, "episodes": 20, "max_steps": 15, "seed": seed,
          "runs": 2}
    got = semi_gradient_td_lambda(mdp, policy, X, lam=0.0, **kw)
    expected = semi_gradient_td(mdp, policy, X, **kw)
    np.testing.assert_array_equal(got.w, expected.w)
    np.testing.assert_array_equal(got.episode_lengths, expected.episode_lengths)


@slow_examples(25)
@given(linear_cases())
def test_true_online_is_the_online_lambda_return_for_any_features(case):
    """Section 12.5: with linear features true online TD(lambda) computes the online
    lambda-return algorithm's weights exactly (van Seijen et al. 2016), so after every
    episode of random MDPs with cycles and cut episodes they agree to rounding."""
    mdp, policy, X, gamma, lam, alpha, seed = case
    episodes, max_steps = 4, 12
    got = true_online_linear_td_lambda(mdp, policy, X, lam=lam, gamma=gamma, alpha=alpha,
                                       episodes=episodes, max_steps=max_steps,
                                       initial_w=0.3, seed=seed, history=True)
    w = np.full(X.shape[1], 0.3)
    for i, episode in enumerate(replay_episodes(mdp, policy, seed, episodes, max_steps)):
        w = linear_online_lambda_return(w, X, episode, gamma, lam, alpha)
        np.testing.assert_allclose(got.w_history[i], w, rtol=1e-10, atol=1e-10)


def offline_lambda_return_update(w, X, episode, gamma, lam):
    """The summed update of the offline lambda-return algorithm (eq. 12.4) at fixed
    ``w``, ``sum_t [G^lam_{t:T} - w . x_t] x_t`` (eq. 12.9's truncated return where
    the episode was cut), and the first-order bound on how far TD(lambda)'s summed
    update per unit step, ``sum_t delta_t(w_t) z_t``, can be from it: ``w_t - w``
    is at most ``alpha sum_{j<t} |delta_j| ||z_j||`` and moves ``delta_t`` by at most
    ``(gamma ||x_{t+1}|| + ||x_t||)`` times that."""
    states, rewards, terminated = episode
    T = len(rewards)
    update = np.zeros_like(w)
    z = np.zeros_like(w)
    moved, bound = 0.0, 0.0
    for t in range(T):
        x = X[states[t]]
        G = truncated_lambda_return(states, rewards, terminated, t, T, gamma, lam,
                                    lambda k: w @ X[states[k]])
        update += (G - w @ x) * x
        ends = terminated and t == T - 1
        delta = rewards[t] + (0.0 if ends else gamma * w @ X[states[t + 1]]) - w @ x
        z = gamma * lam * z + x
        bound += (gamma * np.linalg.norm(X[states[t + 1]]) + np.linalg.norm(x)) \
            * np.linalg.norm(z) * moved
        moved += abs(delta) * np.linalg.norm(z)
    return update, bound


@slow_examples(25)
@given(linear_cases())
def test_small_alpha_is_the_offline_lambda_return(case):
    """Section 12.2: with the weights held, TD(lambda)'s summed updates over an episode
    are the offline lambda-return algorithm's; with alpha = 1e-6 the learner's move
    per unit step after each episode is that, within twice the first-order bound
    (the higher orders are alpha times smaller) plus the rounding of ``(w' - w) /
    alpha`` (``1e-16 / alpha`` per unit of ``w``, per step)."""
    mdp, policy, X, gamma, lam, _, seed = case
    alpha, episodes, max_steps = 1e-6, 3, 12
    got = semi_gradient_td_lambda(mdp, policy, X, lam=lam, gamma=gamma, alpha=alpha,
                                  episodes=episodes, max_steps=max_steps, initial_w=0.3,
                                  seed=seed, history=True)
    before = np.full(X.shape[1], 0.3)
    for i, episode in enumerate(replay_episodes(mdp, policy, seed, episodes, max_steps)):
        update, bound = offline_lambda_return_update(before, X, episode, gamma, lam)
        after = got.w_history[i]
        rounding = len(episode[1]) * 1e-16 * (1.0 + np.abs(before).max()) / alpha
        assert np.abs((after - before) / alpha - update).max() <= 2 * alpha * bound + rounding
        before = after


# ------------------------------------------------------------------ sampled vs exact


@pytest.fixture(scope="module")
def walk_process():
    return reward_process(WALK, WALK_POLICY, gamma=1.0)


@pytest.mark.parametrize("learner, lam", [(semi_gradient_td_lambda, 0.5),
                                          (semi_gradient_td_lambda, 1.0),
                                          (true_online_linear_td_lambda, 0.5)])
def test_the_expected_update_vanishes_at_the_td_lambda_fixed_point(walk_process, learner,
                                                                   lam):
    w_star = td_fixed_point(walk_process, WALK_GROUPS, lam=lam)
    if lam == 1.0:
        np.testing.assert_allclose(w_star, ve_minimiser(walk_process, WALK_GROUPS),
                                   rtol=0.0, atol=1e-9)
    learn = functools.partial(learner, lam=lam)
    assert np.abs(mean_update_z(learn, w_star)).max() < 5.0
    assert np.abs(mean_update_z(learn, w_star + 0.03)).max() > 5.0


WALK19 = random_walk()  # Example 7.1's 19 states, rewards -1 / +1, and the two ends
WALK19_GROUPS = state_aggregation(np.r_[0, np.arange(19) // 4, 4])


@pytest.mark.parametrize("learner, lam", [(semi_gradient_td_lambda, 0.9),
                                          (true_online_linear_td_lambda, 0.5)])
def test_small_step_weights_average_to_the_td_lambda_fixed_point(learner, lam):
    """From TD(0)'s fixed point, alpha = 0.001, 20 runs of 10,000 episodes; each run's
    mean weights over its last 5000 episodes are one independent draw. The transient
    decays by about exp(-0.0015) per episode at lam = 0.5 (faster at 0.9), to under
    0.1 standard error by episode 5000. A constant step's bias is O(alpha): measured
    with 200 runs, 0.0046 at alpha = 0.002 and 0.0023 at 0.001, under one standard
    error of 20 runs (0.0027)."""
    policy = np.zeros(WALK19.n_states, dtype=np.int64)
    process = reward_process(WALK19, policy, gamma=1.0)
    w_td0 = td_fixed_point(process, WALK19_GROUPS)
    result = learner(WALK19, policy, WALK19_GROUPS, lam=lam, alpha=0.001, episodes=10_000,
                     runs=20, initial_w=w_td0, seed=5, history=True)
    per_run = result.w_history[:, 5000:].mean(axis=1)
    mean, se = per_run.mean(axis=0), per_run.std(axis=0, ddof=1) / np.sqrt(per_run.shape[0])
    w_lam = td_fixed_point(process, WALK19_GROUPS, lam=lam)
    assert np.abs((mean - w_lam) / se).max() < 5.0
    assert np.abs((mean - w_td0) / se).max() > 5.0
