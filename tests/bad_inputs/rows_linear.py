"""The bad-input rows of :mod:`tabular.linear` (the catalogue's linear block, run by
``test_bad_inputs.py``): one row per parameter a user can get wrong, each
``(name, call, exception type, fragment of the message)``."""

from functools import partial

import gymnasium as gym
import numpy as np
from conftest import WALK, WALK_GROUPS, WALK_POLICY, option_rows, pairs

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import TabularMDP, linear
from tabular.envs import AccessControl, RandomWalk

NAN = float("nan")
#: A continuing two-state chain: at gamma = 1 its followon trace grows without bound.
LOOP = (TabularMDP.from_dense(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.zeros((2, 1, 2)),
                              start=np.array([1.0, 0.0])), np.zeros(2, dtype=np.int64))


def linear_learner_on(*args):
    """For :func:`option_rows`: the learner of :mod:`tabular.linear` that an id names
    (``"linear.<learner>"``), its first arguments ``args``."""
    return lambda name: partial(getattr(linear, name.removeprefix("linear.")), *args)


#: The prediction learners' options, each wrong in one way (rows of conftest's option_rows,
#: on the walk): ``(id, the options, fragment of the ValueError)``.
WALK_OPTION_BAD = [
    ("linear.semi_gradient_td alpha 0", {"alpha": 0.0}, "alpha"),
    ("linear.gradient_mc alpha text", {"alpha": "0.1"}, "alpha"),
    ("linear.semi_gradient_td n_step 0", {"n_step": 0}, "n_step"),
    ("linear.gradient_mc history text", {"history": "yes"}, "history must be True or False"),
    ("linear.semi_gradient_td history 1", {"history": 1}, "history must be True or False"),
    ("linear.gradient_mc initial_w shape", {"initial_w": np.zeros(3)}, "initial_w"),
    ("linear.lstd epsilon 0", {"epsilon": 0.0}, "epsilon"),
    ("linear.semi_gradient_td_lambda lam 2", {"lam": 2.0}, "lam"),
    ("linear.semi_gradient_td_lambda lam NaN", {"lam": NAN}, "lam"),
    ("linear.semi_gradient_td_lambda alpha 0", {"alpha": 0.0}, "alpha"),
    ("linear.semi_gradient_td_lambda history text", {"history": "yes"},
     "history must be True or False"),
    ("linear.true_online_linear_td_lambda lam -0.1", {"lam": -0.1}, "lam"),
    ("linear.true_online_linear_td_lambda initial_w shape", {"initial_w": np.zeros(3)},
     "initial_w"),
    ("linear.true_online_linear_td_lambda alpha text", {"alpha": "0.1"}, "alpha"),
    ("linear.true_online_linear_td_lambda runs 0", {"runs": 0}, "runs"),
]


