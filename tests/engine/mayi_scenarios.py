"""Helpers for the rule scenarios: stacked tables, moves from card codes, checked play.

(A module of its own, not ``conftest.py``: every test directory has a ``conftest``
module, so ``from conftest import ...`` would pick whichever pytest loaded last.)

A scenario names the cards it cares about and lets :func:`table` build the stacked
deck: ``hands`` (one code string per seat, dealt one card at a time clockwise from
the round's first player, padded with harmless filler cards), the ``upcard`` and the
``stock`` below it (top first). The rest of the decks is shuffled below those.
Every move goes through :func:`act`, which also checks the invariants after it:
every physical card in exactly one place, and exactly the right seats able to act.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest

from mayi_engine import Event, event_to_json, legal_moves, new_game, pending_claimants, play
from mayi_engine.cards import NATURALS, build_decks, card_codes, counts_of, parse_card
from mayi_engine.errors import IllegalMoveError, MayIError
from mayi_engine.moves import Discard, GoDown, LayOff, LayOffPart, Move, Pass
from mayi_engine.rules import Rules
from mayi_engine.state import Phase, State, dumps, loads, to_json

NAMES = ("Ann", "Bob", "Cy", "Di", "Ed", "Flo", "Gus", "Hal")


# ---------------------------------------------------------------------------
# Cards


def card(code: str) -> int:
    """One card from its code: ``card("TH")``."""
    return parse_card(code)


def cards(codes: str | Iterable[str]) -> tuple[int, ...]:
    """Cards from a space-separated string of codes (or a list of codes), in order."""
    items = codes.split() if isinstance(codes, str) else list(codes)
    return tuple(parse_card(c) for c in items)


def hand_of(state: State, seat: int) -> list[str]:
    """A seat's hand as sorted codes (easy to compare in asserts)."""
    return sorted(card_codes(state.hands[seat]))


# Filler cards pad the hands a scenario does not spell out. Walking ranks in steps of
# five and suits one by one, any 13 consecutive fillers have 13 different ranks and
# no two neighbours share a suit, so a padded hand holds no book and no run.
_FILLER_ORDER: tuple[int, ...] = tuple(NATURALS[((5 * i) % 13) * 4 + i % 4] for i in range(52))


def stack_for(
    rules: Rules,
    players: int,
    *,
    round: int = 1,
    hands: Sequence[str] | Mapping[int, str] = (),
    upcard: str | None = None,
    stock: str = "",
) -> list[int]:
    """The top of a round's stock (top first) that deals ``hands``, then ``upcard``, then ``stock``.

    Cards not named in ``hands`` are fillers, never a card named anywhere in the
    scenario. Without an ``upcard`` the next filler is turned up.
    """
    deal = rules.rounds[round - 1].deal
    named: dict[int, tuple[int, ...]] = {}
    items = hands.items() if isinstance(hands, Mapping) else enumerate(hands)
    for seat, text in items:
        named[seat] = cards(text)
        if len(named[seat]) > deal:
            raise ValueError(f"seat {seat} is given {len(named[seat])} cards; round {round} deals {deal}")
    up = cards(upcard) if upcard else ()
    below = cards(stock)
    mentioned = [c for h in named.values() for c in h] + list(up) + list(below)
    left = counts_of(build_decks(rules.decks_for(players)))
    for c in mentioned:
        left[c] -= 1
        if left[c] < 0:
            raise ValueError("the scenario names more copies of a card than the decks hold")
    avoid = set(mentioned)
    pool = [c for _ in range(rules.decks_for(players)) for c in _FILLER_ORDER if c not in avoid]
    fillers = iter(pool)
    full: dict[int, list[int]] = {}
    for seat in range(players):
        given = list(named.get(seat, ()))
        full[seat] = given + [next(fillers) for _ in range(deal - len(given))]
    first = (round - 1) % players
    order: list[int] = []
    for i in range(deal):
        for k in range(players):
            order.append(full[(first + k) % players][i])
    order.extend(up or (next(fillers),))
    order.extend(below)
    return order


def table(
    rules: Rules,
    players: int | Sequence[str] = 3,
    *,
    round: int = 1,
    hands: Sequence[str] | Mapping[int, str] = (),
    upcard: str | None = None,
    stock: str = "",
    stack: str | None = None,
    later: Mapping[int, Sequence[int]] | None = None,
    options: dict[str, Any] | None = None,
    seed: bytes = bytes(32),
    now: float = 0.0,
) -> State:
    """A test table starting at ``round``, its stock stacked as :func:`stack_for` builds it.

    ``stack`` gives the raw top of the stock instead (card codes, top first);
    ``later`` stacks further rounds (``{round: stack_for(...)}``).
    """
    names = list(NAMES[:players]) if isinstance(players, int) else list(players)
    rules = rules.with_options(options)
    top = (
        list(cards(stack))
        if stack is not None
        else stack_for(rules, len(names), round=round, hands=hands, upcard=upcard, stock=stock)
    )
    stacked: list[Sequence[int] | None] = [None] * len(rules.rounds)
    stacked[round - 1] = top
    for r, s in (later or {}).items():
        stacked[r - 1] = s
    while stacked and stacked[-1] is None:
        stacked.pop()
    return new_game(rules, names, seed, now=now, stacked=stacked, start_round=round)


