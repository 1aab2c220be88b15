"""Preference data in TRL's shape, ``{"prompt", "chosen", "rejected"}`` rows (and KTO's
unpaired ``{"prompt", "completion", "label"}`` rows), is read as the project's tuples are,
by every learner that takes it: the same rows as dicts or tuples give the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

from tabular import dpo, kto, train_reward_model
from tabular.envs import load_scenario
from tabular.rlhf.reward_model import preference_records


@pytest.fixture(scope="module")
def scenario():
    return load_scenario()


@pytest.fixture(scope="module")
def rows(scenario):
    x = scenario.prompt
    return [(x, w, lo) for _, w, lo in scenario.preferences[:4]]


def as_trl(rows):
    return [{"prompt": x, "chosen": w, "rejected": lo, "score_chosen": 1.0}
            for x, w, lo in rows]


def test_trl_rows_are_read_as_tuples(rows):
    assert preference_records(as_trl(rows)) == preference_records(rows)


def test_reward_model_from_trl_rows(rows):
    a, b = train_reward_model(as_trl(rows), steps=200), train_reward_model(rows, steps=200)
    assert a.scores == b.scores and a.loss == b.loss


def test_dpo_from_trl_rows(scenario, rows):
    env = scenario.env()
    policy = np.full((env.observation_space.n, env.action_space.n), 1.0 / env.action_space.n)
    a = dpo(env, policy, as_trl(rows), beta=0.5, steps=20)
    b = dpo(env, policy, rows, beta=0.5, steps=20)
    np.testing.assert_array_equal(a.logits, b.logits)


def test_kto_from_trl_unpaired_rows(scenario, rows):
    env = scenario.env()
    policy = np.full((env.observation_space.n, env.action_space.n), 1.0 / env.action_space.n)
    labels = [(x, w, True) for x, w, _ in rows[:2]] + [(x, lo, False) for x, _, lo in rows[:2]]
    trl = [{"prompt": x, "completion": y, "label": good} for x, y, good in labels]
    a = kto(env, policy, trl, beta=0.5, steps=20)
    b = kto(env, policy, labels, beta=0.5, steps=20)
    np.testing.assert_array_equal(a.logits, b.logits)


@pytest.mark.parametrize("row, message", [
    ({"prompt": "p", "chosen": "a"}, r"preference 0 is a mapping without the columns \['rejected"),
    ({"chosen": "a", "rejected": "b"}, r"without the columns \['prompt'\]"),
    ({"prompt": "p", "chosen": ["a"], "rejected": "b"}, "must hold strings"),
])
def test_bad_trl_rows_are_named(row, message):
    with pytest.raises(ValueError, match=message):
        preference_records([row])
