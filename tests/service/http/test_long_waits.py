"""Waits longer than redis-py's 5 s socket timeout: long-polls and event streams
keep waiting as long as they were asked to, over a real socket on the real server
(``mayi serve``: gunicorn with gevent workers).

These tests wait well past 5 s by design (the bug they guard against cut every
wait at 5 s); they assert what arrives, never how fast.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from serving import Served, new_game, pass_first_upcard, ready_server

from mayi_service.storage.connections import block_seconds, connect

#: Small, but longer than redis-py's default socket timeout (5 s).
HEARTBEAT = 6
SSE_MAX = 14


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    env = {"MAYI_SSE_HEARTBEAT_SECONDS": str(HEARTBEAT), "MAYI_SSE_MAX_SECONDS": str(SSE_MAX)}
    with ready_server(tmp_path_factory.mktemp("long-waits"), env) as served:
        yield served


def test_blocking_reads_outlast_the_default_socket_timeout(redis_url: str) -> None:
    """At the connection level: a blocking read of 6.5 s answers (empty) instead of
    raising TimeoutError at 5 s; ordinary commands keep the short timeout."""
    client = connect(redis_url)
    key = f"t{uuid.uuid4().hex[:10]}:{{x}}:events"
    assert client.xread({key: "0-0"}, block=6500) == []
    assert client.blpop([key + ":list"], timeout=6) is None
    connection = client.connection_pool.get_connection()
    try:
        assert connection.socket_timeout == 5.0
    finally:
        client.connection_pool.release(connection)


def test_block_durations_of_commands() -> None:
    assert block_seconds(("XREAD", "BLOCK", 60000, "STREAMS", "k", "0-0")) == 60.0
    assert block_seconds((b"XREADGROUP", b"GROUP", b"g", b"c", b"BLOCK", b"0", b"STREAMS", b"k", b">")) == 0.0
    assert block_seconds(("BLMOVE", "a", "b", "LEFT", "RIGHT", 405)) == 405.0
    assert block_seconds(("XADD", "k", "*", "BLOCK", "1")) is None  # a field named BLOCK, not a wait
    assert block_seconds(("SET", "k", "v")) is None


def test_long_poll_answered_by_an_event_at_second_7(server: Served) -> None:
    game_id, tokens, last = new_game(server.url)
    answer: dict[str, Any] = {}

    def long_poll() -> None:
        try:
            answer["response"] = requests.get(
                f"{server.url}/v1/games/{game_id}/events", params={"after": last, "wait": 30}, timeout=90
            )
        except Exception as exc:  # reported by the assertions below
            answer["error"] = exc

    start = time.monotonic()
    waiter = threading.Thread(target=long_poll, daemon=True)
    waiter.start()
    time.sleep(7)  # nothing happens for 7 s: the long-poll must still be waiting
    assert waiter.is_alive(), f"the long-poll ended before any event: {answer}"
    pass_first_upcard(server.url, game_id, tokens[0])
    waiter.join(90)
    assert not waiter.is_alive(), "the long-poll did not answer after the event"
    assert "error" not in answer, answer
    response = answer["response"]
    assert response.status_code == 200, response.text
    events = response.json()["events"]
    assert [e["type"] for e in events] == ["passed"] and events[0]["seat"] == 0
    assert response.json()["last"] == last + 1
    assert time.monotonic() - start >= 7


@pytest.mark.slow
def test_event_stream_lives_past_5s_sends_heartbeats_and_ends_cleanly(server: Served) -> None:
    """An event at second 7 arrives on the stream, keep-alives keep coming (the second
    one at about second 12), and the server ends the stream at MAYI_SSE_MAX_SECONDS
    with a proper end of the chunked body (no error on the client)."""
    game_id, tokens, last = new_game(server.url)
    lines: list[tuple[float, str]] = []
    start = time.monotonic()
    with requests.get(
        f"{server.url}/v1/games/{game_id}/events/stream",
        headers={"Last-Event-ID": str(last)},
        stream=True,
        timeout=(30, 60),
    ) as response:
        assert response.status_code == 200, response.text
        assert response.headers["Content-Type"].startswith("text/event-stream")
        mover = threading.Timer(7, pass_first_upcard, (server.url, game_id, tokens[0]))
        mover.start()
        try:
            for raw in response.iter_lines():  # raises on a stream cut short
                lines.append((time.monotonic() - start, raw.decode()))
        finally:
            mover.cancel()
            mover.join(60)
    ended = time.monotonic() - start

    texts = [text for _, text in lines]
    assert texts[0] == "retry: 2000"
    assert f"id: {last + 1}" in texts and "event: passed" in texts
    heartbeats = [at for at, text in lines if text == ": keep-alive"]
    assert len(heartbeats) >= 2, texts
    assert max(heartbeats) >= 2 * HEARTBEAT, "still sending keep-alives after 12 s"
    assert ended >= SSE_MAX, "the stream ended before MAYI_SSE_MAX_SECONDS"


@pytest.mark.parametrize("kept", [True, False], ids=["held-connection", "redis-py"])
def test_waiters_on_one_game_share_one_blocking_read(redis_url: str, kept: bool) -> None:
    """20 waiters on one game: one reader (one Redis connection) in all, every waiter
    woken by the event, and the reader gone once nobody waits; the reader's reads on a
    held connection (the default) or through redis-py's ``xread``."""
    from mayi_service.storage.hub import EventHub

    client = connect(redis_url)
    hub = EventHub(client, block_seconds=1.0, kept=kept)
    key = f"t{uuid.uuid4().hex[:10]}:{{g}}:events"
    client.xadd(key, {"e": "{}"}, id="1-0")
    woken: list[bool] = []
    waiters = [threading.Thread(target=lambda: woken.append(hub.wait(key, 1, 60))) for _ in range(20)]
    for waiter in waiters:
        waiter.start()
    end = time.monotonic() + 60
    while sum(w.waiters for w in list(hub.watches.values())) < 20 and time.monotonic() < end:
        time.sleep(0.05)
    assert hub.readers() == 1
    assert hub.wait(key, 0, 60) is True  # an event above 0 is there already: no wait
    client.xadd(key, {"e": "{}"}, id="2-0")
    for waiter in waiters:
        waiter.join(60)
    assert woken == [True] * 20
    while hub.readers() and time.monotonic() < end:
        time.sleep(0.05)
    assert hub.readers() == 0
    assert hub.wait(key, 2, 0.2) is False  # nothing new: the wait times out


