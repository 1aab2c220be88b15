"""Optimistic Q-learning with UCB-Bernstein (Jin et al., 2018, Algorithm 2): its width
and bonus against hand computations, the telescoping that defines the bonus, and the
learner against the algorithm box run step by step in Python."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabular import TabularMDP, regret
from tabular.explore import optimistic_q_learning
from tabular.rules.exploration import (
    jin_bernstein_bonus,
    jin_bernstein_width,
    jin_step_size,
)


def test_width_takes_the_hoeffding_branch_while_t_is_small():
    # H = 2, S A = 4, iota = 3, t = 4, W = 0.25, span 1: the Bernstein branch
    # sqrt(2 * 3 / 4 * 2.25) + sqrt(2^7 * 4) * 3 / 4 = 18.81 exceeds sqrt(8 * 3 / 4) = sqrt 6
    assert jin_bernstein_width(4.0, 0.25, 2, 1.0, 3.0, 4, 1.0) == pytest.approx(
        2 * math.sqrt(6.0), rel=1e-15)


def test_width_takes_the_bernstein_branch_once_t_passes_h4_s_a_iota():
    # H = 4, S A = 1, iota = 1, t = 4096 > H^4 = 256, W = 0: sqrt(4 / 4096 * 4) = 1/16 and
    # sqrt(4^7) / 4096 = 1/32 against sqrt(64 / 4096) = 1/8; times c1 = 2
    assert jin_bernstein_width(4096.0, 0.0, 4, 1.0, 1.0, 1, 1.0) == 2 * (1 / 16 + 1 / 32)
    # span 2, W = 1: sqrt(4 / 4096 * (1 + 4 * 4)) + 2 / 32 against 2 / 8
    assert jin_bernstein_width(4096.0, 1.0, 4, 2.0, 1.0, 1, 0.5) == pytest.approx(
        math.sqrt(17 / 1024) + 1 / 16, rel=1e-15)


@settings(max_examples=50, deadline=None)
@given(t=st.integers(1, 10**6), variance=st.floats(0.0, 100.0), horizon=st.integers(1, 50),
       span=st.floats(0.01, 10.0), scale=st.floats(0.0, 3.0))
def test_width_is_the_unit_reward_width_times_span(t, variance, horizon, span, scale):
    """Rewards scaled by ``span``: the variance scales by ``span^2``, the width by ``span``."""
    unit = jin_bernstein_width(float(t), variance, horizon, 1.0, 2.5, 6, scale)
    scaled = jin_bernstein_width(float(t), variance * span**2, horizon, span, 2.5, 6, scale)
    assert scaled == pytest.approx(span * unit, rel=1e-12, abs=1e-300)


def test_first_bonus_is_half_the_first_width():
    # alpha_1 = 1 and beta_0 = 0: b_1 = beta_1 / 2
    assert jin_bernstein_bonus(1.0, 3.0, 0.0, 7) == 1.5
    # t = 2, H = 2: alpha_2 = 3/4, b_2 = (beta_2 - beta_1 / 4) / (3 / 2)
    assert jin_bernstein_bonus(2.0, 2.0, 3.0, 2) == pytest.approx((2.0 - 0.75) / 1.5, rel=1e-15)


@settings(max_examples=50, deadline=None)
@given(widths=st.lists(st.floats(0.0, 1e3), min_size=1, max_size=60),
       horizon=st.integers(1, 100))
def test_weighted_bonuses_telescope_to_half_the_width(widths, horizon):
    """``sum_i alpha_t^i b_i = beta_t / 2`` for any widths: the recursion ``B_t = (1 -
    alpha_t) B_{t-1} + alpha_t b_t`` that ``Q`` applies to its bonus share. Each step
    rounds a few times; the widths are at most 1e3, so 1e-9 absolute is a wide margin."""
    carried, previous = 0.0, 0.0
    for t, width in enumerate(widths, start=1):
        alpha = jin_step_size(float(t), horizon)
        carried = (1 - alpha) * carried + alpha * jin_bernstein_bonus(float(t), width, previous,
                                                                      horizon)
        previous = width
    assert carried == pytest.approx(widths[-1] / 2, rel=1e-9, abs=1e-9)


def two_states():
    """State 0: action 0 pays 0.2 and stays, action 1 pays 0 and moves to state 1, where
    every action pays 1 and stays (deterministic: no random draw changes a step)."""
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[0, 1, 1] = P[1, :, 1] = 1.0
    R = np.array([[0.2, 0.0], [1.0, 1.0]])
    return TabularMDP.from_dense(P, R, start=np.array([1.0, 0.0]))


def algorithm_box(H, K, scale, delta):
    """Jin et al.'s Algorithm 2 on :func:`two_states`, line by line in Python with the
    paper's sums ``mu`` and ``sigma`` (``W_t = sigma / t - (mu / t)^2``), the constants of
    :func:`optimistic_q_learning` (``c1 = c2 = 2 scale``, ``iota = ln(S A K H / delta)``,
    rewards in [0, 1] so span 1). Returns the greedy policies and how many widths took
    the Bernstein branch."""
    S = A = 2
    nxt, rew = np.array([[0, 1], [1, 1]]), np.array([[0.2, 0.0], [1.0, 1.0]])
    iota = math.log(S * A * K * H / delta)
    Q = np.array([np.full((S, A), H - h, dtype=float) for h in range(H)])
    N, mu, sigma, beta = (np.zeros((H, S, A)) for _ in range(4))
    policies, bernstein_branch = np.zeros((K, H, S), dtype=int), 0
    for k in range(K):
        policies[k] = Q.argmax(axis=2)
        s = 0
        for h in range(H):
            a = int(Q[h, s].argmax())
            s2 = nxt[s, a]
            v = min(H - h - 1.0, Q[h + 1, s2].max()) if h + 1 < H else 0.0
            N[h, s, a] += 1
            t = N[h, s, a]
            mu[h, s, a] += v
            sigma[h, s, a] += v * v
            W = max(sigma[h, s, a] / t - (mu[h, s, a] / t) ** 2, 0.0)
            first = math.sqrt(H / t * (W + H) * iota) + math.sqrt(H**7 * S * A) * iota / t
            second = math.sqrt(H**3 * iota / t)
            bernstein_branch += first < second
            new_beta = 2 * scale * min(first, second)
            alpha = (H + 1) / (H + t)
            b = (new_beta - (1 - alpha) * beta[h, s, a]) / (2 * alpha)
            beta[h, s, a] = new_beta
            Q[h, s, a] = (1 - alpha) * Q[h, s, a] + alpha * (rew[s, a] + v + b)
            s = s2
    return policies, bernstein_branch


def test_learner_follows_the_algorithm_box():
    """12,000 episodes of H = 2 (iota = 13.8): a pair played at every step passes
    ``t = H^4 S A iota / (1 - sqrt((W + H) / H^2))^2``, about 10,300 at ``W = 0``, and
    takes the Bernstein branch; the scale 0.05 makes the greedy policy change along the
    way. Same policies in every episode (the box's ties go to the lowest action too; the
    kernel's running variance differs from the box's in the last bits at most)."""
    H, K = 2, 12_000
    box, bernstein_branch = algorithm_box(H, K, scale=0.05, delta=0.1)
    assert bernstein_branch > 1000
    assert len({tuple(p.ravel()) for p in box}) > 1
    result = optimistic_q_learning(two_states(), horizon=H, episodes=K, bonus="bernstein",
                                   scale=0.05, delta=0.1)
    np.testing.assert_array_equal(result.policy, box)


def test_learner_regret_stops_growing_on_the_two_state_mdp():
    # with the paper's constants the bonus keeps the untried action's Q at the cap for a
    # while; once both first-step actions are tried often enough, the gap 0.6 wins
    mdp = two_states()
    measured = regret(mdp, optimistic_q_learning(mdp, horizon=2, episodes=400,
                                                 bonus="bernstein", scale=0.05, runs=2))
    np.testing.assert_array_equal(measured.per_episode[:, -100:], 0.0)
