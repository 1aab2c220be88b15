"""Potential-based process rewards on the token MDP: every response's return moves by
the same constant per prompt, so the exact optimum stays where it is; a process reward
model fitted to Monte Carlo step labels recovers the exact prefix values."""

from __future__ import annotations

import numpy as np
import pytest

from tabular.envs import load_scenario
from tabular.model.graph import tree_edges
from tabular.rlhf import (
    ending_probabilities,
    expected_return,
    kl_optimum,
    path_returns,
    train_pipeline,
    visit_probabilities,
)
from tabular.rlhf.process import fit_process_reward_model, prefix_values, process_rewards


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


def test_the_fitted_process_reward_model_recovers_the_prefix_values(ex):
    """Monte Carlo step labels (Math-Shepherd's soft labels) are unbiased for E_ref[R | s]:
    over 16 fits the visit-weighted RMS error falls like one over the square root of
    the labels (measured 0.060 with 100 responses x 4 completions, 0.0146 with 1,600),
    and the mean fitted value of the prompt is within four standard errors of the exact
    one."""
    mdp, ref = ex.mdp, ex.reference
    gold = prefix_values(mdp, ref)
    weight = visit_probabilities(mdp, ref) * ~mdp.done.all(axis=(1, 2))  # prefixes that act
    errors = []
    for responses in (100, 1600):
        prm = fit_process_reward_model(mdp, ref, responses=responses, completions=4, runs=16)
        errors.append(np.sqrt((weight * (prm.values - gold) ** 2).sum(axis=1) / weight.sum()))
    small, large = (e.mean() for e in errors)
    assert large < 0.35 * small and large < 0.02
    root = int(np.argmax(mdp.start))
    fitted = prm.values[:, root]
    assert abs(fitted.mean() - gold[root]) < 4 * fitted.std(ddof=1) / np.sqrt(16)
    assert (prm.labels[:, root] == 1600 * 4).all()  # every response labels its prompt


def test_an_unlabelled_prefix_takes_its_nearest_labelled_ancestors_value(ex):
    mdp = ex.mdp
    prm = fit_process_reward_model(mdp, ex.reference, responses=3, completions=2, seed=5)
    s, a, k = tree_edges(mdp)
    parent = np.arange(mdp.n_states)
    parent[mdp.next_state[s, a, k]] = s
    unlabelled = (prm.labels == 0) & (parent != np.arange(mdp.n_states))
    assert unlabelled.any() and (prm.labels > 0).sum() > 1
    np.testing.assert_array_equal(prm.values[unlabelled], prm.values[parent[unlabelled]])
    assert set(np.unique(prm.labels)) <= set(range(0, 3 * 2 + 1, 2))


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_a_fitted_process_reward_model_leaves_the_optimum_where_it_is(ex, beta):
    prm = fit_process_reward_model(ex.mdp, ex.reference, responses=20, seed=1)
    shaped = process_rewards(ex.mdp, prm.values)
    np.testing.assert_allclose(kl_optimum(shaped, ex.reference, beta).endings,
                               kl_optimum(ex.mdp, ex.reference, beta).endings, atol=1e-12)


def test_process_reward_model_fits_are_reproducible_and_runs_independent(ex):
    a = fit_process_reward_model(ex.mdp, ex.reference, responses=10, runs=3, seed=2)
    one = fit_process_reward_model(ex.mdp, ex.reference, responses=10, seed=2)
    np.testing.assert_array_equal(a.run(0).values, one.values)
    assert not np.array_equal(a.run(0).labels, a.run(1).labels)
