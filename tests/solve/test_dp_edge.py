"""-inf rewards, gamma = 1 corner cases and bad input for the DP functions."""

from fractions import Fraction

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    ConvergenceError,
    SoftmaxPolicy,
    TabularMDP,
    bellman_optimality,
    optimal_actions,
    policy_evaluation,
    policy_iteration,
    soft_policy,
    soft_value_iteration,
    terminating_greedy_policy,
    value_iteration,
)
from tabular.model.graph import actions_toward, can_end, reaches, safe_actions
from tabular.solve.exact import EPS, EXACT_MAX_ERROR
from tabular.testing import acyclic_mdps, gammas, mdps, property_settings

NINF = -np.inf


def deterministic_mdp(table, n_states=None):
    """``table[s][a] = (next_state, reward, done)``: a deterministic MDP, start in state 0."""
    S = n_states or len(table)
    A = len(table[0])
    ns = np.array([[[t[0]] for t in row] for row in table], dtype=np.int64)
    rew = np.array([[[t[1]] for t in row] for row in table], dtype=float)
    done = np.array([[[t[2]] for t in row] for row in table], dtype=bool)
    start = np.eye(S)[0]
    return TabularMDP(ns, np.ones((S, A, 1)), rew, done, start)


@pytest.fixture
def trap_chain():
    """0 --a0--> trap (-inf, ends); 0 --a1--> 1 (-1); 1 --any--> goal (+1, ends); 2 doomed."""
    return deterministic_mdp([
        [(0, NINF, True), (1, -1.0, False)],
        [(1, 1.0, True), (1, 1.0, True)],
        [(2, NINF, True), (0, NINF, False)],
    ])


@pytest.mark.parametrize("gamma", [0.0, 0.5, 1.0])
def test_value_iteration_avoids_an_avoidable_trap(trap_chain, gamma):
    res = value_iteration(trap_chain, gamma)
    np.testing.assert_array_equal(res.V, [-1.0 + gamma, 1.0, NINF])
    assert res.Q[0, 0] == NINF and res.policy[0] == 1
    assert not np.isnan(res.Q).any() and not np.isnan(res.history).any()
    assert optimal_actions(res.Q)[2].all()  # all actions equally doomed


@pytest.mark.parametrize("method", ["exact", "sync", "inplace"])
def test_a_policy_that_risks_the_trap_is_worth_minus_inf(trap_chain, method):
    uniform = np.full((3, 2), 0.5)
    res = policy_evaluation(trap_chain, uniform, 0.9, method=method)
    np.testing.assert_array_equal(res.V, [NINF, 1.0, NINF])
    safe = policy_evaluation(trap_chain, np.array([1, 0, 0]), 0.9, method=method)
    np.testing.assert_allclose(safe.V, [-1.0 + 0.9, 1.0, NINF], rtol=0, atol=1e-9)


def test_a_small_chance_of_the_trap_is_enough():
    # action 0: the trap with probability 0.01, else +10; action 1: +1 for sure
    mdp = TabularMDP(np.zeros((1, 2, 2), dtype=np.int64), np.array([[[0.01, 0.99], [1.0, 0]]]),
                     np.array([[[NINF, 10.0], [1.0, 0]]]), np.ones((1, 2, 2), bool), [1.0])
    res = value_iteration(mdp, 0.9)
    assert res.V[0] == 1.0 and res.Q[0, 0] == NINF and res.policy[0] == 1


def test_soft_value_iteration_with_traps_and_masked_actions(trap_chain):
    res = soft_value_iteration(trap_chain, 1.0, 0.5)
    assert res.V[2] == NINF and np.isfinite(res.V[:2]).all()
    assert res.policy[0, 0] == 0.0 and res.policy[0, 1] == 1.0  # the trap gets no mass
    np.testing.assert_array_equal(res.policy[2], [0.5, 0.5])  # doomed: keeps ref
    forced = soft_value_iteration(trap_chain, 1.0, 0.5, ref_policy=np.array([0, 0, 0]))
    np.testing.assert_array_equal(forced.V, [NINF, 1.0, NINF])  # ref masks the safe action
    masked = SoftmaxPolicy(np.array([[NINF, 0.0], [0.0, 0.0], [0.0, 0.0]]), np.arange(3))
    res = soft_value_iteration(trap_chain, 1.0, 0.5, ref_policy=masked)
    assert res.V[0] == 0.0 and res.policy[0, 1] == 1.0  # only the safe action is left
    assert not np.isnan(res.Q).any() and not np.isnan(res.policy).any()


