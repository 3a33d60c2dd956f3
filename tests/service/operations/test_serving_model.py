"""The serving model (gunicorn with gevent workers, as ``mayi serve`` runs it): waiting
clients cost no thread, the caps hold, and gunicorn's own errors are problem+json.

Every test starts its own ``mayi serve`` on a free loopback port with an embedded
Redis in a temporary folder, and stops it however the test ends.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path

import pytest
import requests
from serving import new_game, pass_first_upcard, ready_server, split_answer

#: A generous cap for conditions that become true soon (CI is a loaded 2-core machine).
PATIENCE = 120.0


def half_sent(port: int) -> socket.socket:
    """A POST that promises 100 bytes of body and sends one."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(
        b"POST /v1/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
    )
    return sock


def open_stream(port: int, game_id: str, token: str | None = None) -> socket.socket:
    """An event stream, read as far as its status line and first line of data."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    sock.sendall(f"GET /v1/games/{game_id}/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n".encode())
    head = b""
    while b"retry: 2000" not in head:
        chunk = sock.recv(4096)
        assert chunk, f"the stream closed: {head!r}"
        head += chunk
    assert head.startswith(b"HTTP/1.1 200"), head
    return sock


def raw_exchange(port: int, request: bytes) -> tuple[str, dict[str, str], bytes]:
    """Send ``request`` as is; return the status line, the headers and the body."""
    with closing(socket.create_connection(("127.0.0.1", port), timeout=60)) as sock:
        sock.sendall(request)
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    return split_answer(data)


def poll_until(predicate: object, seconds: float = PATIENCE) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.5)
    return False


@pytest.fixture
def sockets() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def test_half_sent_requests_and_open_streams_do_not_freeze_the_server(tmp_path: Path, sockets: ExitStack) -> None:
    """40 half-sent uploads and 40 open event streams: /healthz and a game still answer
    (with a thread per connection, 32 half-sent requests froze the server for minutes)."""
    env = {"MAYI_MAX_STREAMS_PER_CLIENT": "100", "MAYI_RATE_LIMITS_ENABLED": "false"}
    with ready_server(tmp_path, env) as server:
        game_id, tokens, last = new_game(server.url)
        for _ in range(40):
            sockets.enter_context(closing(half_sent(server.port)))
        streams = [sockets.enter_context(closing(open_stream(server.port, game_id))) for _ in range(40)]

        health = requests.get(server.url + "/healthz", timeout=60)
        assert health.status_code == 200 and health.json()["status"] == "ok"
        pass_first_upcard(server.url, game_id, tokens[0])
        seen = requests.get(f"{server.url}/v1/games/{game_id}", timeout=60)
        assert seen.status_code == 200 and seen.json()["actor"] == 1

        # Every open stream got the event.
        for sock in streams:
            data = b""
            while f"id: {last + 1}".encode() not in data:
                chunk = sock.recv(4096)
                assert chunk, "a stream closed before the event"
                data += chunk
            assert b"event: passed" in data


def test_total_cap_on_waiting_clients_is_a_503_naming_it(tmp_path: Path, sockets: ExitStack) -> None:
    env = {
        "MAYI_MAX_WAITING_PER_PROCESS": "3",
        "MAYI_MAX_STREAMS_PER_CLIENT": "10",
        "MAYI_SSE_HEARTBEAT_SECONDS": "1",
        "MAYI_RATE_LIMITS_ENABLED": "false",
    }
    with ready_server(tmp_path, env) as server:
        game_id, tokens, last = new_game(server.url)
        first = open_stream(server.port, game_id)
        sockets.enter_context(closing(open_stream(server.port, game_id, tokens[1])))
        sockets.enter_context(closing(open_stream(server.port, game_id, tokens[2])))

        for refused in (
            requests.get(f"{server.url}/v1/games/{game_id}/events/stream", timeout=60),
            requests.get(f"{server.url}/v1/games/{game_id}/events", params={"after": last, "wait": 5}, timeout=60),
        ):
            assert refused.status_code == 503, refused.text
            assert refused.headers["Content-Type"] == "application/problem+json"
            assert int(refused.headers["Retry-After"]) > 0
            problem = refused.json()
            assert problem["code"] == "server_busy"
            assert "MAYI_MAX_WAITING_PER_PROCESS" in problem["detail"] and "3" in problem["detail"]
        # Reading without waiting is never refused.
        assert requests.get(f"{server.url}/v1/games/{game_id}/events", timeout=60).status_code == 200

        # A stream that goes away gives its place back (at once: deadlines.HangUp).
        first.close()

        def a_long_poll_is_admitted() -> bool:
            answer = requests.get(
                f"{server.url}/v1/games/{game_id}/events", params={"after": last, "wait": 1}, timeout=60
            )
            return answer.status_code == 200

        assert poll_until(a_long_poll_is_admitted), "the closed stream's place was never given back"


def test_per_client_caps_still_hold(tmp_path: Path, sockets: ExitStack) -> None:
    env = {"MAYI_MAX_STREAMS_PER_CLIENT": "2", "MAYI_RATE_LIMITS_ENABLED": "false"}
    with ready_server(tmp_path, env) as server:
        game_id, tokens, _ = new_game(server.url)
        for _ in range(2):
            sockets.enter_context(closing(open_stream(server.port, game_id, tokens[0])))
        refused = requests.get(
            f"{server.url}/v1/games/{game_id}/events/stream",
            headers={"Authorization": f"Bearer {tokens[0]}"},
            timeout=60,
        )
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
        assert "MAYI_MAX_STREAMS_PER_CLIENT" in refused.json()["detail"]
        # Another token is another client.
        sockets.enter_context(closing(open_stream(server.port, game_id, tokens[1])))


def test_gunicorn_own_errors_are_problem_json(tmp_path: Path) -> None:
    with ready_server(tmp_path, {}) as server:
        cases = [
            (b"GET /v1/games/" + b"x" * 9000 + b" HTTP/1.1\r\nHost: a\r\n\r\n", 414, "uri_too_long", "4094"),
            (
                b"GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: " + b"y" * 9000 + b"\r\n\r\n",
                431,
                "headers_too_large",
                "8190",
            ),
            (
                b"GET /healthz HTTP/1.1\r\nHost: a\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(150)) + b"\r\n",
                431,
                "headers_too_large",
                "100",
            ),
            (b"NOT A REQUEST LINE\r\n\r\n", 400, "bad_request", "HTTP"),
        ]
        for request, status, code, named in cases:
            line, headers, body = raw_exchange(server.port, request)
            assert line.startswith(f"HTTP/1.1 {status} "), (line, body)
            assert headers["content-type"] == "application/problem+json", headers
            problem = json.loads(body)
            assert problem["status"] == status and problem["code"] == code, problem
            assert named in problem["detail"], problem
            assert set(problem) >= {"type", "title", "status", "detail", "code"}
        # The server still serves after them.
        assert requests.get(server.url + "/healthz", timeout=60).status_code == 200


def test_a_body_that_never_arrives_gets_408_and_is_closed(tmp_path: Path) -> None:
    with ready_server(tmp_path, {"MAYI_BODY_TIMEOUT_SECONDS": "2"}) as server:
        with closing(half_sent(server.port)) as sock:
            data = b""
            while True:  # the server answers, then closes the connection
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), data
        assert b"application/problem+json" in head
        problem = json.loads(body)
        assert problem["code"] == "request_timeout" and problem["status"] == 408
        assert "MAYI_BODY_TIMEOUT_SECONDS" in problem["detail"] and "100 bytes" in problem["detail"]
        # A body sent whole is read as always.
        game_id, tokens, _ = new_game(server.url)
        pass_first_upcard(server.url, game_id, tokens[0])
