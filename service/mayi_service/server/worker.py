"""Running the API under gunicorn with gevent workers.

Each worker process serves every connection on its own greenlet: a waiting
long-poll, an open event stream or a half-sent upload costs a socket and a little
memory, not a thread (docs/architecture.md, "Serving model"). The worker class
below is gunicorn's gevent worker plus three things: a higher open-file limit (each
waiting client holds a client socket and a Redis connection), the objects of the loaded
app frozen out of the garbage collector's sight, and gunicorn's own
error answers (414, 431, 400 for a request it cannot parse, 501) as
``application/problem+json`` like every other error of the service, with its CORS headers.
"""

from __future__ import annotations

import gc
import json
import logging
import resource
import signal
from collections.abc import Callable
from contextlib import suppress
from http import HTTPStatus
from typing import Any

from gunicorn import util
from gunicorn.app.base import BaseApplication
from gunicorn.http import wsgi
from gunicorn.workers.ggevent import GeventWorker as _GunicornGeventWorker

from mayi_service.problem_types import CONTENT_TYPE, PROBLEM_TYPE, for_status

# Nothing imported here may import redis or requests: gunicorn's master imports this module
# for the worker class, and the workers (its forks) patch ssl for gevent only as they start.
from mayi_service.server.deadlines import ERROR_CORS, BoundedConnections, not_implemented

log = logging.getLogger(__name__)


