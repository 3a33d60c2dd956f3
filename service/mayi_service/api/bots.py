"""Bot accounts and their decisions: ``/v1/bots``."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from flask import Response, current_app, request
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate

from mayi_service.api import schemas as s
from mayi_service.api.common import StrictBlueprint, answers_decision, bearer_token, document_errors, services
from mayi_service.api.games import WAITS, client_key, slot_errors, waiting_slot
from mayi_service.bots import webhooks
from mayi_service.bots.polls import DecisionPage
from mayi_service.bots.seats import Bots
from mayi_service.server.deadlines import HangUp
from mayi_service.storage import codec

blp = StrictBlueprint("bots", __name__, url_prefix="/v1/bots", description="Bot accounts and decisions")


def bots() -> Bots:
    return services().bots


#: A webhook URL's form as the document states it: http(s), a host, no user name, spaces,
#: control characters or #fragment (:func:`webhooks.url_problem` checks the rest).
URL_PATTERN = "^[hH][tT][tT][pP][sS]?://[^/?#@\\s\u0000-\u001f\u007f]+([/?][^#\\s\u0000-\u001f\u007f]*)?$"


class WebhookUrl(s.Text):
    """A webhook URL: https (or http), a host, no user name or password, at most 2048
    characters; an IP address that is not public is refused unless the operator allows it."""

    def __init__(self, **kwargs: Any) -> None:
        description = (
            f"Where the service POSTs the bot's decisions (signed webhooks): an https:// (or http://) URL "
            f"with a host, no user name or password, at most {webhooks.MAX_URL_LENGTH} characters. "
            "A host that is (or resolves to) a loopback, private, link-local or metadata address is "
            "refused unless the operator allows it. null: no webhook (poll for decisions)"
        )
        super().__init__(
            allow_none=True,
            validate=validate.Length(max=webhooks.MAX_URL_LENGTH),
            metadata={"description": description, "pattern": URL_PATTERN},
            **kwargs,
        )

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        url: str = super()._deserialize(value, attr, data, **kwargs)
        problem = webhooks.url_problem(url)
        if problem:
            raise ValidationError(f"must be {problem}")
        host = urlsplit(url).hostname or ""
        literal = webhooks.literal_address(host)
        why = webhooks.address_problem(literal) if literal else None
        if why and not services().settings.webhook_allow_private:
            raise ValidationError(webhooks.refused_address(host if host == literal else f"{host} ({literal})", why))
        return url


class BotInSchema(s.StrictSchema):
    name = s.Name(required=True)
    webhook_url = WebhookUrl(load_default=None)


class BotCreatedSchema(Schema):
    bot_id = s._req(fields.String)
    name = s._req(fields.String)
    token = s._req(fields.String, metadata={"description": "The bot's bearer token (mayi_bot_...), shown only once"})
    webhook_secret = s._req(
        fields.String,
        metadata={"description": "The secret (whsec_...) that signs the bot's webhook deliveries, shown only once"},
    )
    webhook_url = s._req(fields.String, allow_none=True, metadata={"description": "Where decisions are POSTed"})


class BotUpdateSchema(s.StrictSchema):
    webhook_url = WebhookUrl(required=True)


class WebhookSecretSchema(Schema):
    bot_id = s._req(fields.String)
    webhook_secret = s._req(
        fields.String, metadata={"description": "The new signing secret (whsec_...), shown only once"}
    )
    previous_secret_valid_until = s._req(
        fields.Float,
        metadata={"description": "Until then (Unix seconds) deliveries are signed by the new and the old secret"},
    )


class DeliverySchema(Schema):
    webhook_id = s._req(
        fields.String, metadata={"description": "The delivery's webhook-id (the same for each attempt)"}
    )
    game_id = s._req(fields.String)
    seat = s._req(fields.Integer)
    version = s._req(fields.Integer, metadata={"description": "The game's version when the attempt was made"})
    key = s._req(
        fields.String,
        metadata={"description": "The decision's key (as in `GET /v1/bots/me/decisions`): one delivery per key"},
    )
    attempt = s._req(fields.Integer, metadata={"description": "1 for the first attempt, then 2, 3..."})
    at = s._req(fields.Float, metadata={"description": "When the attempt started (Unix seconds)"})
    url = s._req(fields.String)
    status = s._req(
        fields.Integer, allow_none=True, metadata={"description": "The receiver's HTTP status (null: no answer)"}
    )
    error = s._req(
        fields.String,
        allow_none=True,
        metadata={"description": "Why the attempt failed or the URL was refused (null: delivered)"},
    )
    duration_ms = s._req(fields.Float)
    response_truncated = s._req(
        fields.Boolean, metadata={"description": "The answer's body was longer than the service reads"}
    )
    next_retry_at = s._req(
        fields.Float, allow_none=True, metadata={"description": "When the next attempt is due (null: none)"}
    )


class DeliveryListSchema(Schema):
    deliveries = s._req(fields.List, fields.Nested(DeliverySchema), metadata={"description": "Newest first"})


class BotGameSchema(Schema):
    game_id = s._req(fields.String)
    seats = s._ints()


class BotProfileSchema(Schema):
    bot_id = s._req(fields.String)
    name = s._req(fields.String)
    created_at = s._req(fields.Float)
    webhook_url = s._req(
        fields.String, allow_none=True, metadata={"description": "Where decisions are POSTed (null: none)"}
    )
    games = s._req(
        fields.List,
        fields.Nested(BotGameSchema),
        metadata={"description": "The games it sits in that have not ended"},
    )


class BotTokenSchema(Schema):
    bot_id = s._req(fields.String)
    token = s._req(
        fields.String, metadata={"description": "The new bearer token, shown only once; the old one is void"}
    )


#: Most keys one decisions poll may skip.
MAX_SKIP = 200


class DecisionsQuerySchema(s.StrictSchema):
    wait = s.QueryFloat(load_default=0, validate=validate.Range(0, 60))
    skip = fields.List(
        s.Text(validate=validate.Length(1, 64)),
        load_default=list,
        validate=validate.Length(max=MAX_SKIP),
        metadata={
            "description": (
                "The `key` of a decision the bot waits on (repeat for several, at most "
                f"{MAX_SKIP}): it is left out of the answer until its key changes (the seat's "
                "legal moves change), and the poll waits for another"
            )
        },
    )


class DecisionSchema(Schema):
    game_id = s._req(fields.String)
    seat = s._req(fields.Integer)
    version = s._req(fields.Integer, metadata={"description": "The game's version (send it as If-Match to be safe)"})
    key = s._req(
        fields.String,
        metadata={
            "description": (
                "The decision's key: the same while the seat's choices in this turn stay the same "
                "(another seat's answer to the upcard leaves it unless it changes the seat's legal "
                "moves). Send it as `skip` to wait for a change instead of answering"
            )
        },
    )
    deadline = s._req(
        fields.Float,
        allow_none=True,
        metadata={"description": "When the clock plays this decision (Unix seconds)"},
    )
    view = s._req(
        s.AsIs,
        s.PlayingViewSchema,
        metadata={"description": "The seat's view of the game under way, with its legal moves"},
    )


class DecisionListSchema(Schema):
    decisions = s._req(fields.List, fields.Nested(DecisionSchema))
    games = s._req(
        fields.Integer,
        metadata={"description": "Games the bot sits in that have not ended (0: nothing more will come until it sits)"},
    )
    skipped = s._req(
        fields.List,
        fields.String(),
        metadata={"description": "The keys of `skip` that are still waiting (the others changed or were played)"},
    )


@blp.route("")
class BotAccounts(MethodView):
    @blp.arguments(BotInSchema, example={"name": "Dealer Dan"})
    @blp.response(201, BotCreatedSchema)
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
    @blp.response(200, BotProfileSchema)
    @blp.doc(operationId="getMyBot")
    @document_errors(401, 429, 503)
    def get(self) -> dict[str, Any]:
        """The bot's profile and current games

        Its id, name, webhook URL, and the games it sits in that have not ended.
        """
        registry = bots()
        return registry.profile(registry.require(bearer_token()))

    @blp.arguments(BotUpdateSchema, example={"webhook_url": "https://bot.example/mayi"})
    @blp.response(200, BotProfileSchema)
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
    @blp.response(200, BotTokenSchema)
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
    @blp.response(200, WebhookSecretSchema)
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
    @blp.response(200, DeliveryListSchema)
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
    @blp.documented_arguments(DecisionsQuerySchema, location="query")
    @blp.documented_response(200, DecisionListSchema)
    @blp.doc(operationId="getDecisions")
    @document_errors(401, 422, 429, 503)
    def get(self) -> Response:
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
        wait, skip = _decisions_query()
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


#: A ``skip`` value the lean reading of the query takes as it is (a decision key is 16 of these).
_LEAN_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _decisions_query() -> tuple[float, list[str]]:
    """``wait`` and ``skip`` of a decisions poll, read leanly: a query of the common, valid
    shape (at most one ``wait``, a plain number up to 60; ``skip`` values made of the
    characters of a decision key; nothing else) is taken as it is, which is what the schema
    would load it into; any other query goes through :class:`DecisionsQuerySchema`
    (webargs), whose errors name the field. (The schema is what the OpenAPI document shows.)"""
    req = request._get_current_object()  # type: ignore[attr-defined]
    wait, skip = 0.0, []
    for name, values in req.args.lists():
        if name == "wait" and len(values) == 1 and s._DECIMAL.fullmatch(values[0]) and float(values[0]) <= 60:
            wait = float(values[0])
        elif name == "skip" and len(values) <= MAX_SKIP and all(_LEAN_KEY.fullmatch(v) for v in values):
            skip = values
        else:
            query = StrictBlueprint.ARGUMENTS_PARSER.parse(DecisionsQuerySchema, req, location="query")
            return query["wait"], query["skip"]
    return wait, skip


def _decisions_response(page: DecisionPage) -> Response:
    body = codec.dump_bytes({"decisions": page.decisions, "games": page.games, "skipped": page.skipped})
    return current_app.response_class(body, mimetype="application/json", headers={"Cache-Control": "no-store"})
