"""Bot accounts (registering, the profile, tokens, webhooks and their delivery log) and the
decisions a bot polls for."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from marshmallow import Schema, ValidationError, fields, validate

from mayi_service.api.context import services
from mayi_service.api.schemas.fields import AsIs, Name, QueryFloat, StrictSchema, Text, ints, required
from mayi_service.api.schemas.views import PlayingViewSchema
from mayi_service.bots import addresses

#: A webhook URL's form as the document states it: http(s), a host, no user name, spaces,
#: control characters or #fragment (:func:`addresses.url_problem` checks the rest).
URL_PATTERN = "^[hH][tT][tT][pP][sS]?://[^/?#@\\s\u0000-\u001f\u007f]+([/?][^#\\s\u0000-\u001f\u007f]*)?$"


class WebhookUrl(Text):
    """A webhook URL: https (or http), a host, no user name or password, at most 2048
    characters; an IP address that is not public is refused unless the operator allows it."""

    def __init__(self, **kwargs: Any) -> None:
        description = (
            f"Where the service POSTs the bot's decisions (signed webhooks): an https:// (or http://) URL "
            f"with a host, no user name or password, at most {addresses.MAX_URL_LENGTH} characters. "
            "A host that is (or resolves to) a loopback, private, link-local or metadata address is "
            "refused unless the operator allows it. null: no webhook (poll for decisions)"
        )
        super().__init__(
            allow_none=True,
            validate=validate.Length(max=addresses.MAX_URL_LENGTH),
            metadata={"description": description, "pattern": URL_PATTERN},
            **kwargs,
        )

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        url: str = super()._deserialize(value, attr, data, **kwargs)
        problem = addresses.url_problem(url)
        if problem:
            raise ValidationError(f"must be {problem}")
        host = urlsplit(url).hostname or ""
        literal = addresses.literal_address(host)
        why = addresses.address_problem(literal) if literal else None
        if why and not services().settings.webhook_allow_private:
            raise ValidationError(addresses.refused_address(host if host == literal else f"{host} ({literal})", why))
        return url


class BotInSchema(StrictSchema):
    name = Name(required=True)
    webhook_url = WebhookUrl(load_default=None)


class BotCreatedSchema(Schema):
    bot_id = required(fields.String)
    name = required(fields.String)
    token = required(fields.String, metadata={"description": "The bot's bearer token (mayi_bot_...), shown only once"})
    webhook_secret = required(
        fields.String,
        metadata={"description": "The secret (whsec_...) that signs the bot's webhook deliveries, shown only once"},
    )
    webhook_url = required(fields.String, allow_none=True, metadata={"description": "Where decisions are POSTed"})


class BotUpdateSchema(StrictSchema):
    webhook_url = WebhookUrl(required=True)


class WebhookSecretSchema(Schema):
    bot_id = required(fields.String)
    webhook_secret = required(
        fields.String, metadata={"description": "The new signing secret (whsec_...), shown only once"}
    )
    previous_secret_valid_until = required(
        fields.Float,
        metadata={"description": "Until then (Unix seconds) deliveries are signed by the new and the old secret"},
    )


class DeliverySchema(Schema):
    webhook_id = required(
        fields.String, metadata={"description": "The delivery's webhook-id (the same for each attempt)"}
    )
    game_id = required(fields.String)
    seat = required(fields.Integer)
    version = required(fields.Integer, metadata={"description": "The game's version when the attempt was made"})
    key = required(
        fields.String,
        metadata={"description": "The decision's key (as in `GET /v1/bots/me/decisions`): one delivery per key"},
    )
    attempt = required(fields.Integer, metadata={"description": "1 for the first attempt, then 2, 3..."})
    at = required(fields.Float, metadata={"description": "When the attempt started (Unix seconds)"})
    url = required(fields.String)
    status = required(
        fields.Integer, allow_none=True, metadata={"description": "The receiver's HTTP status (null: no answer)"}
    )
    error = required(
        fields.String,
        allow_none=True,
        metadata={"description": "Why the attempt failed or the URL was refused (null: delivered)"},
    )
    duration_ms = required(fields.Float)
    response_truncated = required(
        fields.Boolean, metadata={"description": "The answer's body was longer than the service reads"}
    )
    next_retry_at = required(
        fields.Float, allow_none=True, metadata={"description": "When the next attempt is due (null: none)"}
    )


class DeliveryListSchema(Schema):
    deliveries = required(fields.List, fields.Nested(DeliverySchema), metadata={"description": "Newest first"})


class BotGameSchema(Schema):
    game_id = required(fields.String)
    seats = ints()


class BotProfileSchema(Schema):
    bot_id = required(fields.String)
    name = required(fields.String)
    created_at = required(fields.Float)
    webhook_url = required(
        fields.String, allow_none=True, metadata={"description": "Where decisions are POSTed (null: none)"}
    )
    games = required(
        fields.List,
        fields.Nested(BotGameSchema),
        metadata={"description": "The games it sits in that have not ended"},
    )


class BotTokenSchema(Schema):
    bot_id = required(fields.String)
    token = required(
        fields.String, metadata={"description": "The new bearer token, shown only once; the old one is void"}
    )


#: Most keys one decisions poll may skip.
MAX_SKIP = 200


class DecisionsQuerySchema(StrictSchema):
    wait = QueryFloat(load_default=0, validate=validate.Range(0, 60))
    skip = fields.List(
        Text(validate=validate.Length(1, 64)),
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
    game_id = required(fields.String)
    seat = required(fields.Integer)
    version = required(fields.Integer, metadata={"description": "The game's version (send it as If-Match to be safe)"})
    key = required(
        fields.String,
        metadata={
            "description": (
                "The decision's key: the same while the seat's choices in this turn stay the same "
                "(another seat's answer to the upcard leaves it unless it changes the seat's legal "
                "moves). Send it as `skip` to wait for a change instead of answering"
            )
        },
    )
    deadline = required(
        fields.Float,
        allow_none=True,
        metadata={"description": "When the clock plays this decision (Unix seconds)"},
    )
    view = required(
        AsIs,
        PlayingViewSchema,
        metadata={"description": "The seat's view of the game under way, with its legal moves"},
    )


class DecisionListSchema(Schema):
    decisions = required(fields.List, fields.Nested(DecisionSchema))
    games = required(
        fields.Integer,
        metadata={"description": "Games the bot sits in that have not ended (0: nothing more will come until it sits)"},
    )
    skipped = required(
        fields.List,
        fields.String(),
        metadata={"description": "The keys of `skip` that are still waiting (the others changed or were played)"},
    )
