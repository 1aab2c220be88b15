"""Bandit instances of known means, and the constant of their regret's lower bound.

A :class:`BanditArms` fixes the mean of every arm (unlike the chapter-2
:class:`~tabular.learn.bandits.BanditTestbed`, which draws them per run), so that regret
is measured against known numbers: the realised regret ``sum_t (mu* - r_t)`` and the
pseudo-regret ``sum_t (mu* - mu_{A_t})``, exact given the pulls. Its arms are Bernoulli
(rewards in ``{0, 1}``) or Gaussian of one known standard deviation. With ``changes``
the means are piecewise constant in time (Garivier and Moulines' abruptly changing
environment): row ``j`` of ``means`` holds from step ``changes[j - 1]`` on.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tabular.checks import check_positive, check_positive_int, real_array
from tabular.model.mdp import MAX_REWARD

BERNOULLI, GAUSSIAN = 0, 1
LAWS = {"bernoulli": BERNOULLI, "gaussian": GAUSSIAN}


class BanditArms(NamedTuple):
    """``k`` arms of fixed ``means``: ``law="bernoulli"`` (rewards 1 with probability
    ``means[a]``, else 0; means in [0, 1]) or ``"gaussian"`` (rewards
    ``N(means[a], sd^2)``; ``sd`` is ignored for Bernoulli arms).

    ``changes``: empty (default, stationary arms, ``means`` of shape ``[k]``), or the
    increasing steps ``t >= 1`` (0-based) at which the means change, ``means`` then of
    shape ``[len(changes) + 1, k]``: row ``j`` holds on steps ``changes[j - 1] <= t <
    changes[j]``."""

    means: tuple[float, ...] | np.ndarray
    law: str = "bernoulli"
    sd: float = 1.0
    changes: tuple[int, ...] = ()


class ArmsArrays(NamedTuple):
    """What the kernels read of a :class:`BanditArms`: ``means`` float64 ``[segments, k]``
    (one row for stationary arms), ``starts`` int64 ``[segments]`` (the first step of
    each row; ``starts[0] = 0``), ``law`` (``BERNOULLI`` or ``GAUSSIAN``), ``sd``."""

    means: np.ndarray
    starts: np.ndarray
    law: int
    sd: float


def check_arms(arms) -> ArmsArrays:
    """``arms`` checked, as the kernels read it."""
    if not isinstance(arms, BanditArms):
        raise TypeError(f"arms must be a tabular.learn.bandit_arms.BanditArms, got "
                        f"{type(arms).__name__}")
    if not isinstance(arms.law, str) or arms.law not in LAWS:
        raise ValueError(f"arms.law must be one of {sorted(LAWS)}, got {arms.law!r}")
    starts = _check_changes(arms.changes)
    means = real_array("arms.means", arms.means)
    rows = means if means.ndim == 2 else means[None]
    if means.ndim != (1 if starts.size == 1 else 2) or rows.shape != (starts.size,
                                                                       rows.shape[1]) \
            or rows.shape[1] < 1:
        want = "[k]" if starts.size == 1 else f"[{starts.size}, k] (len(changes) + 1 rows)"
        raise ValueError(f"arms.means must be a non-empty array of shape {want}, got shape "
                         f"{list(means.shape)}")
    law = LAWS[arms.law]
    low, high = (0.0, 1.0) if law == BERNOULLI else (-MAX_REWARD, MAX_REWARD)
    bad = np.argwhere(~((means >= low) & (means <= high)))
    if bad.size:
        at = ", ".join(map(str, bad[0]))
        raise ValueError(f"arms.means[{at}] must be in [{low:g}, {high:g}] for "
                         f"{arms.law} arms, got {means[tuple(bad[0])]!r}")
    sd = check_positive("arms.sd", arms.sd) if law == GAUSSIAN else 1.0
    if sd > MAX_REWARD:
        raise ValueError(f"arms.sd must be at most {MAX_REWARD:g}, got {sd:g}")
    return ArmsArrays(np.ascontiguousarray(rows, dtype=np.float64), starts, law, sd)


def _check_changes(changes) -> np.ndarray:
    """``[0, *changes]`` as int64, ``changes`` increasing whole numbers >= 1."""
    if not isinstance(changes, (tuple, list, np.ndarray)):
        raise TypeError(f"arms.changes must be a tuple of steps, got {type(changes).__name__}")
    for j, step in enumerate(changes):
        check_positive_int(f"arms.changes[{j}]", step)
    starts = np.array([0, *changes], dtype=np.int64)
    if (np.diff(starts) <= 0).any():
        raise ValueError(f"arms.changes must increase, got {tuple(changes)}")
    return starts


def _bernoulli_kl(p: np.ndarray, q: float) -> np.ndarray:
    """``KL(Bernoulli(p) || Bernoulli(q))`` with ``0 log 0 = 0`` (``q`` in (0, 1))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(p > 0, p * np.log(p / q), 0.0)
        second = np.where(p < 1, (1 - p) * np.log((1 - p) / (1 - q)), 0.0)
    return first + second


def lai_robbins_constant(arms: BanditArms) -> float:
    """The constant of Lai and Robbins' (1985) lower bound: every uniformly good policy has
    ``liminf_T E[regret_T] / log T >= sum_{a: mu_a < mu*} (mu* - mu_a) / KL(mu_a, mu*)``,
    the KL between the arm's law and the law of its family with the best mean
    (Bernoulli: :func:`~tabular.rules.bandit_indices.bernoulli_kl`; Gaussian of known
    ``sd``: ``gap^2 / (2 sd^2)``, so each term is ``2 sd^2 / gap``).

    Bernoulli arms whose best mean is 1 give 0: ``KL(mu_a, 1)`` is infinite for every
    ``mu_a < 1`` (a single 0 reward rules the arm out), so each term vanishes. An
    instance whose arms all share the best mean gives 0.
    """
    checked = check_arms(arms)
    if checked.starts.size > 1:
        raise ValueError("lai_robbins_constant needs stationary arms: arms.changes must be "
                         "empty")
    means = checked.means[0]
    best = means.max()
    gaps = best - means
    sub = gaps > 0
    if not sub.any():
        return 0.0
    if checked.law == GAUSSIAN:
        return float(np.sum(2.0 * checked.sd**2 / gaps[sub]))
    if best == 1.0:  # KL(mu_a, 1) = inf for mu_a < 1: each term is 0
        return 0.0
    return float(np.sum(gaps[sub] / _bernoulli_kl(means[sub], best)))
