"""What the service does not read it refuses, and every answer is readable from a browser
(issues 20 and 22), under a real ``mayi serve`` with its default settings:

- a ``Transfer-Encoding`` other than ``chunked`` (``gzip``, ``identity``, ``gzip, chunked``)
  is 501 ``not_implemented``, titled "Not implemented" (it was 400, or read as plain chunked);
- a JSON key written twice is 400 naming it (it was the last one winning); a ``charset``
  other than UTF-8 and a ``Content-Encoding`` other than ``identity`` are 415 (they were
  ignored), the latter with ``Accept-Encoding: identity``;
- a 204 has no ``Content-Type`` (it had ``text/html``);
- the worker's own error answers carry the CORS headers of the app's (they had none).

Raw sockets wherever a client library would normalise the request.
"""

from __future__ import annotations

import itertools
import json
import socket
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
import requests
from serving import Served, create_game, ready_server, split_answer

#: A generous cap of each socket wait (a loaded 2-core machine): answers here come at once.
PATIENCE = 60.0
ORIGIN = "https://table.example"
BODY = json.dumps({"variant": "may_i", "seats": 3}).encode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with ready_server(Path(tmp_path_factory.mktemp("hygiene"))) as served:
        yield served


#: Loopback addresses, one for each raw exchange: the tables they create count against
#: the rate limit of tables per address (10 a minute) each on its own.
SOURCES = (f"127.0.{n // 250 + 2}.{n % 250 + 1}" for n in itertools.count())


def exchange(port: int, request: bytes) -> tuple[str, dict[str, str], bytes]:
    """Send ``request`` on a new connection (from an address of its own); the status line,
    header fields (lower-case names) and body of the first answer, read until the server
    closes or the body is whole."""
    with closing(
        socket.create_connection(("127.0.0.1", port), timeout=PATIENCE, source_address=(next(SOURCES), 0))
    ) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < _length(data):
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    return split_answer(data)


def _length(data: bytes) -> int:
    head = data.partition(b"\r\n\r\n")[0].decode("latin-1").lower()
    for line in head.split("\r\n"):
        if line.startswith("content-length:"):
            return int(line.split(":", 1)[1])
    return 1 << 30  # no length: until the server closes


