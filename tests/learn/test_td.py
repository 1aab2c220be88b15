"""TD learners (tabular/learn/td.py) and their shared pieces (learning.py, schedules.py),
checked against exact ground truth from value iteration and the linear solve.

Tolerances of the convergence tests, on random MDPs whose rewards lie in [-1, 1]
(scale ``R / (1 - gamma)``, the largest possible value): with uniform exploration
(``epsilon = 1``, uniform start over all states) every pair of an MDP with S <= 6,
A <= 3 is updated about 2000 * 20 / 18 > 2000 times; a step size ``1 / n**0.6`` is
then about 0.01, so one run's estimate has a standard deviation near
``sqrt(alpha / 2) * scale = 0.07 * scale`` and the mean of 16 runs 0.018 * scale.
The tolerance 0.1 * scale is more than five of those standard deviations (the worst
of 100 drawn MDPs in a trial was 0.07 * scale). Tests run on derandomised examples,
so CI sees the same draws every time.
"""

import gymnasium as gym
import numpy as np
import pytest
from conftest import on_one_and_two_threads, slow_examples
from hypothesis import given, settings
from hypothesis import strategies as st

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    double_q_learning,
    expected_sarsa,
    mc_control,
    n_step_expected_sarsa,
    n_step_sarsa,
    off_policy_n_step_sarsa,
    policy_evaluation,
    q_learning,
    q_sigma,
    sarsa,
    sarsa_lambda,
    td0,
    tree_backup,
    true_online_sarsa_lambda,
    value_iteration,
    watkins_q_lambda,
)
from tabular._numba.rng import seed_states
from tabular._numba.runs import over_runs, runs_slice
from tabular.learn import td
from tabular.learn.outputs import ControlOutputs, prediction_outputs
from tabular.rules import values
from tabular.schedules import (
    as_schedule,
    constant,
    exponential,
    inverse,
    linear,
    read_schedule,
    schedule_value,
)
from tabular.testing import mdps

CONVERGENCE = slow_examples(12)
CONTROL = {"sarsa": sarsa, "expected_sarsa": expected_sarsa, "q_learning": q_learning,
           "double_q_learning": double_q_learning}
#: Every learner that returns a ControlResult, for the shape conventions they share.
ALL_CONTROL = {**CONTROL, "mc_control": mc_control, "n_step_sarsa": n_step_sarsa,
               "n_step_expected_sarsa": n_step_expected_sarsa,
               "off_policy_n_step_sarsa": off_policy_n_step_sarsa, "tree_backup": tree_backup,
               "q_sigma": q_sigma, "sarsa_lambda": sarsa_lambda,
               "true_online_sarsa_lambda": true_online_sarsa_lambda,
               "watkins_q_lambda": watkins_q_lambda}


def model(env_id, **kwargs):
    return TabularMDP.from_gymnasium(gym.make(env_id, **kwargs))


def uniform_policy(mdp):
    return np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)


def value_scale(mdp, gamma):
    return max(np.abs(mdp.reward[mdp.prob > 0]).max(), 1e-12) / (1.0 - gamma)


# --------------------------------------------------------------------- update rules


def test_targets_follow_the_book():
    q_next = np.array([1.0, 3.0, 2.0])
    assert values.td_target(1.0, 0.5, 4.0, False) == 3.0                  # R + gamma V(S')
    assert values.td_target(1.0, 0.5, 4.0, True) == 1.0                   # no value after done
    assert values.sarsa_target(1.0, 0.5, q_next, 2, False) == 2.0         # R + gamma Q(S', A')
    assert values.q_learning_target(1.0, 0.5, q_next, False) == 2.5       # R + gamma max Q(S', .)
    # eps = 0.3: pi = (0.1, 0.8, 0.1)
    assert values.expected_sarsa_target(1.0, 0.5, q_next, 0.3, False) == pytest.approx(
        1.0 + 0.5 * (0.1 * 1.0 + 0.8 * 3.0 + 0.1 * 2.0))
    selected = values.greedy_action(np.array([0.0, 5.0, 1.0]), seed_states(0)[0])  # Q1 picks 1
    assert values.double_q_target(1.0, 0.5, q_next, selected, False) == 2.5  # Q2 values it
    assert values.update_toward(1.0, 3.0, 0.25) == 1.5                    # eq. 2.4


