"""Properties of the Bellman operators and the DP algorithms on random MDPs.

Ground truth is the exact linear solve (policy_evaluation method="exact").
Rewards are in [-1, 1] and gamma <= 0.99, so |V| <= 100: an absolute slack of
1e-9 covers floating rounding of one operator application (a few ulps of 100),
and 1e-7 covers a linear solve whose condition number is at most
(1 + gamma) / (1 - gamma) <= 200.
"""

import dataclasses

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabular import (
    TabularMDP,
    bellman_expectation,
    bellman_optimality,
    optimal_actions,
    policy_evaluation,
    policy_iteration,
    q_from_v,
    soft_bellman_optimality,
    soft_value_iteration,
    value_iteration,
)
from tabular.solve import sweeps as kernels
from tabular.solve.average_reward import (
    average_reward_solve,
    finite_horizon,
    relative_value_iteration,
)
from tabular.solve.bellman import PARALLEL_MIN_OUTCOMES, with_end
from tabular.testing import acyclic_mdps, gammas, mdps, property_settings, random_mdp, random_policy

PROPERTY = property_settings(40)
ROUNDING = 1e-9
SOLVE = 1e-7


def optimal_values(mdp, gamma):
    """V* as the exact value of value iteration's greedy policy (an independent check)."""
    vi = value_iteration(mdp, gamma, tol=1e-10)
    return policy_evaluation(mdp, vi.policy, gamma).V


def sup(x):
    return float(np.max(np.abs(x)))


seeds = st.integers(0, 2**32 - 1)


def operators(mdp, gamma, rng):
    """The three operators as functions of V, each with its own fixed random policy."""
    pi = random_policy(rng, mdp.n_states, mdp.n_actions)
    ref = random_policy(rng, mdp.n_states, mdp.n_actions)
    beta = float(rng.uniform(0.05, 2.0))
    return {
        "expectation": lambda V: bellman_expectation(mdp, V, pi, gamma),
        "optimality": lambda V: bellman_optimality(mdp, V, gamma),
        "soft": lambda V: soft_bellman_optimality(mdp, V, gamma, beta, ref),
    }


@PROPERTY
@given(mdps(), gammas(), seeds)
def test_operators_are_gamma_contractions(mdp, gamma, seed):
    rng = np.random.default_rng(seed)
    V, U = rng.uniform(-50, 50, (2, mdp.n_states))
    for name, T in operators(mdp, gamma, rng).items():
        assert sup(T(V) - T(U)) <= gamma * sup(V - U) + ROUNDING, name


@PROPERTY
@given(mdps(), gammas(), seeds)
def test_operators_are_monotone(mdp, gamma, seed):
    rng = np.random.default_rng(seed)
    V = rng.uniform(-50, 50, mdp.n_states)
    U = V + rng.uniform(0, 10, mdp.n_states) * (rng.random(mdp.n_states) < 0.5)
    for name, T in operators(mdp, gamma, rng).items():
        assert np.all(T(V) <= T(U) + ROUNDING), name


@PROPERTY
@given(mdps(), gammas())
def test_optimal_values_are_a_fixed_point_and_beat_every_action(mdp, gamma):
    V = optimal_values(mdp, gamma)
    assert sup(bellman_optimality(mdp, V, gamma) - V) <= SOLVE
    vi = value_iteration(mdp, gamma, tol=1e-9)
    assert sup(vi.V - V) <= 1e-9 + SOLVE  # the documented bound ||V - V*|| <= tol
    np.testing.assert_allclose(vi.Q, q_from_v(mdp, vi.V, gamma), rtol=0, atol=0)
    assert np.all(vi.Q <= V[:, None] + 1e-8)
    mask = optimal_actions(vi.Q, 1e-6)
    assert mask[np.arange(mdp.n_states), vi.policy].all()


@PROPERTY
@given(mdps(), gammas(), seeds, st.integers(1, 12))
def test_value_iteration_error_shrinks_by_gamma_per_sweep(mdp, gamma, seed, k):
    V_star = optimal_values(mdp, gamma)
    V0 = np.random.default_rng(seed).uniform(-20, 20, mdp.n_states)
    V = V0
    for _ in range(k):
        V = bellman_optimality(mdp, V, gamma)
    assert sup(V - V_star) <= gamma**k * sup(V0 - V_star) + SOLVE
    truncated = value_iteration(mdp, gamma, V0=V0, max_iter=k, tol=1e-300, strict=False)
    if not truncated.converged:  # k sweeps exactly: the same numbers as k applications
        assert truncated.iterations == k
        np.testing.assert_array_equal(truncated.V, V)