# ---------------------------------------------------------------------------
# Moves from codes


def down(*melds: str, lay: Sequence[LayOffPart] = ()) -> GoDown:
    """``down("3C 3D 3S", "4H 5H JK 7H")``: go down with these melds (runs low to high)."""
    return GoDown(tuple(cards(m) for m in melds), tuple(lay))


def part(meld: int, codes: str, joker_to: str | None = None) -> LayOffPart:
    return LayOffPart(meld, cards(codes), joker_to)


def lay(meld: int, codes: str, joker_to: str | None = None) -> LayOff:
    """``lay(3, "8H")``: lay off cards on one meld."""
    return LayOff((part(meld, codes, joker_to),))


def lay_parts(*parts: LayOffPart) -> LayOff:
    return LayOff(tuple(parts))


def discard(code: str) -> Discard:
    return Discard(card(code))


# ---------------------------------------------------------------------------
# Playing with checks


def invariant_problems(state: State) -> list[str]:
    """Every physical card in exactly one place; exactly the right seats able to act."""
    problems = []
    if state.phase is Phase.FINISHED:
        return problems
    placed = [c for h in state.hands for c in h] + list(state.stock) + list(state.discard)
    placed += [c for m in state.melds for c in m.cards]
    if counts_of(placed) != counts_of(build_decks(state.rules.decks_for(state.players))):
        problems.append("the cards in play are not exactly the decks")
    may_act = {seat for seat in range(state.players) if legal_moves(state, seat)}
    expected = {state.actor} | set(pending_claimants(state))
    if may_act != expected:
        problems.append(f"seats {sorted(may_act)} may act, expected {sorted(expected)}")
    return problems


#: An event as the service logs it (``event_to_json``): what the scenarios assert on.
JsonEvent = dict[str, Any]


def as_json(events: Iterable[Event]) -> list[JsonEvent]:
    """The engine's events in their JSON form (checking each is a typed, frozen record)."""
    out = []
    for event in events:
        assert isinstance(event, Event), f"{event!r} is not an Event"
        out.append(event_to_json(event))
    return out


def act(state: State, seat: int | None, move: Move, now: float = 0.0) -> tuple[State, list[JsonEvent]]:
    """Play one move and check the invariants of the new state; its events as JSON."""
    before = dumps(state)
    new, events = play(state, seat, move, now)
    assert dumps(state) == before, "play() changed the state it was given"
    assert to_json(loads(dumps(new))) == to_json(new), "the state does not round-trip through JSON"
    problems = invariant_problems(new)
    assert not problems, problems
    return new, as_json(events)


def acts(state: State, *steps: tuple[Any, ...], now: float = 0.0) -> tuple[State, list[JsonEvent]]:
    """Play ``(seat, move)`` or ``(seat, move, now)`` steps in order; all their events (as JSON)."""
    out: list[JsonEvent] = []
    for step in steps:
        seat, move, *when = step
        state, events = act(state, seat, move, when[0] if when else now)
        out.extend(events)
    return state, out


def refused(
    state: State, seat: int | None, move: Move, code: str, *words: str, now: float = 0.0, error: type = IllegalMoveError
) -> MayIError:
    """Assert that ``move`` is refused with ``code`` and a message holding every one of ``words``."""
    with pytest.raises(error) as info:
        play(state, seat, move, now)
    exc = info.value
    assert exc.code == code, f"code {exc.code!r}, expected {code!r}: {exc}"
    message = str(exc).lower()
    for word in words:
        assert word.lower() in message, f"{word!r} not in {str(exc)!r}"
    return exc


def with_stock(state: State, keep: int) -> State:
    """The same state with all but the top ``keep`` stock cards moved under the
    discard pile (the upcard stays on top), so the stock runs out soon."""
    s = state.clone()
    bottom = s.stock[: len(s.stock) - keep]
    s.stock = s.stock[len(s.stock) - keep :]
    s.discard = bottom + s.discard
    return s


def kinds(events: Sequence[JsonEvent]) -> list[str]:
    return [e["type"] for e in events]


def of_kind(events: Sequence[JsonEvent], kind: str) -> list[JsonEvent]:
    return [e for e in events if e["type"] == kind]


def drawn(events: Sequence[JsonEvent]) -> list[tuple[int, str, bool]]:
    """``(seat, card, penalty)`` of each stock draw, in order."""
    return [(e["seat"], e["private"]["card"], e["data"]["penalty"]) for e in events if e["type"] == "drew"]


def pass_all(state: State, now: float = 0.0) -> State:
    """Every pending claimant passes (clockwise from the player on turn)."""
    n = state.players
    for seat in sorted(pending_claimants(state), key=lambda p: (p - state.turn) % n):
        state, _ = act(state, seat, Pass(), now)
    return state
