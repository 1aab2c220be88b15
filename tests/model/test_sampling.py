"""The sampler's search tables (:func:`tabular.model.compact.search_tables`): for every draw,
the indexed search picks the outcome that the scan of all K outcomes picks, so a model
with many outcomes keeps every learner's numbers bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from tabular import TabularMDP, checks
from tabular.model import compact
from tabular.model.outcomes import search_outcome
from tabular.model.sampling import scan_outcome
from tabular.testing import property_settings, random_mdp

PROPERTY = property_settings(60)
#: Weights of a probability row: padding (0), tiny, equal (sums of equal numbers leave
#: rounding gaps, as 0.1 ten times does) and any in between.
WEIGHTS = st.one_of(st.just(0.0), st.just(1e-300), st.just(1e-17), st.just(0.1),
                    st.just(1.0), st.floats(1e-12, 1.0))


@st.composite
def outcome_rows(draw):
    """``prob [S, A, K]`` with ``K >= SEARCH_OUTCOMES``: rows of the weights above
    (normalised), some of them a short row padded with zeros at its end, some equal."""
    K = draw(st.integers(compact.SEARCH_OUTCOMES, 40))
    S, A = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    rows = []
    for _ in range(S * A):
        if rows and draw(st.booleans()):
            rows.append(rows[-1])  # a repeated row: the tables keep it once
            continue
        used = draw(st.integers(1, K))
        w = np.array(draw(st.lists(WEIGHTS, min_size=used, max_size=used)) + [0.0] * (K - used))
        if w.sum() == 0.0:
            w[draw(st.integers(0, used - 1))] = 1.0
        rows.append(w / w.sum() if draw(st.booleans()) else w / w.sum() * (1 - 1e-10))
    return np.array(rows).reshape(S, A, K)


def draws_to_try(cdf: np.ndarray, G: int) -> np.ndarray:
    """Draws at and beside every running sum and guide bucket edge, the ends of ``[0, 1)``
    and a few at random: the only places where two searches can disagree."""
    edges = np.r_[cdf[np.isfinite(cdf)], np.cumsum(cdf), np.arange(G) / G]
    u = np.r_[edges, np.nextafter(edges, 0.0), np.nextafter(edges, 1.0), 0.0,
              1.0 - 2.0**-53, np.random.default_rng(0).random(50)]
    return np.unique(u[(u >= 0.0) & (u < 1.0)])


@njit(cache=True)
def _both(model, s, a, draws):
    """The outcome the scan and the search pick for each draw, ``[2, n]``."""
    out = np.empty((2, draws.shape[0]), np.int64)
    for i in range(draws.shape[0]):
        out[0, i] = scan_outcome(model, s, a, draws[i])
        out[1, i] = search_outcome(model, s, a, draws[i])
    return out


@PROPERTY
@given(outcome_rows())
def test_the_search_picks_the_scans_outcome_for_every_draw(prob):
    S, A, K = prob.shape
    mdp = TabularMDP(np.arange(S * A * K).reshape(S, A, K) % S, prob, np.zeros(prob.shape),
                     np.zeros(prob.shape, bool), np.full(S, 1.0 / S))
    model = mdp.arrays
    assert model.cdf.shape[0] == len({row.tobytes() for row in prob.reshape(S * A, K)})
    for s in range(S):
        for a in range(A):
            row = model.cdf[model.cdf_row[s, a]]
            picked = _both(model, s, a, draws_to_try(np.r_[row, np.cumsum(prob[s, a])],
                                                     model.guide.shape[1]))
            np.testing.assert_array_equal(picked[0], picked[1])
            assert (prob[s, a, picked[1]] > 0.0).all()  # never a padding outcome


def test_a_draw_past_the_last_running_sum_picks_the_last_outcome_of_positive_probability():
    """Ten outcomes of 0.1 sum to 0.9999999999999999, of 0.1 (1 - 1e-10) (within the
    model's tolerance) to less: a draw at or above the sum is in the gap, and picks
    outcome 9, not the padding after it."""
    for scale in (1.0, 1.0 - 1e-10):
        prob = np.zeros((1, 1, 12))
        prob[0, 0, :10] = 0.1 * scale
        model = TabularMDP(np.zeros((1, 1, 12), int), prob, np.zeros((1, 1, 12)),
                           np.ones((1, 1, 12), bool), [1.0]).arrays
        total = np.cumsum(prob[0, 0])[-1]
        gap = np.unique([total, np.nextafter(total, 1.0), 1.0 - 2.0**-53])
        gap = gap[gap < 1.0]  # the largest draw of [0, 1) may be the sum itself
        assert total < 1.0 and gap[0] == total
        np.testing.assert_array_equal(_both(model, 0, 0, gap), 9)


def test_small_models_keep_no_tables_and_large_ones_keep_each_distinct_row_once():
    for K in (1, compact.SEARCH_OUTCOMES - 1):
        model = random_mdp(np.random.default_rng(K), 5, 2, K).arrays
        assert model.cdf_row.size == model.cdf.size == model.guide.size == 0
    walk = np.full((6, 1, 16), 1 / 16)
    walk[0, 0] = walk[5, 0] = np.r_[1.0, np.zeros(15)]
    model = TabularMDP(np.zeros((6, 1, 16), int), walk, np.zeros(walk.shape),
                       np.ones(walk.shape, bool), np.full(6, 1 / 6)).arrays
    assert model.cdf.shape == (2, 16) and model.guide.shape == (2, 16)
    rows = model.cdf_row[:, 0]
    assert rows[0] == rows[5] != rows[1] and (rows[1:5] == rows[1]).all()
    np.testing.assert_array_equal(model.cdf[rows[0]], np.inf)  # one outcome: picked always


def test_a_model_whose_search_tables_would_not_fit_is_refused(monkeypatch):
    monkeypatch.setattr(checks, "memory_limit", lambda: 100)  # a machine of 200 bytes
    prob = np.full((2, 1, compact.SEARCH_OUTCOMES), 1 / compact.SEARCH_OUTCOMES)
    with pytest.raises(ValueError, match=r"the model is too large: the sampler's search "
                                         r"tables over 2 x 1 x 5 outcomes would need 640 bytes"):
        TabularMDP(np.zeros(prob.shape, int), prob, np.zeros(prob.shape),
                   np.ones(prob.shape, bool), [0.5, 0.5])
