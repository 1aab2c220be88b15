"""Training telemetry of the RLHF learners: a history of exact and sampled metrics.

With ``history=True`` a learner evaluates its policy ``pi_t`` every ``eval_every``
iterations (and after the last) and returns a :class:`TrainingHistory`:

- the exact quantities of the prefix tree (:mod:`tabular.solve.tree`), which only a
  tabular library can give: ``exact/objective`` ``J(pi_t) = E_pi[r] - beta KL(pi_t ||
  pi_ref)``, ``exact/gap`` ``J* - J(pi_t)`` (``J*`` the value of the closed-form optimum
  :func:`~tabular.rlhf.kl_optimum`), ``exact/kl_to_optimum`` ``KL(pi_t || pi*)`` over
  whole responses and ``exact/kl_to_ref`` ``KL(pi_t || pi_ref)``. Since
  ``pi*(y|x) = pi_ref(y|x) exp(r(x, y) / beta) / Z(x)``, ``J* - J(pi) = beta KL(pi ||
  pi*)`` for every policy: the gap and the distance to the optimum are one number seen
  two ways;
- what the learner sees, under TRL's names where TRL logs the same quantity: for the
  learners that sample responses, the batch the learner draws at iteration ``t`` from
  ``pi_t`` (after the last iteration: the batch it would draw next), ``objective/scores``
  (the mean reward of its responses), ``objective/kl`` (the mean over responses of
  ``sum_t log pi(a_t|s_t) - log pi_ref(a_t|s_t)``), ``objective/entropy`` (the mean
  of ``-sum_t log pi(a_t|s_t)``), ``objective/non_score_reward`` (``-beta`` times
  ``objective/kl``) and ``objective/rlhf_reward`` (their sum with the scores); PPO adds
  ``policy/clipfrac_avg`` (:func:`~tabular.pg.learners.ppo_clip_fraction`). DPO and
  KTO log their own (see :func:`tabular.rlhf.dpo`, :func:`tabular.rlhf.kto`).

The batch of iteration ``t`` is drawn again from a copy of the run's stream as it
stands before iteration ``t``, by the sampler the learner's kernel uses, so it is the
learner's own batch, not a fresh one. The kernels loop over all their iterations at
once, so a learner with a history runs them in chunks of ``eval_every`` iterations
(:func:`run_in_chunks`): each kernel call continues the stream and the logits where the
last left them and starts its iteration count where the last stopped, so the numbers
are those of one call. Without ``history`` the learner makes its one call as before.

A ``callback(iteration, policy, metrics)`` is called at every evaluation (once per run,
in run order) with a read-only copy of the policy and the metrics measured; it returns
``None`` or a mapping of its own metrics (names to numbers), recorded beside them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numba import njit

from tabular.checks import check_fits, check_flag, check_number, check_positive_int
from tabular.model.policy import SoftmaxPolicy
from tabular.pg.results import TrainingHistory
from tabular.pg.rollout import episode_buffers, sample_episode
from tabular.results import check_runs
from tabular.solve.tree import ending_probabilities, kl_optimum, path_returns

#: The exact metrics, in the order a history lists them.
EXACT = ("exact/objective", "exact/gap", "exact/kl_to_optimum", "exact/kl_to_ref")

#: The metrics of a sampled batch of responses, TRL's names (PPOTrainer, RLOOTrainer).
SAMPLED = ("objective/scores", "objective/kl", "objective/entropy",
           "objective/non_score_reward", "objective/rlhf_reward")

#: About this many evaluations when ``eval_every`` is not given.
DEFAULT_EVALUATIONS = 100

#: The memory one run's evaluation takes in a history, in bytes: its metrics are kept as
#: a dict of about ten names to floats until the run ends (585 bytes measured with
#: ``tracemalloc`` for the ten metrics of PPO), then as one float64 column each; 1 KiB
#: leaves room for a callback's metrics. :func:`check_history` bounds the total by it.
EVALUATION_BYTES = 1024

#: A learner's ``callback(iteration, policy, metrics)``: it may return more metrics to record.
Callback = Callable[[int, SoftmaxPolicy, dict[str, float]], Mapping[str, float] | None]


def check_history(history: object, eval_every: int | None, callback: object,
                  iterations: int, where: str, *, count: str = "iterations",
                  runs: int | None = None) -> int | None:
    """The evaluation interval of a learner ``where`` run for ``iterations`` iterations
    (its argument ``count``, default ``"iterations"``) and ``runs`` runs, or ``None``
    without ``history`` (then ``eval_every`` and ``callback`` must be unset).
    ``eval_every`` is an int in ``[1, iterations]``; ``None``: about
    :data:`DEFAULT_EVALUATIONS` evaluations. The evaluations' records are checked to fit
    in memory (:data:`EVALUATION_BYTES` each, per run) before the learner starts: an
    error names ``eval_every``, ``count`` and ``runs`` and says how much they would
    take."""
    if not check_flag("history", history):
        if eval_every is not None or callback is not None:
            raise ValueError(f"{where}: eval_every and callback need history=True")
        return None
    if callback is not None and not callable(callback):
        raise ValueError(f"{where}: callback must be callable as callback(iteration, policy, "
                         f"metrics), got {callback!r}")
    if eval_every is None:
        return max(1, -(-iterations // DEFAULT_EVALUATIONS))
    every = check_positive_int(f"{where}: eval_every", eval_every, high=iterations)
    n = check_runs(runs)
    evaluations = -(-iterations // every) + 1  # before each chunk, and after the last
    made_by = f"eval_every={every:,} over {count}={iterations:,}" + (
        "" if runs is None else f" and runs={n:,}")
    check_fits(f"{where}: {made_by}", n * evaluations * EVALUATION_BYTES,
               f"the history's {evaluations:,} evaluations x {n:,} run(s)")
    return every


@njit(cache=True)
def sample_batch(model, rollout, theta, rng, n):
    """``n`` episodes of ``softmax(theta)`` drawn one after another from the stream
    ``rng`` (advanced) by :func:`~tabular.pg.rollout.sample_episode`, as a learner's
    iteration draws its batch: ``(paths, seen, lengths, returns)``, the buffers of
    :func:`~tabular.pg.rollout.episode_buffers` and each episode's length and return."""
    paths, seen, dones, dist = episode_buffers(n, rollout.max_steps, theta.shape[1])
    lengths, returns = np.empty(n, dtype=np.int64), np.empty(n)
    for i in range(n):
        lengths[i], returns[i] = sample_episode(model, rollout, theta, rng, paths[i], seen[i],
                                                dones[i], dist)
    return paths, seen, lengths, returns


