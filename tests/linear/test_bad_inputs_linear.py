"""The bad-input catalogue of tabular.linear (issue 45, part 3), in the row format of
``tests/bad_inputs/test_bad_inputs.py``: ``(name, call, exception type, fragment of the message)``;
and a hypothesis property over random bad values for every public callable of
``tabular.linear``: each raises a ``ValueError`` or ``TypeError`` naming the parameter,
never returns a NaN.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import slow_examples
from hypothesis import given
from hypothesis import strategies as st

import tabular.linear
from tabular.envs import RandomWalk
from tabular.linear import (
    RewardProcess,
    bellman_error,
    emphatic_fixed_point,
    expected_emphatic_td_update,
    expected_gtd2_update,
    expected_td_update,
    expected_tdc_update,
    gradient_mc,
    lstd,
    one_hot,
    polynomial,
    projected_bellman_error,
    reward_process,
    semi_gradient_td,
    state_action_features,
    state_aggregation,
    td_fixed_point,
    tile_coding,
    value_error,
    ve_minimiser,
)
from tabular.model.mdp import TabularMDP

NAN, INF = math.nan, math.inf
WALK = RandomWalk(100, jump=10, left_reward=-1.0).model()  # Example 9.1, scaled down 10x
POLICY = np.zeros(WALK.n_states, dtype=np.int64)
GROUPS = state_aggregation(np.r_[0, np.arange(100) // 10, 9])
PROCESS = reward_process(WALK, POLICY, gamma=1.0)
#: A continuing two-state loop paying 1 in one state, built by hand: at gamma = lam = 1,
#: I - gamma lam P is singular and (I - P) m = r has no solution (r does not sum to 0).
LOOP = RewardProcess(P=np.array([[0.0, 1.0], [1.0, 0.0]]), r=np.array([1.0, 0.0]),
                     v=np.zeros(2), mu=np.full(2, 0.5), gamma=1.0, episodic=False)
HUGE_X, HUGE_W = 1e150 * GROUPS, np.full(10, 1e200)  # x finite, x . w not
WIDE = np.broadcast_to(np.float64(1.0), (WALK.n_states, 10**9))  # a view: 8 GB if copied
ZERO_W = np.zeros(10)


def hand_built(**change) -> RewardProcess:
    """A :class:`RewardProcess` built by hand from the walk's, with ``change``."""
    fields = {"P": PROCESS.P, "r": PROCESS.r, "v": PROCESS.v, "mu": PROCESS.mu,
              "gamma": 1.0, "episodic": True}
    return RewardProcess(**{**fields, **change})


