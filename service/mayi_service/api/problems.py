"""Errors as ``application/problem+json`` (RFC 9457): one handler for them all.

Every error body has ``type, title, status, detail, code``; rule violations
keep the engine's message, which names the rule and the cards.
"""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING, Any

import redis
from flask import Flask, Response, current_app, json, request
from redis.exceptions import AskError, ClusterError, RedisClusterException, TryAgainError
from werkzeug.exceptions import HTTPException

from mayi_engine.errors import MayIError
from mayi_service.api.schemas.fields import CARD_ERROR
from mayi_service.problem_types import CONTENT_TYPE, PROBLEM_TYPE, Problem, ServiceError, for_status, from_engine
from mayi_service.storage.repository import GameGone

if TYPE_CHECKING:
    from flask_limiter import Limiter

log = logging.getLogger(__name__)

#: The detail of a 503 ``unavailable``: the store failed, perhaps after the commit landed.
UNAVAILABLE_DETAIL = (
    "The game store is not reachable right now. An action answered with this error may have been "
    "applied: retry with the same Idempotency-Key (the retry gets the first answer, and the action "
    "takes effect once only), or read the game before acting again"
)


def problem(
    kind: Problem, detail: str, headers: dict[str, str] | None = None, status: int | None = None, **extra: Any
) -> Response:
    """The problem+json response of ``kind`` (answered with ``status`` if it has none of its own)."""
    status = kind.status or status or 500
    body = {
        "type": PROBLEM_TYPE + kind.code,
        "title": kind.title,
        "status": status,
        "detail": detail,
        "code": kind.code,
        **extra,
    }
    response = Response(json.dumps(body), status=status, mimetype=CONTENT_TYPE)
    for k, v in (headers or {}).items():
        response.headers[k] = v
    return response


def _validation_detail(messages: Any, path: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(messages, dict):
        for key, value in messages.items():
            if key in ("json", "query", "headers", "form", "files", "view_args") and not path:
                out += _validation_detail(value, "")
            elif isinstance(key, int):
                out += _validation_detail(value, f"{path}[{key}]")  # a list item: lay_offs[0].cards
            else:
                out += _validation_detail(value, f"{path}.{key}" if path else str(key))
    elif isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        out.append(f"{path or 'body'}: {' '.join(messages)}")
    elif isinstance(messages, list):
        for i, m in enumerate(messages):
            out += _validation_detail(m, f"{path}[{i}]")
    else:
        out.append(f"{path or 'body'}: {messages}")
    return out


def reset_seconds(limit: Any) -> int:
    """Seconds until the window of ``limit`` (flask-limiter's ``RequestLimit`` of this request)
    lets one more request in, whole seconds rounded up: its counter's ``reset`` time (limits'
    window statistics). A reset that falls on now with requests counted is a window that
    has just begun: its whole length."""
    reset, remaining = limit.window
    seconds = math.ceil(reset - time.time())
    if seconds <= 0 and remaining < limit.limit.amount:
        return int(limit.limit.get_expiry())
    return max(0, seconds)


def limiter() -> Limiter | None:
    """The app's rate limiter (flask-limiter's own registry of the app's limiters holds it)."""
    return next(iter(current_app.extensions.get("limiter", ())), None)


def _retry_after() -> int:
    """Seconds until the rate limit that was hit lets requests through again."""
    found = limiter()
    current = found.current_limit if found is not None else None
    if current is None:
        return 1
    return max(1, reset_seconds(current))


def register(app: Flask) -> None:
    """Install the one error handler (after flask-smorest's, so it wins)."""

    @app.errorhandler(ServiceError)
    def _service(exc: ServiceError) -> Response:
        return problem(exc.problem, exc.detail, exc.headers, **exc.extra)

    @app.errorhandler(MayIError)
    def _engine(exc: MayIError) -> Response:
        return _service(from_engine(exc))

    @app.errorhandler(GameGone)
    def _gone(exc: GameGone) -> Response:
        return problem(Problem.NOT_FOUND, str(exc))

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Response:
        status = exc.code or 500
        data = getattr(exc, "data", None) or {}
        headers = {}
        if status == 422 and "messages" in data:
            details = _validation_detail(data["messages"])
            # Card codes the schema refused keep the engine's code (and words) for them.
            cards = bool(details) and all(d.endswith(CARD_ERROR) for d in details)
            kind = Problem.BAD_CARD if cards else Problem.VALIDATION_ERROR
            return problem(kind, "; ".join(details) or "The request is not valid", errors=details)
        if status == 400 and "messages" in data:  # a body that is not JSON at all, say
            details = _validation_detail(data["messages"])
            return problem(Problem.BAD_REQUEST, "; ".join(details) or "The request is not valid", errors=details)
        if status == 429:
            wait = _retry_after()
            headers["Retry-After"] = str(wait)
            detail = f"Too many requests: the limit is {exc.description}. Try again in {wait} s (Retry-After)."
            return problem(Problem.RATE_LIMITED, detail, headers)
        if status == 405:
            headers["Allow"] = ", ".join(sorted(exc.valid_methods or [])) if hasattr(exc, "valid_methods") else ""
        detail = exc.description or for_status(status).title
        if status == 404 and request.path and not data:
            detail = f"No resource at {request.path}"
        if status == 413:
            limit = current_app.config.get("MAX_CONTENT_LENGTH")
            detail = "The request body is too large" + (f": at most {limit:,} bytes" if limit else "")
        return problem(for_status(status), detail, headers, status)

    @app.errorhandler(redis.ConnectionError)
    @app.errorhandler(redis.TimeoutError)
    # A Redis Cluster in trouble: a slot without a node (CLUSTERDOWN, or no node known to
    # serve it), a slot moving (TRYAGAIN, or redirections the client gave up following).
    @app.errorhandler(ClusterError)
    @app.errorhandler(TryAgainError)
    @app.errorhandler(AskError)
    @app.errorhandler(RedisClusterException)
    def _store_down(exc: Exception) -> Response:
        log.warning("Redis unavailable on %s %s: %s", request.method, request.path, exc)
        return problem(Problem.UNAVAILABLE, UNAVAILABLE_DETAIL, {"Retry-After": "2"})

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return problem(Problem.INTERNAL_ERROR, "Something went wrong on our side; it has been logged")
