"""Tables: ``/v1/games`` (create, list, a game's view, seats, the replay). The blueprint's
moves are in :mod:`.actions`, its events in :mod:`.events`."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, request
from flask.views import MethodView

from mayi_service.api.common import StrictBlueprint, answers_decision, bearer_token, document_errors
from mayi_service.api.context import services
from mayi_service.api.schemas import games as s
from mayi_service.api.schemas.events import ReplaySchema
from mayi_service.api.schemas.fields import union_ref
from mayi_service.bots.seats import seat_for_bot
from mayi_service.play.games import Viewer
from mayi_service.problem_types import Problem, ServiceError
from mayi_service.storage import codec

blp = StrictBlueprint("games", __name__, url_prefix="/v1/games", description="Tables and play")

#: The view, with its ETag.
VIEW = union_ref("GameView")
ETAG = {"ETag": {"$ref": "#/components/headers/ETag"}}


def etag(view: dict[str, Any]) -> str:
    """The ETag of ``view``: ``"<game>-<version>-<seat or p>"``."""
    seat = view.get("seat")
    return f'"{view["id"]}-{view["version"]}-{"p" if seat is None else seat}"'


def with_etag(view: dict[str, Any]) -> Response:
    """``view`` as a JSON response with its ETag."""
    # Views are JSON-ready already (the engine builds them); the GameView schema documents
    # them, and tests/service/contract/test_responses_match_the_document.py holds them to it.
    headers = [("Content-Type", "application/json"), ("ETag", etag(view)), ("Cache-Control", "no-cache")]
    return current_app.response_class(codec.dump_bytes(view), headers=headers)


@blp.route("")
class Games(MethodView):
    @blp.arguments(
        s.GameCreateSchema(),
        example={
            "variant": "may_i",
            "seats": 3,
            "options": {"claim_seconds": 15, "turn_seconds": 60},
            "players": [{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}],
        },
    )
    @blp.response(201, s.GameCreatedSchema)
    @blp.doc(operationId="createGame")
    @document_errors(400, 409, 413, 422, 429, 503)
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """Create a table

        `players` fills seats at once and returns their tokens (shown only once);
        the game starts when every seat is taken. A `test` block (seed, stacked
        decks, start round) makes the table unrated. Creating tables has its own
        rate limit per client address (429), and one address may have only so many
        open tables, waiting or playing, at once (409 `too_many_open_tables`).
        A table still waiting for players an hour after its last seat was taken expires.
        """
        games = services().games
        record, issued = games.create(data, owner=request.remote_addr or "?")
        view = games.view(record, Viewer(None))
        return {"game_id": record.id, "seats": issued, "game": view}

    @blp.arguments(s.ListGamesQuerySchema(), location="query")
    @blp.response(200, s.GameListSchema)
    @blp.doc(operationId="listGames")
    @document_errors(422, 429, 503)
    def get(self, query: dict[str, Any]) -> dict[str, Any]:
        """List tables

        Newest first, filtered by `status` and `variant`, a page at a time.
        """
        return services().games.list_games(query.get("status"), query.get("variant"), query["page"], query["page_size"])


@blp.route("/<string:game_id>", parameters=["IfNoneMatch"])
class Game(MethodView):
    @blp.response(200, VIEW, headers=ETAG)
    @blp.alt_response(
        304, description="Not modified: the view still has the `ETag` sent in `If-None-Match`", headers=ETAG
    )
    @blp.doc(operationId="getGame")
    @document_errors(401, 403, 404, 429, 503)
    def get(self, game_id: str) -> Response:
        """The caller's view of a game

        With a seat token: the seat's hand and its legal moves. Without: the
        public view. Honors `If-None-Match`.
        """
        games = services().games
        record, viewer = games.load_as(game_id, bearer_token())
        view = games.view(record, viewer)
        if view.get("legal"):
            answers_decision()  # the seat's decision: not counted by the rate limits
        tag = etag(view)
        if request.headers.get("If-None-Match") == tag:
            response = current_app.response_class(status=304)
            response.headers["ETag"] = tag
            return response
        return with_etag(view)


@blp.route("/<string:game_id>/seats")
class Seats(MethodView):
    @blp.arguments(s.SeatInSchema(), example={"name": "Dee"})
    @blp.response(201, s.SeatTakenSchema)
    @blp.doc(operationId="takeSeat")
    @document_errors(400, 401, 404, 409, 413, 422, 429, 503)
    def post(self, data: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Take an open seat

        The lowest open seat, or `seat` if given. Returns the seat token (shown
        only once). The game starts when every seat is taken. Sent with a bot's
        token, the bot takes the seat and acts there with that same token (the
        answer's `token` is it); a bot holds at most one seat per game (409
        `bot_already_seated`). With `house_bot` (and no token), one of the
        reference bots takes the seat and the service plays it (the answer's
        `token` is null; 409 `house_bots_unavailable` on a server without a job
        worker).
        """
        games = services().games
        house_bot = data.get("house_bot")
        if house_bot is not None:
            if bearer_token():
                raise ServiceError(
                    Problem.VALIDATION_ERROR, "house_bot: a house bot takes a seat without a token; send none"
                )
            services().house.require()
            record, seat, _ = games.take_seat(game_id, data.get("name"), data.get("seat"), house_bot=house_bot)
            return {"seat": seat, "token": None, "game": games.view(record, Viewer(None))}
        if "name" not in data:
            raise ServiceError(Problem.VALIDATION_ERROR, "name: required (or house_bot, to seat a house bot)")
        # A bot token takes the seat for its bot (mayi_service.bots.seats).
        registry = services().bots
        bot_seat = seat_for_bot(registry, game_id, bearer_token())
        if bot_seat is not None:
            bot_id, digest, token = bot_seat
            record, seat, _ = games.take_seat(game_id, data["name"], data.get("seat"), digest, bot_id=bot_id)
            registry.took_seat(bot_id, game_id, seat)
            return {"seat": seat, "token": token, "game": games.view(record, Viewer(seat))}
        record, seat, token = games.take_seat(game_id, data["name"], data.get("seat"))
        return {"seat": seat, "token": token, "game": games.view(record, Viewer(seat))}


@blp.route("/<string:game_id>/replay")
class Replay(MethodView):
    @blp.response(200, ReplaySchema)
    @blp.doc(operationId="getReplay")
    @document_errors(404, 409, 429, 503)
    def get(self, game_id: str) -> dict[str, Any]:
        """The whole game, after it ends

        Every event with every private detail (each dealt hand, each card drawn),
        and the seed of the shuffles.
        """
        return services().games.replay(game_id)
