"""The capital-of-France scenario's SFT model and its responses, likeliest first, as the
replays that compare some of them (DPO's uncovered responses, likelihood displacement,
SimPO's drift) set it up."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tabular.envs import load_scenario
from tabular.rlhf import ending_probabilities, path_returns, sample_preferences, train_pipeline
from tabular.rlhf.pipeline import RLHFPipeline


@dataclass(frozen=True)
class SftResponses:
    """Every response of the SFT model (the pipeline's reference) on the scenario's
    prompt, likeliest first: response ``i`` ends with action ``actions[i]`` in state
    ``states[i]`` of the prefix tree and reads ``texts[i]``."""

    pipeline: RLHFPipeline
    """The trained scenario (:func:`~tabular.rlhf.train_pipeline` at its defaults)."""
    ends: np.ndarray
    """``ends[s, a]``: the SFT model's probability of ending with ``a`` in ``s``."""
    states: np.ndarray
    """Each response's last state."""
    actions: np.ndarray
    """Each response's last token."""
    texts: list[str]
    """Each response's text."""

    @property
    def prompt(self) -> str:
        """The scenario's one prompt."""
        return self.pipeline.env.prompts[0]

    def comparisons(self, first: int, count: int, seed: int) -> list[tuple[int, str, str, str]]:
        """``count`` comparisons among the ``first`` likeliest responses, labelled by
        Bradley-Terry on the reward model's returns (:func:`sample_preferences`)."""
        scores = path_returns(self.pipeline.mdp)[self.states[:first], self.actions[:first]]
        return sample_preferences(self.prompt, self.texts[:first], scores, count, seed=seed)


def sft_responses() -> SftResponses:
    """The scenario trained and its SFT responses sorted by falling probability (a stable
    sort: ties stay in the prefix tree's state order, so the order is the same in every
    run)."""
    ex = train_pipeline(load_scenario())
    ends = ending_probabilities(ex.mdp, ex.reference)
    s, a = np.nonzero(ends > 0)
    order = np.argsort(-ends[s, a], kind="stable")
    s, a = s[order], a[order]
    texts = [ex.env.text(int(ex.mdp.next_state[i, j, 0])) for i, j in zip(s, a, strict=True)]
    return SftResponses(pipeline=ex, ends=ends, states=s, actions=a, texts=texts)
