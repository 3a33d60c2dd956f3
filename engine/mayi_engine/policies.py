"""Built-in in-process policies for simulations: ``random`` and ``greedy``.

A policy is a function ``(state, seat, legal, rng) -> move`` that picks one of
the ``legal`` moves. They read only what the seat may see (its hand and the
table), never other hands or the stock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .cards import JOKER
from .melds import candidate_cards
from .moves import Claim, Discard, DrawStock, GoDown, LayOff, Move, Pass, TakeDiscard
from .rng import KeyedRandom
from .rules import Contract
from .state import State

Policy = Callable[[State, int, Sequence[Move], KeyedRandom], Move]


def random_policy(state: State, seat: int, legal: Sequence[Move], rng: KeyedRandom) -> Move:
    """Uniform over the legal moves."""
    return legal[rng.below(len(legal))]


def usefulness(card: int, hand: tuple[int, ...], contract: Contract) -> int:
    """How much ``card`` helps ``hand`` towards ``contract`` (higher helps more).

    Counts the other cards of its rank (for books) and the cards of its suit
    within three ranks (for runs); a joker always helps.
    """
    if card == JOKER:
        return 100
    rank, suit = card >> 2, card & 3
    value = 0
    if contract.books:
        value += 2 * sum(1 for c in hand if c != JOKER and c >> 2 == rank) - 2
    if contract.runs:
        near = set()
        for c in hand:
            if c != JOKER and c & 3 == suit and c != card:
                d = abs((c >> 2) - rank)
                if rank == 1 or c >> 2 == 1:  # the ace is also next to the king
                    d = min(d, abs((14 if rank == 1 else rank) - (14 if c >> 2 == 1 else c >> 2)))
                if 0 < d <= 3:
                    near.add(c >> 2)
        value += 2 * len(near)
    return value


def greedy_policy(state: State, seat: int, legal: Sequence[Move], rng: KeyedRandom) -> Move:
    """Claims what helps, goes down as soon as it can, lays off what it can, and
    discards the card it wants least: one it cannot lay off, that helps least,
    scoring most. It takes the upcard only if it would keep it (taking a card to
    discard it again could go round the table for ever)."""
    hand = state.hands[seat]
    kinds = {type(m) for m in legal}
    if Claim in kinds and Pass in kinds:
        return Claim() if _helps(state, seat, state.discard[-1]) else Pass()
    if TakeDiscard in kinds:
        upcard = state.discard[-1]
        if DrawStock not in kinds or (
            _helps(state, seat, upcard) and _least_wanted(state, seat, (*hand, upcard), {*hand, upcard}) != upcard
        ):
            return TakeDiscard()
        return DrawStock()
    for move in legal:
        if isinstance(move, GoDown | LayOff):
            return move
    discards = {m.card for m in legal if isinstance(m, Discard)}
    if discards:
        return Discard(_least_wanted(state, seat, hand, discards))
    return legal[0]


def _least_wanted(state: State, seat: int, hand: tuple[int, ...], cards: set[int]) -> int:
    """The card of ``cards`` that greedy would discard from ``hand``."""
    contract = state.rules.rounds[state.round - 1].contract
    fitting: set[int] = set()
    if state.down[seat]:
        for meld in state.melds:
            fitting |= candidate_cards(meld, state.rules)
    score = state.rules.card_score
    return max(cards, key=lambda c: (c not in fitting, -usefulness(c, hand, contract), score(c), c))


def _helps(state: State, seat: int, card: int) -> bool:
    if state.down[seat]:
        return any(card in candidate_cards(meld, state.rules) for meld in state.melds)
    return usefulness(card, state.hands[seat], state.rules.rounds[state.round - 1].contract) >= 2


POLICIES: dict[str, Policy] = {"random": random_policy, "greedy": greedy_policy}
