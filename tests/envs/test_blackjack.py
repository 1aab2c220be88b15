"""Blackjack (Example 5.1, envs/blackjack.py): the exact model against Gymnasium's
``Blackjack-v1(sab=True)`` -- exactly, by enumerating hands with Gymnasium's own
rule functions, and statistically, by playing its env -- and against the book's
Figures 5.2 and 5.3."""

from collections import Counter
from dataclasses import replace
from functools import cache

import gymnasium as gym
import gymnasium.envs.toy_text.blackjack as gbj
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tabular import policy_evaluation, value_iteration
from tabular.envs.blackjack import (
    END,
    HIT,
    N_HANDS,
    NATURAL,
    STICK,
    Blackjack,
    blackjack_model,
    dealer_outcomes,
    state_id,
)

MDP = blackjack_model()
CARD_P = {card: n / len(gbj.deck) for card, n in Counter(gbj.deck).items()}
DEALER_CARDS = range(1, 11)


def stick_on_20():
    """Example 5.1's policy: stick on 20 or 21 (and on a natural), else hit."""
    policy = np.full(MDP.n_states, HIT)
    policy[[state_id(total, usable, d) for usable in (False, True) for total in (20, 21)
            for d in DEALER_CARDS]] = STICK
    policy[NATURAL:] = STICK
    return policy


# --------------------------------------------------- an oracle: Gymnasium's rules
# Hands are sorted tuples (the rules never look at the order); every probability is
# an exact sum over the cards Gymnasium's deck can deal.


@cache
def dealer_final(dealer: tuple) -> dict:
    """``{(score, natural): probability}`` of the dealer's final hand, playing as
    ``BlackjackEnv.step(0)`` does from ``dealer``."""
    if gbj.sum_hand(list(dealer)) >= 17:
        return {(gbj.score(list(dealer)), gbj.is_natural(list(dealer))): 1.0}
    out = Counter()
    for card, p in CARD_P.items():
        for key, q in dealer_final(tuple(sorted(dealer + (card,)))).items():
            out[key] += p * q
    return out


def stick_rewards(player: tuple, showing: int) -> dict:
    """``{reward: probability}`` of sticking with ``player`` against ``showing``, by
    ``BlackjackEnv.step(0)``'s rule with ``sab=True``."""
    return _stick_rewards(gbj.score(list(player)), gbj.is_natural(list(player)), showing)


@cache
def _stick_rewards(player_score: int, player_natural: bool, showing: int) -> dict:
    out = Counter()
    for hidden, p in CARD_P.items():
        for (dealer_score, dealer_natural), q in dealer_final(
                tuple(sorted((showing, hidden)))).items():
            reward = gbj.cmp(player_score, dealer_score)
            if player_natural and not dealer_natural:
                reward = 1.0
            out[reward] += p * q
    return out


def state_of(hand: tuple, showing: int) -> int:
    total, usable = gbj._hand_sum_and_usable_ace(list(hand))
    return state_id(total, bool(usable), showing, natural=gbj.is_natural(list(hand)))


def player_hands():
    """Every hand (sorted tuple) of two or more cards whose sum is 12-21."""
    def grow(hand):
        if len(hand) >= 2 and 12 <= gbj.sum_hand(list(hand)) <= 21:
            yield hand
        for card in range(hand[-1] if hand else 1, 11):
            if not gbj.is_bust(list(hand + (card,))):
                yield from grow(hand + (card,))
    return list(grow(()))


@cache
def model_outcomes(s, a) -> dict:
    """``{(next state, reward, done): probability}`` of ``(s, a)`` in the model."""
    out = Counter()
    for k in np.flatnonzero(MDP.prob[s, a] > 0):
        out[(int(MDP.next_state[s, a, k]), float(MDP.reward[s, a, k]),
             bool(MDP.done[s, a, k]))] += float(MDP.prob[s, a, k])
    return out


def assert_same(got: dict, expected: dict, where):
    assert got.keys() == expected.keys(), where
    assert max(abs(got[key] - expected[key]) for key in expected) < 1e-12, where


# --------------------------------------------------------------------- the model


