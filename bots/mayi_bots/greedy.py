"""``greedy``: claims what helps, goes down as soon as it can, lays off what it can.

It discards the card it wants least: one it cannot lay off, that helps least, scoring
most. It claims an upcard out of turn (a May I call, a buy) only while its hand, with the
card and the penalty cards, stays within :data:`HAND_LIMIT` cards: every claim grows the
hand, and a hand that only grows (May I's last round, which it rarely makes) would score
ever more against it. It takes the upcard only if it would keep it (taking a card to discard it again
could go round the table for ever); otherwise it draws from the stock, and waits for it
(:data:`~mayi_sdk.WAIT`) while other seats may still answer the upcard. It reads only its view, and keeps no memory.
"""

from __future__ import annotations

from collections.abc import Iterable

from mayi_sdk import WAIT, Bot, Contract, GameView, LegalMove, Wait
from mayi_sdk.cards import JOKER, order, rank, suit

from .cards import fitting, points

#: Most cards greedy holds after a claim out of turn (May I deals 10 or 12: a few claims).
HAND_LIMIT = 15


def usefulness(card: str, hand: Iterable[str], contract: Contract) -> int:
    """How much ``card`` helps ``hand`` towards ``contract`` (higher helps more).

    Counts the other cards of its rank (for books) and the cards of its suit within
    three ranks (for runs); a joker always helps.

    >>> from mayi_sdk import Contract
    >>> usefulness("7C", ["7C", "7D", "8C", "KS"], Contract(1, 1, False, ""))
    4
    """
    if card == JOKER:
        return 100
    r, s = rank(card), suit(card)
    value = 0
    if contract.books:
        value += 2 * sum(1 for c in hand if c != JOKER and rank(c) == r) - 2
    if contract.runs:
        near = set()
        for c in hand:
            if c != JOKER and suit(c) == s and c != card:
                cr = rank(c)
                d = abs(cr - r)
                if r == 1 or cr == 1:  # the ace is also next to the king
                    d = min(d, abs((14 if r == 1 else r) - (14 if cr == 1 else cr)))
                if 0 < d <= 3:
                    near.add(cr)
        value += 2 * len(near)
    return value


class GreedyBot(Bot):
    """The simple heuristic player every stronger bot must beat."""

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        del seed  # greedy draws no random numbers

    def decide(self, view: GameView) -> LegalMove | Wait:
        legal = view.legal
        kinds = {m.type for m in legal}
        if "claim" in kinds:
            want = self._helps(view, view.claim_window.card if view.claim_window else "") and self._room(view)
            return _pick(legal, "claim", "claim", want)
        if "draw" in kinds:
            upcard = view.upcard or ""
            stock = any(m.body.get("source") == "stock" for m in legal if m.type == "draw")
            hand = [*view.hand, upcard]
            if self._helps(view, upcard) and self._least_wanted(view, hand, set(hand)) != upcard:
                return _pick(legal, "draw", "source", "discard")
            if not stock:  # others may still answer the upcard: wait for the stock
                return WAIT
            return _pick(legal, "draw", "source", "stock")
        for move in legal:
            if move.type in ("go_down", "lay_off"):
                return move
        discards = {str(m.body["card"]) for m in legal if m.type == "discard"}
        if discards:
            card = self._least_wanted(view, view.hand, discards)
            return _pick(legal, "discard", "card", card)
        return legal[0]

    def _least_wanted(self, view: GameView, hand: list[str], cards: set[str]) -> str:
        """The card of ``cards`` that greedy would discard from ``hand``."""
        assert view.round is not None
        contract = view.round.contract
        fits: set[str] = set()
        if _down(view):
            for meld in view.melds:
                fits |= fitting(meld, view.variant)
        variant = view.variant
        return max(cards, key=lambda c: (c not in fits, -usefulness(c, hand, contract), points(c, variant), order(c)))

    @staticmethod
    def _room(view: GameView) -> bool:
        """Whether a claim now keeps the hand within :data:`HAND_LIMIT` (the first upcard
        offered in May I comes with no penalty card, and replaces the draw)."""
        if view.phase == "first_offer":
            return True
        penalty = 2 if view.variant == "shanghai" else 1
        try:
            from mayi_sdk.helpers import engine

            penalty = int(engine().get_rules(view.variant, view.options or None).claim_penalty)
        except Exception:  # without the engine: the variants' own penalties
            pass
        return len(view.hand) + 1 + penalty <= HAND_LIMIT

    def _helps(self, view: GameView, card: str) -> bool:
        if _down(view):
            return any(card in fitting(meld, view.variant) for meld in view.melds)
        assert view.round is not None
        return usefulness(card, view.hand, view.round.contract) >= 2


def _down(view: GameView) -> bool:
    return view.seat is not None and view.seats[view.seat].down


def _pick(legal: list[LegalMove], kind: str, key: str, value: object) -> LegalMove:
    """The legal move of ``kind`` whose ``key`` is ``value`` (the first of ``kind`` if none is)."""
    of_kind = [m for m in legal if m.type == kind]
    return next((m for m in of_kind if m.body.get(key) == value), of_kind[0])


if __name__ == "__main__":
    import sys

    from mayi_bots.cli import main

    sys.exit(main("greedy"))