# ----------------------------------------------------------------- LINEAR (issue 45)
LINEAR_ROWS = [
    # float counts: refused as polynomial's order always was, one rule for the family
    ("linear.tile_coding tilings 2.0", lambda: tile_coding(np.array([0.5]), tilings=2.0, tiles=4),
     ValueError, "tilings must be an integer"),
    ("linear.tile_coding tiles np.float64 4", lambda: tile_coding(
        np.array([0.5]), tilings=2, tiles=np.float64(4.0)), ValueError, "tiles must be an integer"),
    ("linear.polynomial order 2.0", lambda: polynomial(np.array([0.5]), 2.0), ValueError,
     "order must be an integer"),
    ("linear.one_hot n_states 3.0", lambda: one_hot(3.0), ValueError,
     "n_states must be an integer"),
    ("linear.state_action_features n_actions 2.0", lambda: state_action_features(GROUPS, 2.0),
     ValueError, "n_actions must be an integer"),
    # bools read as numbers
    ("linear.state_aggregation groups [0, 1, True]", lambda: state_aggregation([0, 1, True]),
     ValueError, "groups[2] = True is a bool"),
    ("linear.polynomial coordinates [0.5, True]", lambda: polynomial([0.5, True], 2),
     ValueError, "coordinates[1] = True is a bool"),
    # sizes refused before anything of that size is allocated
    ("linear.state_aggregation groups [0, 10**9]", lambda: state_aggregation([0, 10**9]),
     ValueError, "at most 100,000,000 entries"),
    ("linear.gradient_mc runs 10**6 with 2,000 features", lambda: gradient_mc(
        WALK, POLICY, np.zeros((WALK.n_states, 2000)), runs=10**6), ValueError,
     "runs is too large: runs=1,000,000 with 2,000 features"),
    ("linear.semi_gradient_td broadcast d = 10**9", lambda: semi_gradient_td(WALK, POLICY, WIDE),
     ValueError, "features would be a 102 x 1,000,000,000 matrix"),
    ("linear.ve_minimiser broadcast d = 10**9", lambda: ve_minimiser(PROCESS, WIDE), ValueError,
     "features would be a 102 x 1,000,000,000 matrix"),
    # finite but huge features or weights: refused, not inf or NaN
    ("linear.value_error huge", lambda: value_error(PROCESS, HUGE_X, HUGE_W), ValueError,
     "value_error overflows float64"),
    ("linear.bellman_error huge", lambda: bellman_error(PROCESS, HUGE_X, HUGE_W), ValueError,
     "overflows float64"),
    ("linear.projected_bellman_error huge", lambda: projected_bellman_error(
        PROCESS, HUGE_X, HUGE_W), ValueError, "overflows float64"),
    ("linear.expected_td_update huge", lambda: expected_td_update(PROCESS, HUGE_X, HUGE_W),
     ValueError, "overflows float64"),
    ("linear.expected_tdc_update huge", lambda: expected_tdc_update(
        PROCESS, HUGE_X, HUGE_W, HUGE_W), ValueError, "overflows float64"),
    ("linear.expected_gtd2_update huge", lambda: expected_gtd2_update(
        PROCESS, HUGE_X, ZERO_W, HUGE_W), ValueError, "overflows float64"),
    ("linear.expected_emphatic_td_update huge", lambda: expected_emphatic_td_update(
        PROCESS, HUGE_X, HUGE_W), ValueError, "overflows float64"),
    # numpy's LinAlgError no longer leaks: a named ValueError
    ("linear.td_fixed_point huge features", lambda: td_fixed_point(PROCESS, 1e200 * GROUPS),
     ValueError, "features of state 0 is too large: its squared norm overflows float64"),
    ("linear.td_fixed_point singular I - gamma lam P", lambda: td_fixed_point(
        LOOP, np.eye(2), lam=1.0), ValueError,
     "the lambda-return operator (I - gamma lam P)^{-1} has no solution float64 can trust"),
    ("linear.emphatic_fixed_point huge features", lambda: emphatic_fixed_point(
        PROCESS, 1e200 * GROUPS), ValueError, "squared norm overflows float64"),
    ("linear.gradient_mc huge features", lambda: gradient_mc(WALK, POLICY, 1e200 * GROUPS),
     ValueError, "squared norm overflows float64"),
    ("linear.ve_minimiser too ill-conditioned", lambda: ve_minimiser(
        PROCESS, np.column_stack([np.ones(102), 1.0 + 1e-15 * np.arange(102)])), ValueError,
     "features X are too ill-conditioned"),
    ("linear.lstd huge features", lambda: lstd(WALK, POLICY, 1e154 * GROUPS, episodes=2),
     ValueError, "lstd's sums A_hat and b_hat overflow float64"),
    # lstd names what it has (epsilon, the features), never an alpha
    ("linear.lstd no alpha in its errors", lambda: lstd(WALK, POLICY, 1e154 * GROUPS, episodes=2),
     ValueError, "the features or the rewards are too large"),
    # a RewardProcess built by hand is checked
    ("linear.RewardProcess P NaN", lambda: hand_built(P=np.full_like(PROCESS.P, NAN)),
     ValueError, "P[0] is not a row of probabilities"),
    ("linear.RewardProcess gamma 5", lambda: hand_built(gamma=5.0), ValueError,
     "gamma must be in [0, 1]"),
    ("linear.RewardProcess mu not a distribution", lambda: hand_built(mu=np.ones(102)),
     ValueError, "mu must be a distribution"),
    ("linear.RewardProcess r inf", lambda: hand_built(r=np.full(102, INF)), ValueError,
     "r[0] = inf is not finite"),
    ("linear.RewardProcess episodic text", lambda: hand_built(episodic="yes"), ValueError,
     "episodic must be True or False"),
    ("linear.RewardProcess P not square", lambda: hand_built(P=np.zeros((3, 2))), ValueError,
     "P must be a square"),
]


