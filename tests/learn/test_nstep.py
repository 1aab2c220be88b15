"""n-step control (tabular/learn/nstep.py, tabular/rules/nstep.py): the rules against the book,
exact identities between the methods, and convergence to value iteration's optimum.

Tolerances of the random-MDP tests (rewards in [-1, 1], ``scale = R / (1 - gamma)``),
from trials over 200 drawn MDPs (S <= 6, A <= 3, n in 1..4, two seeds): with 6000
episodes cut at 20 steps and step sizes 1/n**0.6, the worst loss of a greedy policy was
0.09 * scale (tolerance 0.2 * scale, as in tests/learn/test_td.py), and the worst error of the
mean of 4 runs' Q against Q* for the off-policy methods 0.074 * scale (tolerance 0.15 *
scale). The off-policy methods behave with a fixed epsilon = 0.3: with an epsilon near
1 the ratios of a greedy target reach A**n, and the ratio-scaled steps of eq. 7.11
overshoot (a property of the method, not of the code). Tests run on derandomised
examples, so CI sees the same draws every time.
"""

import gymnasium as gym
import numpy as np
import pytest
from conftest import on_one_and_two_threads, slow_examples
from hypothesis import given, settings
from hypothesis import strategies as st

from tabular import TabularMDP, envs, policy_evaluation, sarsa, value_iteration
from tabular.learn.nstep import (
    n_step_expected_sarsa,
    n_step_sarsa,
    off_policy_n_step_sarsa,
    q_sigma,
    tree_backup,
)
from tabular.rules.nstep import (
    control_variate_value,
    importance_sampled_update,
    q_sigma_return,
    sigma_mix,
    target_probs,
    tree_backup_return,
    tree_value,
)
from tabular.rules.returns import discounted_return
from tabular.rules.values import epsilon_greedy_probs, q_learning_target
from tabular.schedules import inverse, linear
from tabular.testing import gammas, mdps

METHODS = {"n_step_sarsa": n_step_sarsa, "n_step_expected_sarsa": n_step_expected_sarsa,
           "off_policy_n_step_sarsa": off_policy_n_step_sarsa, "tree_backup": tree_backup,
           "q_sigma": q_sigma}
GLIE_GRID = {"epsilon": linear(1.0, 0.0, 750)}
FIXED = {"epsilon": 0.3}
#: Each method with the exploration it converges with on the gridworlds (see the module doc).
CASES = {"n_step_sarsa": (n_step_sarsa, GLIE_GRID),
         "n_step_expected_sarsa": (n_step_expected_sarsa, GLIE_GRID),
         "off_policy_n_step_sarsa": (off_policy_n_step_sarsa, FIXED),
         "tree_backup": (tree_backup, FIXED),
         "q_sigma": (q_sigma, GLIE_GRID),
         "q_sigma off-policy": (q_sigma, {**FIXED, "target_epsilon": 0.0})}
OFF_POLICY = ("off_policy_n_step_sarsa", "tree_backup", "q_sigma off-policy")
CONVERGENCE = slow_examples(12)
ROWS = st.lists(st.sampled_from([-np.inf, -1.0, 0.0, 0.5, 2.0]), min_size=1, max_size=4)


def model(env_id, **kwargs):
    return TabularMDP.from_gymnasium(gym.make(env_id, **kwargs))


def value_scale(mdp, gamma):
    return max(np.abs(mdp.reward[mdp.prob > 0]).max(), 1e-12) / (1.0 - gamma)


def assert_same_runs(a, b):
    np.testing.assert_array_equal(a.Q, b.Q)
    np.testing.assert_array_equal(a.episode_returns, b.episode_returns)
    np.testing.assert_array_equal(a.episode_lengths, b.episode_lengths)


# 0 -> 1 -> 2 -> 3 (terminal), one action, rewards 1, 2, 3: every method is the same here.
CHAIN = TabularMDP.from_transitions(
    {0: {0: [(1.0, 1, 1.0, False)]}, 1: {0: [(1.0, 2, 2.0, False)]},
     2: {0: [(1.0, 3, 3.0, True)]}, 3: {0: [(1.0, 3, 0.0, True)]}},
    start=np.array([1.0, 0.0, 0.0, 0.0]))


