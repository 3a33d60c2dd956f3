"""What a seat (or a spectator) may see of a game.

:func:`player_view` is the only way the state leaves the engine for players: the
public part for everybody, plus the seat's own hand and legal moves for a seat.
It never holds another seat's cards, the stock order or the seed.

A view is a new dict, but the parts below its top level (the round, the seats,
the melds, the legal moves ...) are shared with other views where they are equal
(they are built once and kept): a caller may add or replace top-level keys (the
service adds its own) but must treat everything below them as read-only.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .cards import CARD_SLOTS, card_code
from .claims import pending_claimants
from .clocks import deadline
from .legal import legal_moves
from .melds import Meld, meld_json
from .moves import Claim, Discard, DrawStock, LayOff, Move, Pass, TakeDiscard, move_to_json
from .rounds import standings
from .rules import Rules
from .state import DRAW_PHASE, FINISHED_PHASE, OFFER_PHASE, PLAY_PHASE, GameStatus, RoundResult, State

_CODES = [card_code(c) for c in range(CARD_SLOTS)]
_PLAYING, _FINISHED = GameStatus.PLAYING, GameStatus.FINISHED


@lru_cache(maxsize=8192)
def _meld_view(meld: Meld) -> dict[str, Any]:
    return meld_json(meld)


@lru_cache(maxsize=4096)
def _result_view(result: RoundResult) -> dict[str, Any]:
    return {"round": result.round, "out": result.out if result.out >= 0 else None, "scores": list(result.scores)}


def _seats_view(
    names: tuple[str, ...],
    counts: tuple[int, ...],
    down: tuple[bool, ...],
    totals: tuple[int, ...],
    claims_used: tuple[int, ...],
    absent: tuple[bool, ...],
    claim_limit: int | None,
) -> list[dict[str, Any]]:
    """The ``seats`` part of views. It stays the same until a hand's size, a total, a claim
    count or a seat's presence changes (through each claim and pass of a claim window), so
    the last one is kept and reused while it is equal. (One slot, not a cache of many: parts
    kept alive in numbers make the garbage collector's full passes much longer.)"""
    key = (names, counts, down, totals, claims_used, absent, claim_limit)
    last, shown = _LAST_SEATS.slot
    if last != key:
        shown = [
            {
                "seat": i,
                "name": name,
                "hand_count": count,
                "down": is_down,
                "total": total,
                "claims_used": used,
                "claims_left": None if claim_limit is None else claim_limit - used,
                "absent": away,
            }
            for i, (name, count, is_down, total, used, away) in enumerate(
                zip(names, counts, down, totals, claims_used, absent, strict=True)
            )
        ]
        _LAST_SEATS.slot = (key, shown)
    return shown


#: The ``round`` part of views, by (rules object, round, players); the rules object is kept
#: beside it, so its id is never reused while it is in here.
_ROUNDS: dict[tuple[int, int, int], tuple[Rules, dict[str, Any]]] = {}


def _round_view(rules: Rules, number: int, players: int) -> dict[str, Any]:
    key = (id(rules), number, players)
    known = _ROUNDS.get(key)
    if known is None or known[0] is not rules:
        if len(_ROUNDS) > 1024:
            _ROUNDS.clear()
        part = {
            "number": number,
            "of": len(rules.rounds),
            "dealer": (number - 2) % players,
            "first": (number - 1) % players,
            "contract": rules.rounds[number - 1].contract.as_json(),
        }
        known = _ROUNDS[key] = (rules, part)
    return known[1]


#: The JSON of the moves without fields, and of each card's discard (made once: most legal
#: moves are these).
_FIXED: dict[type, dict[str, Any]] = {kind: move_to_json(kind()) for kind in (Claim, Pass, TakeDiscard, DrawStock)}
_DISCARD_VIEWS = [move_to_json(Discard(c)) for c in range(CARD_SLOTS)]


class _LayOffViews:
    """The JSON of the lay-off moves met lately, by the move's id (each beside its move, so
    an id is never reused while it is here): the legal moves hand out the same one-card
    lay-off values turn after turn while their melds stay on the table."""

    __slots__ = ("known",)
    LIMIT = 1024

    def __init__(self) -> None:
        self.known: dict[int, tuple[LayOff, dict[str, Any]]] = {}

    def of(self, move: LayOff) -> dict[str, Any]:
        known = self.known.get(id(move))
        if known is None or known[0] is not move:
            if len(self.known) >= self.LIMIT:
                self.known = {}
            known = self.known[id(move)] = (move, move_to_json(move))
        return known[1]


_LAY_OFF_VIEWS = _LayOffViews()


def _legal_view(moves: tuple[Move, ...]) -> list[dict[str, Any]]:
    """The JSON of legal moves: ``move_to_json``'s, made once for the moves without fields
    and for each card's discard, and kept a while for lay-offs."""
    fixed = _FIXED
    out: list[dict[str, Any]] = []
    for m in moves:
        kind = type(m)
        if kind is Discard:
            out.append(_DISCARD_VIEWS[m.card])  # type: ignore[union-attr]
        elif kind in fixed:
            out.append(fixed[kind])
        elif kind is LayOff:
            out.append(_LAY_OFF_VIEWS.of(m))  # type: ignore[arg-type]
        else:
            out.append(move_to_json(m))
    return out


class _Last:
    """The JSON of the last tuple of melds (or results) shown: states in a row share the
    same tuple until it changes, so a view reuses the list (one slot, swapped atomically)."""

    __slots__ = ("slot",)

    def __init__(self) -> None:
        self.slot: tuple[Any, list[dict[str, Any]]] = ((), [])


_LAST_MELDS = _Last()
_LAST_RESULTS = _Last()
_LAST_SEATS = _Last()


def _melds_view(melds: tuple[Meld, ...]) -> list[dict[str, Any]]:
    key, shown = _LAST_MELDS.slot
    if key is not melds:
        shown = [_meld_view(m) for m in melds]
        _LAST_MELDS.slot = (melds, shown)
    return shown


def _results_view(results: tuple[RoundResult, ...]) -> list[dict[str, Any]]:
    key, shown = _LAST_RESULTS.slot
    if key is not results:
        shown = [_result_view(r) for r in results]
        _LAST_RESULTS.slot = (results, shown)
    return shown


def status(state: State) -> GameStatus:
    """The game's :class:`GameStatus` (``playing`` or ``finished``)."""
    return state.status


def player_view(state: State, seat: int | None = None, now: float | None = None) -> dict[str, Any]:
    """The view of ``seat`` (``None``: a spectator's public view). Plain JSON-ready data,
    read-only below its top level (see the module's note)."""
    s = state
    rules = s.rules
    phase = s.phase
    discard = s.discard
    codes = _CODES
    names = s.names
    players = len(names)
    turn = s.turn
    actor = s.actor
    upcard = discard[-1] if discard and (phase is DRAW_PHASE or phase is OFFER_PHASE) else None
    window = None
    if upcard is not None:
        if phase is DRAW_PHASE:
            window = {
                "card": codes[upcard],
                "discarder": s.discarder if s.discarder >= 0 else None,
                "claims": list(s.claims),
                "passes": list(s.passes),
                "pending": list(pending_claimants(s)),
                "closes_at": s.claim_closes_at,
            }
        else:
            window = {
                "card": codes[upcard],
                "discarder": None,
                "claims": [],
                "passes": [(turn + k) % players for k in range((actor - turn) % players)],
                "pending": [actor],
                "closes_at": s.turn_deadline,
            }
    view: dict[str, Any] = {
        "variant": rules.name,
        "status": _FINISHED if phase is FINISHED_PHASE else _PLAYING,
        "round": _round_view(rules, s.round, players),
        "phase": phase._value_,  # (the member's plain attribute: `.value` is a property, ten times slower)
        "turn": turn,
        "actor": actor,
        "upcard": None if upcard is None else codes[upcard],
        "discard_top": codes[discard[-1]] if discard else None,
        "stock_count": len(s.stock),
        "discard_count": len(discard),
        "reshuffles": s.reshuffles,
        "claim_window": window,
        "seats": _seats_view(
            names, tuple(map(len, s.hands)), s.down, s.totals, s.claims_used, s.absent, rules.claim_limit
        ),
        "melds": _melds_view(s.melds),
    }
    if rules.free_goal_order:
        view["goals_done"] = [[g + 1 for g in done] for done in s.goals_done]
    view["deadline"] = deadline(s)
    view["results"] = _results_view(s.results)
    if phase is FINISHED_PHASE:
        view["places"] = standings(s)
    if seat is not None:
        view["seat"] = seat
        view["hand"] = list(map(codes.__getitem__, s.hands[seat]))
        view["held"] = codes[s.held] if s.held >= 0 and seat == turn and phase is PLAY_PHASE else None
        view["legal"] = _legal_view(legal_moves(s, seat, now))
    return view
