"""What the RLHF learners that train logits directly return: DPO, iterated DPO and KTO.

Each result is frozen and shares the run axis of :class:`~tabular.results.RunsResult`
(``runs=n``: a leading axis of length ``n``; ``run(i)`` picks one run). The
policy-gradient learners used for RLHF (PPO, GRPO, ...) return
:class:`~tabular.pg.results.PolicyGradientResult`; the fitted models (the reward model,
the process reward model, the n-gram LM) and the exact solutions (the KL optimum, the
KTO optimum, best-of-N) live in their own modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tabular.model.policy import SoftmaxPolicy
from tabular.pg.results import PolicyGradientResult, TrainingHistory, trained_policy
from tabular.results import SHARED, RunsResult


@dataclass(frozen=True, eq=False, repr=False)
class SoftmaxRunsResult(RunsResult):
    """Trained logits ``[R, A]`` (``[runs, R, A]`` with ``runs=n``) and the policy's
    ``row_of_state`` ``[S]`` (shared by the runs); ``policy`` is the trained
    :class:`~tabular.SoftmaxPolicy` of a single-run result (``run(i).policy`` of a
    multi-run one)."""

    logits: np.ndarray
    row_of_state: np.ndarray = field(metadata=SHARED)

    @property
    def runs(self) -> int | None:
        """``None`` for a single-run result (no run axis), else the number of runs."""
        return None if self.logits.ndim == 2 else self.logits.shape[0]

    @property
    def policy(self) -> SoftmaxPolicy:
        """The trained :class:`~tabular.SoftmaxPolicy` of a single-run result."""
        return trained_policy(self)


@dataclass(frozen=True, eq=False, repr=False)
class DPOResult(SoftmaxRunsResult):
    """What :func:`~tabular.rlhf.dpo` returns: the trained ``logits`` ``[R, A]`` and
    ``row_of_state`` (see :class:`~tabular.rlhf.results.SoftmaxRunsResult`) and ``loss``
    ``[steps]``, the mean loss (DPO's or IPO's) before each step. DPO draws nothing, so
    there is one run and no run axis (``runs is None``). ``history``: the
    :class:`~tabular.pg.results.TrainingHistory` with ``history=True``, else ``None``
    (likewise in the results below)."""

    loss: np.ndarray
    history: TrainingHistory | None = None


@dataclass(frozen=True, eq=False, repr=False)
class IteratedDPOResult(SoftmaxRunsResult):
    """What :func:`~tabular.rlhf.iterated_dpo` returns: the trained ``logits`` and
    ``row_of_state`` (see :class:`~tabular.rlhf.results.SoftmaxRunsResult`), the DPO
    ``loss`` of every step of every round (``[rounds, steps]``; 0 in a round without a
    comparison) and the number of comparisons of each round, ``pairs`` (``[rounds]``); a
    leading run axis with ``runs=n``."""

    loss: np.ndarray
    pairs: np.ndarray
    history: TrainingHistory | None = None


@dataclass(frozen=True, eq=False, repr=False)
class KTOResult(SoftmaxRunsResult):
    """What :func:`~tabular.rlhf.kto` returns: the trained ``logits`` and ``row_of_state``
    (see :class:`~tabular.rlhf.results.SoftmaxRunsResult`), the mean KTO ``loss`` and the
    sampled reference point ``reference_point`` (``z0``) before each step (``[steps]``, or
    ``[runs, steps]``)."""

    loss: np.ndarray
    reference_point: np.ndarray
    history: TrainingHistory | None = None


@dataclass(frozen=True, eq=False, repr=False)
class GRPOResult(PolicyGradientResult):
    """A softmax policy trained by :func:`tabular.rlhf.grpo`, with what each iteration's
    update did (``[iterations]``, or ``[runs, iterations]``): ``dropped_groups``
    (int64), the groups DAPO's dynamic sampling left out; ``clip_ratio_low`` and
    ``clip_ratio_high``, the fractions of the iteration's token updates (over its
    ``num_iterations`` epochs) whose ratio the clip held (TRL's
    ``clip_ratio/low_mean`` and ``clip_ratio/high_mean``; CISPO's capped tokens are
    counted as high)."""

    dropped_groups: np.ndarray | None = None
    clip_ratio_low: np.ndarray | None = None
    clip_ratio_high: np.ndarray | None = None


@dataclass(frozen=True, eq=False, repr=False)
class SampledNashMDResult(SoftmaxRunsResult):
    """What :func:`~tabular.rlhf.sampled_nash_md` returns: the trained ``logits`` and
    ``row_of_state`` (see :class:`~tabular.rlhf.results.SoftmaxRunsResult`) and, per
    iteration (``[iterations]``, or ``[runs, iterations]``), the mean judge probability
    ``probability`` ``P(y > y')`` of the policy's response against the mixture's (TRL's
    ``rewards/probabilities``) and the mean log-ratio ``kl`` ``log pi(y|x) / ref(y|x)``
    of the policy's responses (TRL's ``loss/kl``)."""

    probability: np.ndarray
    kl: np.ndarray
    history: TrainingHistory | None = None