def test_model_layout():
    """200 hands with a decision, 10 naturals, one terminal state; two actions; up to
    10 outcomes (a hit of a soft hand has ten different successors)."""
    assert MDP.prob.shape == (211, 2, 10) and N_HANDS == 200 and END == 210
    assert MDP.state_labels[state_id(13, True, 2)] == "13 soft vs 2"
    assert MDP.state_labels[state_id(21, True, 1, natural=True)] == "natural vs A"
    assert MDP.start[END] == 0 and MDP.done[END][MDP.prob[END] > 0].all()
    np.testing.assert_allclose(MDP.start[NATURAL:END].sum(), 8 / 169, rtol=1e-14)
    assert (MDP.start[:N_HANDS] > 0).all()  # every hand can be dealt
    np.testing.assert_allclose(dealer_outcomes().sum(axis=1), 1.0, rtol=1e-14)


def test_every_hand_moves_as_gymnasium_rules_say():
    """Each of Gymnasium's hands of 12-21 (a few hundred multisets of cards), against
    each showing card: the model's outcomes of sticking (the dealer's whole play,
    from the hidden card on) and of hitting equal the oracle's to 1e-12. Hands of
    one state (e.g. hard 15 as 10+5 and as A+4+10) must move alike: the state is
    Markov."""
    hands = player_hands()
    assert len(hands) > 300
    for hand in hands:
        for showing in DEALER_CARDS:
            s = state_of(hand, showing)
            stick = Counter({(END, r, True): p for r, p in stick_rewards(hand, showing).items()})
            assert_same(model_outcomes(s, STICK), stick, (hand, showing, "stick"))
            hit = Counter()
            for card, p in CARD_P.items():
                after = hand + (card,)
                key = ((END, -1.0, True) if gbj.is_bust(list(after))
                       else (state_of(after, showing), 0.0, False))
                hit[key] += p
            assert_same(model_outcomes(s, HIT), hit, (hand, showing, "hit"))


def test_start_distribution_is_the_deal_with_automatic_hits():
    """Gymnasium's reset deals two cards to the player and the showing card to the
    dealer; the book's player then hits while below 12."""
    def first_decision(hand, p, showing, start):
        if gbj.sum_hand(list(hand)) < 12:
            for card, q in CARD_P.items():
                first_decision(hand + (card,), p * q, showing, start)
        else:
            start[state_of(hand, showing)] += p

    start = np.zeros(MDP.n_states)
    for showing, p_show in CARD_P.items():
        for c1, p1 in CARD_P.items():
            for c2, p2 in CARD_P.items():
                first_decision((c1, c2), p_show * p1 * p2, showing, start)
    np.testing.assert_allclose(MDP.start, start, rtol=0, atol=1e-15)


def test_gymnasium_blackjack_plays_as_the_model_predicts():
    """20,000 episodes of Gymnasium's ``Blackjack-v1(sab=True)`` under a fixed random
    stochastic policy (automatic hits below 12). For every pair (s, a) played, the
    mean return after it is within sampling error of ``q_pi(s, a)`` of the model: the
    z-score ``(mean - q) / sqrt(var / n)``, with the exact variance ``E[G^2] - q^2``
    (``G^2`` is the one squared reward, so ``E[G^2]`` is ``q_pi`` of the squared
    rewards), stays within 4.5 for each of ~400 pairs (a normal exceeds 4.5 with
    probability 7e-6) and the mean of z^2 is 1 within 0.25 (3.5 standard deviations of
    a mean of 400 squared normals). The first states' frequencies pass the same test
    against ``mdp.start``. (With 200,000 episodes: max |z| 2.8, mean z^2 0.99.)"""
    rng = np.random.default_rng(0)
    hit = rng.uniform(0.1, 0.9, MDP.n_states)
    pi = np.stack([1 - hit, hit], axis=1)
    q = policy_evaluation(MDP, pi, 1.0).Q
    q_square = policy_evaluation(replace(MDP, reward=MDP.reward ** 2), pi, 1.0).Q
    env = gym.make("Blackjack-v1", sab=True).unwrapped
    env.reset(seed=1)
    episodes = 20_000
    total, count = np.zeros((MDP.n_states, 2)), np.zeros((MDP.n_states, 2))
    starts = np.zeros(MDP.n_states)
    for _ in range(episodes):
        (player, showing, usable), _ = env.reset()
        while player < 12:
            (player, showing, usable), _, _, _, _ = env.step(1)
        s = state_of(tuple(env.player), showing)
        starts[s] += 1
        played = []
        while True:
            a = int(rng.random() < hit[s])
            played.append((s, a))
            (player, showing, usable), reward, terminated, _, _ = env.step(a)
            if terminated:
                break
            s = state_of(tuple(env.player), showing)
        for s, a in played:  # no state repeats in an episode: the sum only grows
            total[s, a] += reward
            count[s, a] += 1
    seen = count > 0
    var = q_square - q ** 2
    sure = seen & (var < 1e-12)  # e.g. hitting hard 21 always busts
    np.testing.assert_array_equal((total / np.maximum(count, 1))[sure], q[sure])
    tested = seen & ~sure & (count >= 5)
    z = (total[tested] / count[tested] - q[tested]) / np.sqrt(var[tested] / count[tested])
    assert tested.sum() > 300 and np.abs(z).max() < 4.5 and abs((z ** 2).mean() - 1) < 0.25
    z_start = (starts - episodes * MDP.start) / np.sqrt(episodes * MDP.start + 1e-300)
    assert np.abs(z_start).max() < 4.5 and abs((z_start[MDP.start > 0] ** 2).mean() - 1) < 0.25


