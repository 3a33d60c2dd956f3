"""Event streams following a game in play share its events: each event is read from Redis
once per process (by the game's reader, ``mayi_service.storage.hub``), not once per stream, and
every stream still carries exactly what its viewer may see (the seat's private parts on
its own stream only), as ``GET .../events`` gives it. Spectators' streams are paced
(``MAYI_SPECTATOR_PACE_SECONDS``): events that come faster gather into fewer writes; seats'
streams are not. Against a real ``mayi serve`` (gunicorn, gevent) on a Redis of its own,
whose command counts the test reads."""

from __future__ import annotations

import http.client
import itertools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import redis
import requests
from serving import act, new_game, next_move, ready_server, redis_process, wait_until

from mayi_service.storage.hub import WAKE_GROUP, WINDOW_EVENTS, EventHub, SharedEvent, _Watch

#: Spectators (no token) from each of these addresses, within the default of 4 streams a client.
SPECTATOR_ADDRESSES = ("127.0.0.2", "127.0.0.3", "127.0.0.4")
SPECTATORS_PER_ADDRESS = 3
MOVES = 12


class Stream:
    """One event stream read by a thread of its own: its events, as sent (``id``, ``event``,
    ``data`` parsed) and as text, and the HTTP chunk (one write of the server) each came in."""

    def __init__(
        self, port: int, game_id: str, token: str | None = None, source: str = "127.0.0.1", resume: int = 0
    ) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(source, 0))
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if resume:
            headers["Last-Event-ID"] = str(resume)
        self.connection.request("GET", f"/v1/games/{game_id}/events/stream", headers=headers)
        self.response = self.connection.getresponse()
        assert self.response.status == 200, self.response.read()[:300]
        assert self.response.getheader("Transfer-Encoding") == "chunked"
        self.events: list[dict[str, Any]] = []
        self.texts: list[str] = []
        #: The number of the chunk each event ended in (chunks counted from 0).
        self.chunk_of: list[int] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        buffer = ""
        # (the read ends when the server ends the stream, or fails as the test closes it: the
        # test compares what was read)
        raw = self.response.fp  # (the chunked framing is read here, to count the chunks)
        with suppress(Exception):
            for chunk in itertools.count():
                size = int(raw.readline().split(b";")[0], 16)
                if size == 0:
                    return
                data = raw.read(size)
                assert raw.readline() == b"\r\n"
                buffer += data.decode()
                *blocks, buffer = buffer.split("\n\n")
                for block in blocks:
                    fields = dict(line.split(": ", 1) for line in block.split("\n") if not line.startswith(":"))
                    if "data" in fields:
                        self.chunk_of.append(chunk)
                        self.texts.append(block)
                        self.events.append(
                            {"id": int(fields["id"]), "event": fields["event"], "data": json.loads(fields["data"])}
                        )

    def close(self) -> None:
        with suppress(OSError):
            self.connection.sock.shutdown(2)  # type: ignore[union-attr]
        self.connection.close()
        self.thread.join(30)

    def writes_after(self, seq: int) -> int:
        """The chunks that brought the events numbered above ``seq``."""
        return len({chunk for chunk, e in zip(self.chunk_of, self.events, strict=True) if e["id"] > seq})


@contextmanager
def streams(port: int, game_id: str, tokens: list[str]) -> Iterator[tuple[list[Stream], list[Stream]]]:
    """Spectators' streams and one stream per seat, closed at the end."""
    with ExitStack() as stack:
        spectators, seats = [], []
        for source in SPECTATOR_ADDRESSES:
            for _ in range(SPECTATORS_PER_ADDRESS):
                spectators.append(Stream(port, game_id, source=source))
                stack.callback(spectators[-1].close)
        for token in tokens:
            seats.append(Stream(port, game_id, token))
            stack.callback(seats[-1].close)
        yield spectators, seats


def xranges(client: redis.Redis) -> int:
    """``XRANGE`` calls the Redis has served (the reads of events after a number)."""
    stats: dict[str, Any] = client.info("commandstats")
    return int(stats.get("cmdstat_xrange", {}).get("calls", 0))


def all_events(url: str, game_id: str, token: str | None) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": 0}, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    return [{"id": e["seq"], "event": e["type"], "data": e} for e in answer.json()["events"]]