# --------------------------------------------------------------------- update rules


def test_rules_follow_the_book():
    probs, q_row = np.array([0.25, 0.75, 0.0]), np.array([2.0, 4.0, -np.inf])
    # eq. 7.16: R + gamma [pi(0) Q(0) + pi(A) G + 0 * Q(2)], A = 1, G = 8
    assert tree_backup_return(1.0, 0.5, probs, q_row, 1, 8.0) == 1.0 + 0.5 * (0.5 + 6.0)
    # section 7.6: sigma = 0.5 mixes the sampled 8 and the tree value 6.5
    assert tree_value(probs, q_row, 1, 8.0) == 6.5
    assert q_sigma_return(1.0, 0.5, 0.5, 8.0, 6.5) == 1.0 + 0.5 * 7.25
    # eq. 7.17's sampled step: rho (G - Q(S, A)) + V-bar(S)
    assert control_variate_value(2.0, 8.0, 4.0, 3.5) == 11.5
    # eq. 7.11: Q + alpha rho [G - Q]
    assert importance_sampled_update(1.0, 3.0, 0.25, 2.0) == 2.0
    assert importance_sampled_update(1.0, 3.0, 0.25, 0.0) == 1.0


def test_minus_infinity_is_exact_and_never_a_nan():
    probs, q_row = np.array([0.0, 1.0]), np.array([-np.inf, 1.0])
    assert tree_backup_return(0.0, 1.0, probs, q_row, 0, -np.inf) == 1.0  # pi(A) = 0
    assert tree_backup_return(0.0, 1.0, probs, q_row, 1, -np.inf) == -np.inf
    assert sigma_mix(1.0, 2.0, -np.inf) == 2.0 and sigma_mix(0.0, -np.inf, 2.0) == 2.0
    assert sigma_mix(0.5, -np.inf, 2.0) == -np.inf
    assert importance_sampled_update(1.0, -np.inf, 0.5, 0.0) == 1.0  # rho = 0: no update
    assert importance_sampled_update(1.0, -np.inf, 0.5, 1.5) == -np.inf
    assert importance_sampled_update(-np.inf, 5.0, 0.5, 1.5) == -np.inf  # absorbing
    assert control_variate_value(0.0, -np.inf, 1.0, 1.0) == 1.0
    assert control_variate_value(2.0, 3.0, -np.inf, -np.inf) == -np.inf  # exact Q(S, A)
    assert control_variate_value(2.0, -np.inf, 1.0, 1.0) == -np.inf


def test_a_minus_infinity_return_steers_the_target_policy():
    """target_probs: a taken action whose sampled return is -inf is not greedy any more,
    so a greedy target follows it no further (ratio 0, tree weight 0); an epsilon-greedy
    target still gives it epsilon / A."""
    q_row, scratch, out = np.array([1.0, 1.0, 0.0]), np.zeros(3), np.zeros(3)
    target_probs(q_row, 0, -np.inf, 0.0, scratch, out)
    np.testing.assert_array_equal(out, [0.0, 1.0, 0.0])
    target_probs(q_row, 0, 5.0, 0.0, scratch, out)
    np.testing.assert_array_equal(out, [0.5, 0.5, 0.0])
    target_probs(q_row, 0, -np.inf, 0.3, scratch, out)
    np.testing.assert_allclose(out, [0.1, 0.8, 0.1])
    np.testing.assert_array_equal(q_row, [1.0, 1.0, 0.0])  # Q is left alone


@settings(max_examples=200, deadline=None, derandomize=True)
@given(ROWS, st.integers(0, 3), st.floats(-2.0, 2.0), gammas())
def test_one_step_tree_backup_with_a_greedy_target_is_q_learning(q_row, action, reward, gamma):
    """n = 1: G_{t:t+1} starts from Q(S', A') and one tree step gives R + gamma sum_a
    pi(a|S') Q(S', a) with pi greedy (ties split): Q-learning's target (eq. 6.8), to
    rounding, whatever the action A' the behaviour drew; at the end, R alone."""
    q_row = np.array(q_row)
    action %= q_row.shape[0]
    probs, scratch = np.zeros(q_row.shape[0]), np.zeros(q_row.shape[0])
    target_probs(q_row, action, q_row[action], 0.0, scratch, probs)
    G = tree_backup_return(reward, gamma, probs, q_row, action, q_row[action])
    expected = q_learning_target(reward, gamma, q_row, False)
    assert G == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert q_learning_target(reward, gamma, q_row, True) == reward  # what the loop uses at T