def test_minus_infinity_is_exact_and_never_a_nan():
    assert values.update_toward(-np.inf, 5.0, 1.0) == -np.inf     # a -inf estimate is absorbing
    assert values.update_toward(2.0, -np.inf, 0.5) == -np.inf     # a -inf target is taken
    assert values.td_target(0.0, 0.0, -np.inf, False) == 0.0      # gamma = 0: no value flows
    q = np.array([-np.inf, 1.0])
    probs = np.zeros(2)
    values.epsilon_greedy_probs(q, 0.0, probs)
    assert values.expectation(probs, q) == 1.0                    # probability 0 hides the -inf
    values.epsilon_greedy_probs(q, 0.2, probs)
    assert values.expectation(probs, q) == -np.inf


@settings(deadline=None)  # the first example compiles
@given(q=st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(-np.inf), st.sampled_from([0.0, 1.0])),
                  min_size=1, max_size=6),
       epsilon=st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 1.0])), data=st.data())
def test_epsilon_greedy_expectation_is_the_expectation_of_its_probabilities(q, epsilon, data):
    """Expected SARSA's one-pass expectation equals ``expectation`` of the probabilities
    of ``epsilon_greedy_probs`` (to rounding), with and without an action mask, and is
    ``-inf`` exactly when an action of positive probability has ``-inf``."""
    q = np.array(q)
    legal = np.array(data.draw(st.lists(st.booleans(), min_size=len(q), max_size=len(q))))
    legal[data.draw(st.integers(0, len(q) - 1))] = True
    for mask in (None, legal):
        probs = np.zeros(len(q))
        values.epsilon_greedy_probs(q, epsilon, probs, mask)
        expected = values.expectation(probs, q)
        got = values.epsilon_greedy_expectation(q, epsilon, mask)
        assert not np.isnan(got)
        if expected == -np.inf:
            assert got == -np.inf
        else:
            assert got == pytest.approx(expected, rel=1e-12, abs=1e-8)  # ~ulps of 1e6 sums


def test_greedy_ties_are_broken_uniformly():
    rng = seed_states(1)[0]
    q = np.array([1.0, 3.0, 0.0, 3.0, 3.0])
    picks = np.bincount([values.greedy_action(q, rng) for _ in range(30_000)], minlength=5)
    assert picks[0] == picks[2] == 0
    # each tied action: 10,000 expected, binomial sd 82; 5 sd = 410
    np.testing.assert_allclose(picks[[1, 3, 4]], 10_000, atol=410)


def test_epsilon_greedy_draws_match_its_probabilities():
    rng = seed_states(2)[0]
    q = np.array([0.0, 2.0, 2.0, -1.0])
    probs = np.zeros(4)
    values.epsilon_greedy_probs(q, 0.4, probs)
    np.testing.assert_allclose(probs, [0.1, 0.4, 0.4, 0.1])
    n = 40_000
    counts = np.bincount([values.epsilon_greedy_action(q, 0.4, rng) for _ in range(n)], minlength=4)
    # binomial sd at most sqrt(n * 0.25) = 100; 5 sd = 500
    np.testing.assert_allclose(counts, n * probs, atol=500)


def test_schedules():
    np.testing.assert_allclose(inverse()(np.array([1, 2, 4])), [1.0, 0.5, 0.25])
    np.testing.assert_allclose(inverse(2.0, 0.5, 3.0)(1), 1.0)
    np.testing.assert_allclose(exponential(1.0, 0.5, 0.2)(np.array([1, 2, 3, 10])),
                               [1.0, 0.5, 0.25, 0.2])
    np.testing.assert_allclose(linear(1.0, 0.1, 9)(np.array([1, 5, 10, 50])),
                               [1.0, 0.6, 0.1, 0.1])
    assert constant(0.3)(1000) == 0.3
    assert as_schedule("alpha", inverse()).limit == 0.0
    for bad in (0.0, 1.5, float("nan"), linear(0.5, 0.0, 10), "0.5"):
        with pytest.raises(ValueError, match="alpha"):
            as_schedule("alpha", bad)
    as_schedule("epsilon", 0.0, low_inclusive=True)
    with pytest.raises(ValueError, match="decay"):
        exponential(1.0, 1.5)
    for schedule in (constant(0.3), inverse(2.0, 0.5, 3.0), exponential(1.0, 0.5, 0.2),
                     linear(1.0, 0.1, 9)):  # the tuple kernels read gives the same values
        params = schedule.params
        for n in (1, 2, 7, 100):
            assert schedule_value(read_schedule(params), n) == schedule_value(params, n)


