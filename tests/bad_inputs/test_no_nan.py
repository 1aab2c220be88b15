"""No public learner or solver returns a NaN for any input its boundary accepts.

Random MDPs with traps (``-inf`` rewards) and rewards up to the model's limit, with
step sizes, reward floors and KL coefficients drawn across the whole accepted range:
every output is a number or a ``-inf`` (a trap's exact value), never NaN or ``+inf``
(but for a sweep's residual, which is ``+inf`` in the sweep where a value becomes ``-inf``);
an update that would overflow is a clear ``FloatingPointError`` instead.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tabular
from tabular.model.mdp import MAX_REWARD
from tabular.pg.arguments import MAX_POLICY_STEP
from tabular.testing import gammas, mdps

EPISODES = dict(episodes=10, max_steps=30)


def log_uniform(low: float, high: float):
    return st.floats(np.log10(low), np.log10(high)).map(lambda x: float(10.0 ** x))


def assert_no_nan(result, name):
    for field, value in vars(result).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert not np.isnan(value).any(), f"{name}: NaN in {field}"
            # a return may be -inf (a trap), a residual +inf (a value reaching -inf)
            if field not in ("episode_returns", "history"):
                assert not (value == np.inf).any(), f"{name}: +inf in {field}"


@settings(max_examples=25, deadline=None)
@given(mdps(max_states=8, max_actions=3, traps=True,
            reward_scale=MAX_REWARD / 10), gammas(),
       log_uniform(1e-3, MAX_POLICY_STEP), st.floats(0.01, 1.0),
       log_uniform(1.0, MAX_REWARD), log_uniform(1e-3, 1e3), st.integers(0, 2**16))
def test_learners_never_return_nan(mdp, gamma, policy_step, value_step, floor, beta, seed):
    ref = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    pg = dict(gamma=gamma, alpha=policy_step, reward_floor=-floor, seed=seed, **EPISODES)
    calls = {
        "q_learning": lambda: tabular.q_learning(mdp, gamma=gamma, alpha=value_step,
                                                 seed=seed, **EPISODES),
        "sarsa": lambda: tabular.sarsa(mdp, gamma=gamma, alpha=value_step, seed=seed,
                                       **EPISODES),
        "double_q_learning": lambda: tabular.double_q_learning(
            mdp, gamma=gamma, alpha=value_step, seed=seed, **EPISODES),
        "mc_control": lambda: tabular.mc_control(mdp, gamma=gamma, epsilon=0.2, seed=seed,
                                                 **EPISODES),
        "td0": lambda: tabular.td0(mdp, ref, gamma=gamma, alpha=value_step, n_step=2,
                                   seed=seed, **EPISODES),
        "reinforce": lambda: tabular.reinforce(mdp, baseline=True, alpha_value=value_step,
                                               **pg),
        "actor_critic": lambda: tabular.actor_critic(mdp, alpha_value=value_step, lam=0.9,
                                                     ref_policy=ref, beta=beta, **pg),
        "ppo": lambda: tabular.ppo(mdp, gamma=gamma, alpha=policy_step,
                                   alpha_value=value_step, reward_floor=-floor, iterations=3,
                                   episodes_per_batch=4, max_steps=30, seed=seed),
    }
    for name, call in calls.items():
        try:
            result = call()
        except FloatingPointError as err:
            assert "overflowed" in str(err)
            continue
        assert_no_nan(result, name)


@settings(max_examples=40, deadline=None)
@given(mdps(max_states=10, max_actions=3, traps=True, reward_scale=MAX_REWARD),
       st.floats(0.0, 0.99), log_uniform(1e-3, 1e3))
def test_solvers_never_return_nan(mdp, gamma, beta):
    assert_no_nan(tabular.value_iteration(mdp, gamma, tol=1e-6 * MAX_REWARD), "VI")
    assert_no_nan(tabular.policy_iteration(mdp, gamma), "PI")
    uniform = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    assert_no_nan(tabular.policy_evaluation(mdp, uniform, gamma), "PE")
    soft = tabular.soft_value_iteration(mdp, gamma, beta, tol=1e-6 * MAX_REWARD)
    assert_no_nan(soft, "soft VI")


def assert_finite(result, name):
    for field, value in vars(result).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and field != "history":
            assert np.isfinite(value).all(), f"{name}: a non-finite value in {field}"


@settings(max_examples=25, deadline=None)
@given(mdps(max_states=8, max_actions=3, reward_scale=MAX_REWARD / 10), gammas(),
       st.floats(0.01, 1.0), st.floats(0.0, 1.0), st.integers(0, 2**16))
def test_without_a_minus_inf_reward_nothing_returns_minus_inf(mdp, gamma, alpha, lam, seed):
    """Without a trap no value is -inf: a learner returns finite estimates or, when its
    updates diverge (traces at large alpha, a batch that overshoots), says so."""
    ref = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    kw = dict(gamma=gamma, alpha=alpha, seed=seed, **EPISODES)
    calls = {
        "q_learning": lambda: tabular.q_learning(mdp, **kw),
        "expected_sarsa": lambda: tabular.expected_sarsa(mdp, **kw),
        "double_q_learning": lambda: tabular.double_q_learning(mdp, **kw),
        "n_step_sarsa": lambda: tabular.n_step_sarsa(mdp, n_step=3, **kw),
        "td0": lambda: tabular.td0(mdp, ref, n_step=2, **kw),
        "mc_prediction": lambda: tabular.mc_prediction(mdp, ref, **kw),
        "td_lambda": lambda: tabular.td_lambda(mdp, ref, lam=lam, **kw),
        "sarsa_lambda": lambda: tabular.sarsa_lambda(mdp, lam=lam, **kw),
        "dyna_q": lambda: tabular.dyna_q(mdp, planning_steps=3, **kw),
        "batch_prediction": lambda: tabular.batch_prediction(
            mdp, ref, gamma=gamma, alpha=alpha / 100, episodes=5, max_steps=30, seed=seed,
            max_sweeps=200, strict=False),
        "value_iteration": lambda: tabular.value_iteration(mdp, gamma, tol=1e-6 * MAX_REWARD),
        "policy_iteration": lambda: tabular.policy_iteration(mdp, gamma),
        "policy_evaluation": lambda: tabular.policy_evaluation(mdp, ref, gamma),
    }
    for name, call in calls.items():
        try:
            result = call()
        except FloatingPointError as err:
            assert "lower alpha" in str(err), str(err)
            continue
        assert_finite(result, name)
