"""Legal-move generation: every move a seat may make now.

:func:`legal_moves` is the list a view's ``legal`` shows and the bots choose from.
It is tested to agree with :func:`~mayi_engine.game.check_move` on random states.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import counts_of, remove_cards
from .contracts import goals_for
from .game import is_eligible, pending_claimants
from .melds import Meld, candidate_cards, lay_off_card, lay_off_options
from .moves import Claim, Discard, DrawStock, GoDown, LayOff, LayOffPart, Move, Pass, TakeDiscard
from .rules import Contract, Rules
from .solver import find_contract
from .state import Phase, State


def legal_moves(state: State, seat: int, now: float | None = None) -> list[Move]:
    """Every move ``seat`` may make now.

    Lay-offs are listed one card at a time (with each joker end that may be
    chosen); several may also be sent in one request. Going down is listed with
    one arrangement that meets the contract, if the hand can. Where the variant
    forbids keeping a single card, the plays that go out with two cards at once
    are listed too. ``now`` matters for the stock draw while claims are open.
    """
    key = (seat, now if state.phase is Phase.DRAW else None)
    cached: list[Move] | None = state._legal.get(key)
    if cached is not None:
        return cached
    moves = _legal_moves(state, seat, now)
    state._legal[key] = moves
    return moves


def _legal_moves(s: State, seat: int, now: float | None) -> list[Move]:
    phase = s.phase
    if phase is Phase.FINISHED:
        return []
    if phase is Phase.FIRST_OFFER:
        return [Claim(), Pass()] if seat == s.actor else []
    if phase is Phase.DRAW:
        if seat != s.turn:
            closed = now is not None and s.claim_closes_at is not None and now >= s.claim_closes_at
            return [] if closed or not is_eligible(s, seat) else [Claim(), Pass()]
        moves: list[Move] = [TakeDiscard()]
        pending = pending_claimants(s)
        if not pending or (now is not None and s.claim_closes_at is not None and now >= s.claim_closes_at):
            moves.append(DrawStock())
        return moves
    if seat != s.actor:
        return []
    hand = s.hands[seat]
    rules = s.rules
    distinct = sorted(set(hand))
    if phase is Phase.FIRST_DISCARD:
        return [Discard(c) for c in distinct]
    out: list[Move] = []
    if len(hand) > 1 or rules.out_by_discard:
        out = [Discard(c) for c in distinct]
    if not s.down[seat]:
        out.extend(_legal_go_down(s, seat))
    elif not s.went_down or rules.lay_off_on_go_down_turn:
        out.extend(legal_lay_offs(s, seat))
    return out


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
    if contract.all_cards or rules.out_by_discard or len(hand) != contract.min_cards + 1:
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


def _single_lay_offs(melds: Sequence[Meld], counts: list[int], rules: Rules) -> list[LayOffPart]:
    parts: list[LayOffPart] = []
    playable = {c for c in range(len(counts)) if counts[c] > 0}
    for meld in melds:
        for card in sorted(playable & candidate_cards(meld, rules)):
            for end in lay_off_options(meld, card, rules):
                parts.append(LayOffPart(meld.id, (card,), end))
    return parts


def legal_lay_offs(s: State, seat: int) -> list[Move]:
    rules = s.rules
    counts = _playable_counts(s, seat)
    singles = _single_lay_offs(s.melds, counts, rules)
    if rules.out_by_discard or len(s.hands[seat]) != 2:
        return [LayOff((p,)) for p in singles]
    # Keeping a single card is refused: with two cards, list the pairs that go out.
    out: list[Move] = []
    for first in singles:
        melds = list(s.melds)
        card = first.cards[0]
        melds[first.meld] = lay_off_card(melds[first.meld], card, first.joker_to, rules)
        counts[card] -= 1
        out.extend(LayOff((first, second)) for second in _single_lay_offs(melds, counts, rules))
        counts[card] += 1
    return out
