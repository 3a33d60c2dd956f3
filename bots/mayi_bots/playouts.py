"""The playout policy of ``expert``'s search: ``strong``'s rules, fast, read off the
engine's own state, and the outcome a playout is scored by."""

from __future__ import annotations

from typing import Any

from .plans import assess

#: Points a card still missing from a plan is taken to cost, in an estimated outcome.
NEED_POINTS = 12.0


def answer_claims(eng: Any, state: Any) -> Any:
    while eng.pending_claimants(state):
        actor = int(eng.to_act(state)[0])
        state, _ = eng.play(state, actor, fast_move(eng, state, actor, eng.legal_moves(state, actor)))
    return state


def cards_missing(state: Any, hand: tuple[int, ...]) -> int:
    """``strong``'s count of the cards ``hand`` misses from the round's contract."""
    rules = state.rules
    c = rules.rounds[state.round - 1].contract
    return assess(hand, c.books, c.runs, c.all_cards, rules.joker_limit, rules.distinct_book_ranks).need


def card_use(card: int, hand: tuple[int, ...], books: int, runs: int) -> int:
    """How much ``card`` helps ``hand`` (greedy's measure, on engine cards: the others of
    its rank for books, of its suit within two ranks for runs; a joker always helps)."""
    if card == 0:
        return 100
    r, s = card >> 2, card & 3
    value = 0
    same = 0
    near = 0
    for c in hand:
        if c == 0:
            continue
        cr = c >> 2
        if cr == r:
            same += 1
        elif c & 3 == s:
            d = abs(cr - r)
            if r == 1 or cr == 1:
                d = min(d, abs((14 if r == 1 else r) - (14 if cr == 1 else cr)))
            if d <= 2:
                near += 3 - d
    if books:
        value += 3 * (same - 1)
    if runs:
        value += near
    return value


def fast_move(eng: Any, state: Any, seat: int, legal: Any) -> Any:
    """A move of ``legal`` for ``seat`` by cheap rules in ``strong``'s spirit, read off the
    engine state: claim and take a card that helps, within a hand size; go down and lay off
    at once; discard the card that helps least, the highest in points first."""
    if len(legal) == 1:
        return legal[0]
    first = type(legal[0])
    hand = state.hands[seat]
    down = state.down[seat]
    rules = state.rules
    contract = rules.rounds[state.round - 1].contract
    if first is eng.Claim or first is eng.Pass:  # a claim window, or the first upcard offered
        claim = next(m for m in legal if type(m) is eng.Claim)
        other = next(m for m in legal if type(m) is not eng.Claim)
        if down or contract.all_cards:
            return other
        card = state.discard[-1]
        helps = card_use(card, hand, contract.books, contract.runs)
        if state.phase is eng.Phase.FIRST_OFFER:
            return claim if helps >= 3 else other
        if rules.claim_limit is not None and state.claims_used[seat] >= rules.claim_limit:
            return other
        return claim if helps >= 4 and len(hand) <= 12 else other
    kinds = {type(m) for m in legal}
    if eng.TakeDiscard in kinds:
        take = next(m for m in legal if type(m) is eng.TakeDiscard)
        stock = next((m for m in legal if type(m) is eng.DrawStock), take)
        if down:
            return stock
        return take if card_use(state.discard[-1], hand, contract.books, contract.runs) >= 3 else stock
    for m in legal:
        if type(m) is eng.GoDown:
            return m
    for m in legal:
        if type(m) is eng.LayOff:
            return m
    discards = [m for m in legal if type(m) is eng.Discard]
    if not discards:
        return legal[0]
    score = rules.card_score
    if down:
        return max(discards, key=lambda m: (m.card != 0, score(m.card), m.card))
    held = state.held
    best = discards[0]
    best_key: tuple[int, int, int] | None = None
    books, runs = contract.books, contract.runs
    for m in discards:
        c = m.card
        if c == 0 or (c == held and len(discards) > 1):
            continue
        key = (card_use(c, hand, books, runs), -score(c), -c)
        if best_key is None or key < best_key:
            best, best_key = m, key
    return best


def advantage(eng: Any, state: Any, world: Any, seat: int, round_: int) -> float:
    """The mean round score of the other seats less ``seat``'s: the real ones if the round
    ended, else estimated (a hand's points, and :data:`NEED_POINTS` a card its plan misses)."""
    if len(state.results) > len(world.results):
        scores = list(state.results[len(world.results)].scores)
    else:
        scores = []
        score = state.rules.card_score
        for s, hand in enumerate(state.hands):
            points: float = sum(score(c) for c in hand)
            if not state.down[s]:
                points += NEED_POINTS * cards_missing(state, hand)
            scores.append(points)
    mine = float(scores[seat])
    others = [float(x) for s, x in enumerate(scores) if s != seat]
    return sum(others) / len(others) - mine
