"""One webhook POST: signed by the Standard Webhooks specification, sent to the address
that was checked (:func:`mayi_service.bots.addresses.resolve`, never a second lookup), with
the URL's host in the ``Host`` header and for TLS, within a time to connect and a time
for the whole answer, reading at most a bounded answer and following no redirect."""

from __future__ import annotations

import http.client
import socket
import ssl
import time
from dataclasses import dataclass

from mayi_service.bots.addresses import Target
from mayi_service.bots.seats import sign

USER_AGENT = "mayi-webhooks/1"


def signed_headers(secrets: list[str], msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The headers of a delivery of ``body``: ``webhook-id``, ``webhook-timestamp`` and a
    ``webhook-signature`` by each of ``secrets`` (during a rotation: the new, then the old)."""
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(sign(secret, msg_id, timestamp, body) for secret in secrets),
    }


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to a checked address (``host`` is that address)."""

    def __init__(self, address: str, port: int, timeout: float) -> None:
        super().__init__(address, port, timeout=timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection to a checked address, with the URL's host for SNI and the
    certificate check."""

    def __init__(
        self, address: str, port: int, server_name: str, timeout: float, context: ssl.SSLContext | None = None
    ) -> None:
        super().__init__(address, port, timeout=timeout, context=context or ssl.create_default_context())
        self.server_name = server_name

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.server_name)  # type: ignore[attr-defined]


@dataclass
class Outcome:
    """What one POST gave: a status (``None``: no answer), an error, and whether the
    answer's body was cut at the size limit."""

    status: int | None = None
    error: str | None = None
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300 and self.error is None


def post(
    target: Target,
    body: bytes,
    headers: dict[str, str],
    connect_seconds: float,
    read_seconds: float,
    max_bytes: int,
    context: ssl.SSLContext | None = None,
) -> Outcome:
    """POST ``body`` to ``target``: at most ``connect_seconds`` to connect, then at most
    ``read_seconds`` for the whole answer (status, headers and up to ``max_bytes`` of body).
    Redirects are not followed (a 3xx is a failure). ``context``: the TLS settings (default:
    the system's certificate authorities, the certificate checked for the URL's host)."""
    conn: http.client.HTTPConnection
    if target.scheme == "https":
        conn = _PinnedHTTPSConnection(target.address, target.port, target.host, connect_seconds, context)
    else:
        conn = _PinnedHTTPConnection(target.address, target.port, connect_seconds)
    default_port = 443 if target.scheme == "https" else 80
    host = f"[{target.host}]" if ":" in target.host else target.host
    sent = {"Host": host if target.port == default_port else f"{host}:{target.port}", **headers}
    sent["Content-Length"] = str(len(body))
    try:
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as exc:
            return Outcome(error=f"could not connect to {target.address} port {target.port}: {_why(exc)}")
        end = time.monotonic() + read_seconds
        sock = conn.sock  # kept: http.client lets go of it once an answer is read whole
        assert sock is not None
        sock.settimeout(read_seconds)
        try:
            conn.request("POST", target.path, body=body, headers=sent)
            response = conn.getresponse()
            status = response.status
            got = 0
            truncated = False
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    return Outcome(status, f"the answer took more than {read_seconds:g} s")
                sock.settimeout(left)
                chunk = response.read1(min(16384, max_bytes + 1 - got)) if got <= max_bytes else b""
                if not chunk:
                    break
                got += len(chunk)
                if got > max_bytes:
                    truncated = True
                    break
        except TimeoutError:
            return Outcome(error=f"no answer within {read_seconds:g} s")
        except (OSError, http.client.HTTPException) as exc:
            return Outcome(error=f"the connection failed: {_why(exc)}")
        if 300 <= status < 400:
            return Outcome(status, f"a redirect ({status}) is not followed", truncated)
        if not 200 <= status < 300:
            return Outcome(status, f"the receiver answered {status}", truncated)
        return Outcome(status, None, truncated)
    finally:
        conn.close()


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__
