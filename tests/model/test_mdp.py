"""TabularMDP: validation errors, the constructors agreeing with each other, and the
sampling kernels drawing outcomes with the model's probabilities."""

import dataclasses
import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

import tabular.envs  # noqa: F401  (registers the tabzoo/ environments)
from tabular import (
    MDPError,
    TabularMDP,
    seed_states,
    value_iteration,
)
from tabular.envs.base import ModelEnv
from tabular.model.sampling import sample_start, sample_step
from tabular.testing import property_settings


def two_state_arrays():
    """Two states, two actions, two outcome slots (the second used only by (0, 1))."""
    next_state = np.array([[[1, 0], [0, 1]], [[1, 1], [0, 0]]])
    prob = np.array([[[1.0, 0.0], [0.5, 0.5]], [[1.0, 0.0], [1.0, 0.0]]])
    reward = np.array([[[1.0, 0.0], [0.0, 2.0]], [[0.0, 0.0], [-1.0, 0.0]]])
    done = np.zeros((2, 2, 2), dtype=bool)
    return next_state, prob, reward, done, np.array([1.0, 0.0])


def build(**changes):
    names = ("next_state", "prob", "reward", "done", "start")
    arrays = dict(zip(names, two_state_arrays(), strict=True))
    for name, (index, value) in changes.items():
        arrays[name][index] = value
    return TabularMDP(**arrays, state_labels=["home", "away"], action_names=["stay", "go"])


@pytest.mark.parametrize("changes, message", [
    ({"prob": ((0, 1, 0), 0.6)}, "state 0 (home), action 1 (go) sum to 1.1"),
    ({"prob": ((1, 0, 0), -0.5)}, "prob -0.5 of outcome 0 at state 1 (away), action 0 (stay)"),
    ({"prob": ((1, 1, 1), math.nan)}, "state 1 (away), action 1 (go)"),
    ({"next_state": ((1, 0, 0), 2)}, "next_state 2 of outcome 0 at state 1 (away), action 0"),
    ({"next_state": ((0, 1, 1), -1)}, "next_state -1 of outcome 1 at state 0 (home), action 1"),
    ({"reward": ((0, 1, 1), math.nan)}, "reward nan of outcome 1 at state 0 (home), action 1"),
    ({"reward": ((1, 1, 0), math.inf)}, "reward inf of outcome 0 at state 1 (away), action 1"),
    ({"start": (0, 0.5)}, "start must be a probability distribution"),
    ({"start": (1, -0.5)}, "start must be a probability distribution"),
])
def test_validation_errors_name_state_and_action(changes, message):
    with pytest.raises(MDPError) as err:
        build(**changes)
    assert message in str(err.value)
    assert isinstance(err.value, ValueError)


def test_shape_errors():
    ns, p, r, d, start = two_state_arrays()
    with pytest.raises(MDPError, match="reward has shape"):
        TabularMDP(ns, p, r[:, :, :1], d, start)
    with pytest.raises(MDPError, match=r"start must have shape \[2\]"):
        TabularMDP(ns, p, r, d, np.ones(3) / 3)
    with pytest.raises(MDPError, match="state_labels has 3 entries for 2 states"):
        TabularMDP(ns, p, r, d, start, state_labels=["a", "b", "c"])


def test_minus_inf_reward_allowed_and_harmless_on_padding():
    mdp = build(reward=((0, 0, 0), -math.inf))
    assert mdp.reward[0, 0, 0] == -math.inf
    padded = build(reward=((0, 0, 1), -math.inf))  # probability 0: no 0 * -inf = NaN
    assert padded.reward[0, 0, 1] == 0.0
    assert np.isfinite(padded.expected_reward()).all()


def test_the_model_owns_read_only_copies_and_leaves_the_callers_arrays_alone():
    names = ("next_state", "prob", "reward", "done", "start")
    given = dict(zip(names, two_state_arrays(), strict=True))
    given["next_state"] = given["next_state"].astype(np.int64)  # the stored dtypes: no cast
    given["reward"][0, 0, 1] = -math.inf  # a -inf on a padding slot (probability 0)
    cells = np.array([[0, 0], [0, 1]])
    before = {name: value.copy() for name, value in given.items()}
    mdp = TabularMDP(**given, state_cells=cells)
    for name, value in given.items():  # untouched, the -inf padding reward included
        np.testing.assert_array_equal(value, before[name])
        assert value.flags.writeable
    assert given["reward"][0, 0, 1] == -math.inf and mdp.reward[0, 0, 1] == 0.0
    stored = {name: getattr(mdp, name) for name in names}
    stored |= {"start_cdf": mdp.start_cdf, "state_cells": mdp.state_cells}
    stored |= {f"arrays.{name}": value for name, value in mdp.arrays._asdict().items()
               if value is not None and value.size}  # reward_sd is empty without noise
    for name, value in stored.items():
        assert not value.flags.writeable, name
        for callers in (*given.values(), cells):
            assert not np.shares_memory(value, callers), name
        with pytest.raises(ValueError, match="read-only"):
            value.flat[0] = value.flat[0]
    given["prob"][0, 0, 0] = 0.5  # a later change of the caller's array is not seen
    assert mdp.prob[0, 0, 0] == 1.0