# --------------------------------------------------------------------- ground truth


@CONVERGENCE
@given(mdps(max_states=6, max_actions=3, max_outcomes=3), st.sampled_from([0.0, 0.5, 0.8]))
def test_control_converges_on_random_mdps(mdp, gamma):
    """Q-learning and double Q-learning reach Q*; SARSA and expected SARSA with
    epsilon = 1 evaluate the (fixed) uniform policy, so they reach its Q exactly."""
    q_star = value_iteration(mdp, gamma).Q
    q_uniform = policy_evaluation(mdp, uniform_policy(mdp), gamma).Q
    tol = 0.1 * value_scale(mdp, gamma)
    for learn, truth in ((q_learning, q_star), (double_q_learning, q_star),
                         (sarsa, q_uniform), (expected_sarsa, q_uniform)):
        res = learn(mdp, gamma=gamma, episodes=2000, alpha=inverse(1.0, 0.6), epsilon=1.0,
                    max_steps=20, runs=16, seed=3)
        np.testing.assert_allclose(res.Q.mean(axis=0), truth, atol=tol, rtol=0,
                                   err_msg=learn.__name__)


@CONVERGENCE
@given(mdps(max_states=6, max_actions=3, max_outcomes=3), st.sampled_from([0.5, 0.8]))
def test_greedy_policies_reach_v_star_on_random_mdps(mdp, gamma):
    """Every control method with GLIE exploration (epsilon = 1/sqrt(episode)), step
    sizes 1/n**0.6 and 6000 episodes cut at 20 steps: the exact value of the greedy
    policy is within 0.2 * scale of V* in every state, in every run. In a trial over 80
    drawn MDPs x 4 runs the worst loss was 0.093 * scale (SARSA, expected SARSA,
    Q-learning); what loss remains comes from states that exploration rarely reaches."""
    v_star = value_iteration(mdp, gamma).V
    tol = 0.2 * value_scale(mdp, gamma)
    for name, learn in CONTROL.items():
        res = learn(mdp, gamma=gamma, episodes=6000, alpha=inverse(1.0, 0.6),
                    epsilon=inverse(1.0, 0.5), max_steps=20, runs=4, seed=14)
        for Q in res.Q:
            v = policy_evaluation(mdp, Q.argmax(axis=1), gamma).V
            assert (v_star - v).max() <= tol, name


@pytest.mark.parametrize("name", CONTROL)
def test_greedy_policy_is_optimal_on_gridworld(name):
    """Example 4.1's gridworld (-1 per step, gamma = 1): with exploration decaying to 0
    (GLIE) and step sizes 1/n**0.6, every method's greedy policy walks the shortest path
    from every start cell (its exact value equals V*). In a trial SARSA did so in 100 of
    100 runs (with a constant alpha = 0.5, in 86: its noisy Q can freeze a detour once
    epsilon reaches 0)."""
    mdp = model("tabzoo/Gridworld4x4-v0")
    v_star = value_iteration(mdp, 1.0).V
    res = CONTROL[name](mdp, episodes=2000, alpha=inverse(1.0, 0.6),
                        epsilon=linear(1.0, 0.0, 1500), runs=4, seed=4)
    for Q in res.Q:
        v = policy_evaluation(mdp, Q.argmax(axis=1), 1.0).V
        np.testing.assert_allclose(v, v_star, atol=1e-9)


