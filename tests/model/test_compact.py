"""The stored form of a model (:mod:`tabular.model.compact`): chosen from the arrays, exact,
and read the same way by every kernel, so results do not depend on it bit for bit."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from tabular import (
    TabularMDP,
    q_from_v,
    value_iteration,
)
from tabular._numba.rng import randint, seed_states
from tabular.model import compact
from tabular.model.sampling import sample_step
from tabular.solve import sweeps as kernels
from tabular.testing import gammas, mdps, property_settings, random_mdp

PROPERTY = property_settings(20)


def wide(mdp: TabularMDP) -> TabularMDP:
    """``mdp`` stored wide: float64 probability and reward per outcome (no codes)."""
    stored = compact.encode(mdp.next_state, mdp.prob, mdp.reward, mdp.done, "wide")
    return TabularMDP.from_arrays(*stored, mdp.start)


def assert_same_bits(x, y):
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    assert x.shape == y.shape
    np.testing.assert_array_equal(x.view(np.uint64), y.view(np.uint64))


@PROPERTY
@given(mdps(traps=True), gammas(), st.integers(0, 2**16))
def test_compact_and_wide_forms_give_the_same_bits(mdp, gamma, seed):
    twin = wide(mdp)
    assert mdp.arrays.code.dtype == np.uint16 and twin.arrays.code.dtype == np.uint32
    for method in ("sync", "inplace"):
        ours, theirs = (value_iteration(m, gamma, method=method) for m in (mdp, twin))
        for name in ("V", "Q", "history"):
            assert_same_bits(getattr(ours, name), getattr(theirs, name))
        np.testing.assert_array_equal(ours.policy, theirs.policy)
    # the other sweeps (policy evaluation, soft value iteration) read the model through
    # the same q_value: its bits in both forms are the sync sweep's and q_from_v's
    rng = np.random.default_rng(seed)
    V = np.where(rng.random(mdp.n_states) < 0.1, -np.inf, rng.normal(size=mdp.n_states))
    assert_same_bits(*(q_from_v(m, V, gamma) for m in (mdp, twin)))
    # learners reach the model only through sample_step: the same draws, the same bits
    draws = [_transitions(m.arrays, seed_states(seed)[0].copy()) for m in (mdp, twin)]
    assert_same_bits(*draws)


@njit(cache=True)
def _transitions(model, rng):
    """``(s', r, done)`` of 200 draws of :func:`sample_step` from random pairs."""
    S, A = model.successor.shape[0], model.successor.shape[1]
    out = np.empty((3, 200))
    for i in range(200):
        s, a = randint(rng, S), randint(rng, A)
        s_next, r, done = sample_step(model, s, a, rng)
        out[0, i], out[1, i], out[2, i] = s_next, r, done
    return out


@njit(cache=True)
def _steps_leave_the_stream(model, rng):
    """Whether 100 draws of :func:`sample_step` leave ``rng`` as it was."""
    before = rng.copy()
    for i in range(100):
        sample_step(model, i % model.successor.shape[0], i % model.successor.shape[1], rng)
    return (rng == before).all()


def test_a_certain_outcome_draws_no_random_number():
    """With ``K = 1`` every outcome is certain: ``sample_step`` leaves the stream alone
    (the draws are the learner's own); with ``K > 1`` it draws."""
    deterministic = TabularMDP.from_gymnasium(gym.make("CliffWalking-v1"))
    slippery = TabularMDP.from_gymnasium(gym.make("FrozenLake-v1"))
    assert deterministic.n_outcomes == 1 and slippery.n_outcomes > 1
    assert _steps_leave_the_stream(deterministic.arrays, seed_states(0)[0].copy())
    assert not _steps_leave_the_stream(slippery.arrays, seed_states(0)[0].copy())


@pytest.mark.parametrize("seed", range(3))
def test_many_outcomes_draw_the_same_transitions_in_both_forms(seed):
    """A model with many outcomes (K = 30, each pair using 1..K; the sampler searches its
    tables), stored compact and wide, gives the same ``(s', r, done)`` bit for bit, with
    Gaussian reward noise (seeds 1, 2) and without (seed 0)."""
    rng = np.random.default_rng(seed)
    mdp = random_mdp(rng, 20, 3, 30, done_rate=0.2)
    noisy = TabularMDP(mdp.next_state, mdp.prob, mdp.reward, mdp.done, mdp.start,
                       reward_sd=rng.uniform(0.0, 1.0, mdp.prob.shape) * (seed > 0))
    wide = TabularMDP.from_arrays(*compact.encode(noisy.next_state, noisy.prob, noisy.reward,
                                                  noisy.done, "wide"), noisy.start,
                                  reward_sd=noisy.reward_sd)
    assert wide.arrays.code.dtype == np.uint32 and noisy.arrays.code.dtype == np.uint16
    assert noisy.arrays.cdf.size and wide.arrays.cdf.size
    draws = [_transitions(model, seed_states(seed)[0].copy())
             for model in (noisy.arrays, wide.arrays)]
    assert_same_bits(*draws)


@PROPERTY
@given(mdps(traps=True))
def test_the_stored_form_gives_back_the_models_arrays(mdp):
    rebuilt = TabularMDP(mdp.next_state, mdp.prob, mdp.reward, mdp.done, mdp.start)
    assert rebuilt.arrays.successor.dtype == np.int32
    for name in ("next_state", "prob", "reward", "done"):
        given_, stored = getattr(mdp, name), getattr(rebuilt, name)
        assert given_.dtype == stored.dtype and not stored.flags.writeable
        np.testing.assert_array_equal(given_.view(np.uint8), stored.view(np.uint8))
    again = TabularMDP.from_arrays(*rebuilt.arrays[:4], mdp.start)
    np.testing.assert_array_equal(again.arrays.successor, rebuilt.arrays.successor)
    for name in ("next_state", "prob", "reward", "done"):
        np.testing.assert_array_equal(getattr(again, name), getattr(mdp, name))


def test_what_the_constructor_keeps_reads_back_as_given():
    # outcome 1 of (0, 0) has probability 0: it reads back with done False, reward 0
    # (its -inf cannot meet a 0); -0.0 keeps its sign; K = 1 reads back probability 1
    next_state = np.array([[[1, 0]], [[1, 1]]])
    prob = np.array([[[1.0, 0.0]], [[0.5, 0.5]]])
    reward = np.array([[[-0.0, -np.inf]], [[0.0, 2.0]]])
    done = np.array([[[False, True]], [[True, False]]])
    mdp = TabularMDP(next_state, prob, reward, done, [1.0, 0.0])
    np.testing.assert_array_equal(mdp.done, [[[False, False]], [[True, False]]])
    assert np.signbit(mdp.reward[0, 0, 0]) and mdp.reward[0, 0, 1] == 0.0
    np.testing.assert_array_equal(mdp.next_state, next_state)
    np.testing.assert_array_equal(mdp.arrays.successor, [[[1, -1]], [[-2, 1]]])
    certain = TabularMDP(np.zeros((1, 1, 1)), np.full((1, 1, 1), 1 - 1e-10),
                         np.zeros((1, 1, 1)), np.zeros((1, 1, 1)), [1.0])
    assert certain.arrays.prob.size == 0 and certain.prob[0, 0, 0] == 1.0


def test_the_layout_is_chosen_from_the_arrays():
    frozen = TabularMDP.from_gymnasium(gym.make("FrozenLake-v1", map_name="8x8"))
    cliff = TabularMDP.from_gymnasium(gym.make("CliffWalking-v1"))
    assert frozen.arrays.code.dtype == np.uint16 and frozen.arrays.prob.ndim == 1
    assert cliff.arrays.prob.size == 0  # K = 1: no probability stored
    np.testing.assert_array_equal(np.sort(cliff.arrays.reward), [-100.0, -1.0])
    # 70,000 distinct rewards: more pairs than uint16 codes, so per-outcome float64
    many = TabularMDP(np.zeros((35_000, 1, 2)), np.full((35_000, 1, 2), 0.5),
                      np.arange(70_000.0).reshape(35_000, 1, 2), np.zeros((35_000, 1, 2)),
                      np.full(35_000, 1 / 35_000))
    assert many.arrays.code.dtype == np.uint32 and many.arrays.reward.shape == (70_000,)
    np.testing.assert_array_equal(many.arrays.code.ravel(), np.arange(70_000))
    assert compact.index_dtype(2**31 - 1) == np.int32
    assert compact.index_dtype(2**31) == np.int64


def test_64_bit_successors_read_the_same():
    mdp = random_mdp(np.random.default_rng(0), 40, 3, 3, done_rate=0.2, trap_rate=0.05)
    narrow = mdp.arrays
    broad = narrow._replace(successor=narrow.successor.astype(np.int64))
    V32 = np.append(np.random.default_rng(1).normal(size=40), 0.0)
    V64 = V32.copy()
    # every sweep reads successors through value_index; the sequential one checks it
    # without compiling a parallel kernel for a layout only models past 2**31 states use
    for _ in range(3):
        kernels.optimality_sweep_inplace(narrow, V32, 0.9)
        kernels.optimality_sweep_inplace(broad, V64, 0.9)
    assert_same_bits(V32, V64)
