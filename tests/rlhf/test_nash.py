"""The general preference model and its regularised Nash equilibrium, against games with
known answers: rock-paper-scissors (uniform) and a transitive preference (its best
response alone, as the Bradley-Terry optimum's best-response set)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tabular.envs import TokenMDP
from tabular.rlhf import (
    bradley_terry_preference,
    iterated_dpo,
    kl_optimum,
    nash_equilibrium,
    nash_md,
    preference_gap,
    preference_table,
)
from tabular.testing import property_settings

MOVES = ["rock", "paper", "scissors"]
GAME = TokenMDP(("Play.",), {"rock": 1.0, "paper": 0.5, "scissors": 0.0}, max_len=2,
                grammar=MOVES)
RPS = np.array([[0.5, 0.0, 1.0], [1.0, 0.5, 0.0], [0.0, 1.0, 0.5]])


def _ref(probs):
    """The reference that plays the moves with ``probs`` (then ``eos``)."""
    legal = GAME.legal.astype(float)
    ref = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1.0)
    ref[~GAME.legal.any(axis=1)] = 1.0 / legal.shape[1]
    root = GAME.state_of("Play.")
    ref[root] = 0.0
    ref[root, [GAME.token_id[m] for m in MOVES]] = probs
    return ref


def test_rock_paper_scissors_equilibrium_is_uniform():
    """Against a uniform reference the regularised equilibrium is uniform at every beta
    (the game's symmetry), with an exact gap of 0; against a skewed one it tends to
    uniform as beta -> 0 (the unregularised game's unique equilibrium), and its gap is
    at most the tolerance."""
    game = preference_table(GAME, {"Play.": (MOVES, RPS)})
    for beta in (2.0, 0.1):
        eq = nash_equilibrium(GAME, _ref([1 / 3] * 3), game, beta=beta)
        assert np.abs(eq.probs - 1 / 3).max() < 1e-15 and eq.gap.max() <= 1e-12
    far = [abs(nash_equilibrium(GAME, _ref([0.6, 0.3, 0.1]), game, beta=beta).probs
               - 1 / 3).max() for beta in (1.0, 0.1, 0.01, 0.001)]
    assert far == sorted(far, reverse=True) and far[-1] < 2e-3
    assert preference_gap(GAME, _ref([1 / 3] * 3), _ref([0.6, 0.3, 0.1]), game,
                          beta=0.0) == pytest.approx(0.0, abs=1e-15)


def test_transitive_equilibrium_is_the_best_response():
    """Bradley-Terry on the reward: rock beats both others with probability > 1/2, so
    playing rock has unregularised gap 0 and any other pure move a positive gap, and the
    regularised equilibrium concentrates on rock as beta -> 0, like pi*."""
    ref = _ref([0.2, 0.5, 0.3])
    game = bradley_terry_preference(GAME, ref)
    rock = [i for i, (_, y) in enumerate(game.texts) if y == "rock"][0]
    for i in range(3):
        pure = _ref(np.eye(3)[MOVES.index(game.texts[i][1])])
        gap = preference_gap(GAME, pure, ref, game, beta=0.0)
        assert (gap == pytest.approx(0.0, abs=1e-15)) if i == rock else gap > 0.1
    for beta in (0.01, 0.002):
        eq = nash_equilibrium(GAME, ref, game, beta=beta)
        star = game.conditional(kl_optimum(GAME.to_mdp(), ref, beta).endings)
        assert eq.probs.argmax() == star.argmax() == rock
    # the true equilibrium leaves the others about exp(-0.12 / beta) = 1e-26; mirror-prox
    # stops at a gap <= 1e-12, and strong concavity (modulus beta in KL) gives
    # KL <= gap / beta, so by Pinsker 1 - pi(rock) <= sqrt(gap / (2 beta)) = 1.6e-5
    assert 1.0 - eq.probs[rock] <= np.sqrt(1e-12 / (2 * 0.002))


@property_settings(max_examples=8)
@given(seed=st.integers(0, 2**32 - 1), beta=st.floats(0.01, 5.0))
def test_equilibrium_is_its_own_regularised_best_response(seed, beta):
    """On any table (intransitive ones included): ``pi ∝ ref exp(P pi / beta)`` to 1e-9,
    the exact gap is at most 1e-12, and every other policy's gap is >= 0 (weak
    duality)."""
    rng = np.random.default_rng(seed)
    raw = rng.uniform(size=(3, 3))
    P = np.triu(raw, 1) + np.tril(1 - raw.T, -1) + 0.5 * np.eye(3)
    ref_probs = rng.dirichlet(np.ones(3))
    game = preference_table(GAME, {"Play.": (MOVES, P)})
    eq = nash_equilibrium(GAME, _ref(ref_probs), game, beta=beta)
    order = [MOVES.index(y) for _, y in game.texts]
    rho = ref_probs[order]
    best = rho * np.exp((game.matrices[0] @ eq.probs) / beta)
    assert np.abs(eq.probs - best / best.sum()).max() < 1e-9
    assert eq.gap[0] <= 1e-12
    other = rng.dirichlet(np.ones(3))
    assert preference_gap(GAME, _ref(other), _ref(ref_probs), game, beta=beta) >= -1e-12


def test_nash_md_last_iterate_converges_to_the_equilibrium():
    """Exact Nash-MD on rock-paper-scissors with a skewed reference: with the paper's
    steps ``1 / (beta (t + 2))`` the last iterate's KL from the equilibrium stays under
    theorem 1's ``8 / (beta^2 (t + 1))`` and its gap falls to 0; a constant step stops
    at a biased point (its gap levels off above the decreasing schedule's)."""
    game = preference_table(GAME, {"Play.": (MOVES, RPS)})
    ref = _ref([0.6, 0.3, 0.1])
    beta = 0.5
    star = nash_equilibrium(GAME, ref, game, beta=beta).probs
    run = nash_md(GAME, ref, game, beta=beta, iterations=400)
    kl = (star * np.log(star / run.probs)).sum(axis=1)
    t = np.arange(run.probs.shape[0])
    assert (kl <= 8 / (beta**2 * (t + 1))).all()
    assert kl[-1] < kl[10] < kl[1] and run.gap[-1] < 1e-4
    constant = nash_md(GAME, ref, game, beta=beta, iterations=400, alpha=0.5)
    assert abs(constant.gap[-1] - constant.gap[-50]) < 1e-9 < constant.gap[-1] - run.gap[-1]


def test_online_dpo_with_a_judge_follows_the_judge():
    """iterated_dpo with a Bradley-Terry judge of the MDP's own reward draws the same
    labels as without one (one uniform per pair, the same probability up to rounding):
    the same seed gives the same logits; with a judge that always prefers paper, every
    round's comparisons push paper up."""
    ref = _ref([1 / 3] * 3)
    plain = iterated_dpo(GAME, ref, beta=0.5, rounds=2, pairs=16, steps=5, seed=3)
    judged = iterated_dpo(GAME, ref, beta=0.5, rounds=2, pairs=16, steps=5, seed=3,
                          judge=bradley_terry_preference(GAME, ref))
    np.testing.assert_allclose(judged.logits, plain.logits, rtol=0, atol=1e-12)
    paper = np.array([[0.5, 0.0, 1.0], [1.0, 0.5, 1.0], [0.0, 0.0, 0.5]])
    res = iterated_dpo(GAME, ref, beta=0.5, rounds=3, pairs=16, steps=20, seed=1,
                       judge=preference_table(GAME, {"Play.": (MOVES, paper)}))
    root = GAME.state_of("Play.")
    probs = res.policy.probs()[root, [GAME.token_id[m] for m in MOVES]]
    assert probs.argmax() == MOVES.index("paper") and probs[1] > 0.9


def test_online_dpo_history_has_trls_names():
    """iterated_dpo's history records TRL's OnlineDPOTrainer metrics of a fresh batch of
    pairs beside the exact ones: margins are chosen minus rejected rewards, and once
    training has followed a judge that always prefers paper, every sampled pair with
    paper ranks it first (accuracy 1) and paper's log-probability is the larger."""
    ref = _ref([1 / 3] * 3)
    paper = np.array([[0.5, 0.0, 1.0], [1.0, 0.5, 1.0], [0.0, 0.0, 0.5]])
    h = iterated_dpo(GAME, ref, beta=0.5, rounds=3, pairs=32, steps=20, seed=1,
                     judge=preference_table(GAME, {"Play.": (MOVES, paper)}), history=True,
                     eval_every=3).history
    for name in ("rewards/chosen", "rewards/rejected", "rewards/margins",
                 "rewards/accuracies", "logps/chosen", "logps/rejected", "objective/kl",
                 "exact/gap"):
        assert name in h.names
    np.testing.assert_allclose(h["rewards/margins"], h["rewards/chosen"] - h["rewards/rejected"],
                               atol=1e-12)
    assert h["rewards/accuracies"][0] == 0.0  # at the start pi = ref: every reward is 0
    assert h["rewards/accuracies"][-1] > 0.5 and h["logps/chosen"][-1] > h["logps/rejected"][-1]


def test_xpo_draws_the_second_response_from_the_reference():
    """With ``xpo_alpha > 0`` each pair's second response is the reference's: a policy
    sure of paper against a reference sure of rock gives a distinct pair almost every
    time, where online DPO (both from the policy) gives almost none."""
    policy, ref = _ref([0.001, 0.998, 0.001]), _ref([0.998, 0.001, 0.001])
    kw = {"beta": 0.5, "rounds": 1, "pairs": 16, "steps": 1, "ref_policy": ref, "seed": 2}
    online = iterated_dpo(GAME, policy, **kw)
    xpo = iterated_dpo(GAME, policy, xpo_alpha=1e-3, **kw)
    assert online.pairs[0] <= 2 and xpo.pairs[0] >= 14
