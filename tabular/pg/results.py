"""What the policy-gradient learners return: a trained softmax policy, with the run axis
of :class:`~tabular.results.LearningResult` (``runs=n``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tabular.model.policy import SoftmaxPolicy
from tabular.results import SHARED, LearningResult, RunsResult, _brief


def trained_policy(result) -> SoftmaxPolicy:
    """The :class:`~tabular.SoftmaxPolicy` of a single-run result's ``logits`` and
    ``row_of_state`` (copies); a multi-run result names ``result.run(i).policy``."""
    if result.runs is not None:
        raise ValueError(f"this result holds {result.runs} runs: pick one with "
                         "result.run(i).policy")
    return SoftmaxPolicy(result.logits.copy(), result.row_of_state.copy())


#: How many metrics a history's repr names before it counts the rest.
_SHOWN_METRICS = 6


@dataclass(frozen=True, eq=False, repr=False)
class PolicyGradientResult(LearningResult):
    """A trained softmax policy.

    ``logits``: ``[R, A]`` or ``[runs, R, A]``; ``row_of_state``: the policy's row
    map ``[S]`` (shared by the runs); ``V``: the critic or baseline ``[S]`` or
    ``[runs, S]`` (``None`` without one). ``episode_returns`` sum the environment's
    rewards, without the KL term or the floor (``-inf`` for an episode that fell
    into a trap). ``policy`` is the trained :class:`~tabular.SoftmaxPolicy` of a
    single-run result (use ``run(i).policy`` on a multi-run one). ``history``: the
    :class:`~tabular.pg.results.TrainingHistory` of a learner called with
    ``history=True``, else ``None``.
    """

    logits: np.ndarray
    row_of_state: np.ndarray = field(metadata=SHARED)
    V: np.ndarray | None = None
    history: TrainingHistory | None = None

    @property
    def policy(self) -> SoftmaxPolicy:
        """The trained :class:`~tabular.SoftmaxPolicy` of a single-run result."""
        return trained_policy(self)


@dataclass(frozen=True, eq=False, repr=False)
class TrustRegionResult(PolicyGradientResult):
    """A softmax policy trained by a learner that bounds each policy update (PPO, TRPO),
    with statistics of its updates, one per iteration (``[iterations]`` or ``[runs,
    iterations]``).

    ``step_kl``: the KL divergence the iteration's update moved the policy, averaged
    over the batch's samples per episode, ``(1/M) sum_t KL(pi_old(.|s_t) ||
    pi_new(.|s_t))``; ``kl_penalty``: the coefficient ``c`` of PPO's adaptive KL penalty
    (on the KL to the previous policy) used in the iteration (``None`` for the clipped
    objective and TRPO); ``backtracks`` (int64):
    the halvings of TRPO's step before the line search accepted it, ``-1`` when it
    accepted none and the policy stayed (``None`` for PPO).
    """

    step_kl: np.ndarray | None = None
    kl_penalty: np.ndarray | None = None
    backtracks: np.ndarray | None = None


@dataclass(frozen=True, eq=False, repr=False)
class TrainingHistory(RunsResult):
    """What a learner called with ``history=True`` records, one column per evaluation.

    Attributes
    ----------
    iteration : int64 ``[E]``, the iterations evaluated (the policy after that many
        iterations: 0 is the starting policy, the last is the trained one); shared by
        the runs.
    metrics : ``{name: float64 [E]}`` (``[runs, E]`` with ``runs=n``), the exact
        ``exact/...`` metrics, the sampled ones under TRL's names and the callback's
        (see :mod:`tabular.pg.telemetry`). ``history[name]`` reads one.
    """

    iteration: np.ndarray = field(metadata=SHARED)
    metrics: dict[str, np.ndarray]

    def __getitem__(self, name: str) -> np.ndarray:
        """The metric ``name`` (``[E]``, or ``[runs, E]``)."""
        if name not in self.metrics:
            raise KeyError(f"no metric {name!r} in this history; it has {self.names}")
        return self.metrics[name]

    @property
    def names(self) -> tuple[str, ...]:
        """The metrics recorded, in order."""
        return tuple(self.metrics)

    @property
    def runs(self) -> int | None:
        """``None`` for a single-run history, else the number of runs."""
        first = next(iter(self.metrics.values()))
        return None if first.ndim == 1 else first.shape[0]

    def run(self, i: int) -> TrainingHistory:
        """Run ``i`` of a multi-run history."""
        if self.runs is None:
            raise ValueError("this history holds a single run (it has no run axis)")
        if not -self.runs <= i < self.runs:
            raise IndexError(f"run {i} is out of range for {self.runs} runs")
        return TrainingHistory(self.iteration, {k: v[i] for k, v in self.metrics.items()})

    def __repr__(self) -> str:
        # the first few metrics by name and shape; a learner logging TRL's names has 20+
        items = list(self.metrics.items())
        shown = ", ".join(f"{k!r}: {_brief(v)}" for k, v in items[:_SHOWN_METRICS])
        more = f", ... {len(items) - _SHOWN_METRICS} more" if len(items) > _SHOWN_METRICS else ""
        return (f"TrainingHistory(iteration={_brief(self.iteration)}, "
                f"metrics={{{shown}{more}}})")
