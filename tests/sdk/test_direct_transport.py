"""The client's direct path to a plain-HTTP server (``mayi_sdk.direct``), over real
loopback sockets against a small HTTP/1.1 server that keeps connections alive and notes
every connection and request: requests share one kept connection; a connection the
server closed is replaced without an error; each thread, and a forked child, has its own
connection, closed once its thread has ended; a request is the head and body ``requests``
would send; the answer is read as ``requests`` reads it
(a chunked or gzip body, headers of any case, cookies kept); a header with a line break
is refused, naming it; a server that does not answer is a ``TransportError``."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import requests
import requests.adapters
from proxies import ThreadedListener

from mayi_sdk import Client, errors

VIEW = {"id": "g1", "version": 3, "status": "waiting", "variant": "may_i", "options": {}, "seats": []}


class KeepAliveServer(ThreadedListener):
    """An HTTP/1.1 server answering every request with ``answer(path)`` on connections it
    keeps open (until ``close_after`` requests on one, if set); it notes each connection
    and each request."""

    def __init__(self) -> None:
        self.connections = 0
        self.hung_up = 0  # connections the client closed
        self.requests: list[tuple[int, bytes]] = []  # (connection number, the request as received)
        self.close_after: int | None = None
        self.lock = threading.Lock()
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    def answer(self, path: str) -> tuple[list[tuple[str, str]], bytes]:
        if path.startswith("/v1/bots/me/decisions"):
            return [("Content-Type", "application/json")], json.dumps({"decisions": [], "games": 0}).encode()
        if path == "/chunked":
            return [("Transfer-Encoding", "chunked"), ("content-type", "application/json")], b""
        if path == "/gzip":
            data = gzip.compress(json.dumps(VIEW).encode())
            return [("Content-Type", "application/json"), ("Content-Encoding", "gzip")], data
        if path == "/v1/games/g1":
            return [("Content-Type", "application/json"), ("Set-Cookie", "lb=n2; Path=/")], json.dumps(VIEW).encode()
        return [("Content-Type", "application/json")], json.dumps(VIEW).encode()

    def handle(self, conn: socket.socket) -> None:
        with self.lock:
            self.connections += 1
            number = self.connections
        served = 0
        with conn:
            data = b""
            while True:
                while not _whole(data):
                    chunk = conn.recv(65536)
                    if not chunk:
                        with self.lock:
                            self.hung_up += 1
                        return
                    data += chunk
                request, data = _split(data)
                with self.lock:
                    self.requests.append((number, request))
                path = request.split(b" ", 2)[1].decode()
                headers, body = self.answer(path)
                if path == "/chunked":
                    payload = json.dumps(VIEW).encode()
                    body = b"%X\r\n%s\r\n%X\r\n%s\r\n0\r\n\r\n" % (5, payload[:5], len(payload) - 5, payload[5:])
                else:
                    headers.append(("Content-Length", str(len(body))))
                head = "HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
                conn.sendall(head.encode() + body)
                served += 1
                if self.close_after is not None and served >= self.close_after:
                    return


def _whole(data: bytes) -> bool:
    head, found, body = data.partition(b"\r\n\r\n")
    return bool(found) and len(body) >= _length(head)


def _length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def _split(data: bytes) -> tuple[bytes, bytes]:
    head, _, rest = data.partition(b"\r\n\r\n")
    length = _length(head)
    return head + b"\r\n\r\n" + rest[:length], rest[length:]


@pytest.fixture
def server() -> Iterator[KeepAliveServer]:
    found = KeepAliveServer()
    yield found
    found.close()


def test_requests_share_one_kept_connection(server: KeepAliveServer) -> None:
    with Client(server.url, "mayi_bot_t") as client:
        for _ in range(5):
            assert client.get_decisions(wait=1).decisions == []
            assert client.claim_upcard("g1", False, idempotency_key="k").version == 3
        # Nothing went through requests' connection pools.
        assert not client.session.get_adapter(server.url).poolmanager.pools.keys()
    assert server.connections == 1 and len(server.requests) == 10
    first_move = server.requests[1][1]
    head, _, body = first_move.partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/games/g1/claims HTTP/1.1\r\nHost: 127.0.0.1:")
    assert json.loads(body) == {"claim": False}
    for line in (b"Authorization: Bearer mayi_bot_t", b"Idempotency-Key: k", b"Content-Type: application/json"):
        assert line in head.split(b"\r\n"), head
    assert b"Content-Length: %d" % len(body) in head.split(b"\r\n")


def test_a_connection_the_server_closed_is_replaced_without_an_error(server: KeepAliveServer) -> None:
    server.close_after = 1  # the server closes each connection after one answer (an idle timeout)
    with Client(server.url, "mayi_bot_t", max_retries=0) as client:
        for _ in range(4):
            assert client.get_decisions().games == 0
            assert client.claim_upcard("g1", False).version == 3
    assert server.connections == 8 and len(server.requests) == 8


def test_each_thread_has_its_own_connection(server: KeepAliveServer) -> None:
    with Client(server.url, "mayi_bot_t") as client:
        client.get_decisions()
        done = []

        def other() -> None:
            client.get_decisions()
            client.get_decisions()
            done.append(True)

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(60)
        client.get_decisions()
    assert done == [True]
    assert server.connections == 2
    assert sorted(n for n, _ in server.requests) == [1, 1, 2, 2]


def test_the_connections_of_threads_that_ended_are_closed(server: KeepAliveServer) -> None:
    with Client(server.url, "mayi_bot_t") as client:
        for _ in range(12):  # short-lived threads, as a webhook bot's request handlers are
            thread = threading.Thread(target=client.get_decisions)
            thread.start()
            thread.join(60)
        client.get_decisions()  # a new connection: it closes the ones no thread keeps
        deadline = time.monotonic() + 30
        while server.hung_up < 12 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.connections == 13
        assert server.hung_up == 12  # only this thread's connection is still open
    deadline = time.monotonic() + 30
    while server.hung_up < 13 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.hung_up == 13


def _child(client: Client, out: object) -> None:
    out.send(client.get_decisions().games)  # type: ignore[attr-defined]


def test_a_forked_child_opens_its_own_connection(server: KeepAliveServer) -> None:
    with Client(server.url, "mayi_bot_t") as client:
        client.get_decisions()
        context = multiprocessing.get_context("fork")
        mine, theirs = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(client, theirs))
        child.start()
        assert mine.poll(60) and mine.recv() == 0
        child.join(60)
        assert child.exitcode == 0
        client.get_decisions()  # the parent's kept connection still works
    assert server.connections == 2
    assert [n for n, _ in server.requests] in ([1, 2, 1], [1, 1, 2])


def test_answers_are_read_as_requests_reads_them(server: KeepAliveServer) -> None:
    with Client(server.url, "mayi_bot_t") as client:
        chunked = client._call("GET", "/chunked")
        zipped = client._call("GET", "/gzip")
        client.get_game("g1")  # sets a cookie
        assert client.session.cookies.get("lb") == "n2"
    assert chunked == zipped == VIEW
    assert server.connections == 1


def test_a_header_with_a_line_break_is_refused_naming_it(server: KeepAliveServer) -> None:
    with (
        Client(server.url, "mayi_bot_t\r\nX-Injected: 1") as client,
        pytest.raises(requests.exceptions.InvalidHeader) as caught,
    ):
        client.get_decisions()
    assert "Authorization" in str(caught.value)
    assert server.requests == []


def test_a_server_that_does_not_answer_is_a_transport_error() -> None:
    silent = socket.create_server(("127.0.0.1", 0))
    with silent:
        port = silent.getsockname()[1]
        client = Client(f"http://127.0.0.1:{port}", "mayi_bot_t", timeout=0.5, max_retries=1, backoff=0)
        with client, pytest.raises(errors.TransportError) as caught:
            client.get_decisions()
    assert "no answer" in str(caught.value)
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    with Client(f"http://127.0.0.1:{port}", max_retries=0) as client, pytest.raises(errors.TransportError):
        client.get_decisions()


def test_a_transport_adapter_the_session_mounts_carries_every_request(server: KeepAliveServer) -> None:
    sent: list[str] = []

    class Counting(requests.adapters.HTTPAdapter):
        def send(self, request: requests.PreparedRequest, *args: object, **kwargs: object) -> requests.Response:
            sent.append(f"{request.method} {request.path_url}")
            return super().send(request, *args, **kwargs)  # type: ignore[arg-type]

    session = requests.Session()
    session.mount("http://", Counting())
    with Client(server.url, "mayi_bot_t", session=session) as client:
        client.get_decisions()
        client.claim_upcard("g1", False)
    assert sent == ["GET /v1/bots/me/decisions?wait=0.0", "POST /v1/games/g1/claims"]