def bad_rows():
    p = linear.reward_process(WALK, WALK_POLICY, gamma=1.0)
    X = WALK_GROUPS
    return [
        ("linear.semi_gradient_td features shape",
         lambda: linear.semi_gradient_td(WALK, WALK_POLICY, X[:-1]), ValueError,
         "shape [102, d]"),
        ("linear.gradient_mc features NaN",
         lambda: linear.gradient_mc(WALK, WALK_POLICY, np.where(X == 1, NAN, X)),
         ValueError, "features[0]"),
        ("linear.lstd features bool",
         lambda: linear.lstd(WALK, WALK_POLICY, X.astype(bool)), ValueError, "real numbers"),
        ("linear.semi_gradient_td diverging alpha",
         lambda: linear.semi_gradient_td(WALK, WALK_POLICY, 1e3 * X, alpha=1.0, episodes=20),
         FloatingPointError, "lower alpha"),
        ("linear.value_error w shape",
         lambda: linear.value_error(p, X, np.zeros(3)), ValueError, "shape [10]"),
        ("linear.bellman_error w NaN",
         lambda: linear.bellman_error(p, X, np.full(10, NAN)), ValueError, "w[0]"),
        ("linear.td_fixed_point lam 2",
         lambda: linear.td_fixed_point(p, X, lam=2.0), ValueError, "lam must be"),
        ("linear.reward_process gamma 1.5",
         lambda: linear.reward_process(WALK, WALK_POLICY, gamma=1.5), ValueError,
         "gamma"),
        ("linear.reward_process policy action 3",
         lambda: linear.reward_process(WALK, np.full(102, 3), gamma=1.0),
         ValueError, "not an action"),
        ("linear.state_aggregation groups gap",
         lambda: linear.state_aggregation(np.array([0, 2])), ValueError, "group 1"),
        ("linear.state_aggregation groups float",
         lambda: linear.state_aggregation(np.array([0.0, 1.0])), ValueError,
         "int array"),
        ("linear.polynomial coordinates beyond 1",
         lambda: linear.polynomial(np.array([0.0, 2.0]), 2), ValueError,
         "coordinates[1]"),
        ("linear.polynomial order -1", lambda: linear.polynomial(np.array([0.5]), -1), ValueError,
         "order"),
        ("linear.fourier order too big",
         lambda: linear.fourier(np.full((2, 6), 0.5), 40), ValueError, "features"),
        ("linear.tile_coding tilings 0",
         lambda: linear.tile_coding(np.array([0.5]), tilings=0, tiles=4), ValueError,
         "tilings"),
        ("linear.one_hot huge", lambda: linear.one_hot(10**5), ValueError, "GiB"),
        ("RandomWalk jump beyond", lambda: RandomWalk(5, jump=6), ValueError, "jump"),
        ("RandomWalk too big", lambda: RandomWalk(10**6, jump=100), ValueError, "GiB"),
        ("linear.bellman_error_vector X shape",
         lambda: linear.bellman_error_vector(p, X[:3], np.zeros(10)),
         ValueError, "shape [102, d]"),
        ("linear.projected_bellman_error w text", lambda: linear.projected_bellman_error(p, X, "w"),
         ValueError, "w"),
        ("linear.expected_td_update mu not a distribution", lambda: linear.expected_td_update(
            p, X, np.zeros(10), mu=np.full(102, 2.0)), ValueError, "mu"),
        ("linear.ve_minimiser X NaN", lambda: linear.ve_minimiser(p, np.full_like(X, NAN)),
         ValueError, "features[0]"),
        ("linear.off_policy_semi_gradient_td behaviour shape",
         lambda: linear.off_policy_semi_gradient_td(WALK, WALK_POLICY, np.ones((5, 1)), X),
         ValueError, "behaviour_policy"),
        ("linear.off_policy_semi_gradient_td history text",
         lambda: linear.off_policy_semi_gradient_td(
             WALK, WALK_POLICY, WALK_POLICY, X, history="yes"),
         ValueError, "history must be True or False"),
        ("linear.tdc beta 0", lambda: linear.tdc(WALK, WALK_POLICY, WALK_POLICY, X, beta=0.0),
         ValueError, "beta"),
        ("linear.tdc initial_v shape",
         lambda: linear.tdc(WALK, WALK_POLICY, WALK_POLICY, X, initial_v=np.zeros(3)),
         ValueError, "initial_v"),
        ("linear.gtd2 alpha negative",
         lambda: linear.gtd2(WALK, WALK_POLICY, WALK_POLICY, X, alpha=-1.0), ValueError, "alpha"),
        ("linear.gtd2 behaviour shape", lambda: linear.gtd2(WALK, WALK_POLICY, np.ones((5, 1)), X),
         ValueError, "behaviour_policy"),
        ("linear.gtd2 history text",
         lambda: linear.gtd2(WALK, WALK_POLICY, WALK_POLICY, X, history="yes"), ValueError,
         "history must be True or False"),
        ("linear.emphatic_td alpha text",
         lambda: linear.emphatic_td(WALK, WALK_POLICY, WALK_POLICY, X, alpha="0.1"),
         ValueError, "alpha"),
        ("linear.emphatic_td initial_w NaN", lambda: linear.emphatic_td(
            WALK, WALK_POLICY, WALK_POLICY, X, initial_w=NAN), ValueError, "initial_w"),
        ("linear.emphatic_td diverging alpha", lambda: linear.emphatic_td(
            WALK, WALK_POLICY, WALK_POLICY, 1e3 * X, alpha=1.0, episodes=20),
         FloatingPointError, "lower alpha"),
        ("linear.expected_tdc_update v shape",
         lambda: linear.expected_tdc_update(p, X, np.zeros(10), np.zeros(3)), ValueError, "v must"),
        ("linear.expected_tdc_update w NaN",
         lambda: linear.expected_tdc_update(p, X, np.full(10, NAN), np.zeros(10)),
         ValueError, "w[0]"),
        ("linear.expected_gtd2_update v NaN",
         lambda: linear.expected_gtd2_update(p, X, np.zeros(10), np.full(10, NAN)), ValueError,
         "v[0]"),
        ("linear.expected_gtd2_update mu not a distribution", lambda: linear.expected_gtd2_update(
            p, X, np.zeros(10), np.zeros(10), mu=np.full(102, 2.0)), ValueError, "mu"),
        ("linear.expected_emphasis mu shape",
         lambda: linear.expected_emphasis(p, mu=np.ones(3) / 3), ValueError, "mu"),
        ("linear.expected_emphasis no finite followon", lambda: linear.expected_emphasis(
            linear.reward_process(*LOOP, gamma=1.0)), ValueError, "expected emphasis"),
        ("linear.expected_emphatic_td_update X shape",
         lambda: linear.expected_emphatic_td_update(p, X[:3], np.zeros(10)), ValueError,
         "shape [102, d]"),
        ("linear.expected_emphatic_td_update w text",
         lambda: linear.expected_emphatic_td_update(p, X, "w"), ValueError, "w"),
        ("linear.emphatic_fixed_point X NaN", lambda: linear.emphatic_fixed_point(
            p, np.full_like(X, NAN)), ValueError, "features[0]"),
        ("linear.emphatic_fixed_point mu negative", lambda: linear.emphatic_fixed_point(
            p, X, mu=np.r_[-1.0, np.full(101, 2.0 / 101)]), ValueError, "mu"),
        ("linear.state_coordinates on a string",
         lambda: linear.state_coordinates("walk"), TypeError, "mdp"),
        ("linear.semi_gradient_td_lambda features shape",
         lambda: linear.semi_gradient_td_lambda(WALK, WALK_POLICY, X[:-1]), ValueError,
         "shape [102, d]"),
        ("linear.semi_gradient_td_lambda diverging alpha",
         lambda: linear.semi_gradient_td_lambda(WALK, WALK_POLICY, 1e3 * X, alpha=1.0, episodes=20),
         FloatingPointError, "lower alpha"),
        ("linear.true_online_linear_td_lambda policy shape",
         lambda: linear.true_online_linear_td_lambda(WALK, np.ones((5, 1)), X),
         ValueError, "policy"),
        ("linear.true_online_linear_td_lambda diverging alpha",
         lambda: linear.true_online_linear_td_lambda(WALK, WALK_POLICY, 1e3 * X, alpha=1.0,
                                                     episodes=20),
         FloatingPointError, "lower alpha"),
        *control_bad_rows(),
    ] + list(option_rows(WALK_OPTION_BAD, linear_learner_on(WALK, WALK_POLICY, WALK_GROUPS)))