def test_a_waiter_back_right_after_its_answer_finds_the_same_reader(redis_url: str) -> None:
    """A reader whose waiters have gone reads on once more (``LINGER_SECONDS``): a client
    that waits again at once (a bot's next poll) is served by it, not by a new reader
    (a greenlet and a pooled connection each); it stops when nobody came back."""
    from mayi_service.storage.hub import EventHub

    client = connect(redis_url)
    hub = EventHub(client, block_seconds=30.0)
    hub.linger_ms = 30_000  # (long: however slow the machine, the reader is still there)
    key = f"t{uuid.uuid4().hex[:10]}:{{g}}:events"
    woken: list[bool] = []
    waiter = threading.Thread(target=lambda: woken.append(hub.wait(key, 0, 60)))
    waiter.start()
    end = time.monotonic() + 60
    while not hub.watches and time.monotonic() < end:
        time.sleep(0.01)
    reader = hub.watches[key]
    client.xadd(key, {"e": "{}"}, id="1-0")
    waiter.join(60)
    assert woken == [True] and hub.watches.get(key) is reader  # nobody waits: it reads on
    again = threading.Thread(target=lambda: woken.append(hub.wait(key, 1, 60)))
    again.start()
    client.xadd(key, {"e": "{}"}, id="2-0")
    again.join(60)
    assert woken == [True, True]
    while hub.readers() and time.monotonic() < end:  # each entry wakes its read: with nobody back, it stops
        client.xadd(key, {"e": "{}"})
        time.sleep(0.05)
    assert hub.readers() == 0 and reader.thread.join(60) is None and not reader.thread.is_alive()


GEVENT_SCRIPT = r"""
from gevent import monkey

monkey.patch_all()
import sys

import gevent
from redis.utils import HIREDIS_AVAILABLE

from mayi_service.storage.connections import connect

client = connect(sys.argv[1])
key = sys.argv[2]
# 300 greenlets block at once in XREAD (for up to 60 s).
waits = [gevent.spawn(client.xread, {key: "0-0"}, block=60000) for _ in range(300)]
# Wait (up to a minute, on a loaded machine) until every read holds its own connection.
for _ in range(600):
    gevent.sleep(0.1)
    if len(client.connection_pool._connections) >= 300:
        break
in_use = len(client.connection_pool._connections)
gevent.sleep(6)  # all of them wait past redis-py's 5 s default socket timeout
client.xadd(key, {"e": "1"}, id="1-0")  # wakes every one of them
gevent.joinall(waits, timeout=120, raise_error=True)
woken = sum(1 for g in waits if g.successful() and g.value and g.value[0][1][0][0] == b"1-0")
print(HIREDIS_AVAILABLE, in_use, woken)
"""


def test_redis_under_gevent_waits_concurrently_with_hiredis(redis_url: str, tmp_path: Path) -> None:
    """redis-py monkey-patched by gevent, as in the API's workers: 300 blocking reads
    wait at once (the pool does not cap them at a low number), none times out at 5 s,
    and one event wakes them all; the hiredis parser is in use."""
    script = tmp_path / "gevent_waits.py"
    script.write_text(GEVENT_SCRIPT)
    key = f"t{uuid.uuid4().hex[:10]}:{{g}}:events"
    done = subprocess.run(
        [sys.executable, str(script), redis_url, key], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    hiredis, in_use, woken = done.stdout.split()
    assert hiredis == "True"
    assert int(in_use) >= 300, "the blocking reads did not all wait at once"
    assert int(woken) == 300