@pytest.mark.parametrize("row", LINEAR_ROWS, ids=lambda row: row[0])
def test_linear_bad_input_is_a_clear_error(row):
    _, call, error, fragment = row
    with pytest.raises(error) as raised:
        call()
    assert fragment in str(raised.value)
    assert "alpha" not in str(raised.value) or "alpha" in row[0]


def test_lstd_singular_system_is_named():
    """LinAlgError from lstd's solve is a ValueError naming epsilon (a NaN-free, singular
    ``epsilon I + A_hat``: zero features and an epsilon that underflows to nothing beside
    a huge diagonal is not reachable, so this probes the converter directly)."""
    from tabular.linear.learners import LinearOutputs, _lstd_weights
    singular = LinearOutputs(w=np.zeros((1, 2)), v=np.zeros((1, 0)), returns=np.zeros((1, 1)),
                             lengths=np.zeros((1, 1), dtype=np.int64),
                             A=np.array([[[1e300, 1e300], [1e300, 1e300]]]),
                             b=np.ones((1, 2)), history=np.zeros((1, 0, 2)))
    with pytest.raises(ValueError, match="epsilon"):
        _lstd_weights(singular, 1e-300)


# ------------------------------------------------ the property over random bad values
#: Bad values by kind of parameter. ``count``: an integer >= 1; ``unit``: in [0, 1];
#: ``positive``: a finite number > 0; ``seed``: None or an int >= 0; ``array``: a real,
#: finite array (the bad ones keep a valid shape where they can).
COUNT = [NAN, INF, 10**30, -3, 0, True, np.True_, "3", 3 + 0j, np.complex128(3), 2.5]
#: An order may be 0 (the constant feature alone); a float, even whole, is refused.
ORDER = [NAN, INF, 10**30, -3, True, np.True_, "3", 3 + 0j, np.complex128(3), 2.5, 2.0]
#: runs = 10**30 is refused by the shared check_episode_args, which names ``episodes``
#: (issue 45 part 2, the shared checks' round); every other bad count of runs is here.
RUNS = [NAN, INF, -3, 0, True, np.True_, "3", 3 + 0j, np.complex128(3), 2.5]
UNIT = [NAN, INF, -INF, 1e300, -0.5, 1.5, True, "0.5", 0.5 + 0j, np.complex128(0.5), None]
POSITIVE = [NAN, INF, -1.0, 0.0, True, "0.1", 0.1 + 0j, np.complex128(0.1), None]
STEP = POSITIVE + [1e300]  # a huge step size makes a run diverge (see STEP_SIZES)
SEED = [NAN, INF, -1, 1.0, True, "0", 0j, np.complex128(0), 2.5]
FLAG = ["yes", 1, 0, np.float64(1.0), None, 1j]


def arrays_of(shape: tuple[int, ...]) -> list:
    """Bad arrays of ``shape``: NaN, inf, text, complex, bool, and numpy's complex."""
    return [np.full(shape, NAN), np.full(shape, INF), np.full(shape, "a"),
            np.full(shape, 1 + 1j), np.ones(shape, dtype=bool),
            np.full(shape, np.complex128(1.0)), np.zeros(shape + (2,))]


FEATURES = arrays_of(GROUPS.shape) + [np.zeros((5, 10)), 1e300 * GROUPS]
WEIGHTS = arrays_of((10,)) + [np.zeros(3), "w"]
MU = arrays_of((102,)) + [np.full(102, 2.0), -np.full(102, 1 / 102)]

LEARN = dict(mdp=WALK, policy=POLICY, features=GROUPS, episodes=2)
OFF = dict(mdp=WALK, target_policy=POLICY, behaviour_policy=POLICY, features=GROUPS,
           episodes=2)
EXACT = dict(process=PROCESS, X=GROUPS)
LEARNER_PARAMS = {"gamma": UNIT, "episodes": COUNT, "alpha": STEP, "seed": SEED,
                  "runs": RUNS, "max_steps": COUNT, "features": FEATURES,
                  "initial_w": WEIGHTS[:-2] + [np.zeros(3)]}