@pytest.mark.filterwarnings("ignore:.*alternative render modes")  # made without a spec
def test_env_passes_gymnasium_checker():
    check_env(Blackjack())
    env = Blackjack(render_mode="ansi")
    check_env(env, skip_render_check=False)
    env.reset(seed=0)
    env.step(STICK)
    assert "after action 0 (stick)" in env.render() and "end" in env.render()


# -------------------------------------------------------------- the book's figures


def test_value_iteration_gives_figure_5_2():
    """v* and pi* (gamma = 1). Figure 5.2's pi*: with a usable ace, stick on 19 or more,
    and on 18 against 2-8; without one, stick on 17 or more against an ace and 7-10, on
    13 or more against 2 and 3, on 12 or more against 4-6. A natural sticks."""
    vi = value_iteration(MDP, 1.0)
    stick_from = {True: [19, 18, 18, 18, 18, 18, 18, 18, 19, 19],
                  False: [17, 13, 13, 12, 12, 12, 17, 17, 17, 17]}
    for usable, bounds in stick_from.items():
        for d, bound in zip(DEALER_CARDS, bounds, strict=True):
            for total in range(12, 22):
                expected = STICK if total >= bound else HIT
                assert vi.policy[state_id(total, usable, d)] == expected, (total, usable, d)
    assert (vi.policy[NATURAL:END] == STICK).all()
    v = vi.V[:N_HANDS].reshape(2, 10, 10)  # [usable ace, sum - 12, showing card - 1]
    # a natural wins unless the dealer has one: 1 - 4/13 against an ace, 1 - 1/13 against a 10
    np.testing.assert_allclose(vi.V[NATURAL:END], [9 / 13] + [1.0] * 8 + [12 / 13])
    assert (v[1] >= v[0] - 1e-12).all()  # a usable ace never hurts
    np.testing.assert_allclose(v[:, 7:], v[0, 7:][None].repeat(2, axis=0))  # 19-21: stick
    for d in DEALER_CARDS:  # hard 20 sticks: its value is the oracle's mean reward
        expected = sum(r * p for r, p in stick_rewards((10, 10), d).items())
        assert v[0, 8, d - 1] == pytest.approx(expected, abs=1e-12)


def test_figure_5_3_state_has_the_books_value():
    """Dealer showing 2, player 13 with a usable ace, stick only on 20 or 21: the book
    gives -0.27726, the mean of 10^8 episodes (its standard error: the exact standard
    deviation of the return, 0.93, over 10^4). The exact value is -0.277204, within
    0.6 standard errors of it; the oracle (Gymnasium's rules, hand by hand) agrees."""
    s = state_id(13, True, 2)
    pi = stick_on_20()
    v = policy_evaluation(MDP, pi, 1.0).V[s]
    second = policy_evaluation(replace(MDP, reward=MDP.reward ** 2), pi, 1.0).V[s]
    standard_error = np.sqrt(second - v ** 2) / 1e4
    assert abs(v - -0.27726) < standard_error and 0.93 < standard_error * 1e4 < 0.94
    assert round(v, 6) == -0.277204

    @cache
    def oracle(hand):
        if gbj.sum_hand(list(hand)) >= 20:
            return sum(r * p for r, p in stick_rewards(hand, 2).items())
        return sum(p * (-1.0 if gbj.is_bust(list(hand + (c,))) else
                        oracle(tuple(sorted(hand + (c,))))) for c, p in CARD_P.items())

    assert oracle((1, 2)) == pytest.approx(v, abs=1e-14)
