"""A game's events: ``GET /v1/games/{game_id}/events`` (a page, long-polling) and
``.../events/stream`` (Server-Sent Events)."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

from flask import Response, current_app, request, stream_with_context
from flask.views import MethodView

from mayi_engine import GameStatus
from mayi_engine.events import GameEnded
from mayi_service.api.common import bearer_token, document_errors, is_number
from mayi_service.api.context import services
from mayi_service.api.games import blp
from mayi_service.api.schemas import events as s
from mayi_service.api.waiting import STREAMS, WAITS, client_key, give, slot_errors, waiting, waiting_slot
from mayi_service.play.games import Games, Viewer
from mayi_service.play.slots import WaitSlot
from mayi_service.play.views import visible
from mayi_service.problem_types import Problem, ServiceError
from mayi_service.server.deadlines import HangUp
from mayi_service.storage import codec
from mayi_service.storage.hub import WINDOW_EVENTS, SharedEvent

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


@blp.route("/<string:game_id>/events")
class Events(MethodView):
    @blp.arguments(s.EventsQuerySchema(), location="query")
    @blp.response(200, s.EventListSchema)
    @blp.doc(operationId="getEvents")
    @document_errors(401, 403, 404, 422, 429, 503)
    def get(self, query: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Events after a number, long-polling

        Returns the events after `after` that the caller may see, at most 1,000
        (ask again with `after=last` for more); if there are none, waits up to
        `wait` seconds (at most 60) for the next.
        """
        games = services().games
        token = bearer_token()
        viewer = games.viewer(game_id, token)
        settings = services().settings
        wait = min(query["wait"], settings.max_wait_seconds)
        if wait <= 0:
            events = games.events(game_id, viewer, query["after"], 0)
        else:
            with waiting(WAITS, f"wait:{client_key(token)}", settings.max_waits_per_client, wait):
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
        games = services().games
        token = bearer_token()
        record, viewer = games.load_as(game_id, token)
        after = request.args.get("after")
        if after is not None and not is_number(after):
            raise ServiceError(Problem.VALIDATION_ERROR, "after: give the number of the last event you saw")
        raw = request.headers.get("Last-Event-ID") or after or "0"
        if not is_number(raw):
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
        held.callback(give, slot)
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


def _sse(
    games: Games,
    game_id: str,
    viewer: Viewer,
    after: int,
    max_seconds: float,
    heartbeat: float,
    pace: float,
    slot: WaitSlot,
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
    """One event of a stream, as the viewer may see it (:func:`visible`)."""
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {codec.dump(event)}\n\n"


def _frame(shared: SharedEvent, seat: int | None) -> bytes:
    """:func:`_event_text` of ``shared`` as ``seat`` may see it (encoded), made once for every stream
    that sees it so: the event's own seat sees its private part, every other viewer the
    same public text."""
    event = shared.event
    own = seat if seat is not None and "private" in event and event.get("seat") == seat else None
    text: bytes | None = shared.derived.get(("sse", own))
    if text is None:
        text = shared.derived[("sse", own)] = _event_text(visible(event, own)).encode()
    return text
