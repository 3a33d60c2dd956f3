"""What the service plays and how it is: the variants (``GET /v1/variants``), the house bots
and the health check."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from mayi_bots import NAMES as HOUSE_BOTS
from mayi_service.api.schemas.fields import required, variant_name
from mayi_service.api.schemas.views import ContractSchema


class HealthSchema(Schema):
    status = required(fields.String, validate=validate.OneOf(["ok", "unavailable"]))
    redis = required(fields.Boolean)


class DeckStepSchema(Schema):
    up_to_players = required(fields.Integer, metadata={"description": "Tables of up to this many players"})
    decks = required(fields.Integer, metadata={"description": "Decks shuffled together (each with its jokers)"})


class VariantRoundSchema(Schema):
    number = required(fields.Integer, metadata={"description": "From 1"})
    deal = required(fields.Integer, metadata={"description": "Cards dealt to each player"})
    contract = required(fields.Nested, ContractSchema, metadata={"description": "What going down takes this round"})


class ClaimRulesSchema(Schema):
    name = required(fields.String, metadata={"description": 'What a claim of the upcard is called ("May I", "Buy")'})
    penalty = required(fields.Integer, metadata={"description": "Stock cards a claimant takes with the upcard"})
    limit = required(
        fields.Integer, allow_none=True, metadata={"description": "Claims a seat may win in one round; null: no limit"}
    )
    discarder_may_claim = required(
        fields.Boolean, metadata={"description": "The discarder may claim their own discard (last in priority)"}
    )


class OptionSpecSchema(Schema):
    name = required(fields.String, metadata={"description": "The option's name in a table's `options`"})
    type = required(fields.String, validate=validate.OneOf(["boolean", "integer", "number"]))
    minimum = required(fields.Float, allow_none=True, metadata={"description": "null: a boolean"})
    maximum = required(fields.Float, allow_none=True, metadata={"description": "null: a boolean"})
    default = required(fields.Raw, metadata={"description": "The variant's value when a table does not set it"})
    house = required(fields.Boolean, metadata={"description": "A house rule of the variant (not a clock or safeguard)"})
    description = required(fields.String)


class VariantSchema(Schema):
    name = variant_name(metadata={"description": "The variant's name, as `variant` in requests"})
    title = required(fields.String, metadata={"description": "The game's name as people write it"})
    min_players = required(fields.Integer)
    max_players = required(fields.Integer)
    decks = required(
        fields.List, fields.Nested(DeckStepSchema), metadata={"description": "Decks by table size, ascending"}
    )
    rounds = required(fields.List, fields.Nested(VariantRoundSchema), metadata={"description": "The rounds, in order"})
    card_points = required(
        fields.Dict,
        keys=fields.String(),
        values=fields.Integer(),
        metadata={
            "description": "Points a card left in hand scores against its holder when a round ends, by rank "
            "as card codes write it (A, 2-9, T, J, Q, K; JK: a joker)"
        },
    )
    joker_limit = required(
        fields.Integer, allow_none=True, metadata={"description": "Most jokers in one meld; null: no limit"}
    )
    distinct_book_ranks = required(
        fields.Boolean, metadata={"description": "The books of one contract must be of different ranks"}
    )
    claim = required(fields.Nested, ClaimRulesSchema, metadata={"description": "Claiming the upcard out of turn"})
    options = required(
        fields.List,
        fields.Nested(OptionSpecSchema),
        metadata={"description": "The table options the variant accepts, with its defaults"},
    )


class VariantListSchema(Schema):
    variants = required(fields.List, fields.Nested(VariantSchema), metadata={"description": "Every variant served"})


class HouseBotListSchema(Schema):
    house_bots = required(
        fields.List,
        fields.String(validate=validate.OneOf(HOUSE_BOTS)),
        metadata={"description": "The names `house_bot` takes when seating one, weakest first"},
    )
