"""Requests to a server over plain HTTP on kept-alive sockets, without ``requests``'
layers: the client's cheap path for the requests a bot sends on every decision.

``requests`` (with ``urllib3`` and ``http.client`` beneath it) spends about 0.4 ms of
CPU on one small request to a server beside it: preparing the request, the connection
pool, a header parser built for e-mail, the response object. A bot sends two requests
a decision, so that CPU lies on every decision's path, and on a machine shared with
the server it delays the server too. :class:`DirectHTTP` sends the request's head and
body in one write on a socket it keeps (one per thread), and reads the answer with
``http.client``'s own parser: about a third of the CPU, and one TCP segment a request
instead of two.

It is used only where it changes nothing but the cost (:meth:`Client._send_plain
<mayi_sdk.client.Client._send_plain>`): plain ``http://`` servers (``https://`` keeps
``requests``' certificate checks), a session with nothing of its own and the stock
transport adapter, and requests that are safe to send twice. It answers with a
``requests.Response`` and raises ``requests``' exceptions, so the client's retries and
errors are the same on both paths.
"""

from __future__ import annotations

import http.client
import os
import select
import socket
import threading
import weakref
import zlib
from collections.abc import Mapping
from types import SimpleNamespace
from urllib.parse import urlsplit

import requests
import requests.utils
from requests.cookies import extract_cookies_to_jar
from requests.structures import CaseInsensitiveDict

#: Statuses after which ``requests`` follows a redirect (``Location``).
REDIRECTS = frozenset((301, 302, 303, 307, 308))


class DirectHTTP:
    """HTTP/1.1 requests to the plain-HTTP server of ``base_url`` over kept-alive sockets,
    one a thread (a socket is never shared between threads; a forked child forgets the
    parent's and opens its own)."""

    def __init__(self, base_url: str) -> None:
        if not usable(base_url):
            raise ValueError(f"not a plain-HTTP server without credentials in its URL: {base_url!r}")
        parts = urlsplit(base_url)
        assert parts.hostname is not None
        self.address = (parts.hostname, parts.port or 80)
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        self.host = host if parts.port in (None, 80) else f"{host}:{parts.port}"
        self._local = threading.local()
        self._lock = threading.Lock()
        #: Every socket kept, with the thread it is kept for.
        self._open: dict[socket.socket, threading.Thread] = {}
        _ALL.add(self)

    def _forget(self) -> None:
        """In a forked child: the parent's sockets (and its lock's state) are not the child's."""
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open = {}

    def send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout: float | tuple[float, float] | None,
        cookies: requests.cookies.RequestsCookieJar,
    ) -> requests.Response:
        """Send one request (``url``: absolute, on this server) and read its whole answer.

        A kept connection the server has closed meanwhile is replaced, and the request sent
        on a new one (it was not answered; callers only send requests that are safe to send
        twice). Errors are ``requests``': :class:`requests.ConnectTimeout`,
        :class:`requests.ReadTimeout`, :class:`requests.ConnectionError`,
        :class:`requests.exceptions.InvalidHeader`. Cookies the answer sets go to ``cookies``."""
        data = self._message(method, url, headers, body)
        connect, read = timeout if isinstance(timeout, tuple) else (timeout, timeout)
        for attempt in (1, 2):
            sock, reused = self._socket(connect)
            try:
                sock.settimeout(read)
                sock.sendall(data)
                answer = http.client.HTTPResponse(sock, method=method)
                answer.begin()
                content = answer.read()
            except TimeoutError as exc:
                self._close(sock)
                raise requests.ReadTimeout(f"{method} {url}: no answer within {read} s ({exc})") from exc
            except (OSError, http.client.HTTPException) as exc:
                self._close(sock)
                if reused and attempt == 1 and not isinstance(exc, http.client.IncompleteRead):
                    continue  # the server closed the kept connection (an idle timeout): a new one
                raise requests.ConnectionError(f"{method} {url}: {exc!r}") from exc
            if answer.will_close:
                self._close(sock)
            return _response(method, url, headers, answer, content, cookies)
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        """Close every socket kept (of every thread)."""
        with self._lock:
            kept, self._open = list(self._open), {}
        for sock in kept:
            sock.close()

    def _message(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None) -> bytes:
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self.host}"]
        for name, value in headers.items():
            try:
                requests.utils.check_header_validity((name, value))  # no CR/LF
            except requests.exceptions.InvalidHeader as exc:
                raise requests.exceptions.InvalidHeader(f"the {name} header: {exc}") from None
            lines.append(f"{name}: {value}")
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return head + body if body else head

    def _socket(self, connect: float | None) -> tuple[socket.socket, bool]:
        """This thread's kept socket and ``True``, or a new one and ``False``."""
        sock = getattr(self._local, "kept", None)
        if sock is not None:
            if sock in self._open and not _dropped(sock):
                return sock, True
            self._close(sock)
        try:
            sock = socket.create_connection(self.address, timeout=connect)
        except TimeoutError as exc:
            raise requests.ConnectTimeout(f"connecting to {self.host}: no answer within {connect} s") from exc
        except OSError as exc:
            raise requests.ConnectionError(f"connecting to {self.host}: {exc!r}") from exc
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._lock:  # the sockets of threads that have ended are closed: they are no one's
            gone = [s for s, thread in self._open.items() if not thread.is_alive()]
            for s in gone:
                del self._open[s]
            self._open[sock] = threading.current_thread()
        for s in gone:
            s.close()
        self._local.kept = sock
        return sock, False

    def _close(self, sock: socket.socket) -> None:
        self._local.kept = None
        with self._lock:
            self._open.pop(sock, None)
        sock.close()