def batch_metrics(batch: tuple, rollout: Any) -> dict[str, float]:
    """The :data:`SAMPLED` metrics of a batch as :func:`sample_batch` returns it, against
    the reference and ``beta`` of ``rollout`` (a :class:`~tabular.pg.rollout.Rollout`)."""
    paths, seen, lengths, returns = batch
    on = np.arange(seen.shape[2]) < lengths[:, None]
    states = np.where(on, paths[:, 0, :-1], 0)  # past an episode's end the buffers are unset
    actions = np.where(on, paths[:, 1, :-1], 0)
    log_pi = np.where(on, seen[:, 1], 0.0)
    log_ref = np.where(on, rollout.ref_log_probs[rollout.ref_row[states], actions], 0.0)
    kl = float(np.mean((log_pi - log_ref).sum(axis=1)))
    scores = float(np.mean(returns))
    return {"objective/scores": scores, "objective/kl": kl,
            "objective/entropy": float(np.mean(-log_pi.sum(axis=1))),
            "objective/non_score_reward": -rollout.beta * kl,
            "objective/rlhf_reward": scores - rollout.beta * kl}


class Recorder:
    """Evaluates the runs of a learner: the exact metrics of every run's policy, the
    learner's ``sampled(run, iteration)`` metrics and the callback's, one column per
    :meth:`record`; :meth:`history` collects them.

    ``mdp``, ``ref_policy``, ``beta``: the KL-regularised problem (a deterministic token
    MDP); ``logits`` ``[runs, R, A]`` and ``row_of_state``: the runs' policies as the
    kernel trains them in place; ``runs``: the learner's ``runs`` argument (``None``: no
    run axis).
    """

    def __init__(self, *, mdp, ref_policy, beta: float, logits: np.ndarray,
                 row_of_state: np.ndarray, runs: int | None, callback: Callback | None,
                 sampled: Callable[[int, int], dict[str, float]] | None, where: str):
        if not beta > 0.0:
            raise ValueError(f"{where}: history=True measures the KL-regularised objective "
                             "and needs ref_policy and beta > 0")
        self.mdp, self.beta, self.where = mdp, beta, where
        self.optimum = kl_optimum(mdp, ref_policy, beta)
        ref = ending_probabilities(mdp, ref_policy)
        self.support = np.nonzero(ref)  # the reference's responses: (s, a) of each ending
        self.ref, self.best = ref[self.support], self.optimum.endings[self.support]
        self.returns = path_returns(mdp)[self.support]
        self.logits, self.row_of_state, self.runs = logits, row_of_state, runs
        self.callback, self.sampled = callback, sampled
        self.iterations: list[int] = []
        self.rows: list[list[dict[str, float]]] = []  # [evaluation][run]

    def exact(self, policy: SoftmaxPolicy) -> dict[str, float]:
        """The :data:`EXACT` metrics of ``policy``, as sums over its distribution of
        responses (on a tree, the KL over whole responses is the sequence KL, and
        ``pi*`` gives every response of the reference positive probability)."""
        ends = ending_probabilities(self.mdp, policy)
        p = ends[self.support]
        if np.count_nonzero(ends) > np.count_nonzero(p):  # a response pi_ref never gives
            kl_ref, kl_opt, objective = np.inf, np.inf, -np.inf
        else:
            on = p > 0.0
            log_p = np.log(p[on])
            kl_ref = float(p[on] @ (log_p - np.log(self.ref[on])))
            kl_opt = float(p[on] @ (log_p - np.log(self.best[on])))
            objective = float(p @ self.returns) - self.beta * kl_ref
        return {"exact/objective": objective, "exact/gap": self.optimum.value - objective,
                "exact/kl_to_optimum": kl_opt, "exact/kl_to_ref": kl_ref}

    def record(self, iteration: int) -> None:
        """Evaluate every run after ``iteration`` iterations."""
        row = []
        for run in range(self.logits.shape[0]):
            policy = SoftmaxPolicy(self.logits[run].copy(), self.row_of_state.copy())
            metrics = self.exact(policy)
            if self.sampled is not None:
                metrics.update(self.sampled(run, iteration))
            if self.callback is not None:
                metrics.update(self._call(self.callback, iteration, policy, metrics))
            row.append(metrics)
        self.iterations.append(iteration)
        self.rows.append(row)

    def _call(self, callback: Callback, iteration: int, policy: SoftmaxPolicy,
              metrics: dict[str, float]) -> dict[str, float]:
        """The callback's own metrics at ``iteration``, checked: names new and the same
        at every call, values numbers (not NaN)."""
        policy.logits.flags.writeable = False
        policy.row_of_state.flags.writeable = False
        mine = callback(iteration, policy, dict(metrics))
        mine = {} if mine is None else mine
        if not isinstance(mine, Mapping):
            raise ValueError(f"{self.where}: callback must return None or a mapping of "
                             f"metric names to numbers, got {mine!r} at iteration {iteration}")
        out = {}
        for name, value in mine.items():
            if not isinstance(name, str):
                raise ValueError(f"{self.where}: callback metric names must be strings, got "
                                 f"{name!r} ({type(name).__name__}) at iteration {iteration}")
            if name in metrics:
                raise ValueError(f"{self.where}: callback metric {name!r} (iteration "
                                 f"{iteration}) has the name of a recorded metric")
            out[name] = check_number(f"{self.where}: callback metric {name!r}", value)
            if np.isnan(out[name]):
                raise ValueError(f"{self.where}: callback metric {name!r} is NaN at "
                                 f"iteration {iteration}")
        if self.rows and set(out) != set(self.rows[0][0]) - set(metrics):
            raise ValueError(f"{self.where}: callback returned metrics {sorted(out)} at "
                             f"iteration {iteration}, not the ones of its first call")
        return out

    def history(self) -> TrainingHistory:
        """The :class:`TrainingHistory` of the evaluations recorded."""
        names = self.rows[0][0].keys()
        metrics = {name: np.array([[row[run][name] for row in self.rows]
                                   for run in range(len(self.rows[0]))]) for name in names}
        if self.runs is None:
            metrics = {name: values[0] for name, values in metrics.items()}
        return TrainingHistory(np.array(self.iterations, dtype=np.int64), metrics)


