"""The game view (``GameView``: waiting, playing, finished) and its parts, as the service
sends them; the engine builds the views, these schemas document them."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from mayi_engine import VARIANTS, OptionSpec
from mayi_service.api.schemas.fields import UNIONS, Union, const, ints, required, strings, variant_name

_RESPONSE_FIELDS: dict[type, type[fields.Field]] = {bool: fields.Boolean, int: fields.Integer, float: fields.Float}


def effective_options_schema() -> type[Schema]:
    """The schema of a view's ``options``: the options the table plays by, every option of
    its variant (the ones every registered variant has are required), typed by their specs."""
    by_name: dict[str, list[OptionSpec]] = {}
    for rules in VARIANTS.values():
        for spec in rules.option_specs:
            by_name.setdefault(spec.name, []).append(spec)
    attrs: dict[str, Any] = {}
    for name, specs in by_name.items():
        spec = specs[0]
        every = len(specs) == len(VARIANTS)
        description = (
            spec.description
            + (f" ({spec.unit})" if spec.unit else "")
            + ("" if every else "; present where the variant has it")
        )
        attrs[name] = _RESPONSE_FIELDS[spec.type](required=every, metadata={"description": description})
    attrs["__doc__"] = "The options the table plays by: the variant's defaults with the table's options applied."
    return type("EffectiveOptionsSchema", (Schema,), attrs)


#: The options a view shows (the variants registered when this module was imported).
EffectiveOptionsSchema = effective_options_schema()


class ContractSchema(Schema):
    books = required(fields.Integer, metadata={"description": "Books (cards of one rank) to lay down"})
    runs = required(fields.Integer, metadata={"description": "Runs (cards in sequence in one suit) to lay down"})
    all_cards = required(fields.Boolean, metadata={"description": "Every card of the hand must go into the melds"})
    text = required(fields.String, metadata={"description": "The contract in words"})


class RoundSchema(Schema):
    number = required(fields.Integer, metadata={"description": "From 1"})
    of = required(fields.Integer, metadata={"description": "Rounds in the game"})
    dealer = required(fields.Integer, metadata={"description": "The seat that dealt this round"})
    first = required(fields.Integer, metadata={"description": "The seat that played first this round"})
    contract = required(fields.Nested, ContractSchema, metadata={"description": "What going down takes this round"})


class ClaimWindowSchema(Schema):
    card = required(fields.String, metadata={"description": "The upcard"})
    discarder = required(
        fields.Integer, allow_none=True, metadata={"description": "The seat that discarded it; null: the first upcard"}
    )
    claims = ints(metadata={"description": "Seats that have claimed it (May I, or buy in Shanghai)"})
    passes = ints(metadata={"description": "Seats that have passed"})
    pending = ints(metadata={"description": "Seats that may still answer"})
    closes_at = required(fields.Float, allow_none=True, metadata={"description": "Unix seconds; null: no clock"})


class WaitingSeatSchema(Schema):
    seat = required(fields.Integer, metadata={"description": "The seat's number, from 0"})
    name = required(fields.String, allow_none=True, metadata={"description": "The player's name; null: open"})
    taken = required(fields.Boolean, metadata={"description": "A player (or a house bot) holds it"})


class SeatViewSchema(Schema):
    seat = required(fields.Integer, metadata={"description": "The seat's number, from 0 (the order of play)"})
    name = required(fields.String, allow_none=True, metadata={"description": "The player's name"})
    hand_count = required(fields.Integer, metadata={"description": "Cards in the seat's hand"})
    down = required(fields.Boolean, metadata={"description": "Has gone down this round"})
    total = required(fields.Integer, metadata={"description": "Score so far (lower is better)"})
    claims_used = required(fields.Integer, metadata={"description": "Claims the seat has won this round"})
    claims_left = required(
        fields.Integer, allow_none=True, metadata={"description": "Claims it may still win this round; null: no limit"}
    )
    absent = required(fields.Boolean, metadata={"description": "Timed out three times in a row; played by the clock"})


class JokerSchema(Schema):
    index = required(fields.Integer, metadata={"description": "Position of the joker in `cards`"})
    stands_for = required(fields.String, metadata={"description": "The card it stands for"})


class MeldViewSchema(Schema):
    id = required(fields.Integer, metadata={"description": "The meld's number: a lay-off names it as `meld`"})
    owner = required(fields.Integer, metadata={"description": "The seat that laid it down"})
    type = required(fields.String, validate=validate.OneOf(["book", "run"]))
    cards = strings(metadata={"description": "Runs low to high"})
    jokers = required(fields.List, fields.Nested(JokerSchema), metadata={"description": "The jokers in it"})


class ResultSchema(Schema):
    round = required(fields.Integer, metadata={"description": "The round's number"})
    out = required(fields.Integer, allow_none=True, metadata={"description": "The seat that went out; null: nobody"})
    scores = ints(metadata={"description": "The points each seat scored in it, by seat"})


# Each legal move is exactly the request body that makes it, with its `type` (which the
# body may carry too): the document composes each member of `LegalMove` from the body's
# schema, so that a legal entry is a valid body of its endpoint, as it is.


class _ViewBase(Schema):
    """What every view holds, whatever the game's status."""

    id = required(fields.String, metadata={"description": "The game's id"})
    version = required(fields.Integer, metadata={"description": "Bumped by every change; send it as If-Match"})
    variant = variant_name(metadata={"description": "The variant played: may_i, shanghai, or a registered one"})
    options = required(
        fields.Nested,
        EffectiveOptionsSchema,
        metadata={
            "description": "The options the table plays by: its variant's defaults, with those it was created with"
        },
    )
    rated = required(fields.Boolean, metadata={"description": "false: a test table (set-up given)"})
    created_at = required(fields.Float, metadata={"description": "Unix seconds"})
    last_event = required(fields.Integer, metadata={"description": "The number of the last event"})


