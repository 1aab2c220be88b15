"""Sampled Nash-MD (TRL's NashMDTrainer on a token MDP) against its exact expected update,
and that update's zero against the exact Nash-MD fixed point and the regularised Nash
equilibrium."""

import numpy as np
import pytest

from tabular.envs import TokenMDP
from tabular.rlhf import (
    ending_probabilities,
    nash_equilibrium,
    nash_md,
    path_returns,
    preference_table,
    sampled_nash_md,
)
from tabular.rlhf.best_of_n import token_policy

#: Responses of one and two tokens sharing prefixes: the token-level mixture is not the
#: sequence-level one here.
RESPONSES = ["rock", "paper", "scissors", "rock paper", "paper rock"]
TREE = TokenMDP(("Play.",), {"rock": 1.0, "paper rock": 0.5, "scissors": -0.3}, max_len=3,
                grammar=RESPONSES)
MOVES = ["rock", "paper", "scissors"]
GAME = TokenMDP(("Play.",), {"rock": 1.0}, max_len=2, grammar=MOVES)
RPS = [[0.5, 0.0, 1.0], [1.0, 0.5, 0.0], [0.0, 1.0, 0.5]]


def _random_policy(env, seed):
    """A policy with full support on the legal tokens, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    pi = np.where(env.legal, rng.uniform(0.2, 1.0, env.legal.shape), 0.0)
    pi += (~env.legal.any(axis=1))[:, None]
    return pi / pi.sum(axis=1, keepdims=True)


def _table(env, responses, seed):
    """An intransitive preference over ``responses``: ``P = 1/2 + tanh(A) / 2`` with ``A``
    antisymmetric."""
    a = np.random.default_rng(seed).normal(size=(len(responses),) * 2)
    return preference_table(env, {"Play.": (responses, 0.5 + 0.5 * np.tanh(a - a.T))})


def _paths(mdp, pi):
    """Every response as ``(prob, [(s, a), ...], (s_end, a_end))`` under ``pi`` (a tree)."""
    out = []

    def walk(s, p, steps):
        for a in np.flatnonzero(pi[s] > 0.0):
            k = int(np.argmax(mdp.prob[s, a]))
            here = steps + [(s, a)]
            if mdp.done[s, a, k]:
                out.append((p * pi[s, a], here))
            else:
                walk(int(mdp.next_state[s, a, k]), p * pi[s, a], here)

    for s in np.flatnonzero(mdp.start):
        walk(int(s), mdp.start[s], [])
    return out


def expected_update(env, pi, ref, beta, m, preference=None):
    """``E[g]`` on the per-state logits (see :mod:`tabular.rlhf.nash_md_sampled`),
    enumerated: ``sum_y pi(y) [P(y > mu) - 1/2 - beta log pi(y)/ref(y)] d log pi(y)``,
    ``mu`` the token-level geometric mixture."""
    mdp = env.to_mdp()
    with np.errstate(divide="ignore", invalid="ignore"):  # masked tokens: -inf, not used
        log_mix = np.where(pi > 0.0, (1 - m) * np.log(pi) + m * np.log(ref), -np.inf)
    mu = np.exp(log_mix - log_mix.max(axis=1, keepdims=True))
    mu /= mu.sum(axis=1, keepdims=True)
    mu_ends = ending_probabilities(mdp, mu)
    returns = path_returns(mdp)
    s_end, a_end = np.nonzero(mu_ends)
    if preference is not None:
        index = {(int(s), int(a)): i for i, (s, a) in enumerate(
            zip(preference.states, preference.actions, strict=True))}
        P = preference.matrices[0]
    grad = np.zeros_like(pi)
    for p, steps in _paths(mdp, pi):
        end = steps[-1]
        if preference is None:
            win = sum(q / (1 + np.exp(-(returns[end] - returns[s, a])))
                      for s, a, q in zip(s_end, a_end, mu_ends[s_end, a_end], strict=True))
        else:
            win = sum(mu_ends[s, a] * P[index[end], index[(int(s), int(a))]]
                      for s, a in zip(s_end, a_end, strict=True))
        log_ratio = sum(np.log(pi[s, a] / ref[s, a]) for s, a in steps)
        w = p * (win - 0.5 - beta * log_ratio)
        for s, a in steps:
            grad[s] -= w * pi[s]
            grad[s, a] += w
    return grad


@pytest.mark.parametrize("judged", [False, True], ids=["returns", "judge"])
def test_the_mean_step_is_the_exact_expected_update(judged):
    """Over many runs of one step, the mean step of every logit is ``alpha E[g]`` to
    within 5 standard errors of the runs' mean (a false alarm has probability about
    6e-7 per logit, 1e-5 over the tree's logits)."""
    pi, ref = _random_policy(TREE, 1), _random_policy(TREE, 2)
    judge = _table(TREE, RESPONSES, 3) if judged else None
    beta, m, alpha, runs = 0.3, 0.4, 0.5, 4000
    res = sampled_nash_md(TREE, pi, ref_policy=ref, beta=beta, mixture_coef=m, iterations=1,
                          pairs=3, alpha=alpha, judge=judge, seed=7, runs=runs)
    with np.errstate(divide="ignore"):  # masked tokens: -inf logits, which never move
        start = np.log(pi)
    on = np.isfinite(start)
    steps = res.logits[:, on] - start[on]
    exact = alpha * expected_update(TREE, pi, ref, beta, m, judge)[on]
    error = np.abs(steps.mean(axis=0) - exact)
    bound = 5 * steps.std(axis=0, ddof=1) / np.sqrt(runs)
    assert (error <= bound + 1e-12).all(), (error / np.maximum(bound, 1e-300)).max()
    assert np.abs(exact).max() > 10 * bound.max() / 5  # the update is measured, not noise


