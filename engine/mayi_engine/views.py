"""What a seat (or a spectator) may see of a game.

:func:`player_view` is the only way the state leaves the engine for players: the
public part for everybody, plus the seat's own hand and legal moves for a seat.
It never holds another seat's cards, the stock order or the seed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .cards import card_code, card_codes
from .clocks import deadline
from .game import pending_claimants, standings
from .legal import legal_moves
from .melds import Meld, meld_json
from .moves import Move, move_to_json
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


@lru_cache(maxsize=4096)
def _result_view(result: RoundResult) -> dict[str, Any]:
    return {"round": result.round, "out": result.out if result.out >= 0 else None, "scores": list(result.scores)}


@lru_cache(maxsize=16384)
def _move_view(move: Move) -> dict[str, Any]:
    return move_to_json(move)


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
    contract = s.rules.rounds[s.round - 1].contract
    upcard = s.upcard
    window = None
    if s.phase is Phase.DRAW and upcard is not None:
        window = {
            "card": card_code(upcard),
            "discarder": s.discarder if s.discarder >= 0 else None,
            "claims": list(s.claims),
            "passes": list(s.passes),
            "pending": list(pending_claimants(s)),
            "closes_at": s.claim_closes_at,
        }
    elif s.phase is Phase.FIRST_OFFER and upcard is not None:
        window = {
            "card": card_code(upcard),
            "discarder": None,
            "claims": [],
            "passes": [(s.turn + k) % s.players for k in range((s.actor - s.turn) % s.players)],
            "pending": [s.actor],
            "closes_at": s.turn_deadline,
        }
    claims_left = s.rules.claim_limit
    view: dict[str, Any] = {
        "variant": s.rules.name,
        "status": status(s),
        "round": {
            "number": s.round,
            "of": len(s.rules.rounds),
            "dealer": s.dealer,
            "first": s.first_player,
            "contract": dict(_contract_view(contract)),
        },
        "phase": s.phase.value,
        "turn": s.turn,
        "actor": s.actor,
        "upcard": card_code(upcard) if upcard is not None else None,
        "discard_top": card_code(s.discard[-1]) if s.discard else None,
        "stock_count": len(s.stock),
        "discard_count": len(s.discard),
        "reshuffles": s.reshuffles,
        "claim_window": window,
        "seats": [
            {
                "seat": i,
                "name": s.names[i],
                "hand_count": len(s.hands[i]),
                "down": s.down[i],
                "total": s.totals[i],
                "claims_used": s.claims_used[i],
                "claims_left": None if claims_left is None else claims_left - s.claims_used[i],
                "absent": s.absent[i],
            }
            for i in range(s.players)
        ],
        "melds": [dict(_meld_view(m)) for m in s.melds],
        **_goals_view(s),
        "deadline": deadline(s),
        "results": [dict(_result_view(r)) for r in s.results],
    }
    if s.phase is Phase.FINISHED:
        view["places"] = standings(s)
    if seat is not None:
        view["seat"] = seat
        view["hand"] = card_codes(s.hands[seat])
        view["held"] = card_code(s.held) if s.held >= 0 and seat == s.turn and s.phase is Phase.PLAY else None
        view["legal"] = [dict(_move_view(m)) for m in legal_moves(s, seat, now)]
    return view
