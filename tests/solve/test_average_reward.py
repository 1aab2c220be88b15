"""Average-reward and finite-horizon DP (tabular/solve/average_reward.py).

Published numbers are mdptoolbox's own examples (the docstrings of
``RelativeValueIteration`` and ``FiniteHorizon``, mdptoolbox-hiive 4.0): the forest
problem ``example.forest()`` (S=3, r1=4, r2=2, p=0.1) and ``example.small()``, read
with ``TabularMDP.from_dense(P, R, layout="ASS")``. Their exact gains, from the
stationary distribution of the optimal policy (it waits in every state of the
forest; in ``small`` it takes action 1 in state 0, action 0 in state 1):

- forest: the forest is oldest with probability 0.9 * 0.9 = 0.81 and then earns
  r1 = 4, so rho* = 3.24;
- small: the chain 0 -> 1 (reward 10), 1 -> 0 w.p. 0.8 (reward -1) stays in state 0
  with probability 4/9, so rho* = 4/9 * 10 - 5/9 = 35/9.

The random models for the average-reward identities have every transition
probability positive, so that every policy is unichain and aperiodic.
"""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabular import ConvergenceError, TabularMDP, policy_evaluation, value_iteration
from tabular.solve.average_reward import (
    average_reward_solve,
    finite_horizon,
    relative_value_iteration,
)
from tabular.testing import acyclic_mdps, gammas, mdps, property_settings

PROPERTY = property_settings(30)

