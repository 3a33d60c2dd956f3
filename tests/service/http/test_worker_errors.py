"""The worker answers gunicorn's own errors as gunicorn would, with the status and message
gunicorn's ``Worker.handle_error`` gives each (``server.worker.client_error``), as
problem+json: each error is answered by gunicorn's own code and by the worker's table, and
the two compared, so that a gunicorn that words or numbers an error otherwise shows here."""

from __future__ import annotations

import html
import socket
import ssl
from http import HTTPStatus
from typing import Any

import pytest
from gunicorn.config import Config
from gunicorn.http import errors
from gunicorn.workers.base import Worker

from mayi_service.server.worker import client_error

ERRORS = [
    errors.LimitRequestLine(9000, 4094),
    errors.LimitRequestHeaders("too many headers"),
    errors.UnsupportedTransferCoding("gzip"),
    errors.ExpectationFailed("100-wait"),
    errors.ForbiddenProxyRequest("10.1.2.3"),
    errors.InvalidRequestLine("GE T /"),
    errors.InvalidRequestMethod("get"),
    errors.InvalidHTTPVersion("HTTP/9.9"),
    errors.InvalidProxyLine("PROXY junk"),
    errors.InvalidHeader("CONTENT-LENGTH"),
    errors.InvalidHeaderName("X Y"),
    errors.InvalidSchemeHeaders(),
    errors.ObsoleteFolding("X-FOLDED"),
    errors.InvalidChunkSize(b"zz"),
    errors.ChunkMissingTerminator(b"ab"),
    errors.InvalidChunkExtension("bad extension"),
    errors.ConfigurationProblem("SCRIPT_NAME does not match"),
    ssl.SSLError("bad handshake"),
    errors.InvalidResponseHeader("X-App"),  # the app's: a 500
    ValueError("the app failed"),  # the app's: a 500
]


class _Quiet:
    """A logger that keeps nothing (gunicorn's handle_error logs each error)."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def gunicorns_answer(exc: BaseException) -> tuple[int, str, str]:
    """The status, reason and message of gunicorn's own answer to ``exc``."""
    worker = Worker.__new__(Worker)
    worker.log = _Quiet()  # type: ignore[assignment]
    worker.cfg = Config()
    server, client = socket.socketpair()
    with server, client:
        try:
            raise exc
        except BaseException as raised:
            Worker.handle_error(worker, None, server, ("127.0.0.1", 1), raised)
        server.close()
        data = b""
        while chunk := client.recv(65536):
            data += chunk
    head, _, body = data.decode("latin-1").partition("\r\n\r\n")
    _, status, reason = head.splitlines()[0].split(" ", 2)
    message = body.split("</p></h1>", 1)[1].split("</body>", 1)[0].strip()
    return int(status), reason, html.unescape(message)


@pytest.mark.parametrize("exc", ERRORS, ids=lambda e: type(e).__name__)
def test_each_of_gunicorns_errors_keeps_its_status_and_message(exc: BaseException) -> None:
    status, reason, message = gunicorns_answer(exc)
    found = client_error(exc)
    if found is None:
        assert status == 500 and message == "", (status, message)
        return
    assert found[0] == status and found[2] == message, (found, status, message)
    # gunicorn's reason, but for its 501 and 500, which it calls "Bad Request"
    assert found[1] == (reason if reason != "Bad Request" or status == 400 else HTTPStatus(status).phrase)
