"""UCBVI's ``bonus="simplified_bernstein"`` (rlberry-scool's UCBVI): its bonus by hand, and
every greedy table of a run equal to those of a plain re-implementation of rlberry-scool's
``UCBVIAgent`` (0.7.3, read from its source; rlberry itself is not needed) on a
deterministic two-state MDP, where the path is fixed by the tables."""

import numpy as np
import pytest

from tabular import TabularMDP
from tabular.explore import ucbvi
from tabular.rules.exploration import simplified_bernstein_bonus


@pytest.mark.parametrize("n, stage_cap, scale, expected", [
    (1.0, 2.0, 1.0, 2.0),     # min(1 + 2, 2): capped at v_h
    (4.0, 2.0, 1.0, 1.0),     # 1 / 2 + 2 / 4
    (16.0, 2.0, 2.0, 0.625),  # 2 / 4 + 2 / 16
    (4.0, 3.0, 0.0, 0.75),    # scale 0 leaves v_h / N
])
def test_simplified_bernstein_bonus_by_hand(n, stage_cap, scale, expected):
    assert simplified_bernstein_bonus(n, stage_cap, scale) == expected


#: State 0: action 0 pays 0.2 and stays, action 1 pays 0 and moves to state 1, where
#: action 0 pays 1 and action 1 pays 0.5, both staying.
P = np.zeros((2, 2, 2))
P[0, 0, 0] = P[0, 1, 1] = P[1, :, 1] = 1.0
R = np.array([[0.2, 0.0], [1.0, 0.5]])
TWO = TabularMDP.from_dense(P, R, start=np.array([1.0, 0.0]))


def rlberry_ucbvi_tables(horizon, episodes, c):
    """The greedy table ``argmax_a Q[h, s, a]`` before each episode of rlberry-scool's
    ``UCBVIAgent(gamma=1, bonus_type="simplified_bernstein", bonus_scale_factor=c)`` on
    ``TWO``: ``Q = 0`` before the first episode; after each, the stage bonus ``B[h, s, a]``
    (at first ``v_h = H - h``) of each visit ``(h, s, a)`` set to ``min(c / sqrt(N) + v_h /
    N, v_h)``, then ``Q_h = R^ + B_h + P^ V_{h+1}`` (``R^ = 0`` and ``P^`` uniform for an
    unvisited pair) and ``V_h = min(max_a Q_h, v_0)``."""
    S, A = R.shape
    cap = horizon - np.arange(horizon, dtype=float)  # v_h, the reward range being 1
    visits, reward_sum, counts = np.zeros((S, A)), np.zeros((S, A)), np.zeros((S, A, S))
    B = np.repeat(cap, S * A).reshape(horizon, S, A)
    Q, tables = np.zeros((horizon, S, A)), []
    for _ in range(episodes):
        tables.append(Q.argmax(axis=2))
        s = 0
        for h in range(horizon):
            a = int(Q[h, s].argmax())
            s_next = int(P[s, a].argmax())
            visits[s, a] += 1
            reward_sum[s, a] += R[s, a]
            counts[s, a, s_next] += 1
            n = visits[s, a]
            B[h, s, a] = min(c * np.sqrt(1.0 / n) + cap[h] / n, cap[h])
            s = s_next
        seen = visits > 0
        R_hat = np.where(seen, reward_sum / np.maximum(visits, 1), 0.0)
        P_hat = np.where(seen[..., None], counts / np.maximum(visits, 1)[..., None], 1.0 / S)
        V = np.zeros(S)  # V_{h+1}, 0 after the last stage
        for h in range(horizon - 1, -1, -1):
            Q[h] = R_hat + B[h] + P_hat @ V
            V = np.minimum(Q[h].max(axis=1), cap[0])
    return np.array(tables)


@pytest.mark.parametrize("c", [0.0, 0.3, 1.0, 3.0])
def test_every_greedy_table_is_rlberrys(c):
    horizon, episodes = 3, 40
    ours = ucbvi(TWO, horizon=horizon, episodes=episodes, bonus="simplified_bernstein", scale=c)
    np.testing.assert_array_equal(ours.policy, rlberry_ucbvi_tables(horizon, episodes, c))


def test_the_tables_change_over_the_run():
    # the comparison above is not of constant tables: both actions are played in both states
    tables = rlberry_ucbvi_tables(3, 40, 1.0)
    assert {0, 1} <= set(tables[:, :, 0].ravel()) and {0, 1} <= set(tables[:, :, 1].ravel())
