"""Tables and play: ``/v1/games``."""

from __future__ import annotations

import hashlib
import json
import logging
import random
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import redis
from flask import Response, current_app, request, stream_with_context
from flask.views import MethodView

from mayi_engine import GameStatus, move_from_json
from mayi_engine.events import GameEnded
from mayi_service.api import schemas as s
from mayi_service.api.common import (
    StrictBlueprint,
    answers_decision,
    bearer_token,
    document_errors,
    read_arguments,
    services,
)
from mayi_service.api.problems import CONTENT_TYPE, Problem, ServiceError
from mayi_service.bots.decisions import KEY_PREFIX
from mayi_service.bots.seats import seat_for_bot
from mayi_service.play import games as model
from mayi_service.play.slots import AddressSlotsFull, ProcessSlotsFull
from mayi_service.play.tables import token_hash
from mayi_service.play.views import Viewer
from mayi_service.server.deadlines import HangUp, address_key
from mayi_service.storage import codec
from mayi_service.storage.hub import WINDOW_EVENTS, SharedEvent
from mayi_service.storage.leases import StreamSlotsFull

log = logging.getLogger(__name__)

blp = StrictBlueprint("games", __name__, url_prefix="/v1/games", description="Tables and play")

#: What an action can answer besides 200 (400 and 413: a body that is not JSON, or too large).
ACTION_ERRORS = (400, 401, 403, 404, 409, 412, 413, 422, 429, 503)

#: Headers an action reads.
ACTION_HEADERS = ["IfMatch", "IdempotencyKey"]

#: The view, with its ETag.
VIEW = s.union_ref("GameView")
ETAG = {"ETag": {"$ref": "#/components/headers/ETag"}}

#: The event stream's body: text, not JSON (a generated client reads it as a stream of text).
SSE_STREAM = {
    "type": "string",
    "description": (
        "A stream of Server-Sent Events (text/event-stream). Each event is an `id:` line (the event "
        "number, `seq`), an `event:` line (its type: one of `Event`'s `type` values), and a `data:` line "
        "holding the event as JSON, exactly an `Event` (#/components/schemas/Event) as "
        "`GET .../events` lists it; a blank line ends it. Lines that start with `:` keep the "
        "connection alive, and a `retry:` line says how long to wait before reconnecting (ms)."
    ),
    "example": (
        'id: 7\nevent: claimed\ndata: {"seq": 7, "type": "claimed", "seat": 2, "time": 1767225600.5, '
        '"data": {"card": "7H"}}\n\n: keep-alive\n\n'
    ),
}


def _games() -> model.Games:
    return services().games


def _if_match(game_id: str) -> int | None:
    """The version named by ``If-Match`` (a version number, or an ETag of this game's view);
    ``None`` for no header or ``*``. An ETag of another game can never match: -1."""
    raw = request.headers.get("If-Match")
    if raw is None or raw.strip() == "*":
        return None
    text = _if_match_text(raw)
    if text.startswith(KEY_PREFIX):  # a decision's key: see _if_key
        return None
    if "-" in text:  # an ETag of ours: "<game>-<version>-<seat>" (game ids may hold "-")
        head, _, _seat = text.rpartition("-")
        game, _, version = head.rpartition("-")
        if not _is_number(version):
            raise ServiceError(Problem.VALIDATION_ERROR, "If-Match: give the game version you saw, or its ETag")
        return int(version) if game == game_id else -1
    if not _is_number(text):
        raise ServiceError(Problem.VALIDATION_ERROR, "If-Match: give the game version you saw (a whole number)")
    return int(text)


def _if_match_text(raw: str) -> str:
    text = raw.strip()
    if text.startswith("W/"):
        text = text[2:]
    return text.strip('"')


def _if_key() -> str | None:
    """The decision key named by ``If-Match: key:<key>`` (the seat-scoped precondition), or ``None``."""
    raw = request.headers.get("If-Match")
    if raw is None:
        return None
    text = _if_match_text(raw)
    if not text.startswith(KEY_PREFIX):
        return None
    key = text[len(KEY_PREFIX) :]
    if not 1 <= len(key) <= 64:
        raise ServiceError(Problem.VALIDATION_ERROR, "If-Match: give key:<the decision's key>, 1 to 64 characters")
    return key


def _is_number(text: str) -> bool:
    """A whole number in ASCII digits that fits an event or version number (``str.isdigit``
    also accepts digits like "²" that ``int`` refuses)."""
    return text.isascii() and text.isdigit() and len(text) <= 15


