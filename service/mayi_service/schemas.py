"""Request and response schemas. They check shape only; the engine checks rules."""

from __future__ import annotations

from marshmallow import INCLUDE, RAISE, Schema, fields, validate

CARD = fields.String(
    validate=validate.Length(min=2, max=3), metadata={"description": "A card code: rank then suit (TH, AS), or JK"}
)


class StrictSchema(Schema):
    class Meta:
        unknown = RAISE


# -- requests -----------------------------------------------------------------


class OptionsSchema(StrictSchema):
    claim_seconds = fields.Float(validate=validate.Range(1, 86400), metadata={"description": "Claim window length"})
    turn_seconds = fields.Float(validate=validate.Range(1, 86400), metadata={"description": "Turn clock"})
    max_reshuffles = fields.Integer(
        validate=validate.Range(0, 100), metadata={"description": "Stock rebuilds allowed in a round (default 3)"}
    )
    max_turns = fields.Integer(
        validate=validate.Range(10, 10000),
        metadata={"description": "Turns after which a round ends with nobody out (default 500)"},
    )
    all_out_final = fields.Boolean(metadata={"description": "Shanghai house option: the final hand must go all out"})
    bury_joker_upcard = fields.Boolean(metadata={"description": "Shanghai house option: bury a joker upcard"})
    free_goal_order = fields.Boolean(
        metadata={"description": "Shanghai house option: meet the goals (rounds' contracts) in any order"}
    )


class PlayerInSchema(StrictSchema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=40))


class TestBlockSchema(StrictSchema):
    seed = fields.String(validate=validate.Regexp(r"^[0-9a-fA-F]{32,128}$"), metadata={"description": "Hex seed"})
    stacked_decks = fields.List(
        fields.List(CARD, allow_none=True, validate=validate.Length(max=216)),
        allow_none=True,
        validate=validate.Length(max=8),
        metadata={"description": "Per round (index 0 = round 1): the top of the stock, top first; null = shuffled"},
    )
    start_round = fields.Integer(validate=validate.Range(1, 8))


class GameCreateSchema(StrictSchema):
    variant = fields.String(required=True, validate=validate.OneOf(["may_i", "shanghai"]))
    seats = fields.Integer(required=True, validate=validate.Range(2, 8))
    options = fields.Nested(OptionsSchema, load_default=dict)
    players = fields.List(fields.Nested(PlayerInSchema), validate=validate.Length(max=8), load_default=list)
    test = fields.Nested(TestBlockSchema, allow_none=True, load_default=None)


class SeatInSchema(StrictSchema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=40))
    seat = fields.Integer(validate=validate.Range(0, 7))


class DrawInSchema(StrictSchema):
    source = fields.String(required=True, validate=validate.OneOf(["stock", "discard"]))


class DiscardInSchema(StrictSchema):
    card = fields.String(required=True, validate=validate.Length(min=1, max=8))


class ClaimInSchema(StrictSchema):
    claim = fields.Boolean(required=True, metadata={"description": "true: May I / buy; false: pass"})


class LayOffInSchema(StrictSchema):
    meld = fields.Integer(required=True, validate=validate.Range(0, 1000))
    cards = fields.List(
        fields.String(validate=validate.Length(min=1, max=8)), required=True, validate=validate.Length(min=1, max=20)
    )
    joker_to = fields.String(validate=validate.OneOf(["high", "low"]), allow_none=True)


class LayOffsInSchema(StrictSchema):
    lay_offs = fields.List(fields.Nested(LayOffInSchema), required=True, validate=validate.Length(min=1, max=20))


class MeldsInSchema(StrictSchema):
    melds = fields.List(
        fields.List(fields.String(validate=validate.Length(min=1, max=8)), validate=validate.Length(min=1, max=20)),
        required=True,
        validate=validate.Length(min=1, max=8),
    )
    lay_offs = fields.List(fields.Nested(LayOffInSchema), validate=validate.Length(max=20), load_default=list)


class ListGamesQuerySchema(StrictSchema):
    status = fields.String(validate=validate.OneOf(["waiting", "playing", "finished"]))
    variant = fields.String(validate=validate.OneOf(["may_i", "shanghai"]))
    page = fields.Integer(load_default=1, validate=validate.Range(1, 100000))
    page_size = fields.Integer(load_default=20, validate=validate.Range(1, 100))


class EventsQuerySchema(StrictSchema):
    after = fields.Integer(load_default=0, validate=validate.Range(0, 2**53))
    wait = fields.Float(load_default=0, validate=validate.Range(0, 60))


# -- responses ----------------------------------------------------------------


class ProblemSchema(Schema):
    """An error as RFC 9457 problem details; some codes add members of their own."""

    class Meta:
        unknown = INCLUDE  # problem details may carry extension members

    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True, metadata={"description": "What went wrong, in words a player understands"})
    code = fields.String(required=True, metadata={"description": "Stable error code"})
    errors = fields.List(fields.String(), metadata={"description": "validation_error: each problem with the request"})
    retry_after = fields.Float(metadata={"description": "claims_open: seconds until the claim window closes"})
    current_version = fields.Integer(metadata={"description": "version_conflict: the game's version now"})


