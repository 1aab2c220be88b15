"""The one door through which every kernel reads a model (:attr:`TabularMDP.arrays`).

The model is stored compactly (:mod:`tabular.model.compact`): signed successors that carry
the ``done`` flag, and the ``(prob, reward)`` of each outcome in two float64 tables,
at the row its code names; no probability when ``K = 1``. A planning sweep or a
learner reads ``p``, ``r`` and ``s'`` through these accessors whatever the storage,
and gets the same numbers bit for bit. They take no branch on which stored array to
read, and are inlined into numba's IR (``inline="always"``): both keep the sweeps that
call them as fast as a loop over the arrays themselves
(docs/decisions/2026-12-02-model-accessors.md).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tabular.model.compact import SEARCH_OUTCOMES
from tabular.model.mdp import ModelArrays


@njit(cache=True, inline="always")
def n_outcomes(model):
    """K, the outcomes stored per state-action pair."""
    return model.successor.shape[2]


@njit(cache=True, inline="always")
def end_index(model):
    """The index of the end sentinel in a value vector ``V [S + 1]`` (its value is 0)."""
    return model.successor.shape[0]


@njit(cache=True, inline="always")
def value_index(model, s, a, k):
    """Where outcome ``k`` of ``(s, a)`` reads its next value in ``V [S + 1]``: ``s'``, or
    the end sentinel ``S`` when no value flows (it ends the episode or is padding)."""
    nxt = np.int64(model.successor[s, a, k])
    end = end_index(model)
    # unsigned, so that indexing V needs no test for a negative index
    return np.uint64(nxt if nxt >= 0 else end)


@njit(cache=True, inline="always")
def outcome_state(model, s, a, k):
    """``(s', done)`` of outcome ``k`` of ``(s, a)``: its next state (int64) and whether it
    ends the episode."""
    nxt = np.int64(model.successor[s, a, k])
    return nxt ^ (nxt >> 63), nxt < 0  # ~nxt = -1 - nxt where the sign is set


@njit(cache=True, inline="always")
def outcome_row(model, s, a, k):
    """The row of outcome ``k`` of ``(s, a)`` in the ``prob`` and ``reward`` tables (an
    unsigned code, so that indexing them needs no test for a negative index)."""
    return model.code[s, a, k]


@njit(cache=True, inline="always")
def outcome_prob(model, s, a, k):
    """The probability of outcome ``k`` of ``(s, a)`` (1 when ``K = 1``: nothing is read)."""
    if model.successor.shape[2] == 1:
        return 1.0
    return model.prob[outcome_row(model, s, a, k)]


@njit(cache=True, inline="always")
def outcome(model, s, a, k):
    """``(p, r)`` of outcome ``k`` of ``(s, a)``, its row read once (``p = 1`` when
    ``K = 1``: nothing is read)."""
    row = outcome_row(model, s, a, k)
    p = 1.0 if model.successor.shape[2] == 1 else model.prob[row]
    return p, model.reward[row]


@njit(cache=True, inline="always")
def outcome_reward(model, s, a, k):
    """The reward of outcome ``k`` of ``(s, a)``."""
    return model.reward[outcome_row(model, s, a, k)]


@njit(cache=True, inline="always")
def outcome_noise(model, s, a, k):
    """The standard deviation of outcome ``k``'s Gaussian reward noise (0 without)."""
    if model.reward_sd.shape[0] == 0:
        return 0.0
    return model.reward_sd[s, a, k]


@njit(cache=True, inline="always")
def searchable(model):
    """Whether the model keeps the sampler's search tables
    (:func:`~tabular.model.compact.search_tables`): ``K >= SEARCH_OUTCOMES``, a test of
    the K that the scan reads anyway, cheaper than a test of the tables' shape
    (docs/decisions/2026-12-02-model-accessors.md)."""
    return n_outcomes(model) >= SEARCH_OUTCOMES


@njit(cache=True)
def search_outcome(model, s, a, u):
    """The first outcome of ``(s, a)`` whose running sum of probabilities exceeds the draw
    ``u`` in ``[0, 1)``, or its last outcome of positive probability past them (Chen &
    Asau's indexed search: from the guide table's outcome for ``u``'s bucket, onwards
    through the sums). Needs the search tables (:func:`searchable`)."""
    row = model.cdf_row[s, a]
    k = model.guide[row, np.int64(u * model.guide.shape[1])]  # exact: a power of two
    while model.cdf[row, k] <= u:
        k += 1
    return k


@njit(cache=True, inline="always")
def with_start(model, start_cdf):
    """The same dynamics with another start distribution (cumulative ``start_cdf``)."""
    return ModelArrays(model.successor, model.code, model.prob, model.reward, start_cdf,
                       model.reward_sd, model.cdf_row, model.cdf, model.guide)