FOREST_P = np.array([[[0.1, 0.9, 0.0], [0.1, 0.0, 0.9], [0.1, 0.0, 0.9]],
                     [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
FOREST_R = np.array([[0.0, 0.0], [0.0, 1.0], [4.0, 2.0]])
SMALL_P = np.array([[[0.5, 0.5], [0.8, 0.2]], [[0.0, 1.0], [0.1, 0.9]]])
SMALL_R = np.array([[5.0, 10.0], [-1.0, 2.0]])
FOREST = TabularMDP.from_dense(FOREST_P, FOREST_R, layout="ASS")
SMALL = TabularMDP.from_dense(SMALL_P, SMALL_R, layout="ASS")


def mdptoolbox():
    """mdptoolbox-hiive (a dev dependency), imported without its gym warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pytest.importorskip("hiive.mdptoolbox.mdp"), pytest.importorskip(
            "hiive.mdptoolbox.example")


@st.composite
def dense_mdps(draw, max_states=5, max_actions=3):
    """Continuing MDPs whose transition probabilities are all positive."""
    S, A = draw(st.integers(1, max_states)), draw(st.integers(1, max_actions))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    P = rng.dirichlet(np.ones(S), size=(S, A))
    return TabularMDP.from_dense(P, np.round(rng.uniform(-1, 1, (S, A)), 3))


def all_gains(mdp):
    """The exact gain of every deterministic policy."""
    return [average_reward_solve(mdp, np.array(p)).rho
            for p in itertools.product(range(mdp.n_actions), repeat=mdp.n_states)]


def stationary(P_pi):
    """The stationary distribution of a unichain ``P_pi``: ``mu (I - P) = 0``, ``sum mu = 1``."""
    S = P_pi.shape[0]
    system = np.vstack([(np.eye(S) - P_pi).T, np.ones(S)])
    return np.linalg.lstsq(system, np.append(np.zeros(S), 1.0), rcond=None)[0]


# ------------------------------------------------------------ mdptoolbox's examples
def test_forest_matches_mdptoolbox_published_gain():
    """mdptoolbox's docstring: average_reward 3.2399999999999993, policy (0, 0, 0), 4 sweeps."""
    rvi = relative_value_iteration(FOREST, tol=0.01)
    assert rvi.rho == pytest.approx(3.24, abs=0.005)
    np.testing.assert_array_equal(rvi.policy, [0, 0, 0])
    assert rvi.iterations == 4
    exact = average_reward_solve(FOREST, rvi.policy)
    assert exact.rho == pytest.approx(3.24, abs=1e-12)
    assert relative_value_iteration(FOREST).rho == pytest.approx(3.24, abs=1e-8)
    assert max(all_gains(FOREST)) == pytest.approx(3.24, abs=1e-12)


def test_small_matches_mdptoolbox_published_gain():
    """mdptoolbox's docstring: average_reward 3.8852... with epsilon=0.01 (a lower bound of
    the gain), policy (1, 0); the exact gain is 35/9."""
    rvi = relative_value_iteration(SMALL, tol=0.01)
    np.testing.assert_array_equal(rvi.policy, [1, 0])
    assert abs(rvi.rho - 35 / 9) <= 0.005 and 3.885235246411831 <= 35 / 9
    assert average_reward_solve(SMALL, [1, 0]).rho == pytest.approx(35 / 9, abs=1e-12)
    assert relative_value_iteration(SMALL, tol=1e-10).rho == pytest.approx(35 / 9, abs=1e-10)
    assert max(all_gains(SMALL)) == pytest.approx(35 / 9, abs=1e-12)


def test_mdptoolbox_relative_value_iteration_agrees():
    mdp_module, example = mdptoolbox()
    P, R = example.forest()
    np.testing.assert_array_equal(P, FOREST_P)
    np.testing.assert_array_equal(R, FOREST_R)
    for P, R, ours in ((FOREST_P, FOREST_R, FOREST), (SMALL_P, SMALL_R, SMALL)):
        theirs = mdp_module.RelativeValueIteration(P, R, epsilon=1e-10, max_iter=10_000)
        theirs.gamma = 1.0  # mdptoolbox-hiive 4.0.3 forgets to set it
        theirs.run()
        rvi = relative_value_iteration(ours, tol=1e-10)
        assert rvi.rho == pytest.approx(theirs.average_reward, abs=1e-9)
        np.testing.assert_array_equal(rvi.policy, theirs.policy)


# --------------------------------------------------------- average-reward identities
@PROPERTY
@given(dense_mdps())
def test_relative_value_iteration_finds_the_best_gain(mdp):
    rvi = relative_value_iteration(mdp, tol=1e-10)
    assert rvi.converged and rvi.method == "sync"
    best = max(all_gains(mdp))
    assert rvi.rho == pytest.approx(best, abs=1e-10)
    exact = average_reward_solve(mdp, rvi.policy)  # its greedy policy earns rho
    assert exact.rho == pytest.approx(rvi.rho, abs=1e-10)
    np.testing.assert_allclose(rvi.h, exact.h, rtol=0, atol=1e-7)
    assert rvi.h[0] == 0.0
    np.testing.assert_allclose(rvi.Q.max(axis=1), rvi.h, rtol=0, atol=1e-9)  # optimality eq.


@PROPERTY
@given(dense_mdps(), st.integers(0, 2**32 - 1))
def test_exact_gain_and_bias_solve_the_evaluation_equations(mdp, seed):
    rng = np.random.default_rng(seed)
    pi = rng.dirichlet(np.ones(mdp.n_actions), size=mdp.n_states)
    res = average_reward_solve(mdp, pi)
    assert res.method == "exact" and res.h[0] == 0.0
    P_pi = np.einsum("sa,sat->st", pi, mdp.transition_matrix())
    r_pi = (pi * mdp.expected_reward()).sum(axis=1)
    np.testing.assert_allclose(res.h + res.rho, r_pi + P_pi @ res.h, rtol=0, atol=1e-9)
    assert res.rho == pytest.approx(stationary(P_pi) @ r_pi, abs=1e-9)
    np.testing.assert_allclose((pi * res.Q).sum(axis=1), res.h, rtol=0, atol=1e-9)


@PROPERTY
@given(dense_mdps(), st.integers(0, 2**32 - 1))
def test_discounted_values_tend_to_gain_and_bias(mdp, seed):
    """``v_gamma = rho / (1 - gamma) + h* + O(1 - gamma)`` (Puterman, section 8.2), with
    ``h*`` our ``h`` shifted by a constant."""
    pi = np.random.default_rng(seed).integers(0, mdp.n_actions, mdp.n_states)
    res = average_reward_solve(mdp, pi)
    gamma = 1.0 - 1e-5
    v = policy_evaluation(mdp, pi, gamma).V
    shifted = v - res.rho / (1.0 - gamma)
    np.testing.assert_allclose(shifted - shifted[0], res.h, rtol=0, atol=1e-3)


def test_a_periodic_chain_has_an_exact_gain_but_relative_value_iteration_cycles():
    swap = TabularMDP.from_dense(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([1.0, 0.0]))
    res = average_reward_solve(swap, [0, 0])
    assert res.rho == 0.5
    np.testing.assert_allclose(res.h, [0.0, -0.5])
    with pytest.raises(ConvergenceError, match="periodic"):
        relative_value_iteration(swap, max_iter=50)
    last = relative_value_iteration(swap, max_iter=50, strict=False)
    assert not last.converged and last.iterations == 50
    assert last.rho == pytest.approx(0.5)  # the midpoint of the bounds 0 and 1


def test_two_recurrent_classes_are_refused_by_name():
    stay = TabularMDP.from_dense(np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]]),
                                 np.array([[1.0, 0.0], [2.0, 2.0]]))
    with pytest.raises(ValueError, match="not unichain: from state 0 it never reaches state 1"):
        average_reward_solve(stay, [0, 0])  # both states stay where they are
    assert average_reward_solve(stay, [1, 0]).rho == 2.0  # state 0 leaves: one class
    # the model is communicating (state 0 can leave for state 1), so rho* = 2 everywhere
    assert relative_value_iteration(stay).rho == pytest.approx(2.0)
    apart = TabularMDP.from_dense(np.array([[[1.0, 0.0]], [[0.0, 1.0]]]), np.array([1.0, 2.0]))
    with pytest.raises(ConvergenceError, match="multichain"):
        relative_value_iteration(apart, max_iter=20)


