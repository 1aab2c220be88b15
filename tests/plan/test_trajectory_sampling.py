"""Expected updates distributed uniformly or along trajectories (tabular/plan/expected_updates.py),
checked against value iteration, policy evaluation and a direct numpy computation; and the
closed form of Figure 8.7 against its simulation (experiments/book/ch08/expected_vs_sample.py).

Uniform expected updates are exact in-place value iteration, so they are compared bit for
bit with the same sums in numpy, and converge to ``Q*`` to ``1e-8`` once
``gamma^sweeps`` is below that. Trajectory sampling reaches ``Q*`` exactly (to rounding)
on acyclic tasks, where a pair is final once it is updated after its successors are:
with a start spread over every state and uniform exploration, 20,000 updates of at most
24 pairs on depth-<= 8 tasks leave no pair behind in the drawn examples.
"""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabular import ConvergenceError, TabularMDP, policy_evaluation, value_iteration
from tabular.experiments.book.ch08 import expected_vs_sample
from tabular.plan.expected_updates import (
    EVALUATION_TOL,
    branching_task,
    trajectory_sampling,
    uniform_expected_updates,
)
from tabular.testing import acyclic_mdps, gammas, mdps, property_settings

PROPERTY = property_settings(15)


def start_value(mdp, policy, gamma):
    """The exact value of the start distribution under a deterministic policy."""
    return float(mdp.start @ policy_evaluation(mdp, policy, gamma).V)


def gauss_seidel_q_sweeps(mdp, gamma, sweeps, Q0=0.0):
    """``sweeps`` in-place sweeps of ``Q(s, a) <- sum_k p_k [r_k + gamma max_a' Q(s'_k, a')]``
    over the pairs in state, then action, order, summed outcome by outcome as the kernel
    does (no value flows from an ending outcome)."""
    Q = np.full((mdp.n_states, mdp.n_actions), Q0, dtype=np.float64)
    flows = ~mdp.done & (mdp.prob > 0.0) & (gamma > 0.0)
    for _ in range(sweeps):
        for s in range(mdp.n_states):
            for a in range(mdp.n_actions):
                after = np.where(flows[s, a], Q[mdp.next_state[s, a]].max(axis=1), 0.0)
                q = 0.0
                for term in mdp.prob[s, a] * (mdp.reward[s, a] + gamma * after):
                    q += term
                Q[s, a] = q
    return Q


def reachable(mdp):
    """Bool ``[S]``: the states an episode can visit from the start distribution."""
    seen = mdp.start > 0.0
    frontier = list(np.flatnonzero(seen))
    flows = (mdp.prob > 0.0) & ~mdp.done
    while frontier:
        s = frontier.pop()
        for s_next in np.unique(mdp.next_state[s][flows[s]]):
            if not seen[s_next]:
                seen[s_next] = True
                frontier.append(s_next)
    return seen


def start_in(mdp, states):
    """``mdp`` starting uniformly in ``states`` (bool ``[S]``)."""
    return replace(mdp, start=states / states.sum())


# --------------------------------------------------------------------- uniform updates


@PROPERTY
@given(mdps(max_states=8, max_actions=3), gammas(), st.integers(1, 4))
def test_uniform_sweeps_are_in_place_value_iteration_bit_for_bit(mdp, gamma, sweeps):
    pairs = mdp.n_states * mdp.n_actions
    result = uniform_expected_updates(mdp, updates=sweeps * pairs, gamma=gamma,
                                      evaluate_every=pairs, initial_Q=0.5)
    np.testing.assert_array_equal(result.Q, gauss_seidel_q_sweeps(mdp, gamma, sweeps, 0.5))
    np.testing.assert_array_equal(result.updates, np.arange(sweeps + 1) * pairs)