@settings(max_examples=200, deadline=None, derandomize=True)
@given(ROWS, st.integers(0, 3), st.floats(-2.0, 2.0), gammas(), st.floats(-3.0, 3.0),
       st.sampled_from([0.0, 0.1, 1.0]))
def test_q_sigma_return_is_sarsa_at_1_and_tree_backup_at_0(q_row, action, reward, gamma,
                                                           later, eps):
    q_row = np.array(q_row)
    action %= q_row.shape[0]
    probs = np.zeros(q_row.shape[0])
    epsilon_greedy_probs(q_row, eps, probs)
    tree = tree_value(probs, q_row, action, later)
    assert q_sigma_return(reward, gamma, 1.0, later, tree) == \
        discounted_return(reward, gamma, later)
    assert q_sigma_return(reward, gamma, 0.0, later, tree) == \
        tree_backup_return(reward, gamma, probs, q_row, action, later)


def test_the_control_variate_is_unbiased():
    """E_b[rho (G_a - Q(a)) + V-bar] = sum_a pi(a) G_a: the sampled step of off-policy
    Q(sigma) has the expectation of the target policy's return (eq. 7.17)."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        b, pi = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
        q_row, G = rng.normal(size=4), rng.normal(size=4)
        v_bar = pi @ q_row
        mean = sum(b[a] * control_variate_value(pi[a] / b[a], G[a], q_row[a], v_bar)
                   for a in range(4))
        assert mean == pytest.approx(pi @ G, abs=1e-12)


# --------------------------------------------------------------------- the episode loop


@pytest.mark.parametrize("name", METHODS)
def test_one_episode_by_hand(name):
    """On the chain 0 -> 1 -> 2 -> end (rewards 1, 2, 3; one action, so pi = b = 1 and
    every method is n-step SARSA) with n = 2, alpha = 1, gamma = 0.5, Q = 4 at first:
    Q(0) <- 1 + 0.5 * 2 + 0.25 Q(2) = 3, Q(1) <- 2 + 0.5 * 3 = 3.5, Q(2) <- 3 (eq. 7.4).
    Cut after 2 steps: Q(0) <- 3 and Q(1) <- 2 + 0.5 Q(2) = 4, bootstrapping from S_2."""
    learn = METHODS[name]
    res = learn(CHAIN, n_step=2, gamma=0.5, episodes=1, alpha=1.0, initial_Q=4.0)
    np.testing.assert_array_equal(res.Q[:, 0], [3.0, 3.5, 3.0, 4.0])
    assert res.episode_returns[0] == 6.0 and res.episode_lengths[0] == 3
    cut = learn(CHAIN, n_step=2, gamma=0.5, episodes=1, alpha=1.0, initial_Q=4.0, max_steps=2)
    np.testing.assert_array_equal(cut.Q[:, 0], [3.0, 4.0, 4.0, 4.0])
    assert cut.episode_returns[0] == 3.0 and cut.episode_lengths[0] == 2
    longer = learn(CHAIN, n_step=5, gamma=0.5, episodes=1, alpha=1.0, max_steps=5)
    np.testing.assert_array_equal(longer.Q[:3, 0], [1.0 + 1.0 + 0.75, 3.5, 3.0])  # MC


@pytest.mark.parametrize("env", ["FrozenLake", "Gridworld4x4", "slippery"])
def test_one_step_n_step_sarsa_is_sarsa(env):
    """n = 1 draws what tabular.sarsa draws, in the same order (A_{t+1} before the
    update, also at the end), and makes the same update: the same numbers, bit for
    bit, on a stochastic env, with schedules and with cut episodes."""
    mdp, kwargs = {
        "FrozenLake": (model("FrozenLake-v1"), {"gamma": 0.95}),
        "Gridworld4x4": (model("tabzoo/Gridworld4x4-v0"), {"alpha": inverse(1.0, 0.6)}),
        "slippery": (TabularMDP.from_gymnasium(envs.GridWorld("S.T\n.#.\n..G", slip=0.2)),
                   {"gamma": 0.9, "epsilon": linear(1.0, 0.0, 200), "max_steps": 7}),
    }[env]
    assert_same_runs(n_step_sarsa(mdp, n_step=1, episodes=300, runs=2, seed=1, **kwargs),
                     sarsa(mdp, episodes=300, runs=2, seed=1, **kwargs))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(mdps(max_states=6, max_actions=3, max_outcomes=3, traps=True), gammas(),
       st.integers(1, 4), st.sampled_from([None, 0.0, 0.2]))
def test_q_sigma_ends_are_n_step_sarsa_and_tree_backup(mdp, gamma, n_step, target_epsilon):
    """Q(sigma = 1) is n-step SARSA and Q(sigma = 0) tree backup, bit for bit, on the
    same seed (on random MDPs with -inf traps, cut after 15 steps); so is off-policy
    n-step SARSA whose target is the behaviour itself."""
    kwargs = {"n_step": n_step, "gamma": gamma, "episodes": 60, "epsilon": 0.3,
              "max_steps": 15, "runs": 2, "seed": 2}
    sampled = n_step_sarsa(mdp, **kwargs)
    assert_same_runs(q_sigma(mdp, sigma=1.0, **kwargs), sampled)
    assert_same_runs(off_policy_n_step_sarsa(mdp, target_epsilon=None, **kwargs), sampled)
    assert_same_runs(q_sigma(mdp, sigma=0.0, target_epsilon=target_epsilon, **kwargs),
                     tree_backup(mdp, target_epsilon=target_epsilon, **kwargs))


# --------------------------------------------------------------------- ground truth


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("env", ["Gridworld4x4", "small"])
def test_greedy_policy_is_optimal_on_gridworlds(case, env):
    """Example 4.1's gridworld and a 3 x 3 grid with a wall (-1 per step, gamma = 1),
    n = 3, step sizes 1/n**0.6: every method's greedy policy walks a shortest path from
    every start (its exact value is V*); the on-policy methods with exploration decaying
    to 0, the off-policy ones behaving with epsilon = 0.3 (8 of 8 runs in a trial)."""
    mdp = {"Gridworld4x4": model("tabzoo/Gridworld4x4-v0"),
           "small": TabularMDP.from_gymnasium(
               envs.GridWorld("S..\n.#.\n..G", step_reward=-1.0, goal_reward=0.0))}[env]
    learn, kwargs = CASES[case]
    v_star = value_iteration(mdp, 1.0).V
    start = mdp.start > 0
    res = learn(mdp, n_step=3, episodes=1000, alpha=inverse(1.0, 0.6), runs=4, seed=4,
                **kwargs)
    for Q in res.Q:
        v = policy_evaluation(mdp, Q.argmax(axis=1), 1.0).V
        np.testing.assert_allclose(v[start], v_star[start], atol=1e-9)


@CONVERGENCE
@given(mdps(max_states=6, max_actions=3, max_outcomes=3), st.sampled_from([0.5, 0.8]),
       st.integers(1, 4))
def test_greedy_policies_reach_v_star_on_random_mdps(mdp, gamma, n_step):
    """Every method, n = 1..4, 6000 episodes cut at 20 steps, step sizes 1/n**0.6; the
    on-policy methods with GLIE exploration epsilon = 1/sqrt(episode): the exact value of
    the greedy policy is within 0.2 * scale of V* in every state, in every run; the
    off-policy methods' mean Q is within 0.15 * scale of Q* (module doc)."""
    vi = value_iteration(mdp, gamma)
    scale = value_scale(mdp, gamma)
    for case, (learn, kwargs) in CASES.items():
        kwargs = {**kwargs, "epsilon": kwargs["epsilon"] if case in OFF_POLICY
                  else inverse(1.0, 0.5)}
        res = learn(mdp, n_step=n_step, gamma=gamma, episodes=6000, alpha=inverse(1.0, 0.6),
                    max_steps=20, runs=4, seed=14, **kwargs)
        for Q in res.Q:
            v = policy_evaluation(mdp, Q.argmax(axis=1), gamma).V
            assert (vi.V - v).max() <= 0.2 * scale, case
        if case in OFF_POLICY:
            np.testing.assert_allclose(res.Q.mean(axis=0), vi.Q, atol=0.15 * scale,
                                       err_msg=case)


