"""The RLHF training pipeline of a scenario: pre-train, SFT, reward model, then measure.

The three stages of InstructGPT (Ouyang et al., 2022) on a tabular scale:

1. pre-training: maximum likelihood of an n-gram model on a corpus
   (:func:`tabular.pretrain`);
2. supervised fine-tuning on demonstrations, the loss on response tokens only
   (:func:`tabular.sft`);
3. a Bradley-Terry reward model fitted to labeller comparisons (Bradley and Terry,
   1952; :func:`tabular.rlhf.train_reward_model`).

The result, :class:`RLHFPipeline`, holds the token MDP that pays the reward model's
score (the proxy) and the one that pays the gold reward, with the SFT model as the
reference policy; it measures any policy exactly on the prefix tree and traces the
reward-KL frontier of the KL-regularised optimum, where the gold reward first rises
then falls as the proxy is over-optimised (Gao et al., 2023).

This module reads a scenario through its attributes only (see
:class:`ScenarioData`), so ``tabular`` needs neither :mod:`tabular.envs` nor Gymnasium:

    from tabular.envs import load_scenario
    from tabular.rlhf.pipeline import train_pipeline
    ex = train_pipeline(load_scenario())
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from tabular.checks import MAX_COUNT, check_positive, check_positive_int, check_seed, real_array
from tabular.model.mdp import TabularMDP
from tabular.model.policy import SoftmaxPolicy
from tabular.pg.arguments import MAX_POLICY_STEP
from tabular.pg.results import PolicyGradientResult
from tabular.rlhf.lm import NGramLM, pretrain, sft
from tabular.rlhf.results import Frontier, FrontierPoint
from tabular.rlhf.reward_model import RewardModel, train_reward_model
from tabular.solve.dp import soft_value_iteration
from tabular.solve.tree import expected_return, response_distribution, sequence_kl
from tabular.types import PolicyLike


class ScenarioData(Protocol):
    """What :func:`train_pipeline` reads from a scenario (e.g. ``envs.Scenario``).

    ``prompt``: the prompt; ``replies``: the candidate replies; ``correct``: whether
    each reply is correct; ``corpus``: pre-training documents; ``n``: the n-gram
    order; ``sft``: ``(count, reply)`` demonstrations; ``preferences``: ``(count,
    winner, loser)`` comparisons; ``env(reward=None)``: the token MDP of the scenario
    (an ``envs.TokenMDP``), paying the gold reward when ``reward`` is ``None``, else
    ``reward(prompt, response)``.

    A scenario of several prompts (e.g. ``envs.GrammarScenario``) gives ``prompts``
    instead of ``prompt``, ``replies`` and ``correct``, and names the prompt in each row:
    ``(count, prompt, reply)`` demonstrations, ``(count, prompt, winner, loser)``
    comparisons; its reward model's scores average 0 over the compared responses of
    each prompt (:meth:`RLHFPipeline.answer_distribution` and
    :meth:`RLHFPipeline.correct_rate` need a single prompt).
    """

    prompt: str
    replies: Sequence[str]
    correct: Sequence[bool]
    corpus: Sequence[str]
    n: int
    sft: Sequence[tuple[int, str]]
    preferences: Sequence[tuple[int, str, str]]

    def env(self, reward: Callable[[str, str], float] | None = None) -> Any:
        """The scenario's token MDP, paying ``reward`` (``None``: the gold reward)."""


@dataclass(frozen=True)
class RLHFPipeline:
    """A scenario trained end to end: the models and the token MDPs RLHF runs on.

    Attributes
    ----------
    scenario : the scenario it was trained from.
    base : the n-gram model pre-trained on the corpus.
    sft : the base model after supervised fine-tuning on the demonstrations.
    reward_model : the Bradley-Terry fit to the comparisons, normalised so that the
        replies average 0 (InstructGPT's normalisation).
    env, mdp : the token MDP that pays the reward model's score (the proxy), and its
        model.
    gold_env, gold_mdp : the same MDP paying the gold reward, and its model.
    reference : the SFT model as a per-prefix policy of ``env``, the reference
        ``pi_ref`` of RLHF and the learners' starting point.
    """

    scenario: ScenarioData
    base: NGramLM
    sft: NGramLM
    reward_model: RewardModel
    env: Any
    gold_env: Any
    mdp: TabularMDP
    gold_mdp: TabularMDP
    reference: SoftmaxPolicy

    def policy(self, lm: NGramLM) -> SoftmaxPolicy:
        """The language model ``lm`` as a per-prefix, grammar-masked policy of ``env``."""
        return lm.policy(self.env, per_state=True)

    def answer_distribution(self, policy: PolicyLike) -> dict[str, float]:
        """``P(y | x)`` of each reply under ``policy`` (any policy form), exactly."""
        dist = response_distribution(self.env, policy)
        return {y: dist.get((self.scenario.prompt, y), 0.0) for y in self.scenario.replies}

    def correct_rate(self, policy: PolicyLike) -> float:
        """The probability that ``policy`` replies correctly."""
        dist = self.answer_distribution(policy)
        return sum(dist[y] for y, ok in zip(self.scenario.replies, self.scenario.correct,
                                            strict=True) if ok)

    def value(self, policy: PolicyLike, reward: str = "proxy") -> float:
        """``V(x) = E_{y ~ pi}[r(x, y)]`` of ``policy``: ``reward="proxy"`` (default)
        scores with the reward model, ``"gold"`` with the gold reward."""
        if reward not in ("proxy", "gold"):
            raise ValueError(f"reward must be 'proxy' or 'gold', got {reward!r}")
        return expected_return(self.mdp if reward == "proxy" else self.gold_mdp, policy)

    def optimum(self, beta: float) -> np.ndarray:
        """``pi*_beta [S, A]``, the optimum of ``E[r_RM] - beta KL(pi || pi_SFT)``, from
        soft value iteration on the prefix tree (``gamma = 1``)."""
        return soft_value_iteration(self.mdp, gamma=1.0, beta=beta,
                                    ref_policy=self.reference).policy

    def measure(self, policy: PolicyLike) -> FrontierPoint:
        """KL to the SFT reference, proxy and gold reward of ``policy`` (any policy form
        of ``env``)."""
        return FrontierPoint(sequence_kl(self.mdp, policy, self.reference),
                             self.value(policy, "proxy"), self.value(policy, "gold"))

    def frontier(self, betas: Iterable[float]) -> Frontier:
        """Reward against KL along the exact optimum ``pi*_beta`` for each of ``betas``:
        the proxy rises as ``beta`` shrinks; the gold reward rises, then falls."""
        betas = _betas(betas)
        return _frontier(betas, [self.measure(self.optimum(b)) for b in betas])

    def learner_frontier(self, learner: Callable[..., PolicyGradientResult],
                         betas: Iterable[float], **kwargs: Any) -> Frontier:
        """The same curve followed by ``learner`` (``tabular.ppo``, ``reinforce``, ...),
        trained at each of ``betas``: started at SFT, with KL coefficient ``beta``
        towards it. ``kwargs`` go to the learner; with ``runs=n``, run 0 is measured."""
        betas = _betas(betas)
        points = []
        for b in betas:
            res = learner(self.mdp, self.reference, ref_policy=self.reference, beta=float(b),
                          **kwargs)
            points.append(self.measure(res.policy if res.runs is None else res.run(0).policy))
        return _frontier(betas, points)