def _with_probs(env, probs):
    """The GAME's policy playing the moves with ``probs`` (model order)."""
    pi = _random_policy(env, 0)
    root = env.state_of("Play.")
    pi[root] = 0.0
    pi[root, [env.token_id[y] for y in MOVES]] = probs
    return pi


def test_the_expected_update_vanishes_at_nash_mds_fixed_point():
    """With one-token responses the token-level mixture is the sequence-level one, so the
    zero of the expected update is exact Nash-MD's fixed point with the constant step
    ``mixture_coef / beta``; it is not the regularised equilibrium when the mixture
    weighs the reference (``mixture_coef > 0``)."""
    ref = _with_probs(GAME, [0.6, 0.3, 0.1])
    game = preference_table(GAME, {"Play.": (MOVES, RPS)})
    beta, m = 0.5, 0.3
    fixed = nash_md(GAME, ref, game, beta=beta, iterations=400, alpha=m / beta).probs[-1]
    assert np.abs(fixed - nash_md(GAME, ref, game, beta=beta, iterations=399,
                                  alpha=m / beta).probs[-1]).max() < 1e-14  # converged
    order = [MOVES.index(y) for _, y in game.texts]
    pi = _with_probs(GAME, fixed[np.argsort(order)])
    assert np.abs(expected_update(GAME, pi, ref, beta, m, game)).max() < 1e-9
    nash = nash_equilibrium(GAME, ref, game, beta=beta).probs
    at_nash = _with_probs(GAME, nash[np.argsort(order)])
    assert np.abs(expected_update(GAME, at_nash, ref, beta, m, game)).max() > 1e-3


def test_without_mixture_the_expected_update_vanishes_at_the_nash_equilibrium():
    """``mixture_coef = 0``: the opponent is the policy itself, and on a tree of shared
    prefixes the expected update's zero is the regularised Nash equilibrium."""
    ref = _random_policy(TREE, 2)
    game = _table(TREE, RESPONSES, 3)
    beta = 0.3
    eq = nash_equilibrium(TREE, ref, game, beta=beta)
    pi = token_policy(TREE.to_mdp(), eq.endings, ref)
    assert np.abs(expected_update(TREE, pi, ref, beta, 0.0, game)).max() < 1e-9
    assert np.abs(expected_update(TREE, ref, ref, beta, 0.0, game)).max() > 1e-3


def test_the_same_seed_gives_the_same_numbers_and_a_prefix_of_a_longer_run():
    pi, ref = _random_policy(TREE, 1), _random_policy(TREE, 2)
    kw = dict(ref_policy=ref, beta=0.3, pairs=4, seed=5, runs=3)
    short = sampled_nash_md(TREE, pi, iterations=3, **kw)
    long = sampled_nash_md(TREE, pi, iterations=6, **kw)
    again = sampled_nash_md(TREE, pi, iterations=6, **kw)
    assert np.array_equal(long.logits, again.logits)
    assert np.array_equal(short.probability, long.probability[:, :3])
    assert np.array_equal(long.run(1).kl, long.kl[1])
    one = sampled_nash_md(TREE, pi, iterations=6, ref_policy=ref, beta=0.3, pairs=4, seed=5)
    assert one.runs is None and np.array_equal(one.logits, long.logits[0])


def test_history_records_trls_names():
    pi, ref = _random_policy(TREE, 1), _random_policy(TREE, 2)
    res = sampled_nash_md(TREE, pi, ref_policy=ref, beta=0.3, iterations=4, pairs=2,
                          history=True, eval_every=2)
    assert {"mixture_coef", "beta", "exact/gap"} <= set(res.history.names)
    assert res.history["mixture_coef"][-1] == 0.5
