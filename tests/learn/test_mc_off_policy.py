"""Off-policy Monte Carlo prediction (tabular/learn/mc_off_policy.py): the estimators of
eqs. 5.5 and 5.6 exactly, convergence to ``policy_evaluation`` on random episodic
MDPs and on blackjack, and Examples 5.4 and 5.5 (Figures 5.3 and 5.4).

Tolerances: returns are bounded by ``scale`` (the largest reward times the longest
episode); each test's comment gives the worst error seen in a trial over many more
draws or seeds than the test runs. Hypothesis examples are derandomised, so CI sees
the same draws every time.
"""

from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest
from conftest import on_one_and_two_threads, slow_examples
from hypothesis import given
from hypothesis import strategies as st

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    mc_prediction,
    policy_evaluation,
)
from tabular.envs.blackjack import HIT, NATURAL, STICK, blackjack_model, state_id
from tabular.learn.mc_off_policy import off_policy_mc_prediction
from tabular.testing import acyclic_mdps, random_policy

PROPERTY = slow_examples(12)
SAMPLINGS = ("ordinary", "weighted")
BLACKJACK = blackjack_model()


def stick_on_20():
    """Example 5.1's policy: stick on 20 or 21 (and on a natural), else hit."""
    policy = np.full(BLACKJACK.n_states, HIT)
    policy[[state_id(total, usable, d) for usable in (False, True) for total in (20, 21)
            for d in range(1, 11)]] = STICK
    policy[NATURAL:] = STICK
    return policy


def uniform(mdp):
    return np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)


def visits(mdp, policy):
    """The expected number of visits of each state in an episode under ``policy``."""
    P = np.zeros((mdp.n_states, mdp.n_states))
    here = np.arange(mdp.n_states)[:, None].repeat(mdp.n_actions, axis=1)
    for k in range(mdp.n_outcomes):
        np.add.at(P, (here, mdp.next_state[:, :, k]),
                  policy * mdp.prob[:, :, k] * ~mdp.done[:, :, k])
    return np.linalg.solve(np.eye(mdp.n_states) - P.T, mdp.start)


def one_state():
    """Example 5.5 (Figure 5.4's inset): left (0) comes back with probability 0.9 and
    reward 0, or ends with probability 0.1 and reward +1; right (1) ends with 0."""
    return TabularMDP(np.zeros((1, 2, 2), dtype=int), [[[0.9, 0.1], [1.0, 0.0]]],
                      [[[0.0, 1.0], [0.0, 0.0]]], [[[False, True], [True, False]]], [1.0])


# --------------------------------------------------------------------- the estimators


@pytest.mark.parametrize("first_visit", [True, False])
def test_with_target_equal_to_behaviour_both_are_the_sample_average(first_visit):
    """pi = b: every ratio is 1, so weighted IS (step W / C(s) = 1 / N(s)) and ordinary
    IS (the average of 1 * G) are both mc_prediction's sample average, bit for bit
    (the same draws: the behaviour's action, then the model's outcome)."""
    mdp = TabularMDP.from_gymnasium(gym.make("tabzoo/Gridworld4x4-v0"))
    pi = uniform(mdp)
    kwargs = dict(episodes=40, first_visit=first_visit, runs=3, seed=1, history=True,
                  max_steps=200)
    ordinary = off_policy_mc_prediction(mdp, pi, pi, importance_sampling="ordinary", **kwargs)
    weighted = off_policy_mc_prediction(mdp, pi, pi, importance_sampling="weighted", **kwargs)
    on_policy = mc_prediction(mdp, pi, **kwargs)
    for res in (weighted, on_policy):
        np.testing.assert_array_equal(res.V_history, ordinary.V_history)
        np.testing.assert_array_equal(res.episode_returns, ordinary.episode_returns)
    assert (ordinary.V != 0).any()


def test_estimates_are_eqs_5_5_and_5_6():
    """One state, three actions that end the episode with rewards 1, 2 and 4 (the return
    names the action). After n episodes ordinary IS is ``sum rho G / n`` (eq. 5.5) and
    weighted IS ``sum rho G / sum rho`` (eq. 5.6), with ``rho = pi(A) / b(A)``;
    before the first episode of nonzero ratio the weighted estimate keeps initial_V."""
    mdp = TabularMDP(np.zeros((1, 3, 1), dtype=int), np.ones((1, 3, 1)),
                     [[[1.0], [2.0], [4.0]]], np.ones((1, 3, 1), dtype=bool), [1.0])
    pi, b = np.array([[0.6, 0.4, 0.0]]), np.array([[0.2, 0.3, 0.5]])
    for sampling in SAMPLINGS:
        res = off_policy_mc_prediction(mdp, pi, b, importance_sampling=sampling,
                                       episodes=200, runs=4, seed=2, history=True,
                                       initial_V=-7.0)
        G = res.episode_returns
        rho = np.select([G == 1.0, G == 2.0], [0.6 / 0.2, 0.4 / 0.3], 0.0)
        n = np.arange(1, 201)
        if sampling == "ordinary":
            expected = np.cumsum(rho * G, axis=1) / n
        else:
            total = np.cumsum(rho, axis=1)
            expected = np.where(total > 0, np.cumsum(rho * G, axis=1) / np.where(
                total > 0, total, 1.0), -7.0)
        np.testing.assert_allclose(res.V_history[:, :, 0], expected, rtol=1e-12)
        assert (G == 4.0).any()  # the action the target never takes was sampled


