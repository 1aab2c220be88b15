"""On-policy distillation reaches its exact optimum, the teacher."""

from __future__ import annotations

import pytest

from tabular.envs import load_scenario
from tabular.rlhf import sequence_kl, train_pipeline
from tabular.rlhf.distillation import distill


@pytest.fixture(scope="module")
def ex():
    return train_pipeline(load_scenario())


@pytest.mark.parametrize("learner, kwargs, left", [
    ("reinforce", {"episodes": 3000, "alpha": 0.5}, 1e-4),
    ("ppo", {"iterations": 200, "episodes_per_batch": 16, "alpha": 0.5}, 1e-2),
])
def test_the_student_reaches_the_teacher(ex, learner, kwargs, left):
    teacher = ex.optimum(0.5)
    start = sequence_kl(ex.mdp, ex.reference, teacher)
    result = distill(ex.mdp, ex.reference, teacher, learner=learner, seed=0, **kwargs)
    assert start > 1.0 and sequence_kl(ex.mdp, result.policy, teacher) < left


def test_the_reward_is_ignored_and_the_teacher_is_the_only_signal(ex):
    """Distilling the SFT model into itself moves nothing: the KL is 0 from the start."""
    result = distill(ex.mdp, ex.reference, ex.reference, episodes=200, seed=0)
    assert sequence_kl(ex.mdp, result.policy, ex.reference) == pytest.approx(0.0, abs=1e-12)


def test_distill_fixes_its_own_arguments(ex):
    with pytest.raises(ValueError, match="distill sets"):
        distill(ex.mdp, ex.reference, ex.reference, beta=0.5)
    with pytest.raises(ValueError, match="learner must be one of"):
        distill(ex.mdp, ex.reference, ex.reference, learner="dpo")
