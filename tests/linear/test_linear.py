"""Linear function approximation (tabular/linear), against its exact answers.

- One-hot features make every linear learner its tabular counterpart, bit for bit:
  semi-gradient TD is td0 (n = 1 and n = 3), gradient MC is every-visit constant-alpha
  mc_prediction, on the same seeds.
- The exact quantities keep the identities of chapters 9 and 11 on random MDPs and
  random features (hypothesis): VE(w_VE) <= VE(w) for any w; PBE(w_TD) = 0; BE >= PBE;
  VE(w_VE) <= VE(w_TD) <= VE(w_VE) / (1 - gamma^2) (eq. 9.14's bound 1/(1 - gamma),
  tightened by the Pythagorean step of its proof); lambda = 1 gives w_VE; one-hot
  features give v_pi.
- The sampled learners agree with the exact fixed points through their expected
  update: started at w_TD (w_VE for gradient MC) with a step size so small that the
  weights do not move, the sum of each run's TD (MC) errors times features is the
  update's expectation plus noise, so its mean over independent runs is 0 within 5
  standard errors, and clearly not 0 at weights 0.03 away.
- LSTD on a deterministic chain sees the expected sums themselves: it is w_TD to
  rounding.
- Control (chapter 10): with one-hot state-action features semi-gradient SARSA, n-step
  SARSA and differential SARSA are sarsa, n_step_sarsa and differential_sarsa bit for
  bit; on a small MDP the learned greedy policy is optimal (value iteration's values,
  evaluated exactly), and differential SARSA's on the access-control task earns the
  exact optimal gain to within the cost of its exploration.
- Off-policy on Baird's counterexample (chapter 11): one-step episodes from the
  behaviour's stationary start make every step an independent draw, so the mean over
  runs of off-policy TD's, TDC's and GTD2's weights (w and v) after t steps is the t-th
  exact expected iterate, within 5 standard errors. Emphatic TD's followon trace
  carries over steps, so it is compared at fixed weights: the mean summed update of
  4-step episodes is sum_t X^T diag(m_t) delta_w with m_0 = mu, m_t = mu + gamma P^T
  m_{t-1}, whose limit is the expected emphasis.
"""

import gymnasium as gym
import numpy as np
import pytest
from conftest import (
    WALK,
    WALK_GROUPS,
    WALK_POLICY,
    assert_learns_the_corridor,
    corridor,
    corridor_features,
    mean_update_z,
    pairs,
    slow_examples,
)
from hypothesis import assume, given
from hypothesis import strategies as st

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    TabularMDP,
    average_reward_solve,
    differential_sarsa,
    mc_prediction,
    n_step_sarsa,
    relative_value_iteration,
    sarsa,
    td0,
)
from tabular.envs import AccessControl, BairdCounterexample, RandomWalk
from tabular.linear import (
    bellman_error,
    bellman_error_vector,
    differential_semi_gradient_sarsa,
    emphatic_fixed_point,
    emphatic_td,
    expected_emphasis,
    expected_emphatic_td_update,
    expected_gtd2_update,
    expected_td_update,
    expected_tdc_update,
    fourier,
    gradient_mc,
    gtd2,
    lstd,
    n_step_semi_gradient_sarsa,
    off_policy_semi_gradient_td,
    one_hot,
    polynomial,
    projected_bellman_error,
    reward_process,
    semi_gradient_sarsa,
    semi_gradient_td,
    state_action_features,
    state_coordinates,
    td_fixed_point,
    tdc,
    tile_coding,
    value_error,
    ve_minimiser,
)
from tabular.rules.linear import action_values, average_reward_update
from tabular.testing import gammas, mdps, policies


@pytest.fixture(scope="module")
def walk_process():
    return reward_process(WALK, WALK_POLICY, gamma=1.0)


# ------------------------------------------------------------------ one-hot is tabular


@pytest.mark.parametrize("env_id", ["tabzoo/RandomWalk-v0", "tabzoo/Gridworld4x4-v0"])
@pytest.mark.parametrize("n_step", [1, 3])
def test_one_hot_semi_gradient_td_is_td0(env_id, n_step):
    mdp = TabularMDP.from_gymnasium(gym.make(env_id))
    pi = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    tabular = td0(mdp, pi, episodes=40, alpha=0.1, n_step=n_step, runs=3, seed=7,
                  history=True)
    linear = semi_gradient_td(mdp, pi, one_hot(mdp.n_states), episodes=40, alpha=0.1,
                              n_step=n_step, runs=3, seed=7, history=True)
    assert np.array_equal(linear.V, tabular.V)
    assert np.array_equal(linear.w_history, tabular.V_history)
    assert np.array_equal(linear.episode_lengths, tabular.episode_lengths)


