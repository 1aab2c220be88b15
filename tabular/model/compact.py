"""How a :class:`~tabular.TabularMDP` stores its model: as few bytes per outcome as stay exact.

A value-iteration sweep reads every outcome of every state-action pair once, so on a
large model its time is the bytes it moves (Sutton & Barto's sweeps, section 4.4, are
memory-bound loops). The wide form, ``next_state`` int64, ``prob`` and ``reward``
float64 and ``done`` bool per outcome, moves 25 bytes per outcome; the stored form,
chosen automatically from the arrays, moves 6 (a :class:`~tabular.model.mdp.ModelArrays`):

- ``successor``: int32 while ``S < 2**31`` (int64 beyond): the outcome's next state
  ``s'``, or ``-1 - s'`` when no value flows from it: the outcome ends the episode or
  has probability 0 (padding). The ``done`` flag lives in the sign, so there is no
  ``done`` array, and ``s'`` is kept, so nothing is lost.
- ``code``: uint16, the row of the outcome's ``(prob, reward)`` pair in two float64
  tables ``prob [C]`` and ``reward [C]``, when the model has at most ``MAX_CODES``
  distinct pairs (told apart by their bits, so ``-0.0`` stays ``-0.0``); otherwise
  the tables hold one row per outcome and ``code`` (uint32, uint64 past ``2**32``
  outcomes) is each outcome's own row, ``(s A + a) K + k`` (the wide form). Codes
  are unsigned, so that indexing the tables needs no test for a negative index.
- ``K = 1``: every outcome is certain; ``prob`` is empty and never read.

Every number a kernel reads is the one the wide form holds, bit for bit, so results
do not depend on the form (``tests/model/test_compact.py``). Values stay float64. Kernels
read the stored form through the accessors of :mod:`tabular.model.outcomes` only.

A model with at least ``SEARCH_OUTCOMES`` outcomes per pair also keeps a table for the
sampler (:func:`search_tables`): its distinct probability rows, each as running sums
with a guide table over them (Chen & Asau's indexed search), so that drawing an outcome
costs O(1) expected reads instead of a scan of all K
(docs/decisions/2026-12-04-sampler-search-tables.md).
"""

from __future__ import annotations

import numpy as np

from tabular.checks import check_fits

#: The most distinct ``(prob, reward)`` pairs a model stores as uint16 codes.
MAX_CODES = 2**16
#: Models with fewer states store their successors as int32.
INT32_STATES = 2**31
#: The layouts: ``"compact"`` (the default, chosen from the arrays) and ``"wide"``
#: (int64 successors, float64 per outcome: what the compact form is checked against).
LAYOUTS = ("compact", "wide")
#: The fewest outcomes per pair for which a model keeps the sampler's search tables:
#: below it the branch-free scan of every outcome is as fast
#: (docs/decisions/2026-12-04-sampler-search-tables.md).
SEARCH_OUTCOMES = 5
#: Bytes per outcome slot that building the search tables may take at its peak (55-61
#: measured with every row distinct; docs/decisions/2026-12-04-sampler-search-tables.md).
SEARCH_BYTES = 64


def index_dtype(n_states: int):
    """int32 while every state (and ``-1 - s``) fits in 32 bits, else int64."""
    return np.int32 if n_states < INT32_STATES else np.int64


def encode(next_state, prob, reward, done, layout: str = "compact") -> tuple:
    """``(successor, code, prob, reward)`` of validated wide arrays (``[S, A, K]``, int64,
    float64, float64, bool), in ``layout`` (``"compact"`` or ``"wide"``); ``code`` is
    ``None`` when ``prob`` and ``reward`` are per outcome (flat; see :func:`own_rows`)."""
    S, _, K = prob.shape
    flows = ~done & (prob > 0.0)
    successor = np.where(flows, next_state, -1 - next_state)
    if layout == "wide":
        return successor, None, _certain(prob, K), reward.ravel().copy()
    successor = successor.astype(index_dtype(S))
    p_bits = np.zeros(1, np.uint64) if K == 1 else prob.view(np.uint64)
    p_table, p_index = np.unique(p_bits, return_inverse=True)
    r_table, r_index = np.unique(reward.view(np.uint64), return_inverse=True)
    pair = p_index.ravel() * np.int64(r_table.size) + r_index.ravel()
    if p_table.size * r_table.size <= MAX_CODES:  # a row for every combination: no sort
        joint, code = np.arange(p_table.size * r_table.size), pair
    else:
        joint, code = np.unique(pair, return_inverse=True)
        if joint.size > MAX_CODES:
            return successor, None, _certain(prob, K), reward.ravel().copy()
    p_rows, r_rows = np.divmod(joint, r_table.size)
    return (successor, code.astype(np.uint16).reshape(prob.shape),
            _certain(p_table[p_rows].view(np.float64), K), r_table[r_rows].view(np.float64))