def test_streams_on_a_game_in_play_share_each_event_and_carry_what_their_viewer_sees(tmp_path: Path) -> None:
    with (
        redis_process(tmp_path / "redis") as store,
        ready_server(tmp_path, {"REDIS_URL": store.url}) as served,
    ):
        url, client = served.url, store.client()
        game_id, tokens, first = new_game(url)
        assert client.dbsize() > 0  # (the server's Redis is the one counted)
        with streams(served.port, game_id, tokens) as (spectators, seats):
            every = spectators + seats
            assert wait_until(lambda: all(len(s.events) >= first for s in every), 60)
            before = xranges(client)
            for _ in range(MOVES):
                token, path, body = next_move(url, game_id, tokens)
                moved = act(url, game_id, token, path, body)
                assert moved.status_code == 200, moved.text
            last = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": first}, timeout=30).json()["last"]
            assert last >= first + MOVES
            assert wait_until(lambda: all(s.events and s.events[-1]["id"] == last for s in every), 60)
            # The events of the moves reached 12 streams with hardly a read of their own (before:
            # two reads a stream and event, one of which found nothing).
            reads = xranges(client) - before - 1  # (less the read of `last` above)
            assert reads < len(every), f"{reads} XRANGE calls for {len(every)} streams and {MOVES} moves"

            public = all_events(url, game_id, None)
            assert all("private" not in e["data"] for e in public)
            for stream in spectators:
                assert stream.events == public
                assert stream.texts == spectators[0].texts
            for seat, (token, stream) in enumerate(zip(tokens, seats, strict=True)):
                own = all_events(url, game_id, token)
                assert stream.events == own
                assert any(e["data"].get("seat") == seat and "private" in e["data"] for e in own)
                assert all(e["data"].get("seat") == seat for e in own if "private" in e["data"])


#: The spectators' pacing interval of the test below: longer than the default, so that the moves
#: come faster than it even on a loaded machine (and well apart from the seats' delivery).
TEST_PACE = 5.0


def test_spectators_streams_gather_fast_moves_into_fewer_writes_and_seats_streams_are_not_held(
    tmp_path: Path,
) -> None:
    with (
        redis_process(tmp_path / "redis") as store,
        ready_server(tmp_path, {"REDIS_URL": store.url, "MAYI_SPECTATOR_PACE_SECONDS": str(TEST_PACE)}) as served,
    ):
        url, client = served.url, store.client()
        game_id, tokens, first = new_game(url)
        with streams(served.port, game_id, tokens) as (spectators, seats):
            every = spectators + seats
            assert wait_until(lambda: all(len(s.events) >= first for s in every), 60)
            before = xranges(client)
            started = time.monotonic()
            for _ in range(MOVES):
                token, path, body = next_move(url, game_id, tokens)
                moved = act(url, game_id, token, path, body)
                assert moved.status_code == 200, moved.text
                seq = moved.json()["last_event"]
                # A seat's stream is not held: each move reaches every seat before the next is made.
                assert wait_until(lambda seq=seq: all(s.events and s.events[-1]["id"] >= seq for s in seats), 30)
            played = time.monotonic() - started
            # (the cap is a behaviour's: 12 moves and deliveries take a few seconds even when the
            # machine is loaded; seats' streams paced like spectators' would take about 55 s)
            assert played < MOVES / 2 * TEST_PACE, f"{MOVES} moves delivered to the seats in {played:.1f} s"
            last = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": first}, timeout=30).json()["last"]
            assert all(s.events[-1]["id"] == last for s in seats)
            assert wait_until(lambda: all(s.events and s.events[-1]["id"] == last for s in spectators), 60)
            # (every write of the moves' events to a spectator was made within these seconds)
            delivered = time.monotonic() - started
            reads = xranges(client) - before - 1  # (less the read of `last` above)
            assert reads < len(every), f"{reads} XRANGE calls for {len(every)} streams and {MOVES} moves"

            # Exactly the events of each viewer, in order, however many writes brought them.
            public = all_events(url, game_id, None)
            for stream in spectators:
                assert stream.events == public
                assert stream.texts == spectators[0].texts
            for token, stream in zip(tokens, seats, strict=True):
                assert stream.events == all_events(url, game_id, token)
            # A seat got each move in a write of its own; a spectator at most one write in each
            # interval of its grid, of which `delivered` seconds overlap at most `most`.
            most = int(delivered / TEST_PACE) + 2
            assert most < MOVES, f"the moves took {delivered:.1f} s to reach the spectators"
            for stream in seats:
                assert stream.writes_after(first) >= MOVES
            for stream in spectators:
                assert stream.writes_after(first) <= most, (stream.writes_after(first), most, delivered)

            # A spectator resuming after an event gets the rest at once, as before.
            resumed = Stream(served.port, game_id, source=SPECTATOR_ADDRESSES[0], resume=first + 3)
            try:
                assert wait_until(lambda: resumed.events and resumed.events[-1]["id"] == last, 30)
                assert resumed.events == [e for e in public if e["id"] > first + 3]
            finally:
                resumed.close()