class ContractSchema(Schema):
    books = fields.Integer()
    runs = fields.Integer()
    all_cards = fields.Boolean()
    text = fields.String()


class RoundSchema(Schema):
    number = fields.Integer()
    of = fields.Integer()
    dealer = fields.Integer()
    first = fields.Integer()
    contract = fields.Nested(ContractSchema)


class ClaimWindowSchema(Schema):
    card = fields.String()
    discarder = fields.Integer(allow_none=True)
    claims = fields.List(fields.Integer())
    passes = fields.List(fields.Integer())
    pending = fields.List(fields.Integer())
    closes_at = fields.Float(allow_none=True)


class SeatViewSchema(Schema):
    seat = fields.Integer()
    name = fields.String(allow_none=True)
    taken = fields.Boolean()
    hand_count = fields.Integer()
    down = fields.Boolean()
    total = fields.Integer()
    claims_used = fields.Integer()
    claims_left = fields.Integer(allow_none=True)
    absent = fields.Boolean()


class JokerSchema(Schema):
    index = fields.Integer()
    stands_for = fields.String()


class MeldViewSchema(Schema):
    id = fields.Integer()
    owner = fields.Integer()
    type = fields.String(metadata={"enum": ["book", "run"]})
    cards = fields.List(fields.String())
    jokers = fields.List(fields.Nested(JokerSchema))


class ResultSchema(Schema):
    round = fields.Integer()
    out = fields.Integer(allow_none=True)
    scores = fields.List(fields.Integer())


class LayOffOutSchema(Schema):
    meld = fields.Integer()
    cards = fields.List(fields.String())
    joker_to = fields.String()


class LegalMoveSchema(Schema):
    type = fields.String(metadata={"enum": ["draw", "claim", "discard", "go_down", "lay_off"]})
    source = fields.String()
    claim = fields.Boolean()
    card = fields.String()
    melds = fields.List(fields.List(fields.String()))
    lay_offs = fields.List(fields.Nested(LayOffOutSchema))


class GameViewSchema(Schema):
    id = fields.String()
    version = fields.Integer()
    status = fields.String(metadata={"enum": ["waiting", "playing", "finished"]})
    variant = fields.String()
    options = fields.Dict()
    rated = fields.Boolean()
    created_at = fields.Float()
    last_event = fields.Integer()
    round = fields.Nested(RoundSchema)
    phase = fields.String(metadata={"enum": ["first_offer", "first_discard", "draw", "play", "finished"]})
    turn = fields.Integer()
    actor = fields.Integer()
    upcard = fields.String(allow_none=True)
    discard_top = fields.String(allow_none=True)
    stock_count = fields.Integer()
    discard_count = fields.Integer()
    reshuffles = fields.Integer()
    claim_window = fields.Nested(ClaimWindowSchema, allow_none=True)
    seats = fields.List(fields.Nested(SeatViewSchema))
    melds = fields.List(fields.Nested(MeldViewSchema))
    goals_done = fields.List(
        fields.List(fields.Integer()),
        metadata={"description": "Free goal order only: per seat, the goals met (numbered as the rounds)"},
    )
    deadline = fields.Float(allow_none=True)
    results = fields.List(fields.Nested(ResultSchema))
    places = fields.List(fields.Integer())
    seat = fields.Integer(allow_none=True)
    hand = fields.List(fields.String())
    held = fields.String(allow_none=True)
    legal = fields.List(fields.Nested(LegalMoveSchema))


class IssuedSeatSchema(Schema):
    seat = fields.Integer()
    name = fields.String()
    token = fields.String(metadata={"description": "The seat's bearer token, shown only once"})


class GameCreatedSchema(Schema):
    game_id = fields.String()
    seats = fields.List(fields.Nested(IssuedSeatSchema))
    game = fields.Nested(GameViewSchema)


class SeatTakenSchema(Schema):
    seat = fields.Integer()
    token = fields.String()
    game = fields.Nested(GameViewSchema)


class GameSummarySchema(Schema):
    id = fields.String()
    variant = fields.String()
    status = fields.String()
    seats = fields.Integer()
    names = fields.List(fields.String(allow_none=True))
    rated = fields.Boolean()
    created_at = fields.Float()
    version = fields.Integer()


class GameListSchema(Schema):
    games = fields.List(fields.Nested(GameSummarySchema))
    page = fields.Integer()
    page_size = fields.Integer()
    total = fields.Integer()


class EventSchema(Schema):
    seq = fields.Integer()
    type = fields.String()
    seat = fields.Integer(allow_none=True)
    time = fields.Float()
    data = fields.Dict()
    private = fields.Dict()
    timeout = fields.Boolean()


class EventListSchema(Schema):
    events = fields.List(fields.Nested(EventSchema))
    last = fields.Integer(metadata={"description": "The last event number; pass it as `after` to continue"})


class ReplaySchema(Schema):
    id = fields.String()
    variant = fields.String()
    options = fields.Dict()
    names = fields.List(fields.String(allow_none=True))
    seed = fields.String()
    totals = fields.List(fields.Integer())
    events = fields.List(fields.Nested(EventSchema))


class HealthSchema(Schema):
    status = fields.String()
    redis = fields.Boolean()