@PROPERTY
@given(mdps(max_states=10, max_actions=3), gammas(max_gamma=0.9))
def test_uniform_updates_converge_to_value_iteration(mdp, gamma):
    pairs = mdp.n_states * mdp.n_actions
    result = uniform_expected_updates(mdp, updates=300 * pairs, gamma=gamma,
                                      evaluate_every=100 * pairs)
    optimum = value_iteration(mdp, gamma, tol=1e-12)
    np.testing.assert_allclose(result.Q, optimum.Q, atol=1e-8)
    assert result.start_values[-1] == pytest.approx(start_value(mdp, result.policy, gamma),
                                                    abs=1e-8)
    assert result.start_values[-1] == pytest.approx(float(mdp.start @ optimum.V), abs=1e-7)


def test_uniform_updates_on_a_branching_task_match_value_iteration():
    mdp = branching_task(50, 3, seed=4)
    result = uniform_expected_updates(mdp, updates=100 * 50 * 2, evaluate_every=10 * 50 * 2)
    optimum = value_iteration(mdp, 1.0, tol=1e-12)
    np.testing.assert_allclose(result.Q, optimum.Q, atol=1e-9)
    assert result.start_values[-1] == pytest.approx(optimum.V[0], abs=1e-8)
    assert result.runs is None and result.start_values.shape == (11,)


# --------------------------------------------------------------------- trajectory sampling


@PROPERTY
@given(acyclic_mdps(max_states=8, max_actions=3, max_outcomes=3),
       st.sampled_from([1.0, 0.9]), st.integers(0, 2**16))
def test_trajectory_sampling_converges_to_value_iteration(mdp, gamma, seed):
    mdp = start_in(mdp, np.ones(mdp.n_states, dtype=bool))  # every pair on some trajectory
    result = trajectory_sampling(mdp, updates=20_000, gamma=gamma, epsilon=1.0,
                                 evaluate_every=5_000, seed=seed)
    optimum = value_iteration(mdp, gamma, tol=1e-12)
    np.testing.assert_allclose(result.Q, optimum.Q, atol=1e-9)
    assert result.start_values[-1] == pytest.approx(start_value(mdp, result.policy, gamma),
                                                    abs=1e-8)


def test_trajectory_sampling_finds_the_optimum_of_a_branching_task():
    mdp = branching_task(30, 2, seed=1)
    result = trajectory_sampling(mdp, updates=30_000, epsilon=0.5, evaluate_every=10_000)
    optimum = value_iteration(mdp, 1.0, tol=1e-12)
    assert result.start_values[-1] == pytest.approx(optimum.V[0], abs=1e-6)
    on_path = reachable(mdp)
    np.testing.assert_allclose(result.Q[on_path], optimum.Q[on_path], atol=1e-6)


@PROPERTY
@given(mdps(max_states=12, max_actions=3), gammas(), st.integers(0, 2**16))
def test_trajectory_sampling_updates_only_pairs_it_can_reach(mdp, gamma, seed):
    first = np.zeros(mdp.n_states, dtype=bool)
    first[0] = True
    mdp = start_in(mdp, first)
    marker = 7.25  # no expected update of these rewards in [-1, 1] lands on it
    result = trajectory_sampling(mdp, updates=2_000, gamma=gamma, epsilon=1.0,
                                 evaluate_every=1_000, seed=seed, initial_Q=marker)
    unreachable = ~reachable(mdp)
    assert (result.Q[unreachable] == marker).all()
    assert (result.Q[0] != marker).any()  # the first update is of a pair of the start


def test_trajectory_sampling_leaves_most_of_a_large_task_alone():
    mdp = branching_task(2_000, 1, seed=3)
    result = trajectory_sampling(mdp, updates=500, evaluate_every=100, initial_Q=100.0)
    updated = (result.Q != 100.0).sum()
    assert 0 < updated <= 500 and result.Q[0].min() < 100.0


