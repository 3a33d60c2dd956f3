"""The client's transport, over real loopback sockets: every request goes through the
client's ``requests.Session`` and its transport adapter, so what ``requests`` takes from
the environment and from the session (proxies, cookies, redirects, hooks) is honoured for
every request (see :mod:`mayi_sdk.transport`)."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
from proxies import ThreadedListener, read_http_message
from servers import LiveServer

from mayi_sdk import Client
from mayi_sdk.transport import USER_AGENT

DECISIONS = {"decisions": [], "games": 0, "skipped": []}
VIEW = {
    "id": "g1",
    "version": 3,
    "status": "waiting",
    "variant": "may_i",
    "options": {},
    "rated": False,
    "created_at": 0.0,
    "last_event": 0,
    "seats": [],
}


class Recorder:
    """A WSGI app that answers the decisions poll and moves with canned JSON and records
    every request (method, path and query, headers); ``/old/...`` redirects (307) to
    ``/...``, and ``/healthz`` sets a cookie."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, str]]] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        path = environ["PATH_INFO"]
        query = environ.get("QUERY_STRING", "")
        headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
        self.seen.append((environ["REQUEST_METHOD"], path + ("?" + query if query else ""), headers))
        if path.startswith("/old/"):
            location = path[4:] + ("?" + query if query else "")
            start_response("307 Temporary Redirect", [("Location", location), ("Content-Length", "0")])
            return [b""]
        extra = []
        if path == "/healthz":
            body: dict[str, Any] = {"status": "ok", "redis": True}
            extra = [("Set-Cookie", "lb=node-2; Path=/")]
        elif path.endswith("/decisions"):
            body = DECISIONS
        elif path == "/v1/games":
            body = {"game_id": "g1", "seats": [], "game": VIEW}
        else:
            body = VIEW
        data = json.dumps(body).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data))), *extra])
        return [data]


@pytest.fixture
def recorder() -> Iterator[tuple[Recorder, str]]:
    app = Recorder()
    server = LiveServer(app)
    try:
        yield app, server.url
    finally:
        server.stop()


class ForwardProxy(ThreadedListener):
    """A plain-HTTP forward proxy: reads a request in absolute form (``GET http://host/path``),
    notes its target and sends it on to the origin as its answer came back."""

    def __init__(self) -> None:
        self.targets: list[str] = []
        super().__init__()
        self.url = f"http://127.0.0.1:{self.port}"

    def handle(self, conn: socket.socket) -> None:
        with conn:
            while True:
                request = read_http_message(conn)
                if not request:
                    return
                line, _, rest = request.partition(b"\r\n")
                method, target, version = line.split(b" ")
                self.targets.append(target.decode())
                host_port, _, path = target.removeprefix(b"http://").partition(b"/")
                host, _, port = host_port.partition(b":")
                with socket.create_connection((host.decode(), int(port))) as upstream:
                    upstream.sendall(b" ".join((method, b"/" + path, version)) + b"\r\n" + rest)
                    conn.sendall(read_http_message(upstream))


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[ForwardProxy]:
    found = ForwardProxy()
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", found.url)
    monkeypatch.setenv("http_proxy", found.url)
    yield found
    found.close()


def test_a_proxy_set_in_the_environment_carries_every_request(
    recorder: tuple[Recorder, str], proxy: ForwardProxy
) -> None:
    app, base = recorder
    with Client(base, "mayi_bot_t") as client:
        client.get_decisions()
        client.claim_upcard("g1", False)
        client.create_game("may_i", 2)  # a request that is not safe to send twice: requests' full path
    assert proxy.targets == [
        f"{base}/v1/bots/me/decisions?wait=0.0",
        f"{base}/v1/games/g1/claims",
        f"{base}/v1/games",
    ]
    assert [method for method, _, _ in app.seen] == ["GET", "POST", "POST"]


