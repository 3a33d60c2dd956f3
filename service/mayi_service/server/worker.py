"""Running the API under gunicorn with gevent workers, extended through its worker class.

Each worker process serves every connection on its own greenlet (docs/architecture.md,
"Serving model"). The worker class is gunicorn's gevent worker plus: a higher open-file
limit, the loaded app's objects frozen out of the garbage collector's sight, every phase
of a connection bounded (:mod:`.deadlines`), each answer's head sent with its first body
bytes (:class:`HeldHead`), and gunicorn's own error answers (414, 431, 400, 501) as
``application/problem+json`` with the CORS headers (its ``handle_error``).
"""

from __future__ import annotations

import gc
import json
import logging
import resource
import signal
from collections.abc import Callable
from contextlib import suppress
from datetime import timedelta
from ssl import SSLError
from typing import Any

from gunicorn import util
from gunicorn.app.base import BaseApplication
from gunicorn.http import wsgi
from gunicorn.http.errors import (
    ChunkMissingTerminator,
    ConfigurationProblem,
    ExpectationFailed,
    ForbiddenProxyRequest,
    InvalidChunkExtension,
    InvalidChunkSize,
    InvalidH2CPreface,
    InvalidHeader,
    InvalidHeaderName,
    InvalidHTTPVersion,
    InvalidProxyLine,
    InvalidRequestLine,
    InvalidRequestMethod,
    InvalidResponseHeader,
    InvalidResponseHeaderName,
    InvalidSchemeHeaders,
    LimitRequestHeaders,
    LimitRequestLine,
    ObsoleteFolding,
    UnsupportedTransferCoding,
)
from gunicorn.workers.ggevent import GeventWorker as _GunicornGeventWorker

from mayi_service.problem_types import CONTENT_TYPE, PROBLEM_TYPE, for_status

# Nothing imported here may import redis or requests: gunicorn's master imports this module
# for the worker class, and the workers (its forks) patch ssl for gevent only as they start.
from mayi_service.server.deadlines import BoundedConnections, not_implemented

log = logging.getLogger(__name__)


def problem_bytes(
    status: int, reason: str, message: str, limits: dict[str, int], headers: dict[str, str] | None = None
) -> bytes:
    """A whole HTTP response: gunicorn's error ``status`` as the problem of that status
    (:func:`~.problem_types.for_status`) whose ``detail`` names the limit or the rule the
    request broke, with ``headers`` (the CORS headers) besides its own.

    >>> head, _, body = problem_bytes(414, "URI Too Long", "Request Line is too large (9000 > 4094)",
    ...     {"limit_request_line": 4094}).partition(b"\\r\\n\\r\\n")
    >>> head.splitlines()[0], json.loads(body)["code"]
    (b'HTTP/1.1 414 URI Too Long', 'uri_too_long')
    """
    kind = for_status(status)
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


#: gunicorn's errors for a request it could not read: (status, reason, message), the
#: message formatted with the error's text (as gunicorn's ``Worker.handle_error`` words it).
#: Any other error is the server's (500).
CLIENT_ERRORS: tuple[tuple[Any, int, str, str], ...] = (
    (LimitRequestLine, 414, "URI Too Long", "{}"),
    (LimitRequestHeaders, 431, "Request Header Fields Too Large", "Error parsing headers: '{}'"),
    (UnsupportedTransferCoding, 501, "Not Implemented", "{}"),
    (ConfigurationProblem, 500, "Internal Server Error", "{}"),
    (ExpectationFailed, 417, "Expectation Failed", "{}"),
    (ForbiddenProxyRequest, 403, "Forbidden", "Request forbidden"),
    (SSLError, 403, "Forbidden", "'{}'"),
    (InvalidRequestLine, 400, "Bad Request", "Invalid Request Line '{}'"),
    (InvalidRequestMethod, 400, "Bad Request", "Invalid Method '{}'"),
    (InvalidHTTPVersion, 400, "Bad Request", "Invalid HTTP Version '{}'"),
    (InvalidProxyLine, 400, "Bad Request", "'{}'"),
    (InvalidHeader | InvalidHeaderName | InvalidSchemeHeaders | ObsoleteFolding, 400, "Bad Request", "{}"),
    (InvalidH2CPreface | InvalidChunkSize | ChunkMissingTerminator | InvalidChunkExtension, 400, "Bad Request", "{}"),
)


def client_error(exc: BaseException) -> tuple[int, str, str] | None:
    """The status, reason and message of gunicorn's answer to ``exc``, an error of a request
    it could not read; ``None`` for any other error (the server's: 500). A header the app
    tried to send is the app's error, not the client's."""
    if isinstance(exc, InvalidResponseHeader | InvalidResponseHeaderName):
        return None
    for kinds, status, reason, message in CLIENT_ERRORS:
        if isinstance(exc, kinds):
            return status, reason, message.format(exc)
    return None


class OneWrite:
    """A mixin for gunicorn's worker: each answer written through a :class:`HeldHead` of
    its socket, once its request is read."""

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> Any:
        held = HeldHead(sock)
        try:
            keep = super().handle_request(listener_name, req, held, addr)  # type: ignore[misc]
        except StopIteration:  # the answer is whole, and the connection closes
            with suppress(OSError):
                held.flush()
            raise
        held.flush()
        return keep


