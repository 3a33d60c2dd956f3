"""Every phase of a connection bounded, under gunicorn's gevent workers: the request head
(gunicorn's ``keepalive`` and ``limit_request_*``), the body in any framing (read whole
before the app runs: ``MAYI_BODY_TIMEOUT_SECONDS``, ``MAYI_MAX_BODY_BYTES``, chunked
framing checked, other transfer codings refused), each write of the answer
(``MAYI_WRITE_TIMEOUT_SECONDS``) and the connections of one address
(``MAYI_MAX_CONNECTIONS_PER_ADDRESS``); the table is in docs/operations.md, "Connections
and deadlines". Every answer the worker writes itself carries the app's CORS headers.
"""

from __future__ import annotations

import functools
import io
import ipaddress
from collections import Counter
from contextlib import suppress
from http import HTTPStatus
from typing import Any

from gunicorn import http, util
from gunicorn.http.body import Body, ChunkedReader
from gunicorn.http.errors import (
    ChunkMissingTerminator,
    InvalidChunkExtension,
    InvalidChunkSize,
    InvalidHeader,
    NoMoreData,
    ParseException,
    UnsupportedTransferCoding,
)

from mayi_service.problem_types import Problem
from mayi_service.server.cors import Cors

#: Seconds a refused connection may linger to take in the request it sent (so that
#: closing does not reset the connection under the answer), at most.
REFUSAL_LINGER_SECONDS = 0.5


class Refused(Exception):
    """A request the worker answers itself, with the problem of an HTTP status (one
    :func:`~.problem_types.for_status` gives) and a ``detail`` that names the rule or
    setting it broke; its connection is then closed."""

    def __init__(self, kind: Problem, detail: str) -> None:
        super().__init__(detail)
        self.status: int = kind.status or 500
        self.reason = HTTPStatus(self.status).phrase
        self.detail = detail


class TooLarge(ParseException):  # type: ignore[misc]
    """A chunked body whose chunk sizes add up to more than the limit."""

    def __init__(self, announced: int) -> None:
        super().__init__(announced)
        self.announced = announced


class BoundedChunkedReader(ChunkedReader):  # type: ignore[misc]
    """gunicorn's chunked reader, refusing a body as soon as its chunk sizes add up to
    more than ``limit`` bytes (before the data of that chunk is waited for)."""

    def __init__(self, req: Any, unreader: Any, limit: int) -> None:
        self.limit = limit
        self.announced = 0
        super().__init__(req, unreader)

    def parse_chunk_size(self, unreader: Any, data: bytes | None = None) -> tuple[int, bytes | None]:
        size, rest = super().parse_chunk_size(unreader, data)
        self.announced += size
        if self.announced > self.limit:
            raise TooLarge(self.announced)
        return size, rest