def post_head(*fields: str) -> bytes:
    lines = ["POST /v1/games HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json", *fields]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def chunked(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


def problem(headers: dict[str, str], body: bytes) -> dict[str, object]:
    assert headers.get("content-type") == "application/problem+json", (headers, body[:300])
    assert body.count(b"\n") == 0, body  # one line
    found: dict[str, object] = json.loads(body)
    assert set(found) >= {"type", "title", "status", "detail", "code"}, found
    return found


def no_traceback(server: Served) -> None:
    log = server.stdout() + server.stderr()
    assert "Traceback" not in log and "Error handling request" not in log, log[-3000:]


# ---------------------------------------------------------------------------
# Transfer codings


@pytest.mark.parametrize(
    ("coding", "body", "named"),
    [
        ("gzip", BODY, "'gzip'"),  # (was 400 "Invalid HTTP Header")
        ("identity", BODY, "'identity'"),  # (was 400)
        ("deflate", BODY, "'deflate'"),
        ("gzip, chunked", chunked(BODY), "'gzip'"),  # (was read as plain chunked: 201)
        ("identity, chunked", chunked(BODY), "'identity'"),  # (was 201)
    ],
)
def test_a_transfer_coding_other_than_chunked_is_501_not_implemented(
    server: Served, coding: str, body: bytes, named: str
) -> None:
    status, headers, raw = exchange(server.port, post_head(f"Transfer-Encoding: {coding}") + body)
    assert status == "HTTP/1.1 501 Not Implemented", (status, raw)
    found = problem(headers, raw)
    assert found["status"] == 501 and found["code"] == "not_implemented", found
    assert found["title"] == "Not implemented", found  # its code's title (was "Bad Request")
    assert "Transfer-Encoding" in str(found["detail"]) and named in str(found["detail"]), found
    assert "chunked" in str(found["detail"]), found
    # Plain chunked is still read; chunked twice is still malformed framing (400).
    status, _, raw = exchange(server.port, post_head("Transfer-Encoding: chunked", "Connection: close") + chunked(BODY))
    assert status.startswith("HTTP/1.1 201 "), (status, raw)
    status, headers, raw = exchange(server.port, post_head("Transfer-Encoding: chunked, chunked") + chunked(BODY))
    assert status.startswith("HTTP/1.1 400 ") and problem(headers, raw)["code"] == "bad_request", raw
    no_traceback(server)


# ---------------------------------------------------------------------------
# Bodies: keys written twice, charsets, content codings


def test_a_key_written_twice_is_400_naming_it(server: Served) -> None:
    """``{"claim":true,"claim":false}`` was a pass (the last key won), where a proxy or
    another reader that takes the first sees a claim."""
    game_id, tokens = create_game(server.url, seats=3)
    auth = {"Authorization": f"Bearer {tokens[0]}", "Content-Type": "application/json"}
    url = f"{server.url}/v1/games/{game_id}/claims"
    for raw in (
        '{"claim":true,"claim":false}',
        '{"claim": false, "claim": false}',  # even when both say the same
        '{"claim":true,"\\u0063laim":false}',  # the same key, spelt with an escape
    ):
        refused = requests.post(url, data=raw, headers=auth, timeout=PATIENCE)
        assert refused.status_code == 400, (raw, refused.text)
        found = problem({"content-type": refused.headers["Content-Type"]}, refused.content)
        assert found["code"] == "bad_request" and "'claim' appears more than once" in str(found["detail"]), found
    view = requests.get(f"{server.url}/v1/games/{game_id}", headers=auth, timeout=PATIENCE).json()
    assert any(m["type"] == "claim" for m in view["legal"]), view["legal"]  # nothing was played
    nested = json.dumps({"variant": "may_i", "seats": 2, "options": {"turn_seconds": 60}})
    nested = nested.replace('"turn_seconds": 60', '"turn_seconds": 60, "turn_seconds": 90')
    refused = requests.post(f"{server.url}/v1/games", data=nested, headers=auth, timeout=PATIENCE)
    assert refused.status_code == 400 and "'turn_seconds' appears more than once" in refused.json()["detail"]
    passed = requests.post(url, data='{"claim": false}', headers=auth, timeout=PATIENCE)
    assert passed.status_code == 200, passed.text


@pytest.mark.parametrize("content_type", ["application/json; charset=latin-1", "application/json;charset=UTF-16"])
def test_a_charset_other_than_utf8_is_415(server: Served, content_type: str) -> None:
    status, headers, raw = exchange(
        server.port,
        post_head(f"Content-Length: {len(BODY)}").replace(
            b"Content-Type: application/json", f"Content-Type: {content_type}".encode()
        )
        + BODY,
    )
    assert status.startswith("HTTP/1.1 415 "), (status, raw)
    found = problem(headers, raw)
    assert found["code"] == "unsupported_media_type" and "charset" in str(found["detail"]), found
    assert "UTF-8" in str(found["detail"]), found
    named = post_head(f"Content-Length: {len(BODY)}", "Connection: close").replace(
        b"Content-Type: application/json", b"Content-Type: application/json; charset=UTF-8"
    )
    assert exchange(server.port, named + BODY)[0].startswith("HTTP/1.1 201 ")  # UTF-8 by its name is read


@pytest.mark.parametrize("coding", ["gzip", "br", "deflate, gzip"])
def test_a_content_coding_is_415_with_accept_encoding(server: Served, coding: str) -> None:
    """(A gzip body was read as if it were JSON, or its header ignored.)"""
    status, headers, raw = exchange(
        server.port, post_head(f"Content-Encoding: {coding}", f"Content-Length: {len(BODY)}") + BODY
    )
    assert status.startswith("HTTP/1.1 415 "), (status, raw)
    found = problem(headers, raw)
    assert found["code"] == "unsupported_media_type" and "Content-Encoding" in str(found["detail"]), found
    assert headers.get("accept-encoding") == "identity", headers  # RFC 9110 section 15.5.16
    fine = exchange(server.port, post_head("Content-Encoding: identity", f"Content-Length: {len(BODY)}") + BODY)
    assert fine[0].startswith("HTTP/1.1 201 "), fine


# ---------------------------------------------------------------------------
# 204


def test_a_204_has_no_content_type(server: Served) -> None:
    bot = requests.post(f"{server.url}/v1/bots", json={"name": "Leaver"}, timeout=PATIENCE)
    assert bot.status_code == 201, bot.text
    auth = f"Authorization: Bearer {bot.json()['token']}"
    entered = requests.post(
        f"{server.url}/v1/ladder/entries",
        json={"variant": "may_i"},
        headers={"Authorization": f"Bearer {bot.json()['token']}"},
        timeout=PATIENCE,
    )
    assert entered.status_code in (200, 201), entered.text
    request = f"DELETE /v1/ladder/entries/may_i HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\nConnection: close\r\n\r\n"
    status, headers, raw = exchange(server.port, request.encode())
    assert status.startswith("HTTP/1.1 204 "), (status, raw)
    assert "content-type" not in headers, headers  # (was text/html; charset=utf-8)
    assert raw == b""


# ---------------------------------------------------------------------------
# CORS on the worker's own answers


def app_cors() -> dict[str, str]:
    """The CORS headers of an answer of the app (a 404) to :data:`ORIGIN`."""
    app_answer = requests.get(f"{SERVER_URL[0]}/v1/nowhere", headers={"Origin": ORIGIN}, timeout=PATIENCE)
    assert app_answer.status_code == 404
    found = {k.lower(): v for k, v in app_answer.headers.items() if k.lower().startswith("access-control-")}
    assert found["access-control-allow-origin"] == ORIGIN, found
    return found


SERVER_URL: list[str] = []


@pytest.fixture
def url(server: Served) -> str:
    SERVER_URL[:] = [server.url]
    return server.url


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (post_head("Transfer-Encoding: gzip", f"Origin: {ORIGIN}") + BODY, 501),  # gunicorn's, made 501
        (post_head("Transfer-Encoding: gzip, chunked", f"Origin: {ORIGIN}") + chunked(BODY), 501),  # deadlines'
        (post_head("Transfer-Encoding: chunked", f"Origin: {ORIGIN}") + b"zz\r\n{}\r\n0\r\n\r\n", 400),  # deadlines'
        (post_head("Expect: 100-continue", f"Origin: {ORIGIN}", "Content-Length: 9999999"), 413),  # deadlines'
        (post_head("Content-Length: 5", "Content-Length: 6", f"Origin: {ORIGIN}") + b"{}", 400),  # gunicorn's
    ],
)
def test_the_workers_own_answers_carry_the_cors_headers_of_the_apps(
    server: Served, url: str, request_bytes: bytes, status: int
) -> None:
    """A browser's script can read these errors only with ``Access-Control-Allow-Origin``:
    the same CORS headers as an answer of the app to the same origin."""
    expected = app_cors()
    line, headers, raw = exchange(server.port, request_bytes)
    assert line.startswith(f"HTTP/1.1 {status} "), (line, raw)
    assert problem(headers, raw)["status"] == status
    got = {k: v for k, v in headers.items() if k.startswith("access-control-")}
    assert got == expected, (got, expected)
    assert "Origin" in headers.get("vary", ""), headers
    no_traceback(server)


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (f"GET /{'x' * 5000} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: {ORIGIN}\r\n\r\n".encode(), 414),
        (
            b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: " + ORIGIN.encode() + b"\r\n" + b"X: y\r\n" * 120 + b"\r\n",
            431,
        ),
    ],
)
def test_an_answer_to_a_head_too_large_to_read_allows_any_origin(
    server: Served, url: str, request_bytes: bytes, status: int
) -> None:
    """Its ``Origin`` was never read: with every origin allowed (the default), ``*``."""
    expected = {**app_cors(), "access-control-allow-origin": "*"}
    line, headers, raw = exchange(server.port, request_bytes)
    assert line.startswith(f"HTTP/1.1 {status} "), (line, raw)
    assert problem(headers, raw)["status"] == status
    assert {k: v for k, v in headers.items() if k.startswith("access-control-")} == expected, headers


def test_a_worker_answer_without_an_origin_has_no_cors_headers(server: Served) -> None:
    line, headers, _ = exchange(server.port, post_head("Transfer-Encoding: gzip") + BODY)
    assert line.startswith("HTTP/1.1 501 ") and not any(k.startswith("access-control-") for k in headers), headers