def test_a_readers_window_holds_every_event_after_a_number_or_says_it_cannot(redis_client: redis.Redis) -> None:
    watch = _Watch(EventHub(redis_client), "k", after=10)  # (its reader thread is not started)
    assert watch.recent(10) == []
    watch._keep([SharedEvent(11, b'{"seq":11}'), SharedEvent(12, b'{"seq":12}')])
    assert [e.seq for e in watch.recent(10) or []] == [11, 12]
    assert [e.seq for e in watch.recent(11) or []] == [12]
    assert watch.recent(12) == [] and watch.recent(40) == []
    assert watch.recent(9) is None  # before the window: read from Redis
    assert watch.recent(10)[0].event == {"seq": 11}  # type: ignore[index]

    # Events archived before the reader saw them (13 to 19): the window starts again after the gap.
    watch._keep([SharedEvent(20, b"{}")])
    assert watch.recent(12) is None and watch.recent(18) is None
    assert [e.seq for e in watch.recent(19) or []] == [20]

    # It keeps the newest WINDOW_EVENTS: 20 is dropped.
    watch._keep([SharedEvent(seq, b"{}") for seq in range(21, 21 + WINDOW_EVENTS)])
    newest = 20 + WINDOW_EVENTS
    assert watch.recent(19) is None
    assert [e.seq for e in watch.recent(20) or []] == list(range(21, newest + 1))


def test_a_reader_rings_as_many_groups_as_its_waiters_make_now(redis_client: redis.Redis) -> None:
    watch = _Watch(EventHub(redis_client), "k", after=0)  # (its reader thread is not started)
    watch.waiters = 3 * WAKE_GROUP
    held = [watch.bell(ticket) for ticket in range(watch.waiters)]
    assert len(watch.bells) == 3 and len(set(map(id, held))) == 3
    watch.waiters = 2  # most have gone: one group, and the waiters of the groups dropped look again
    assert watch.bell(0) is watch.bell(1) and len(watch.bells) == 1
    assert sum(bell.is_set() for bell in set(held)) == 2


def test_a_stream_holding_for_its_interval_keeps_the_games_reader(redis_client: redis.Redis) -> None:
    hub = EventHub(redis_client, block_seconds=0.1)
    hub.linger_ms = 100  # (a reader nobody waits on stops within about 0.2 s, rather than 1 s)
    key = f"hold-{threading.get_ident()}"
    assert not hub.wait(key, 0, 0.01)  # starts the reader; nobody waits on it after this
    assert wait_until(lambda: hub.readers() == 0, 30)

    assert not hub.wait(key, 0, 0.01)
    holder = threading.Thread(target=hub.hold, args=(key, 6.0))
    holder.start()
    try:
        time.sleep(1.0)  # (five lingers: long gone if the holder did not count)
        assert hub.readers() == 1
        redis_client.xadd(key, {"e": b'{"seq":1}'}, id="1-0")
        assert wait_until(lambda: [e.seq for e in hub.recent(key, 0) or []] == [1], 30)
    finally:
        holder.join(30)
        redis_client.delete(key)
    assert wait_until(lambda: hub.readers() == 0, 30)


def test_a_stream_behind_the_window_fills_it_for_the_others(redis_client: redis.Redis) -> None:
    watch = _Watch(EventHub(redis_client), "k", after=10)  # (its reader thread is not started)
    watch._keep([SharedEvent(11, b'{"seq":11}'), SharedEvent(12, b'{"seq":12}')])
    assert watch.recent(7) is None
    watch.fill([SharedEvent.of({"seq": 8}), SharedEvent.of({"seq": 10})])  # not contiguous: ignored
    watch.fill([SharedEvent.of({"seq": 8}), SharedEvent.of({"seq": 9})])  # not up to the window: ignored
    assert watch.recent(7) is None
    watch.fill([SharedEvent.of({"seq": seq}) for seq in range(8, 13)])  # 11 and 12 it has already
    assert [e.event for e in watch.recent(7) or []] == [{"seq": 8}, {"seq": 9}, {"seq": 10}, {"seq": 11}, {"seq": 12}]
    assert [e.seq for e in watch.recent(9) or []] == [10, 11, 12]