#: (callable, valid keyword arguments, {parameter: its bad values}, names the error may use)
CALLS = {
    "gradient_mc": (LEARN, {**LEARNER_PARAMS, "history": FLAG}),
    "semi_gradient_td": (LEARN, {**LEARNER_PARAMS, "n_step": COUNT, "history": FLAG}),
    "semi_gradient_td_lambda": (LEARN, {**LEARNER_PARAMS, "lam": UNIT}),
    "true_online_linear_td_lambda": (LEARN, {**LEARNER_PARAMS, "lam": UNIT}),
    "lstd": (LEARN, {"gamma": UNIT, "episodes": COUNT, "epsilon": POSITIVE, "seed": SEED,
                     "runs": RUNS, "features": FEATURES}),
    "off_policy_semi_gradient_td": (OFF, {**LEARNER_PARAMS, "history": FLAG}),
    "tdc": (OFF, {**LEARNER_PARAMS, "beta": STEP, "initial_v": WEIGHTS[:-2]}),
    "gtd2": (OFF, {**LEARNER_PARAMS, "beta": STEP}),
    "emphatic_td": (OFF, LEARNER_PARAMS),
    "value_error": (dict(EXACT, w=ZERO_W), {"X": FEATURES, "w": WEIGHTS, "mu": MU}),
    "ve_minimiser": (EXACT, {"X": FEATURES}),
    "bellman_error": (dict(EXACT, w=ZERO_W), {"X": FEATURES, "w": WEIGHTS, "mu": MU}),
    "bellman_error_vector": (dict(EXACT, w=ZERO_W), {"X": FEATURES, "w": WEIGHTS}),
    "projected_bellman_error": (dict(EXACT, w=ZERO_W), {"X": FEATURES, "w": WEIGHTS, "mu": MU}),
    "td_fixed_point": (EXACT, {"X": FEATURES, "lam": UNIT}),
    "expected_td_update": (dict(EXACT, w=ZERO_W), {"X": FEATURES, "w": WEIGHTS, "mu": MU}),
    "expected_tdc_update": (dict(EXACT, w=ZERO_W, v=ZERO_W),
                            {"X": FEATURES, "w": WEIGHTS, "v": WEIGHTS, "mu": MU}),
    "expected_gtd2_update": (dict(EXACT, w=ZERO_W, v=ZERO_W),
                             {"X": FEATURES, "w": WEIGHTS, "v": WEIGHTS, "mu": MU}),
    "expected_emphasis": (dict(process=PROCESS), {"mu": MU}),
    "expected_emphatic_td_update": (dict(EXACT, w=ZERO_W),
                                    {"X": FEATURES, "w": WEIGHTS, "mu": MU}),
    "emphatic_fixed_point": (EXACT, {"X": FEATURES, "mu": MU}),
    "reward_process": (dict(mdp=WALK, policy=POLICY, gamma=1.0),
                       {"gamma": UNIT, "policy": [np.full(102, 1.5), np.full(102, "a"),
                                                  np.full(102, 7), np.full((102, 1), NAN)]}),
    "RewardProcess": (dict(P=PROCESS.P, r=PROCESS.r, v=PROCESS.v, mu=PROCESS.mu, gamma=1.0,
                           episodic=True),
                      {"P": [np.full((102, 102), NAN), -PROCESS.P, np.full((102, 102), "a"),
                             PROCESS.P + 1j, np.ones((102, 102))],
                       "r": arrays_of((102,)), "v": arrays_of((102,)), "mu": MU,
                       "gamma": UNIT, "episodic": FLAG}),
    "one_hot": (dict(n_states=3), {"n_states": COUNT + [2.0]}),
    "state_aggregation": (dict(groups=[0, 1]), {"groups": [
        [0, 1, True], [0.0, 1.0], [0, 10**9], [-1, 0], ["0", "1"], [0, 1j], [], [0, NAN],
        np.array([0, 1], dtype=np.complex128)]}),
    "polynomial": (dict(coordinates=[0.5], order=2), {
        "order": ORDER, "coordinates": [[NAN], [INF], [1.5], [-0.5], ["a"], [0.5j],
                                                [True], [np.complex128(0.5)]]}),
    "fourier": (dict(coordinates=[0.5], order=2), {"order": ORDER}),
    "tile_coding": (dict(coordinates=[0.5], tilings=2, tiles=4),
                    {"tilings": COUNT + [2.0], "tiles": COUNT + [2.0, np.float64(4.0)]}),
    "state_coordinates": (dict(mdp=WALK), {"mdp": ["walk", 3, None, np.zeros(3)]}),
    "state_action_features": (dict(X=GROUPS, n_actions=2),
                              {"n_actions": COUNT + [2.0], "X": FEATURES[:6]}),
}
#: The words an error may name a parameter by, beside its own name.
ALIASES = {"X": ("features", "X"), "features": ("features",), "groups": ("groups",),
           "coordinates": ("coordinates",), "n_states": ("n_states",),
           "mdp": ("mdp", "model", "TabularMDP"), "policy": ("policy",),
           "P": ("P",), "w": ("w",), "initial_w": ("initial_w",)}