@pytest.mark.parametrize("env_id", ["tabzoo/RandomWalk-v0", "tabzoo/Gridworld4x4-v0"])
def test_one_hot_gradient_mc_is_constant_alpha_mc(env_id):
    mdp = TabularMDP.from_gymnasium(gym.make(env_id))
    pi = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    tabular = mc_prediction(mdp, pi, episodes=40, alpha=0.05, first_visit=False, runs=3,
                            seed=7, history=True)
    linear = gradient_mc(mdp, pi, one_hot(mdp.n_states), episodes=40, alpha=0.05, runs=3,
                         seed=7, history=True)
    assert np.array_equal(linear.V, tabular.V)
    assert np.array_equal(linear.w_history, tabular.V_history)
    assert np.array_equal(linear.episode_returns, tabular.episode_returns)


def test_run_i_is_the_same_whatever_the_number_of_runs():
    many = semi_gradient_td(WALK, WALK_POLICY, WALK_GROUPS, episodes=30, runs=4, seed=3)
    one = semi_gradient_td(WALK, WALK_POLICY, WALK_GROUPS, episodes=30, runs=2, seed=3)
    assert np.array_equal(many.w[:2], one.w)
    assert np.array_equal(many.run(1).V, one.run(1).V)


# ------------------------------------------------------------------ exact identities


@st.composite
def problems(draw):
    """A random MDP and policy whose reward process exists, random features of full
    rank on the states the policy visits, and a discount below 1."""
    mdp = draw(mdps(max_states=12, max_actions=3, max_outcomes=3))
    policy = draw(policies(mdp))
    gamma = draw(gammas(max_gamma=0.95))
    try:
        process = reward_process(mdp, policy, gamma=gamma)
    except ValueError:  # episodes that never end, or several closed classes
        assume(False)
    on = process.mu > 0.0
    d = draw(st.integers(1, int(on.sum())))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.normal(size=(mdp.n_states, d))
    assume(np.linalg.matrix_rank(X[on]) == d)
    return process, X, rng


def scale(process):
    return 1.0 + float(np.max(np.abs(process.v[process.mu > 0.0]), initial=0.0)) ** 2


@given(problems())
@slow_examples(60)
def test_the_exact_quantities_keep_their_identities(problem):
    process, X, rng = problem
    tol = 1e-9 * scale(process)
    w_ve, w_td = ve_minimiser(process, X), td_fixed_point(process, X)
    ve_min, ve_td = value_error(process, X, w_ve), value_error(process, X, w_td)
    w = rng.normal(size=X.shape[1])
    assert ve_min <= value_error(process, X, w) + tol
    assert projected_bellman_error(process, X, w_td) <= tol
    assert projected_bellman_error(process, X, w) <= bellman_error(process, X, w) + tol
    assert ve_min <= ve_td + tol
    assert ve_td <= ve_min / (1.0 - process.gamma**2) + tol
    assert ve_td <= ve_min / (1.0 - process.gamma) + tol  # eq. 9.14 as the book states it
    on = process.mu > 0.0
    w_one = td_fixed_point(process, X, lam=1.0)
    assert np.allclose((X @ w_one)[on], (X @ w_ve)[on], rtol=0.0, atol=1e-7 * scale(process))


@given(problems())
@slow_examples(30)
def test_one_hot_fixed_points_are_v_pi(problem):
    process, _, _ = problem
    X = one_hot(process.n_states)
    on = process.mu > 0.0
    for w in (ve_minimiser(process, X), td_fixed_point(process, X),
              td_fixed_point(process, X, lam=0.5)):
        assert np.allclose(w[on], process.v[on], rtol=0.0, atol=1e-8 * scale(process))
    assert bellman_error(process, X, process.v * on) <= 1e-12 * scale(process)


def test_mu_is_the_distribution_of_visits(walk_process):
    """eq. 9.2-9.3 on the walk: a distribution, peaked at the start state (as Figure 9.1
    shows), 0 on the end states, and the visits a simulation counts."""
    mu = walk_process.mu
    assert mu.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.argmax(mu) == np.argmax(WALK.start)
    assert mu[0] == 0.0 and mu[-1] == 0.0
    lengths = gradient_mc(WALK, WALK_POLICY, WALK_GROUPS, episodes=4000, runs=1).episode_lengths
    expected_length = 1.0 / (walk_process.mu * (1.0 - walk_process.P.sum(axis=1))).sum()
    # eta sums to the expected episode length; its sampled mean is within 5 standard errors
    assert abs(lengths.mean() - expected_length) < 5 * lengths.std() / np.sqrt(lengths.size)


