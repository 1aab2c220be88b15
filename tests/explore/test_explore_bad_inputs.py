"""The bad-input catalogue of :mod:`tabular.explore`, in the rows of
``tests/test_bad_inputs.py``: ``(id, call, exception type, fragment of the message)``,
the id starting with the callable's name. Every public callable of the family has rows
(the last test checks it)."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
from conftest import clear_error_test, option_rows

from tabular import TabularMDP, explore

NAN, INF = math.nan, math.inf
TWO = TabularMDP.from_dense(np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]]),
                            np.array([[0.2, 0.0], [1.0, 1.0]]), start=np.array([1.0, 0.0]))
TRAP = TabularMDP(np.array([[[1]], [[1]]]), np.ones((2, 1, 1)), np.array([[[-INF]], [[0.0]]]),
                  np.ones((2, 1, 1), dtype=bool), np.array([1.0, 0.0]))
CYCLE = TabularMDP.from_dense(np.array([[[0.0, 1.0]], [[1.0, 0.0]]]), np.array([[1.0], [0.0]]),
                              start=np.array([1.0, 0.0]))
BIG = TabularMDP.from_dense(np.tile(np.eye(1001)[:, None, :], (1, 1, 1)), np.zeros((1001, 1)))
LEARNERS = {name: getattr(explore, name) for name in (
    "ucbvi", "psrl", "optimistic_q_learning", "epsilon_greedy_q_learning", "rlsvi")}

# the arguments every learner shares, crossed with every learner
SHARED_BAD = [
    ({"horizon": 0}, ValueError, "horizon must be an integer >= 1"),
    ({"horizon": 2.5}, ValueError, "horizon must be an integer >= 1"),
    ({"horizon": True}, ValueError, "horizon must be an integer >= 1"),
    ({"horizon": 10**9}, ValueError, "horizon must be at most 100,000"),
    ({"episodes": 0}, ValueError, "episodes must be an integer >= 1"),
    ({"episodes": "5"}, ValueError, "episodes must be an integer >= 1"),
    ({"runs": 0}, ValueError, "runs must be an integer >= 1"),
    ({"seed": -1}, ValueError, "seed must be None or an int >= 0"),
    ({"episodes": 10**7, "runs": 100}, ValueError, "recorded policy entries"),
]

ROWS = [(f"{name} {next(iter(kwargs))}={kwargs[next(iter(kwargs))]!r}",
         lambda f=f, kwargs=kwargs: f(TWO, **{"horizon": 2, **kwargs}), error, fragment)
        for name, f in LEARNERS.items() for kwargs, error, fragment in SHARED_BAD]
ROWS += [(f"{name} on a string", lambda f=f: f("RiverSwim", horizon=2), TypeError, "mdp must be")
         for name, f in LEARNERS.items()]
ROWS += [(f"{name} -inf reward", lambda f=f: f(TRAP, horizon=2), ValueError,
          "can pay a reward of -inf") for name, f in LEARNERS.items()]

#: The options of the learners run on CYCLE, each wrong in one way (rows of conftest's
#: option_rows): ``(id, the options, fragment of the ValueError)``.
CYCLE_OPTION_BAD = [
    ("ucrl2 steps 0", {"steps": 0}, "steps must be an integer >= 1"),
    ("ucrl2 steps text", {"steps": "9"}, "steps must be an integer"),
    ("ucrl2 runs 0", {"runs": 0}, "runs must be an integer >= 1"),
    ("ucrl2 seed -1", {"seed": -1}, "seed must be None or"),
    ("ucrl2 delta 0", {"delta": 0.0}, "delta must be in (0, 1)"),
    ("ucrl2 scale -1", {"scale": -1.0}, "scale must be a finite number >= 0"),
    ("ucrl2 huge", {"steps": 10**8, "runs": 10}, "recorded steps"),
    ("mbie_eb gamma 1", {"gamma": 1.0}, "gamma must be < 1"),
    ("mbie_eb gamma NaN", {"gamma": NAN}, "gamma"),
    ("mbie_eb steps 0", {"steps": 0}, "steps must be an integer >= 1"),
    ("mbie_eb beta -1", {"beta": -1.0}, "beta must be a finite number >= 0"),
    ("mbie_eb runs 0", {"runs": 0}, "runs must be"),
    ("mbie_eb huge", {"steps": 10**8, "runs": 2}, "recorded policy entries"),
    ("rmax known 0", {"known": 0}, "known must be an integer >= 1"),
    ("rmax known 1.5", {"known": 1.5}, "known must be an integer"),
    ("rmax seed -2", {"seed": -2}, "seed must be None or"),
    ("rmax gamma 2", {"gamma": 2.0}, "gamma"),
    ("delayed_q_learning attempts 0", {"attempts": 0}, "attempts must be an integer >= 1"),
    ("delayed_q_learning epsilon1 0", {"epsilon1": 0.0}, "epsilon1 must be a finite number > 0"),
    ("delayed_q_learning gamma 1", {"gamma": 1.0}, "gamma must be < 1"),
    ("delayed_q_learning steps -1", {"steps": -1}, "steps must be an integer >= 1"),
]

ROWS += [
    ("ucbvi no horizon", lambda: explore.ucbvi(TWO), TypeError, "horizon"),
    ("ucbvi bonus", lambda: explore.ucbvi(TWO, horizon=2, bonus="kl"), ValueError,
     "bonus must be one of ['bernstein', 'hoeffding', 'simplified_bernstein']"),
    ("ucbvi bonus list", lambda: explore.ucbvi(TWO, horizon=2, bonus=["hoeffding"]),
     ValueError, "bonus must be one of"),
    ("ucbvi simplified_bernstein scale inf",
     lambda: explore.ucbvi(TWO, horizon=2, bonus="simplified_bernstein", scale=INF),
     ValueError, "scale must be a finite number >= 0"),
    ("ucbvi scale -1", lambda: explore.ucbvi(TWO, horizon=2, scale=-1.0), ValueError,
     "scale must be a finite number >= 0"),
    ("ucbvi scale NaN",
     lambda: explore.ucbvi(TWO, horizon=2, scale=NAN), ValueError, "scale must be"),
    ("ucbvi delta 0", lambda: explore.ucbvi(TWO, horizon=2, delta=0.0), ValueError,
     "delta must be in (0, 1)"),
    ("ucbvi delta 2", lambda: explore.ucbvi(TWO, horizon=2, delta=2.0), ValueError,
     "delta must be in [0, 1]"),
    ("psrl prior_count 0", lambda: explore.psrl(TWO, horizon=2, prior_count=0.0), ValueError,
     "prior_count must be a finite number > 0"),
    ("psrl reward_precision inf", lambda: explore.psrl(TWO, horizon=2, reward_precision=INF),
     ValueError, "reward_precision must be a finite number > 0"),
    ("optimistic_q_learning scale text",
     lambda: explore.optimistic_q_learning(TWO, horizon=2, scale="1"), ValueError, "scale"),
    ("optimistic_q_learning bonus",
     lambda: explore.optimistic_q_learning(TWO, horizon=2, bonus="freedman"), ValueError,
     "bonus must be one of ['bernstein', 'hoeffding']"),
    ("optimistic_q_learning bonus True",
     lambda: explore.optimistic_q_learning(TWO, horizon=2, bonus=True), ValueError,
     "bonus must be one of ['bernstein', 'hoeffding'], got True"),
    ("optimistic_q_learning bonus list",
     lambda: explore.optimistic_q_learning(TWO, horizon=2, bonus=["bernstein"]), ValueError,
     "bonus must be one of"),
    ("optimistic_q_learning bernstein scale NaN",
     lambda: explore.optimistic_q_learning(TWO, horizon=2, bonus="bernstein", scale=NAN),
     ValueError, "scale must be"),
    ("optimistic_q_learning bernstein delta 0",
     lambda: explore.optimistic_q_learning(TWO, horizon=2, bonus="bernstein", delta=0.0),
     ValueError, "delta must be in (0, 1)"),
    ("optimistic_q_learning delta 1",
     lambda: explore.optimistic_q_learning(TWO, horizon=2, delta=1.0),
     ValueError, "delta must be in (0, 1)"),
    ("epsilon_greedy_q_learning epsilon 1.5",
     lambda: explore.epsilon_greedy_q_learning(TWO, horizon=2, epsilon=1.5), ValueError,
     "epsilon must be in [0, 1]"),
    ("regret on a string", lambda: explore.regret("x", np.zeros((1, 1, 2), dtype=int)), TypeError,
     "mdp must be"),
    ("regret float policies", lambda: explore.regret(TWO, np.zeros((1, 1, 2))), ValueError,
     "policies must be integer actions"),
    ("regret bool policies",
     lambda: explore.regret(TWO, np.zeros((1, 1, 2), dtype=bool)),
     ValueError, "policies must be integer actions"),
    ("regret action out of range", lambda: explore.regret(TWO, np.full((1, 1, 2), 2)), ValueError,
     "policies[0, 0, 0] = 2 is not an action in [0, 2)"),
    ("regret wrong S", lambda: explore.regret(TWO, np.zeros((1, 1, 3), dtype=int)), ValueError,
     "policies must have S = 2 entries"),
    ("regret wrong ndim", lambda: explore.regret(TWO, np.zeros((1, 2), dtype=int)), ValueError,
     "policies must have shape [K, H, S]"),
    ("regret epsilon 2", lambda: explore.regret(TWO, np.zeros((1, 1, 2), dtype=int), epsilon=2.0),
     ValueError, "epsilon must be in [0, 1]"),
    ("regret epsilon with a result",
     lambda: explore.regret(TWO, explore.ucbvi(TWO, horizon=1, episodes=1), epsilon=0.1),
     ValueError, "an ExplorationResult carries its own epsilon"),
    ("regret -inf reward", lambda: explore.regret(TRAP, np.zeros((1, 1, 2), dtype=int)), ValueError,
     "can pay a reward of -inf"),
    ("rlsvi noise_sd 0", lambda: explore.rlsvi(TWO, horizon=2, noise_sd=0.0), ValueError,
     "noise_sd must be a finite number > 0"),
    ("rlsvi prior_sd NaN", lambda: explore.rlsvi(TWO, horizon=2, prior_sd=NAN), ValueError,
     "prior_sd must be a finite number > 0"),
    ("rlsvi huge counts", lambda: explore.rlsvi(BIG, horizon=100, episodes=1), ValueError,
     "successor counts"),
    ("ucrl2 -inf reward", lambda: explore.ucrl2(TRAP), ValueError, "can pay a reward of -inf"),
    ("ucrl2 on a string", lambda: explore.ucrl2("x"), TypeError, "mdp must be"),
    ("average_regret not a trajectory",
     lambda: explore.average_regret(CYCLE, np.zeros(3, dtype=int)), TypeError,
     "trajectory must be a UCRL2Result"),
    ("average_regret wrong mdp",
     lambda: explore.average_regret(
         CYCLE, explore.UCRL2Result(np.full(2, 5, np.int32), np.zeros(2, np.int32),
                                    np.zeros(2), 1)),
     ValueError, "the mdp does not have"),
    ("average_regret multichain",
     lambda: explore.average_regret(
         TWO, explore.UCRL2Result(np.zeros(2, np.int32), np.zeros(2, np.int32), np.zeros(2), 1)),
     ValueError, "not weakly communicating"),
    ("average_regret -inf reward", lambda: explore.average_regret(TRAP, None), ValueError,
     "can pay a reward of -inf"),
    ("average_regret max_iter 0",
     lambda: explore.average_regret(
         CYCLE, explore.UCRL2Result(np.zeros(2, np.int32), np.zeros(2, np.int32),
                                    np.zeros(2), 1), max_iter=0),
     ValueError, "max_iter must be an integer >= 1"),
    ("mbie_eb -inf reward", lambda: explore.mbie_eb(TRAP), ValueError, "can pay a reward of -inf"),
    ("mbie_eb on a string", lambda: explore.mbie_eb("x"), TypeError, "mdp must be"),
    ("sample_complexity not a trajectory",
     lambda: explore.sample_complexity(CYCLE, np.zeros(3), gamma=0.9), TypeError,
     "trajectory must be a DiscountedResult"),
    ("sample_complexity gamma 1",
     lambda: explore.sample_complexity(
         CYCLE, explore.DiscountedResult(np.zeros(1, np.int32), np.zeros(1),
                                         np.zeros((1, 2), np.int16)), gamma=1.0),
     ValueError, "gamma must be < 1"),
    ("sample_complexity epsilon -1",
     lambda: explore.sample_complexity(
         CYCLE, explore.DiscountedResult(np.zeros(1, np.int32), np.zeros(1),
                                         np.zeros((1, 2), np.int16)), gamma=0.5, epsilon=-1.0),
     ValueError, "epsilon must be a finite number"),
    ("sample_complexity wrong mdp",
     lambda: explore.sample_complexity(
         CYCLE, explore.DiscountedResult(np.zeros(1, np.int32), np.zeros(1),
                                         np.zeros((1, 3), np.int16)), gamma=0.5),
     ValueError, "pass the model the learner ran on"),
    ("hardness on a list", lambda: explore.hardness([1, 2]), TypeError, "mdp must be"),
    ("hardness both", lambda: explore.hardness(TWO, horizon=2, gamma=0.9), ValueError,
     "not both"),
    ("hardness gamma 1", lambda: explore.hardness(TWO, gamma=1.0), ValueError, "gamma must be < 1"),
    ("hardness gamma NaN", lambda: explore.hardness(TWO, gamma=NAN), ValueError, "gamma"),
    ("hardness horizon 0", lambda: explore.hardness(TWO, horizon=0), ValueError,
     "horizon must be an integer >= 1"),
    ("hardness max_iter 0", lambda: explore.hardness(TWO, max_iter=0), ValueError,
     "max_iter must be an integer >= 1"),
    ("hardness max_iter too few", lambda: explore.hardness(CYCLE, max_iter=1), RuntimeError,
     "did not converge within max_iter=1"),
    ("hardness too many states",
     lambda: explore.hardness(BIG), ValueError,
     "at most 1000 states"),
    ("hardness -inf reward",
     lambda: explore.hardness(TRAP), ValueError, "can pay a reward of -inf"),
]
ROWS += option_rows(CYCLE_OPTION_BAD, lambda name: partial(getattr(explore, name), CYCLE))


test_bad_input_is_a_clear_error = clear_error_test(ROWS)


def test_the_catalogue_covers_every_public_callable_of_the_family():
    covered = {row[0].split()[0] for row in ROWS}
    callables = [name for name in explore.__all__
                 if callable(getattr(explore, name)) and not isinstance(getattr(explore, name),
                                                                        type)]
    missing = sorted(set(callables) - covered)
    assert not missing, f"no catalogue row calls {missing}"
