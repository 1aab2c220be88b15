"""Potential-based process rewards on the token MDP: every response's return moves by
the same constant per prompt, so the exact optimum stays where it is."""

from __future__ import annotations

import numpy as np
import pytest

from envs import load_scenario
from tabular.rlhf import (
    ending_probabilities,
    expected_return,
    kl_optimum,
    path_returns,
    train_pipeline,
)
from tabular.rlhf.process import prefix_values, process_rewards


@pytest.fixture(scope="module")
def ex():
    return train_pipeline(load_scenario())


def test_every_response_moves_by_the_prompts_potential(ex):
    phi = prefix_values(ex.mdp, ex.reference)
    shaped = process_rewards(ex.mdp, phi)
    ends = ending_probabilities(ex.mdp, ex.reference) > 0
    root = int(np.argmax(ex.mdp.start))
    np.testing.assert_allclose(path_returns(shaped)[ends], path_returns(ex.mdp)[ends] - phi[root],
                               atol=1e-12)
    assert phi[root] == pytest.approx(expected_return(ex.mdp, ex.reference), abs=1e-12)


@pytest.mark.parametrize("beta", [0.25, 1.0, 4.0])
def test_the_kl_regularised_optimum_does_not_move(ex, beta):
    phi = prefix_values(ex.mdp, ex.reference)
    shaped = process_rewards(ex.mdp, phi)
    before, after = kl_optimum(ex.mdp, ex.reference, beta), kl_optimum(shaped, ex.reference,
                                                                         beta)
    np.testing.assert_allclose(after.endings, before.endings, atol=1e-12)
    root = int(np.argmax(ex.mdp.start))
    assert after.value == pytest.approx(before.value - phi[root], abs=1e-12)


def test_a_potential_must_give_one_finite_number_per_state(ex):
    with pytest.raises(ValueError, match="potential must be"):
        process_rewards(ex.mdp, np.zeros(3))
    with pytest.raises(ValueError, match="potential must be"):
        process_rewards(ex.mdp, np.full(ex.mdp.n_states, np.nan))