# --------------------------------------------------------------------- -inf rewards


@pytest.mark.parametrize("case", OFF_POLICY)
def test_greedy_targets_on_the_trap_grid_are_exact(case):
    """The trap pays -inf. With a greedy target the off-policy methods learn -inf only
    where Q* is -inf (a sampled -inf steers the target away, rules.nstep.target_probs),
    and their greedy policy is optimal from the start; nothing is NaN."""
    mdp = model("tabzoo/TrapTreasure-v0")
    vi = value_iteration(mdp, 0.9)
    learn, kwargs = CASES[case]
    res = learn(mdp, n_step=3, gamma=0.9, episodes=3000, alpha=0.5, runs=4, seed=8, **kwargs)
    assert not np.isnan(res.Q).any()
    start = mdp.start > 0
    for Q in res.Q:
        assert (vi.Q[Q == -np.inf] == -np.inf).all()
        v = policy_evaluation(mdp, Q.argmax(axis=1), 0.9).V
        np.testing.assert_allclose(v[start], vi.V[start], atol=1e-9)


@pytest.mark.parametrize("name", METHODS)
def test_minus_infinity_rewards_never_make_nans(name):
    mdp = model("tabzoo/TrapTreasure-v0")
    res = METHODS[name](mdp, gamma=0.9, episodes=200, runs=2, seed=9)
    assert not np.isnan(res.Q).any()
    assert (res.episode_returns == -np.inf).any()  # exploration does hit the trap