#: The control learners' options, each wrong in one way (rows of conftest's option_rows, on
#: the 4x4 gridworld with one-hot pair features): ``(id, the options, fragment of the
#: ValueError)``.
GRID_OPTION_BAD = [
    ("linear.semi_gradient_sarsa gamma 2", {"gamma": 2.0}, "gamma"),
    ("linear.semi_gradient_sarsa episodes 0", {"episodes": 0}, "episodes"),
    ("linear.semi_gradient_sarsa alpha -1", {"alpha": -1.0}, "alpha"),
    ("linear.semi_gradient_sarsa epsilon 2", {"epsilon": 2.0}, "epsilon"),
    ("linear.semi_gradient_sarsa initial_w shape", {"initial_w": np.zeros(3)}, "initial_w"),
    ("linear.semi_gradient_sarsa seed -1", {"seed": -1}, "seed"),
    ("linear.semi_gradient_sarsa runs 0", {"runs": 0}, "runs"),
    ("linear.semi_gradient_sarsa max_steps 0", {"max_steps": 0}, "max_steps"),
    ("linear.n_step_semi_gradient_sarsa n_step 0", {"n_step": 0}, "n_step"),
    ("linear.n_step_semi_gradient_sarsa gamma NaN", {"gamma": NAN}, "gamma"),
    ("linear.n_step_semi_gradient_sarsa episodes text", {"episodes": "5"}, "episodes"),
    ("linear.n_step_semi_gradient_sarsa alpha 0", {"alpha": 0.0}, "alpha"),
    ("linear.n_step_semi_gradient_sarsa epsilon -0.1", {"epsilon": -0.1}, "epsilon"),
    ("linear.n_step_semi_gradient_sarsa initial_w NaN", {"initial_w": NAN}, "initial_w"),
    ("linear.n_step_semi_gradient_sarsa seed 1.5", {"seed": 1.5}, "seed"),
    ("linear.n_step_semi_gradient_sarsa runs True", {"runs": True}, "runs"),
    ("linear.n_step_semi_gradient_sarsa max_steps huge", {"max_steps": 10**9}, "max_steps"),
    ("linear.semi_gradient_sarsa_lambda lam 2", {"lam": 2.0}, "lam"),
    ("linear.semi_gradient_sarsa_lambda lam NaN", {"lam": NAN}, "lam"),
    ("linear.semi_gradient_sarsa_lambda trace dutch", {"trace": "dutch"},
     "trace must be one of 'accumulating', 'replacing'"),
    ("linear.semi_gradient_sarsa_lambda trace 1", {"trace": 1}, "trace must be"),
    ("linear.semi_gradient_sarsa_lambda trace Clearing", {"trace": "Clearing"},
     "trace must be one of 'accumulating', 'replacing', 'clearing', got 'Clearing'"),
    ("linear.semi_gradient_sarsa_lambda alpha 0", {"alpha": 0.0}, "alpha"),
    ("linear.semi_gradient_sarsa_lambda epsilon 2", {"epsilon": 2.0}, "epsilon"),
    ("linear.semi_gradient_sarsa_lambda initial_w shape", {"initial_w": np.zeros(3)}, "initial_w"),
    ("linear.semi_gradient_sarsa_lambda runs 0", {"runs": 0}, "runs"),
    ("linear.true_online_linear_sarsa_lambda lam -0.1", {"lam": -0.1}, "lam"),
    ("linear.true_online_linear_sarsa_lambda gamma 2", {"gamma": 2.0}, "gamma"),
    ("linear.true_online_linear_sarsa_lambda alpha text", {"alpha": "0.1"}, "alpha"),
    ("linear.true_online_linear_sarsa_lambda seed -1", {"seed": -1}, "seed"),
    ("linear.true_online_linear_sarsa_lambda max_steps 0", {"max_steps": 0}, "max_steps"),
]