@pytest.mark.parametrize("n_step", [1, 3])
def test_td_prediction_converges_to_v_pi(n_step):
    """TD(0) and 3-step TD on the 19-state random walk (Example 7.1, rewards -1/+1):
    V(k) = -1 + 2k/20. With alpha = 1/n**0.6 after 3000 episodes the per-run error is
    about 0.03 (checked in a trial); the mean of 8 runs is within 0.02 of the truth."""
    mdp = model("tabzoo/RandomWalk-v0", n_states=19, left_reward=-1.0)
    v_pi = policy_evaluation(mdp, np.zeros(mdp.n_states, dtype=int), 1.0).V
    res = td0(mdp, np.zeros(mdp.n_states, dtype=int), episodes=3000, n_step=n_step,
              alpha=inverse(1.0, 0.6), runs=8, seed=5)
    np.testing.assert_allclose(res.V.mean(axis=0), v_pi, atol=0.02)
    np.testing.assert_allclose(v_pi[1:-1], -1 + 2 * np.arange(1, 20) / 20, atol=1e-6)


@CONVERGENCE
@given(mdps(max_states=6, max_actions=3, max_outcomes=3), st.sampled_from([0.5, 0.8]),
       st.integers(1, 3))
def test_td_prediction_converges_on_random_mdps(mdp, gamma, n_step):
    """n-step TD with a stochastic policy on random MDPs, truncated after 20 steps (a
    cut bootstraps, so the estimate stays unbiased); tolerance as in the module doc."""
    pi = uniform_policy(mdp)
    v_pi = policy_evaluation(mdp, pi, gamma).V
    res = td0(mdp, pi, gamma=gamma, episodes=2000, alpha=inverse(1.0, 0.6), n_step=n_step,
              max_steps=20, runs=16, seed=6)
    np.testing.assert_allclose(res.V.mean(axis=0), v_pi, atol=0.1 * value_scale(mdp, gamma))


@settings(max_examples=40, deadline=None)
@given(mdps(max_states=6, max_actions=3, max_outcomes=3, traps=True), st.floats(0.0, 1.0),
       st.sampled_from([constant(0.3), inverse(1.0, 0.6)]), st.integers(1, 12),
       st.booleans(), st.integers(0, 2**32))
def test_td0_loop_is_the_n_step_loop_at_n_one(mdp, gamma, alpha, max_steps, history, seed):
    """TD(0)'s own loop draws and computes what the n-step loop does at n = 1, bit for
    bit: with -inf rewards, step-size schedules, cut episodes and several runs."""
    policy = np.random.default_rng(seed).dirichlet(np.ones(mdp.n_actions), mdp.n_states)
    params = td.TDPredictionParams(policy=policy, gamma=gamma, alpha=alpha.params,
                                   n_step=1, episodes=15, max_steps=max_steps)
    outs = []
    for driver in (td._td0, td._td_prediction):
        out = prediction_outputs(np.zeros(mdp.n_states), 3, 15, history)
        over_runs(driver, mdp.arrays, params, seed_states(seed, 3), out)
        outs.append(out)
    for name, ours, theirs in zip(outs[0]._fields, *outs, strict=True):
        if ours is not None:
            assert ours.tobytes() == theirs.tobytes(), name


def test_td_history_records_each_episode():
    mdp = model("tabzoo/RandomWalk-v0")
    res = td0(mdp, np.zeros(7, dtype=int), episodes=30, alpha=0.1, initial_V=0.5,
              history=True, seed=7)
    assert res.V_history.shape == (30, 7)
    np.testing.assert_array_equal(res.V_history[-1], res.V)
    assert res.episode_lengths.min() >= 3  # the centre is 3 steps from either end
    assert set(np.unique(res.episode_returns)) <= {0.0, 1.0}


# --------------------------------------------------------------------- -inf rewards


def test_q_learning_on_the_trap_grid_is_exact():
    """The trap pays -inf: Q-learning learns Q* (finite wherever the trap is avoidable)
    and its -inf entries are exactly the pairs whose Q* is -inf; nothing is NaN."""
    mdp = model("tabzoo/TrapTreasure-v0")
    vi = value_iteration(mdp, 0.9)
    res = q_learning(mdp, gamma=0.9, episodes=3000, alpha=0.5, epsilon=0.3, runs=4, seed=8)
    assert not np.isnan(res.Q).any()
    for Q in res.Q:
        learned_trap = Q == -np.inf
        assert (vi.Q[learned_trap] == -np.inf).all()  # sound: -inf only where exact
        v = policy_evaluation(mdp, Q.argmax(axis=1), 0.9).V
        start = np.flatnonzero(mdp.start)
        np.testing.assert_allclose(v[start], vi.V[start], atol=1e-9)