# --------------------------------------------------------------------- convergence


@PROPERTY
@given(acyclic_mdps(max_states=8, max_actions=3, max_outcomes=3), st.integers(0, 2**32 - 1))
def test_both_converge_to_v_pi_on_random_episodic_mdps(mdp, seed):
    """gamma = 1, at most 8 steps; target: a random policy, behaviour: half target, half
    uniform (ratios up to 2 per step). 4000 episodes x 8 runs; checked in the states
    the behaviour visits at least 0.2 times per episode: each run within 0.08 * scale,
    the mean of the runs within 0.025 * scale (the worst of 100 drawn MDPs in a trial:
    0.029 and 0.009)."""
    pi = random_policy(np.random.default_rng(seed), mdp.n_states, mdp.n_actions)
    b = 0.5 * pi + 0.5 / mdp.n_actions
    v_pi = policy_evaluation(mdp, pi, 1.0).V
    often = visits(mdp, b) >= 0.2
    scale = max(np.abs(mdp.reward).max(), 1e-12) * mdp.n_states
    for sampling in SAMPLINGS:
        res = off_policy_mc_prediction(mdp, pi, b, importance_sampling=sampling,
                                       episodes=4000, runs=8, seed=3)
        assert np.abs(res.V[:, often] - v_pi[often]).max() <= 0.08 * scale, sampling
        assert np.abs(res.V.mean(axis=0)[often] - v_pi[often]).max() <= 0.025 * scale


def test_both_converge_to_v_pi_on_blackjack():
    """Example 5.1's policy learned from the uniformly random player, from the deal:
    the error, root-mean-square over states weighted by their visits, is about
    0.04 per run after 400,000 episodes (it was 0.11 after 50,000: 1/sqrt(n)); each of
    4 runs stays below 0.06, and the mean of the runs below 0.03."""
    pi, b = stick_on_20(), uniform(BLACKJACK)
    v_pi = policy_evaluation(BLACKJACK, pi, 1.0).V
    weight = visits(BLACKJACK, b)
    for sampling in SAMPLINGS:
        res = off_policy_mc_prediction(BLACKJACK, pi, b, importance_sampling=sampling,
                                       episodes=400_000, runs=4, seed=4)
        rms = np.sqrt(((res.V - v_pi) ** 2 * weight).sum(axis=-1) / weight.sum())
        mean_rms = np.sqrt(((res.V.mean(axis=0) - v_pi) ** 2 * weight).sum() / weight.sum())
        assert rms.max() < 0.06 and mean_rms < 0.03, (sampling, rms, mean_rms)


# --------------------------------------------------------------------- the figures


def test_figure_5_3_weighted_error_is_far_below_ordinary_early_on():
    """Example 5.4: the state (13 with a usable ace, dealer showing 2), target stick on
    20 or 21, uniformly random behaviour, 100 runs. The mean square error of weighted
    IS is far below that of ordinary IS over the first 10 episodes (in a trial over 6
    seeds ordinary was 28-61 times larger after one episode and 5-6 times over the
    first ten); both fall below 0.03 by episode 1000. The estimate after n episodes is
    that of a call with ``episodes=n``: a run's stream does not depend on the length."""
    s = state_id(13, True, 2)
    mdp = replace(BLACKJACK, start=np.eye(BLACKJACK.n_states)[s])
    truth = policy_evaluation(mdp, stick_on_20(), 1.0).V[s]
    mse = {}
    for sampling in SAMPLINGS:
        mse[sampling] = np.array([
            ((off_policy_mc_prediction(mdp, stick_on_20(), uniform(mdp), episodes=n,
                                       importance_sampling=sampling, runs=100,
                                       seed=5).V[:, s] - truth) ** 2).mean()
            for n in [*range(1, 11), 1000]])
    ordinary, weighted = mse["ordinary"], mse["weighted"]
    assert ordinary[0] > 10 * weighted[0]
    assert ordinary[:10].mean() > 3 * weighted[:10].mean()
    assert ordinary[-1] < 0.03 and weighted[-1] < 0.03


