"""Hardness constants against MDPs whose diameter, class, gain and gaps are known by hand."""

from collections import deque

import numpy as np
import pytest

from tabular import TabularMDP, hardness
from tabular.envs import DeepSea, NRoom, RandomMDP, RiverSwim


def line(n):
    """A deterministic continuing line: action 0 left, 1 right (clipped at the ends)."""
    s = np.arange(n)
    P = np.zeros((n, 2, n))
    P[s, 0, np.maximum(s - 1, 0)] = 1.0
    P[s, 1, np.minimum(s + 1, n - 1)] = 1.0
    return TabularMDP.from_dense(P, np.zeros((n, 2)), start=np.eye(n)[0])


def switch(p):
    """Two states; action 0 stays, action 1 switches with probability ``p``; staying in
    state 1 pays 1 per step, everything else 0."""
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[1, 0, 1] = 1.0
    P[0, 1] = (1 - p, p)
    P[1, 1] = (p, 1 - p)
    R = np.array([[0.0, 0.0], [1.0, 0.0]])
    return TabularMDP.from_dense(P, R, start=np.array([1.0, 0.0]))


def test_a_deterministic_line_has_diameter_n_minus_1():
    report = hardness(line(6))
    assert report.diameter == 5.0
    # communicating, not ergodic: always-right leaves states 0-4 transient
    assert report.communication == "communicating"


def test_switching_chain_diameter_gain_and_bias_span():
    # hitting the other state takes 1/p expected steps; the optimal bias differs by 1/p
    p = 0.25
    report = hardness(switch(p))
    assert report.diameter == pytest.approx(1 / p, rel=1e-12)
    assert report.optimal_gain == pytest.approx(1.0, abs=1e-9)
    assert report.span_h == pytest.approx(1 / p, abs=1e-8)
    assert report.communication == "communicating"


def test_full_support_random_mdp_is_ergodic():
    report = hardness(RandomMDP(5, 2, branching=5, seed=1).to_mdp())
    assert report.communication == "ergodic"
    assert 1.0 <= report.diameter < np.inf


def test_two_absorbing_states_are_not_weakly_communicating():
    P = np.zeros((3, 2, 3))
    P[0, 0, 1] = P[0, 1, 2] = 1.0
    P[1, :, 1] = P[2, :, 2] = 1.0
    report = hardness(TabularMDP.from_dense(P, np.zeros((3, 2)), start=np.eye(3)[0]))
    assert report.communication == "not weakly communicating"
    assert report.diameter == np.inf and report.span_h is None and report.optimal_gain is None


def shortest_paths(mdp, source):
    """Breadth-first distances of the deterministic continuing chain (an outcome that
    ends the episode goes to the start state)."""
    start = int(np.argmax(mdp.start))
    dist = {source: 0}
    queue = deque([source])
    while queue:
        s = queue.popleft()
        for a in range(mdp.n_actions):
            t = start if mdp.done[s, a, 0] else int(mdp.next_state[s, a, 0])
            if t not in dist:
                dist[t] = dist[s] + 1
                queue.append(t)
    return dist


def test_two_rooms_diameter_is_the_longest_shortest_path():
    mdp = NRoom(2, 3).to_mdp()
    report = hardness(mdp)
    # the goal restarts the episode, so its cell is never occupied: weakly communicating
    assert report.communication == "weakly communicating"
    reached = shortest_paths(mdp, int(np.argmax(mdp.start)))
    closed = sorted(reached)
    longest = max(shortest_paths(mdp, s)[t] for s in closed for t in closed)
    assert report.diameter == pytest.approx(longest, abs=1e-9)


def test_gaps_by_hand():
    river = hardness(RiverSwim().to_mdp(), horizon=1)
    # one step: left at the bank pays 0.005 (gap 0.005 for right); right at the far
    # bank pays 1 (gap 1 for left); no other state has a gap
    assert river.gap_min == pytest.approx(0.005, abs=1e-15)
    assert river.gap_sum == pytest.approx(1 / 0.005 + 1.0, rel=1e-12)
    assert river.gaps.shape == (1, 6, 2)
    sea = hardness(DeepSea(1, mapping_seed=None).to_mdp(), horizon=1)
    assert sea.gap_min == pytest.approx(0.99, abs=1e-15)
    assert sea.gap_sum == pytest.approx(1 / 0.99, rel=1e-12)
    assert sea.communication == "weakly communicating"  # the end state is never entered
    assert sea.optimal_gain == pytest.approx(0.99, abs=1e-9)


def test_discounted_gaps_of_the_switching_chain():
    # gamma = 0.5, p = 1: V*(1) = 1 / (1 - gamma) = 2, Q*(1, switch) = 0 + gamma V*(0),
    # V*(0) = gamma V*(1) = 1, so the gap of switching away from 1 is 2 - 0.5 = 1.5 and
    # of staying in 0 is 1 - 0.5 = 0.5
    report = hardness(switch(1.0), gamma=0.5)
    np.testing.assert_allclose(report.gaps, [[0.5, 0.0], [0.0, 1.5]], atol=1e-10)
    assert report.span_v == pytest.approx(1.0, abs=1e-10)
