"""The argument checks in front of the policy-gradient kernels, shared by
:mod:`tabular.pg.learners`, :func:`tabular.trpo` and :func:`tabular.rlhf.grpo`: every error
names the parameter.

:func:`policy_gradient_args` validates what all these learners take (the MDP, the starting policy,
the KL penalty, the reward floor, ``gamma``, the episode counts, ``runs`` and
``seed``) and returns it in the form the kernels read
(:class:`~tabular.pg.rollout.Rollout`, one xoshiro stream per run);
:meth:`PolicyGradientArgs.outputs` allocates a kernel's outputs and
:meth:`PolicyGradientArgs.result` turns them into a
:class:`~tabular.pg.results.PolicyGradientResult`
(:meth:`PolicyGradientArgs.batch_outputs` and :meth:`PolicyGradientArgs.trust_region_result`
for PPO and TRPO, with statistics per batch).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np

from tabular._numba.rng import seed_states
from tabular.checks import check_gamma, check_nonnegative, check_number, check_positive_int
from tabular.learn.arguments import check_episode_args, per_run
from tabular.model.mdp import MAX_REWARD, TabularMDP, as_mdp
from tabular.model.policy import SoftmaxPolicy, as_softmax_policy
from tabular.pg.batches import TrustRegionOutputs
from tabular.pg.results import PolicyGradientResult, TrainingHistory, TrustRegionResult
from tabular.pg.rollout import PolicyGradientOutputs, Rollout
from tabular.pg.telemetry import Recorder
from tabular.results import with_run_axis
from tabular.schedules import as_schedule

#: The step limit of a policy-gradient episode when neither the call nor the model (its
#: env's time limit) sets one.
DEFAULT_MAX_STEPS = 1000

#: The largest policy step size: with rewards of magnitude at most ``MAX_REWARD`` and
#: episodes of at most ``MAX_STEPS`` steps, logits then stay far from float overflow.
MAX_POLICY_STEP = 1e6

#: The largest weight of a term of a loss (PPO's ``value_coef``, KTO's ``lambda_d`` and
#: ``lambda_u``): a weight scales the steps as the step size does, so it has the same
#: bound; beyond it a step overflows the float range (a weight of 1e300 did, ending in
#: a ZeroDivisionError inside the kernel).
MAX_WEIGHT = MAX_POLICY_STEP


def step_size(name: str, value, high: float = MAX_POLICY_STEP) -> np.ndarray:
    """A number or schedule in ``(0, high]``, as kernel schedule parameters: a policy
    step may exceed 1 (up to ``MAX_POLICY_STEP``), a value estimate's (``high=1``:
    eq. 2.4 moves the estimate at most all the way to its target) may not."""
    try:
        return as_schedule(name, value, high=high).params
    except ValueError as err:
        message = str(err)
        raise ValueError(message if name in message else f"{name}: {message}") from None


def check_reward_floor(mdp: TabularMDP, reward_floor) -> float:
    """The floor the kernels apply (``-inf`` for ``None``: ``max(r, -inf) = r``, and one
    kernel serves both), or a clear error when the MDP can pay ``-inf`` and no
    floor is given."""
    if reward_floor is None:
        pays_minus_inf = (mdp.prob > 0.0) & (mdp.reward == -np.inf)
        if pays_minus_inf.any():
            s, a, _ = np.argwhere(pays_minus_inf)[0]
            raise ValueError(
                f"the MDP pays a -inf reward (state {mdp.state_name(int(s))}, action "
                f"{mdp.action_name(int(a))}) and a policy gradient cannot be computed from an "
                "infinite return: pass reward_floor=<a finite number well below the other "
                "returns> (e.g. -10 times their scale); the learner then uses "
                "max(r, reward_floor) (see tabular.pg.learners for when this keeps the optimum)")
        return -np.inf
    floor = check_number("reward_floor", reward_floor)
    if not abs(floor) <= MAX_REWARD:  # NaN fails
        raise ValueError(f"reward_floor must be a number of magnitude at most {MAX_REWARD:g} "
                         f"(or None), got {reward_floor!r}")
    return floor


def reference(mdp: TabularMDP, policy: SoftmaxPolicy, ref_policy, beta):
    """``(beta, ref_log_probs, ref_row)`` for :class:`~tabular.pg.rollout.Rollout`:
    the reference's log-probabilities by row and its row map; when ``beta = 0`` (no
    penalty), one row of zeros that every state reads.

    ``ref_policy`` takes every policy form (:func:`~tabular.model.policy.as_softmax_policy`)
    and is checked even when ``beta = 0``; with ``beta > 0`` it is required and must
    allow every action that ``policy`` allows (else the KL is infinite).
    """
    beta = check_nonnegative("beta", beta)
    if beta > 0.0 and ref_policy is None:
        raise ValueError("beta > 0 needs a ref_policy to stay close to")
    no_penalty = beta, np.zeros((1, mdp.n_actions)), np.zeros(mdp.n_states, dtype=np.int64)
    if ref_policy is None:
        return no_penalty
    ref = as_softmax_policy(mdp, ref_policy, "ref_policy")
    if beta == 0.0:
        return no_penalty
    allowed = np.isfinite(policy.logits)[policy.row_of_state]
    forbidden = ~np.isfinite(ref.logits)[ref.row_of_state]
    clash = allowed & forbidden
    if clash.any():
        s, a = np.argwhere(clash)[0]
        raise ValueError(f"ref_policy masks action {mdp.action_name(int(a))} in state "
                         f"{mdp.state_name(int(s))}, which policy allows: the KL penalty "
                         "would be infinite")
    return beta, ref.row_log_probs(), ref.row_of_state


@dataclass(frozen=True)
class PolicyGradientArgs:
    """The validated arguments every policy-gradient learner shares."""

    mdp: TabularMDP
    policy: SoftmaxPolicy
    rollout: Rollout
    gamma: float
    episodes: int
    runs: int | None
    rng_states: np.ndarray

    def outputs(self, value: bool = True) -> PolicyGradientOutputs:
        """Per-run copies of the policy's logits, a zero ``V`` (``None`` without
        ``value``), returns and lengths."""
        n = self.rng_states.shape[0]
        return PolicyGradientOutputs(logits=per_run(self.policy.logits, n),
                                     V=np.zeros((n, self.mdp.n_states)) if value else None,
                                     returns=np.zeros((n, self.episodes)),
                                     lengths=np.zeros((n, self.episodes), dtype=np.int64))

    def batch_outputs(self, iterations: int, kl_penalty: bool = False,
                      backtracks: bool = False) -> TrustRegionOutputs:
        """:meth:`outputs` with a critic, plus the per-iteration step statistics of PPO
        and TRPO (``kl_penalty`` and ``backtracks`` only when asked for)."""
        logits, V, returns, lengths = self.outputs()
        assert V is not None  # outputs() with its default value=True makes the critic
        n = logits.shape[0]
        return TrustRegionOutputs(logits=logits, V=V, returns=returns, lengths=lengths,
                                  step_kl=np.zeros((n, iterations)),
                                  kl_penalty=np.zeros((n, iterations)) if kl_penalty else None,
                                  backtracks=(np.zeros((n, iterations), dtype=np.int64)
                                              if backtracks else None))

    def trust_region_result(self, out: TrustRegionOutputs,
                            history: TrainingHistory | None = None) -> TrustRegionResult:
        """The public result of :meth:`batch_outputs` once a kernel filled them."""
        base = self.result(PolicyGradientOutputs(logits=out.logits, V=out.V, returns=out.returns,
                                                 lengths=out.lengths),
                           history=history)
        stats = {name: with_run_axis(getattr(out, name), self.runs)
                 for name in ("step_kl", "kl_penalty", "backtracks")}
        return TrustRegionResult(**{f.name: getattr(base, f.name) for f in fields(base)},
                                 **stats)

    def result(self, out: PolicyGradientOutputs, value: bool = True,
               history: TrainingHistory | None = None) -> PolicyGradientResult:
        """The public result (``V`` only with ``value``; the ``history`` of
        :mod:`tabular.pg.telemetry`), without a run axis when ``runs is None``; an
        overflow is an error, never a NaN in the result."""
        check_no_overflow(out.logits, "logits")
        if value:
            assert out.V is not None  # outputs(value=True) made it
            check_no_overflow(out.V, "V")
        return PolicyGradientResult(episode_returns=with_run_axis(out.returns, self.runs),
                                    episode_lengths=with_run_axis(out.lengths, self.runs),
                                    logits=with_run_axis(out.logits, self.runs),
                                    row_of_state=self.policy.row_of_state.copy(),
                                    V=with_run_axis(out.V, self.runs) if value else None,
                                    history=history)

    def recorder(self, ref_policy, logits: np.ndarray, callback, where: str,
                 sampled=None) -> Callable[[], Recorder]:
        """The :class:`~tabular.pg.telemetry.Recorder` maker of a learner ``where`` set up
        by this, for :func:`~tabular.pg.telemetry.run_in_chunks`: its runs' ``logits``
        against ``ref_policy`` and ``beta``, with ``callback`` and the learner's
        ``sampled`` metrics."""
        return lambda: Recorder(mdp=self.mdp, ref_policy=ref_policy, beta=self.rollout.beta,
                                logits=logits, row_of_state=self.policy.row_of_state,
                                runs=self.runs, callback=callback, sampled=sampled, where=where)


def check_no_overflow(values: np.ndarray, name: str) -> None:
    """Refuse trained ``values`` that hold NaN or ``+inf`` (``-inf``, a masked logit, is
    fine): the steps overflowed, and the error says which knobs scale them."""
    bad = ~(values < np.inf) & ~(values == -np.inf)  # NaN fails both
    if bad.any():
        raise FloatingPointError(
            f"the learned {name} overflowed to {values[bad][0]} (at index "
            f"{np.argwhere(bad)[0].tolist()}): the updates exceeded the float range; use a "
            "smaller alpha, beta or reward_floor magnitude")


def policy_gradient_args(mdp, policy, *, ref_policy, beta, reward_floor, gamma, episodes, max_steps,
                         runs, seed, made_by: str | None = None) -> PolicyGradientArgs:
    """Check the arguments every policy-gradient learner shares and put them in the form
    its kernel reads.

    ``mdp``: a :class:`~tabular.TabularMDP` or an env that has one; ``policy``: the
    starting policy in any form (``None``: the uniform tabular softmax); ``ref_policy``
    and ``beta``: the KL penalty (:func:`reference`); ``reward_floor``: as
    :func:`check_reward_floor`; ``gamma``: the discount; ``episodes``: the total number
    of episodes the result holds (per run); ``max_steps``: the step limit (``None``: the
    env's time limit, else :data:`DEFAULT_MAX_STEPS`); ``runs`` and ``seed``: the runs
    and their streams (:func:`~tabular._numba.rng.seed_states`); ``made_by``: the
    arguments that make ``episodes`` when the user did not pass it (for size errors:
    :func:`~tabular.learn.arguments.check_episode_args`). Keyword-only after
    ``policy``: ten arguments, several of them numbers, are read by name.
    """
    mdp = as_mdp(mdp)
    policy = (SoftmaxPolicy.tabular(mdp.n_states, mdp.n_actions) if policy is None
              else as_softmax_policy(mdp, policy, greedy=False))
    beta, ref_log_probs, ref_row = reference(mdp, policy, ref_policy, beta)
    episodes, n, max_steps = check_episode_args(mdp, episodes, runs, max_steps, DEFAULT_MAX_STEPS,
                                                made_by)
    rollout = Rollout(row_of_state=policy.row_of_state, max_steps=max_steps,
                      reward_floor=check_reward_floor(mdp, reward_floor), beta=beta,
                      ref_log_probs=ref_log_probs, ref_row=ref_row)
    return PolicyGradientArgs(mdp=mdp, policy=policy, rollout=rollout, gamma=check_gamma(gamma),
                              episodes=episodes, runs=runs, rng_states=seed_states(seed, n))


def batch_args(mdp, policy, *, iterations, episodes_per_batch, **shared) -> PolicyGradientArgs:
    """:func:`policy_gradient_args` for a learner that learns from ``iterations`` batches of
    ``episodes_per_batch`` episodes (PPO, TRPO): both counts checked (>= 1), the result
    holding their product of episodes; ``shared``: the other arguments of
    :func:`policy_gradient_args`."""
    iterations = check_positive_int("iterations", iterations)
    episodes_per_batch = check_positive_int("episodes_per_batch", episodes_per_batch)
    return policy_gradient_args(
        mdp, policy, episodes=iterations * episodes_per_batch,
        made_by=f"iterations={iterations:,} x episodes_per_batch={episodes_per_batch:,}",
        **shared)
