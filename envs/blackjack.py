"""Example 5.1 (Figures 5.1-5.3): blackjack with an infinite deck, as an exact model.

The rules are those of Gymnasium's ``Blackjack-v1`` with ``sab=True`` (the book's):
cards are drawn with replacement, 1 (ace) to 9 with probability 1/13 each and 10
(ten, jack, queen, king) with probability 4/13; the dealer hits below 17 and sticks
on 17 or more, a soft 17 included (an ace counts as 11 whenever that does not bust).
The dealer's play after the player sticks is summed exactly into the outcome
probabilities of "stick": :func:`dealer_outcomes` runs a dynamic program over the
dealer's hands, from the hidden card on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tabular import TabularMDP

from .base import ModelEnv, constant
from .sutton_barto import absorbing

#: The card values 1 (ace) to 10 and their probabilities in an infinite deck.
CARDS = constant(np.arange(1, 11), np.int64)
CARD_PROBS = constant(np.array([1.0] * 9 + [4.0]) / 13.0)
_DEAL = list(zip(CARDS.tolist(), CARD_PROBS.tolist(), strict=True))  # (card, probability)
STICK, HIT = 0, 1
#: The player's sums with a decision (below 12 the player always hits, section 5.3).
SUMS = constant(np.arange(12, 22), np.int64)
N_HANDS = 200  # usable ace x player sum 12-21 x dealer's showing card 1-10
NATURAL = N_HANDS  # the first of the ten natural hands, one per showing card
END = N_HANDS + 10  # the one terminal state
#: The dealer's final outcomes: a total of 17-21 (not a natural), a bust, a natural.
DEALER_FINALS = ("17", "18", "19", "20", "21", "bust", "natural")
_BUST, _NATURAL = 5, 6


def state_id(player_sum: int, usable_ace: bool, dealer_card: int, natural: bool = False) -> int:
    """The state id of a hand: ``usable_ace * 100 + (player_sum - 12) * 10 + dealer_card - 1``
    (so ``V[:200].reshape(2, 10, 10)`` is indexed ``[usable_ace, player_sum - 12,
    dealer_card - 1]``), or ``200 + dealer_card - 1`` for a natural (ace and ten)."""
    if natural:
        return NATURAL + dealer_card - 1
    return int(usable_ace) * 100 + (player_sum - 12) * 10 + dealer_card - 1


def _dealer_from_hand() -> np.ndarray:
    """``final[raw, ace, j]``: the probability that a dealer holding cards of total ``raw``
    (aces counted as 1; ``ace``: the hand holds one) ends at outcome ``j`` of
    ``17, ..., 21, bust``, hitting until the hand's best total reaches 17."""
    final = np.zeros((27, 2, 6))  # a hand that hits has raw <= 16, so raw + card <= 26
    for raw in range(26, -1, -1):
        for ace in (0, 1):
            total = raw + 10 if ace and raw + 10 <= 21 else raw
            if total > 21:
                final[raw, ace, _BUST] = 1.0
            elif total >= 17:
                final[raw, ace, total - 17] = 1.0
            else:
                final[raw, ace] = CARD_PROBS @ final[raw + CARDS, ace | (CARDS == 1)]
    return final


def dealer_outcomes() -> np.ndarray:
    """``[10, 7]``: for each showing card 1-10, the probabilities of the dealer's final
    outcomes :data:`DEALER_FINALS` (17-21, bust, natural), summed over the hidden card
    and every card the dealer draws after it."""
    final = _dealer_from_hand()
    table = np.zeros((10, 7))
    for d in CARDS.tolist():
        for hidden, p in _DEAL:
            if {d, hidden} == {1, 10}:
                table[d - 1, _NATURAL] += p
            else:
                table[d - 1, :_NATURAL] += p * final[d + hidden, int(d == 1 or hidden == 1)]
    return table


def stick_outcomes(dealer: np.ndarray) -> np.ndarray:
    """``[11, 10, 3]``: the probabilities of winning, drawing and losing when the player
    sticks, for player sums 12-21 and a natural (row 10), against each showing card;
    ``dealer`` is :func:`dealer_outcomes`. A natural wins unless the dealer has one too
    (a draw); otherwise a dealer's natural is just 21."""
    totals = np.array([17, 18, 19, 20, 21, 0, 21])  # a bust scores 0
    player = np.append(SUMS, 21)[:, None, None]
    win, draw, lose = ((dealer[None] * compare).sum(axis=2)
                       for compare in (player > totals, player == totals, player < totals))
    win[-1], draw[-1], lose[-1] = 1.0 - dealer[:, _NATURAL], dealer[:, _NATURAL], 0.0
    return np.stack([win, draw, lose], axis=2)


def start_distribution() -> np.ndarray:
    """``[S]``: the exact distribution of the first state: two cards to the player, one
    showing card to the dealer, and the player hits automatically while below 12 (such
    a hand holds no ace: an ace would count 11)."""
    hands = np.zeros((2, 22))  # [usable ace, total] of the first hand with a decision
    natural = 2 * CARD_PROBS[0] * CARD_PROBS[9]  # ace then ten, or ten then ace
    below = np.zeros(12)  # hard totals below 12, still hitting
    for c1, p1 in _DEAL:
        for c2, p2 in _DEAL:
            raw, ace = c1 + c2, 1 in (c1, c2)
            if ace and raw == 11:
                continue  # the natural
            if ace:  # an ace with at most 10 more counts 11: raw + 10 <= 21
                hands[1, raw + 10] += p1 * p2
            elif raw < 12:
                below[raw] += p1 * p2
            else:
                hands[0, raw] += p1 * p2
    for total in range(4, 12):  # increasing: a hit only raises the total
        for card, p in _DEAL:
            if card == 1 and total <= 10:
                hands[1, total + 11] += below[total] * p
            elif total + card < 12:
                below[total + card] += below[total] * p
            else:
                hands[0, total + card] += below[total] * p
    start = np.zeros(END + 1)
    start[:N_HANDS] = (hands[:, SUMS, None] * CARD_PROBS[None, None, :]).ravel()
    start[NATURAL:END] = natural * CARD_PROBS
    return start


