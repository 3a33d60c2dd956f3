"""Receiving decisions by webhook, signed by the Standard Webhooks specification.

A delivery is an HTTP POST whose body is one decision as JSON (the form of one entry of
``GET /v1/bots/me/decisions``: ``game_id``, ``seat``, ``version``, ``deadline``, ``view``),
with the headers ``webhook-id``, ``webhook-timestamp`` (Unix seconds) and
``webhook-signature``: space-separated ``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``
signatures, one per secret in use (two during a secret rotation). Secrets are
``whsec_`` + base64 of the key. :func:`verify` checks them with the standard library's
:mod:`hmac` (any Standard Webhooks library, such as the ``standardwebhooks`` packages,
checks them the same way).

:class:`WebhookReceiver` is a WSGI app: it refuses (401) a forged, tampered, stale or
replayed delivery (a ``webhook-id`` it has seen), answers 204 at once, and plays the
decision through the API in the background; :func:`serve_webhooks` runs it with one call.
A decision the bot waited on (:data:`~mayi_sdk.bot.WAIT`) or left to the clock is not
asked again: another delivery with the same ``key`` (the service sends one a key, but a
receiver may also see it through a retry) is let pass; a delivery under a new key (the
seat's legal moves changed) is asked. Every move is sent under the key of the decision it
answers (the delivery's, then the key each move's answer carries), as
:func:`~mayi_sdk.run_polling` sends them, and each decision is answered once: the
delivery of a decision that came in the answer to the seat's previous move (a discard
after the draw), and which that thread answers already, is let pass.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from .bot import Bot
from .client import Client
from .models import Decision
from .runners import RunStats, play_decision

log = logging.getLogger("mayi_sdk.webhooks")

#: How old (or how far in the future) a delivery's timestamp may be, in seconds.
DEFAULT_TOLERANCE = 300
#: The largest delivery body read, in bytes.
MAX_BODY = 1 << 20

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class SignatureError(ValueError):
    """A delivery that must be refused; the message says why (no detail of the secret)."""


def _key(secret: str) -> bytes:
    try:
        return base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except binascii.Error as exc:
        raise ValueError("secret: give the whsec_... secret the service gave the bot") from exc


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The signature ``v1,<base64>`` of one delivery (what the service sends)."""
    mac = hmac.new(_key(secret), f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def verify(
    secrets: str | Iterable[str],
    headers: Mapping[str, str],
    body: bytes,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> str:
    """Check a delivery; return its ``webhook-id``. Raises :class:`SignatureError` saying
    what is wrong: a missing header, a timestamp outside ``tolerance``, no valid signature."""
    lowered = {k.lower(): v for k, v in headers.items()}
    msg_id = lowered.get("webhook-id", "")
    stamp = lowered.get("webhook-timestamp", "")
    signatures = lowered.get("webhook-signature", "")
    if not msg_id or not stamp or not signatures:
        raise SignatureError("missing webhook-id, webhook-timestamp or webhook-signature")
    if not stamp.isascii() or not stamp.isdigit():
        raise SignatureError("webhook-timestamp is not Unix seconds")
    now = time.time() if now is None else now
    if abs(now - int(stamp)) > tolerance:
        raise SignatureError(f"webhook-timestamp is more than {tolerance:g} s from now (stale or replayed)")
    keys = [secrets] if isinstance(secrets, str) else list(secrets)
    expected = [sign(s, msg_id, int(stamp), body).split(",", 1)[1] for s in keys]
    for item in signatures.split():
        version, _, value = item.partition(",")
        if version == "v1" and any(hmac.compare_digest(value, e) for e in expected):
            return msg_id
    raise SignatureError("no valid v1 signature (a wrong secret, or a tampered body)")


class WebhookReceiver:
    """A WSGI app that plays ``bot`` on each verified delivery, acting through ``client``
    (the bot's token). ``secret``: the webhook secret (several during a rotation)."""

    def __init__(
        self,
        bot: Bot,
        client: Client,
        secret: str | Iterable[str],
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        remember: int = 10000,
    ) -> None:
        self.bot = bot
        self.client = client
        self.secrets = [secret] if isinstance(secret, str) else list(secret)
        for s in self.secrets:
            _key(s)
        self.tolerance = tolerance
        self.remember = remember
        self.seen: OrderedDict[str, float] = OrderedDict()
        self.lock = threading.Lock()
        #: What the receiver did (as :class:`~mayi_sdk.runners.RunStats` counts it; no polls).
        self.stats = RunStats()
        self._limited = client.rate_limited  # the client's 429s waited out before the receiver
        #: Decisions let pass (waited on, or left to the clock): their keys, and the
        #: (game, seat, version) of a move's answer left so (it has no key).
        self._passed: OrderedDict[object, None] = OrderedDict()
        #: Keys of the decisions a thread of this receiver has taken to answer: a delivery's,
        #: or one that came in the answer to the seat's previous move (its own delivery,
        #: which the service sends too, then finds it taken).
        self._taken: OrderedDict[str, None] = OrderedDict()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
        if environ.get("REQUEST_METHOD") != "POST":
            return _answer(start_response, "405 Method Not Allowed", "POST a webhook delivery here")
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            return _answer(start_response, "413 Payload Too Large", f"at most {MAX_BODY} bytes")
        body = environ["wsgi.input"].read(length)
        headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
        try:
            msg_id = verify(self.secrets, headers, body, tolerance=self.tolerance)
            self._first_time(msg_id)
            decision = Decision.from_json(json.loads(body))
        except SignatureError as exc:
            log.warning("refused a webhook delivery: %s", exc)
            return _answer(start_response, "401 Unauthorized", str(exc))
        except (ValueError, KeyError, TypeError) as exc:
            return _answer(start_response, "400 Bad Request", f"not a decision: {exc}")
        thread = threading.Thread(target=self._play, args=(decision,), name=f"webhook {msg_id}", daemon=True)
        thread.start()
        return _answer(start_response, "204 No Content", "")

    def _first_time(self, msg_id: str) -> None:
        with self.lock:
            if msg_id in self.seen:
                raise SignatureError(f"webhook-id {msg_id!r} was delivered already (a replay)")
            self.seen[msg_id] = time.time()
            while len(self.seen) > self.remember:
                self.seen.popitem(last=False)

    def _take(self, key: str) -> bool:
        """Whether this thread is the first to take the decision with ``key`` (to answer it)."""
        with self.lock:
            if key in self._taken:
                return False
            self._taken[key] = None
            while len(self._taken) > self.remember:
                self._taken.popitem(last=False)
            return True

    def _play(self, decision: Decision) -> None:
        point = (decision.game_id, decision.seat, decision.version)
        with self.lock:
            if (decision.key and decision.key in self._passed) or point in self._passed:
                return  # asked already: the bot waits until its choices change
        if decision.key and not self._take(decision.key):
            return  # answered already, from the answer to the seat's previous move
        try:
            undecided = play_decision(
                self.bot, self.client, decision.game_id, decision.view, self.stats, decision.key or None, self._take
            )
        except Exception:  # pragma: no cover - play_decision handles the API's errors
            log.exception("game %s: playing the decision failed", decision.game_id)
            return
        finally:
            self.stats.rate_limited = self.client.rate_limited - self._limited
        if undecided is None:
            return
        with self.lock:
            if undecided is decision.view and decision.key:
                self._passed[decision.key] = None
            elif undecided.seat is not None:
                self._passed[(decision.game_id, undecided.seat, undecided.version)] = None
            while len(self._passed) > self.remember:
                self._passed.popitem(last=False)


def _answer(start_response: StartResponse, status: str, text: str) -> list[bytes]:
    body = text.encode()
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
    return [body] if body else []


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug(format, *args)


def make_webhook_server(
    bot: Bot, client: Client, secret: str | Iterable[str], host: str = "127.0.0.1", port: int = 8080
) -> WSGIServer:
    """A server for :class:`WebhookReceiver` (``serve_forever()`` it; ``server_port`` is its port)."""
    return make_server(host, port, WebhookReceiver(bot, client, secret), handler_class=_QuietHandler)


def serve_webhooks(
    bot: Bot, client: Client, secret: str | Iterable[str], host: str = "127.0.0.1", port: int = 8080
) -> None:
    """Receive deliveries at ``http://host:port/`` until interrupted (the standard library's
    WSGI server; behind a TLS proxy for the internet, or mount :class:`WebhookReceiver` in any
    WSGI server)."""
    with make_webhook_server(bot, client, secret, host, port) as server:
        server.serve_forever()