@PROPERTY
@given(mdps(), gammas())
def test_inplace_and_sync_value_iteration_agree(mdp, gamma):
    V_star = optimal_values(mdp, gamma)
    for method in ("sync", "inplace"):
        res = value_iteration(mdp, gamma, tol=1e-8, method=method)
        assert res.converged and res.iterations == len(res.history) and res.method == method
        assert sup(res.V - V_star) <= 1e-8 + SOLVE, method


@PROPERTY
@given(mdps(), gammas(), seeds)
def test_iterative_policy_evaluation_equals_the_linear_solve(mdp, gamma, seed):
    pi = random_policy(np.random.default_rng(seed), mdp.n_states, mdp.n_actions)
    exact = policy_evaluation(mdp, pi, gamma)
    # v_pi solves v = r_pi + gamma P_pi v: check the solve against the operator
    assert sup(bellman_expectation(mdp, exact.V, pi, gamma) - exact.V) <= SOLVE
    for method in ("sync", "inplace"):
        res = policy_evaluation(mdp, pi, gamma, method=method, tol=1e-9)
        assert sup(res.V - exact.V) <= 1e-9 + SOLVE, method
    np.testing.assert_allclose(exact.Q, q_from_v(mdp, exact.V, gamma), rtol=0, atol=0)


@PROPERTY
@given(mdps(), gammas())
def test_policy_iteration_improves_monotonically_and_ends_at_v_star(mdp, gamma):
    V_star = optimal_values(mdp, gamma)
    res = policy_iteration(mdp, gamma)
    assert res.converged
    assert res.values.shape == (res.improvements + 1, mdp.n_states)
    assert np.all(np.diff(res.values, axis=0) >= -SOLVE)  # policy improvement theorem
    assert sup(res.V - V_star) <= SOLVE
    assert optimal_actions(res.Q, 1e-6)[np.arange(mdp.n_states), res.policy].all()


@PROPERTY
@given(mdps(), gammas(), st.integers(1, 6))
def test_modified_policy_iteration_ends_at_v_star(mdp, gamma, k):
    V_star = optimal_values(mdp, gamma)
    res = policy_iteration(mdp, gamma, eval_sweeps=k, tol=1e-8)
    assert sup(res.V - V_star) <= 1e-8 + SOLVE