def decode(arrays, name: str) -> np.ndarray:
    """The wide ``next_state`` (int64), ``prob``, ``reward`` (float64) or ``done`` (bool)
    ``[S, A, K]`` of a :class:`~tabular.model.mdp.ModelArrays`, as a new array."""
    successor, code = arrays.successor, arrays.code
    if name == "next_state":
        return np.where(successor < 0, -1 - successor.astype(np.int64), successor)
    if name == "done":
        return (successor < 0) & (decode(arrays, "prob") > 0.0)
    if name == "prob" and successor.shape[2] == 1:
        return np.ones(successor.shape)
    return getattr(arrays, name)[code]


def own_rows(shape) -> np.ndarray:
    """The codes of per-outcome tables: each outcome's flat index, uint32 (uint64 past
    ``2**32`` outcomes)."""
    n = int(np.prod(shape))
    return np.arange(n, dtype=np.uint32 if n < 2**32 else np.uint64).reshape(shape)


def search_tables(code, prob) -> tuple:
    """``(cdf_row, cdf, guide)``: the sampler's tables for the stored ``code [S, A, K]`` and
    ``prob`` table (:func:`tabular.model.outcomes.search_outcome` reads them).

    - ``cdf`` float64 ``[R, K]``: the ``R`` distinct probability rows (told apart by
      their bits), each as the running sums that the sampler's scan adds up, in its
      order (``np.cumsum`` adds one after the other), and ``+inf`` from the row's last
      outcome of positive probability on, so that a draw past the last sum (a rounding
      gap) selects that outcome, as the scan does;
    - ``cdf_row`` int64 ``[S, A]``: the row of each pair;
    - ``guide`` int64 ``[R, G]``, ``G`` the power of two ``>= K``: ``guide[r, i]`` is
      the first outcome whose sum exceeds ``i / G`` (exact: ``G`` is a power of two), where
      the search for a draw ``u`` starts, at ``i = floor(u G)``; it moves on past
      ``1 + K / G <= 2`` sums on average, whatever the probabilities.

    Three empty arrays when ``K < SEARCH_OUTCOMES`` (the sampler scans); a ``ValueError``,
    before anything is allocated, when building them could take more than
    :func:`~tabular.checks.memory_limit`.
    """
    S, A, K = code.shape
    if K < SEARCH_OUTCOMES:
        return np.zeros((0, 0), np.int64), np.zeros((0, 0)), np.zeros((0, 0), np.int64)
    check_fits("the model", SEARCH_BYTES * code.size,
               f"the sampler's search tables over {S:,} x {A:,} x {K:,} outcomes")
    rows = prob[code].reshape(S * A, K)
    _, first, row = np.unique(rows.view(np.dtype((np.void, 8 * K))).ravel(),
                              return_index=True, return_inverse=True)
    distinct = rows[first]
    cdf = np.cumsum(distinct, axis=1)
    last = K - 1 - np.argmax(distinct[:, ::-1] > 0.0, axis=1)
    cdf[np.arange(K) >= last[:, None]] = np.inf
    G = 1 << (K - 1).bit_length()
    # a sum c is at most i / G from bucket i = ceil(c G) on; guide[r, i] counts them
    bucket = np.ceil(np.minimum(cdf * G, G)).astype(np.int64)
    counts = np.bincount((np.arange(len(cdf))[:, None] * (G + 1) + bucket).ravel(),
                         minlength=len(cdf) * (G + 1))
    guide = np.cumsum(counts.reshape(-1, G + 1)[:, :G], axis=1)
    return row.reshape(S, A).astype(np.int64), cdf, guide


def _certain(prob, K):
    """``prob`` as stored, flat: empty when ``K = 1`` (a certain outcome needs no number)."""
    return np.zeros(0) if K == 1 else prob.ravel().copy()
