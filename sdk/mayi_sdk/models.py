"""Typed results of the API: views, legal moves, melds, events, tables.

Each is a frozen dataclass read from the API's JSON by ``from_json``; fields the
server adds later are kept, unread, in ``raw``. Card codes stay strings (``"TH"``,
``"JK"``), as the API writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cards import rank_code


def _list(data: dict[str, Any], key: str) -> list[Any]:
    found = data.get(key)
    return list(found) if isinstance(found, list) else []


@dataclass(frozen=True)
class Contract:
    """A round's contract: ``books`` and ``runs`` to lay down (``all_cards``: using every card)."""

    books: int
    runs: int
    all_cards: bool
    text: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Contract:
        return cls(
            int(data.get("books", 0)), int(data.get("runs", 0)), bool(data.get("all_cards")), data.get("text", "")
        )


@dataclass(frozen=True)
class Round:
    number: int
    of: int
    dealer: int
    first: int
    contract: Contract

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Round:
        return cls(
            int(data["number"]),
            int(data["of"]),
            int(data["dealer"]),
            int(data["first"]),
            Contract.from_json(data.get("contract") or {}),
        )


@dataclass(frozen=True)
class ClaimWindow:
    """The upcard on offer: who claimed, who passed, who may still answer, and until when."""

    card: str
    discarder: int | None
    claims: list[int]
    passes: list[int]
    pending: list[int]
    closes_at: float | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClaimWindow:
        return cls(
            data.get("card", ""),
            data.get("discarder"),
            _list(data, "claims"),
            _list(data, "passes"),
            _list(data, "pending"),
            data.get("closes_at"),
        )


@dataclass(frozen=True)
class Seat:
    """One seat as everyone sees it."""

    seat: int
    name: str | None
    taken: bool
    hand_count: int
    down: bool
    total: int
    claims_used: int
    claims_left: int | None
    absent: bool

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Seat:
        return cls(
            int(data["seat"]),
            data.get("name"),
            bool(data.get("taken", data.get("name") is not None)),
            int(data.get("hand_count", 0)),
            bool(data.get("down", False)),
            int(data.get("total", 0)),
            int(data.get("claims_used", 0)),
            data.get("claims_left"),
            bool(data.get("absent", False)),
        )


@dataclass(frozen=True)
class Joker:
    """A joker in a meld: its ``index`` in the meld's cards and the card it ``stands_for``."""

    index: int
    stands_for: str


@dataclass(frozen=True)
class Meld:
    """A meld on the table (``type`` is ``book`` or ``run``; a run's cards low to high)."""

    id: int
    owner: int
    type: str
    cards: list[str]
    jokers: list[Joker]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Meld:
        jokers = [Joker(int(j["index"]), j["stands_for"]) for j in _list(data, "jokers")]
        return cls(int(data["id"]), int(data["owner"]), data["type"], _list(data, "cards"), jokers)


@dataclass(frozen=True)
class Result:
    """One finished round: who went ``out`` (None: nobody) and each seat's score."""

    round: int
    out: int | None
    scores: list[int]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        return cls(int(data["round"]), data.get("out"), _list(data, "scores"))


#: The endpoint each legal move's ``type`` is sent to (its body is the move itself).
MOVE_PATHS: dict[str, str] = {
    "draw": "turn/draw",
    "discard": "turn/discard",
    "claim": "claims",
    "go_down": "melds",
    "lay_off": "lay-offs",
}


@dataclass(frozen=True)
class LegalMove:
    """A move the seat may make now. ``body`` is exactly the request body to send to
    the endpoint of its ``type`` (see :meth:`mayi_sdk.Client.play`)."""

    type: str
    body: dict[str, Any]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LegalMove:
        return cls(data["type"], {k: v for k, v in data.items() if k != "type"})

    @property
    def path(self) -> str:
        """The action endpoint under ``/v1/games/{id}/``; a ``type`` that is no move's is a
        :class:`ValueError` naming it and the known ones."""
        found = MOVE_PATHS.get(self.type)
        if found is None:
            known = ", ".join(MOVE_PATHS)
            raise ValueError(f"type: {self.type!r} is not a move type (known: {known})")
        return found

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.body.items())
        return f"LegalMove({self.type}{', ' if args else ''}{args})"


