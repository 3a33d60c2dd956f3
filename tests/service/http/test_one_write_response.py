"""The worker's answers (written through ``mayi_service.server.worker.HeldHead``): the head
goes out with the first body bytes in one write, and every kind of response is still whole,
valid HTTP/1.1.

Each test serves one request with gunicorn's own request parser and response, as the
gevent worker does (``wsgi.create``, then ``write`` for each item the app gives, ``close``,
and the worker's ``flush`` of the held head), over a real socket pair; the server's socket
records the size of every ``sendall``, and the client's end reads the answer with
``http.client``.
"""

from __future__ import annotations

import http.client
import json
import socket
import tempfile
from collections.abc import Callable, Iterable
from typing import Any

from gunicorn.config import Config
from gunicorn.http import RequestParser, wsgi

from mayi_service.server.worker import HeldHead

App = Callable[[dict[str, Any], Any], Iterable[bytes]]


class RecordingSocket:
    """A real socket that notes the bytes of each ``sendall`` (and ``sendfile``)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.writes: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.sock.sendall(data)

    def sendfile(self, file: Any, offset: int = 0, count: int | None = None) -> int:
        self.writes.append(b"<sendfile>")
        return self.sock.sendfile(file, offset, count)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


def serve(app: App, request: bytes) -> tuple[list[bytes], http.client.HTTPResponse, bytes]:
    """Serve ``request`` with ``app``; return the server's writes, the client's parsed
    response and its body."""
    server, client = socket.socketpair()
    with server, client:
        client.sendall(request)
        cfg = Config()
        req = next(iter(RequestParser(cfg, server, ("127.0.0.1", 1234))))
        recorder = RecordingSocket(server)
        held = HeldHead(recorder)
        resp, environ = wsgi.create(req, held, ("127.0.0.1", 1234), ("127.0.0.1", 8000), cfg)
        respiter = app(environ, resp.start_response)
        if isinstance(respiter, environ["wsgi.file_wrapper"]):
            resp.write_file(respiter)
        else:
            for item in respiter:
                resp.write(item)
        resp.close()
        held.flush()
        server.shutdown(socket.SHUT_WR)
        answer = http.client.HTTPResponse(client, method=req.method)
        answer.begin()
        return recorder.writes, answer, answer.read()


def json_app(status: str = "200 OK", body: bytes = b'{"ok": true}') -> App:
    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]

    return app


GET = b"GET /v1/games/g HTTP/1.1\r\nHost: x\r\n\r\n"


def test_head_and_body_of_a_json_answer_go_in_one_write() -> None:
    body = json.dumps({"decisions": [{"game_id": "g", "seat": 1}] * 50}).encode()
    writes, answer, got = serve(json_app(body=body), GET)
    assert len(writes) == 1, [len(w) for w in writes]
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and writes[0].endswith(body)
    assert answer.status == 200 and answer.getheader("Content-Type") == "application/json"
    assert got == body


def test_an_answer_with_no_body_sends_its_head_when_it_ends() -> None:
    def no_content(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        start_response("204 No Content", [])
        return []

    writes, answer, got = serve(no_content, GET)
    assert len(writes) == 1 and writes[0].startswith(b"HTTP/1.1 204 No Content\r\n")
    assert answer.status == 204 and got == b""


def test_a_head_request_gets_the_head_only() -> None:
    writes, answer, got = serve(json_app(), b"HEAD /v1/games/g HTTP/1.1\r\nHost: x\r\n\r\n")
    assert len(writes) == 1 and writes[0].endswith(b"\r\n\r\n")
    assert answer.status == 200 and answer.getheader("Content-Length") == "12" and got == b""


def test_a_streamed_answer_frames_every_chunk_the_first_with_the_head() -> None:
    def stream(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        start_response("200 OK", [("Content-Type", "text/event-stream")])
        yield b"retry: 2000\n\n"
        yield b""  # an empty item must not end the stream early
        yield b"data: 1\n\n"

    writes, answer, got = serve(stream, GET)
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and writes[0].endswith(b"\r\n\r\nD\r\nretry: 2000\n\n\r\n")
    assert len(writes) == 3  # head with the first chunk, the second chunk, the last (empty) chunk
    assert answer.getheader("Transfer-Encoding") == "chunked"
    assert got == b"retry: 2000\n\ndata: 1\n\n"


def test_an_empty_first_chunk_of_a_stream_still_gets_the_head_out() -> None:
    def stream(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        start_response("200 OK", [("Content-Type", "text/event-stream")])
        yield b""
        yield b"data: 1\n\n"

    writes, answer, got = serve(stream, GET)
    assert answer.status == 200 and got == b"data: 1\n\n"
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n")


def test_a_file_is_sent_after_its_head() -> None:
    content = b"<!doctype html><title>May I</title>" * 100
    with tempfile.TemporaryFile() as file:
        file.write(content)
        file.seek(0)

        def files(environ: dict[str, Any], start_response: Any) -> Any:
            start_response("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(content)))])
            return environ["wsgi.file_wrapper"](file)

        writes, answer, got = serve(files, GET)
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and writes[0].endswith(b"\r\n\r\n")
    assert writes[1:] == [b"<sendfile>"]
    assert answer.status == 200 and got == content


def test_a_body_in_pieces_is_whole_the_first_piece_with_the_head() -> None:
    def pieces(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        start_response("200 OK", [("Content-Length", "6")])
        return [b"abc", b"def"]

    writes, _, got = serve(pieces, GET)
    assert len(writes) == 2 and writes[0].endswith(b"\r\n\r\nabc") and writes[1] == b"def"
    assert got == b"abcdef"
