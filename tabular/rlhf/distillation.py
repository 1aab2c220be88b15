"""On-policy distillation: a student trained on its own samples toward a teacher.

The student samples responses and is penalised, token by token, by how much more it
likes each token than the teacher does, ``log pi_s(a_t|s_t) - log pi_t(a_t|s_t)``
(Agarwal et al., 2024, on-policy distillation with the reverse KL). Summed over a
response, the expected penalty is the sequence-level ``KL(pi_s || pi_t)``, so
distillation is KL-regularised RL with no reward and ``beta = 1``: the policy-gradient
learners of :mod:`tabular.pg.learners` run it unchanged on the token MDP with its rewards set
to zero, and the optimum is the teacher itself (wherever the student can represent
it). Every sampled token is scored by the teacher: a dense signal, unlike a reward
at the end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from tabular.checks import policy_matrix
from tabular.model.mdp import as_mdp
from tabular.model.policy import as_softmax_policy
from tabular.pg.learners import actor_critic, ppo, reinforce
from tabular.pg.results import PolicyGradientResult
from tabular.types import MDPLike, PolicyLike

LEARNERS: dict[str, Callable[..., PolicyGradientResult]] = {
    "reinforce": reinforce, "actor_critic": actor_critic, "ppo": ppo}


def distill(mdp: MDPLike, student: PolicyLike, teacher: PolicyLike, *, learner: str = "reinforce",
            **kwargs: Any) -> PolicyGradientResult:
    """Train ``student`` on its own samples toward ``teacher`` by minimising the reverse
    KL ``KL(pi_student || pi_teacher)`` over whole responses.

    Parameters
    ----------
    mdp : the token MDP (its rewards are ignored: the teacher is the only signal).
    student : the starting policy (a :class:`~tabular.SoftmaxPolicy` or ``[S, A]``).
    teacher : the teacher (any policy form); it must allow every token the student
        may sample (else the KL is infinite).
    learner : ``"reinforce"`` (default), ``"actor_critic"`` or ``"ppo"``.
    kwargs : the learner's other arguments (``episodes``/``iterations``, ``alpha``,
        ``seed``, ``runs``...); ``ref_policy``, ``beta`` and ``gamma`` are fixed
        (the teacher, 1 and 1).

    Returns the learner's :class:`~tabular.pg.results.PolicyGradientResult`;
    :func:`~tabular.rlhf.sequence_kl` of its policy and the teacher measures what is
    left.
    """
    if learner not in LEARNERS:
        raise ValueError(f"learner must be one of {sorted(LEARNERS)}, got {learner!r}")
    fixed = {"ref_policy", "beta", "gamma", "reward_floor"} & set(kwargs)
    if fixed:
        raise ValueError(f"distill sets {sorted(fixed)} itself (the teacher, beta = 1, "
                         "gamma = 1, no reward)")
    mdp = as_mdp(mdp)
    student = as_softmax_policy(mdp, student, "student", greedy=False)  # errors name them
    policy_matrix(mdp, teacher, "teacher")
    silent = dataclasses.replace(mdp, reward=np.zeros_like(mdp.reward))
    return LEARNERS[learner](silent, student, ref_policy=teacher, beta=1.0, gamma=1.0,
                             **kwargs)