def _idempotency_key() -> str | None:
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not 1 <= len(key) <= 255:
        raise ServiceError(Problem.VALIDATION_ERROR, "Idempotency-Key: 1 to 255 characters")
    return key


#: Bodies already in the form their schema loads them into, per move type: taken as they
#: are (:func:`read_arguments`); any other body goes through the schema, which names the
#: wrong field. (Go-downs and lay-offs, rarer and nested, always do.)
LEAN_BODIES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "draw": lambda b: len(b) == 1 and b.get("source") in ("stock", "discard"),
    "discard": lambda b: len(b) == 1 and type(b.get("card")) is str and s.is_card_code(b["card"]),
    "claim": lambda b: len(b) == 1 and type(b.get("claim")) is bool,
}


def _act(game_id: str, move_type: str, schema: type) -> Response:
    """Play the move of type ``move_type`` (as ``legal`` names it) whose fields are the body
    (read as ``schema`` reads it): the engine's own JSON reader makes the move."""
    body = read_arguments(schema, LEAN_BODIES.get(move_type))
    move = move_from_json({**body, "type": move_type})
    key = _idempotency_key()
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest() if key else ""
    view = _games().act(
        game_id,
        bearer_token(),
        move,
        if_match=_if_match(game_id),
        if_key=_if_key(),
        idempotency_key=key,
        body_digest=f"{request.path}\x00{digest}" if key else "",
    )
    answers_decision()  # a move the game took: not counted by the rate limits
    return _with_etag(view)


def _etag(view: dict[str, Any]) -> str:
    seat = view.get("seat")
    return f'"{view["id"]}-{view["version"]}-{"p" if seat is None else seat}"'


def _with_etag(view: dict[str, Any]) -> Response:
    # Views are JSON-ready already (the engine builds them); the GameView schema documents
    # them, and tests/service/contract/test_responses_match_the_document.py holds them to it.
    headers = [("Content-Type", "application/json"), ("ETag", _etag(view)), ("Cache-Control", "no-cache")]
    return current_app.response_class(codec.dump_bytes(view), headers=headers)


@blp.route("")
class Games(MethodView):
    @blp.arguments(
        s.GameCreateSchema,
        example={
            "variant": "may_i",
            "seats": 3,
            "options": {"claim_seconds": 15, "turn_seconds": 60},
            "players": [{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}],
        },
    )
    @blp.response(201, s.GameCreatedSchema)
    @blp.doc(operationId="createGame")
    @document_errors(400, 409, 413, 422, 429, 503)
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """Create a table

        `players` fills seats at once and returns their tokens (shown only once);
        the game starts when every seat is taken. A `test` block (seed, stacked
        decks, start round) makes the table unrated. Creating tables has its own
        rate limit per client address (429), and one address may have only so many
        open tables, waiting or playing, at once (409 `too_many_open_tables`).
        A table still waiting for players an hour after its last seat was taken expires.
        """
        games = _games()
        record, issued = games.create(data, owner=request.remote_addr or "?")
        view = games.view(record, Viewer(None))
        return {"game_id": record.id, "seats": issued, "game": view}

    @blp.arguments(s.ListGamesQuerySchema, location="query")
    @blp.response(200, s.GameListSchema)
    @blp.doc(operationId="listGames")
    @document_errors(422, 429, 503)
    def get(self, query: dict[str, Any]) -> dict[str, Any]:
        """List tables

        Newest first, filtered by `status` and `variant`, a page at a time.
        """
        return _games().list_games(query.get("status"), query.get("variant"), query["page"], query["page_size"])


@blp.route("/<string:game_id>", parameters=["IfNoneMatch"])
class Game(MethodView):
    @blp.documented_response(200, VIEW, headers=ETAG)
    @blp.alt_response(
        304, description="Not modified: the view still has the `ETag` sent in `If-None-Match`", headers=ETAG
    )
    @blp.doc(operationId="getGame")
    @document_errors(401, 403, 404, 429, 503)
    def get(self, game_id: str) -> Response:
        """The caller's view of a game

        With a seat token: the seat's hand and its legal moves. Without: the
        public view. Honors `If-None-Match`.
        """
        games = _games()
        record, viewer = games.load_as(game_id, bearer_token())
        view = games.view(record, viewer)
        if view.get("legal"):
            answers_decision()  # the seat's decision: not counted by the rate limits
        etag = _etag(view)
        if request.headers.get("If-None-Match") == etag:
            response = current_app.response_class(status=304)
            response.headers["ETag"] = etag
            return response
        return _with_etag(view)