#: Step sizes: a huge one passes every check (no bound holds for every feature set) and
#: makes a run diverge, which is a FloatingPointError naming the step size.
STEP_SIZES = {"alpha", "beta"}
PAIRS = [(name, param) for name, (_, params) in CALLS.items() for param in params]


def test_every_public_callable_of_tabular_linear_is_probed():
    public = {name for name in tabular.linear.__all__ if callable(getattr(tabular.linear, name))
              and not name.endswith(("Result", "Error"))}
    assert public - set(CALLS) == set()


def control_calls():
    """The control learners, over state-action features of a small gridworld."""
    import gymnasium as gym
    grid = TabularMDP.from_gymnasium(gym.make("tabzoo/Gridworld4x4-v0"))
    SA = state_action_features(one_hot(grid.n_states), grid.n_actions)
    params = {"gamma": UNIT, "episodes": COUNT, "alpha": STEP, "epsilon": UNIT,
              "seed": SEED, "runs": RUNS, "initial_w": WEIGHTS[:-2]}
    base = dict(mdp=grid, features=SA, episodes=2)
    ring = TabularMDP.from_dense(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([1.0, 0.0]),
                                 start=np.array([1.0, 0.0]))  # continuing: never ends
    ring_features = state_action_features(one_hot(2), 1)
    differential = {"alpha": STEP, "beta": POSITIVE + [1.5], "epsilon": UNIT, "steps": COUNT,
                    "seed": SEED, "runs": RUNS, "initial_w": WEIGHTS[:-2]}
    return {"differential_semi_gradient_sarsa": (dict(mdp=ring, features=ring_features,
                                                      steps=10), differential),
            "semi_gradient_sarsa": (base, params),
            "n_step_semi_gradient_sarsa": (base, {**params, "n_step": COUNT}),
            "semi_gradient_sarsa_lambda": (base, {**params, "lam": UNIT}),
            "true_online_linear_sarsa_lambda": (base, {**params, "lam": UNIT})}


CALLS.update(control_calls())
PAIRS = [(name, param) for name, (_, params) in CALLS.items() for param in params]


@pytest.mark.parametrize("name, param", PAIRS, ids=[f"{n}-{p}" for n, p in PAIRS])
@given(data=st.data())
@slow_examples(8)
def test_a_bad_value_is_refused_naming_its_parameter(name, param, data):
    valid, params = CALLS[name]
    bad = data.draw(st.sampled_from(params[param]), label=param)
    call = getattr(tabular.linear, name)
    allowed = (ValueError, TypeError) + ((FloatingPointError,) if param in STEP_SIZES else ())
    try:
        result = call(**{**valid, param: bad})
    except allowed as error:
        names = ALIASES.get(param, (param,))
        assert any(n in str(error) for n in names), f"{name}({param}={bad!r}): {error}"
        return
    values = result if isinstance(result, tuple) else (result,)
    assert not any(np.isnan(np.asarray(v, dtype=float)).any() for v in values
                   if isinstance(v, np.ndarray | float)), f"{name}({param}={bad!r}) gave NaN"
    pytest.fail(f"{name}({param}={bad!r}) was accepted")
