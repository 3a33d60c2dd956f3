"""What a seat (or a spectator) may see of a game.

:func:`player_view` is the only way the state leaves the engine for players: the
public part for everybody, plus the seat's own hand and legal moves for a seat.
It never holds another seat's cards, the stock order or the seed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .cards import CARD_SLOTS, card_code, card_codes
from .clocks import deadline
from .game import pending_claimants, standings
from .legal import legal_moves
from .melds import Meld, meld_json
from .moves import Discard, LayOff, Move, move_to_json
from .rules import Contract
from .state import GameStatus, Phase, RoundResult, State


@lru_cache(maxsize=8192)
def _meld_view(meld: Meld) -> dict[str, Any]:
    return meld_json(meld)


# Parts of views that many views share are built once (values are hashable and
# immutable) and copied shallowly into each view: the lists inside them are
# shared, so a caller must treat views as read-only below their top level.


@lru_cache(maxsize=64)
def _contract_view(contract: Contract) -> dict[str, Any]:
    return contract.as_json()


#: The JSON of each contract object met, by identity (a few per variant; the object is kept
#: beside its JSON, so an id is never reused while it is in here).
_CONTRACTS: dict[int, tuple[Contract, dict[str, Any]]] = {}


def _contract_json(contract: Contract) -> dict[str, Any]:
    """A new dict of the contract's JSON (its ``as_json``, made once per contract object)."""
    known = _CONTRACTS.get(id(contract))
    if known is None or known[0] is not contract:
        if len(_CONTRACTS) > 1024:
            _CONTRACTS.clear()
        known = _CONTRACTS[id(contract)] = (contract, _contract_view(contract))
    return dict(known[1])


@lru_cache(maxsize=4096)
def _result_view(result: RoundResult) -> dict[str, Any]:
    return {"round": result.round, "out": result.out if result.out >= 0 else None, "scores": list(result.scores)}


@lru_cache(maxsize=16384)
def _move_view(move: Move) -> dict[str, Any]:
    return move_to_json(move)


_CODES = [card_code(c) for c in range(CARD_SLOTS)]


def _legal_view(moves: tuple[Move, ...]) -> list[dict[str, Any]]:
    """The JSON of legal moves: discards and one-card lay-offs (most of them) written at once,
    the rest from a cache; each a new dict, as ``move_to_json`` writes it."""
    codes = _CODES
    out: list[dict[str, Any]] = []
    for m in moves:
        if type(m) is Discard:
            out.append({"type": "discard", "card": codes[m.card]})
        elif type(m) is LayOff and len(m.parts) == 1 and len(m.parts[0].cards) == 1:  # as legal_moves lists them
            p = m.parts[0]
            part: dict[str, Any] = {"meld": p.meld, "cards": [codes[p.cards[0]]]}
            if p.joker_to is not None:
                part["joker_to"] = p.joker_to
            out.append({"type": "lay_off", "lay_offs": [part]})
        else:
            out.append(dict(_move_view(m)))
    return out


class _Last:
    """The JSON of the last tuple of melds (or results) shown: states in a row share the
    same tuple until it changes, so a view reuses the list (one slot, swapped atomically)."""

    __slots__ = ("slot",)

    def __init__(self) -> None:
        self.slot: tuple[Any, list[dict[str, Any]]] = ((), [])


_LAST_MELDS = _Last()
_LAST_RESULTS = _Last()


def _melds_view(melds: tuple[Meld, ...]) -> list[dict[str, Any]]:
    key, shown = _LAST_MELDS.slot
    if key is not melds:
        shown = [_meld_view(m) for m in melds]
        _LAST_MELDS.slot = (melds, shown)
    return [dict(m) for m in shown]


def _results_view(results: tuple[RoundResult, ...]) -> list[dict[str, Any]]:
    key, shown = _LAST_RESULTS.slot
    if key is not results:
        shown = [_result_view(r) for r in results]
        _LAST_RESULTS.slot = (results, shown)
    return [dict(r) for r in shown]


def _goals_view(s: State) -> dict[str, Any]:
    """With the free goal order: the goals (numbered as the rounds) each seat has met."""
    if not s.rules.free_goal_order:
        return {}
    return {"goals_done": [[g + 1 for g in done] for done in s.goals_done]}


def status(state: State) -> GameStatus:
    """The game's :class:`GameStatus` (``playing`` or ``finished``)."""
    return state.status


def player_view(state: State, seat: int | None = None, now: float | None = None) -> dict[str, Any]:
    """The view of ``seat`` (``None``: a spectator's public view). Plain JSON-ready data."""
    s = state
    rules = s.rules
    phase = s.phase
    discard = s.discard
    codes = _CODES
    players = len(s.names)
    turn = s.turn
    upcard = discard[-1] if discard and (phase is Phase.DRAW or phase is Phase.FIRST_OFFER) else None
    window = None
    if upcard is not None:
        if phase is Phase.DRAW:
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
                "passes": [(turn + k) % players for k in range((s.actor - turn) % players)],
                "pending": [s.actor],
                "closes_at": s.turn_deadline,
            }
    claims_left = rules.claim_limit
    view: dict[str, Any] = {
        "variant": rules.name,
        "status": GameStatus.FINISHED if phase is Phase.FINISHED else GameStatus.PLAYING,
        "round": {
            "number": s.round,
            "of": len(rules.rounds),
            "dealer": (s.round - 2) % players,
            "first": (s.round - 1) % players,
            "contract": _contract_json(rules.rounds[s.round - 1].contract),
        },
        "phase": phase.value,
        "turn": turn,
        "actor": s.actor,
        "upcard": None if upcard is None else codes[upcard],
        "discard_top": codes[discard[-1]] if discard else None,
        "stock_count": len(s.stock),
        "discard_count": len(discard),
        "reshuffles": s.reshuffles,
        "claim_window": window,
        "seats": [
            {
                "seat": i,
                "name": name,
                "hand_count": len(hand),
                "down": down,
                "total": total,
                "claims_used": used,
                "claims_left": None if claims_left is None else claims_left - used,
                "absent": absent,
            }
            for i, (name, hand, down, total, used, absent) in enumerate(
                zip(s.names, s.hands, s.down, s.totals, s.claims_used, s.absent, strict=True)
            )
        ],
        "melds": _melds_view(s.melds),
        **_goals_view(s),
        "deadline": deadline(s),
        "results": _results_view(s.results),
    }
    if s.phase is Phase.FINISHED:
        view["places"] = standings(s)
    if seat is not None:
        view["seat"] = seat
        view["hand"] = card_codes(s.hands[seat])
        view["held"] = card_code(s.held) if s.held >= 0 and seat == s.turn and s.phase is Phase.PLAY else None
        view["legal"] = _legal_view(legal_moves(s, seat, now))
    return view
