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
do not depend on the form (``tests/test_compact.py``). Values stay float64. Kernels
read the stored form through the accessors of :mod:`tabular.model.outcomes` only.
"""

from __future__ import annotations

import numpy as np

#: The most distinct ``(prob, reward)`` pairs a model stores as uint16 codes.
MAX_CODES = 2**16
#: Models with fewer states store their successors as int32.
INT32_STATES = 2**31
#: The layouts: ``"compact"`` (the default, chosen from the arrays) and ``"wide"``
#: (int64 successors, float64 per outcome: what the compact form is checked against).
LAYOUTS = ("compact", "wide")


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


def _certain(prob, K):
    """``prob`` as stored, flat: empty when ``K = 1`` (a certain outcome needs no number)."""
    return np.zeros(0) if K == 1 else prob.ravel().copy()
