"""An error as the service sends it: RFC 9457 problem details (``application/problem+json``)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from mayi_service.api.schemas.fields import required
from mayi_service.problem_types import PROBLEM_CODES


class ProblemSchema(Schema):
    """An error as RFC 9457 problem details: ``code`` is stable; some codes add fields of their own."""

    type = required(fields.String, metadata={"description": "A URI naming the code: .../problems/<code>"})
    title = required(
        fields.String, metadata={"description": "The code in words (the same for every problem of a code)"}
    )
    status = required(fields.Integer, metadata={"description": "The HTTP status"})
    detail = required(fields.String, metadata={"description": "What went wrong, in words a player understands"})
    code = required(
        fields.String, validate=validate.OneOf(PROBLEM_CODES), metadata={"description": "Stable error code"}
    )
    errors = fields.List(
        fields.String(),
        metadata={"description": "validation_error, bad_card, bad_request: each problem with the request, by field"},
    )
    retry_after = fields.Float(metadata={"description": "claims_open: seconds until the claim window closes"})
    closes_at = fields.Float(
        metadata={"description": "claims_open, claim_not_allowed: when the claim window closes(d), Unix seconds"}
    )
    current_version = fields.Integer(metadata={"description": "version_conflict: the game's version now"})
    current_key = fields.String(
        allow_none=True,
        metadata={
            "description": "version_conflict under `If-Match: key:<key>`: the key of the seat's decision now "
            "(null: the seat has no decision now, say the upcard it answered was taken first)"
        },
    )
    cards = fields.List(fields.String(), metadata={"description": "card_not_in_hand: the cards you do not hold"})
    limit = fields.Integer(metadata={"description": "too_many_open_tables: open tables one address may have"})
