"""The moves: ``POST /v1/games/{game_id}/turn/draw``, ``.../turn/discard``, ``.../claims``,
``.../melds``, ``.../lay-offs``; each reads its body with its schema, checks ``If-Match`` and
``Idempotency-Key``, and answers the seat's new view."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import Response, request
from flask.views import MethodView
from marshmallow import Schema

from mayi_engine import move_from_json
from mayi_service.api.common import answers_decision, bearer_token, document_errors, is_number
from mayi_service.api.context import services
from mayi_service.api.games import ETAG, VIEW, blp, with_etag
from mayi_service.api.schemas import moves as s
from mayi_service.play.decisions import KEY_PREFIX
from mayi_service.problem_types import Problem, ServiceError

#: What an action can answer besides 200 (400 and 413: a body that is not JSON, or too large).
ACTION_ERRORS = (400, 401, 403, 404, 409, 412, 413, 422, 429, 503)

#: Headers an action reads.
ACTION_HEADERS = ["IfMatch", "IdempotencyKey"]


def _if_match(game_id: str) -> int | None:
    """The version named by ``If-Match`` (a version number, or an ETag of this game's view);
    ``None`` for no header or ``*``. An ETag of another game can never match: -1."""
    raw = request.headers.get("If-Match")
    if raw is None or raw.strip() == "*":
        return None
    text = _if_match_text(raw)
    if text.startswith(KEY_PREFIX):  # a decision's key: see _if_key
        return None
    if "-" in text:  # an ETag of ours: "<game>-<version>-<seat>" (game ids may hold "-")
        head, _, _seat = text.rpartition("-")
        game, _, version = head.rpartition("-")
        if not is_number(version):
            raise ServiceError(Problem.VALIDATION_ERROR, "If-Match: give the game version you saw, or its ETag")
        return int(version) if game == game_id else -1
    if not is_number(text):
        raise ServiceError(Problem.VALIDATION_ERROR, "If-Match: give the game version you saw (a whole number)")
    return int(text)


def _if_match_text(raw: str) -> str:
    text = raw.strip()
    if text.startswith("W/"):
        text = text[2:]
    return text.strip('"')


def _if_key() -> str | None:
    """The decision key named by ``If-Match: key:<key>`` (the seat-scoped precondition), or ``None``."""
    raw = request.headers.get("If-Match")
    if raw is None:
        return None
    text = _if_match_text(raw)
    if not text.startswith(KEY_PREFIX):
        return None
    key = text[len(KEY_PREFIX) :]
    if not 1 <= len(key) <= 64:
        raise ServiceError(Problem.VALIDATION_ERROR, "If-Match: give key:<the decision's key>, 1 to 64 characters")
    return key


def _idempotency_key() -> str | None:
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not 1 <= len(key) <= 255:
        raise ServiceError(Problem.VALIDATION_ERROR, "Idempotency-Key: 1 to 255 characters")
    return key


def _act(game_id: str, move_type: str, body: dict[str, Any]) -> Response:
    """Play the move of type ``move_type`` (as ``legal`` names it) whose fields are ``body``
    (as its schema loaded it): the engine's own JSON reader makes the move."""
    move = move_from_json({**body, "type": move_type})
    key = _idempotency_key()
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest() if key else ""
    view = services().games.act(
        game_id,
        bearer_token(),
        move,
        if_match=_if_match(game_id),
        if_key=_if_key(),
        idempotency_key=key,
        body_digest=f"{request.path}\x00{digest}" if key else "",
    )
    answers_decision()  # a move the game took: not counted by the rate limits
    return with_etag(view)


def _move_view(
    name: str, path: str, move_type: str, schema: Schema, example: dict[str, Any], operation_id: str, doc: str
) -> type[MethodView]:
    """The view ``name`` of ``POST /v1/games/{game_id}<path>``, registered on the blueprint:
    it reads the body with ``schema`` and plays the move of type ``move_type`` (:func:`_act`);
    ``doc`` is the operation's summary and description."""

    def post(self: MethodView, body: dict[str, Any], game_id: str) -> Response:
        return _act(game_id, move_type, body)

    post.__doc__ = doc
    post = document_errors(*ACTION_ERRORS)(post)
    post = blp.doc(operationId=operation_id)(post)
    post = blp.response(200, VIEW, headers=ETAG)(post)
    post = blp.arguments(schema, example=example)(post)
    view = type(name, (MethodView,), {"post": post})
    blp.route(f"/<string:game_id>{path}", parameters=ACTION_HEADERS)(view)
    return view


Draw = _move_view(
    "Draw",
    "/turn/draw",
    "draw",
    s.DrawInSchema(),
    {"source": "stock"},
    "drawCard",
    """Draw from the stock or take the discard

    The stock draw waits until every eligible seat has answered the upcard
    or the claim window has closed (`claims_open`, with `retry_after`).
    """,
)

DiscardCard = _move_view(
    "DiscardCard",
    "/turn/discard",
    "discard",
    s.DiscardInSchema(),
    {"card": "QS"},
    "discardCard",
    """Discard a card, ending the turn

    The card must be in the hand and may not be the one taken this turn (`held`).
    """,
)

Claims = _move_view(
    "Claims",
    "/claims",
    "claim",
    s.ClaimInSchema(),
    {"claim": True},
    "claimUpcard",
    """Claim (May I / buy) or pass the upcard

    Also answers the May I first-upcard offer. Priority, not arrival order,
    decides who gets a claimed card.
    """,
)

Melds = _move_view(
    "Melds",
    "/melds",
    "go_down",
    s.MeldsInSchema(),
    {"melds": [["7H", "7S", "7D"], ["4C", "5C", "JK", "7C"]], "lay_offs": []},
    "goDown",
    """Go down

    Lay down exactly the round's contract; runs low to high, a joker where
    the card it stands for goes. Optional lay-offs in the same request
    (where the variant allows them on the go-down turn), all or nothing.
    """,
)

LayOffs = _move_view(
    "LayOffs",
    "/lay-offs",
    "lay_off",
    s.LayOffsInSchema(),
    {"lay_offs": [{"meld": 3, "cards": ["8C"], "joker_to": "high"}]},
    "layOff",
    """Lay off cards on melds on the table

    All or nothing. `joker_to` says where a joker goes (a joker laid off on
    a run, or one displaced by the card it stood for).
    """,
)