def test_a_continuing_chain_weighs_its_stationary_distribution():
    # two states that swap with probability 0.25 each step: stationary (1/2, 1/2) whatever
    # the start, and no episode ends
    mdp = TabularMDP.from_dense(np.array([[[0.75, 0.25]], [[0.25, 0.75]]]),
                                np.array([[[1.0, 0.0]], [[0.0, 0.0]]]),
                                start=np.array([1.0, 0.0]))
    process = reward_process(mdp, np.zeros(2, dtype=np.int64), gamma=0.9)
    assert not process.episodic
    assert np.allclose(process.mu, [0.5, 0.5], atol=1e-12)


# ------------------------------------------------------------------ sampled vs exact




@pytest.mark.parametrize("learner, fixed_point", [(semi_gradient_td, td_fixed_point),
                                                  (gradient_mc, ve_minimiser)])
def test_the_expected_update_vanishes_at_the_exact_fixed_point(walk_process, learner,
                                                               fixed_point):
    w_star = fixed_point(walk_process, WALK_GROUPS)
    assert np.abs(mean_update_z(learner, w_star)).max() < 5.0
    assert np.abs(mean_update_z(learner, w_star + 0.03)).max() > 5.0


def test_lstd_on_a_deterministic_chain_is_the_td_fixed_point():
    # a corridor walked right to its end: every episode is the same, so LSTD's sums are
    # the episode count times the expected ones
    S = 6
    nxt = np.minimum(np.arange(S) + 1, S - 1)[:, None, None]
    done = (nxt == S - 1)
    reward = np.where(done, 1.0, -0.1)
    start = np.zeros(S)
    start[0] = 1.0
    mdp = TabularMDP(nxt, np.ones((S, 1, 1)), reward, done, start)
    X = polynomial(state_coordinates(mdp), 2)
    process = reward_process(mdp, np.zeros(S, dtype=np.int64), gamma=0.9)
    result = lstd(mdp, np.zeros(S, dtype=np.int64), X, gamma=0.9, episodes=3, epsilon=1e-12)
    assert np.allclose(result.w, td_fixed_point(process, X), rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------ features


def test_feature_constructors_have_their_shapes():
    coords = np.linspace(0.0, 1.0, 11)[:, None]
    assert polynomial(coords, 3).shape == (11, 4)
    assert np.array_equal(polynomial(coords, 0), np.ones((11, 1)))
    assert fourier(coords, 5).shape == (11, 6)
    assert np.allclose(fourier(coords, 1)[:, 1], np.cos(np.pi * coords[:, 0]))
    tiles = tile_coding(np.c_[coords, coords[::-1]], tilings=4, tiles=3)
    assert tiles.shape == (11, 4 * 16)
    assert np.array_equal(tiles.sum(axis=1), np.full(11, 4.0))  # one tile per tiling
    grid = TabularMDP.from_gymnasium(gym.make("tabzoo/Gridworld4x4-v0"))
    c = state_coordinates(grid)
    assert c.shape == (grid.n_states, 2) and c.min() == 0.0 and c.max() == 1.0


def test_the_1000_state_walk_is_antisymmetric():
    mdp = RandomWalk(1000, jump=100, left_reward=-1.0).model()
    assert mdp.n_outcomes == 200 and np.argmax(mdp.start) == 500
    process = reward_process(mdp, np.zeros(mdp.n_states, dtype=np.int64), gamma=1.0)
    assert np.allclose(process.v[1:-1], -process.v[1:-1][::-1], atol=1e-10)


# ------------------------------------------------------------------ control




@pytest.mark.parametrize("env_id", ["tabzoo/CliffWalking-v0", "tabzoo/WindyGridworld-v0"])
def test_one_hot_semi_gradient_sarsa_is_sarsa(env_id):
    mdp = TabularMDP.from_gymnasium(gym.make(env_id))
    tabular = sarsa(mdp, episodes=40, alpha=0.5, epsilon=0.1, runs=3, seed=7)
    linear = semi_gradient_sarsa(mdp, pairs(mdp), episodes=40, alpha=0.5, epsilon=0.1, runs=3,
                                 seed=7)
    assert np.array_equal(linear.Q, tabular.Q)
    assert np.array_equal(linear.episode_returns, tabular.episode_returns)
    assert np.array_equal(linear.episode_lengths, tabular.episode_lengths)


@pytest.mark.parametrize("n_step", [1, 4])
def test_one_hot_n_step_semi_gradient_sarsa_is_n_step_sarsa(n_step):
    mdp = TabularMDP.from_gymnasium(gym.make("tabzoo/CliffWalking-v0"))
    tabular = n_step_sarsa(mdp, n_step=n_step, episodes=40, alpha=0.3, epsilon=0.1, runs=3,
                           seed=5)
    linear = n_step_semi_gradient_sarsa(mdp, pairs(mdp), n_step=n_step, episodes=40, alpha=0.3,
                                        epsilon=0.1, runs=3, seed=5)
    assert np.array_equal(linear.Q, tabular.Q)
    assert np.array_equal(linear.episode_lengths, tabular.episode_lengths)
    if n_step == 1:  # n = 1 is one-step semi-gradient SARSA, draw for draw
        one = semi_gradient_sarsa(mdp, pairs(mdp), episodes=40, alpha=0.3, epsilon=0.1,
                                  runs=3, seed=5)
        assert np.array_equal(one.w, linear.w)


def test_one_hot_differential_semi_gradient_sarsa_is_differential_sarsa():
    mdp = AccessControl(n_servers=3).model()
    tabular = differential_sarsa(mdp, steps=20_000, alpha=0.1, alpha_average=0.02,
                                 epsilon=0.1, runs=2, seed=3)
    linear = differential_semi_gradient_sarsa(mdp, pairs(mdp), steps=20_000, alpha=0.1,
                                              beta=0.02, epsilon=0.1, runs=2, seed=3)
    assert np.array_equal(linear.Q, tabular.Q)
    assert np.array_equal(linear.average_reward, tabular.average_reward)
    assert np.array_equal(linear.reward_rate, tabular.reward_rate)
    assert np.array_equal(linear.run(1).policy, tabular.run(1).policy)


def test_state_action_features_are_one_block_per_action():
    X = np.arange(6.0).reshape(3, 2)
    F = state_action_features(X, 2)
    assert F.shape == (3, 2, 4)
    assert np.array_equal(F[:, 0, :2], X) and np.array_equal(F[:, 1, 2:], X)
    assert not F[:, 0, 2:].any() and not F[:, 1, :2].any()
    w = np.array([1.0, 2.0, 3.0, 4.0])  # w.reshape(A, d): one weight vector per action
    assert np.allclose(F @ w, X @ w.reshape(2, 2).T)


def test_the_control_rules_are_the_linear_estimate_and_eq_10_10s_step():
    rng = np.random.default_rng(0)
    x_rows, w = rng.normal(size=(3, 5)), rng.normal(size=5)
    x_rows[1, 2] = 0.0  # a zero feature is skipped, not read
    out = np.zeros(3)
    action_values(x_rows, w, out)
    assert np.allclose(out, x_rows @ w, rtol=0.0, atol=1e-12)
    assert average_reward_update(2.0, 0.5, 0.1) == 2.0 + 0.1 * 0.5








def test_semi_gradient_sarsa_learns_the_optimal_policy_of_a_small_mdp():
    """On the corridor, with enough episodes every run's greedy policy is optimal. With
    tile-coded (shared) features too: coarse state features are enough to order the two
    actions."""
    mdp = corridor()
    for F in corridor_features(mdp):
        result = semi_gradient_sarsa(mdp, F, episodes=300, alpha=0.1 / F[0, 0].sum(),
                                     epsilon=0.1, runs=3, seed=1)
        assert_learns_the_corridor(mdp, result, 3)


def test_differential_sarsa_on_access_control_earns_the_optimal_gain():
    """The learned greedy policy's exact gain loses less than exploring with epsilon = 0.1
    costs the optimal policy (rho* minus the gain of epsilon-greedy on the optimum)."""
    mdp = AccessControl().model()
    exact = relative_value_iteration(mdp, tol=1e-10)
    learned = differential_semi_gradient_sarsa(mdp, pairs(mdp), steps=200_000, alpha=0.01,
                                               beta=0.01, epsilon=0.1, runs=2, seed=0)
    best = exact.Q == exact.Q.max(axis=1, keepdims=True)
    soft = 0.05 + 0.9 * best / best.sum(axis=1, keepdims=True)
    exploring = exact.rho - average_reward_solve(mdp, soft).rho
    for i in range(2):
        gain = average_reward_solve(mdp, learned.policy[i]).rho
        assert gain <= exact.rho + 1e-10
        assert exact.rho - gain < exploring




def test_a_policy_that_never_ends_its_episode_is_refused():
    # state 1 loops on itself forever; state 0 ends or moves to 1
    mdp = TabularMDP(np.array([[[0, 1]], [[1, 1]]]), np.array([[[0.5, 0.5]], [[1.0, 0.0]]]),
                     np.zeros((2, 1, 2)), np.array([[[True, False]], [[False, False]]]),
                     np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="never ends"):
        reward_process(mdp, np.zeros(2, dtype=np.int64), gamma=0.9)


# ------------------------------------------------------------------ off-policy: Baird


def test_off_policy_td_on_policy_is_semi_gradient_td():
    pi = np.full((WALK.n_states, 1), 1.0)
    on = semi_gradient_td(WALK, pi, WALK_GROUPS, episodes=30, alpha=0.01, runs=2, seed=5)
    off = off_policy_semi_gradient_td(WALK, pi, pi, WALK_GROUPS, episodes=30, alpha=0.01,
                                      runs=2, seed=5)
    assert np.array_equal(on.w, off.w)


def test_baird_sampled_mean_follows_the_exact_expected_update():
    """One-step episodes from the uniform start are independent draws of the behaviour's
    stationary transitions, so E[w_t] is the t-th expected iterate exactly."""
    B = BairdCounterexample
    mdp, X = B.model(), B.features()
    target = reward_process(mdp, B.TARGET, gamma=0.99)
    mu_b = reward_process(mdp, B.BEHAVIOUR, gamma=0.99).mu
    assert np.allclose(mu_b, 1.0 / 7.0, atol=1e-12)
    result = off_policy_semi_gradient_td(mdp, B.TARGET, B.BEHAVIOUR, X, gamma=0.99,
                                         episodes=300, max_steps=1, alpha=0.01,
                                         initial_w=B.INITIAL_WEIGHTS, runs=100, history=True)
    w = B.INITIAL_WEIGHTS.copy()
    for _ in range(300):
        w = w + 0.01 * expected_td_update(target, X, w, mu=mu_b)
    sampled = result.w_history[:, -1]
    z = np.abs(sampled.mean(axis=0) - w) / (sampled.std(axis=0, ddof=1) / 10.0)
    assert z.max() < 5.0
    assert np.abs(w).max() > 2 * np.abs(B.INITIAL_WEIGHTS).max()  # diverging already


def test_off_policy_td_needs_coverage():
    B = BairdCounterexample
    with pytest.raises(ValueError, match=r"never takes action 1 \(solid\) in state 0"):
        off_policy_semi_gradient_td(B.model(), B.TARGET, np.tile([1.0, 0.0], (7, 1)),
                                    B.features())


def test_expected_td_update_refuses_a_bad_distribution():
    B = BairdCounterexample
    process = reward_process(B.model(), B.TARGET, gamma=0.99)
    with pytest.raises(ValueError, match="mu must be a distribution"):
        expected_td_update(process, B.features(), B.INITIAL_WEIGHTS, mu=np.full(7, 0.5))


BAIRD_STEPS, BAIRD_RUNS = 300, 100


@pytest.fixture(scope="module")
def baird():
    B = BairdCounterexample
    mdp = B.model()
    return (B, mdp, B.features(), reward_process(mdp, B.TARGET, gamma=0.99),
            reward_process(mdp, B.BEHAVIOUR, gamma=0.99).mu)


def z_scores(samples, expected):
    """``|mean - expected|`` in standard errors of the mean, per component."""
    se = samples.std(axis=0, ddof=1) / np.sqrt(samples.shape[0])
    return np.abs(samples.mean(axis=0) - expected) / se


@pytest.mark.parametrize("learner, expected_update", [(tdc, expected_tdc_update),
                                                      (gtd2, expected_gtd2_update)])
def test_gradient_td_sampled_mean_follows_the_exact_expected_update(baird, learner,
                                                                    expected_update):
    """Each step's update is linear in (w, v) with coefficients drawn independently of
    them, so E[(w_t, v_t)] is exactly the t-th iterate of the expected update."""
    B, mdp, X, target, mu_b = baird
    alpha, beta = 0.005, 0.05
    result = learner(mdp, B.TARGET, B.BEHAVIOUR, X, gamma=0.99, episodes=BAIRD_STEPS,
                     max_steps=1, alpha=alpha, beta=beta, initial_w=B.INITIAL_WEIGHTS,
                     runs=BAIRD_RUNS, history=True)
    w, v = B.INITIAL_WEIGHTS.copy(), np.zeros(8)
    for t in range(BAIRD_STEPS):
        if t == 100:
            assert z_scores(result.w_history[:, t - 1], w).max() < 5.0
        dw, dv = expected_update(target, X, w, v, mu=mu_b)
        w, v = w + alpha * dw, v + beta * dv
    assert z_scores(result.w, w).max() < 5.0
    assert z_scores(result.secondary_weights, v).max() < 5.0
    assert np.array_equal(result.w_history[:, -1], result.w)


def test_tdc_is_gtd2_plus_its_secondary_update(baird):
    """TDC's expected w-step minus GTD2's is X^T D (delta - X v), the expected v-step."""
    B, _, X, target, mu_b = baird
    v = np.linspace(-1.0, 1.0, 8)
    tdc_w, tdc_v = expected_tdc_update(target, X, B.INITIAL_WEIGHTS, v, mu=mu_b)
    gtd2_w, gtd2_v = expected_gtd2_update(target, X, B.INITIAL_WEIGHTS, v, mu=mu_b)
    assert np.array_equal(tdc_v, gtd2_v)
    assert np.allclose(tdc_w - gtd2_w, tdc_v, rtol=0.0, atol=1e-12)


@given(problems())
@slow_examples(30)
def test_the_off_policy_fixed_points_are_where_the_expected_updates_vanish(problem):
    process, X, rng = problem
    tol = 1e-7 * scale(process) * (1.0 + np.abs(X).max()) ** 2
    w_td = td_fixed_point(process, X)
    zero = np.zeros(X.shape[1])
    for update in (expected_tdc_update, expected_gtd2_update):
        dw, dv = update(process, X, w_td, zero)
        assert np.abs(dw).max() <= tol and np.abs(dv).max() <= tol
    m = expected_emphasis(process)
    assert np.allclose(m, process.mu + process.gamma * process.P.T @ m, rtol=0.0, atol=1e-10)
    w_e = emphatic_fixed_point(process, X)
    assert np.abs(expected_emphatic_td_update(process, X, w_e)).max() <= tol


def test_emphatic_td_one_step_episodes_are_off_policy_td(baird):
    B, mdp, X, _, _ = baird
    options = dict(gamma=0.99, episodes=50, max_steps=1, alpha=0.01,
                   initial_w=B.INITIAL_WEIGHTS, runs=3, seed=4)
    assert np.array_equal(emphatic_td(mdp, B.TARGET, B.BEHAVIOUR, X, **options).w,
                          off_policy_semi_gradient_td(mdp, B.TARGET, B.BEHAVIOUR, X,
                                                      **options).w)


def test_emphatic_td_sampled_update_is_the_exact_expected_one(baird):
    """At fixed weights (alpha so small they do not move) each 4-step episode from the
    stationary start adds sum_t M_t rho_t delta_t x_t, whose expectation is
    sum_t X^T diag(m_t) delta_w: m_t = mu(s) E[M_t | S_t = s] follows m_0 = mu,
    m_t = mu + gamma P^T m_{t-1} (eq. 11.24 in expectation). Its mean over runs is
    within 5 standard errors; its limit in t is the expected emphasis."""
    B, mdp, X, target, mu_b = baird
    T, episodes, runs, alpha = 4, 500, 200, 1e-9
    result = emphatic_td(mdp, B.TARGET, B.BEHAVIOUR, X, gamma=0.99, episodes=episodes,
                         max_steps=T, alpha=alpha, initial_w=B.INITIAL_WEIGHTS, runs=runs,
                         seed=2)
    g = (result.w - B.INITIAL_WEIGHTS) / (alpha * episodes)
    m_t, total = mu_b.copy(), np.zeros(X.shape[0])
    for _ in range(T):
        total += m_t
        m_t = mu_b + 0.99 * target.P.T @ m_t
    delta = bellman_error_vector(target, X, B.INITIAL_WEIGHTS)
    assert z_scores(g, X.T @ (total * delta)).max() < 5.0
    assert z_scores(g, X.T @ (T * mu_b * delta)).max() > 5.0  # the emphasis matters
    for _ in range(5000):
        m_t = mu_b + 0.99 * target.P.T @ m_t
    assert np.allclose(m_t, expected_emphasis(target, mu=mu_b), rtol=1e-12, atol=0.0)
