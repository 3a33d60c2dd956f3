"""The bot ladder: ``/v1/ladder`` (entries, leaderboard, matches, rating history)."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app
from flask.views import MethodView

from mayi_engine import VARIANTS
from mayi_service.api.bots import bots
from mayi_service.api.common import StrictBlueprint, bearer_token, document_errors
from mayi_service.api.context import services
from mayi_service.api.schemas import ladder as s
from mayi_service.ladder.matches import Ladder
from mayi_service.problem_types import Problem, ServiceError

blp = StrictBlueprint("ladder", __name__, url_prefix="/v1/ladder", description="The bot ladder")


def ladder() -> Ladder:
    return services().ladder


@blp.route("")
class Leaderboard(MethodView):
    @blp.arguments(s.VariantQuerySchema(), location="query")
    @blp.response(200, s.LeaderboardSchema)
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
    @blp.arguments(s.EntryInSchema(), example={"variant": "may_i", "max_games": 2})
    @blp.response(201, s.EntrySchema)
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
    @blp.arguments(s.MatchesQuerySchema(), location="query")
    @blp.response(200, s.MatchListSchema)
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
    @blp.arguments(s.VariantQuerySchema(), location="query")
    @blp.response(200, s.LadderBotSchema)
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
    @blp.arguments(s.HistoryQuerySchema(), location="query")
    @blp.response(200, s.HistorySchema)
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
