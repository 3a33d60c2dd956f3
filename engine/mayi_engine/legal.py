"""Legal-move generation: every move a seat may make now.

:func:`legal_moves` is the list a view's ``legal`` shows and the bots choose from.
It is generated through the same checks as the verify functions of the moves
(``claim_problem``, ``turn_problem``, ``claims_still_open``,
``may_lay_off_now``, ``last_card_problem``: the predicates the verify functions word
their errors from; in the claim window, ``pending_claimants``: the seats those checks
let answer, memoised on the state), and tested to agree with
:func:`~mayi_engine.game.check_move` on random states.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from .cards import CARD_SLOTS, counts_of, remove_cards
from .claims import claim_problem, pending_claimants
from .contracts import goals_for
from .drawing import claims_still_open
from .melding import may_lay_off_now
from .melds import Meld, lay_off_card, lay_off_fits_for, lay_off_options
from .moves import Claim, Discard, DrawStock, GoDown, LayOff, LayOffPart, Move, Pass, TakeDiscard
from .rules import Contract, Rules
from .solver import find_contract
from .state import DRAW_PHASE, FINISHED_PHASE, FIRST_DISCARD_PHASE, OFFER_PHASE, PLAY_PHASE, State
from .turns import last_card_problem, turn_problem, window_closed


def legal_moves(state: State, seat: int, now: float | None = None) -> tuple[Move, ...]:
    """Every move ``seat`` may make now (memoised on the state: a tuple, which no caller can change).

    Lay-offs are listed one card at a time (with each joker end that may be
    chosen); several may also be sent in one request. Going down is listed with
    one arrangement that meets the contract, if the hand can. Where the variant
    forbids keeping a single card, the plays that go out with two cards at once
    are listed too. ``now`` matters for the stock draw while claims are open.
    """
    phase = state.phase
    if phase is DRAW_PHASE and seat != state.turn:
        # The claim window (most of the moves of a game): a claim and a pass for the seats
        # the claim rules let answer (pending_claimants, memoised), while it is open.
        return _CLAIM_PASS if seat in pending_claimants(state) and not window_closed(state, now) else ()
    key = (seat, now if phase is DRAW_PHASE else None)
    cached: tuple[Move, ...] | None = state._legal.get(key)
    if cached is not None:
        return cached
    moves = tuple(_legal_moves(state, seat, now))
    state._legal[key] = moves
    return moves


def _legal_moves(s: State, seat: int, now: float | None) -> list[Move]:
    """The moves that pass the verify functions' checks, generated phase by phase
    (with the predicates those checks are worded from, so nothing is refused twice)."""
    phase = s.phase
    if phase is FINISHED_PHASE:
        return []
    if phase is OFFER_PHASE or (phase is DRAW_PHASE and seat != s.turn):
        return [_CLAIM, _PASS] if claim_problem(s, seat, now) is None else []
    if turn_problem(s, seat, _TURN_PHASES) is not None:
        return []
    if phase is DRAW_PHASE:
        return [_TAKE] if claims_still_open(s, now) else [_TAKE, _DRAW]
    hand = s.hands[seat]
    out: list[Move] = []
    if last_card_problem(s.rules, len(hand) - 1, discarding=True) is None:
        discards = _DISCARDS
        out = [discards[c] for c in sorted(set(hand))]
    if phase is FIRST_DISCARD_PHASE:
        return out
    if not s.down[seat]:
        out.extend(_legal_go_down(s, seat))
    elif may_lay_off_now(s):
        out.extend(legal_lay_offs(s, seat))
    return out


# Moves are immutable values: the same ones serve every state.
_CLAIM, _PASS, _TAKE, _DRAW = Claim(), Pass(), TakeDiscard(), DrawStock()
_CLAIM_PASS: tuple[Move, ...] = (_CLAIM, _PASS)
_DISCARDS = [Discard(c) for c in range(CARD_SLOTS)]
_TURN_PHASES = (DRAW_PHASE, PLAY_PHASE, FIRST_DISCARD_PHASE)


def _legal_go_down(s: State, seat: int) -> list[Move]:
    """One way to go down with each goal the hand can meet now (usually: the round's contract)."""
    return [move for _, contract in goals_for(s, seat) for move in _legal_go_down_with(s, seat, contract)]


def _legal_go_down_with(s: State, seat: int, contract: Contract) -> list[Move]:
    rules = s.rules
    hand = s.hands[seat]
    if len(hand) < contract.min_cards:
        return []
    plan = find_contract(hand, contract, rules)
    if plan is None:
        return []
    if contract.all_cards or last_card_problem(rules, len(hand) - contract.min_cards, discarding=False) is None:
        return [GoDown(tuple(cards for _, cards in plan))]
    # Keeping one card is refused here: go out with it, in longer melds or laid off on the table.
    full = find_contract(hand, Contract(contract.books, contract.runs, all_cards=True), rules)
    if full is not None:
        return [GoDown(tuple(cards for _, cards in full))]
    for last in sorted(set(hand)):
        plan = find_contract(remove_cards(hand, [last]) or (), contract, rules)
        if plan is None:
            continue
        for meld in s.melds:
            for end in lay_off_options(meld, last, rules):
                return [GoDown(tuple(cards for _, cards in plan), (LayOffPart(meld.id, (last,), end),))]
    return []


def _playable_counts(s: State, seat: int) -> list[int]:
    """Counts of the cards ``seat`` may lay off now (the hold rule keeps one back)."""
    counts = counts_of(s.hands[seat])
    if s.rules.hold_rule and s.held >= 0:
        counts[s.held] -= 1
    return counts


@lru_cache(maxsize=16384)
def _meld_lay_offs(
    meld: Meld, joker_limit: int | None, title: str
) -> tuple[tuple[int, tuple[LayOffPart, ...], tuple[LayOff, ...]], ...]:
    """Each card that fits ``meld``: its lay-off parts (one per joker end) and the one-part
    lay-off moves (values, made once per meld: a meld stays on the table for many turns)."""
    out = []
    for card, ends in lay_off_fits_for(meld, joker_limit, title):
        parts = tuple(LayOffPart(meld.id, (card,), end) for end in ends)
        out.append((card, parts, tuple(LayOff((p,)) for p in parts)))
    return tuple(out)


def _single_lay_offs(melds: Sequence[Meld], counts: list[int], rules: Rules) -> list[LayOffPart]:
    """Each card that ``counts`` holds and that fits a meld, on each meld, with each joker end."""
    parts: list[LayOffPart] = []
    limit, title = rules.joker_limit, rules.title
    for meld in melds:
        for card, fitting, _ in _meld_lay_offs(meld, limit, title):
            if counts[card] > 0:
                parts.extend(fitting)
    return parts


class _TableLayOffs:
    """The one-part lay-offs of every meld of the last table asked about, as ``(card,
    moves)`` in meld order: states in a row share one tuple of melds until a meld changes
    (one slot, swapped whole)."""

    __slots__ = ("slot",)

    def __init__(self) -> None:
        self.slot: tuple[Any, list[tuple[int, tuple[LayOff, ...]]]] = (None, [])

    def of(self, melds: tuple[Meld, ...], rules: Rules) -> list[tuple[int, tuple[LayOff, ...]]]:
        key, fits = self.slot
        limit, title = rules.joker_limit, rules.title
        if key is None or key[0] is not melds or key[1] != limit or key[2] != title:
            fits = [(card, moves) for meld in melds for card, _, moves in _meld_lay_offs(meld, limit, title)]
            self.slot = ((melds, limit, title), fits)
        return fits


_TABLE_LAY_OFFS = _TableLayOffs()


def legal_lay_offs(s: State, seat: int) -> list[Move]:
    rules = s.rules
    counts = _playable_counts(s, seat)
    if last_card_problem(rules, len(s.hands[seat]) - 1, discarding=False) is None:
        out: list[Move] = []
        for card, moves in _TABLE_LAY_OFFS.of(s.melds, rules):
            if counts[card] > 0:
                out.extend(moves)
        return out
    singles = _single_lay_offs(s.melds, counts, rules)
    # Keeping a single card is refused: with two cards, list the pairs that go out.
    out = []
    for first in singles:
        melds = list(s.melds)
        card = first.cards[0]
        melds[first.meld] = lay_off_card(melds[first.meld], card, first.joker_to, rules)
        counts[card] -= 1
        out.extend(LayOff((first, second)) for second in _single_lay_offs(melds, counts, rules))
        counts[card] += 1
    return out