@pytest.mark.parametrize("learn", [sarsa, expected_sarsa])
def test_on_policy_values_of_a_reachable_trap_are_minus_infinity(learn):
    """As documented in tabular.learn.divergence: under an epsilon-soft policy the trap is
    reachable from the start, so its exact value there is -inf, and that is what the
    on-policy methods learn; with a finite trap reward their values are finite."""
    mdp = model("tabzoo/TrapTreasure-v0")
    start = np.flatnonzero(mdp.start)[0]
    res = learn(mdp, gamma=0.9, episodes=2000, runs=2, seed=15)
    assert (res.Q[:, start] == -np.inf).all()
    finite = learn(model("tabzoo/TrapTreasure-v0", trap_reward=-10.0), gamma=0.9,
                   episodes=2000, runs=2, seed=15)
    assert np.isfinite(finite.Q).all()


@pytest.mark.parametrize("name", CONTROL)
def test_minus_infinity_rewards_never_make_nans(name):
    mdp = model("tabzoo/TrapTreasure-v0")
    res = CONTROL[name](mdp, gamma=0.9, episodes=200, runs=2, seed=9)
    assert not np.isnan(res.Q).any()
    assert not np.isnan(res.episode_returns).any()
    assert (res.episode_returns == -np.inf).any()  # exploration does hit the trap


# --------------------------------------------------------------------- reproducibility


@pytest.mark.parametrize("name", CONTROL)
def test_same_seed_same_numbers_whatever_the_threads(name):
    mdp = TabularMDP.from_gymnasium(gym.make("FrozenLake-v1"))
    learn = CONTROL[name]
    one, two = on_one_and_two_threads(lambda: learn(mdp, gamma=0.95, episodes=200, runs=4, seed=10))
    np.testing.assert_array_equal(one.Q, two.Q)
    np.testing.assert_array_equal(one.episode_returns, two.episode_returns)
    np.testing.assert_array_equal(one.episode_lengths, two.episode_lengths)
    alone = learn(mdp, gamma=0.95, episodes=200, seed=10)  # run 0 of any runs=
    np.testing.assert_array_equal(alone.Q, one.Q[0])
    other = learn(mdp, gamma=0.95, episodes=200, seed=11)
    assert not np.array_equal(other.Q, alone.Q)


def test_prediction_same_seed_same_numbers_whatever_the_threads():
    mdp = model("tabzoo/RandomWalk-v0")
    a, b = on_one_and_two_threads(lambda: td0(mdp, np.zeros(7, dtype=int), episodes=50,
                                              n_step=2, runs=3, seed=12))
    np.testing.assert_array_equal(a.V, b.V)
    np.testing.assert_array_equal(a.episode_lengths, b.episode_lengths)
    assert a.V.shape == (3, 7) and a.episode_returns.shape == (3, 50)


def test_runs_are_split_only_along_their_axis():
    """``over_runs`` hands each thread a slice of every output's run axis; an output
    without one would be filled wrongly, so it is refused by name."""
    out = ControlOutputs(np.zeros((4, 3, 2)), np.zeros((4, 5)), np.zeros(5, dtype=np.int64))
    with pytest.raises(RuntimeError, match="lengths"):
        runs_slice(out, 4, 0, 2)
    head = runs_slice(out._replace(lengths=np.zeros((4, 5), dtype=np.int64)), 4, 1, 3)
    head.Q[:] = 1.0  # a view: the caller's rows 1 and 2 are filled
    assert out.Q[1:3].all() and not out.Q[0].any() and not out.Q[3].any()