def batch_sampler(args: Any, logits: np.ndarray, n: int, draw: Callable = sample_batch
                  ) -> Callable[[int, int], dict[str, float]]:
    """``sampled(run, iteration)``: the :func:`batch_metrics` of the ``n`` episodes that
    ``draw`` (:func:`sample_batch`, or a learner's own sampler of the same signature)
    draws from run ``run``'s policy in ``logits`` and a copy of its stream, for a
    learner set up as ``args`` (a :class:`~tabular.pg.arguments.PolicyGradientArgs`)."""
    def sampled(run: int, iteration: int) -> dict[str, float]:
        batch = draw(args.mdp.arrays, args.rollout, logits[run], args.rng_states[run].copy(), n)
        return batch_metrics(batch, args.rollout)
    return sampled


def run_in_chunks(step: Callable[[int, int], None], iterations: int, eval_every: int | None,
                  recorder: Callable[[], Recorder], where: str = "the learner"
                  ) -> TrainingHistory | None:
    """Run ``step(first, stop)`` (the learner's kernel over iterations ``first ..
    stop - 1``) over ``range(iterations)``: in one call without ``eval_every``
    (``None``: no history), else in chunks of ``eval_every`` iterations with an
    evaluation by ``recorder()`` before each chunk and after the last.

    A kernel whose updates overflow the float range leaves a row of logits NaN, and the
    next softmax over it divides by a zero sum: that ``ZeroDivisionError`` becomes a
    ``FloatingPointError`` naming the learner ``where`` and the knobs that scale its
    steps (caught here, once, outside the kernels' loops)."""
    try:
        if eval_every is None:
            step(0, iterations)
            return None
        rec = recorder()
        for first in range(0, iterations, eval_every):
            rec.record(first)
            step(first, min(first + eval_every, iterations))
    except ZeroDivisionError:
        raise FloatingPointError(
            f"{where}: the updates overflowed the float range (a row of the logits became "
            "NaN); use a smaller alpha, or a smaller weight that scales the steps (beta, "
            "reward_floor, value_coef, lambda_d, lambda_u)") from None
    rec.record(iterations)
    return rec.history()