#: Every :class:`DirectHTTP`, so that a forked child forgets their sockets.
_ALL: weakref.WeakSet[DirectHTTP] = weakref.WeakSet()


def _forget_sockets() -> None:
    for direct in list(_ALL):
        direct._forget()


if hasattr(os, "register_at_fork"):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_forget_sockets)


def _dropped(sock: socket.socket) -> bool:
    """Whether a kept, idle socket was closed by the server (it is readable: end of
    stream, or bytes no request asked for)."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([sock], [], [], 0)[0])


def _response(
    method: str,
    url: str,
    headers: Mapping[str, str],
    answer: http.client.HTTPResponse,
    content: bytes,
    cookies: requests.cookies.RequestsCookieJar,
) -> requests.Response:
    """The ``requests.Response`` that ``requests`` builds for ``answer``."""
    response = requests.Response()
    response.status_code = answer.status
    response.reason = answer.reason
    fields: CaseInsensitiveDict[str] = CaseInsensitiveDict()
    for name, value in answer.getheaders():
        fields[name] = f"{fields[name]}, {value}" if name in fields else value
    response.headers = fields
    response.url = url
    response.encoding = requests.utils.get_encoding_from_headers(fields)
    response._content = _decoded(content, fields.get("Content-Encoding", ""))
    response._content_consumed = True
    if "Set-Cookie" in fields:
        request = requests.PreparedRequest()
        request.prepare_method(method)
        request.url = url
        request.prepare_headers(dict(headers))
        extract_cookies_to_jar(cookies, request, SimpleNamespace(_original_response=answer))
    return response


def _decoded(content: bytes, encoding: str) -> bytes:
    """The body without its ``Content-Encoding`` (``gzip``, ``deflate``), as ``requests`` gives it."""
    coding = encoding.strip().lower()
    if coding in ("gzip", "x-gzip"):
        return zlib.decompress(content, 16 + zlib.MAX_WBITS)
    if coding == "deflate":
        try:
            return zlib.decompress(content)
        except zlib.error:
            return zlib.decompress(content, -zlib.MAX_WBITS)
    return content


def usable(base_url: str) -> bool:
    """Whether :class:`DirectHTTP` can serve ``base_url`` (a plain-HTTP server)."""
    parts = urlsplit(base_url)
    return parts.scheme == "http" and bool(parts.hostname) and not parts.username and not parts.password
