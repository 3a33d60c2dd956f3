"""The moves: ``POST /v1/games/{game_id}/turn/draw``, ``.../turn/discard``, ``.../claims``,
``.../melds``, ``.../lay-offs``; each reads its body with its schema, checks ``If-Match`` and
``Idempotency-Key``, and answers the seat's new view."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import Response, request
from flask.views import MethodView

from mayi_engine import move_from_json
from mayi_service.api import schemas as s
from mayi_service.api.common import answers_decision, bearer_token, document_errors, is_number
from mayi_service.api.context import services
from mayi_service.api.games import ETAG, VIEW, blp, with_etag
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


@blp.route("/<string:game_id>/turn/draw", parameters=ACTION_HEADERS)
class Draw(MethodView):
    @blp.arguments(s.DrawInSchema(), example={"source": "stock"})
    @blp.response(200, VIEW, headers=ETAG)
    @blp.doc(operationId="drawCard")
    @document_errors(*ACTION_ERRORS)
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Draw from the stock or take the discard

        The stock draw waits until every eligible seat has answered the upcard
        or the claim window has closed (`claims_open`, with `retry_after`).
        """
        return _act(game_id, "draw", body)


@blp.route("/<string:game_id>/turn/discard", parameters=ACTION_HEADERS)
class DiscardCard(MethodView):
    @blp.arguments(s.DiscardInSchema(), example={"card": "QS"})
    @blp.response(200, VIEW, headers=ETAG)
    @blp.doc(operationId="discardCard")
    @document_errors(*ACTION_ERRORS)
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Discard a card, ending the turn

        The card must be in the hand and may not be the one taken this turn (`held`).
        """
        return _act(game_id, "discard", body)


@blp.route("/<string:game_id>/claims", parameters=ACTION_HEADERS)
class Claims(MethodView):
    @blp.arguments(s.ClaimInSchema(), example={"claim": True})
    @blp.response(200, VIEW, headers=ETAG)
    @blp.doc(operationId="claimUpcard")
    @document_errors(*ACTION_ERRORS)
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Claim (May I / buy) or pass the upcard

        Also answers the May I first-upcard offer. Priority, not arrival order,
        decides who gets a claimed card.
        """
        return _act(game_id, "claim", body)


@blp.route("/<string:game_id>/melds", parameters=ACTION_HEADERS)
class Melds(MethodView):
    @blp.arguments(s.MeldsInSchema(), example={"melds": [["7H", "7S", "7D"], ["4C", "5C", "JK", "7C"]], "lay_offs": []})
    @blp.response(200, VIEW, headers=ETAG)
    @blp.doc(operationId="goDown")
    @document_errors(*ACTION_ERRORS)
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Go down

        Lay down exactly the round's contract; runs low to high, a joker where
        the card it stands for goes. Optional lay-offs in the same request
        (where the variant allows them on the go-down turn), all or nothing.
        """
        return _act(game_id, "go_down", body)


@blp.route("/<string:game_id>/lay-offs", parameters=ACTION_HEADERS)
class LayOffs(MethodView):
    @blp.arguments(s.LayOffsInSchema(), example={"lay_offs": [{"meld": 3, "cards": ["8C"], "joker_to": "high"}]})
    @blp.response(200, VIEW, headers=ETAG)
    @blp.doc(operationId="layOff")
    @document_errors(*ACTION_ERRORS)
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Lay off cards on melds on the table

        All or nothing. `joker_to` says where a joker goes (a joker laid off on
        a run, or one displaced by the card it stood for).
        """
        return _act(game_id, "lay_off", body)
