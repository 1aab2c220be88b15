"""The options of the GRPO family (GRPO, RLOO, ReMax, Dr. GRPO, DAPO, GSPO, CISPO), checked
in one place: :class:`GRPOConfig`.

The options are named as TRL's ``GRPOConfig`` names them where the zoo has the same
concept (``loss_type``, ``epsilon``, ``epsilon_high``, ``num_iterations``,
``importance_sampling_level``, ``scale_rewards``, ``mask_truncated_completions``), and as
the zoo names them elsewhere (``group_size`` for TRL's ``num_generations``, ``beta``,
``alpha``); ``docs/rl_for_llms.md`` has the table of every TRL field. Both
:func:`tabular.rlhf.grpo` (the sampled learner) and
:func:`tabular.rlhf.expected_update` (its exact expected update) read a config, so
they share one definition of the loss (:mod:`tabular.rlhf.group_loss`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tabular.checks import check_flag, check_nonnegative, check_number, check_positive_int

#: The baselines a response's return is compared with (``advantage``).
GROUP_MEAN, LEAVE_ONE_OUT, GREEDY = 0, 1, 2
ADVANTAGES = {"grpo": GROUP_MEAN, "rloo": LEAVE_ONE_OUT, "remax": GREEDY}

#: How the token terms of a batch are summed into the loss (``loss_type``): TRL's names,
#: plus the zoo's ``"sum"`` (each response's tokens summed, the batch's responses
#: averaged: Dr. GRPO's loss times ``max_steps``, the default of :func:`grpo` before
#: ``loss_type`` existed).
SUM, GRPO, BNPO, DR_GRPO, DAPO, CISPO = 0, 1, 2, 3, 4, 5
LOSS_TYPES = {"sum": SUM, "grpo": GRPO, "bnpo": BNPO, "dr_grpo": DR_GRPO, "dapo": DAPO,
              "cispo": CISPO}

#: The older spelling of ``loss_type`` (``grpo(aggregation=...)``).
AGGREGATIONS = {"sum": "sum", "sequence": "grpo", "token": "bnpo"}

#: ``scale_rewards``: advantages divided by the group's, the batch's or no standard
#: deviation of returns.
SCALE_GROUP, SCALE_BATCH, SCALE_NONE = 0, 1, 2
SCALINGS = {"group": SCALE_GROUP, "batch": SCALE_BATCH, "none": SCALE_NONE}

#: ``importance_sampling_level``: one ratio per token, or GSPO's one per response.
TOKEN_LEVEL, SEQUENCE_LEVEL = 0, 1
LEVELS = {"token": TOKEN_LEVEL, "sequence": SEQUENCE_LEVEL}

#: ``kl_estimator`` (Schulman, 2020, "Approximating KL divergence"): with ``x = log pi -
#: log pi_ref`` of the sampled token, ``k1 = x``, ``k2 = x^2 / 2``, ``k3 = e^-x - 1 + x``.
K1, K2, K3 = 1, 2, 3
KL_ESTIMATORS = {"k1": K1, "k2": K2, "k3": K3}

#: ``kl_placement``: the estimate subtracted from each token's reward (``beta`` times
#: it), or added to the loss (TRL's GRPO: ``+ beta k`` per token, aggregated as the
#: policy term).
IN_REWARD, IN_LOSS = 0, 1
PLACEMENTS = {"reward": IN_REWARD, "loss": IN_LOSS}

#: The largest group: a kernel holds ``groups * group_size`` responses of ``max_steps``
#: tokens at once.
MAX_GROUP_SIZE = 1 << 16


def _choice(name: str, value: object, options: dict) -> str:
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {sorted(options)}, got {value!r}")
    return value


@dataclass(frozen=True)
class GRPOConfig:
    """The loss of a GRPO-family learner: every option checked when the record is made.

    Attributes
    ----------
    group_size : responses per prompt, ``G >= 2`` (TRL: ``num_generations``), default 8.
    groups : prompts per batch (TRL: ``generation_batch_size / num_generations``),
        default 1.
    advantage : ``"grpo"`` (the group's mean), ``"rloo"`` (the mean of the other
        responses, Ahmadian et al., 2024) or ``"remax"`` (the greedy response's return,
        Li et al., 2023), default ``"grpo"``.
    scale_rewards : divide the advantages by the standard deviation of the group's
        returns (``"group"``), of the whole batch's (``"batch"``, REINFORCE++; Hu et al.,
        2025) or not (``"none"``, Dr. GRPO); default ``None``: ``"group"`` for
        ``"grpo"``, ``"none"`` otherwise. The population standard deviation, and a
        group (batch) whose returns agree to rounding is only centred (TRL divides by
        ``std + 1e-4`` with Bessel's correction).
    loss_type : ``"grpo"`` (each response's tokens averaged, then the responses:
        ``1/(B |o_i|)``), ``"bnpo"`` and ``"dapo"`` (the batch's tokens averaged:
        ``1 / sum |o_i|``; they differ in TRL only across devices), ``"dr_grpo"`` (a
        constant ``1 / (B max_steps)``), ``"cispo"`` (MiniMax-M1's truncated
        importance weight ``min(rho, epsilon_high)`` held constant, times ``A grad log
        pi``, with the ``"dapo"`` normaliser) or ``"sum"`` (``1/B`` per response, the
        zoo's; Dr. GRPO's times ``max_steps``); ``B`` the batch's responses; default
        ``"sum"``.
    num_iterations : ``mu``, the epochs of updates on each batch; the first is on-policy
        (ratio 1), default 1.
    epsilon, epsilon_high : the clip range ``[1 - epsilon, 1 + epsilon_high]`` of the
        probability ratio (``epsilon_high=None``: ``epsilon``; DAPO's clip-higher
        recommends 0.28); with ``"cispo"``, ``epsilon_high`` is the cap ``eps_max`` of
        the ratio itself (as TRL reads it; ScaleRL recommends 5) and is required.
    importance_sampling_level : ``"token"`` (one ratio per token) or ``"sequence"``
        (GSPO's ``(pi(y)/pi_old(y))^(1/|y|)``, one per response; Zheng et al., 2025).
    dynamic_sampling : drop a group whose returns are all equal (DAPO; Yu et al.,
        2025): none of its tokens enters the loss or its normalisers; the learner
        counts the groups dropped.
    mask_truncated_completions : leave the responses cut before their ``eos`` (by the
        token MDP's ``max_len`` or by ``max_steps``) out of the loss (DAPO); their
        returns still enter the group's statistics, as in TRL.
    truncation_penalty : subtracted from the return of a truncated response (DAPO's
        overlong punishment, in its hard form), >= 0, default 0.
    kl_estimator, kl_placement : the KL to the reference as ``k1``, ``k2`` or ``k3`` of
        each sampled token, ``beta`` times it subtracted from the token's reward
        (``"reward"``, default with ``"k1"``: the zoo's and TRL's RLOO) or added to the
        loss (``"loss"``: TRL's GRPO with ``"k3"``).
    entropy_coef : the coefficient of the per-token entropy bonus ``H(pi(.|s_t))``,
        aggregated as the policy term, >= 0, default 0.
    """

    group_size: int = 8
    groups: int = 1
    advantage: str = "grpo"
    scale_rewards: str | None = None
    loss_type: str = "sum"
    num_iterations: int = 1
    epsilon: float = 0.2
    epsilon_high: float | None = None
    importance_sampling_level: str = "token"
    dynamic_sampling: bool = False
    mask_truncated_completions: bool = False
    truncation_penalty: float = 0.0
    kl_estimator: str = "k1"
    kl_placement: str = "reward"
    entropy_coef: float = 0.0

    def __post_init__(self) -> None:
        g = check_positive_int("group_size", self.group_size, high=MAX_GROUP_SIZE)
        if g < 2:
            raise ValueError(f"group_size must be >= 2 (a group needs a mean), got {g}")
        set_ = object.__setattr__
        set_(self, "group_size", g)
        set_(self, "groups", check_positive_int("groups", self.groups, high=MAX_GROUP_SIZE))
        _choice("advantage", self.advantage, ADVANTAGES)
        if self.scale_rewards is None:
            set_(self, "scale_rewards", "group" if self.advantage == "grpo" else "none")
        _choice("scale_rewards", self.scale_rewards, SCALINGS)
        _choice("loss_type", self.loss_type, LOSS_TYPES)
        set_(self, "num_iterations", check_positive_int("num_iterations", self.num_iterations,
                                                        high=10_000))
        eps = check_number("epsilon", self.epsilon)
        if not 0.0 < eps < 1.0:
            raise ValueError(f"epsilon must be in (0, 1) (the ratio's lower clip is "
                             f"1 - epsilon), got {self.epsilon!r}")
        set_(self, "epsilon", eps)
        if self.epsilon_high is None:
            if self.loss_type == "cispo":
                raise ValueError("loss_type='cispo' caps the ratio at epsilon_high itself (as "
                                 "TRL does): pass epsilon_high, e.g. 5.0 (ScaleRL's value)")
            set_(self, "epsilon_high", eps)
        high = check_number("epsilon_high", self.epsilon_high)
        if not 0.0 < high < 1e6:
            raise ValueError(f"epsilon_high must be a number in (0, 1e6), got "
                             f"{self.epsilon_high!r}")
        set_(self, "epsilon_high", high)
        _choice("importance_sampling_level", self.importance_sampling_level, LEVELS)
        set_(self, "dynamic_sampling", check_flag("dynamic_sampling", self.dynamic_sampling))
        set_(self, "mask_truncated_completions",
             check_flag("mask_truncated_completions", self.mask_truncated_completions))
        penalty = check_nonnegative("truncation_penalty", self.truncation_penalty)
        if not penalty <= 1e12:
            raise ValueError(f"truncation_penalty must be finite, got {penalty}")
        set_(self, "truncation_penalty", penalty)
        _choice("kl_estimator", self.kl_estimator, KL_ESTIMATORS)
        _choice("kl_placement", self.kl_placement, PLACEMENTS)
        ent = check_nonnegative("entropy_coef", self.entropy_coef)
        if not ent <= 1e6:
            raise ValueError(f"entropy_coef must be at most 1e6, got {ent}")
        set_(self, "entropy_coef", ent)

    @property
    def folds_k1(self) -> bool:
        """The KL enters as ``k1`` in the reward: the sampler folds it in itself."""
        return self.kl_estimator == "k1" and self.kl_placement == "reward"

    def loss(self, beta: float, max_steps: int) -> LossParams:
        """The record the kernels read (every choice as its constant)."""
        return LossParams(self.group_size, self.groups, ADVANTAGES[self.advantage],
                          SCALINGS[str(self.scale_rewards)], LOSS_TYPES[self.loss_type],
                          self.num_iterations, self.epsilon, float(self.epsilon_high),  # type: ignore[arg-type]  # never None after __post_init__
                          LEVELS[self.importance_sampling_level], self.dynamic_sampling,
                          self.mask_truncated_completions, self.truncation_penalty,
                          KL_ESTIMATORS[self.kl_estimator], PLACEMENTS[self.kl_placement],
                          float(beta), self.entropy_coef, int(max_steps))


class LossParams(NamedTuple):
    """:class:`GRPOConfig` as the kernels read it (choices as the constants above), with
    the KL coefficient ``beta`` and the step limit ``max_steps`` (Dr. GRPO's constant)."""

    group_size: int
    groups: int
    advantage: int
    scale: int
    loss_type: int
    num_iterations: int
    epsilon: float
    epsilon_high: float
    level: int
    dynamic_sampling: bool
    mask_truncated: bool
    truncation_penalty: float
    kl_estimator: int
    kl_placement: int
    beta: float
    entropy_coef: float
    max_steps: int


def legacy_options(normalise: object, aggregation: object, scale_rewards: object,
                   loss_type: object) -> tuple[object, object]:
    """``(scale_rewards, loss_type)`` from :func:`grpo`'s older ``normalise`` and
    ``aggregation`` (each exclusive with its newer spelling): ``normalise`` must be a
    bool (``"yes"`` or ``0`` are refused, not read by truthiness)."""
    if normalise is not None:
        if scale_rewards is not None:
            raise ValueError("pass scale_rewards or its older spelling normalise, not both")
        scale_rewards = "group" if check_flag("normalise", normalise) else "none"
    if aggregation is not None:
        if loss_type is not None:
            raise ValueError("pass loss_type or its older spelling aggregation, not both")
        loss_type = AGGREGATIONS[_choice("aggregation", aggregation, AGGREGATIONS)]
    return scale_rewards, "sum" if loss_type is None else loss_type


def truncating_actions(mdp) -> np.ndarray:
    """``[S, A]`` bool: taking ``a`` in ``s`` ends a response without its ``eos`` (a token
    MDP's ``max_len`` reached): an ending that is neither the ``eos`` action (named
    ``tabular.rlhf.lm.EOS`` in ``mdp.action_names``) nor a forbidden token (which
    stays in ``s``). All False for an MDP without an ``eos`` action."""
    from tabular.rlhf.lm import EOS

    names = mdp.action_names
    truncates = np.zeros((mdp.n_states, mdp.n_actions), dtype=np.bool_)
    if names is None or EOS not in names:
        return truncates
    eos = names.index(EOS)
    stays = mdp.next_state[:, :, 0] == np.arange(mdp.n_states)[:, None]
    truncates[:] = mdp.done[:, :, 0] & ~stays
    truncates[:, eos] = False
    return truncates
