"""Jack's car rental (envs/car_rental.py): Sutton & Barto 2nd ed., Example 4.2 (Figure 4.2)
and Exercise 4.7.

The model is checked against a direct computation that loops over every request and
return count up to 60 (a Poisson tail beyond 60 with mean at most 4 is below 1e-40):
its probabilities, its expected rewards, and the Bellman optimality equation at a few
states for the values that policy iteration finds.

Figure 4.2 plots ``v_pi4`` on an axis from 420 to 612. The exact model (no truncated
Poisson tail) has ``v*`` from 421.41 at (0, 0) to 636.99 at (20, 20), checked here
by the direct Bellman equation; an independent implementation (Lucas Lingle's
policy_iteration_car_rental) reports 421 to 636. Models that drop the Poisson tails
lose probability each day, which acts as an extra discount (dropping requests and
returns above 10 gives 406 to 618), so the test pins the exact model's numbers, not
the printed axis.
"""

import functools
import math

import numpy as np
import pytest

from tabular import policy_iteration
from tabular.envs.car_rental import EXERCISE_4_7, CarRental
from tabular.solve.average_reward import average_reward_solve, relative_value_iteration

GAMMA = 0.9
TAIL = 60  # request and return counts summed over in the direct computation
NO_MOVE = 5  # the action that moves no car: pi_0 of Figure 4.2


@pytest.fixture(scope="module")
def book():
    return CarRental()


@pytest.fixture(scope="module")
def exercise():
    return CarRental(**EXERCISE_4_7)


@pytest.fixture(scope="module")
def book_solution(book):
    mdp = book.to_mdp()
    return policy_iteration(mdp, GAMMA, policy0=np.full(mdp.n_states, NO_MOVE))


@pytest.fixture(scope="module")
def exercise_solution(exercise):
    mdp = exercise.to_mdp()
    return policy_iteration(mdp, GAMMA, policy0=np.full(mdp.n_states, NO_MOVE))


# ------------------------------------------------------------ direct computation
def pmf(rate, n):
    return math.exp(-rate) * rate**n / math.factorial(n)


@functools.cache
def direct_day(m, request_rate, return_rate, max_cars=20):
    """One day at one location by brute force: ``(P(n cars at night) [21], E[rented])``."""
    night = np.zeros(max_cars + 1)
    rented = 0.0
    for requests in range(TAIL):
        p = pmf(request_rate, requests)
        r = min(requests, m)
        rented += p * r
        for returns in range(TAIL):
            night[min(m - r + returns, max_cars)] += p * pmf(return_rate, returns)
    return night, rented


def direct_step(env, s, a):
    """``(P(s') as [21, 21], r(s, a))`` of the story of Example 4.2 told step by step."""
    n1, n2 = env.cars(s)
    move = int(np.clip(a - env.max_move, -n2, n1))  # no more cars than the source holds
    m1, m2 = min(n1 - move, 20), min(n2 + move, 20)
    night1, rented1 = direct_day(m1, env.request_rates[0], env.return_rates[0])
    night2, rented2 = direct_day(m2, env.request_rates[1], env.return_rates[1])
    paid = max(move - env.free_moves, 0) if move > 0 else -move
    cost = 2.0 * paid
    if env.parking_limit is not None:
        cost += 4.0 * ((m1 > env.parking_limit) + (m2 > env.parking_limit))
    return np.outer(night1, night2), 10.0 * (rented1 + rented2) - cost


def direct_optimal_value(env, s, V):
    """``max_a [r(s, a) + gamma sum_s' p(s'|s, a) V(s')]`` by the direct computation."""
    values = []
    for a in range(2 * env.max_move + 1):
        P, r = direct_step(env, s, a)
        values.append(r + GAMMA * float((P * V.reshape(21, 21)).sum()))
    return max(values)


STATES = [(0, 0), (20, 0), (0, 20), (20, 20), (3, 17), (12, 9)]
PAIRS = [((20, 0), 10), ((0, 20), 0), ((2, 7), 10), ((7, 2), 0), ((12, 9), 5), ((11, 4), 6),
         ((5, 15), 3), ((20, 20), 8)]  # clipped moves among them


def state(n1, n2):
    return n1 * 21 + n2


# -------------------------------------------------------------------- the model
@pytest.mark.parametrize("variant", ["book", "exercise"])
def test_every_outcome_distribution_sums_to_one(variant, request):
    mdp = request.getfixturevalue(variant).to_mdp()
    assert (mdp.n_states, mdp.n_actions, mdp.n_outcomes) == (441, 11, 441)
    assert np.abs(mdp.prob.sum(axis=2) - 1.0).max() <= 1e-12
    assert (mdp.prob > 0.0).all()  # every night count is possible: the model is dense
    assert not mdp.done.any()