def test_env_models_are_read_only():
    for mdp in (TabularMDP.from_gymnasium(gym.make("FrozenLake-v1")),
                gym.make("tabzoo/TrapTreasure-v0").unwrapped.to_mdp()):
        for value in mdp.arrays:
            assert value is None or not value.flags.writeable


def test_state_cells_must_give_each_state_a_cell():
    ns, p, r, d, start = two_state_arrays()
    with pytest.raises(MDPError, match=r"state_cells must have shape \[2, 2\]"):
        TabularMDP(ns, p, r, d, start, state_cells=np.zeros((3, 2)))


def test_from_transitions_merges_equal_outcomes_and_checks_entries():
    P = {0: {0: [(0.25, 1, 0.0, False), (0.5, 1, 0.0, False), (0.25, 0, 1.0, True)]},
         1: {0: [(1.0, 1, 0.0, True)]}}
    mdp = TabularMDP.from_transitions(P, start=[1.0, 0.0])
    assert mdp.n_outcomes == 2
    np.testing.assert_allclose(mdp.transition_matrix()[0, 0], [0.25, 0.75])
    assert mdp.expected_reward()[0, 0] == 0.25
    with pytest.raises(MDPError, match=r"P\[0\]\[0\] entry"):
        TabularMDP.from_transitions({0: {0: [(1.0, 0, 0.0)]}})
    with pytest.raises(MDPError, match=r"P\[0\] has 1 actions, other states have 2"):
        TabularMDP.from_transitions([[[(1.0, 0, 0, False)]],
                                     [[(1.0, 0, 0, False)], [(1.0, 0, 0, False)]]])
    with pytest.raises(MDPError, match="sum to 0.5"):
        TabularMDP.from_transitions([[[(0.5, 0, 0, False)]]])


@st.composite
def dense_models(draw):
    S, A = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    P = rng.random((S, A, S)) * (rng.random((S, A, S)) < 0.6)
    P[np.arange(S)[:, None], np.arange(A)[None, :], rng.integers(0, S, (S, A))] += 0.1
    P /= P.sum(axis=2, keepdims=True)
    R = rng.normal(size=(S, A, S))
    terminal = rng.random(S) < 0.3
    return P, R, terminal


@property_settings(60)
@given(dense_models())
def test_from_dense_both_layouts_agree_with_from_transitions(model):
    P, R, terminal = model
    S, A, _ = P.shape
    start = np.full(S, 1.0 / S)
    sas = TabularMDP.from_dense(P, R, layout="SAS", terminal=terminal, start=start)
    ass = TabularMDP.from_dense(P.transpose(1, 0, 2), R.transpose(1, 0, 2), layout="ASS",
                                terminal=terminal, start=start)
    table = [[[(P[s, a, t], t, R[s, a, t], terminal[t]) for t in range(S) if P[s, a, t] > 0]
              for a in range(A)] for s in range(S)]
    listed = TabularMDP.from_transitions(table, start=start)
    for mdp in (sas, ass):
        np.testing.assert_allclose(mdp.transition_matrix(), listed.transition_matrix())
        np.testing.assert_allclose(mdp.expected_reward(), listed.expected_reward())
        np.testing.assert_allclose(mdp.transition_matrix(), P)
        for s in range(S):
            for a in range(A):
                used = mdp.prob[s, a] > 0
                np.testing.assert_array_equal(mdp.done[s, a][used],
                                              terminal[mdp.next_state[s, a][used]])
                np.testing.assert_allclose(mdp.reward[s, a][used],
                                           R[s, a, mdp.next_state[s, a][used]])


def test_from_dense_reward_shapes_and_layout_errors():
    P = np.array([[[0.5, 0.5]], [[0.0, 1.0]]])  # S = 2, A = 1
    by_state = TabularMDP.from_dense(P, np.array([1.0, 2.0]))
    np.testing.assert_allclose(by_state.expected_reward(), [[1.0], [2.0]])
    by_pair = TabularMDP.from_dense(P, np.array([[3.0], [4.0]]))
    np.testing.assert_allclose(by_pair.expected_reward(), [[3.0], [4.0]])
    with pytest.raises(MDPError, match="layout must be"):
        TabularMDP.from_dense(P, np.zeros(2), layout="SSA")
    with pytest.raises(MDPError, match="R has shape"):
        TabularMDP.from_dense(P, np.zeros(3))