@dataclass(frozen=True)
class GameView:
    """A game as the caller sees it: public for everyone, ``hand`` and ``legal`` for a seat.

    A waiting table has only the table fields (``round``, ``phase`` and the rest are None).
    """

    id: str
    version: int
    status: str
    variant: str
    options: dict[str, Any]
    rated: bool
    created_at: float
    last_event: int
    seats: list[Seat]
    seat: int | None = None
    round: Round | None = None
    phase: str | None = None
    turn: int | None = None
    actor: int | None = None
    upcard: str | None = None
    discard_top: str | None = None
    stock_count: int = 0
    discard_count: int = 0
    reshuffles: int = 0
    claim_window: ClaimWindow | None = None
    melds: list[Meld] = field(default_factory=list)
    deadline: float | None = None
    results: list[Result] = field(default_factory=list)
    places: list[int] = field(default_factory=list)
    hand: list[str] = field(default_factory=list)
    held: str | None = None
    legal: list[LegalMove] = field(default_factory=list)
    #: The key of the seat's decision (as :attr:`Decision.key`; empty: no legal move): a move
    #: sent with it (``Client.play(..., if_key=view.key)``) is applied while the seat's
    #: choices are these, whatever other seats answered to the upcard meanwhile.
    key: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameView:
        window = data.get("claim_window")
        return cls(
            id=data["id"],
            version=int(data["version"]),
            status=data["status"],
            variant=data["variant"],
            options=dict(data.get("options") or {}),
            rated=bool(data.get("rated", False)),
            created_at=float(data.get("created_at", 0.0)),
            last_event=int(data.get("last_event", 0)),
            seats=[Seat.from_json(s) for s in _list(data, "seats")],
            seat=data.get("seat"),
            round=Round.from_json(data["round"]) if data.get("round") else None,
            phase=data.get("phase"),
            turn=data.get("turn"),
            actor=data.get("actor"),
            upcard=data.get("upcard"),
            discard_top=data.get("discard_top"),
            stock_count=int(data.get("stock_count", 0)),
            discard_count=int(data.get("discard_count", 0)),
            reshuffles=int(data.get("reshuffles", 0)),
            claim_window=ClaimWindow.from_json(window) if window else None,
            melds=[Meld.from_json(m) for m in _list(data, "melds")],
            deadline=data.get("deadline"),
            results=[Result.from_json(r) for r in _list(data, "results")],
            places=_list(data, "places"),
            hand=_list(data, "hand"),
            held=data.get("held"),
            legal=[LegalMove.from_json(m) for m in _list(data, "legal")],
            key=str(data.get("key") or ""),
            raw=data,
        )

    def legal_of(self, kind: str) -> list[LegalMove]:
        """The legal moves of one ``type`` (``draw``, ``claim``, ``discard``, ``go_down``, ``lay_off``)."""
        return [m for m in self.legal if m.type == kind]


@dataclass(frozen=True)
class Event:
    """One entry of a game's log. ``private`` is present only for the seat it concerns."""

    seq: int
    type: str
    seat: int | None
    time: float
    data: dict[str, Any]
    private: dict[str, Any] | None = None
    timeout: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Event:
        return cls(
            seq=int(data["seq"]),
            type=data["type"],
            seat=data.get("seat"),
            time=float(data.get("time", 0.0)),
            data=dict(data.get("data") or {}),
            private=data.get("private"),
            timeout=bool(data.get("timeout", False)),
            raw=data,
        )


@dataclass(frozen=True)
class EventPage:
    """Events after a number, and ``last``: the number to pass as ``after`` next time."""

    events: list[Event]
    last: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EventPage:
        return cls([Event.from_json(e) for e in _list(data, "events")], int(data["last"]))


@dataclass(frozen=True)
class IssuedSeat:
    """A seat taken at creation, with its bearer ``token`` (shown only once)."""

    seat: int
    name: str
    token: str


@dataclass(frozen=True)
class CreatedGame:
    game_id: str
    seats: list[IssuedSeat]
    game: GameView

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CreatedGame:
        seats = [IssuedSeat(int(s["seat"]), s["name"], s["token"]) for s in _list(data, "seats")]
        return cls(data["game_id"], seats, GameView.from_json(data["game"]))


@dataclass(frozen=True)
class TakenSeat:
    """A seat taken with :meth:`mayi_sdk.Client.take_seat`: its number and token (shown only once;
    ``None`` for a house bot's seat)."""

    seat: int
    token: str | None
    game: GameView

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TakenSeat:
        return cls(int(data["seat"]), data["token"], GameView.from_json(data["game"]))