def test_episodic_and_minus_inf_models_are_refused():
    chain = TabularMDP.from_dense(np.array([[[0.0, 1.0]], [[0.0, 1.0]]]), np.array([-1.0, 0.0]),
                                  terminal=np.array([False, True]))
    for call in (lambda: relative_value_iteration(chain),
                 lambda: average_reward_solve(chain, [0, 0])):
        with pytest.raises(ValueError, match="state 0, action 0 ends the episode"):
            call()
    trap = TabularMDP(np.zeros((1, 1, 1)), np.ones((1, 1, 1)), np.full((1, 1, 1), -np.inf),
                      np.zeros((1, 1, 1), dtype=bool), [1.0])
    with pytest.raises(ValueError, match="can pay a reward of -inf"):
        relative_value_iteration(trap)


# --------------------------------------------------------------- finite horizon
def test_finite_horizon_matches_mdptoolbox_published_example():
    """mdptoolbox's ``FiniteHorizon(P, R, 0.9, 3)`` docstring (V is [S, N + 1] there)."""
    res = finite_horizon(FOREST, 3, gamma=0.9)
    np.testing.assert_allclose(res.V.T, [[2.6973, 0.81, 0.0, 0.0], [5.9373, 3.24, 1.0, 0.0],
                                         [9.9373, 7.24, 4.0, 0.0]], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(res.policy.T, [[0, 0, 0], [0, 0, 1], [0, 0, 0]])
    assert res.method == "backward_induction"


@pytest.mark.parametrize("horizon, gamma, terminal", [(3, 0.9, None), (25, 0.95, None),
                                                      (10, 0.5, [1.0, -2.0, 3.0]),
                                                      (7, 1.0, None)])
def test_finite_horizon_matches_mdptoolbox(horizon, gamma, terminal):
    mdp_module, _ = mdptoolbox()
    theirs = mdp_module.FiniteHorizon(FOREST_P, FOREST_R, gamma, horizon,
                                      h=None if terminal is None else np.array(terminal))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs.run()
    res = finite_horizon(FOREST, horizon, gamma=gamma, terminal_values=terminal)
    np.testing.assert_allclose(res.V.T, theirs.V, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(res.policy.T, theirs.policy)


@PROPERTY
@given(mdps(max_states=12), gammas(0.95), st.integers(1, 60))
def test_finite_horizon_tends_to_value_iteration(mdp, gamma, horizon):
    """``H`` steps of backward induction from 0 are ``T*^H 0``: within ``gamma^H ||v*||``
    of ``v*`` (a ``gamma``-contraction)."""
    v_star = value_iteration(mdp, gamma, tol=1e-12).V
    res = finite_horizon(mdp, horizon, gamma=gamma)
    assert res.V.shape == (horizon + 1, mdp.n_states) and (res.V[horizon] == 0).all()
    bound = gamma**horizon * np.abs(v_star).max() + 1e-11
    assert np.abs(res.V[0] - v_star).max() <= bound
    Q0 = finite_horizon(mdp, 1, gamma=gamma, terminal_values=res.V[1])  # one step back
    np.testing.assert_array_equal(Q0.V[0], res.V[0])
    np.testing.assert_array_equal(Q0.policy[0], res.policy[0])


@PROPERTY
@given(acyclic_mdps(max_states=10, traps=True))
def test_finite_horizon_is_exact_once_every_episode_has_ended(mdp):
    """Without discounting, an acyclic MDP's episodes end within ``S`` steps, so a horizon
    of ``S`` gives ``v*`` exactly (-inf traps included)."""
    res = finite_horizon(mdp, mdp.n_states)
    v_star = value_iteration(mdp, 1.0, tol=1e-12).V
    np.testing.assert_allclose(res.V[0], v_star, rtol=0, atol=1e-12)