class WaitingViewSchema(_ViewBase):
    """A table still waiting for players: no round, phase, hand or legal moves yet."""

    status = const("waiting", "waiting: a table waiting for players")
    seats = required(fields.List, fields.Nested(WaitingSeatSchema), metadata={"description": "Every seat, in order"})
    seat = required(fields.Integer, allow_none=True, metadata={"description": "The caller's seat; null: no token"})


class _PlayedViewSchema(_ViewBase):
    """A game under way or over. ``seat``, ``hand``, ``held``, ``legal`` and ``key`` are sent to a seat only."""

    round = required(
        fields.Nested, RoundSchema, metadata={"description": "The round being played (the last, when over)"}
    )
    turn = required(fields.Integer, metadata={"description": "The seat whose turn it is"})
    actor = required(fields.Integer, metadata={"description": "The seat that must act now"})
    upcard = required(fields.String, allow_none=True, metadata={"description": "The card the claim window is on"})
    discard_top = required(
        fields.String, allow_none=True, metadata={"description": "The top card of the discard pile; null: empty"}
    )
    stock_count = required(fields.Integer, metadata={"description": "Cards left in the stock"})
    discard_count = required(fields.Integer, metadata={"description": "Cards in the discard pile"})
    reshuffles = required(fields.Integer, metadata={"description": "Stock rebuilds this round"})
    claim_window = required(
        fields.Nested,
        ClaimWindowSchema,
        allow_none=True,
        metadata={"description": "The upcard on offer out of turn; null: none"},
    )
    seats = required(fields.List, fields.Nested(SeatViewSchema), metadata={"description": "Every seat, in order"})
    melds = required(fields.List, fields.Nested(MeldViewSchema), metadata={"description": "Every meld on the table"})
    goals_done = fields.List(
        fields.List(fields.Integer()),
        metadata={"description": "Free goal order only: per seat, the goals met (numbered as the rounds)"},
    )
    deadline = required(fields.Float, allow_none=True, metadata={"description": "When the clock acts, Unix seconds"})
    results = required(fields.List, fields.Nested(ResultSchema), metadata={"description": "Rounds played, in order"})
    seat = fields.Integer(metadata={"description": "Seat views only: the caller's seat"})
    hand = fields.List(fields.String(), metadata={"description": "Seat views only: the seat's cards"})
    held = fields.String(
        allow_none=True,
        metadata={"description": "Seat views only: the card taken this turn, which may not be discarded"},
    )
    legal = fields.List(
        Union("LegalMove"),
        metadata={"description": "Seat views only: every move the seat may make now; each is the body to send"},
    )
    key = fields.String(
        allow_none=True,
        metadata={
            "description": "Seat views only: the key of the seat's decision (as `GET /v1/bots/me/decisions` "
            "lists it; null: no legal move). Send a move with `If-Match: key:<key>`: it is applied while the "
            "seat's choices are these, whatever other seats answered to the upcard meanwhile"
        },
    )


class PlayingViewSchema(_PlayedViewSchema):
    status = const("playing", "playing: a game under way")
    phase = required(
        fields.String,
        validate=validate.OneOf(["first_offer", "first_discard", "draw", "play"]),
        metadata={
            "description": "Who must act, and how. first_offer: May I's first upcard of a round is offered to "
            "`actor` (take it or pass); first_discard: `actor` took it out of turn and discards at once; "
            "draw: `turn` draws, while other seats may claim or pass the upcard; play: `turn` has drawn and "
            "goes down, lays off, discards"
        },
    )


class FinishedViewSchema(_PlayedViewSchema):
    status = const("finished", "finished: a game over")
    phase = const("finished", "finished: the game is over")
    places = ints(metadata={"description": "Each seat's place (1 = best; equal totals share a place)"})


UNIONS["GameView"] = (
    "status",
    {"waiting": WaitingViewSchema, "playing": PlayingViewSchema, "finished": FinishedViewSchema},
)