def _betas(betas: Iterable[float]) -> np.ndarray:
    """``betas`` as a float64 ``[n]`` array (text, bools and complex numbers refused; each
    beta's range is its solver's to check)."""
    if isinstance(betas, Iterable) and not isinstance(betas, str | np.ndarray):
        betas = list(betas)  # a generator, a range
    betas = real_array("betas", betas)
    if betas.ndim != 1:
        raise ValueError(f"betas must be a list of numbers, got shape {list(betas.shape)}")
    return betas


def _frontier(betas: np.ndarray, points: list[FrontierPoint]) -> Frontier:
    return Frontier(betas, *(np.array([getattr(p, f) for p in points])
                             for f in ("kl", "proxy", "gold")))


def train_pipeline(scenario: ScenarioData, *, pretrain_epochs: int = 60, sft_epochs: int = 60,
                   alpha: float = 0.5, reward_steps: int = 20_000,
                   seed: int | None = 0) -> RLHFPipeline:
    """Pre-train, fine-tune and fit the reward model of ``scenario``.

    Parameters
    ----------
    scenario : the data (see :class:`ScenarioData`), e.g. ``tabular.envs.load_scenario()``.
    pretrain_epochs : epochs of maximum likelihood on the corpus (default 60).
    sft_epochs : epochs of supervised fine-tuning on the demonstrations (default 60).
    alpha : the step size of pre-training and SFT (default 0.5, decayed linearly).
    reward_steps : gradient steps of the Bradley-Terry fit (default 20,000).
    seed : seed of the pre-training and SFT example order (default 0).

    Returns
    -------
    An :class:`RLHFPipeline`. The same arguments give the same models, bit for bit.
    """
    single = ("prompt", "replies")
    missing = [name for name in ("env", "n", "corpus", "sft", "preferences",
                                 *(() if hasattr(scenario, "prompts") else single))
               if not hasattr(scenario, name)]
    if missing:
        raise TypeError(f"scenario must provide the ScenarioData fields; "
                        f"{type(scenario).__name__} lacks {', '.join(missing)}")
    # every number checked before the first model is trained, under the names passed here
    for name, count in (("pretrain_epochs", pretrain_epochs), ("sft_epochs", sft_epochs),
                        ("reward_steps", reward_steps)):
        check_positive_int(name, count, high=MAX_COUNT)
    check_positive("alpha", alpha, MAX_POLICY_STEP)
    check_seed(seed)
    gold_env = scenario.env()
    base = pretrain(NGramLM.create(gold_env.vocab, scenario.n), scenario.corpus,
                    epochs=pretrain_epochs, alpha=alpha, seed=seed).lm
    x = getattr(scenario, "prompt", None)  # rows name their prompt when there are several
    tuned = sft(base, [row if len(row) == 3 else (row[0], x, row[1]) for row in scenario.sft],
                epochs=sft_epochs, alpha=alpha, seed=seed).lm
    rm = train_reward_model([row if len(row) == 4 else (row[0], x, *row[1:])
                             for row in scenario.preferences],
                            reference=None if hasattr(scenario, "prompts")
                            else [(scenario.prompt, y) for y in scenario.replies],
                            steps=reward_steps)
    env = scenario.env(reward=rm.score)
    return RLHFPipeline(scenario, base, tuned, rm, env, gold_env, env.to_mdp(),
                        gold_env.to_mdp(), tuned.policy(env, per_state=True))
