"""Bot accounts and their decisions: ``/v1/bots``."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, request
from flask.views import MethodView

from mayi_service.api.common import StrictBlueprint, answers_decision, bearer_token, document_errors
from mayi_service.api.context import services
from mayi_service.api.schemas import bots as s
from mayi_service.api.waiting import WAITS, client_key, slot_errors, waiting_slot
from mayi_service.bots.polls import DecisionPage
from mayi_service.bots.seats import Bots
from mayi_service.server.deadlines import HangUp
from mayi_service.storage import codec

blp = StrictBlueprint("bots", __name__, url_prefix="/v1/bots", description="Bot accounts and decisions")


def bots() -> Bots:
    return services().bots


@blp.route("")
class BotAccounts(MethodView):
    @blp.arguments(s.BotInSchema(), example={"name": "Dealer Dan"})
    @blp.response(201, s.BotCreatedSchema)
    @blp.doc(operationId="registerBot")
    @document_errors(400, 413, 422, 429, 503)
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """Register a bot

        Returns its id and bearer token, and the secret that signs its webhook
        deliveries (both shown only once: keep them). With the token the bot takes
        seats (`POST /v1/games/{game_id}/seats`) and acts in every game it sits in.
        With a `webhook_url`, each decision waiting for it is also POSTed there.
        Registration has its own rate limit per client address (429).
        """
        return bots().register(data["name"], data.get("webhook_url"))


@blp.route("/me")
class Me(MethodView):
    @blp.response(200, s.BotProfileSchema)
    @blp.doc(operationId="getMyBot")
    @document_errors(401, 429, 503)
    def get(self) -> dict[str, Any]:
        """The bot's profile and current games

        Its id, name, webhook URL, and the games it sits in that have not ended.
        """
        registry = bots()
        return registry.profile(registry.require(bearer_token()))

    @blp.arguments(s.BotUpdateSchema(), example={"webhook_url": "https://bot.example/mayi"})
    @blp.response(200, s.BotProfileSchema)
    @blp.doc(operationId="updateMyBot")
    @document_errors(400, 401, 413, 422, 429, 503)
    def patch(self, data: dict[str, Any]) -> dict[str, Any]:
        """Set or clear the bot's webhook URL

        `webhook_url`: where the service POSTs each decision waiting for the bot;
        null stops the deliveries (the bot polls `GET /v1/bots/me/decisions`).
        """
        registry = bots()
        bot_id = registry.require(bearer_token())
        registry.set_webhook(bot_id, data["webhook_url"])
        return registry.profile(bot_id)


@blp.route("/me/token")
class Token(MethodView):
    @blp.response(200, s.BotTokenSchema)
    @blp.doc(operationId="rotateBotToken")
    @document_errors(401, 429, 503)
    def post(self) -> dict[str, Any]:
        """Rotate the bot's token

        Returns a new token (shown only once); the one that made this call stops
        working at once. The bot keeps its seats.
        """
        registry = bots()
        token = bearer_token()
        return registry.rotate_token(registry.require(token), str(token))


@blp.route("/me/webhook-secret")
class Secret(MethodView):
    @blp.response(200, s.WebhookSecretSchema)
    @blp.doc(operationId="rotateWebhookSecret")
    @document_errors(401, 429, 503)
    def post(self) -> dict[str, Any]:
        """Rotate the bot's webhook secret

        Returns a new secret (shown only once). Until `previous_secret_valid_until`
        (`MAYI_WEBHOOK_SECRET_OVERLAP_SECONDS` from now) each delivery carries two
        signatures, `v1,<by the new> v1,<by the old>`, so a receiver may switch to the
        new secret whenever it likes in that time.
        """
        registry = bots()
        return registry.rotate_secret(registry.require(bearer_token()))


@blp.route("/me/deliveries")
class Deliveries(MethodView):
    @blp.response(200, s.DeliveryListSchema)
    @blp.doc(operationId="getDeliveries")
    @document_errors(401, 429, 503)
    def get(self) -> dict[str, Any]:
        """The bot's webhook delivery log

        The latest attempts at POSTing its decisions (at most
        `MAYI_WEBHOOK_DELIVERIES_KEPT`, newest first): webhook-id, game, seat,
        attempt, time, the receiver's status or the error, duration and the next
        retry. A webhook URL the service refused to call is logged with the reason.
        """
        registry = bots()
        bot_id = registry.require(bearer_token())
        return {"deliveries": services().webhooks.recent(bot_id)}


@blp.route("/me/decisions")
class Decisions(MethodView):
    @blp.arguments(s.DecisionsQuerySchema(), location="query")
    @blp.response(200, s.DecisionListSchema)
    @blp.doc(operationId="getDecisions")
    @document_errors(401, 422, 429, 503)
    def get(self, query: dict[str, Any]) -> Response:
        """Decisions waiting for the bot, long-polling

        Every game and seat of the bot that must act now (its turn, or an answer to
        the upcard), each with the seat's view and legal moves and the deadline when
        the clock plays it. If there are none, waits up to `wait` seconds (at most
        60) for one; it also returns when the bot's last game ends. An answered
        decision is never listed again; one left unanswered is listed until the
        clock plays it, unless its `key` is given as `skip`: the bot waits on it
        (say the seat on turn, which wants the stock and must wait for the
        others' answers to the upcard), and it is listed again only once its key
        changes. Only a poll that waits counts against the cap on waiting
        long-polls per token (`MAYI_MAX_WAITS_PER_CLIENT`: 429 beyond it), and
        only while it waits.
        """
        wait, skip = query["wait"], query["skip"]
        token = bearer_token()
        settings = services().settings
        wait = min(wait, settings.max_wait_seconds)
        slot = waiting_slot(f"wait:{client_key(token)}", settings.max_waits_per_client, wait)
        hangup = HangUp(request.environ)
        try:
            with slot_errors(WAITS, settings.max_waits_per_client):
                page = bots().poll(token, wait, frozenset(skip), slot, hangup)
        finally:
            hangup.close()
        if page.decisions:
            answers_decision()  # it brings decisions: not counted by the rate limits
        if not slot.held:
            return _decisions_response(page)
        # A poll that answers at once may still hold the slot its first read took (see
        # Bots.poll): given back once the answer is sent. The WSGI server closes every
        # response it started (gunicorn and werkzeug, also when the client hung up).
        try:
            response = _decisions_response(page)
        except BaseException:
            slot.give()
            raise
        response.call_on_close(slot.give)
        return response


def _decisions_response(page: DecisionPage) -> Response:
    body = codec.dump_bytes({"decisions": page.decisions, "games": page.games, "skipped": page.skipped})
    return current_app.response_class(body, mimetype="application/json", headers={"Cache-Control": "no-store"})
