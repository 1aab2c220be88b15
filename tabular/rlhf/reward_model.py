"""The Bradley-Terry reward model: fitting it to preferences and sampling preferences
from it (Bradley and Terry, 1952; Ouyang et al., 2022, section 3.5)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from tabular._numba.rng import randint, seed_states, uniform
from tabular.checks import MAX_COUNT, check_positive, check_positive_int, index_array, real_array
from tabular.pg.arguments import MAX_POLICY_STEP
from tabular.rlhf.results import RewardModel


@njit(cache=True)
def log_sigmoid(z):
    """``log sigma(z) = -log(1 + exp(-z))``, stable for either sign of ``z``."""
    if z >= 0.0:
        return -np.log1p(np.exp(-z))
    return z - np.log1p(np.exp(z))


@njit(cache=True)
def sigmoid(z):
    """``sigma(z) = 1 / (1 + exp(-z))``, without overflow for either sign of ``z``."""
    if z >= 0.0:
        return 1.0 / (1.0 + np.exp(-z))
    e = np.exp(z)
    return e / (1.0 + e)


@njit(cache=True)
def _bradley_terry_loss(scores, winners, losers, counts):
    total, n = 0.0, 0.0
    for i in range(winners.shape[0]):
        total -= counts[i] * log_sigmoid(scores[winners[i]] - scores[losers[i]])
        n += counts[i]
    return total / n


@njit(cache=True)
def _bradley_terry_descent(scores, winners, losers, counts, steps, alpha):
    """Gradient descent on the mean of ``-log sigma(r_w - r_l)``: each pair raises the
    winner and lowers the loser by ``sigma(-(r_w - r_l))``, the gradient of the
    Bradley-Terry log-likelihood (Bradley and Terry, 1952)."""
    n = counts.sum()
    grad = np.zeros_like(scores)
    for _ in range(steps):
        grad[:] = 0.0
        for i in range(winners.shape[0]):
            g = counts[i] * sigmoid(scores[losers[i]] - scores[winners[i]]) / n
            grad[winners[i]] += g
            grad[losers[i]] -= g
        for j in range(scores.shape[0]):
            scores[j] += alpha * grad[j]


def bradley_terry_loss(scores: npt.ArrayLike, winners: npt.ArrayLike, losers: npt.ArrayLike,
                       counts: npt.ArrayLike | None = None) -> float:
    """Mean ``-log sigma(r(x, y_w) - r(x, y_l))`` over preference pairs, the negative
    Bradley-Terry log-likelihood (Ouyang et al., 2022, eq. 1).

    ``scores``: the reward of each response; ``winners``, ``losers``: indices into
    ``scores``, one pair each; ``counts``: how often each pair was observed (default
    ``None``: once each).
    """
    scores = real_array("scores", scores)
    if scores.ndim != 1 or not np.isfinite(scores).all():
        raise ValueError(f"scores must be a 1-d array of finite numbers, got {scores!r}")
    winners = _indices("winners", winners, len(scores))
    losers = _indices("losers", losers, len(scores))
    if winners.shape != losers.shape or winners.size == 0:
        raise ValueError("winners and losers must list the same number (>= 1) of pairs, got "
                         f"{winners.size} and {losers.size}")
    counts = np.ones(len(winners)) if counts is None else real_array("counts", counts)
    if counts.shape != winners.shape or not (np.all(counts > 0.0) and np.isfinite(counts).all()):
        raise ValueError(f"counts must give a finite number > 0 per pair, got {counts!r}")
    return float(_bradley_terry_loss(scores, winners, losers, counts))


def _indices(name: str, values, n: int) -> np.ndarray:
    """``values`` as int64 indices into ``n`` scores (fractions and out-of-range refused)."""
    raw = index_array(name, values)
    if raw.ndim != 1 or ((raw < 0) | (raw >= n)).any():
        raise ValueError(f"{name} must be integer indices into the {n} scores, got {values!r}")
    return raw


#: The columns of TRL's dataset rows, by record kind: a preference (TRL's "preference"
#: type, explicit prompt) and an unpaired label (TRL's "unpaired preference" type, KTO's).
TRL_COLUMNS = {"preference": ("prompt", "chosen", "rejected"),
               "feedback": ("prompt", "completion", "label")}


def counted_record(item, i: int, name: str, fields: str) -> tuple:
    """``(count, *fields)`` of record ``i``, given as ``(*fields)`` (count 1) or ``(count,
    *fields)`` (three fields), or as TRL's dataset row, a mapping with the columns of
    :data:`TRL_COLUMNS` ``[name]`` (count 1; other columns, which TRL's datasets carry,
    are not read); a ``ValueError`` naming ``name`` and ``i`` otherwise, or when the
    count is not a finite number > 0."""
    if isinstance(item, Mapping):
        columns = TRL_COLUMNS.get(name, ())
        missing = [c for c in columns if c not in item]
        if not columns or missing:
            raise ValueError(f"{name} {i} is a mapping without the columns {missing or '?'}: "
                             f"give ({fields}) or TRL's row {{{', '.join(map(repr, columns))}}}"
                             f", got keys {sorted(map(str, item))}")
        return (1.0, *(item[c] for c in columns))
    if isinstance(item, str) or not hasattr(item, "__len__") or len(item) not in (3, 4):
        raise ValueError(f"{name} {i} is {item!r}, not ({fields}), (count, {fields}) or "
                         f"TRL's row {{{', '.join(map(repr, TRL_COLUMNS.get(name, ())))}}}")
    count, *rest = item if len(item) == 4 else (1, *item)
    return (check_positive(f"the count of {name} {i}", count), *rest)


def preference_records(preferences) -> list[tuple[float, str, str, str]]:
    """``(count, prompt, y_w, y_l)`` of each preference, given as ``(prompt, y_w, y_l)``
    (count 1), ``(count, prompt, y_w, y_l)`` or TRL's row ``{"prompt": x, "chosen": y_w,
    "rejected": y_l}`` (count 1): the one parser of every learner that takes preference
    data (:func:`train_reward_model`, :func:`~tabular.dpo`). A count is a finite number > 0 (a
    weight), the texts are strings, and a response is never compared with itself."""
    records = []
    for i, pref in enumerate(preferences):
        count, x, yw, yl = counted_record(pref, i, "preference", "prompt, y_w, y_l")
        if not all(isinstance(text, str) for text in (x, yw, yl)):
            raise ValueError(f"preference {i} ({x!r}, {yw!r}, {yl!r}) must hold strings")
        if yw == yl:
            raise ValueError(f"preference {i} ({x!r}, {yw!r}, {yl!r}) compares a response "
                             "with itself")
        records.append((count, x, yw, yl))
    if not records:
        raise ValueError("no preferences given")
    return records


def _preference_arrays(preferences: Iterable[tuple[Any, ...]]
                       ) -> tuple[dict[tuple[str, str], int], np.ndarray, np.ndarray, np.ndarray]:
    """:func:`preference_records` as index arrays over the distinct ``(prompt, response)``
    pairs: ``(keys, winners, losers, counts)``."""
    keys: dict[tuple[str, str], int] = {}
    winners: list[int] = []
    losers: list[int] = []
    counts: list[float] = []
    for count, x, yw, yl in preference_records(preferences):
        winners.append(keys.setdefault((x, yw), len(keys)))
        losers.append(keys.setdefault((x, yl), len(keys)))
        counts.append(count)
    return (keys, np.array(winners, dtype=np.int64), np.array(losers, dtype=np.int64),
            np.array(counts))


def train_reward_model(preferences: Iterable[tuple[Any, ...]], *,
                       reference: Iterable[tuple[str, str]] | None = None, steps: int = 20_000,
                       alpha: float = 5.0) -> RewardModel:
    """Fit ``r`` by maximum likelihood under Bradley-Terry, ``P(y_w > y_l) = sigma(r_w - r_l)``
    (Bradley and Terry, 1952; Ouyang et al., 2022, section 3.5).

    Only score differences within a prompt are identified (any shift ``c(x)`` leaves
    the loss unchanged), so the scores are normalised as InstructGPT did: per prompt,
    the reference responses average 0.

    Parameters
    ----------
    preferences : ``(prompt, y_w, y_l)`` or ``(count, prompt, y_w, y_l)`` tuples, or
        TRL's rows ``{"prompt": x, "chosen": y_w, "rejected": y_l}``.
    reference : the ``(prompt, response)`` pairs whose scores average 0 per prompt
        (default ``None``: every response compared).
    steps : full-batch gradient steps (default 20,000).
    alpha : the step size (default 5).

    Returns
    -------
    A :class:`RewardModel`.
    """
    steps = check_positive_int("steps", steps, high=MAX_COUNT)
    alpha = check_positive("alpha", alpha, MAX_POLICY_STEP)
    keys, winners, losers, counts = _preference_arrays(preferences)
    scores = np.zeros(len(keys))
    _bradley_terry_descent(scores, winners, losers, counts, steps, alpha)
    if not np.isfinite(scores).all():
        raise FloatingPointError(f"train_reward_model: the scores overflowed with alpha={alpha:g}; "
                                 "use a smaller alpha")
    loss = bradley_terry_loss(scores, winners, losers, counts)
    if loss > np.log(2.0) * (1.0 + 1e-9):
        # the descent starts at scores 0, of loss log 2; a step the loss's curvature allows
        # never rises above it (the gradient is 1/2-Lipschitz: any alpha < 4 descends)
        raise ValueError(f"train_reward_model: alpha={alpha:g} is too large for these "
                         f"preferences: the fit diverged to a loss of {loss:.4g}, above the "
                         f"log 2 = {np.log(2.0):.4g} of the all-zero scores it started from "
                         "(any alpha < 4 descends)")
    pairs = list(keys) if reference is None else [tuple(r) for r in reference]
    table = dict(zip(keys, scores, strict=True))
    for x in {k[0] for k in keys}:
        refs = [table[r] for r in pairs if r[0] == x and r in table]
        if not refs:
            raise ValueError(f"no reference response of prompt {x!r} was compared: "
                             "its score level cannot be fixed")
        shift = float(np.mean(refs))
        for k in table:
            if k[0] == x:
                table[k] -= shift
    return RewardModel({k: float(v) for k, v in table.items()}, loss)


@njit(cache=True)
def bradley_terry_wins(rng, score_i, score_j):
    """Whether ``i`` wins one simulated comparison with ``j``: with probability
    ``sigma(r_i - r_j)`` (Bradley and Terry, 1952)."""
    return uniform(rng) < sigmoid(score_i - score_j)


@njit(cache=True)
def _sample_bradley_terry(scores, n, rng):
    """``wins[i, j]``: how often ``i`` beat ``j`` in ``n`` comparisons of uniformly drawn
    distinct pairs, each won by ``i`` with probability ``sigma(r_i - r_j)``."""
    k = scores.shape[0]
    wins = np.zeros((k, k), dtype=np.int64)
    for _ in range(n):
        i = randint(rng, k)
        j = randint(rng, k - 1)
        j += j >= i
        if bradley_terry_wins(rng, scores[i], scores[j]):
            wins[i, j] += 1
        else:
            wins[j, i] += 1
    return wins


def sample_preferences(prompt: str, responses: Sequence[str], scores: npt.ArrayLike, n: int, *,
                       seed: int | None = 0) -> list[tuple[int, str, str, str]]:
    """``n`` labeller comparisons simulated from a Bradley-Terry model.

    Each comparison draws two distinct ``responses`` to ``prompt`` uniformly; response
    ``i`` beats ``j`` with probability ``sigma(scores[i] - scores[j])``. ``seed``
    (default 0) seeds the draws. Returns ``(count, prompt, winner, loser)`` tuples,
    one per ordered pair that occurred.
    """
    if not isinstance(prompt, str):
        raise ValueError(f"prompt must be a string, got {prompt!r}")
    if isinstance(responses, str) or not isinstance(responses, Sequence) \
            or not all(isinstance(y, str) for y in responses):
        raise ValueError(f"responses must be a list of strings, got {responses!r:.60}")
    if len(set(responses)) != len(responses):
        raise ValueError(f"responses must be distinct (a response compared with itself is "
                         f"no preference), got {responses!r:.60}")
    scores = real_array("scores", scores)
    if not np.isfinite(scores).all():
        raise ValueError(f"scores must be finite numbers, got {scores!r}")
    if scores.shape != (len(responses),) or len(responses) < 2:
        raise ValueError(f"scores must give one number for each of the (at least 2) "
                         f"responses, got shape {scores.shape} for {len(responses)} responses")
    n = check_positive_int("n", n, high=MAX_COUNT)
    wins = _sample_bradley_terry(scores, n, seed_states(seed, 1)[0])
    return [(int(wins[i, j]), prompt, responses[i], responses[j])
            for i, j in zip(*np.nonzero(wins), strict=True)]
