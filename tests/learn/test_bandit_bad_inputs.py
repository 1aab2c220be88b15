"""The bad-input rows of the regret-measured bandits (:mod:`tabular.learn.bandit_regret`,
:mod:`tabular.learn.bandit_arms`), in the catalogue's format ``(name, call, exception
type, fragment of the message)``; the catalogue's coverage test
(``tests/bad_inputs/test_bad_inputs.py``) reads their names from this file."""

from __future__ import annotations

import numpy as np
from conftest import clear_error_test

import tabular
from tabular import BanditArms, ContextualArms

NAN, INF = float("nan"), float("inf")
ARMS = BanditArms((0.5, 0.4))
CONTEXTS = ContextualArms(np.ones((2, 3, 4)), np.zeros(4))
GAUSS = BanditArms((0.5, 0.4), law="gaussian")

ROWS = [
    ("thompson_sampling arms", lambda: tabular.thompson_sampling((0.5, 0.4)), TypeError,
     "arms must be a tabular.learn.bandit_arms.BanditArms"),
    ("thompson_sampling law", lambda: tabular.thompson_sampling(BanditArms((0.5,), law="beta")),
     ValueError, "arms.law must be one of"),
    ("thompson_sampling means above 1", lambda: tabular.thompson_sampling(
        BanditArms((0.5, 1.5))), ValueError, "arms.means[1] must be in [0, 1]"),
    ("thompson_sampling means NaN", lambda: tabular.thompson_sampling(
        BanditArms((NAN, 0.5), law="gaussian")), ValueError, "arms.means[0] must be in"),
    ("thompson_sampling means text", lambda: tabular.thompson_sampling(BanditArms("ab")),
     ValueError, "arms.means must hold real numbers"),
    ("thompson_sampling means bool", lambda: tabular.thompson_sampling(
        BanditArms((True, False))), ValueError, "arms.means must hold real numbers"),
    ("thompson_sampling means empty", lambda: tabular.thompson_sampling(BanditArms(())),
     ValueError, "arms.means must be a non-empty array of shape [k]"),
    ("thompson_sampling means 2-d", lambda: tabular.thompson_sampling(
        BanditArms(np.full((2, 2), 0.5))), ValueError, "arms.means must be a non-empty array"),
    ("thompson_sampling sd", lambda: tabular.thompson_sampling(
        BanditArms((0.0, 1.0), law="gaussian", sd=0.0)), ValueError, "arms.sd must be"),
    ("thompson_sampling sd inf", lambda: tabular.thompson_sampling(
        BanditArms((0.0, 1.0), law="gaussian", sd=INF)), ValueError, "arms.sd must be"),
    ("thompson_sampling steps", lambda: tabular.thompson_sampling(ARMS, steps=0), ValueError,
     "steps must be an integer >= 1"),
    ("thompson_sampling steps float", lambda: tabular.thompson_sampling(ARMS, steps=10.5),
     ValueError, "steps"),
    ("thompson_sampling runs", lambda: tabular.thompson_sampling(ARMS, runs=0), ValueError,
     "runs"),
    ("thompson_sampling seed", lambda: tabular.thompson_sampling(ARMS, seed=-1), ValueError,
     "seed"),
    ("thompson_sampling too large", lambda: tabular.thompson_sampling(
        ARMS, steps=10**6, runs=10**3), ValueError, "runs=1000 x steps=1000000 makes"),
    ("kl_ucb tol", lambda: tabular.kl_ucb(ARMS, tol=0.0), ValueError, "tol must be"),
    ("kl_ucb tol large", lambda: tabular.kl_ucb(ARMS, tol=0.5), ValueError,
     "tol must be in [1e-12, 0.1]"),
    ("kl_ucb tol below the float spacing (a bisection that never ends)",
     lambda: tabular.kl_ucb(ARMS, tol=1e-300), ValueError, "tol must be in [1e-12, 0.1]"),
    ("bayes_ucb tol below the float spacing (a bisection that never ends)",
     lambda: tabular.bayes_ucb(ARMS, tol=1e-15), ValueError, "tol must be in [1e-12, 0.1]"),
    ("kl_ucb tol NaN", lambda: tabular.kl_ucb(ARMS, tol=NAN), ValueError, "tol"),
    ("kl_ucb arms", lambda: tabular.kl_ucb(None), TypeError, "arms must be"),
    ("bayes_ucb tol", lambda: tabular.bayes_ucb(ARMS, tol=-1.0), ValueError, "tol must be"),
    ("bayes_ucb arms", lambda: tabular.bayes_ucb("arms"), TypeError, "arms must be"),
    ("moss gaussian", lambda: tabular.moss(GAUSS), ValueError,
     "moss needs rewards in [0, 1]: arms.law must be 'bernoulli'"),
    ("moss steps", lambda: tabular.moss(ARMS, steps=-5), ValueError, "steps"),
    ("ucb_v gaussian", lambda: tabular.ucb_v(GAUSS), ValueError,
     "ucb_v needs rewards in [0, 1]"),
    ("ucb_v runs", lambda: tabular.ucb_v(ARMS, runs=True), ValueError, "runs"),
    ("explore_then_commit explore", lambda: tabular.explore_then_commit(ARMS, explore=0),
     ValueError, "explore must be an integer >= 1"),
    ("explore_then_commit explore float", lambda: tabular.explore_then_commit(
        ARMS, explore=2.5), ValueError, "explore"),
    ("explore_then_commit law", lambda: tabular.explore_then_commit(
        BanditArms((0.5,), law=None)), ValueError, "arms.law"),
    ("exp3 eta", lambda: tabular.exp3(ARMS, eta=-1.0), ValueError, "eta must be"),
    ("exp3 eta inf", lambda: tabular.exp3(ARMS, eta=INF), ValueError, "eta must be"),
    ("exp3 gaussian", lambda: tabular.exp3(GAUSS), ValueError, "exp3 needs rewards in [0, 1]"),
    ("exp3 steps", lambda: tabular.exp3(ARMS, steps=0), ValueError, "steps"),
    ("discounted_ucb discount", lambda: tabular.discounted_ucb(ARMS, discount=0.0),
     ValueError, "discount must be in (0, 1]"),
    ("discounted_ucb discount above 1", lambda: tabular.discounted_ucb(ARMS, discount=1.5),
     ValueError, "discount must be in [0, 1]"),
    ("discounted_ucb xi", lambda: tabular.discounted_ucb(ARMS, xi=NAN), ValueError, "xi"),
    ("discounted_ucb xi large", lambda: tabular.discounted_ucb(ARMS, xi=1e9), ValueError,
     "xi must be in (0, 100]"),
    ("discounted_ucb gaussian", lambda: tabular.discounted_ucb(GAUSS), ValueError,
     "discounted_ucb needs rewards in [0, 1]"),
    ("sliding_window_ucb window", lambda: tabular.sliding_window_ucb(ARMS, window=0),
     ValueError, "window must be an integer >= 1"),
    ("sliding_window_ucb window long", lambda: tabular.sliding_window_ucb(
        ARMS, window=2000, steps=1000), ValueError, "window must be at most 1,000"),
    ("sliding_window_ucb xi", lambda: tabular.sliding_window_ucb(ARMS, xi=-1.0), ValueError,
     "xi must be"),
    ("discounted_thompson_sampling discount", lambda: tabular.discounted_thompson_sampling(
        ARMS, discount=NAN), ValueError, "discount"),
    ("discounted_thompson_sampling gaussian", lambda: tabular.discounted_thompson_sampling(
        GAUSS), ValueError, "discounted_thompson_sampling needs rewards in [0, 1]"),
    ("thompson_sampling changes", lambda: tabular.thompson_sampling(
        BanditArms(((0.5, 0.4), (0.4, 0.5)), changes=(0,))), ValueError,
     "arms.changes[0] must be an integer >= 1"),
    ("thompson_sampling changes order", lambda: tabular.thompson_sampling(
        BanditArms(((0.5, 0.4), (0.4, 0.5), (0.1, 0.2)), changes=(5, 3))), ValueError,
     "arms.changes must increase"),
    ("thompson_sampling changes rows", lambda: tabular.thompson_sampling(
        BanditArms((0.5, 0.4), changes=(5,))), ValueError,
     "arms.means must be a non-empty array of shape [2, k]"),
    ("thompson_sampling changes type", lambda: tabular.thompson_sampling(
        BanditArms((0.5, 0.4), changes=5)), TypeError, "arms.changes must be a tuple"),
    ("thompson_sampling changes means", lambda: tabular.thompson_sampling(
        BanditArms(((0.5, 0.4), (0.4, 1.5)), changes=(5,))), ValueError,
     "arms.means[1, 1] must be in [0, 1]"),
    ("lai_robbins_constant changes", lambda: tabular.lai_robbins_constant(
        BanditArms(((0.5, 0.4), (0.4, 0.5)), changes=(5,))), ValueError,
     "lai_robbins_constant needs stationary arms"),
    ("lin_ucb arms", lambda: tabular.lin_ucb(ARMS), TypeError,
     "arms must be a tabular.learn.contextual_bandits.ContextualArms"),
    ("lin_ucb features shape", lambda: tabular.lin_ucb(ContextualArms(np.ones((3, 4)),
                                                                      np.zeros(4))),
     ValueError, "arms.features must have shape [contexts, k, d]"),
    ("lin_ucb theta shape", lambda: tabular.lin_ucb(ContextualArms(np.ones((2, 3, 4)),
                                                                   np.zeros(3))),
     ValueError, "arms.theta must have shape [4]"),
    ("lin_ucb features NaN", lambda: tabular.lin_ucb(ContextualArms(np.full((1, 2, 2), NAN),
                                                                    np.zeros(2))),
     ValueError, "arms.features must hold finite numbers"),
    ("lin_ucb theta huge", lambda: tabular.lin_ucb(ContextualArms(np.ones((1, 2, 2)),
                                                                  np.full(2, 1e300))),
     ValueError, "arms.theta must hold finite numbers"),
    ("lin_ucb dimension", lambda: tabular.lin_ucb(ContextualArms(np.ones((1, 2, 300)),
                                                                 np.zeros(300))),
     ValueError, "dimension d must be at most 256"),
    ("lin_ucb sd", lambda: tabular.lin_ucb(CONTEXTS._replace(sd=0.0)), ValueError,
     "arms.sd must be"),
    ("lin_ucb alpha", lambda: tabular.lin_ucb(CONTEXTS, alpha=-1.0), ValueError,
     "alpha must be"),
    ("lin_ucb alpha huge", lambda: tabular.lin_ucb(CONTEXTS, alpha=1e9), ValueError,
     "alpha must be at most 1e6"),
    ("lin_ucb regularization", lambda: tabular.lin_ucb(CONTEXTS, regularization=0.0),
     ValueError, "regularization must be"),
    ("lin_ucb regularization huge", lambda: tabular.lin_ucb(CONTEXTS, regularization=1e9),
     ValueError, "regularization must be at most 1e6"),
    ("lin_ucb steps", lambda: tabular.lin_ucb(CONTEXTS, steps=0), ValueError, "steps"),
    ("lin_ucb runs", lambda: tabular.lin_ucb(CONTEXTS, runs=-1), ValueError, "runs"),
    ("linear_thompson_sampling v", lambda: tabular.linear_thompson_sampling(CONTEXTS, v=NAN),
     ValueError, "v must be a finite number"),
    ("linear_thompson_sampling v negative", lambda: tabular.linear_thompson_sampling(
        CONTEXTS, v=-1.0), ValueError, "v must be in [0, 1e6]"),
    ("linear_thompson_sampling features text", lambda: tabular.linear_thompson_sampling(
        ContextualArms("abc", np.zeros(1))), ValueError, "arms.features must hold real"),
    ("lai_robbins_constant arms", lambda: tabular.lai_robbins_constant([0.5, 0.4]),
     TypeError, "arms must be"),
    ("lai_robbins_constant means", lambda: tabular.lai_robbins_constant(
        BanditArms((0.5, -0.1))), ValueError, "arms.means[1] must be in [0, 1]"),
]


test_bad_input_is_a_clear_error = clear_error_test(ROWS)