def test_same_seed_same_numbers_and_runs_are_independent_streams():
    mdp = branching_task(200, 3, seed=2)
    kwargs = dict(updates=3_000, evaluate_every=500)
    one = trajectory_sampling(mdp, seed=5, **kwargs)
    again = trajectory_sampling(mdp, seed=5, **kwargs)
    np.testing.assert_array_equal(one.Q, again.Q)
    np.testing.assert_array_equal(one.start_values, again.start_values)
    three = trajectory_sampling(mdp, seed=5, runs=3, **kwargs)
    five = trajectory_sampling(mdp, seed=5, runs=5, **kwargs)
    np.testing.assert_array_equal(three.Q, five.Q[:3])
    np.testing.assert_array_equal(three.start_values, five.start_values[:3])
    assert three.runs == 3 and three.start_values.shape == (3, 7)
    np.testing.assert_array_equal(three.run(1).Q, three.Q[1])
    np.testing.assert_array_equal(three.run(1).updates, three.updates)
    assert repr(three) == ("ExpectedUpdatesResult(updates=int64[7], start_values=float64[3, 7], "
                           "Q=float64[3, 200, 2])")
    other = trajectory_sampling(mdp, seed=6, **kwargs)
    assert not np.array_equal(one.Q, other.Q)


def test_evaluations_come_every_so_many_updates_and_at_the_end():
    mdp = branching_task(20, 2, seed=0)
    result = uniform_expected_updates(mdp, updates=10, evaluate_every=4)
    np.testing.assert_array_equal(result.updates, [0, 4, 8, 10])
    assert result.start_values.shape == (4,)
    greedy_at_zero = np.zeros(mdp.n_states, dtype=int)  # Q = 0: every tie goes to action 0
    assert result.start_values[0] == pytest.approx(start_value(mdp, greedy_at_zero, 1.0),
                                                   abs=1e-9)


@property_settings(15)
@given(mdps(max_states=6, max_actions=3, traps=True), gammas(), st.integers(0, 2**16))
def test_minus_infinity_rewards_stay_exact(mdp, gamma, seed):
    for result in (uniform_expected_updates(mdp, updates=400, gamma=gamma, evaluate_every=100),
                   trajectory_sampling(mdp, updates=400, gamma=gamma, evaluate_every=100,
                                       seed=seed)):
        assert not np.isnan(result.Q).any() and not np.isnan(result.start_values).any()
        assert not (result.start_values == np.inf).any()


# --------------------------------------------------------------------- the tasks


def test_branching_task_follows_section_8_6():
    mdp = branching_task(100, 3, seed=7)
    assert (mdp.n_states, mdp.n_actions, mdp.n_outcomes) == (100, 2, 4)
    np.testing.assert_allclose(mdp.prob[:, :, :3], 0.9 / 3)
    np.testing.assert_allclose(mdp.prob[:, :, 3], 0.1)
    assert mdp.done[:, :, 3].all() and not mdp.done[:, :, :3].any()
    assert (mdp.reward[:, :, 3] == 0.0).all()
    successors = np.sort(mdp.next_state[:, :, :3], axis=2)
    assert (successors[:, :, 1:] != successors[:, :, :-1]).all()  # b distinct next states
    assert mdp.start[0] == 1.0
    rewards = mdp.reward[:, :, :3].ravel()
    assert abs(rewards.mean()) < 0.15 and 0.85 < rewards.std() < 1.15
    np.testing.assert_array_equal(branching_task(100, 3, seed=7).reward, mdp.reward)
    assert not np.array_equal(branching_task(100, 3, seed=8).reward, mdp.reward)
    assert branching_task(5, 5, seed=0).next_state[:, :, :5].min() == 0


def test_the_ending_outcome_of_a_branching_task_is_stored_with_the_end_sign():
    successor = branching_task(10, 2, seed=0).arrays.successor
    assert (successor[:, :, 2] < 0).all() and (successor[:, :, :2] >= 0).all()


# --------------------------------------------------------------------- bad inputs


LOOP = TabularMDP(np.zeros((1, 1, 1)), np.ones((1, 1, 1)), np.ones((1, 1, 1)),
                  np.zeros((1, 1, 1), dtype=bool), [1.0])