@property_settings(30)
@given(mdps(traps=True), gammas())
def test_random_traps_give_the_same_minus_inf_states_everywhere(mdp, gamma):
    vi = value_iteration(mdp, gamma)
    exact = policy_evaluation(mdp, vi.policy, gamma).V
    pi = policy_iteration(mdp, gamma)
    for V in (vi.V, vi.Q, exact, pi.V, pi.values, soft_value_iteration(mdp, gamma, 0.3).V):
        assert not np.isnan(V).any()
    np.testing.assert_array_equal(np.isneginf(vi.V), np.isneginf(exact))
    np.testing.assert_array_equal(np.isneginf(vi.V), np.isneginf(pi.V))
    finite = np.isfinite(vi.V)
    np.testing.assert_allclose(vi.V[finite], exact[finite], rtol=0, atol=1e-6)
    np.testing.assert_allclose(pi.V[finite], exact[finite], rtol=0, atol=1e-6)


def test_graph_helpers_on_a_chain(trap_chain):
    # 0 -a0-> 1, 0 -a1-> 0; 1 -a0-> end, 1 -a1-> 2; 2 loops for ever
    chain = deterministic_mdp([[(1, 0.0, False), (0, 0.0, False)],
                               [(1, 0.0, True), (2, 0.0, False)],
                               [(2, 0.0, False), (2, 0.0, False)]])
    moves = (chain.prob > 0) & ~chain.done
    np.testing.assert_array_equal(can_end(chain), [True, True, False])
    np.testing.assert_array_equal(reaches(chain.next_state, moves, np.array([0, 0, 1], bool)),
                                  [True, True, True])
    np.testing.assert_array_equal(reaches(chain.next_state, moves, np.array([1, 0, 0], bool)),
                                  [True, False, False])
    np.testing.assert_array_equal(actions_toward(chain.next_state, moves, np.array([-1, 0, -1])),
                                  [0, 0, -1])
    np.testing.assert_array_equal(safe_actions(trap_chain, 0.9), [1, 0, 0])
    # state 0: a0 ends with -inf, a1 pays 0 into state 1, where every action pays -inf
    doomed_later = deterministic_mdp([[(0, NINF, True), (1, 0.0, False)], [(1, NINF, False)] * 2])
    assert safe_actions(doomed_later, 0.9)[0] == 0  # nothing is safe: action 0
    assert safe_actions(doomed_later, 0.0)[0] == 1  # gamma = 0: only the reward counts


# ------------------------------------------------------------- gamma = 1
@pytest.fixture
def endless_loop():
    """One state, one action looping to itself with reward -1: no policy ever ends."""
    return deterministic_mdp([[(0, -1.0, False)]])


def test_value_iteration_names_states_that_never_terminate(endless_loop):
    with pytest.raises(ConvergenceError, match=r"max_iter=500.*diverge.*termination from 1 "
                                               r"state\(s\), e.g. 0.*gamma < 1"):
        value_iteration(endless_loop, 1.0, max_iter=500)
    assert value_iteration(endless_loop, 0.9).V[0] == pytest.approx(-10.0, abs=1e-8)


def test_exact_evaluation_of_an_endless_policy_with_gamma_one(endless_loop):
    with pytest.raises(ValueError, match="never terminates from state 0"):
        policy_evaluation(endless_loop, np.array([0]), 1.0)
    free_loop = deterministic_mdp([[(0, 0.0, False), (1, 2.0, False)], [(1, 0.0, True)] * 2])
    res = policy_evaluation(free_loop, np.array([0, 0]), 1.0)  # a reward-free loop is worth 0
    np.testing.assert_array_equal(res.V, [0.0, 0.0])
    np.testing.assert_array_equal(policy_iteration(free_loop, 1.0).V, [2.0, 0.0])


def test_gamma_one_greedy_policy_ends_instead_of_looping_on_a_tie():
    # state 0: action 0 loops in place for free, action 1 ends for free: both have q = 0
    tie = deterministic_mdp([[(0, 0.0, False), (0, 0.0, True)]])
    res = value_iteration(tie, 1.0)
    np.testing.assert_array_equal(res.Q, [[0.0, 0.0]])
    assert res.policy[0] == 1
    assert value_iteration(tie, 0.9).policy[0] == 0  # discounted: the lowest index


