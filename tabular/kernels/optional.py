"""Optional kernel arguments without sentinel values.

A kernel argument that may be absent is passed as ``None``. Numba compiles one
specialisation per type, and these overloads resolve on the argument's type at
compile time, so the absent case costs nothing inside a loop.
"""

from __future__ import annotations

from numba.core import types
from numba.extending import overload

from ..rules.policy_gradient import kl_shaped_reward


def row(array, i):
    """``array[i]``, or ``None`` when ``array`` is ``None`` (a run's slice of an optional
    output)."""


def store(array, i, value):
    """``array[i] = value`` when ``array`` is given; nothing when it is ``None``."""


@overload(row, inline="always")
def _row(array, i):
    if isinstance(array, types.NoneType):
        return lambda array, i: None
    return lambda array, i: array[i]


@overload(store, inline="always")
def _store(array, i, value):
    if isinstance(array, types.NoneType):
        return lambda array, i, value: None

    def impl(array, i, value):
        array[i] = value

    return impl


def kl_penalised(reward, log_pi, rollout, s, a):
    """``reward`` with the KL penalty of ``rollout`` folded in (a record with ``beta``,
    the reference's ``ref_log_probs [R, A]`` by row and its ``ref_row [S]``; see
    :func:`tabular.rules.policy_gradient.kl_shaped_reward`), or ``reward`` as it is when
    ``rollout.ref_log_probs`` is ``None`` (no penalty)."""


@overload(kl_penalised)
def _kl_penalised(reward, log_pi, rollout, s, a):
    ref_type = rollout.types[rollout.fields.index("ref_log_probs")]
    if isinstance(ref_type, types.NoneType):
        return lambda reward, log_pi, rollout, s, a: reward

    def impl(reward, log_pi, rollout, s, a):
        log_ref = rollout.ref_log_probs[rollout.ref_row[s], a]
        return kl_shaped_reward(reward, log_pi, log_ref, rollout.beta)

    return impl