def problem_bytes(
    status: int, reason: str, message: str, limits: dict[str, int], headers: dict[str, str] | None = None
) -> bytes:
    """A whole HTTP response: gunicorn's error ``status`` as the problem of that status
    (:func:`~.problem_types.for_status`) whose ``detail`` names the limit or the rule the
    request broke, with ``headers`` (the CORS headers) besides its own. The status line's
    reason is the status's own where gunicorn gives another's (its 501 is "Bad Request").

    >>> head, _, body = problem_bytes(414, "URI Too Long", "Request Line is too large (9000 > 4094)",
    ...     {"limit_request_line": 4094}).partition(b"\\r\\n\\r\\n")
    >>> head.splitlines()[0], json.loads(body)["code"]
    (b'HTTP/1.1 414 URI Too Long', 'uri_too_long')
    """
    kind = for_status(status)
    if reason == "Bad Request" and status != 400:  # (gunicorn's reason for its 501)
        with suppress(ValueError):
            reason = HTTPStatus(status).phrase
    if status == 414:
        detail = (
            f"{message}: the request line (method, path and query string) may be at most "
            f"{limits.get('limit_request_line', 4094)} bytes"
        )
    elif status == 431:
        detail = (
            f"{message}: at most {limits.get('limit_request_fields', 100)} header fields of at most "
            f"{limits.get('limit_request_field_size', 8190)} bytes each"
        )
    elif status in (408, 413, 429):
        detail = message
    elif status == 501 and message.startswith("Unsupported transfer coding: "):  # gunicorn's own
        detail = not_implemented([message.split(": ", 1)[1].strip("'\"")]).detail
    elif status == 501:
        detail = message
    elif status == 500:
        detail = "Something went wrong on our side; it has been logged"
    else:
        detail = f"The request is not valid HTTP/1.1: {message}" if message else "The request is not valid HTTP/1.1"
    body = json.dumps(
        {"type": PROBLEM_TYPE + kind.code, "title": kind.title, "status": status, "detail": detail, "code": kind.code}
    )
    extra = {"Retry-After": "1"} if status == 429 else {}
    extra.update(headers or {})
    lines = "".join(f"{name}: {value}\r\n" for name, value in extra.items())
    head = (
        f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: {CONTENT_TYPE}\r\n{lines}"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return (head + body).encode("latin-1")


class GeventWorker(BoundedConnections, _GunicornGeventWorker):  # type: ignore[misc]
    """gunicorn's gevent worker, with problem+json error answers, enough file
    descriptors, and every phase of a connection bounded (:mod:`.deadlines`: the
    head, the body in any framing, each write of the answer, and connections per
    address). The body is read before the app runs, so the app never waits on a
    slow client.
    """

    def init_process(self) -> None:
        limits = {
            "limit_request_line": self.cfg.limit_request_line,
            "limit_request_fields": self.cfg.limit_request_fields,
            "limit_request_field_size": self.cfg.limit_request_field_size,
        }

        def write_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
            util.write_nonblock(sock, problem_bytes(status_int, reason, mesg, limits, ERROR_CORS.get()))
            # Half-close and drain what is left of the request: closing with unread bytes
            # would reset the connection, and the client could lose the answer.
            util.close_graceful(sock)

        # gunicorn's workers answer the requests they cannot parse with util.write_error (text/html).
        util.write_error = write_error
        # wsgi.create builds every response from this module global.
        wsgi.Response = OneWriteResponse
        self.limits = limits
        raise_open_files(2 * self.worker_connections + 256)
        super().init_process()

    def load_wsgi(self) -> None:
        """Load the app, then move every object that exists by then (modules, the app, its
        schemas and OpenAPI document: about 100,000 objects, all living as long as the
        process) out of the garbage collector's sight (``gc.freeze``): a full collection
        then walks only what requests made. The collector's pauses cost the API about 0.04
        ms of CPU a request, amortised, before this; about a tenth of that after."""
        super().load_wsgi()
        gc.collect()
        gc.freeze()

    def problem(self, status: int, reason: str, detail: str, headers: dict[str, str] | None = None) -> bytes:
        return problem_bytes(status, reason, detail, self.limits, headers)


class OneWriteResponse(wsgi.Response):  # type: ignore[misc]
    """gunicorn's response, its head sent with the first body bytes in one write.

    gunicorn writes a response's status line and headers, then its body, in two
    sends: two TCP segments on the wire, and a client that reads the head, wakes up,
    and must wait for the body to come in a second read. Holding the head until the
    first body bytes (or the response's end, when it has no body) sends both at once.
    Nothing is held longer than gunicorn itself would: it sends the head only when
    the app gives the first body bytes, too.
    """

    _head = b""

    def send_headers(self) -> None:
        if self.headers_sent:
            return
        lines = self.default_headers()
        # A 204 or 304 has no content, so no media type (RFC 9110 section 8.3): Werkzeug gives
        # every response one (text/html for an empty body).
        empty = self.status_code in (204, 304)
        lines.extend(
            [f"{name}: {value}\r\n" for name, value in self.headers if not (empty and name.lower() == "content-type")]
        )
        self._head = ("".join(lines) + "\r\n").encode("latin-1")
        self.headers_sent = True

    def _emit_body(self, data: bytes) -> None:
        if self.chunked:
            data = b"%X\r\n%s\r\n" % (len(data), data)  # (as gunicorn's util.write_chunk frames it)
        head, self._head = self._head, b""
        self.sock.sendall(head + data)

    def flush_head(self) -> None:
        """Send the head if it is still held."""
        head, self._head = self._head, b""
        if head:
            self.sock.sendall(head)

    def sendfile(self, respiter: Any) -> bool:
        self.send_headers()
        self.flush_head()  # the file goes out by os.sendfile, after the head
        return bool(super().sendfile(respiter))

    def close(self) -> None:
        self.send_headers()
        self.flush_head()  # a response with no body bytes (204, HEAD, an empty body)
        super().close()


def raise_open_files(wanted: int) -> int:
    """Raise this process's soft limit of open files towards ``wanted`` (up to the hard
    limit); return the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    if soft != resource.RLIM_INFINITY and soft < wanted:
        log.warning("open files limited to %d (wanted %d): raise the hard limit (ulimit -Hn)", soft, wanted)
    return int(soft)


class _Gunicorn(BaseApplication):  # type: ignore[misc]
    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from mayi_service.api.app import create_app

        return create_app()


def run_api(host: str, port: int, workers: int, connections: int, on_stop: Callable[[], None] | None = None) -> None:
    """Serve the API on ``host:port`` until interrupted (settings of :mod:`.gunicorn_config`);
    ``on_stop`` is called (in a signal handler) when SIGTERM, SIGINT or SIGQUIT arrives."""
    from mayi_service import gunicorn_config as conf

    def when_ready(server: Any) -> None:
        """gunicorn's master has its signal handlers: call ``on_stop`` first in the stopping ones."""
        if on_stop is None:
            return
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
            theirs = signal.getsignal(sig)

            def handler(signum: int, frame: Any, theirs: Any = theirs) -> None:
                on_stop()
                if callable(theirs):
                    theirs(signum, frame)

            signal.signal(sig, handler)

    _Gunicorn(
        {
            "when_ready": when_ready,
            "bind": f"{host}:{port}",
            "workers": workers,
            "worker_connections": connections,
            "worker_class": conf.worker_class,
            "timeout": conf.timeout,
            "graceful_timeout": conf.graceful_timeout,
            "keepalive": conf.keepalive,
            "on_starting": conf.on_starting,
            "child_exit": conf.child_exit,
            "accesslog": None,
            "loglevel": "warning",
        }
    ).run()