@dataclass(frozen=True)
class GameSummary:
    """A table in a listing."""

    id: str
    variant: str
    status: str
    seats: int
    names: list[str | None]
    rated: bool
    created_at: float
    version: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameSummary:
        return cls(
            data["id"],
            data["variant"],
            data["status"],
            int(data["seats"]),
            _list(data, "names"),
            bool(data.get("rated", False)),
            float(data.get("created_at", 0.0)),
            int(data.get("version", 0)),
        )


@dataclass(frozen=True)
class GamePage:
    games: list[GameSummary]
    page: int
    page_size: int
    total: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GamePage:
        games = [GameSummary.from_json(g) for g in _list(data, "games")]
        return cls(games, int(data["page"]), int(data["page_size"]), int(data["total"]))


@dataclass(frozen=True)
class Replay:
    """A finished game: every event with every private detail, and the shuffles' seed."""

    id: str
    variant: str
    options: dict[str, Any]
    names: list[str | None]
    seed: str
    totals: list[int]
    events: list[Event]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Replay:
        return cls(
            data["id"],
            data["variant"],
            dict(data.get("options") or {}),
            _list(data, "names"),
            data["seed"],
            _list(data, "totals"),
            [Event.from_json(e) for e in _list(data, "events")],
        )


@dataclass(frozen=True)
class Health:
    status: str
    redis: bool

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Health:
        return cls(str(data.get("status", "")), bool(data.get("redis", False)))


@dataclass(frozen=True)
class BotAccount:
    """A bot as registered (:meth:`mayi_sdk.Client.register_bot`): its id and bearer ``token``
    (shown only once: keep it), or a new token after a rotation."""

    bot_id: str
    token: str
    name: str = ""
    #: The secret (``whsec_...``) that signs its webhook deliveries: at registration only.
    webhook_secret: str = ""
    webhook_url: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BotAccount:
        return cls(
            data["bot_id"], data["token"], data.get("name", ""), data.get("webhook_secret", ""), data.get("webhook_url")
        )


@dataclass(frozen=True)
class BotGame:
    """A game a bot sits in, and its seats there."""

    game_id: str
    seats: list[int]


@dataclass(frozen=True)
class BotProfile:
    """A bot's profile: its games that have not ended."""

    bot_id: str
    name: str
    created_at: float
    games: list[BotGame]
    webhook_url: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BotProfile:
        games = [BotGame(g["game_id"], _list(g, "seats")) for g in _list(data, "games")]
        return cls(data["bot_id"], data["name"], float(data.get("created_at", 0.0)), games, data.get("webhook_url"))


@dataclass(frozen=True)
class WebhookSecret:
    """A new webhook secret (shown only once); until ``previous_secret_valid_until`` (Unix
    seconds) deliveries are signed by both the new and the previous one."""

    bot_id: str
    webhook_secret: str
    previous_secret_valid_until: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WebhookSecret:
        return cls(data["bot_id"], data["webhook_secret"], float(data["previous_secret_valid_until"]))


@dataclass(frozen=True)
class Delivery:
    """One attempt at POSTing a decision to the bot's webhook: the receiver's ``status``
    (``None``: no answer), or the ``error`` (``None``: delivered), and the next retry."""

    webhook_id: str
    game_id: str
    seat: int
    version: int
    attempt: int
    at: float
    url: str
    status: int | None
    error: str | None
    duration_ms: float
    response_truncated: bool
    next_retry_at: float | None
    #: The decision's key (see :class:`Decision`): one delivery, and one ``webhook_id``, per key.
    key: str = ""

    @property
    def delivered(self) -> bool:
        return self.error is None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Delivery:
        return cls(
            data["webhook_id"],
            data["game_id"],
            int(data["seat"]),
            int(data["version"]),
            int(data["attempt"]),
            float(data["at"]),
            data.get("url", ""),
            data.get("status"),
            data.get("error"),
            float(data.get("duration_ms", 0.0)),
            bool(data.get("response_truncated", False)),
            data.get("next_retry_at"),
            str(data.get("key", "")),
        )