def _hit_outcomes(player_sum: int, usable_ace: bool) -> dict[tuple[int, bool], float]:
    """``{(sum, usable ace): probability}`` after one card; a bust is sum 22."""
    outcomes: dict[tuple[int, bool], float] = {}
    for card, p in _DEAL:
        total, usable = player_sum + card, usable_ace
        if total > 21 and usable:  # the ace drops to 1
            total, usable = total - 10, False
        key = (22, False) if total > 21 else (total, usable)
        outcomes[key] = outcomes.get(key, 0.0) + p
    return outcomes


def blackjack_model() -> TabularMDP:
    """The exact model: :func:`state_id` numbers the 200 hands with a decision, then the
    10 naturals, then the terminal state ``END = 210``."""
    K = 10
    S = END + 1
    next_state = np.full((S, 2, K), END, dtype=np.int64)
    prob = np.zeros((S, 2, K))
    reward = np.zeros((S, 2, K))
    done = np.zeros((S, 2, K), dtype=bool)
    sticks = stick_outcomes(dealer_outcomes())
    hands = sticks[:10].reshape(100, 3)  # [sum, showing card] in state order
    prob[:END, STICK, :3] = np.concatenate([hands, hands, sticks[10]])  # hard, soft, natural
    reward[:END, STICK, :3] = [1.0, 0.0, -1.0]
    done[:END, STICK] = True
    for usable in (False, True):
        for total in SUMS.tolist():
            states = [state_id(total, usable, d) for d in CARDS.tolist()]
            if total == 21 and usable:  # a natural that hits is a soft 21 that hits
                states += [state_id(21, True, d, natural=True) for d in CARDS.tolist()]
            for k, ((after, still_usable), p) in enumerate(_hit_outcomes(total, usable).items()):
                prob[states, HIT, k] = p
                if after > 21:
                    reward[states, HIT, k], done[states, HIT, k] = -1.0, True
                else:
                    next_state[states, HIT, k] = [
                        state_id(after, still_usable, s % 10 + 1) for s in states]
    absorbing(next_state, prob, reward, done, [END])
    labels = [f"{total} {'soft' if usable else 'hard'} vs {_card_name(d)}"
              for usable in (0, 1) for total in SUMS for d in CARDS]
    labels += [f"natural vs {_card_name(d)}" for d in CARDS] + ["end"]
    return TabularMDP(next_state, prob, reward, done, start_distribution(),
                      state_labels=labels, action_names=["stick", "hit"])


def _card_name(card: int | np.integer[Any]) -> str:
    return "A" if card == 1 else str(card)


class Blackjack(ModelEnv):
    """Example 5.1 (Figures 5.1-5.3): blackjack against a dealer with a fixed strategy.

    ## Description
    The book's game, with Gymnasium's ``Blackjack-v1(sab=True)`` rules: an infinite
    deck (each card 1-9 with probability 1/13, a 10 with 4/13); the player sees the
    sum of their cards, whether they hold a usable ace (one counted as 11) and the
    dealer's showing card. After the player sticks, the dealer turns over the hidden
    card and hits below 17, sticking on 17 or more (a soft 17 too); the dealer's play
    is summed exactly into the outcome probabilities of sticking. A natural (an ace
    and a ten as the first two cards) wins when it sticks, unless the dealer has one
    too (a draw); a dealer's natural is otherwise just 21.

    The 200 states of the book are the sums 12-21 with a decision: below 12 the player
    hits automatically (no card can bust such a hand), so an episode starts from the
    exact distribution of the first hand of 12 or more.

    ## Action Space
    ``Discrete(2)``: 0 = stick, 1 = hit.

    ## Observation Space
    ``Discrete(211)``: ``state_id(player_sum, usable_ace, dealer_card) = usable_ace *
    100 + (player_sum - 12) * 10 + dealer_card - 1`` for the 200 hands (``V[:200]
    .reshape(2, 10, 10)`` is indexed ``[usable ace, sum - 12, showing card - 1]``);
    ``200 + dealer_card - 1`` for a natural against each showing card (kept apart
    from a soft 21 of three or more cards, which does not win outright); 210 is the
    terminal state.

    ## Starting State
    Two cards to the player, one showing card to the dealer, automatic hits below 12:
    ``mdp.start`` is that distribution, computed exactly (a natural has probability
    8/169, about 0.047).

    ## Rewards
    +1 for a win, 0 for a draw, -1 for a loss, paid when the game ends; 0 otherwise.

    ## Episode End
    Termination: the player sticks or busts. Truncation: ``tabzoo/Blackjack-v0`` is
    registered with ``max_episode_steps=100`` (no episode is longer than 20 steps).

    ## Arguments
    * ``render_mode``: ``"ansi"`` or ``None`` (default).

    ## Version History
    * v0: the initial version (registered as ``tabzoo/Blackjack-v0``; the id
      ``tabular/Blackjack-v0`` is Gymnasium's own JAX blackjack).
    """

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__(blackjack_model(), render_mode)