@blp.route("/<string:game_id>/seats")
class Seats(MethodView):
    @blp.arguments(s.SeatInSchema, example={"name": "Dee"})
    @blp.response(201, s.SeatTakenSchema)
    @blp.doc(operationId="takeSeat")
    @document_errors(400, 401, 404, 409, 413, 422, 429, 503)
    def post(self, data: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Take an open seat

        The lowest open seat, or `seat` if given. Returns the seat token (shown
        only once). The game starts when every seat is taken. Sent with a bot's
        token, the bot takes the seat and acts there with that same token (the
        answer's `token` is it); a bot holds at most one seat per game (409
        `bot_already_seated`). With `house_bot` (and no token), one of the
        reference bots takes the seat and the service plays it (the answer's
        `token` is null; 409 `house_bots_unavailable` on a server without a job
        worker).
        """
        games = _games()
        house_bot = data.get("house_bot")
        if house_bot is not None:
            if bearer_token():
                raise ServiceError(
                    Problem.VALIDATION_ERROR, "house_bot: a house bot takes a seat without a token; send none"
                )
            services().house.require()
            record, seat, _ = games.take_seat(game_id, data.get("name"), data.get("seat"), house_bot=house_bot)
            return {"seat": seat, "token": None, "game": games.view(record, Viewer(None))}
        if "name" not in data:
            raise ServiceError(Problem.VALIDATION_ERROR, "name: required (or house_bot, to seat a house bot)")
        # A bot token takes the seat for its bot (mayi_service.bots.seats).
        registry = services().bots
        bot_seat = seat_for_bot(registry, game_id, bearer_token())
        if bot_seat is not None:
            bot_id, digest, token = bot_seat
            record, seat, _ = games.take_seat(game_id, data["name"], data.get("seat"), digest, bot_id=bot_id)
            registry.took_seat(bot_id, game_id, seat)
            return {"seat": seat, "token": token, "game": games.view(record, Viewer(seat))}
        record, seat, token = games.take_seat(game_id, data["name"], data.get("seat"))
        return {"seat": seat, "token": token, "game": games.view(record, Viewer(seat))}


@blp.route("/<string:game_id>/turn/draw", parameters=ACTION_HEADERS)
class Draw(MethodView):
    @blp.documented_arguments(s.DrawInSchema, example={"source": "stock"})
    @blp.documented_response(200, VIEW, headers=ETAG)
    @blp.doc(operationId="drawCard")
    @document_errors(*ACTION_ERRORS)
    def post(self, game_id: str) -> Response:
        """Draw from the stock or take the discard

        The stock draw waits until every eligible seat has answered the upcard
        or the claim window has closed (`claims_open`, with `retry_after`).
        """
        return _act(game_id, "draw", s.DrawInSchema)


@blp.route("/<string:game_id>/turn/discard", parameters=ACTION_HEADERS)
class DiscardCard(MethodView):
    @blp.documented_arguments(s.DiscardInSchema, example={"card": "QS"})
    @blp.documented_response(200, VIEW, headers=ETAG)
    @blp.doc(operationId="discardCard")
    @document_errors(*ACTION_ERRORS)
    def post(self, game_id: str) -> Response:
        """Discard a card, ending the turn

        The card must be in the hand and may not be the one taken this turn (`held`).
        """
        return _act(game_id, "discard", s.DiscardInSchema)


@blp.route("/<string:game_id>/claims", parameters=ACTION_HEADERS)
class Claims(MethodView):
    @blp.documented_arguments(s.ClaimInSchema, example={"claim": True})
    @blp.documented_response(200, VIEW, headers=ETAG)
    @blp.doc(operationId="claimUpcard")
    @document_errors(*ACTION_ERRORS)
    def post(self, game_id: str) -> Response:
        """Claim (May I / buy) or pass the upcard

        Also answers the May I first-upcard offer. Priority, not arrival order,
        decides who gets a claimed card.
        """
        return _act(game_id, "claim", s.ClaimInSchema)


@blp.route("/<string:game_id>/melds", parameters=ACTION_HEADERS)
class Melds(MethodView):
    @blp.documented_arguments(
        s.MeldsInSchema, example={"melds": [["7H", "7S", "7D"], ["4C", "5C", "JK", "7C"]], "lay_offs": []}
    )
    @blp.documented_response(200, VIEW, headers=ETAG)
    @blp.doc(operationId="goDown")
    @document_errors(*ACTION_ERRORS)
    def post(self, game_id: str) -> Response:
        """Go down

        Lay down exactly the round's contract; runs low to high, a joker where
        the card it stands for goes. Optional lay-offs in the same request
        (where the variant allows them on the go-down turn), all or nothing.
        """
        return _act(game_id, "go_down", s.MeldsInSchema)


@blp.route("/<string:game_id>/lay-offs", parameters=ACTION_HEADERS)
class LayOffs(MethodView):
    @blp.documented_arguments(
        s.LayOffsInSchema, example={"lay_offs": [{"meld": 3, "cards": ["8C"], "joker_to": "high"}]}
    )
    @blp.documented_response(200, VIEW, headers=ETAG)
    @blp.doc(operationId="layOff")
    @document_errors(*ACTION_ERRORS)
    def post(self, game_id: str) -> Response:
        """Lay off cards on melds on the table

        All or nothing. `joker_to` says where a joker goes (a joker laid off on
        a run, or one displaced by the card it stood for).
        """
        return _act(game_id, "lay_off", s.LayOffsInSchema)


@blp.route("/<string:game_id>/events")
class Events(MethodView):
    @blp.arguments(s.EventsQuerySchema, location="query")
    @blp.response(200, s.EventListSchema)
    @blp.doc(operationId="getEvents")
    @document_errors(401, 403, 404, 422, 429, 503)
    def get(self, query: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Events after a number, long-polling

        Returns the events after `after` that the caller may see, at most 1,000
        (ask again with `after=last` for more); if there are none, waits up to
        `wait` seconds (at most 60) for the next.
        """
        games = _games()
        token = bearer_token()
        viewer = games.viewer(game_id, token)
        settings = services().settings
        wait = min(query["wait"], settings.max_wait_seconds)
        if wait <= 0:
            events = games.events(game_id, viewer, query["after"], 0)
        else:
            with _waiting(WAITS, f"wait:{client_key(token)}", settings.max_waits_per_client, wait):
                hangup = HangUp(request.environ, lambda: games.repo.hub.interrupt(games.repo.events_key(game_id)))
                try:
                    events = games.events(game_id, viewer, query["after"], wait, gone=hangup)
                finally:
                    hangup.close()
        last = events[-1]["seq"] if events else query["after"]
        return {"events": events, "last": last}


@blp.route("/<string:game_id>/events/stream", parameters=["LastEventID", "After"])
class EventStream(MethodView):
    @blp.response(
        200,
        SSE_STREAM,
        content_type="text/event-stream",
        description="Server-Sent Events: `id` is the event number, `event` its type, `data` the event JSON",
    )
    @blp.alt_response(204, description="The game is over and every event after Last-Event-ID was sent: stop")
    @blp.doc(operationId="streamEvents")
    @document_errors(401, 403, 404, 422, 429, 503)
    def get(self, game_id: str) -> Response:
        """Events as Server-Sent Events

        Resumes after the `Last-Event-ID` header (or `?after=`). The server
        closes the stream after a few minutes; clients reconnect with
        `Last-Event-ID`.
        """
        games = _games()
        token = bearer_token()
        record, viewer = games.load_as(game_id, token)
        after = request.args.get("after")
        if after is not None and not _is_number(after):
            raise ServiceError(Problem.VALIDATION_ERROR, "after: give the number of the last event you saw")
        raw = request.headers.get("Last-Event-ID") or after or "0"
        if not _is_number(raw):
            raise ServiceError(Problem.VALIDATION_ERROR, "Last-Event-ID: give the number of the last event you saw")
        if record.status == GameStatus.FINISHED and record.seq <= int(raw):
            # Everything was sent: 204 tells an EventSource to stop reconnecting.
            return current_app.response_class(status=204)
        settings = services().settings
        heartbeat = settings.sse_heartbeat_seconds
        # The stream's lease is renewed at each heartbeat, and lasts two (and a margin).
        slot = waiting_slot(client_key(token), settings.max_streams_per_client, 2 * heartbeat)
        held = ExitStack()
        with slot_errors(STREAMS, settings.max_streams_per_client):
            slot.take()
        held.callback(_give, slot)
        try:
            hangup = HangUp(request.environ, lambda: games.repo.hub.interrupt(games.repo.events_key(game_id)))
            held.callback(hangup.close)
            pace = settings.spectator_pace_seconds if viewer.seat is None else 0.0
            events = _sse(games, game_id, viewer, int(raw), settings.sse_max_seconds, heartbeat, pace, slot, hangup)
            response = Response(
                stream_with_context(events),
                mimetype="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            )
        except BaseException:
            held.close()
            raise
        # The server closes the response however the stream ends, even one never started.
        response.call_on_close(held.close)
        return response


@dataclass(frozen=True)
class _Kind:
    """A kind of waiting request, as its 429 names it."""

    what: str
    setting: str
    advice: str
    retry_after: str


STREAMS = _Kind(
    "open event streams", "MAYI_MAX_STREAMS_PER_CLIENT", "; close one, or long-poll the events instead", "5"
)
WAITS = _Kind("long-polls waiting", "MAYI_MAX_WAITS_PER_CLIENT", "", "1")


def waiting_slot(client: str, per_client: int, seconds: float) -> model.WaitSlot:
    """A waiting slot of ``client`` (a token, or an address) whose lease lasts ``seconds``
    (and a margin), counted against this process and the request's address (not taken yet)."""
    settings = services().settings
    return _games().wait_slot(
        client,
        per_client,
        seconds,
        settings.max_waiting_per_process,
        address_key((request.remote_addr or "?",)),
        settings.max_waiting_per_address,
    )


def _give(slot: model.WaitSlot) -> None:
    """Give ``slot`` back as a stream ends; with the game store down, its lease is left to expire."""
    try:
        slot.give()
    except redis.RedisError as exc:
        log.warning("a stream's waiting slot is left to expire (%s): %s", slot.key, exc)


@contextmanager
def _waiting(kind: _Kind, client: str, per_client: int, seconds: float) -> Iterator[None]:
    """Hold one waiting slot of this process, of the request's address and of ``client``
    while the body runs: 503 when the process is full, 429 when the address or the client is."""
    slot = waiting_slot(client, per_client, seconds)
    with slot_errors(kind, per_client):
        slot.take()
    try:
        yield
    finally:
        slot.give()


@contextmanager
def slot_errors(kind: _Kind, per_client: int) -> Iterator[None]:
    """The body's refusals of a waiting slot as the answers that name them: 503 when the
    process holds its limit, 429 when the client does."""
    try:
        yield
    except ProcessSlotsFull as exc:
        raise ServiceError(
            Problem.SERVER_BUSY,
            f"This server process already holds {exc.limit} event streams and waiting "
            "long-polls, its limit (MAYI_MAX_WAITING_PER_PROCESS); retry after Retry-After seconds, "
            "or read the events without waiting (wait=0)",
            {"Retry-After": "5"},
        ) from exc
    except AddressSlotsFull as exc:
        raise ServiceError(
            Problem.RATE_LIMITED,
            f"Too many event streams and waiting long-polls from {exc.address} at once: at most {exc.limit} per "
            "address in a server process, over all of its tokens (MAYI_MAX_WAITING_PER_ADDRESS); close one, "
            "or retry after Retry-After seconds",
            {"Retry-After": "5"},
        ) from exc
    except StreamSlotsFull as exc:
        raise ServiceError(
            Problem.RATE_LIMITED,
            f"Too many {kind.what} at once: at most {per_client} per token (or per address without one), "
            f"the limit {kind.setting}{kind.advice}",
            {"Retry-After": kind.retry_after},
        ) from exc


def client_key(token: str | None) -> str:
    return "t:" + token_hash(token)[:32] if token else "a:" + (request.remote_addr or "?")


def _sse(
    games: model.Games,
    game_id: str,
    viewer: Viewer,
    after: int,
    max_seconds: float,
    heartbeat: float,
    pace: float,
    slot: model.WaitSlot,
    hangup: HangUp,
) -> Iterator[str | bytes]:
    """The stream's text: events as they come, a keep-alive at each ``heartbeat``, which also
    renews the stream's lease (``slot``); it ends after ``max_seconds``, when the lease is
    gone (the client reconnects and is admitted again), or when the client hangs up.

    With a ``pace`` (seconds, above 0), the stream writes at most once in each interval of
    that length on a grid of its own (a random phase, so that the streams of a game write at
    different moments): events that come sooner than its next interval gather and go in one
    write then, in order; the first after a quiet interval goes at once.

    Events this process's reader of the game has just read (:meth:`EventHub.recent`) are
    taken from it, each encoded once for every stream that sees it the same way
    (:func:`_frame`); others are read from the game store."""
    hub, key = games.repo.hub, games.repo.events_key(game_id)
    last = ""  # the type of the last event sent
    end = time.monotonic() + max_seconds
    # The first heartbeat comes a little early, by chance: streams opened together (a
    # reconnect storm) would otherwise renew and look at their games together ever after.
    renew_at = time.monotonic() + heartbeat * random.uniform(0.5, 1.0)
    phase = random.uniform(0.0, pace)
    next_write = 0.0  # (paced) the start of the next interval, before which nothing is written
    yield "retry: 2000\n\n"
    while time.monotonic() < end:
        if hangup.gone:
            return
        if time.monotonic() >= renew_at:
            if not slot.renew():
                return
            renew_at = time.monotonic() + heartbeat
        wait = max(0.05, min(heartbeat, end - time.monotonic(), renew_at - time.monotonic()))
        shared = hub.recent(key, after)
        if shared:
            if pace > 0 and next_write < end and (early := next_write - time.monotonic()) > 0:
                hub.hold(key, early)  # (then every event come meanwhile goes in one write)
                continue
            after, last = shared[-1].seq, shared[-1].event["type"]
            yield b"".join([_frame(e, viewer.seat) for e in shared])
            if pace > 0:
                next_write = _next_interval(time.monotonic(), phase, pace)
            continue
        start = hub.start(key) if shared is None and last != LAST_EVENT else None
        if start is not None and after < start <= after + WINDOW_EVENTS // 2:
            # Just behind the reader's window (after a gap: a round's last events archived
            # before the reader read them; or a stream opened after the reader started): read
            # what is missing, and more, half a window back from the window, and give it to the
            # reader for every stream behind it, rather than each reading the archive itself.
            since = max(0, start - WINDOW_EVENTS // 2)
            missing = games.repo.events_after(game_id, since, count=start - since)
            hub.fill(key, [SharedEvent.of(e) for e in missing])
            if hub.recent(key, after) is not None:
                continue
        if shared is not None and last != LAST_EVENT:
            # Nothing new that the reader has read: wait for its next, without a read of our own.
            if hub.wait(key, after, wait, gone=hangup):
                continue
            if hangup.gone:
                return
            # The reader read nothing new: no read of our own (the game is looked at below).
            found = [] if hub.recent(key, after) == [] else games.events(game_id, viewer, after, 0)
        else:
            found = games.events(game_id, viewer, after, wait, gone=hangup)
        if hangup.gone:
            return
        if not found:
            if games.load(game_id).status == GameStatus.FINISHED:
                # The last events may have moved to the archive while we waited: read once more.
                found = games.events(game_id, viewer, after, 0)
                if not found:
                    return  # the game is over and every event has been sent
            else:
                yield ": keep-alive\n\n"
                continue
        if pace > 0 and next_write < end and (early := next_write - time.monotonic()) > 0:
            hub.hold(key, early)
        after, last = found[-1]["seq"], found[-1]["type"]
        yield "".join([_event_text(event) for event in found])
        if pace > 0:
            next_write = _next_interval(time.monotonic(), phase, pace)


def _next_interval(now: float, phase: float, pace: float) -> float:
    """The start of the next interval after ``now`` on the grid ``phase + k * pace``."""
    return now + pace - (now - phase) % pace


#: The type of a game's last event: after it, a stream looks at the game (over: it ends).
LAST_EVENT = GameEnded.type


def _event_text(event: dict[str, Any]) -> str:
    """One event of a stream, as the viewer may see it (:func:`model.visible`)."""
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {codec.dump(event)}\n\n"


def _frame(shared: SharedEvent, seat: int | None) -> bytes:
    """:func:`_event_text` of ``shared`` as ``seat`` may see it (encoded), made once for every stream
    that sees it so: the event's own seat sees its private part, every other viewer the
    same public text."""
    event = shared.event
    own = seat if seat is not None and "private" in event and event.get("seat") == seat else None
    text: bytes | None = shared.derived.get(("sse", own))
    if text is None:
        text = shared.derived[("sse", own)] = _event_text(model.visible(event, own)).encode()
    return text


@blp.route("/<string:game_id>/replay")
class Replay(MethodView):
    @blp.response(200, s.ReplaySchema)
    @blp.doc(operationId="getReplay")
    @document_errors(404, 409, 429, 503)
    def get(self, game_id: str) -> dict[str, Any]:
        """The whole game, after it ends

        Every event with every private detail (each dealt hand, each card drawn),
        and the seed of the shuffles.
        """
        return _games().replay(game_id)


__all__ = ["CONTENT_TYPE", "blp"]