@pytest.mark.parametrize("variant", ["book", "exercise"])
@pytest.mark.parametrize("cars, a", PAIRS)
def test_model_matches_the_direct_computation(variant, cars, a, request):
    env = request.getfixturevalue(variant)
    mdp = env.to_mdp()
    s = state(*cars)
    P, r = direct_step(env, s, a)
    np.testing.assert_allclose(_row(mdp, s, a), P.ravel(), rtol=0, atol=1e-13)
    assert mdp.expected_reward()[s, a] == pytest.approx(r, abs=1e-9)


def _row(mdp, s, a):
    row = np.zeros(mdp.n_states)
    np.add.at(row, mdp.next_state[s, a], mdp.prob[s, a])
    return row


def test_clipped_moves_duplicate_the_feasible_move(book):
    mdp = book.to_mdp()
    s = state(2, 0)  # "move +5" and "move +3" both move the 2 cars there are
    for a in (8, 9, 10):
        np.testing.assert_array_equal(mdp.prob[s, a], mdp.prob[s, 7])
        np.testing.assert_array_equal(mdp.reward[s, a], mdp.reward[s, 7])
    for a in range(5):  # nothing to move from the empty second location
        np.testing.assert_array_equal(mdp.reward[s, a], mdp.reward[s, NO_MOVE])


# ------------------------------------------------------------------- Figure 4.2
def test_policy_iteration_reproduces_figure_4_2(book, book_solution):
    res = book_solution
    assert res.improvements == 4  # pi_0 -> pi_1 -> ... -> pi_4, then stable
    assert res.iterations == 5
    V = res.V.reshape(21, 21)
    assert np.unravel_index(V.argmin(), V.shape) == (0, 0)
    assert np.unravel_index(V.argmax(), V.shape) == (20, 20)
    assert V.min() == pytest.approx(421.41, abs=0.01)  # the book's axis: 420
    assert V.max() == pytest.approx(636.99, abs=0.01)  # the book's axis: 612 (see above)
    moves = book.net_moves(res.policy)
    assert moves[20, 0] == 5  # first full, second empty: move five
    assert moves[0, 0] == 0 and moves.max() == 5 and moves.min() == -4  # pi_4's labels
    assert (moves[np.triu_indices(21, 3)] <= 0).all()  # cars go to where they are few
    assert (moves[np.tril_indices(21, -6)] >= 0).all()


def test_figure_4_2_values_solve_the_bellman_equation_of_the_story(book, book_solution):
    V = book_solution.V
    for cars in STATES:
        s = state(*cars)
        assert V[s] == pytest.approx(direct_optimal_value(book, s, V), abs=1e-6)


# ------------------------------------------------------------------ Exercise 4.7
def test_exercise_4_7_solves_and_changes_the_policy(book, book_solution, exercise,
                                                     exercise_solution):
    res = exercise_solution
    assert res.converged
    for cars in STATES:
        s = state(*cars)
        assert res.V[s] == pytest.approx(direct_optimal_value(exercise, s, res.V), abs=1e-6)
    moves = exercise.net_moves(res.policy)
    book_moves = book.net_moves(book_solution.policy)
    assert (moves != book_moves).sum() > 100
    # 11 cars at the first location and room at the second: the free car avoids the
    # second lot there, where the book moves none
    assert (moves[11, :10] >= 1).all() and (book_moves[11, 7:10] == 0).all()
    # 11 cars at the second location and 4 to 9 at the first: one car goes back to
    # avoid the second lot (at $2, less than its $4), where the book moves none
    assert (moves[4:10, 11] == -1).all() and (book_moves[4:10, 11] == 0).all()


# ------------------------------------------------------------------ the env
def test_the_env_steps_from_its_model(book):
    state_id, info = book.reset(seed=3)
    assert info["cars"] == book.cars(state_id)
    mdp = book.to_mdp()
    for _ in range(20):
        a = int(book.action_space.sample())
        s = book.s
        s_next, r, terminated, truncated, info = book.step(a)
        assert not terminated and not truncated
        k = np.flatnonzero(mdp.next_state[s, a] == s_next)[0]
        assert r == mdp.reward[s, a, k] and info["prob"] == mdp.prob[s, a, k]
        assert info["cars"] == book.cars(s_next)
    assert mdp.action_names[0] == "move -5" and mdp.action_names[10] == "move +5"
    assert mdp.state_name(state(3, 17)) == f"{state(3, 17)} (3 at first, 17 at second)"


def test_net_moves_needs_a_deterministic_policy(book):
    uniform = np.full((441, 11), 1 / 11)
    with pytest.raises(ValueError, match="deterministic"):
        book.net_moves(uniform)
    assert (book.net_moves(np.full(441, NO_MOVE)) == 0).all()


def test_a_smaller_rental_business_earns_the_gain_of_its_policy():
    mdp = CarRental(max_cars=8, max_move=3).to_mdp()
    rvi = relative_value_iteration(mdp, tol=1e-9)
    exact = average_reward_solve(mdp, rvi.policy)
    assert exact.rho == pytest.approx(rvi.rho, abs=1e-9)
    np.testing.assert_allclose(exact.h, rvi.h, rtol=0, atol=1e-6)
