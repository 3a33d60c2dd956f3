"""``strong``: a card-counting heuristic player, planned around the round's contract.

How it plays (docs/bots.md, "Reference bots", says why this design):

* **Plan.** Its hand is read as the best partial contract: the books and runs (of
  different suits, ranks where the variant asks) that leave the fewest cards missing,
  jokers filling gaps within the variant's joker limit. ``need`` is that number of
  missing cards; the *outs* are the cards still live (not in its hand, on the table,
  buried in the discard pile or taken by another player) that would lower it.
* **Card tracking.** It watches the discard pile from view to view (each card thrown,
  each card taken back), and counts the melds on the table, to know how many copies
  of each card are still live.
* **Draw and claim.** It takes the upcard only when it lowers ``need``; it claims (May I:
  one penalty card; Shanghai: two, at most two buys a round) only when the card lowers
  ``need`` and the penalty is worth it: never once down, never in May I's last round
  unless the card helps twice, less eagerly when an opponent is about to go out.
* **Go down** at once, with every card that extends its melds added to them.
* **Discard** the card whose loss costs least: ``need`` first, then outs, then its
  points, which weigh more as an opponent gets close to going out (it dumps high cards
  then); it avoids handing the next player a card that fits the table.
* Once down, it lays off all it can and throws the highest card that fits nowhere.

Each decision takes well under a millisecond to a few milliseconds: no search.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from mayi_sdk import WAIT, Bot, GameView, LegalMove, Wait
from mayi_sdk.cards import CODES, JOKER, order, rank, suit
from mayi_sdk.helpers import EngineMissing, engine, is_meld

from .cards import fitting, joker_limit, points
from .plans import Plan, assess

#: Most copies of a card in play, by variant, when the engine cannot say (4 players).
DEFAULT_DECKS = {"may_i": 3, "shanghai": 2}


@lru_cache(maxsize=64)
def _decks(variant: str, players: int) -> int:
    try:
        return int(engine().get_rules(variant).decks_for(players))
    except (EngineMissing, Exception):
        return DEFAULT_DECKS.get(variant, 2)


@lru_cache(maxsize=64)
def _distinct_books(variant: str) -> bool:
    try:
        return bool(engine().get_rules(variant).distinct_book_ranks)
    except (EngineMissing, Exception):
        return variant != "may_i"


# --------------------------------------------------------------------------- #
# What it remembers of a game
# --------------------------------------------------------------------------- #


@dataclass
class Memory:
    """What the bot has seen this round: the discard pile as it watched it, and cards taken."""

    game: str = ""
    round: int = 0
    reshuffles: int = 0
    pile: dict[int, str] = field(default_factory=dict)  # position in the discard pile -> card
    taken: Counter[str] = field(default_factory=Counter)  # upcards others took (gone from play for it)


class StrongBot(Bot):
    """Plans the contract, counts cards, claims with the penalty in mind, dumps points in danger."""

    name = "strong"

    def __init__(self, seed: int | None = None) -> None:
        del seed  # deterministic: it draws no random numbers
        self.memory = Memory()

    # -- watching the table ---------------------------------------------------
    def _observe(self, view: GameView) -> None:
        mem = self.memory
        number = view.round.number if view.round else 0
        if view.id != mem.game or number != mem.round or view.reshuffles != mem.reshuffles:
            self.memory = mem = Memory(view.id, number, view.reshuffles)
        top = view.discard_top
        if top is None or view.discard_count <= 0:
            return
        pos = view.discard_count - 1
        before = mem.pile.get(pos)
        if before is not None and before != top:
            mem.taken[before] += 1  # the card at that place was taken, and another thrown on it
        for p in [p for p in mem.pile if p > pos]:
            mem.taken[mem.pile.pop(p)] += 1  # taken from the pile since
        mem.pile[pos] = top

    def _live(self, view: GameView) -> Counter[int]:
        """How many copies of each card (by number) may still come to this seat."""
        decks = _decks(view.variant, len(view.seats))
        gone: Counter[int] = Counter(order(c) for c in view.hand)
        for meld in view.melds:
            gone.update(order(c) for c in meld.cards)
        pos_top = view.discard_count - 1
        gone.update(order(c) for p, c in self.memory.pile.items() if p < pos_top)
        gone.update({order(c): n for c, n in self.memory.taken.items()})
        live: Counter[int] = Counter()
        for n in CODES:
            total = 2 * decks if n == 0 else decks
            live[n] = max(0, total - gone[n])
        return live

    # -- reading the view -----------------------------------------------------
    def _plan(self, view: GameView, hand: tuple[int, ...]) -> Plan:
        assert view.round is not None
        c = view.round.contract
        return assess(
            tuple(sorted(hand)),
            c.books,
            c.runs,
            c.all_cards,
            joker_limit(view.variant),
            _distinct_books(view.variant),
        )

    def _danger(self, view: GameView) -> float:
        """0 (nobody near going out) .. 1 (an opponent may go out on their next turn)."""
        worst = 0.0
        last = view.round is not None and view.round.contract.all_cards
        for seat in view.seats:
            if seat.seat == view.seat:
                continue
            if seat.down:
                worst = max(worst, 1.0 if seat.hand_count <= 2 else 0.7 if seat.hand_count <= 4 else 0.4)
            elif last:
                worst = max(worst, 0.3)
        return worst

    # -- deciding -------------------------------------------------------------
    def decide(self, view: GameView) -> LegalMove | dict[str, object] | Wait:
        self._observe(view)
        legal = view.legal
        kinds = {m.type for m in legal}
        hand = tuple(order(c) for c in view.hand)
        down = view.seat is not None and view.seats[view.seat].down
        if "claim" in kinds:
            return _pick(legal, "claim", "claim", self._want_claim(view, hand, down))
        if "draw" in kinds:
            sources = {m.body.get("source") for m in legal if m.type == "draw"}
            if self._want_upcard(view, hand, down):
                return _pick(legal, "draw", "source", "discard")
            if "stock" not in sources:  # others may still answer the upcard: wait for the stock
                return WAIT
            return _pick(legal, "draw", "source", "stock")
        go_downs = [m for m in legal if m.type == "go_down"]
        if go_downs:
            return self._longer(view, go_downs[0])
        for move in legal:
            if move.type == "lay_off":
                return move
        discards = [m for m in legal if m.type == "discard"]
        if discards:
            return self._discard(view, hand, down, discards)
        return legal[0]

    def _want_upcard(self, view: GameView, hand: tuple[int, ...], down: bool) -> bool:
        card = view.upcard
        if card is None:
            return False
        if down:
            return any(card in fitting(m, view.variant) for m in view.melds)
        before = self._plan(view, hand).need
        after = self._plan(view, (*hand, order(card))).need
        return after < before

    def _want_claim(self, view: GameView, hand: tuple[int, ...], down: bool) -> bool:
        window = view.claim_window
        if window is None or down or view.round is None:
            return False
        card = order(window.card)
        before = self._plan(view, hand).need
        after = self._plan(view, (*hand, card)).need
        gain = before - after
        if view.phase == "first_offer":
            return gain > 0  # no penalty card
        if gain <= 0:
            return False
        contract = view.round.contract
        if contract.all_cards:
            return gain >= 2 and after <= 2
        danger = self._danger(view)
        me = view.seats[view.seat] if view.seat is not None else None
        if view.variant == "shanghai" or (me is not None and me.claims_left is not None):
            left = me.claims_left if me is not None and me.claims_left is not None else 0
            if left <= 0:
                return False
            return after <= (2 if left == 1 else 3) and danger < 0.7
        if danger >= 0.7 and after > 1:
            return False
        return len(hand) <= 14 or after <= 1

    def _longer(self, view: GameView, move: LegalMove) -> LegalMove | dict[str, object]:
        """The go-down ``move`` with every card that extends its melds added: a card of the
        book's rank, or the next card of the run's suit at either end, each meld checked with
        the engine (and kept a book or a run: jokers could make a longer meld read as the other)."""
        if move.body.get("lay_offs") or view.round is None or view.options.get("free_goal_order"):
            return move
        melds = [list(m) for m in move.body.get("melds", [])]
        rest = list(view.hand)
        for m in melds:
            for c in m:
                rest.remove(c)
        if not rest:
            return move
        variant = view.variant
        books = view.round.contract.books  # the listed melds are the books first, then the runs
        try:
            changed = extend_melds(melds, rest, books, variant)
        except EngineMissing:
            return move
        if not changed or (len(rest) == 1 and variant == "shanghai"):
            return move
        return {"type": "go_down", "melds": melds}

    def _discard(self, view: GameView, hand: tuple[int, ...], down: bool, moves: list[LegalMove]) -> LegalMove:
        variant = view.variant
        cards = [str(m.body["card"]) for m in moves]
        held = view.held
        if held in cards and len(cards) > 1:
            cards.remove(held)  # never throw back the card just taken
        fits: set[str] = set()
        for meld in view.melds:
            fits |= fitting(meld, variant)
        nxt = self._next_seat(view)
        feeding = nxt is not None and view.seats[nxt].down
        if down:

            def cost_down(c: str) -> tuple[int, int, int]:
                return (c in fits or c == JOKER, -points(c, variant), -order(c))

            return _pick(moves, "discard", "card", min(cards, key=cost_down))
        return _pick(moves, "discard", "card", self.discard_scores(view, hand, set(cards), fits, feeding)[0][2])

    def discard_scores(
        self, view: GameView, hand: tuple[int, ...], cards: Iterable[str], fits: set[str], feeding: bool
    ) -> list[tuple[float, int, str]]:
        """``(score, -order, card)`` of each of ``cards`` as a discard before going down,
        best (lowest) first: what its plan still needs without it, the outs left, its points
        (weighed by the danger of a seat going out), feeding the next seat's melds
        (``fits``, ``feeding``), a joker kept."""
        variant = view.variant
        live = self._live(view)
        point_weight = self.point_weight(view)
        scored: list[tuple[float, int, str]] = []
        for c in cards:
            rest = list(hand)
            rest.remove(order(c))
            plan = self._plan(view, tuple(rest))
            outs = sum(live[w] for w in plan.wanted)
            score = plan.need * 100.0 - min(outs, 40) * 1.5 - points(c, variant) * point_weight
            if feeding and c in fits:
                score += 25.0 if variant == "shanghai" else 10.0
            if c == JOKER:
                score += 200.0
            scored.append((score, -order(c), c))
        scored.sort()
        return scored

    def point_weight(self, view: GameView) -> float:
        """How much a card's points weigh in :meth:`discard_scores` (against 100 a card
        its plan needs): a little, and more as an opponent gets close to going out."""
        return 0.15 + 1.2 * self._danger(view)

    @staticmethod
    def _next_seat(view: GameView) -> int | None:
        if view.seat is None or not view.seats:
            return None
        return (view.seat + 1) % len(view.seats)


def extend_melds(melds: list[list[str]], rest: list[str], books: int, variant: str) -> bool:
    """Add to ``melds`` (its first ``books`` books, then runs) every natural of ``rest``
    that extends one (a card of a book's rank, the next card of a run's suit at either
    end, the highest in points first), each meld checked with the engine; the cards added
    leave ``rest``. Whether any was added."""
    changed = False
    for i, m in enumerate(melds):
        naturals = [c for c in m if c != JOKER]
        if not naturals:
            continue
        grown = True
        while grown and rest:
            grown = False
            for c in sorted(set(rest), key=lambda x: -points(x, variant)):
                if c == JOKER:
                    continue
                if i < books:
                    fits = rank(c) == rank(naturals[0])
                    tries = [[*m, c]]
                else:
                    fits = suit(c) == suit(naturals[0]) and all(rank(c) != rank(n) for n in naturals)
                    tries = [[*m, c], [c, *m]]
                for cand in tries if fits else []:
                    if is_meld(cand, variant):
                        m[:] = cand
                        naturals.append(c)
                        rest.remove(c)
                        grown = changed = True
                        break
                if grown:
                    break
    return changed


def _pick(legal: list[LegalMove], kind: str, key: str, value: object) -> LegalMove:
    of_kind = [m for m in legal if m.type == kind]
    return next((m for m in of_kind if m.body.get(key) == value), of_kind[0])


if __name__ == "__main__":
    import sys

    from mayi_bots.cli import main

    sys.exit(main("strong"))
