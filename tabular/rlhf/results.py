"""What the RLHF functions return: the learners that train logits directly (DPO, iterated
DPO, KTO, GRPO), the fitted models (the Bradley-Terry reward model, the general preference
model, the process reward model) and the exact solutions (best-of-N, the KTO optimum, a
loss's population optimum, the Nash equilibrium and Nash-MD's iterates, GRPO's expected
update and its fixed point, the reward-KL frontier).

The learners' results are frozen and share the run axis of
:class:`~tabular.results.RunsResult` (``runs=n``: a leading axis of length ``n``;
``run(i)`` picks one run). The policy-gradient learners used for RLHF (PPO, GRPO, ...)
return :class:`~tabular.pg.results.PolicyGradientResult`. Each record is also importable
from the module of the function that makes it (``tabular.rlhf.kto.KTOOptimum``). Two
records stay beside their model, which they hold: the n-gram LM's
:class:`~tabular.rlhf.lm.TrainResult` and :class:`~tabular.rlhf.pipeline.RLHFPipeline`
(both hold an :class:`~tabular.rlhf.lm.NGramLM`, and importing it here would close an
import cycle, ``lm -> results -> lm``); the KL optimum,
:class:`~tabular.solve.tree.KLOptimum`, is the exact solver's (:mod:`tabular.solve.tree`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tabular.model.policy import SoftmaxPolicy
from tabular.pg.results import PolicyGradientResult, TrainingHistory, trained_policy
from tabular.results import SHARED, RunsResult, short_repr


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


@dataclass(frozen=True, eq=False, repr=False)
class BestOfN:
    """The best-of-N policy over whole responses.

    Attributes
    ----------
    endings : ``[S, A]``, ``P(x) P_N(y|x)`` of the response ending with ``a`` in ``s``
        (as :class:`~tabular.rlhf.KLOptimum.endings`).
    policy : ``[S, A]``, the token-level policy that generates exactly this distribution
        (``pi_N(a|s)`` = the share of the responses through ``s`` that continue with
        ``a``; the base policy where the best of N never goes), for every tool that
        takes a policy (:func:`~tabular.rlhf.sequence_kl`, ``RLHFPipeline.measure``).
    kl : the exact ``E_x KL(P_N(.|x) || pi(.|x))`` over whole responses.
    kl_bound : ``log N - (N - 1) / N``, the usual formula (an upper bound on ``kl``).
    reward : the expected reward (the ranking reward) of the best of N.
    """

    __repr__ = short_repr

    endings: np.ndarray
    policy: np.ndarray
    kl: float
    kl_bound: float
    reward: float


@dataclass(frozen=True, eq=False, repr=False)
class ExpectedUpdate:
    """The exact expected update of a GRPO-family estimator at a policy.

    Attributes
    ----------
    direction : ``[R, A]``, ``E[d]``: the expected update of the logits per unit step
        (the first epoch's, at ratio 1), as :func:`~tabular.rlhf.grpo` takes it.
    gradient : ``[R, A]``, the exact gradient of ``J = E[r] - beta KL(pi || pi_ref)``
        (``E[r]`` with ``beta = 0``), with the learner's floored rewards.
    cosine : ``<direction, gradient> / (|direction| |gradient|)`` (NaN if either is 0).
    relative_norm : ``|direction| / |gradient|``.
    relative_error : ``|direction - gradient| / |gradient|``.
    method : ``"closed form"``, ``"enumeration"`` (every multiset of the other
        responses of a group) or ``"monte carlo"`` (``samples`` draws per prompt).
    samples : the Monte Carlo draws per prompt (0 unless ``method == "monte carlo"``).
    """

    __repr__ = short_repr

    direction: np.ndarray
    gradient: np.ndarray
    cosine: float
    relative_norm: float
    relative_error: float
    method: str
    samples: int


@dataclass(frozen=True, eq=False, repr=False)
class FixedPoint:
    """Where the expected update of an estimator stops.

    Attributes
    ----------
    policy : the :class:`~tabular.SoftmaxPolicy` reached.
    direction_norm : ``|E[d]|`` there (``< tol`` when ``converged``).
    gap : ``J* - J(policy)``, its exact gap to the KL-regularised optimum.
    iterations : the expected steps taken.
    converged : whether ``|E[d]| < tol`` was reached.
    """

    __repr__ = short_repr

    policy: SoftmaxPolicy
    direction_norm: float
    gap: float
    iterations: int
    converged: bool


@dataclass(frozen=True, eq=False, repr=False)
class KTOOptimum:
    """Where :func:`~tabular.rlhf.kto` ends on a policy with a row per prefix.

    Attributes
    ----------
    endings : ``[S, A]``, ``P(x) pi(y|x)`` of the response ``y`` that ends with ``a`` in
        ``s`` (0 for every response KTO drives out).
    reference_point : ``z0 = E_x KL(pi || pi_ref)`` there.
    """

    __repr__ = short_repr

    endings: np.ndarray
    reference_point: float


@dataclass(frozen=True, eq=False, repr=False)
class LossOptimum:
    """A preference loss's population optimum (:func:`~tabular.rlhf.loss_optimum`).

    Attributes
    ----------
    endings : ``[S, A]``, ``P(x) pi(y|x)`` of each compared response.
    probs : ``[N]``, ``pi(y|x)`` in the preference model's order of responses.
    loss : the population loss there.
    gradient : ``max_y |dL/dz_y|`` there (``<= tol``).
    iterations : Newton steps taken.
    """

    __repr__ = short_repr

    endings: np.ndarray
    probs: np.ndarray
    loss: float
    gradient: float
    iterations: int


@dataclass(frozen=True, eq=False, repr=False)
class PreferenceModel:
    """``P(y > y' | x)`` over the responses of a token MDP, prompt by prompt.

    Attributes
    ----------
    states, actions : int64 ``[N]``, each response's last state and token (its ending).
    prompt : int64 ``[N]``, each response's prompt number; the responses are sorted by
        prompt, prompt ``x``'s are ``bounds[x]:bounds[x + 1]``.
    bounds : int64 ``[X + 1]``.
    lengths : int64 ``[N]``, each response's token count (``eos`` included).
    texts : ``((prompt, response), ...)`` ``[N]``.
    matrices : ``(P_x, ...)``, prompt ``x``'s ``[n_x, n_x]`` matrix
        ``P_x[i, j] = P(y_i > y_j | x)``.
    prompt_probs : ``[X]``, each prompt's start probability.
    """

    __repr__ = short_repr

    states: np.ndarray
    actions: np.ndarray
    prompt: np.ndarray
    bounds: np.ndarray
    lengths: np.ndarray
    texts: tuple
    matrices: tuple
    prompt_probs: np.ndarray

    def conditional(self, endings: np.ndarray, name: str = "policy") -> np.ndarray:
        """``[N]``: ``pi(y|x)`` of each response, from a response distribution
        ``endings`` ``[S, A]`` (``P(x) pi(y|x)``, as :func:`~tabular.rlhf.ending_probabilities`
        gives it), which must put all its mass on the model's responses."""
        joint = endings[self.states, self.actions]
        off = endings.sum() - joint.sum()
        if off > 1e-9:
            raise ValueError(f"{name} gives probability {off:.3g} to responses the preference "
                             "model does not compare")
        return joint / self.prompt_probs[self.prompt]


@dataclass(frozen=True, eq=False, repr=False)
class NashEquilibrium:
    """The regularised game's equilibrium (:func:`~tabular.rlhf.nash_equilibrium`).

    Attributes
    ----------
    endings : ``[S, A]``, ``P(x) pi(y|x)`` of each compared response.
    probs : ``[N]``, ``pi(y|x)`` in the order of the model's responses.
    gap : ``[X]``, each prompt's exact duality gap at the returned policy (<= ``tol``).
    iterations : ``[X]``, mirror-prox iterations per prompt.
    """

    __repr__ = short_repr

    endings: np.ndarray
    probs: np.ndarray
    gap: np.ndarray
    iterations: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class NashMDResult:
    """What :func:`~tabular.rlhf.nash_md` returns.

    Attributes
    ----------
    probs : ``[iterations + 1, N]``, ``pi_t(y|x)`` of every iterate (``pi_0``: the start).
    gap : ``[iterations + 1]``, ``E_x gap_x(pi_t)``, the regularised game's exact duality
        gap at each iterate.
    """

    __repr__ = short_repr

    probs: np.ndarray
    gap: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class ProcessRewardModel(RunsResult):
    """A tabular process reward model: one value per prefix, fitted from step labels.

    Attributes
    ----------
    values : ``[S]`` (``[runs, S]``): the mean label of each prefix; a prefix never
        labelled takes its nearest labelled ancestor's value (so a step into it earns
        no process reward), 0 without one. :func:`~tabular.rlhf.process_rewards` takes it as the
        potential.
    labels : ``[S]`` (``[runs, S]``): how many completions labelled each prefix.
    """

    values: np.ndarray
    labels: np.ndarray

    @property
    def runs(self) -> int | None:
        """``None`` for a single model (no run axis), else the number of models."""
        return None if self.values.ndim == 1 else self.values.shape[0]


@dataclass(frozen=True)
class RewardModel:
    """A tabular Bradley-Terry reward model ``r(x, y)``, one score per response seen.

    Attributes
    ----------
    scores : ``{(prompt, response): score}`` of every response compared in training.
    loss : the mean negative log-likelihood of the training preferences.
    default : the score of a response never compared (default 0, the average of the
        reference responses after normalisation).

    ``score(prompt, response)`` (or calling the model) looks a response up.
    """

    scores: dict
    loss: float
    default: float = 0.0

    def score(self, prompt: str, response: str) -> float:
        """``r(prompt, response)``; ``default`` for a response never compared."""
        return self.scores.get((prompt, response), self.default)

    def __call__(self, prompt: str, response: str) -> float:
        """:meth:`score`: the model is the reward function a token MDP pays."""
        return self.score(prompt, response)


@dataclass(frozen=True)
class FrontierPoint:
    """Where a policy stands against the reference (all exact, over whole replies).

    Attributes
    ----------
    kl : ``KL(pi || pi_SFT)`` in nats.
    proxy : the expected reward-model score ``E_pi[r_RM]``.
    gold : the expected gold reward ``E_pi[r_gold]``.
    """

    kl: float
    proxy: float
    gold: float


@dataclass(frozen=True)
class Frontier:
    """Reward against KL at each ``beta`` (arrays over ``betas``).

    Attributes
    ----------
    betas : the KL coefficients.
    kl, proxy, gold : the :class:`FrontierPoint` fields at each ``beta``.
    """

    betas: np.ndarray
    kl: np.ndarray
    proxy: np.ndarray
    gold: np.ndarray

    @property
    def objective(self) -> np.ndarray:
        """``proxy - betas * kl``, the RLHF objective at each ``beta``."""
        return self.proxy - self.betas * self.kl