@pytest.mark.parametrize("name", ALL_CONTROL)
def test_control_run_axis_follows_numpy_size_convention(name):
    """runs=None: no run axis; runs=n: a leading axis of length n, also for n = 1; run i
    is the same whatever n (every control learner of the library)."""
    mdp = model("tabzoo/Gridworld4x4-v0")
    learn = ALL_CONTROL[name]
    single = learn(mdp, episodes=30, seed=16)
    assert single.runs is None
    assert single.Q.shape == (16, 4) and single.policy.shape == (16,)
    assert single.episode_returns.shape == single.episode_lengths.shape == (30,)
    one = learn(mdp, episodes=30, seed=16, runs=1)
    assert one.runs == 1
    assert one.Q.shape == (1, 16, 4) and one.policy.shape == (1, 16)
    assert one.episode_returns.shape == one.episode_lengths.shape == (1, 30)
    three = learn(mdp, episodes=30, seed=16, runs=3)
    assert three.Q.shape == (3, 16, 4) and three.episode_lengths.shape == (3, 30)
    np.testing.assert_array_equal(one.Q[0], single.Q)
    np.testing.assert_array_equal(three.Q[0], single.Q)
    np.testing.assert_array_equal(three.run(0).Q, single.Q)
    np.testing.assert_array_equal(three.run(0).episode_lengths, single.episode_lengths)


def test_prediction_run_axis_and_optional_history():
    mdp = model("tabzoo/RandomWalk-v0")
    policy = np.zeros(7, dtype=int)
    single = td0(mdp, policy, episodes=20, n_step=2, seed=17)
    assert single.V.shape == (7,) and single.V_history is None
    assert single.episode_returns.shape == (20,)
    one = td0(mdp, policy, episodes=20, n_step=2, seed=17, runs=1, history=True)
    assert one.V.shape == (1, 7) and one.V_history.shape == (1, 20, 7)
    assert one.episode_lengths.shape == (1, 20)
    np.testing.assert_array_equal(one.V[0], single.V)
    np.testing.assert_array_equal(one.V_history[0, -1], single.V)
    three = td0(mdp, policy, episodes=20, n_step=2, seed=17, runs=3, history=True)
    assert three.V_history.shape == (3, 20, 7)
    np.testing.assert_array_equal(three.V_history[:1], one.V_history)
    np.testing.assert_array_equal(three.run(0).V, single.V)


# --------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs, name", [
    ({"alpha": 0.0}, "alpha"), ({"alpha": 1.5}, "alpha"), ({"alpha": float("nan")}, "alpha"),
    ({"epsilon": -0.1}, "epsilon"), ({"epsilon": 1.1}, "epsilon"),
    ({"gamma": 1.1}, "gamma"), ({"episodes": 0}, "episodes"), ({"runs": 0}, "runs"),
    ({"max_steps": 0}, "max_steps"), ({"episodes": 2.5}, "episodes"),
    ({"initial_Q": np.zeros((3, 3))}, "initial_Q"), ({"initial_Q": np.inf}, "initial_Q"),
])
@pytest.mark.parametrize("learn", CONTROL.values())
def test_bad_control_arguments_are_named(learn, kwargs, name):
    mdp = model("tabzoo/CliffWalking-v0")
    with pytest.raises(ValueError, match=name):
        learn(mdp, **kwargs)


def test_bad_prediction_arguments_are_named():
    mdp = model("tabzoo/Gridworld4x4-v0")
    with pytest.raises(ValueError, match="policy"):
        td0(mdp, np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="policy"):
        td0(mdp, np.full((16, 4), 0.5))
    with pytest.raises(ValueError, match="n_step"):
        td0(mdp, np.zeros(16, dtype=int), n_step=0)
    with pytest.raises(ValueError, match="initial_V"):
        td0(mdp, np.zeros(16, dtype=int), initial_V=np.zeros(4))


def test_an_env_without_a_transition_table_is_refused():
    with pytest.raises(TypeError, match="transition table"):
        q_learning(gym.make("CartPole-v1"))
    with pytest.raises(TypeError, match="mdp"):
        sarsa("CliffWalking")


def test_gymnasium_env_is_accepted_as_model():
    env = gym.make("tabzoo/CliffWalking-v0")
    a = q_learning(env, episodes=20, seed=13)
    b = q_learning(TabularMDP.from_gymnasium(env), episodes=20, seed=13)
    np.testing.assert_array_equal(a.Q, b.Q)
