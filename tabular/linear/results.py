"""What the linear learners and the exact linear quantities return (Sutton & Barto,
chapters 9-12): learned weights of state features (:class:`LinearPredictionResult`) or
of state-action features (:class:`LinearControlResult`, and
:class:`LinearDifferentialResult` for the average-reward learner), and a policy's
reward process with its exact values (:class:`RewardProcess`), with the checks a
hand-built one passes.

Records only: they hold arrays and read them, and run no kernel. The kernels'
parameter and output tuples stay beside their kernels (:mod:`tabular.linear.learners`,
:mod:`tabular.linear.control`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from tabular.checks import check_flag, check_gamma, real_array
from tabular.results import SHARED, LearningResult, RunsResult, short_repr
from tabular.types import FloatArray, IntArray


@dataclass(frozen=True, eq=False, repr=False)
class LinearPredictionResult(LearningResult):
    """Learned weights ``w`` (``[d]`` or ``[runs, d]``) of the features ``X`` (``[S, d]``,
    the same for every run); ``V = X w`` is the estimate of every state; ``w_history``
    (only when asked for): ``w`` after each episode, ``[episodes, d]`` or
    ``[runs, episodes, d]``; ``secondary_weights`` (TDC and GTD2 only): their
    secondary weights ``v``, shaped as ``w``."""

    w: np.ndarray
    features: np.ndarray = field(metadata=SHARED)
    w_history: np.ndarray | None = None
    secondary_weights: np.ndarray | None = None

    @property
    def V(self) -> FloatArray:
        """``v(s, w) = x(s) . w`` for every state, ``[S]`` or ``[runs, S]``."""
        return self.w @ self.features.T


@dataclass(frozen=True, eq=False, repr=False)
class LinearControlResult(LearningResult):
    """Learned weights ``w`` (``[d]`` or ``[runs, d]``) of the state-action features
    ``features`` (``[S, A, d]``, the same for every run), with the episodes' returns
    and lengths; ``Q = features . w`` (``[S, A]``), ``V = max_a Q`` and ``policy``, the
    greedy policy (int64, lowest action on ties), each with the run axis of ``w``."""

    w: np.ndarray
    features: np.ndarray = field(metadata=SHARED)

    @property
    def Q(self) -> FloatArray:
        """``q(s, a, w) = x(s, a) . w`` for every pair, ``[S, A]`` or ``[runs, S, A]``."""
        return _action_values(self.features, self.w)

    @property
    def V(self) -> FloatArray:
        """``max_a q(s, a, w)``: the greedy policy's value as the learner estimates it."""
        return self.Q.max(axis=-1)

    @property
    def policy(self) -> IntArray:
        """The greedy policy ``argmax_a q(s, a, w)`` (int64, lowest action on ties)."""
        return self.Q.argmax(axis=-1)


@dataclass(frozen=True, eq=False, repr=False)
class LinearDifferentialResult(RunsResult):
    """What :func:`~tabular.linear.control.differential_semi_gradient_sarsa` returns,
    with a leading run axis for ``runs=n``: ``w`` ``[d]`` of the features ``[S, A, d]``;
    ``average_reward``, the learned ``Rbar``; ``reward_rate``, the reward per step the
    behaviour collected over the run; ``Q`` (the differential action values ``[S, A]``)
    and ``policy`` (greedy in ``Q``, int64, lowest action on ties)."""

    run_axis_of = ("w", 1)

    w: np.ndarray
    features: np.ndarray = field(metadata=SHARED)
    average_reward: np.ndarray
    reward_rate: np.ndarray

    @property
    def Q(self) -> FloatArray:
        """``q(s, a, w) = x(s, a) . w`` for every pair, ``[S, A]`` or ``[runs, S, A]``."""
        return _action_values(self.features, self.w)

    @property
    def policy(self) -> IntArray:
        """The greedy policy ``argmax_a q(s, a, w)`` (int64, lowest action on ties)."""
        return self.Q.argmax(axis=-1)


def _action_values(features: np.ndarray, w: np.ndarray) -> FloatArray:
    """``q(s, a, w)`` for every pair, ``[S, A]`` (or ``[runs, S, A]`` for ``w [runs, d]``)."""
    return np.einsum("sad,...d->...sa", features, w)


@dataclass(frozen=True, eq=False, repr=False)
class RewardProcess:
    """The Markov reward process of a policy on a model, with its exact values.

    ``P``: ``[S, S]``, the probability of each move with value flowing (a row sums to
    less than 1 where the episode may end); ``r``: ``[S]``, the expected reward;
    ``v``: ``[S]``, ``v_pi`` (eq. 4.4); ``mu``: ``[S]``, the on-policy distribution;
    ``gamma``: the discount; ``episodic``: whether ``mu`` is eq. 9.3's normalised
    expected visits (episodes end) or the stationary distribution (they never do).

    One built by hand is checked as :func:`~tabular.linear.exact.reward_process`'s are:
    ``P`` a real ``[S, S]`` matrix of probabilities whose rows sum to at most 1 (to
    1e-9), ``r`` and ``v`` finite ``[S]``, ``mu`` a distribution, ``gamma`` in [0, 1],
    ``episodic`` a bool; a ``ValueError`` names the field otherwise.
    """

    P: np.ndarray
    r: np.ndarray
    v: np.ndarray
    mu: np.ndarray
    gamma: float
    episodic: bool

    __repr__ = short_repr

    def __post_init__(self) -> None:
        P = real_array("P", self.P)
        if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] < 1:
            raise ValueError(f"P must be a square [S, S] matrix, got shape {list(P.shape)}")
        S = P.shape[0]
        bad = ~((P >= 0.0) & (P <= 1.0)).all(axis=1) | (P.sum(axis=1) > 1.0 + 1e-9)
        if bad.any():
            raise ValueError(f"P[{int(np.argmax(bad))}] is not a row of probabilities summing "
                             "to at most 1 (NaN, negative or above 1)")
        fields: dict[str, object] = {"P": P, "mu": distribution(self.mu, S)}
        for name in ("r", "v"):
            arr = real_vector(name, self.__dict__[name], S)
            if not np.isfinite(arr).all():
                i = int(np.argmax(~np.isfinite(arr)))
                raise ValueError(f"{name}[{i}] = {arr[i]} is not finite")
            fields[name] = arr
        fields["gamma"] = check_gamma(self.gamma)
        fields["episodic"] = check_flag("episodic", self.episodic)
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @property
    def n_states(self) -> int:
        """The number of states ``S``."""
        return self.r.shape[0]


def real_vector(name: str, value: npt.ArrayLike, n: int, what: str = "") -> np.ndarray:
    """``value`` as a float64 ``[n]`` array of real numbers, or a ``ValueError`` naming
    ``name`` (``what`` says what one entry is)."""
    arr = np.asarray(value)
    if (arr.shape != (n,) or arr.dtype == np.bool_
            or not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr)):
        raise ValueError(f"{name} must be a real array of shape [{n}]{what}, got dtype "
                         f"{arr.dtype} and shape {list(arr.shape)}")
    return arr.astype(np.float64)


def distribution(mu: npt.ArrayLike, n_states: int) -> np.ndarray:
    """``mu`` as a float64 distribution over ``n_states`` states, or a ``ValueError``."""
    arr = real_vector("mu", mu, n_states)
    if not (np.isfinite(arr).all() and (arr >= 0).all() and abs(arr.sum() - 1.0) <= 1e-9):
        raise ValueError(f"mu must be a distribution (non-negative, summing to 1), got {arr}")
    return arr