class GeventWorker(BoundedConnections, OneWrite, _GunicornGeventWorker):  # type: ignore[misc]
    """gunicorn's gevent worker, with problem+json error answers, enough file
    descriptors, every phase of a connection bounded (:mod:`.deadlines`: the head, the
    body in any framing, each write of the answer, and connections per address), and
    each answer's head sent with its first body bytes (:class:`HeldHead`). The body is
    read before the app runs, so the app never waits on a slow client.
    """

    def init_process(self) -> None:
        self.limits = {
            "limit_request_line": self.cfg.limit_request_line,
            "limit_request_fields": self.cfg.limit_request_fields,
            "limit_request_field_size": self.cfg.limit_request_field_size,
        }
        raise_open_files(2 * self.worker_connections + 256)
        super().init_process()

    def load_wsgi(self) -> None:
        """Load the app (its answers without content without a media type:
        :func:`no_content_type`), then move every object that exists by then out of the
        garbage collector's sight (``gc.freeze``): a full collection then walks only what
        requests made (docs/decisions/0005-request-path-cpu.md)."""
        super().load_wsgi()
        self.wsgi = no_content_type(self.wsgi)
        gc.collect()
        gc.freeze()

    def problem(self, status: int, reason: str, detail: str, headers: dict[str, str] | None = None) -> bytes:
        return problem_bytes(status, reason, detail, self.limits, headers)

    def write_error(self, req: Any, client: Any, addr: Any, exc: BaseException, cors: dict[str, str]) -> None:
        """gunicorn's answer to a request it could not serve, as ``application/problem+json``
        with the ``cors`` headers: a client's error (:func:`client_error`) logged as a
        warning, any other as the exception it is; then the connection is closed."""
        found = client_error(exc)
        if found is None:
            what = f"{req.method} {req.uri}" if hasattr(req, "method") and hasattr(req, "uri") else "(no URI read)"
            self.log.exception("Error handling request %s", what)
            status, reason, message = 500, "Internal Server Error", ""
        else:
            status, reason, message = found
            self.log.warning("Invalid request from ip=%s: %s", (addr or ("",))[0], exc)
        data = self.problem(status, reason, message, cors)
        if req is not None and hasattr(req, "headers"):
            resp = wsgi.Response(req, client, self.cfg)
            resp.status, resp.response_length = f"{status} {reason}", len(data)
            environ = wsgi.default_environ(req, client, self.cfg)
            environ["REMOTE_ADDR"], environ["REMOTE_PORT"] = (addr or ("", -1))[0], str((addr or ("", -1))[1])
            self.log.access(resp, req, environ, timedelta(0))
        try:
            util.write_nonblock(client, data)
        except Exception:
            self.log.debug("Failed to send error message.")
        # Half-close and drain what is left of the request: closing with unread bytes
        # would reset the connection, and the client could lose the answer.
        util.close_graceful(client)


class HeldHead:
    """The client socket as an answer is written on it: the first write (the answer's
    status line and headers, as gunicorn sends them) is held and sent with the next
    (the first body bytes, or the first chunk), in one write; :meth:`flush` sends it when
    the answer has no body. A client then gets an answer in one TCP segment, not two,
    and wakes once for it. Nothing waits longer than it would: gunicorn sends the head
    only when the app gives its first body bytes (docs/decisions/0012-bot-decision-cpu.md).
    Every other use goes to the socket itself."""

    __slots__ = ("held", "sock")

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.held: bytes | None = None  # None: nothing written yet

    def sendall(self, data: bytes) -> None:
        held = self.held
        if held is None:
            self.held = bytes(data)
        elif held:
            self.held = b""
            self.sock.sendall(held + data)
        else:
            self.sock.sendall(data)

    def sendfile(self, file: Any, offset: int = 0, count: int | None = None) -> int:
        self.flush()
        return int(self.sock.sendfile(file, offset, count))

    def flush(self) -> None:
        """Send what is held, if anything."""
        held, self.held = self.held, b""
        if held:
            self.sock.sendall(held)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


def no_content_type(app: Any) -> Any:
    """``app`` (a WSGI app) with no ``Content-Type`` on its 204 and 304 answers: they have no
    content, so no media type (RFC 9110 section 8.3), and Werkzeug gives every response one."""

    def wrapped(environ: dict[str, Any], start_response: Any) -> Any:
        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            if status[:4] in ("204 ", "304 "):
                headers = [(name, value) for name, value in headers if name.lower() != "content-type"]
            return start_response(status, headers, exc_info)

        return app(environ, start)

    return wrapped


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
    """gunicorn's custom application: ``make_app`` is called in each worker (``load``)."""

    def __init__(self, make_app: Callable[[], Any], options: dict[str, Any]) -> None:
        self.make_app = make_app
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return self.make_app()


def run_api(
    make_app: Callable[[], Any],
    host: str,
    port: int,
    workers: int,
    connections: int,
    on_stop: Callable[[], None] | None = None,
) -> None:
    """Serve the WSGI app that ``make_app`` makes (in each worker) on ``host:port`` until
    interrupted (settings of :mod:`.gunicorn_config`); ``on_stop`` is called (in a signal
    handler) when SIGTERM, SIGINT or SIGQUIT arrives."""
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
        make_app,
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
        },
    ).run()