def control_bad_rows():
    """The rows of the control learners and their features (one per parameter)."""
    grid = TabularMDP.from_gymnasium(gym.make("tabzoo/Gridworld4x4-v0"))
    F = pairs(grid)
    ring = AccessControl(n_servers=2).model()
    G = pairs(ring)
    return [
        ("linear.state_action_features X NaN",
         lambda: linear.state_action_features(np.full((2, 3), NAN), 2), ValueError, "X[0]"),
        ("linear.state_action_features X 1-d",
         lambda: linear.state_action_features(np.zeros(3), 2), ValueError, "shape [3, d]"),
        ("linear.state_action_features n_actions 0",
         lambda: linear.state_action_features(np.eye(2), 0), ValueError, "n_actions"),
        ("linear.state_action_features huge",
         lambda: linear.state_action_features(np.eye(10**4), 10), ValueError, "GiB"),
        ("linear.semi_gradient_sarsa features [S, d]",
         lambda: linear.semi_gradient_sarsa(grid, linear.one_hot(16)),
         ValueError, "shape [16, 4, d]"),
        ("linear.semi_gradient_sarsa features NaN",
         lambda: linear.semi_gradient_sarsa(grid, np.where(F == 1, NAN, F)), ValueError,
         "features[0, 0]"),
        ("linear.semi_gradient_sarsa features bool",
         lambda: linear.semi_gradient_sarsa(grid, F.astype(bool)), ValueError, "real numbers"),
        ("linear.semi_gradient_sarsa mdp text", lambda: linear.semi_gradient_sarsa("grid", F),
         TypeError, "mdp"),
        ("linear.semi_gradient_sarsa diverging alpha",
         lambda: linear.semi_gradient_sarsa(grid, 1e3 * F, alpha=1.0, episodes=20),
         FloatingPointError, "lower alpha"),
        ("linear.n_step_semi_gradient_sarsa features shape",
         lambda: linear.n_step_semi_gradient_sarsa(grid, F[:, :2]), ValueError, "shape [16, 4, d]"),
        ("linear.n_step_semi_gradient_sarsa mdp text",
         lambda: linear.n_step_semi_gradient_sarsa("grid", F), TypeError, "mdp"),
        ("linear.semi_gradient_sarsa_lambda replacing, features not binary",
         lambda: linear.semi_gradient_sarsa_lambda(grid, 0.5 * F, trace="replacing"), ValueError,
         "features[0, 0] holds values other than 0 and 1: trace='replacing' needs binary"),
        ("linear.semi_gradient_sarsa_lambda clearing, features not binary",
         lambda: linear.semi_gradient_sarsa_lambda(grid, 0.5 * F, trace="clearing"), ValueError,
         "features[0, 0] holds values other than 0 and 1: trace='clearing' needs binary"),
        ("linear.semi_gradient_sarsa_lambda features shape",
         lambda: linear.semi_gradient_sarsa_lambda(grid, F[:, :2]), ValueError, "shape [16, 4, d]"),
        ("linear.semi_gradient_sarsa_lambda mdp text",
         lambda: linear.semi_gradient_sarsa_lambda("grid", F), TypeError, "mdp"),
        ("linear.semi_gradient_sarsa_lambda diverging alpha",
         lambda: linear.semi_gradient_sarsa_lambda(grid, 1e3 * F, alpha=1.0, episodes=20),
         FloatingPointError, "semi_gradient_sarsa_lambda diverged"),
        ("linear.true_online_linear_sarsa_lambda features [S, d]",
         lambda: linear.true_online_linear_sarsa_lambda(grid, linear.one_hot(16)), ValueError,
         "shape [16, 4, d]"),
        ("linear.true_online_linear_sarsa_lambda diverging alpha",
         lambda: linear.true_online_linear_sarsa_lambda(grid, 1e3 * F, alpha=1.0, episodes=20),
         FloatingPointError, "true_online_linear_sarsa_lambda diverged"),
        ("linear.differential_semi_gradient_sarsa mdp episodic",
         lambda: linear.differential_semi_gradient_sarsa(grid, F), ValueError, "continuing task"),
        ("linear.differential_semi_gradient_sarsa mdp text",
         lambda: linear.differential_semi_gradient_sarsa("ring", G), TypeError, "mdp"),
        ("linear.differential_semi_gradient_sarsa features shape",
         lambda: linear.differential_semi_gradient_sarsa(ring, G[:3]),
         ValueError, "shape [12, 2, d]"),
        ("linear.differential_semi_gradient_sarsa steps 0",
         lambda: linear.differential_semi_gradient_sarsa(ring, G, steps=0), ValueError, "steps"),
        ("linear.differential_semi_gradient_sarsa alpha text",
         lambda: linear.differential_semi_gradient_sarsa(ring, G, alpha="0.1"),
         ValueError, "alpha"),
        ("linear.differential_semi_gradient_sarsa beta 0",
         lambda: linear.differential_semi_gradient_sarsa(ring, G, beta=0.0), ValueError, "beta"),
        ("linear.differential_semi_gradient_sarsa beta 2",
         lambda: linear.differential_semi_gradient_sarsa(ring, G, beta=2.0), ValueError, "beta"),
        ("linear.differential_semi_gradient_sarsa epsilon NaN",
         lambda: linear.differential_semi_gradient_sarsa(ring, G, epsilon=NAN),
         ValueError, "epsilon"),
        ("linear.differential_semi_gradient_sarsa initial_w shape",
         lambda: linear.differential_semi_gradient_sarsa(ring, G, initial_w=np.zeros(2)),
         ValueError, "initial_w"),
        ("linear.differential_semi_gradient_sarsa seed text",
         lambda: linear.differential_semi_gradient_sarsa(ring, G, seed="0"), ValueError, "seed"),
        ("linear.differential_semi_gradient_sarsa runs 0",
         lambda: linear.differential_semi_gradient_sarsa(ring, G, runs=0), ValueError, "runs"),
        ("linear.differential_semi_gradient_sarsa diverging alpha",
         lambda: linear.differential_semi_gradient_sarsa(ring, 1e3 * G, alpha=1.0, steps=2000),
         FloatingPointError, "lower alpha"),
    ] + list(option_rows(GRID_OPTION_BAD, linear_learner_on(grid, F)))