def test_from_gymnasium_reads_P_or_to_mdp_and_rejects_envs_without_P():
    lake = gym.make("FrozenLake-v1")
    mdp = TabularMDP.from_gymnasium(lake)
    assert (mdp.n_states, mdp.n_actions) == (16, 4) and mdp.start[0] == 1.0
    assert mdp.max_episode_steps == 100  # FrozenLake-v1's time limit
    cliff = gym.make("tabzoo/CliffWalking-v0")
    model, own = TabularMDP.from_gymnasium(cliff), cliff.unwrapped.to_mdp()
    for name in ("next_state", "prob", "reward", "done", "start"):
        np.testing.assert_array_equal(getattr(model, name), getattr(own, name))
    assert (model.max_episode_steps, own.max_episode_steps) == (10_000, None)
    unlimited = gym.make("tabzoo/CliffWalking-v0", max_episode_steps=None).unwrapped
    assert TabularMDP.from_gymnasium(unlimited) is unlimited.to_mdp()
    with pytest.raises(TypeError, match="no transition table"):
        TabularMDP.from_gymnasium(gym.make("CartPole-v1"))


# ------------------------------------------------------------ sampling
@njit(cache=True)
def _count_outcomes(model, s, a, rng, n):
    counts = np.zeros(model.prob.shape[0], dtype=np.int64)
    for _ in range(n):
        nxt, _, _ = sample_step(model, s, a, rng)
        counts[nxt] += 1
    return counts


@njit(cache=True)
def _count_starts(model, rng, n):
    counts = np.zeros(model.start_cdf.shape[0], dtype=np.int64)
    for _ in range(n):
        counts[sample_start(model, rng)] += 1
    return counts


def test_sample_step_and_sample_start_follow_the_model():
    mdp = gym.make("tabzoo/Gambler-v0", p_h=0.4, goal=10).unwrapped.to_mdp()
    n = 200_000
    counts = _count_outcomes(mdp.arrays, 4, 3, seed_states(1, 1)[0], n)
    # 5 sigma of a binomial proportion with p = 0.4: 5 * sqrt(0.24 / n) = 0.0055
    assert set(np.flatnonzero(counts)) == {1, 7}
    assert counts[7] / n == pytest.approx(0.4, abs=5 * math.sqrt(0.24 / n))
    starts = _count_starts(mdp.arrays, seed_states(2, 1)[0], n)
    assert starts[0] == starts[10] == 0
    # each of the 9 start states has p = 1/9: 5 sigma = 5 * sqrt(p (1 - p) / n) = 0.0035
    np.testing.assert_allclose(starts[1:10] / n, 1 / 9, atol=5 * math.sqrt(8 / 81 / n))
    again = _count_outcomes(mdp.arrays, 4, 3, seed_states(1, 1)[0], n)
    np.testing.assert_array_equal(counts, again)  # same seed, same draws


@njit(cache=True)
def _rewards(model, s, a, rng, n):
    out = np.empty(n)
    for i in range(n):
        out[i] = sample_step(model, s, a, rng)[1]
    return out


def test_gaussian_reward_noise_is_drawn_by_the_sampler_and_ignored_by_planners():
    """Outcome 0 of a two-outcome action pays N(-1, 2^2), outcome 1 a fixed 3: the
    sampled rewards of outcome 0 have mean -1 and sd 2 (5 standard errors: 5 * 2 /
    sqrt(n) on the mean, 5 * 2 / sqrt(2 n) on the sd), outcome 1's are exact; value
    iteration reads the means; a zero sd draws nothing, so the stream is a noiseless
    model's, bit for bit, and the env draws the same noise from its own generator."""
    next_state = np.zeros((1, 1, 2), dtype=np.int64)
    args = (next_state, np.full((1, 1, 2), 0.5), np.array([[[-1.0, 3.0]]]),
            np.ones((1, 1, 2), dtype=bool), np.ones(1))
    noisy = TabularMDP(*args, reward_sd=np.array([[[2.0, 0.0]]]))
    plain = TabularMDP(*args)
    n = 200_000
    r = _rewards(noisy.arrays, 0, 0, seed_states(3, 1)[0], n)
    fixed = r == 3.0
    assert fixed.mean() == pytest.approx(0.5, abs=5 * math.sqrt(0.25 / n))
    g = r[~fixed]
    assert g.mean() == pytest.approx(-1.0, abs=5 * 2.0 / math.sqrt(g.size))
    assert g.std() == pytest.approx(2.0, abs=5 * 2.0 / math.sqrt(2 * g.size))
    assert value_iteration(noisy, gamma=0.9).V[0] == value_iteration(plain, gamma=0.9).V[0]
    quiet = TabularMDP(*args, reward_sd=np.zeros((1, 1, 2)))
    np.testing.assert_array_equal(_rewards(quiet.arrays, 0, 0, seed_states(4, 1)[0], 1000),
                                  _rewards(plain.arrays, 0, 0, seed_states(4, 1)[0], 1000))
    assert noisy.reward_sd.flags.writeable is False
    assert dataclasses.replace(noisy, start=[1.0]).reward_sd is not None
    env = ModelEnv(noisy)
    env.reset(seed=0)
    draws = []
    for _ in range(2000):
        env.reset()
        draws.append(env.step(0)[1])
    noisy_draws = np.array(draws)[np.array(draws) != 3.0]
    assert noisy_draws.size > 900 and not (noisy_draws == -1.0).any()
