"""The bot ladder: ``/v1/ladder`` (entries, leaderboard, matches, rating history)."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from mayi_engine import VARIANTS
from mayi_service.api import schemas as s
from mayi_service.api.bots import bots
from mayi_service.api.common import StrictBlueprint, bearer_token, document_errors, services
from mayi_service.api.problems import Problem, ServiceError
from mayi_service.ladder.matches import Ladder
from mayi_service.ladder.ratings import PROVISIONAL_GAMES

blp = StrictBlueprint("ladder", __name__, url_prefix="/v1/ladder", description="The bot ladder")

#: The most games at once a bot may ask for.
MAX_GAMES = 20


def ladder() -> Ladder:
    return services().ladder


class EntryInSchema(s.StrictSchema):
    variant = s.Text(required=True, validate=s.RegisteredVariant())
    max_games = s.StrictInteger(
        load_default=1,
        validate=validate.Range(1, MAX_GAMES),
        metadata={"description": f"Ladder games the bot plays at once (1 to {MAX_GAMES}; default 1)"},
    )


class EntrySchema(Schema):
    variant = s._variant()
    bot_id = s._req(fields.String)
    name = s._req(fields.String)
    max_games = s._req(fields.Integer, metadata={"description": "Ladder games the bot plays at once"})
    entered_at = s._req(fields.Float)


class VariantQuerySchema(s.StrictSchema):
    variant = s.Text(required=True, validate=s.RegisteredVariant())


class MatchesQuerySchema(s.StrictSchema):
    variant = s.Text(required=True, validate=s.RegisteredVariant())
    status = s.Text(load_default="finished", validate=validate.OneOf(["finished", "playing"]))
    limit = s.QueryInteger(load_default=20, validate=validate.Range(1, 100))


class HistoryQuerySchema(s.StrictSchema):
    variant = s.Text(required=True, validate=s.RegisteredVariant())
    limit = s.QueryInteger(load_default=100, validate=validate.Range(1, 1000))


class StandingSchema(Schema):
    rank = s._req(fields.Integer, metadata={"description": "1: the best conservative rating"})
    bot_id = s._req(fields.String, metadata={"description": "The bot's id; house bots: house-<name>"})
    name = s._req(fields.String)
    house = s._req(fields.Boolean, metadata={"description": "One of the service's reference bots"})
    rating = s._req(
        fields.Float, metadata={"description": "The conservative estimate mu - 3 sigma, which orders the board"}
    )
    mu = s._req(fields.Float, metadata={"description": "The estimated skill (Plackett-Luce; starts at 25)"})
    sigma = s._req(fields.Float, metadata={"description": "The uncertainty of mu (starts at 25/3)"})
    games = s._req(fields.Integer)
    wins = s._req(fields.Integer, metadata={"description": "Games finished in first place (shared places count)"})
    mean_score = s._req(
        fields.Float, allow_none=True, metadata={"description": "Mean final score (penalty points: lower is better)"}
    )
    provisional = s._req(
        fields.Boolean, metadata={"description": f"Fewer than {PROVISIONAL_GAMES} games: the rating is still rough"}
    )
    max_games = s._req(fields.Integer)


class LadderBotSchema(StandingSchema):
    variant = s._variant()
    entered = s._req(fields.Boolean, metadata={"description": "On the leaderboard now (false once it left)"})
    rank = s._req(
        fields.Integer, allow_none=True, metadata={"description": "Its place on the board; null once it left"}
    )
    max_games = s._req(fields.Integer, allow_none=True, metadata={"description": "null once it left"})


class LeaderboardSchema(Schema):
    variant = s._variant()
    standings = s._req(fields.List, fields.Nested(StandingSchema))


class MatchSeatSchema(Schema):
    seat = s._req(fields.Integer)
    bot_id = s._req(fields.String)
    name = s._req(fields.String)
    house = s._req(fields.String, allow_none=True, metadata={"description": "The reference bot's name, if a house bot"})


class MatchResultSchema(MatchSeatSchema):
    score = s._req(fields.Integer, metadata={"description": "Final score (penalty points)"})
    place = s._req(fields.Integer, metadata={"description": "1 = best; equal scores share the place"})
    rating_before = s._req(fields.Float)
    rating_after = s._req(fields.Float)


class MatchSchema(Schema):
    match_id = s._req(fields.String)
    variant = s._variant()
    game_id = s._req(fields.String, metadata={"description": "Its replay: GET /v1/games/{game_id}/replay"})
    status = s._req(fields.String, validate=validate.OneOf(["playing", "finished"]))
    created_at = s._req(fields.Float)
    finished_at = s._req(fields.Float, allow_none=True)
    seats = s._req(fields.List, fields.Nested(MatchSeatSchema))
    standings = s._req(
        fields.List,
        fields.Nested(MatchResultSchema),
        allow_none=True,
        metadata={"description": "Per seat, once finished"},
    )


class MatchListSchema(Schema):
    matches = s._req(fields.List, fields.Nested(MatchSchema))


class HistoryEntrySchema(Schema):
    match_id = s._req(fields.String)
    game_id = s._req(fields.String)
    at = s._req(fields.Float, metadata={"description": "When the match's result was applied (Unix seconds)"})
    place = s._req(fields.Integer)
    players = s._req(fields.Integer)
    score = s._req(fields.Integer)
    mu = s._req(fields.Float)
    sigma = s._req(fields.Float)
    rating = s._req(fields.Float, metadata={"description": "mu - 3 sigma after this match"})


class HistorySchema(Schema):
    variant = s._variant()
    bot_id = s._req(fields.String)
    history = s._req(fields.List, fields.Nested(HistoryEntrySchema), metadata={"description": "Oldest first"})


@blp.route("")
class Leaderboard(MethodView):
    @blp.arguments(VariantQuerySchema, location="query")
    @blp.response(200, LeaderboardSchema)
    @blp.doc(operationId="getLeaderboard")
    @document_errors(422, 429, 503)
    def get(self, query: dict[str, Any]) -> dict[str, Any]:
        """The leaderboard of a variant

        Every bot entered now (house bots too), best first by the conservative rating
        `mu - 3 sigma`, with its games, wins, mean score and whether its rating is
        still provisional. A bot that left is not listed; its rating and history
        stay (`GET /v1/ladder/bots/{bot_id}`).
        """
        return {"variant": query["variant"], "standings": ladder().leaderboard(query["variant"])}


@blp.route("/entries")
class Entries(MethodView):
    @blp.arguments(EntryInSchema, example={"variant": "may_i", "max_games": 2})
    @blp.response(201, EntrySchema)
    @blp.doc(operationId="enterLadder")
    @document_errors(400, 401, 413, 422, 429, 503)
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """Enter the ladder of a variant

        Needs a bot token. The matchmaking seats the bot in up to `max_games` ladder
        games at once; it plays them as any game (decisions or webhooks), under the
        ladder's clocks. Entering again changes `max_games`; the rating stays.
        """
        bot_id = bots().require(bearer_token())
        entry = ladder().enter_bot(data["variant"], bot_id, data["max_games"])
        return {"variant": data["variant"], "bot_id": bot_id, **entry.to_json()}


@blp.route("/entries/<string:variant>")
class Entry(MethodView):
    @blp.response(204)
    @blp.doc(operationId="leaveLadder")
    @document_errors(401, 404, 429, 503)
    def delete(self, variant: str) -> Response:
        """Leave the ladder of a variant

        No new match seats the bot; matches in progress are played out. It leaves
        the leaderboard; its rating and history are kept (`GET
        /v1/ladder/bots/{bot_id}` and its history), and entering again resumes them.
        """
        bot_id = bots().require(bearer_token())
        if variant not in VARIANTS or not ladder().leave(variant, bot_id):
            raise ServiceError(Problem.NOT_ENTERED, f"variant: this bot is not entered in the {variant!r} ladder")
        return current_app.response_class(status=204)


@blp.route("/matches")
class Matches(MethodView):
    @blp.arguments(MatchesQuerySchema, location="query")
    @blp.response(200, MatchListSchema)
    @blp.doc(operationId="listLadderMatches")
    @document_errors(422, 429, 503)
    def get(self, query: dict[str, Any]) -> dict[str, Any]:
        """Recent ladder matches

        `status=finished` (the default): the latest finished matches, newest first,
        with their standings; `status=playing`: those in progress. Each names its
        game: its replay is `GET /v1/games/{game_id}/replay`.
        """
        return {"matches": ladder().matches(query["variant"], query["limit"], query["status"])}


@blp.route("/bots/<string:bot_id>")
class LadderBot(MethodView):
    @blp.arguments(VariantQuerySchema, location="query")
    @blp.response(200, LadderBotSchema)
    @blp.doc(operationId="getLadderBot")
    @document_errors(404, 422, 429, 503)
    def get(self, query: dict[str, Any], bot_id: str) -> dict[str, Any]:
        """A bot's rating in a variant

        Its leaderboard row (rating, games, wins, mean score), entered or not: a bot
        that left the ladder is no longer on the leaderboard (`entered` false, `rank`
        null), and keeps its rating and history here and at `.../history`.
        """
        found = ladder().standing(query["variant"], bot_id)
        if found is None:
            raise ServiceError(Problem.NOT_FOUND, f"bot_id: {bot_id!r} never entered the {query['variant']!r} ladder")
        return {"variant": query["variant"], **found}


@blp.route("/bots/<string:bot_id>/history")
class History(MethodView):
    @blp.arguments(HistoryQuerySchema, location="query")
    @blp.response(200, HistorySchema)
    @blp.doc(operationId="getRatingHistory")
    @document_errors(404, 422, 429, 503)
    def get(self, query: dict[str, Any], bot_id: str) -> dict[str, Any]:
        """A bot's rating history in a variant

        Its rating after each of its last `limit` ladder matches, oldest first.
        """
        board = ladder()
        history = board.history(query["variant"], bot_id, query["limit"])
        if not history and board.standing(query["variant"], bot_id) is None:
            raise ServiceError(Problem.NOT_FOUND, f"bot_id: {bot_id!r} never entered the {query['variant']!r} ladder")
        return {"variant": query["variant"], "bot_id": bot_id, "history": history}
