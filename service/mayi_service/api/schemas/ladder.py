"""The bot ladder: entries, the leaderboard, matches and rating history."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from mayi_service.api.schemas.fields import (
    QueryInteger,
    RegisteredVariant,
    StrictInteger,
    StrictSchema,
    Text,
    required,
    variant_name,
)
from mayi_service.ladder.ratings import PROVISIONAL_GAMES

#: The most games at once a bot may ask for.
MAX_GAMES = 20


class EntryInSchema(StrictSchema):
    variant = Text(required=True, validate=RegisteredVariant())
    max_games = StrictInteger(
        load_default=1,
        validate=validate.Range(1, MAX_GAMES),
        metadata={"description": f"Ladder games the bot plays at once (1 to {MAX_GAMES}; default 1)"},
    )


class EntrySchema(Schema):
    variant = variant_name()
    bot_id = required(fields.String)
    name = required(fields.String)
    max_games = required(fields.Integer, metadata={"description": "Ladder games the bot plays at once"})
    entered_at = required(fields.Float)


class VariantQuerySchema(StrictSchema):
    variant = Text(required=True, validate=RegisteredVariant())


class MatchesQuerySchema(StrictSchema):
    variant = Text(required=True, validate=RegisteredVariant())
    status = Text(load_default="finished", validate=validate.OneOf(["finished", "playing"]))
    limit = QueryInteger(load_default=20, validate=validate.Range(1, 100))


class HistoryQuerySchema(StrictSchema):
    variant = Text(required=True, validate=RegisteredVariant())
    limit = QueryInteger(load_default=100, validate=validate.Range(1, 1000))


class StandingSchema(Schema):
    rank = required(fields.Integer, metadata={"description": "1: the best conservative rating"})
    bot_id = required(fields.String, metadata={"description": "The bot's id; house bots: house-<name>"})
    name = required(fields.String)
    house = required(fields.Boolean, metadata={"description": "One of the service's reference bots"})
    rating = required(
        fields.Float, metadata={"description": "The conservative estimate mu - 3 sigma, which orders the board"}
    )
    mu = required(fields.Float, metadata={"description": "The estimated skill (Plackett-Luce; starts at 25)"})
    sigma = required(fields.Float, metadata={"description": "The uncertainty of mu (starts at 25/3)"})
    games = required(fields.Integer)
    wins = required(fields.Integer, metadata={"description": "Games finished in first place (shared places count)"})
    mean_score = required(
        fields.Float, allow_none=True, metadata={"description": "Mean final score (penalty points: lower is better)"}
    )
    provisional = required(
        fields.Boolean, metadata={"description": f"Fewer than {PROVISIONAL_GAMES} games: the rating is still rough"}
    )
    max_games = required(fields.Integer)


class LadderBotSchema(StandingSchema):
    variant = variant_name()
    entered = required(fields.Boolean, metadata={"description": "On the leaderboard now (false once it left)"})
    rank = required(
        fields.Integer, allow_none=True, metadata={"description": "Its place on the board; null once it left"}
    )
    max_games = required(fields.Integer, allow_none=True, metadata={"description": "null once it left"})


class LeaderboardSchema(Schema):
    variant = variant_name()
    standings = required(fields.List, fields.Nested(StandingSchema))


class MatchSeatSchema(Schema):
    seat = required(fields.Integer)
    bot_id = required(fields.String)
    name = required(fields.String)
    house = required(
        fields.String, allow_none=True, metadata={"description": "The reference bot's name, if a house bot"}
    )


class MatchResultSchema(MatchSeatSchema):
    score = required(fields.Integer, metadata={"description": "Final score (penalty points)"})
    place = required(fields.Integer, metadata={"description": "1 = best; equal scores share the place"})
    rating_before = required(fields.Float)
    rating_after = required(fields.Float)


class MatchSchema(Schema):
    match_id = required(fields.String)
    variant = variant_name()
    game_id = required(fields.String, metadata={"description": "Its replay: GET /v1/games/{game_id}/replay"})
    status = required(fields.String, validate=validate.OneOf(["playing", "finished"]))
    created_at = required(fields.Float)
    finished_at = required(fields.Float, allow_none=True)
    seats = required(fields.List, fields.Nested(MatchSeatSchema))
    standings = required(
        fields.List,
        fields.Nested(MatchResultSchema),
        allow_none=True,
        metadata={"description": "Per seat, once finished"},
    )


class MatchListSchema(Schema):
    matches = required(fields.List, fields.Nested(MatchSchema))


class HistoryEntrySchema(Schema):
    match_id = required(fields.String)
    game_id = required(fields.String)
    at = required(fields.Float, metadata={"description": "When the match's result was applied (Unix seconds)"})
    place = required(fields.Integer)
    players = required(fields.Integer)
    score = required(fields.Integer)
    mu = required(fields.Float)
    sigma = required(fields.Float)
    rating = required(fields.Float, metadata={"description": "mu - 3 sigma after this match"})


class HistorySchema(Schema):
    variant = variant_name()
    bot_id = required(fields.String)
    history = required(fields.List, fields.Nested(HistoryEntrySchema), metadata={"description": "Oldest first"})