@dataclass(frozen=True)
class Decision:
    """A decision waiting for a bot: the game, its seat, the game's ``version``, the
    ``deadline`` when the clock plays it, and the seat's ``view`` with its legal moves.
    ``key`` stays the same while the seat's choices in this turn do (another seat's answer
    to the upcard leaves it unless it changes the seat's legal moves): a bot that waits on
    the decision gives it as ``skip`` to the next poll."""

    game_id: str
    seat: int
    version: int
    deadline: float | None
    view: GameView
    key: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        return cls(
            data["game_id"],
            int(data["seat"]),
            int(data["version"]),
            data.get("deadline"),
            GameView.from_json(data["view"]),
            str(data.get("key") or ""),
        )


@dataclass(frozen=True)
class DecisionList:
    """The decisions waiting for a bot, ``games``: how many games it sits in that have not
    ended, and ``skipped``: the keys of the skipped decisions that are still waiting."""

    decisions: list[Decision]
    games: int
    skipped: list[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DecisionList:
        return cls(
            [Decision.from_json(d) for d in _list(data, "decisions")],
            int(data.get("games", 0)),
            [str(k) for k in _list(data, "skipped")],
        )


# -- the bot ladder -------------------------------------------------------------
@dataclass(frozen=True)
class LadderEntry:
    """A bot entered in a variant's ladder, playing up to ``max_games`` ladder games at once."""

    variant: str
    bot_id: str
    name: str
    max_games: int
    entered_at: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderEntry:
        return cls(data["variant"], data["bot_id"], data["name"], int(data["max_games"]), float(data["entered_at"]))


@dataclass(frozen=True)
class LadderStanding:
    """One row of a leaderboard: ``rating`` is the conservative ``mu - 3 sigma`` that orders it."""

    rank: int
    bot_id: str
    name: str
    house: bool
    rating: float
    mu: float
    sigma: float
    games: int
    wins: int
    mean_score: float | None
    provisional: bool
    max_games: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderStanding:
        mean = data.get("mean_score")
        return cls(
            int(data["rank"]),
            data["bot_id"],
            data["name"],
            bool(data["house"]),
            float(data["rating"]),
            float(data["mu"]),
            float(data["sigma"]),
            int(data["games"]),
            int(data["wins"]),
            None if mean is None else float(mean),
            bool(data["provisional"]),
            int(data.get("max_games", 0)),
        )


@dataclass(frozen=True)
class Leaderboard:
    variant: str
    standings: list[LadderStanding]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Leaderboard:
        return cls(data["variant"], [LadderStanding.from_json(s) for s in _list(data, "standings")])


@dataclass(frozen=True)
class LadderBot:
    """A bot's rating in a variant's ladder, entered or not: ``entered`` is false once it
    left (it is then off the leaderboard: ``rank`` and ``max_games`` are ``None``), and
    its rating and history stay."""

    variant: str
    bot_id: str
    name: str
    house: bool
    entered: bool
    rank: int | None
    rating: float
    mu: float
    sigma: float
    games: int
    wins: int
    mean_score: float | None
    provisional: bool
    max_games: int | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderBot:
        mean, rank, most = data.get("mean_score"), data.get("rank"), data.get("max_games")
        return cls(
            data["variant"],
            data["bot_id"],
            data["name"],
            bool(data["house"]),
            bool(data["entered"]),
            None if rank is None else int(rank),
            float(data["rating"]),
            float(data["mu"]),
            float(data["sigma"]),
            int(data["games"]),
            int(data["wins"]),
            None if mean is None else float(mean),
            bool(data["provisional"]),
            None if most is None else int(most),
        )


@dataclass(frozen=True)
class LadderSeat:
    """A seat of a ladder match: its bot, and the reference bot's name if a house entrant."""

    seat: int
    bot_id: str
    name: str
    house: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderSeat:
        return cls(int(data["seat"]), data["bot_id"], data["name"], data.get("house"))


@dataclass(frozen=True)
class LadderResult:
    """A seat's result in a finished ladder match: final ``score`` (penalty points),
    ``place`` (1 = best; equal scores share it) and its rating before and after."""

    seat: int
    bot_id: str
    name: str
    house: str | None
    score: int
    place: int
    rating_before: float
    rating_after: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderResult:
        return cls(
            int(data["seat"]),
            data["bot_id"],
            data["name"],
            data.get("house"),
            int(data["score"]),
            int(data["place"]),
            float(data["rating_before"]),
            float(data["rating_after"]),
        )


@dataclass(frozen=True)
class LadderMatch:
    """A ladder match: its game (``game_id``: its replay), seats and, once finished, its
    ``standings`` (one :class:`LadderResult` per seat)."""

    match_id: str
    variant: str
    game_id: str
    status: str
    created_at: float
    finished_at: float | None
    seats: list[LadderSeat]
    standings: list[LadderResult] | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LadderMatch:
        finished = data.get("finished_at")
        standings = data.get("standings")
        return cls(
            data["match_id"],
            data["variant"],
            data["game_id"],
            data["status"],
            float(data["created_at"]),
            None if finished is None else float(finished),
            [LadderSeat.from_json(s) for s in _list(data, "seats")],
            None if standings is None else [LadderResult.from_json(s) for s in standings],
        )


@dataclass(frozen=True)
class RatingPoint:
    """A bot's rating after one ladder match."""

    match_id: str
    game_id: str
    at: float
    place: int
    players: int
    score: int
    mu: float
    sigma: float
    rating: float

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RatingPoint:
        return cls(
            data["match_id"],
            data["game_id"],
            float(data["at"]),
            int(data["place"]),
            int(data["players"]),
            int(data["score"]),
            float(data["mu"]),
            float(data["sigma"]),
            float(data["rating"]),
        )


@dataclass(frozen=True)
class VariantRound:
    """One round of a variant: its number (from 1), the cards dealt to each player, its contract."""

    number: int
    deal: int
    contract: Contract

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VariantRound:
        return cls(int(data["number"]), int(data["deal"]), Contract.from_json(data["contract"]))


@dataclass(frozen=True)
class ClaimRules:
    """Claiming the upcard out of turn in a variant: its ``name`` at the table ("May I",
    "Buy"), the stock cards a claimant takes with it (``penalty``), the claims a seat may
    win in one round (``limit``; ``None``: no limit), whether the discarder may claim its own."""

    name: str
    penalty: int
    limit: int | None
    discarder_may_claim: bool

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClaimRules:
        limit = data.get("limit")
        return cls(
            str(data["name"]),
            int(data["penalty"]),
            None if limit is None else int(limit),
            bool(data["discarder_may_claim"]),
        )


@dataclass(frozen=True)
class OptionSpec:
    """A table option a variant accepts: its ``type`` (``"boolean"``, ``"integer"``,
    ``"number"``), range, the variant's ``default``, and whether it is a ``house`` rule."""

    name: str
    type: str
    minimum: float | None
    maximum: float | None
    default: Any
    house: bool
    description: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OptionSpec:
        return cls(
            str(data["name"]),
            str(data["type"]),
            data.get("minimum"),
            data.get("maximum"),
            data.get("default"),
            bool(data.get("house", False)),
            str(data.get("description", "")),
        )


@dataclass(frozen=True)
class Variant:
    """A variant's rules as the server serves them (``GET /v1/variants``): its ``name`` (as
    ``variant`` in requests), ``title``, player range, ``decks`` (``(up_to_players, decks)``
    steps, ascending), ``rounds``, the points of a card left in hand by rank
    (``card_points``: ``"A"``, ``"2"`` .. ``"9"``, ``"T"``, ``"J"``, ``"Q"``, ``"K"``,
    ``"JK"``), the joker limit, the claim and the table options."""

    name: str
    title: str
    min_players: int
    max_players: int
    decks: list[tuple[int, int]]
    rounds: list[VariantRound]
    card_points: dict[str, int]
    joker_limit: int | None
    claim: ClaimRules
    options: list[OptionSpec]
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Variant:
        limit = data.get("joker_limit")
        return cls(
            str(data["name"]),
            str(data["title"]),
            int(data["min_players"]),
            int(data["max_players"]),
            [(int(d["up_to_players"]), int(d["decks"])) for d in _list(data, "decks")],
            [VariantRound.from_json(r) for r in _list(data, "rounds")],
            {str(k): int(v) for k, v in (data.get("card_points") or {}).items()},
            None if limit is None else int(limit),
            ClaimRules.from_json(data["claim"]),
            [OptionSpec.from_json(o) for o in _list(data, "options")],
            data,
        )

    def points(self, card: str) -> int:
        """Points ``card`` (a code: ``"7C"``, ``"TH"``, ``"JK"``) scores against its holder
        when a round ends."""
        return self.card_points[rank_code(card)]