def address_key(addr: Any) -> str | None:
    """The client a connection counts against: its IPv4 address, or its IPv6 address's
    /64 (one host's, or one site's, usual share); ``None`` for a Unix socket."""
    if not isinstance(addr, tuple) or not addr:
        return None
    try:
        ip = ipaddress.ip_address(str(addr[0]).split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


#: The one transfer coding the service reads (RFC 9112 section 7).
CHUNKED = "chunked"


def other_codings(headers: Any) -> list[str]:
    """The transfer codings of ``Transfer-Encoding`` fields among ``headers`` (gunicorn's
    ``(NAME, value)`` pairs) other than ``chunked``: the service implements none of them."""
    found: list[str] = []
    for name, value in headers:
        if name == "TRANSFER-ENCODING":
            found += [c for c in (v.strip(" \t").lower() for v in value.split(",")) if c != CHUNKED]
    return found


def not_implemented(codings: list[str]) -> Refused:
    """The 501 for a request whose ``Transfer-Encoding`` names ``codings`` (RFC 9112 section 6.1)."""
    named = ", ".join(repr(c) for c in codings)
    detail = (
        f"Transfer-Encoding: {named} is not implemented: the only transfer coding this service reads is "
        "'chunked' (send the body as it is, with a Content-Length or chunked)"
    )
    return Refused(Problem.NOT_IMPLEMENTED, detail)


def _framing(req: Any) -> tuple[bool, int]:
    """Whether the body is chunked, and its ``Content-Length`` (0 if none). Raises the 501
    :class:`Refused` for a transfer coding other than ``chunked`` (gunicorn takes ``gzip,
    chunked`` as chunked, and so would hand on a compressed body as if it were the body)."""
    length = 0
    chunked = False
    for name, value in req.headers:
        if name == "TRANSFER-ENCODING":
            chunked = True  # (gunicorn refused a coding list that does not end with chunked)
        elif name == "CONTENT-LENGTH":
            with suppress(ValueError):  # (gunicorn refused a length that is not digits)
                length = int(value)
    if chunked:
        codings = other_codings(req.headers)
        if codings:
            raise not_implemented(codings)
        return True, 0
    return False, length


def _printable(data: Any) -> str:
    text = data.decode("latin-1") if isinstance(data, bytes) else str(data)
    return repr(text[:40])


def _malformed(exc: Exception) -> str:
    """What is wrong with a chunked body, in a sentence."""
    if isinstance(exc, InvalidChunkSize):
        if isinstance(exc.data, bytes):
            return (
                f"the chunk size {_printable(exc.data)} is not a hexadecimal number "
                "(only the digits 0-9, a-f, A-F: no sign, prefix or spaces)"
            )
        return f"a chunk size line is too long ({exc.data})"
    if isinstance(exc, ChunkMissingTerminator):
        if not exc.term:
            return "the body ended before its last chunk (a chunk of size 0, then an empty line)"
        return (
            f"a chunk's data is not followed by CRLF (found {_printable(exc.term)}): "
            "the data is longer than its chunk size says, or the CRLF is missing"
        )
    if isinstance(exc, InvalidChunkExtension):
        return f"a chunk extension is not valid ({exc.reason})"
    return f"its trailer section is not valid ({exc})"


def read_body(req: Any, sock: Any, max_bytes: int, seconds: float) -> bytes | None:
    """Read the body of ``req`` whole, in whatever framing, within ``seconds`` (0: no
    limit) and up to ``max_bytes``; ``None`` when there is nothing to read here (no body,
    or a ``Content-Length`` over the limit, which the app answers with 413 without
    reading it). Raises :class:`Refused` for a body that is too large (413), malformed
    or cut short (400), or too slow (408)."""
    import gevent

    chunked, length = _framing(req)
    limit = f"at most {max_bytes:,} bytes (MAYI_MAX_BODY_BYTES)"
    if not chunked and length <= 0:
        return None
    if not chunked and length > max_bytes:
        if req._expected_100_continue:  # refused before the client sends it
            raise Refused(Problem.REQUEST_TOO_LARGE, f"The request body is too large: {limit}; {length:,} announced")
        return None
    continued = req._expected_100_continue
    req._expected_100_continue = False  # (else gunicorn would send it again)
    body = Body(BoundedChunkedReader(req, req.unreader, max_bytes)) if chunked else req.body
    data: bytes | None = None
    try:
        with gevent.Timeout(seconds or None, False):
            if continued:
                sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            data = body.read()
    except TooLarge as exc:
        raise Refused(
            Problem.REQUEST_TOO_LARGE, f"The request body is too large: {limit}; its chunks announce {exc.announced:,}"
        ) from None
    except NoMoreData:
        detail = "The request body was cut short: the client closed the connection before its end"
        raise Refused(Problem.BAD_REQUEST, detail) from None
    except ParseException as exc:
        detail = f"The request body's chunked framing is not valid: {_malformed(exc)}"
        raise Refused(Problem.BAD_REQUEST, detail) from None
    if data is None:
        announced = "chunked" if chunked else f"{length} bytes announced"
        raise Refused(
            Problem.REQUEST_TIMEOUT,
            f"The request body ({announced}) did not arrive within {seconds:g} s (MAYI_BODY_TIMEOUT_SECONDS)",
        )
    if not chunked and len(data) < length:
        detail = f"The request body ended after {len(data)} of the {length} bytes its Content-Length announced"
        raise Refused(Problem.BAD_REQUEST, detail)
    return data


class BoundedConnections:
    """A mixin for gunicorn's gevent worker: every phase of a connection bounded (this
    module's docstring). It needs the worker's ``problem(status, reason, detail)``, the
    bytes of a whole error answer, and ``write_error``, which answers an error of gunicorn's."""

    max_body: int
    body_seconds: float
    write_seconds: float
    per_address: int
    held: Counter[str]
    cors_origins: tuple[str, ...]
    cfg: Any
    log: Any

    def problem(self, status: int, reason: str, detail: str, headers: dict[str, str] | None = None) -> bytes:
        raise NotImplementedError  # pragma: no cover - the worker's

    def write_error(self, req: Any, client: Any, addr: Any, exc: BaseException, cors: dict[str, str]) -> None:
        raise NotImplementedError  # pragma: no cover - the worker's

    def init_process(self) -> None:
        from mayi_service.config import Settings

        settings = Settings.from_env()
        self.max_body = settings.max_body_bytes
        self.body_seconds = settings.body_timeout_seconds
        self.write_seconds = settings.write_timeout_seconds
        # Behind a proxy every connection comes from the proxy: the proxy bounds its clients.
        self.per_address = settings.max_connections_per_address if settings.trusted_proxies == 0 else 0
        self.held = Counter()
        self.cors_origins = settings.cors_origins
        super().init_process()  # type: ignore[misc]

    @functools.cached_property
    def cors(self) -> Cors:
        """Made at its first use, in the worker once it runs (gevent's patches are in place)."""
        return Cors(self.cors_origins)

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        key = address_key(addr) if self.per_address else None
        if key is None:
            super().handle(listener, client, addr)  # type: ignore[misc]
            return
        if self.held[key] >= self.per_address:
            self._refuse(client, addr, key)
            return
        self.held[key] += 1
        try:
            super().handle(listener, client, addr)  # type: ignore[misc]
        finally:
            self.held[key] -= 1
            if not self.held[key]:
                del self.held[key]

    def _refuse(self, client: Any, addr: Any, key: str) -> None:
        """Answer 429 to a connection over its address's cap, with the CORS headers of its
        request's ``Origin`` (the head read if it comes within :data:`REFUSAL_LINGER_SECONDS`),
        then close it."""
        detail = (
            f"Too many connections: {key} has {self.per_address} open to this server process, as many as one "
            "address may (MAYI_MAX_CONNECTIONS_PER_ADDRESS); close one, or retry after Retry-After seconds"
        )
        self.log.info("refused a connection from %s: %d open (MAYI_MAX_CONNECTIONS_PER_ADDRESS)", key, self.per_address)
        with suppress(OSError):
            refused = Refused(Problem.RATE_LIMITED, detail)
            # (An answer without an Origin to read: the one to no request read.)
            cors = self.cors.headers(self._head(client, addr)) or self.cors.headers(None)
            util.write_nonblock(client, self.problem(refused.status, refused.reason, detail, cors))
        util.close_graceful(client, timeout=REFUSAL_LINGER_SECONDS)

    def _head(self, client: Any, addr: Any) -> Any:
        """The head of the request on ``client`` (gunicorn's request, its body not read), or
        ``None`` when none reads within :data:`REFUSAL_LINGER_SECONDS` (it is late, too large
        or malformed, or the client closed)."""
        from gevent import Timeout

        with suppress(ParseException, OSError, StopIteration), Timeout(REFUSAL_LINGER_SECONDS, False):
            return next(http.RequestParser(self.cfg, client, addr))
        return None

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        """gunicorn's error answer, with the CORS headers of the request's ``Origin``; a
        ``Transfer-Encoding`` gunicorn refuses as malformed (``gzip``, ``identity``: no
        ``chunked`` at the end) is a 501 when it names a coding other than ``chunked``."""
        read = req if req is not None else getattr(exc, "req", None)
        if not hasattr(read, "headers"):
            read = None  # (InvalidRequestLine keeps the line it could not read as its ``req``)
        if isinstance(exc, InvalidHeader) and exc.hdr == "TRANSFER-ENCODING" and read is not None:
            codings = other_codings(read.headers)
            if codings:
                exc = UnsupportedTransferCoding(", ".join(codings))
        self.write_error(read, client, addr, exc, self.cors.headers(read))

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> Any:
        try:
            data = read_body(req, sock, self.max_body, self.body_seconds)
        except Refused as refused:
            self.log.info("refused a request from %s: %s", addr[0] if addr else "?", refused.detail)
            cors = self.cors.headers(req)
            with suppress(OSError):
                util.write_nonblock(sock, self.problem(refused.status, refused.reason, refused.detail, cors))
            # Half-close and drain what is left (bounded), so that the answer is not lost to a reset.
            util.close_graceful(sock)
            raise StopIteration() from None  # gunicorn closes the connection
        if data is not None:
            req.body = io.BytesIO(data)
        # From here the app runs and the answer is written: no read of this socket
        # waits, and each write must be taken within write_seconds.
        sock.settimeout(self.write_seconds or None)
        try:
            return super().handle_request(listener_name, req, sock, addr)  # type: ignore[misc]
        except TimeoutError:
            self.log.info(
                "closed a connection from %s: it did not take an answer within %g s (MAYI_WRITE_TIMEOUT_SECONDS)",
                addr[0] if addr else "?",
                self.write_seconds,
            )
            raise StopIteration() from None
        finally:
            with suppress(OSError):
                sock.settimeout(None)


class HangUp:
    """Notices a client that hangs up on a request that waits (an event stream, a
    long-poll), at once rather than at the next write: under gunicorn's gevent worker
    (the ``gunicorn.socket`` of the request's environ), a watcher of the event loop (no
    greenlet: a stream costs no more memory) fires when the client socket turns
    readable, which, once the request is read whole, only its end (or a reset) makes
    it; it then sets :attr:`gone` and calls ``on_gone`` (in a greenlet of its own).
    Pipelined bytes are left alone (the next write notices a hang-up then). Elsewhere
    (no gevent, no socket) :attr:`gone` stays false. :meth:`close` stops the watch."""

    __slots__ = ("gone", "on_gone", "raw", "watcher")

    def __init__(self, environ: dict[str, Any], on_gone: Any = None) -> None:
        self.gone = False
        self.on_gone = on_gone
        self.watcher: Any = None
        sock = environ.get("gunicorn.socket")
        if sock is None:
            return
        from gevent import monkey

        if not monkey.is_module_patched("socket"):
            return
        import gevent

        #: The OS-level socket (gevent's own recv would wait; this one never does).
        self.raw = getattr(sock, "_sock", sock)
        self.watcher = gevent.get_hub().loop.io(sock.fileno(), 1)
        self.watcher.start(self._readable)

    def _readable(self) -> None:
        """In the event loop's own context: must not block."""
        import socket

        try:
            hung_up = not self.raw.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return  # nothing to read after all: watch on
        except OSError:  # reset, or closed under us
            hung_up = True
        self.close()
        if hung_up:
            self.gone = True
            if self.on_gone is not None:
                import gevent

                gevent.spawn(self.on_gone)

    def __call__(self) -> bool:
        return self.gone

    def close(self) -> None:
        if self.watcher is not None:
            watcher, self.watcher = self.watcher, None
            watcher.stop()
            watcher.close()