def test_figure_5_4_ordinary_variance_is_infinite_weighted_is_exactly_one():
    """Example 5.5: v_pi = 1 for the target "always left"; the behaviour picks each
    action with probability 1/2. First-visit ordinary IS averages ``rho G = 2^T`` (or
    0) of infinite variance (``sum_T 4^T P(T) = sum_T 2^T 0.9^(T-1) 0.1`` diverges): its
    variance across 200 runs times the episodes, which a finite variance would hold
    at ``Var(rho G)``, grows more than tenfold from 10 to 100,000 episodes (26 to
    14,000 fold over 20 seeds in a trial), and most runs stay far below 1 (their
    median was 0.76-0.79). Weighted IS is exactly 0 until the first episode that ends
    with +1 (always by going left) and exactly 1 from then on."""
    mdp, target, b = one_state(), np.array([0]), np.array([[0.5, 0.5]])
    spread = {}
    for n in (10, 100_000):
        V = off_policy_mc_prediction(mdp, target, b, importance_sampling="ordinary",
                                     episodes=n, runs=200, seed=0).V[:, 0]
        spread[n] = n * V.var()
    assert spread[100_000] > 10 * spread[10] and np.median(V) < 0.85
    res = off_policy_mc_prediction(mdp, target, b, episodes=200, runs=100, seed=0,
                                   history=True)
    ended_left = res.episode_returns == 1.0
    assert ended_left.any(axis=1).all()
    first = ended_left.argmax(axis=1)
    for V, k in zip(res.V_history[:, :, 0], first, strict=True):
        assert (V[:k] == 0.0).all() and (V[k:] == 1.0).all()


def test_minus_infinity_rewards_are_exact():
    """An action of reward -inf that the target never takes has ratio 0: it adds 0 to
    ordinary IS and nothing to weighted IS, so no NaN and the estimate is right; a
    target that takes it with positive probability has value -inf, and so has each
    estimate once the trap has been sampled."""
    mdp = TabularMDP(np.zeros((1, 2, 1), dtype=int), np.ones((1, 2, 1)),
                     [[[1.0], [-np.inf]]], np.ones((1, 2, 1), dtype=bool), [1.0])
    b = uniform(mdp)
    weighted = off_policy_mc_prediction(mdp, np.array([0]), b, episodes=100, runs=4)
    ordinary = off_policy_mc_prediction(mdp, np.array([0]), b, episodes=4000, runs=4,
                                        importance_sampling="ordinary")
    assert (weighted.V == 1.0).all()
    assert np.isfinite(ordinary.V).all() and np.abs(ordinary.V - 1.0).max() < 0.1
    for sampling in SAMPLINGS:
        res = off_policy_mc_prediction(mdp, b, b, episodes=100, runs=4,
                                       importance_sampling=sampling)
        assert (res.V == -np.inf).all()


# --------------------------------------------------------------------- reproducibility


@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_same_seed_same_numbers_whatever_the_threads(sampling):
    """Same seed, same numbers with 1 or 2 threads; run 0 of runs=4 is the single run;
    runs=None has no run axis and no history unless asked; runs=1 has an axis."""
    pi, b = stick_on_20(), uniform(BLACKJACK)
    one, two = on_one_and_two_threads(lambda: off_policy_mc_prediction(
        BLACKJACK, pi, b, importance_sampling=sampling, episodes=300, runs=4, seed=6))
    np.testing.assert_array_equal(one.V, two.V)
    np.testing.assert_array_equal(one.episode_lengths, two.episode_lengths)
    alone = off_policy_mc_prediction(BLACKJACK, pi, b, importance_sampling=sampling,
                                     episodes=300, seed=6)
    assert alone.V.shape == (211,) and alone.V_history is None and alone.runs is None
    np.testing.assert_array_equal(alone.V, one.V[0])
    np.testing.assert_array_equal(one.run(0).episode_returns, alone.episode_returns)
    first = off_policy_mc_prediction(BLACKJACK, pi, b, importance_sampling=sampling,
                                     episodes=300, seed=6, runs=1, history=True)
    assert first.V.shape == (1, 211) and first.V_history.shape == (1, 300, 211)
    np.testing.assert_array_equal(first.V_history[0, -1], alone.V)


# --------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs, fragment", [
    ({"importance_sampling": "both"}, "importance_sampling must be one of"),
    ({"target_policy": np.zeros((5, 2))}, "target_policy must have shape"),
    ({"behaviour_policy": np.full((1, 2), np.nan)}, "behaviour_policy[0]"),
    ({"behaviour_policy": np.array([[0.0, 1.0]])}, "behaviour_policy must cover"),
    ({"gamma": 1.5}, "gamma"), ({"episodes": 0}, "episodes"), ({"runs": 0}, "runs"),
    ({"initial_V": np.nan}, "initial_V"),
])
def test_bad_arguments_are_named(kwargs, fragment):
    args = {"target_policy": np.array([0]), "behaviour_policy": np.array([[0.5, 0.5]])}
    args.update(kwargs)
    with pytest.raises(ValueError, match=fragment.replace("[", r"\[")):
        off_policy_mc_prediction(one_state(), **args)
