"""Waiting slots heal on their own: each event stream and waiting long-poll holds a lease
(docs/operations.md, "Waiting slots"), dropped at once when its client hangs up, expiring
unless its holder renews it, and never extended by a refused attempt; and one address,
however many tokens it holds, takes at most its share of a process's slots.

Real ``mayi serve`` processes (gunicorn's gevent worker, default settings: rate limits
on), real sockets, a real Redis (killed with SIGKILL and started again from its AOF in
the outage case). Waits poll for the state they expect, with generous caps; nothing
asserts on speed.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, closing, suppress
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from http_moves import auth
from serving import create_game, healthy, mayi_serve, new_game, redis_process, wait_until

from mayi_service.config import Settings
from mayi_service.play.slots import LEASE_MARGIN_SECONDS

DEFAULTS = Settings()
#: A stream's lease: renewed at each heartbeat, it lasts two and the margin.
STREAM_LEASE = 2 * DEFAULTS.sse_heartbeat_seconds + LEASE_MARGIN_SECONDS
#: Slack beyond a lease's expiry for the retries and a loaded machine.
SLACK = 30.0


def stream(
    port: int, game_id: str, token: str | None = None, source: str = "127.0.0.1"
) -> tuple[int, socket.socket | dict[str, Any]]:
    """Ask for an event stream from the loopback address ``source``: (200, the open socket,
    read as far as its first line of data) or (the status, the problem's JSON)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(source, 0))
    header = f"Authorization: Bearer {token}\r\n" if token else ""
    sock.sendall(f"GET /v1/games/{game_id}/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n{header}\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    if status == 200:
        while b"retry: 2000" not in body:
            chunk = sock.recv(65536)
            assert chunk, f"the stream closed: {body!r}"
            body += chunk
        return status, sock
    length = int(
        next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    sock.close()
    import json

    return status, json.loads(body)


def _wait_for_events(url: str, game_id: str, token: str, after: int, wait: float) -> None:
    """A long-poll, in a thread of its own; its server may go away under it."""
    with suppress(requests.RequestException):
        requests.get(
            f"{url}/v1/games/{game_id}/events", params={"after": after, "wait": wait}, headers=auth(token), timeout=120
        )


def hang_up(sock: socket.socket) -> None:
    """Close abruptly (a reset), as a browser tab that reloads may."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


@pytest.fixture
def sockets() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def test_a_reloaded_table_is_never_locked_out_of_its_stream(tmp_path: Path) -> None:
    """Six times over: a seat (and a spectator) opens as many streams as it may, hangs up on
    all of them, and opens them again at once: 200 every time. (Before, a closed stream's
    count stayed until its next keep-alive, 15 s later: the second round got 429.)"""
    with mayi_serve(tmp_path, {}) as server:
        server.wait_ready()
        game_id, tokens, _ = new_game(server.url)
        limit = DEFAULTS.max_streams_per_client
        for _ in range(6):
            for token in (tokens[0], None):
                opened = [stream(server.port, game_id, token) for _ in range(limit)]
                assert [status for status, _ in opened] == [200] * limit, opened
                for _, sock in opened:
                    hang_up(sock)  # type: ignore[arg-type]
            time.sleep(1.0)  # (a token's rate limit: 20 requests a second)
        # The limit still holds: one more than it allows is refused.
        held = [stream(server.port, game_id, tokens[1]) for _ in range(limit)]
        try:
            status, problem = stream(server.port, game_id, tokens[1])
            assert status == 429 and "MAYI_MAX_STREAMS_PER_CLIENT" in problem["detail"], problem  # type: ignore[index]
        finally:
            for _, sock in held:
                sock.close()  # type: ignore[union-attr]
        assert "Traceback" not in server.stderr(), server.stderr()


def _lease_expiries(client: redis.Redis, prefix: str) -> dict[bytes, float]:
    found: dict[bytes, float] = {}
    for key in client.scan_iter(match=f"{prefix}:*leases:*", count=1000):
        found.update(dict(client.zrange(key, 0, -1, withscores=True)))
    return found


def _retry_until_admitted(url: str, game_id: str, token: str, params: dict[str, Any], cap: float) -> list[int]:
    """Ask as the answers' ``Retry-After`` says until one is admitted (200) or ``cap``
    seconds pass; the statuses seen."""
    seen: list[int] = []
    end = time.monotonic() + cap
    while time.monotonic() < end:
        try:
            answer = requests.get(
                f"{url}/v1/games/{game_id}/events", params=params, headers=auth(token), timeout=params["wait"] + 60
            )
        except requests.RequestException:
            time.sleep(1)
            continue
        seen.append(answer.status_code)
        if answer.status_code == 200:
            return seen
        time.sleep(float(answer.headers.get("Retry-After", "1")))
    return seen


def test_after_a_redis_restart_held_slots_heal_for_a_client_that_retries(tmp_path: Path, sockets: ExitStack) -> None:
    """Streams and long-polls held while Redis is killed cannot give their slots back; after
    Redis comes back from its AOF, a client retrying as Retry-After says is admitted within
    the lease and a margin. (Before, the stale counts survived and every refused retry renewed
    them: 84 x 429 over 430 s.)"""
    with redis_process(tmp_path / "redis") as server:
        env = {"REDIS_URL": server.url, "MAYI_KEY_PREFIX": f"o{uuid.uuid4().hex[:8]}"}
        with mayi_serve(tmp_path, env) as served:
            served.wait_ready()
            game_id, tokens, last = new_game(served.url)
            streamer, poller = tokens[0], tokens[1]
            for _ in range(DEFAULTS.max_streams_per_client):
                status, sock = stream(served.port, game_id, streamer)
                assert status == 200, sock
                sockets.enter_context(closing(sock))  # type: ignore[arg-type]
            polls = [
                threading.Thread(target=_wait_for_events, args=(served.url, game_id, poller, last, 30), daemon=True)
                for _ in range(DEFAULTS.max_waits_per_client)
            ]
            for poll in polls:
                poll.start()
            client = server.client()
            try:
                assert wait_until(lambda: len(_lease_expiries(client, env["MAYI_KEY_PREFIX"])) == 12, 60)
                time.sleep(1.5)  # the AOF is written every second
            finally:
                client.close()
            server.kill()
            killed = time.monotonic()
            for poll in polls:
                poll.join(120)
            server.start()  # same port, same AOF: the leases are still there
            assert wait_until(lambda: healthy(served.url), 60), "the API did not recover"

            # The long-polls' leases (30 s wait) heal first; the streams' (two heartbeats) next.
            cap = STREAM_LEASE + SLACK - (time.monotonic() - killed)
            seen = _retry_until_admitted(served.url, game_id, poller, {"after": last, "wait": 1}, cap)
            assert seen and seen[-1] == 200, seen
            admitted = 0
            end = killed + STREAM_LEASE + SLACK
            while admitted < DEFAULTS.max_streams_per_client and time.monotonic() < end:
                status, answer = stream(served.port, game_id, streamer)
                if status == 200:
                    admitted += 1
                    sockets.enter_context(closing(answer))  # type: ignore[arg-type]
                else:
                    assert status == 429, answer
                    time.sleep(5)  # the Retry-After of a stream
            assert admitted == DEFAULTS.max_streams_per_client, "a stale stream lease outlived its expiry"
            assert served.proc.poll() is None


def test_refused_retries_do_not_extend_a_stale_lease(tmp_path: Path, redis_url: str) -> None:
    """A process killed while its long-polls wait leaves their leases behind; another
    process refuses the client while they last, and its refusals (one every half second,
    faster than Retry-After) leave their expiry as it was; once they expire the client is
    admitted. (Before, each refusal renewed the count's expiry: locked out for good.)"""
    prefix = f"s{uuid.uuid4().hex[:8]}"
    env = {"REDIS_URL": redis_url, "MAYI_KEY_PREFIX": prefix}
    client = redis.Redis.from_url(redis_url)
    wait = 5
    try:
        with mayi_serve(tmp_path, env, name="first") as first:
            first.wait_ready()
            game_id, tokens, last = new_game(first.url)
            for _ in range(DEFAULTS.max_waits_per_client):
                args = (first.url, game_id, tokens[0], last, wait)
                threading.Thread(target=_wait_for_events, args=args, daemon=True).start()
            assert wait_until(lambda: len(_lease_expiries(client, prefix)) == DEFAULTS.max_waits_per_client, 60)
            first.kill()  # SIGKILL: nothing is given back
        stale = _lease_expiries(client, prefix)
        assert len(stale) == DEFAULTS.max_waits_per_client
        with mayi_serve(tmp_path, env, name="second") as second:
            second.wait_ready()
            refused = 0
            end = time.monotonic() + wait + LEASE_MARGIN_SECONDS + SLACK
            status = 0
            while time.monotonic() < end:
                answer = requests.get(
                    f"{second.url}/v1/games/{game_id}/events",
                    params={"after": last, "wait": 0.5},
                    headers=auth(tokens[0]),
                    timeout=60,
                )
                status = answer.status_code
                if status == 200:
                    break
                assert status == 429, answer.text
                assert "MAYI_MAX_WAITS_PER_CLIENT" in answer.json()["detail"]
                refused += 1
                left = _lease_expiries(client, prefix)
                assert all(left[lease] == expiry for lease, expiry in stale.items() if lease in left), (
                    "a refused attempt changed a lease"
                )
                time.sleep(0.5)
            assert status == 200, f"still refused after {refused} attempts"
            assert refused > 0, "the stale leases were gone before the second process asked"
    finally:
        client.close()


def test_one_address_takes_at_most_its_share_of_a_process_slots(tmp_path: Path, sockets: ExitStack) -> None:
    """However many tokens it collects, one address holds at most MAYI_MAX_WAITING_PER_ADDRESS
    streams and waiting long-polls in a process; another address still gets a stream.
    (Before, 3 addresses with 255 free tokens held all 2,000 of a process's slots.)"""
    share = DEFAULTS.max_waiting_per_address
    per_token = DEFAULTS.max_streams_per_client
    with mayi_serve(tmp_path, {}) as server:
        server.wait_ready()
        tokens: list[str] = []
        game_ids: list[str] = []
        while len(tokens) < share // per_token + 1:
            game_id, seats = create_game(server.url, seats=4)
            game_ids += [game_id] * len(seats)
            tokens += seats
        for i in range(share):
            status, sock = stream(server.port, game_ids[i // per_token], tokens[i // per_token])
            assert status == 200, (i, sock)
            sockets.enter_context(closing(sock))  # type: ignore[arg-type]
            time.sleep(0.03)  # (the address's rate limit: 50 requests a second)
        k = share // per_token
        status, problem = stream(server.port, game_ids[k], tokens[k])  # a fresh token, same address
        assert status == 429, problem
        assert "MAYI_MAX_WAITING_PER_ADDRESS" in problem["detail"] and str(share) in problem["detail"]  # type: ignore[index]
        long_poll = requests.get(
            f"{server.url}/v1/games/{game_ids[k]}/events", params={"after": 10**6, "wait": 5}, timeout=60
        )
        assert long_poll.status_code == 429 and "MAYI_MAX_WAITING_PER_ADDRESS" in long_poll.json()["detail"]
        # Another address, with a token or as a spectator, still gets a stream.
        for token in (tokens[k], None):
            status, sock = stream(server.port, game_ids[k], token, source="127.0.0.2")
            assert status == 200, sock
            sockets.enter_context(closing(sock))  # type: ignore[arg-type]


def _lease_rules(repo: Any) -> None:
    """A client's leases, straight through the repository: the limit holds, a refusal
    changes nothing, a dropped lease frees its place at once, an unrenewed one expires,
    a renewed one lasts."""
    key = repo.lookup_key("leases", f"t:{uuid.uuid4().hex}")
    ms = 1500
    assert all(repo.take_lease(key, f"l{i}", 2, ms) for i in range(2))
    before = dict(repo.r.zrange(key, 0, -1, withscores=True))
    assert not any(repo.take_lease(key, "x", 2, 60_000) for _ in range(5))
    assert dict(repo.r.zrange(key, 0, -1, withscores=True)) == before, "a refusal changed the leases"
    repo.drop_lease(key, "l0")
    assert repo.take_lease(key, "l2", 2, 60_000)
    assert not repo.take_lease(key, "l3", 2, ms)
    # l1 is never renewed: it expires, and its place is free again; l2 is renewed and stays.
    assert wait_until(lambda: repo.take_lease(key, "l3", 2, ms), 30)
    assert repo.renew_lease(key, "l2", 60_000)
    assert not repo.renew_lease(key, "l1", ms), "an expired lease came back"
    assert repo.r.pttl(key) > 30_000  # the key lasts as long as its last lease


def test_lease_rules_on_a_single_redis(settings: Settings) -> None:
    from mayi_service.api.app import create_app

    _lease_rules(create_app(settings).extensions["mayi"].games.repo)


def test_lease_rules_on_a_cluster(tmp_path: Path) -> None:
    from clusters import cluster_settings

    from mayi_service.api.app import create_app

    with cluster_settings(tmp_path) as settings:
        _lease_rules(create_app(settings).extensions["mayi"].games.repo)


def test_a_decisions_poll_whose_client_hangs_up_gives_its_slot_back_at_once(tmp_path: Path, redis_url: str) -> None:
    """A bot's poll waiting 60 s whose client hangs up gives its slot back within a few
    seconds (before, it held it until the wait ended: 60 s)."""
    from bot_support import poll_decisions, polling_table

    prefix = f"d{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(redis_url)
    waiting = lambda: sum(  # noqa: E731
        int(client.zcard(k)) for k in client.scan_iter(match=f"{prefix}:*leases:wait:*", count=1000)
    )
    try:
        with mayi_serve(tmp_path, {"REDIS_URL": redis_url, "MAYI_KEY_PREFIX": prefix}) as served:
            served.wait_ready()
            token = requests.post(f"{served.url}/v1/bots", json={"name": "hanger"}, timeout=60).json()["token"]
            polling_table(served.url, token, "05" * 16)
            key = poll_decisions(served.url, token, wait=0).json()["decisions"][0]["key"]
            request = (
                f"GET /v1/bots/me/decisions?wait=60&skip={key} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {token}\r\n\r\n"
            ).encode()
            sock = socket.create_connection(("127.0.0.1", served.port), timeout=60)
            sock.sendall(request)
            assert wait_until(lambda: waiting() == 1, 30), "the poll did not wait"
            hung_up = time.monotonic()
            hang_up(sock)
            assert wait_until(lambda: waiting() == 0, 60)
            assert time.monotonic() - hung_up < 30, "the slot was held until the wait ended"
            assert "Traceback" not in served.stderr(), served.stderr()
    finally:
        client.close()