@property_settings(30)
@given(acyclic_mdps(traps=True))
def test_gamma_one_greedy_policy_is_optimal_on_episodic_mdps(mdp):
    res = value_iteration(mdp, 1.0, tol=1e-12)
    exact = policy_evaluation(mdp, res.policy, 1.0).V
    np.testing.assert_array_equal(np.isneginf(exact), np.isneginf(res.V))
    finite = np.isfinite(res.V)
    np.testing.assert_allclose(exact[finite], res.V[finite], rtol=0, atol=1e-9)


def test_truncated_iteration_is_flagged_not_hidden(endless_loop):
    res = value_iteration(endless_loop, 0.99, max_iter=3, strict=False)
    assert not res.converged and res.iterations == 3
    np.testing.assert_allclose(res.V, [-(1 + 0.99 + 0.99**2)], rtol=1e-15)
    with pytest.raises(ConvergenceError, match="max_iter=3"):
        policy_evaluation(endless_loop, np.array([0]), 0.99, method="sync", max_iter=3)
    with pytest.raises(ConvergenceError, match="max_iter=2"):
        soft_value_iteration(endless_loop, 0.99, 1.0, max_iter=2)


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize("gamma", [-0.1, 1.5, np.nan])
def test_gamma_outside_unit_interval(trap_chain, gamma):
    for call in (lambda: value_iteration(trap_chain, gamma),
                 lambda: policy_evaluation(trap_chain, np.array([1, 0, 0]), gamma),
                 lambda: policy_iteration(trap_chain, gamma),
                 lambda: soft_value_iteration(trap_chain, gamma, 1.0),
                 lambda: bellman_optimality(trap_chain, np.zeros(3), gamma)):
        with pytest.raises(ValueError, match="gamma must be in"):
            call()


@pytest.mark.parametrize("tol", [0.0, -1e-8, np.inf])
def test_tol_must_be_positive(trap_chain, tol):
    with pytest.raises(ValueError, match="tol must be"):
        value_iteration(trap_chain, 0.9, tol=tol)
    with pytest.raises(ValueError, match="tol must be"):
        soft_value_iteration(trap_chain, 0.9, 1.0, tol=tol)


def test_bad_policies_are_named(trap_chain):
    with pytest.raises(ValueError, match=r"policy must have shape \[3\]"):
        policy_evaluation(trap_chain, np.ones((3, 3)) / 3, 0.9)
    with pytest.raises(ValueError, match=r"policy\[1\] .* not a probability distribution"):
        policy_evaluation(trap_chain, np.array([[0.5, 0.5], [0.7, 0.7], [1, 0]]), 0.9)
    with pytest.raises(ValueError, match=r"policy\[2\] = 5 is not an action"):
        policy_evaluation(trap_chain, np.array([0, 1, 5]), 0.9)
    with pytest.raises(ValueError, match=r"ref_policy\[0\]"):
        soft_value_iteration(trap_chain, 0.9, 1.0, ref_policy=np.array([[1, 1], [1, 0], [1, 0]]))
    with pytest.raises(ValueError, match="policy0 must be a deterministic policy"):
        policy_iteration(trap_chain, 0.9, policy0=np.full((3, 2), 0.5))
    with pytest.raises(ValueError, match=r"policy0\[0\] = 7"):
        policy_iteration(trap_chain, 0.9, policy0=np.array([7, 0, 0]))