def test_a_server_no_proxy_names_is_not_proxied(
    recorder: tuple[Recorder, str], proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, base = recorder
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with Client(base, "mayi_bot_t") as client:
        client.get_decisions()
        client.claim_upcard("g1", False)
    assert proxy.targets == []
    assert len(app.seen) == 2


def test_the_clients_session_reads_the_environment_once(
    recorder: tuple[Recorder, str], proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, base = recorder
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt")
    with Client(base, "mayi_bot_t") as client:
        client.get_decisions()  # proxied: the environment as the client was made
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/nonexistent/bundle.pem")
        client.claim_upcard("g1", False)  # still proxied: not read again
    assert proxy.targets == [f"{base}/v1/bots/me/decisions?wait=0.0", f"{base}/v1/games/g1/claims"]
    assert client.session.trust_env is False and client.session.verify == "/etc/ssl/certs/ca-certificates.crt"
    assert len(app.seen) == 2


def test_a_session_that_does_not_trust_the_environment_is_not_proxied(
    recorder: tuple[Recorder, str], proxy: ForwardProxy
) -> None:
    app, base = recorder
    session = requests.Session()
    session.trust_env = False
    with Client(base, "mayi_bot_t", session=session) as client:
        client.get_decisions()
        client.claim_upcard("g1", False)
    assert proxy.targets == []
    assert len(app.seen) == 2


def test_the_hot_requests_send_what_requests_sends(recorder: tuple[Recorder, str]) -> None:
    app, base = recorder
    with Client(base, "mayi_bot_t") as client:
        client.session.headers["X-Bot-Version"] = "7"
        client.get_decisions(wait=5, skip=["k2", "k1"])
        client.claim_upcard("g1", False, if_match=3, idempotency_key="once")
    (get, path, got), (post, post_path, posted) = app.seen
    assert (get, path) == ("GET", "/v1/bots/me/decisions?wait=5.0&skip=k1&skip=k2")
    assert (post, post_path) == ("POST", "/v1/games/g1/claims")
    for headers in (got, posted):
        assert headers["authorization"] == "Bearer mayi_bot_t"
        assert headers["user-agent"] == client.session.headers["User-Agent"] and headers["x-bot-version"] == "7"
    assert posted["idempotency-key"] == "once" and posted["if-match"] == "3"


def test_cookies_the_server_sets_are_sent_back(recorder: tuple[Recorder, str]) -> None:
    app, base = recorder
    with Client(base) as client:
        client.get_health()  # sets lb=node-2 (as a load balancer's sticky session would)
        client.get_decisions()
        client.claim_upcard("g1", False)
    assert "cookie" not in app.seen[0][2]
    assert [headers.get("cookie") for _, _, headers in app.seen[1:]] == ["lb=node-2", "lb=node-2"]


def test_a_redirect_is_followed(recorder: tuple[Recorder, str]) -> None:
    app, base = recorder
    with Client(base + "/old", "mayi_bot_t") as client:
        assert client.get_decisions().decisions == []
        assert client.claim_upcard("g1", False, idempotency_key="k").version == 3
    moves = [(method, path) for method, path, _ in app.seen if "claims" in path]
    assert moves[-2:] == [("POST", "/old/v1/games/g1/claims"), ("POST", "/v1/games/g1/claims")]
    assert all(headers.get("idempotency-key") == "k" for _, path, headers in app.seen if "claims" in path)


def test_the_sessions_response_hooks_see_every_answer(recorder: tuple[Recorder, str]) -> None:
    _, base = recorder
    seen: list[str] = []
    session = requests.Session()
    session.hooks["response"].append(lambda response, **kwargs: seen.append(response.url))
    with Client(base, "mayi_bot_t", session=session) as client:
        client.get_decisions()
        client.claim_upcard("g1", False)
    assert seen == [f"{base}/v1/bots/me/decisions?wait=0.0", f"{base}/v1/games/g1/claims"]


def test_the_client_names_itself_unless_its_session_has_a_user_agent(recorder: tuple[Recorder, str]) -> None:
    app, base = recorder
    with Client(base, "mayi_bot_t") as client:
        client.get_decisions()
    session = requests.Session()
    session.headers["User-Agent"] = "my-bot/2"
    with Client(base, "mayi_bot_t", session=session) as client:
        client.get_decisions()
    assert [headers["user-agent"] for _, _, headers in app.seen] == [USER_AGENT, "my-bot/2"]
    assert USER_AGENT.startswith("mayi-sdk/")


def test_the_sessions_transport_adapter_sends_every_request(recorder: tuple[Recorder, str]) -> None:
    """The session's own adapter (here the stock one, its ``send`` counted) carries the
    polls and moves too: the client has no transport of its own beside ``requests``."""
    app, base = recorder
    session = requests.Session()
    adapter = session.get_adapter(base)
    sent: list[str] = []
    send = adapter.send

    def counted(request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        sent.append(f"{request.method} {request.path_url}")
        return send(request, **kwargs)

    adapter.send = counted  # type: ignore[method-assign]
    with Client(base, "mayi_bot_t", session=session) as client:
        client.get_decisions()
        client.claim_upcard("g1", False)
        client.get_game("g1")
    assert sent == ["GET /v1/bots/me/decisions?wait=0.0", "POST /v1/games/g1/claims", "GET /v1/games/g1"]
    assert len(app.seen) == 3
