"""The update rules of the policy-gradient learners, checked exactly against their definitions."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabular.rules.policy_gradient import (
    accumulate_log_prob_grad,
    ascend,
    clipped_surrogate_weight,
    grad_entropy,
    kl_shaped_reward,
    log_softmax,
    policy_gradient_step,
    softmax,
)
from tabular.rules.returns import discounted_returns, gae


def returns_to_go(rewards, gamma, out):
    discounted_returns(rewards, gamma, np.zeros(len(rewards), dtype=bool), 0.0, out)

finite = st.floats(-10.0, 10.0, allow_nan=False)


@st.composite
def episodes(draw):
    """An episode of T rewards, T + 1 values, terminated or truncated, and gamma, lam."""
    T = draw(st.integers(1, 12))
    rewards = np.array(draw(st.lists(finite, min_size=T, max_size=T)))
    values = np.array(draw(st.lists(finite, min_size=T + 1, max_size=T + 1)))
    dones = np.zeros(T, dtype=bool)
    dones[-1] = draw(st.booleans())
    gamma = draw(st.floats(0.0, 1.0))
    lam = draw(st.floats(0.0, 1.0))
    return rewards, values, dones, gamma, lam


def td_errors(rewards, values, dones, gamma):
    """``delta_t = r_t + gamma V(s_{t+1}) [not done] - V(s_t)``, written out in NumPy."""
    return rewards + gamma * np.where(dones, 0.0, values[1:]) - values[:-1]


def run_gae(rewards, values, dones, gamma, lam):
    out = np.full(len(rewards), np.nan)
    gae(rewards, values, dones, gamma, lam, out)
    return out


@settings(max_examples=60, deadline=None)
@given(episodes())
def test_gae_with_lambda_zero_is_the_td_error(ep):
    rewards, values, dones, gamma, _ = ep
    np.testing.assert_allclose(run_gae(rewards, values, dones, gamma, 0.0),
                               td_errors(rewards, values, dones, gamma), rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(episodes())
def test_gae_with_lambda_one_is_reward_to_go_minus_baseline(ep):
    rewards, values, dones, gamma, _ = ep
    T = len(rewards)
    G = np.full(T, np.nan)
    returns_to_go(rewards, gamma, G)
    # a truncated episode bootstraps its tail: G_t + gamma^(T - t) V(s_T)
    tail = 0.0 if dones[-1] else values[T]
    expected = G + gamma ** (T - np.arange(T)) * tail - values[:T]
    np.testing.assert_allclose(run_gae(rewards, values, dones, gamma, 1.0), expected,
                               rtol=1e-12, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(episodes())
def test_gae_is_the_exponentially_weighted_sum_of_td_errors(ep):
    """Schulman et al. (2016), eq. 16: ``A_t = sum_k (gamma lam)^k delta_{t+k}``."""
    rewards, values, dones, gamma, lam = ep
    delta = td_errors(rewards, values, dones, gamma)
    T = len(rewards)
    expected = [sum((gamma * lam) ** k * delta[t + k] for k in range(T - t)) for t in range(T)]
    np.testing.assert_allclose(run_gae(rewards, values, dones, gamma, lam), expected,
                               rtol=1e-12, atol=1e-9)


def test_returns_to_go_by_hand():
    G = np.empty(3)
    returns_to_go(np.array([1.0, 2.0, 4.0]), 0.5, G)
    np.testing.assert_array_equal(G, [1 + 0.5 * 2 + 0.25 * 4, 2 + 0.5 * 4, 4.0])


logit_rows = st.lists(st.one_of(st.floats(-5.0, 5.0), st.just(-np.inf)), min_size=2,
                      max_size=6).filter(lambda xs: np.isfinite(xs).any())


def numeric_gradient(f, theta, eps=1e-6):
    """Central differences of ``f`` in the finite coordinates of ``theta``."""
    grad = np.zeros_like(theta)
    for b in np.flatnonzero(np.isfinite(theta)):
        up, down = theta.copy(), theta.copy()
        up[b] += eps
        down[b] -= eps
        grad[b] = (f(up) - f(down)) / (2 * eps)
    return grad


def probs_of(theta):
    p = np.empty_like(theta)
    softmax(theta, p)
    return p


def log_probs_of(theta):
    lp = np.empty_like(theta)
    log_softmax(theta, lp)
    return lp


@settings(max_examples=50, deadline=None)
@given(logit_rows, st.data())
def test_accumulate_log_prob_grad_matches_finite_differences(theta, data):
    """S&B eq. 13.9: ``d log pi(a) / d theta = onehot(a) - pi``, scaled by the weight and
    added to what ``out`` holds."""
    theta = np.array(theta)
    a = data.draw(st.sampled_from(np.flatnonzero(np.isfinite(theta)).tolist()))
    weight = data.draw(st.floats(-3.0, 3.0))
    grad = np.zeros_like(theta)
    probs = np.full_like(theta, np.nan)
    accumulate_log_prob_grad(theta, a, 1.0, probs, grad)
    np.testing.assert_allclose(grad, numeric_gradient(lambda th: log_probs_of(th)[a], theta),
                               atol=1e-6)
    np.testing.assert_array_equal(probs, probs_of(theta))  # it leaves pi in probs
    assert np.all(grad[~np.isfinite(theta)] == 0.0)  # masked actions: gradient exactly 0
    start = np.arange(len(theta), dtype=float)
    out = start.copy()
    accumulate_log_prob_grad(theta, a, weight, probs, out)
    finite = np.isfinite(theta)
    np.testing.assert_array_equal(out[finite], start[finite] + weight * grad[finite])
    np.testing.assert_array_equal(out[~finite], start[~finite])  # masked: left as it was


@settings(max_examples=50, deadline=None)
@given(logit_rows, st.data())
def test_policy_gradient_step_is_the_rule_applied_to_the_logits(theta, data):
    """``theta += step * grad log pi(a)``, bit for bit the accumulated gradient; masked
    logits stay -inf."""
    theta = np.array(theta)
    a = data.draw(st.sampled_from(np.flatnonzero(np.isfinite(theta)).tolist()))
    step = data.draw(st.floats(-2.0, 2.0))
    grad = np.zeros_like(theta)
    accumulate_log_prob_grad(theta, a, step, np.empty_like(theta), grad)
    stepped = theta.copy()
    policy_gradient_step(stepped, a, step, np.empty_like(theta))
    finite = np.isfinite(theta)
    np.testing.assert_array_equal(stepped[finite], theta[finite] + grad[finite])
    assert np.all(stepped[~finite] == -np.inf)


@settings(max_examples=50, deadline=None)
@given(logit_rows)
def test_grad_entropy_matches_finite_differences(theta):
    theta = np.array(theta)

    def entropy(th):
        p, lp = probs_of(th), log_probs_of(th)
        allowed = p > 0
        return -np.sum(p[allowed] * lp[allowed])

    grad = np.full_like(theta, np.nan)
    grad_entropy(probs_of(theta), log_probs_of(theta), grad)
    np.testing.assert_allclose(grad, numeric_gradient(entropy, theta), atol=1e-6)
    assert np.all(grad[~np.isfinite(theta)] == 0.0)
    assert abs(grad.sum()) < 1e-12  # softmax is shift-invariant: gradients sum to 0


def clipped_surrogate(log_ratio, advantage, clip):
    ratio = np.exp(log_ratio)
    return min(ratio * advantage, np.clip(ratio, 1 - clip, 1 + clip) * advantage)


@settings(max_examples=100, deadline=None)
@given(st.floats(-1.0, 1.0), st.floats(-5.0, 5.0), st.floats(0.05, 0.5))
def test_clipped_surrogate_weight_is_the_derivative_in_log_pi(log_ratio, advantage, clip):
    """``dL/dtheta = w dlog pi/dtheta`` means ``w = dL/dlog pi`` (rho = pi / pi_old)."""
    ratio = np.exp(log_ratio)
    if min(abs(ratio - (1 - clip)), abs(ratio - (1 + clip))) < 1e-4:
        return  # the kink of the clip: no derivative there
    eps = 1e-7
    numeric = (clipped_surrogate(log_ratio + eps, advantage, clip)
               - clipped_surrogate(log_ratio - eps, advantage, clip)) / (2 * eps)
    assert clipped_surrogate_weight(ratio, advantage, clip) == pytest.approx(numeric, abs=1e-5)


def test_clipped_surrogate_weight_cases():
    # inside the trust region the weight is rho * A
    assert clipped_surrogate_weight(1.1, 2.0, 0.2) == pytest.approx(2.2)
    assert clipped_surrogate_weight(0.9, -2.0, 0.2) == pytest.approx(-1.8)
    # pushed past 1 + eps by a positive advantage, or below 1 - eps by a negative one: flat
    assert clipped_surrogate_weight(1.3, 2.0, 0.2) == 0.0
    assert clipped_surrogate_weight(0.7, -2.0, 0.2) == 0.0
    # the pessimistic bound keeps the gradient that undoes a bad move
    assert clipped_surrogate_weight(0.7, 2.0, 0.2) == pytest.approx(1.4)
    assert clipped_surrogate_weight(1.3, -2.0, 0.2) == pytest.approx(-2.6)


def test_ascend_never_touches_masked_logits():
    theta = np.array([0.5, -np.inf, 1.0])
    ascend(theta, np.array([1.0, 0.0, -2.0]), 0.5)
    np.testing.assert_array_equal(theta, [1.0, -np.inf, 0.0])
    ascend(theta, np.array([0.0, 1e300, 0.0]), 1e300)  # even a huge step leaves it masked
    assert theta[1] == -np.inf


def test_kl_shaped_reward():
    assert kl_shaped_reward(1.0, np.log(0.5), np.log(0.25), 0.1) == pytest.approx(
        1.0 - 0.1 * np.log(2.0))
    # without a penalty the reward passes through, even with a masked reference
    assert kl_shaped_reward(1.0, 0.0, -np.inf, 0.0) == 1.0