TASK = branching_task(5, 2, seed=0)
BAD = [
    (lambda: uniform_expected_updates(TASK, updates=0, evaluate_every=1), ValueError,
     "updates must be an integer >= 1"),
    (lambda: trajectory_sampling(TASK, updates=2.5, evaluate_every=1), ValueError,
     "updates must be an integer >= 1"),
    (lambda: uniform_expected_updates(TASK, updates=10, evaluate_every=0), ValueError,
     "evaluate_every must be an integer >= 1"),
    (lambda: trajectory_sampling(TASK, updates=10**9, evaluate_every=1), ValueError,
     "evaluate less often"),
    (lambda: uniform_expected_updates(TASK, updates=10, evaluate_every=5, gamma=np.nan),
     ValueError, "gamma must be in [0, 1]"),
    (lambda: trajectory_sampling(TASK, updates=10, evaluate_every=5, epsilon=1.5), ValueError,
     "epsilon"),
    (lambda: trajectory_sampling(TASK, updates=10, evaluate_every=5, runs=0), ValueError,
     "runs"),
    (lambda: trajectory_sampling(TASK, updates=10, evaluate_every=5, seed=-1), ValueError,
     "seed must be None or an int >= 0"),
    (lambda: uniform_expected_updates(TASK, updates=10, evaluate_every=5, initial_Q=np.nan),
     ValueError, "initial_Q must be finite"),
    (lambda: trajectory_sampling(TASK, updates=10, evaluate_every=5, initial_Q=np.zeros(3)),
     ValueError, "initial_Q must be a number or an array"),
    (lambda: uniform_expected_updates("maze", updates=10, evaluate_every=5), TypeError, "mdp"),
    (lambda: uniform_expected_updates(LOOP, updates=10, evaluate_every=5), ConvergenceError,
     "its value cannot be summed"),
    (lambda: branching_task(0, 1), ValueError, "n_states must be an integer >= 1"),
    (lambda: branching_task(10, 11), ValueError, "branching must be at most 10"),
    (lambda: branching_task(10, 2, termination=1.5), ValueError,
     "termination must be in [0, 1]"),
    (lambda: branching_task(10, 2, n_actions=0), ValueError, "n_actions"),
    (lambda: branching_task(10, 2, seed=-3), ValueError, "seed must be None or an int >= 0"),
]


@pytest.mark.parametrize("call, error, fragment", BAD)
def test_bad_inputs_raise_errors_naming_the_parameter(call, error, fragment):
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value), str(info.value)


def test_a_discounted_loop_is_summed_to_the_tolerance():
    result = uniform_expected_updates(LOOP, updates=10, gamma=0.9, evaluate_every=5)
    assert result.start_values[-1] == pytest.approx(10.0, abs=100 * EVALUATION_TOL)


# --------------------------------------------------------------------- Figure 8.7


@pytest.mark.parametrize("branching", [2, 10, 50])
def test_sample_updates_follow_the_closed_form(branching):
    runs = 4_000
    errors = expected_vs_sample.sample_errors(branching, 2 * branching, runs, seed=1)
    t = np.arange(1, 2 * branching + 1)
    theory = expected_vs_sample.closed_form(branching, t) ** 2
    z = (errors["mse"][1:] - theory) / errors["mse_se"][1:]
    assert np.abs(z).max() < 4.5, np.abs(z).max()
    assert errors["mse"][0] == expected_vs_sample.INITIAL_ERROR ** 2
    again = expected_vs_sample.sample_errors(branching, 2 * branching, runs, seed=1)
    np.testing.assert_array_equal(again["mse"], errors["mse"])  # same seed, same numbers


def test_one_sample_update_leaves_the_spread_of_the_next_state_values():
    errors = expected_vs_sample.sample_errors(1, 3, 50, seed=0)  # b = 1: samples are exact
    np.testing.assert_allclose(errors["mse"][1:], 0.0, atol=1e-28)
    assert expected_vs_sample.closed_form(1, 5) == 0.0