@PROPERTY
@given(mdps(), gammas(), seeds)
def test_soft_policy_is_the_closed_form_and_v_is_its_fixed_point(mdp, gamma, seed):
    rng = np.random.default_rng(seed)
    ref = random_policy(rng, mdp.n_states, mdp.n_actions)
    beta = float(rng.uniform(0.05, 2.0))
    res = soft_value_iteration(mdp, gamma, beta, ref_policy=ref, tol=1e-10)
    closed_form = ref * np.exp((res.Q - res.V[:, None]) / beta)
    np.testing.assert_allclose(res.policy, closed_form, rtol=0, atol=1e-8)
    np.testing.assert_allclose(res.policy.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert sup(soft_bellman_optimality(mdp, res.V, gamma, beta, ref) - res.V) <= 1e-9


@PROPERTY
@given(mdps(), gammas(), st.sampled_from([1.0, 0.1, 1e-3, 1e-6]))
def test_soft_value_iteration_tends_to_value_iteration(mdp, gamma, beta):
    # uniform ref: max_a q - beta log A <= beta log mean_a exp(q / beta) <= max_a q, so
    # V* - beta log(A) / (1 - gamma) <= V_beta <= V* (errors compound through gamma)
    V_star = optimal_values(mdp, gamma)
    V_soft = soft_value_iteration(mdp, gamma, beta, tol=1e-10).V
    gap = beta * np.log(mdp.n_actions) / (1 - gamma)
    assert np.all(V_soft <= V_star + SOLVE)
    assert np.all(V_soft >= V_star - gap - SOLVE)


@property_settings(25)
@given(acyclic_mdps(), st.floats(0.05, 2.0), seeds)
def test_soft_value_iteration_solves_acyclic_episodes_with_gamma_one(mdp, beta, seed):
    """The token-tree case: gamma = 1, finite horizon; converges in at most S + 1 sweeps."""
    ref = random_policy(np.random.default_rng(seed), mdp.n_states, mdp.n_actions)
    # run to the exact fixed point
    res = soft_value_iteration(mdp, 1.0, beta, ref_policy=ref, tol=1e-300)
    assert res.iterations <= mdp.n_states + 1 and res.history[-1] == 0.0
    # backward induction, state by state from the end, as the reference
    V = np.zeros(mdp.n_states)
    for s in reversed(range(mdp.n_states)):
        V[s] = soft_bellman_optimality(mdp, V, 1.0, beta, ref)[s]
    np.testing.assert_allclose(res.V, V, rtol=1e-12, atol=1e-12)


def on_one_and_all_threads(run):
    """``(run() on one numba thread, run() on all of them)``."""
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = run()
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        return one, run()
    finally:
        numba.set_num_threads(before)


def test_results_do_not_depend_on_the_thread_count():
    rng = np.random.default_rng(0)
    mdp = random_mdp(rng, 3000, 4, 3, done_rate=0.05, trap_rate=0.3)
    assert mdp.prob.size >= PARALLEL_MIN_OUTCOMES  # large enough to run in parallel
    pi = random_policy(rng, mdp.n_states, mdp.n_actions)

    def run():
        solved = value_iteration(mdp, 0.9)
        return (solved.V, solved.Q, value_iteration(mdp, 0.9, method="blocked").V,
                policy_evaluation(mdp, pi, 0.9, method="sync").V,
                soft_value_iteration(mdp, 0.9, 0.5, ref_policy=pi).V,
                finite_horizon(mdp, 5, gamma=0.9).V)

    one, many = on_one_and_all_threads(run)
    assert np.isneginf(one[0]).any() and np.isfinite(one[0]).any()
    for a, b in zip(one, many, strict=True):
        np.testing.assert_array_equal(a, b)


@PROPERTY
@given(mdps(), gammas(), seeds)
def test_every_synchronous_sweep_splits_its_states_without_changing_a_bit(mdp, gamma, seed):
    """The sweeps' kernels over all states on one thread, and over one range of states per
    thread under the parallel loop (:func:`~tabular.solve.sweeps.over_states`): the same
    values and the same residual, whatever the split."""
    rng = np.random.default_rng(seed)
    V = with_end(rng.normal(size=mdp.n_states))
    pi = random_policy(rng, mdp.n_states, mdp.n_actions)
    model = mdp.arrays

    def sweeps():
        outs = [np.zeros_like(V) for _ in range(4)]
        residuals = (kernels.optimality_sweep(model, V, gamma, outs[0]),
                     kernels.optimality_sweep_blocks(model, V, gamma, outs[1]),
                     kernels.expectation_sweep(model, V, gamma, pi, outs[2]),
                     kernels.soft_sweep(model, V, gamma, 0.5, pi, outs[3]))
        return residuals, outs, kernels.q_table(model, V, gamma)

    one, many = on_one_and_all_threads(sweeps)
    assert one[0] == many[0]
    for a, b in zip([*one[1], one[2]], [*many[1], many[2]], strict=True):
        np.testing.assert_array_equal(a, b)


@PROPERTY
@given(mdps(), gammas(), seeds)
def test_inplace_and_sync_soft_value_iteration_agree(mdp, gamma, seed):
    ref = random_policy(np.random.default_rng(seed), mdp.n_states, mdp.n_actions)
    sync = soft_value_iteration(mdp, gamma, 0.5, ref_policy=ref, tol=1e-9)
    inplace = soft_value_iteration(mdp, gamma, 0.5, ref_policy=ref, tol=1e-9, method="inplace")
    assert (sync.method, inplace.method) == ("sync", "inplace")
    assert inplace.iterations <= sync.iterations + 1  # Gauss-Seidel is no slower here
    assert sup(inplace.V - sync.V) <= 2e-9 + ROUNDING


def test_results_are_frozen_and_show_shapes_not_numbers():
    """Every solver's result is a frozen record whose repr names the class and each field,
    an array by its dtype and shape (not its numbers), a scalar by its value."""
    rng = np.random.default_rng(7)
    mdp = TabularMDP.from_dense(rng.dirichlet(np.ones(4), size=(4, 2)), rng.uniform(-1, 1, (4, 2)))
    results = {
        "ValueIterationResult(V=float64[4], Q=float64[4, 2], policy=int64[4], history=float64[":
            value_iteration(mdp, 0.9),
        "PolicyEvaluationResult(V=float64[4], Q=float64[4, 2], history=float64[0], "
        "converged=True, iterations=0, method='exact')": policy_evaluation(mdp, [0] * 4, 0.9),
        "PolicyIterationResult(V=float64[4], Q=float64[4, 2], policy=int64[4], improvements=":
            policy_iteration(mdp, 0.9),
        "SoftValueIterationResult(V=float64[4], Q=float64[4, 2], policy=float64[4, 2], ":
            soft_value_iteration(mdp, 0.9, 0.5),
        "RelativeValueIterationResult(rho=": relative_value_iteration(mdp),
        "AverageRewardResult(rho=": average_reward_solve(mdp, [1] * 4),
        "FiniteHorizonResult(V=float64[4, 4], policy=int64[3, 4], "
        "method='backward_induction')": finite_horizon(mdp, 3),
    }
    for start, res in results.items():
        text = repr(res)
        assert text.startswith(start) and "array" not in text and len(text) < 250, text
        with pytest.raises(dataclasses.FrozenInstanceError):
            res.method = "changed"
    assert "converged=True, iterations=" in repr(results[next(iter(results))])