# --------------------------------------------------------------------- reproducibility


@pytest.mark.parametrize("name", METHODS)
def test_same_seed_same_numbers_whatever_the_threads(name):
    mdp = model("FrozenLake-v1")
    learn = METHODS[name]
    one, two = on_one_and_two_threads(lambda: learn(mdp, gamma=0.95, episodes=200, runs=4, seed=10))
    assert_same_runs(one, two)
    alone = learn(mdp, gamma=0.95, episodes=200, seed=10)  # run 0 of any runs=
    np.testing.assert_array_equal(alone.Q, one.Q[0])
    other = learn(mdp, gamma=0.95, episodes=200, seed=11)
    assert not np.array_equal(other.Q, alone.Q)


# --------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs, fragment", [
    ({"n_step": 0}, "n_step must be an integer >= 1"),
    ({"n_step": 2.5}, "n_step must be an integer >= 1"),
    ({"n_step": 10**11}, "n_step must be at most 10,000"),
    ({"n_step": 5, "max_steps": 4}, "n_step must be at most 4"),
    ({"alpha": 0.0}, "alpha"), ({"alpha": float("nan")}, "alpha"),
    ({"epsilon": -0.1}, "epsilon"), ({"epsilon": float("nan")}, "epsilon"),
    ({"gamma": 1.1}, "gamma"), ({"episodes": 0}, "episodes"), ({"runs": 0}, "runs"),
    ({"initial_Q": np.zeros((3, 3))}, "initial_Q"), ({"seed": -1}, "seed"),
])
@pytest.mark.parametrize("name", METHODS)
def test_bad_arguments_are_named(name, kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        METHODS[name](CHAIN, **kwargs)


@pytest.mark.parametrize("learn", [off_policy_n_step_sarsa, tree_backup, q_sigma])
@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "0", True])
def test_bad_target_epsilon_is_named(learn, bad):
    with pytest.raises(ValueError, match="target_epsilon"):
        learn(CHAIN, target_epsilon=bad)


@pytest.mark.parametrize("bad, fragment", [
    (1.5, "sigma must be in \\[0, 1\\]"), (-0.5, "sigma must be in \\[0, 1\\]"),
    (float("nan"), "sigma must be in \\[0, 1\\]"), (None, "sigma must be a number"),
    ("0.5", "sigma must be a number"),
])
def test_bad_sigma_is_named(bad, fragment):
    with pytest.raises(ValueError, match=fragment):
        q_sigma(CHAIN, sigma=bad)