def test_other_bad_arguments_are_named(trap_chain):
    cases = [
        (lambda: value_iteration(trap_chain, 0.9, method="jacobi"), "method must be one of"),
        (lambda: policy_evaluation(trap_chain, np.array([1, 0, 0]), 0.9, method="fast"),
         "'exact', 'sync', 'inplace'"),
        (lambda: value_iteration(trap_chain, 0.9, max_iter=0), "max_iter must be"),
        (lambda: value_iteration(trap_chain, 0.9, V0=np.zeros(4)), r"V0 must have shape \[3\]"),
        (lambda: value_iteration(trap_chain, 0.9, V0=[0, np.nan, 0]), r"V0\[1\] = nan"),
        (lambda: soft_value_iteration(trap_chain, 0.9, 0.0), "beta must be"),
        (lambda: policy_iteration(trap_chain, 0.9, eval_sweeps=0), "eval_sweeps must be"),
        (lambda: policy_iteration(trap_chain, 0.9, tie_tol=-1.0), "tie_tol must be"),
        (lambda: optimal_actions(np.zeros((2, 2)), tol=-1.0), "tol must be"),
        (lambda: terminating_greedy_policy(trap_chain, np.zeros((3, 3))), r"Q must have shape"),
        (lambda: soft_policy(np.zeros((3, 2)), 1.0, np.ones((3, 3)) / 3),
         r"ref_policy must have shape \[3\] \(actions\) or \[3, 2\]"),
        (lambda: soft_policy(np.zeros((3, 2)), -1.0, np.ones((3, 2)) / 2), "beta must be"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


def test_every_result_records_its_method(trap_chain):
    uniform = np.full((3, 2), 0.5)
    for method in ("sync", "inplace"):
        assert value_iteration(trap_chain, 0.9, method=method).method == method
        assert soft_value_iteration(trap_chain, 0.9, 1.0, method=method).method == method
    for method in ("exact", "sync", "inplace"):
        assert policy_evaluation(trap_chain, uniform, 0.9, method=method).method == method
    exact, modified = policy_iteration(trap_chain, 0.9), policy_iteration(trap_chain, 0.9,
                                                                            eval_sweeps=3)
    assert (exact.method, exact.eval_sweeps) == ("exact", None)
    assert (modified.method, modified.eval_sweeps) == ("modified", 3)


@pytest.mark.parametrize("solver, valid", [
    (lambda m, method: value_iteration(m, 0.9, method=method),
     "'sync', 'inplace', 'blocked'"),
    (lambda m, method: soft_value_iteration(m, 0.9, 1.0, method=method), "'sync', 'inplace'"),
    (lambda m, method: policy_evaluation(m, np.array([1, 0, 0]), 0.9, method=method),
     "'exact', 'sync', 'inplace'"),
])
def test_an_unknown_method_is_named_with_the_valid_ones(trap_chain, solver, valid):
    with pytest.raises(ValueError, match=f"method must be one of {valid}, got 'jacobi'$"):
        solver(trap_chain, "jacobi")
    with pytest.raises(ValueError, match="got 'gauss-seidel' \\(Gauss-Seidel is 'inplace'\\)"):
        solver(trap_chain, "gauss-seidel")


def test_policy_iteration_with_strict_false_returns_the_last_policy():
    # one state: action 0 ends with 0, action 1 ends with +1; policy0 = action 0
    choice = deterministic_mdp([[(0, 0.0, True), (0, 1.0, True)]])
    with pytest.raises(ConvergenceError, match="max_iter=1 .*strict=False"):
        policy_iteration(choice, 0.9, max_iter=1)
    res = policy_iteration(choice, 0.9, max_iter=1, strict=False)
    assert not res.converged and res.iterations == 1 and res.improvements == 0
    np.testing.assert_array_equal(res.policy, [0])  # the policy that was evaluated last
    np.testing.assert_array_equal(res.V, [0.0])
    np.testing.assert_array_equal(res.Q, [[0.0, 1.0]])
    done = policy_iteration(choice, 0.9, max_iter=2)
    assert done.converged and done.policy[0] == 1 and done.improvements == 1
    with pytest.raises(ConvergenceError, match="eval_sweeps=1.*max_iter=1"):
        policy_iteration(choice, 0.9, eval_sweeps=1, max_iter=1)
    modified = policy_iteration(choice, 0.9, eval_sweeps=1, max_iter=1, strict=False)
    assert not modified.converged and modified.method == "modified"
    np.testing.assert_array_equal(modified.policy, [1])
    np.testing.assert_array_equal(modified.V, [1.0])  # one sweep of the improved policy
    np.testing.assert_array_equal(modified.values, [[1.0]])


def test_policy0_may_be_any_deterministic_policy_form(trap_chain):
    as_int = policy_iteration(trap_chain, 0.9, policy0=np.array([1, 0, 0]))
    one_hot = policy_iteration(trap_chain, 0.9, policy0=np.eye(2)[[1, 0, 0]])
    masked = SoftmaxPolicy(np.array([[NINF, 0.0], [0.0, NINF], [0.0, NINF]]), np.arange(3))
    for res in (one_hot, policy_iteration(trap_chain, 0.9, policy0=masked)):
        np.testing.assert_array_equal(res.values, as_int.values)
        np.testing.assert_array_equal(res.policy, as_int.policy)
    with pytest.raises(ValueError, match="deterministic policy .* state 1 it takes 2 actions"):
        policy_iteration(trap_chain, 0.9, policy0=np.array([[0.0, 1.0], [0.5, 0.5], [1, 0]]))


def test_exact_evaluation_refuses_huge_models():
    S = 5001
    big = TabularMDP(np.arange(S).reshape(S, 1, 1), np.ones((S, 1, 1)), np.zeros((S, 1, 1)),
                     np.ones((S, 1, 1), bool), np.full(S, 1.0 / S))
    with pytest.raises(ValueError, match="method='sync'"):
        policy_evaluation(big, np.zeros(S, dtype=np.int64), 0.9)
    assert policy_evaluation(big, np.zeros(S, dtype=np.int64), 0.9, method="sync").V.max() == 0


# ------------------------------------------- (almost) endless policies, gamma = 1
@pytest.fixture(scope="module")
def corridor():
    return TabularMDP.from_gymnasium(gym.make("tabzoo/ShortCorridor-v0"))


def right_with(p):
    """One shared row for the 4 corridor states: right with probability ``p``."""
    return np.tile([1.0 - p, p], (4, 1))


def corridor_values(p):
    """``v_pi`` of the short corridor (Example 13.1) by elimination, every step paying -1.

    v0 = -1 + (1-p) v0 + p v1             =>  v0 = v1 - 1/p
    v2 = -1 + (1-p) v1                    (right from state 2 ends)
    v1 = -1 + p v0 + (1-p) v2             =>  v1 p (1-p) = -(3 - p)
    """
    v1 = -(3.0 - p) / (p * (1.0 - p))
    return np.array([v1 - 1.0 / p, v1, -1.0 + (1.0 - p) * v1, 0.0])


@pytest.mark.parametrize("p", [0.5, 1e-3, 1e-8])
def test_exact_evaluation_of_a_rarely_ending_policy_matches_the_closed_form(corridor, p):
    res = policy_evaluation(corridor, right_with(p), 1.0)
    # the solve promises a relative error below EXACT_MAX_ERROR; at p = 1e-8 its bound
    # kappa * eps is 8e8 * 2.2e-16 = 1.8e-7
    np.testing.assert_allclose(res.V, corridor_values(p), rtol=EXACT_MAX_ERROR, atol=0)
    assert res.converged
    assert corridor_values(0.5)[0] == -12.0  # (2p - 4) / (p (1 - p)) at p = 1/2


@pytest.mark.parametrize("p", [5e-131, 4e-322, 0.0])
def test_exact_evaluation_refuses_a_policy_that_almost_never_ends(corridor, p):
    # an unchecked dense solve answers nonsense here: a huge positive value though every
    # reward is -1, or NaN
    with pytest.raises(ValueError, match=r"state 0 \(first\).*gamma (< 1|further below 1)"):
        policy_evaluation(corridor, right_with(p), 1.0)


def test_exact_evaluation_is_refused_exactly_when_it_cannot_be_trusted(corridor):
    # p from 1e-300 to 1 - 1e-16: both tails (p -> 0 stays at the wall, p -> 1 bounces
    # between states 0 and 1) make the episodes long and I - P_pi ill-conditioned
    tiny = np.logspace(-300, -0.31, 600)
    for p in np.concatenate([tiny, 1.0 - tiny[tiny >= 1e-16]]):
        truth = corridor_values(p)
        kappa = 2.0 * -truth.min()  # ||I - P_pi||_inf = 2; lengths = -v (reward -1 a step)
        try:
            V = policy_evaluation(corridor, right_with(p), 1.0).V
        except ValueError as error:
            assert "cannot be trusted" in str(error)
            assert not kappa * EPS < EXACT_MAX_ERROR / 2, p  # refused only with good reason
            continue
        assert not kappa * EPS > 2 * EXACT_MAX_ERROR, p  # never accepted beyond the limit
        np.testing.assert_allclose(V, truth, rtol=EXACT_MAX_ERROR, atol=0, err_msg=f"p={p}")


def test_sync_evaluation_of_an_almost_endless_policy_says_it_did_not_converge(corridor):
    for p in (5e-131, 1e-8):
        with pytest.raises(ConvergenceError, match="max_iter=1000.*diverge"):
            policy_evaluation(corridor, right_with(p), 1.0, method="sync", max_iter=1000)
        res = policy_evaluation(corridor, right_with(p), 1.0, method="sync", max_iter=1000,
                                strict=False)
        assert not res.converged and res.iterations == 1000
        assert np.isfinite(res.V).all() and (res.V[:3] < 0).all()
    res = policy_evaluation(corridor, right_with(0.5), 1.0, method="sync")
    assert res.converged
    np.testing.assert_allclose(res.V, corridor_values(0.5), rtol=0, atol=1e-8)


def test_exact_evaluation_close_to_gamma_one_names_the_discounted_length(corridor):
    with pytest.raises(ValueError, match=r"gamma=0.9999999999999: its expected discounted "
                                         r"episode length from state 0 \(first\) "
                                         r"is \d\.\d+e\+12 steps"):
        policy_evaluation(corridor, right_with(1e-12), 1.0 - 1e-13)
    V = policy_evaluation(corridor, right_with(1e-12), 0.999).V
    assert V[0] == pytest.approx(-1000.0, rel=1e-6)  # stuck at the wall: -1/(1 - gamma)


def test_exact_evaluation_reports_a_zero_pivot():
    # 1 - (1 - 1e-300) rounds to 0: the loop in state 0 leaves I - P_pi exactly singular
    loop = deterministic_mdp([[(0, -1.0, False), (1, -1.0, True)], [(1, 0.0, True)] * 2])
    with pytest.raises(ValueError, match=r"state 0 has no finite value in float64: .*zero pivot"):
        policy_evaluation(loop, np.array([[1.0, 1e-300], [1.0, 0.0]]), 1.0)


def exact_solve(A, b):
    """``A^-1 b`` in rational arithmetic (Gauss-Jordan on ``Fraction``s); None if singular."""
    n = len(b)
    M = [list(row) + [rhs] for row, rhs in zip(A, b, strict=True)]
    for c in range(n):
        pivot = next((i for i in range(c, n) if M[i][c] != 0), None)
        if pivot is None:
            return None
        M[c], M[pivot] = M[pivot], M[c]
        for i in range(n):
            if i != c and M[i][c] != 0:
                f = M[i][c] / M[c][c]
                M[i] = [x - f * y for x, y in zip(M[i], M[c], strict=True)]
    return [M[i][n] / M[i][i] for i in range(n)]


@property_settings(150)
@given(st.integers(1, 4), st.integers(0, 2**32 - 1), st.lists(st.integers(0, 330), min_size=4,
                                                               max_size=4))
def test_exact_evaluation_is_accurate_or_refused_against_rational_arithmetic(S, seed, powers):
    """Random deterministic MDPs with policies ``[1 - 10^-k, 10^-k]``, ``gamma = 1``.

    The truth solves ``(I - P_pi) v = r_pi`` in rationals from the very floats given
    (rows of ``pi`` renormalised exactly). The float solve must either match it within
    EXACT_MAX_ERROR relative to the scale ``max L * max |r|`` of the values, or refuse;
    it must refuse when the true condition number is beyond the limit and answer when
    it is well within it.
    """
    rng = np.random.default_rng(seed)
    table = [[(int(rng.integers(0, S)), float(rng.choice([-1.0, -0.5, 0.25, 2.0])),
               bool(rng.random() < 0.3)) for _ in range(2)] for _ in range(S)]
    mdp = deterministic_mdp(table)
    p = 10.0 ** -np.array(powers[:S], dtype=float)
    pi = np.column_stack([1.0 - p, p])
    exact_pi = [[Fraction(x) / (Fraction(row[0]) + Fraction(row[1])) for x in row] for row in pi]
    A = [[Fraction(int(i == j)) for j in range(S)] for i in range(S)]
    r = [Fraction(0)] * S
    for s in range(S):
        for a, (nxt, reward, done) in enumerate(table[s]):
            r[s] += exact_pi[s][a] * Fraction(reward)
            if not done:
                A[s][nxt] -= exact_pi[s][a]
    lengths = exact_solve(A, [Fraction(1)] * S)
    if lengths is None:  # some state never ends, and every reward is nonzero
        with pytest.raises(ValueError, match="never terminates|cannot be trusted"):
            policy_evaluation(mdp, pi, 1.0)
        return
    error_bound = (2 * max(lengths) - 1) * Fraction(EPS)  # kappa of v w.r.t. P_pi, times eps
    try:
        V = policy_evaluation(mdp, pi, 1.0).V
    except ValueError as error:
        assert "cannot be trusted" in str(error)
        assert not error_bound < Fraction(EXACT_MAX_ERROR) / 4, float(error_bound)
        return
    assert not error_bound > 4 * Fraction(EXACT_MAX_ERROR), float(error_bound)
    truth = np.array([float(x) for x in exact_solve(A, r)])
    scale = float(max(lengths)) * 2.0  # max L * max |reward|
    np.testing.assert_allclose(V, truth, rtol=0, atol=EXACT_MAX_ERROR * scale)
