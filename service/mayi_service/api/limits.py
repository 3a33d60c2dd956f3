"""The rate limits (flask-limiter): one per token and one per client address over all routes,
their own for creating tables and registering bots, announced on each response in the
``RateLimit-Policy`` and ``RateLimit`` header fields."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
from flask import Flask, Response, request
from flask_limiter import ApplicationLimit, Limiter
from limits import RateLimitItem, parse_many
from redis.exceptions import RedisClusterException

from mayi_service.api import health, problems
from mayi_service.api.common import DECISION, bearer_token
from mayi_service.config import Settings
from mayi_service.play.games import token_hash
from mayi_service.storage.limiter import limiter_options, limiter_uri
from mayi_service.web import blp as _web_blp


def _address_key() -> str:
    return "a:" + (request.remote_addr or "?")


def _limit_key() -> str:
    try:
        token = bearer_token()
    except Exception:
        token = None
    return "t:" + token_hash(token)[:32] if token else "a:" + (request.remote_addr or "?")


#: Reads of one game: its view, its events, its event stream. Following a game at full
#: speed takes as many as the game makes commits: the ``address`` limit counts them, the
#: ``token`` limit does not (it would throttle a person following a fast table).
GAME_READS = frozenset({"games.Game", "games.Events", "games.EventStream"})


def _a_game_read() -> bool:
    return request.endpoint in GAME_READS


#: The rate limits: each one's name (in the header fields), its setting, and what it counts.
RATE_LIMITS: tuple[tuple[str, str, str], ...] = (
    ("token", "rate_limit_token", "requests of one token that answer no decision and read no game"),
    ("address", "rate_limit_address", "requests of one client address that answer no decision"),
    ("create", "rate_limit_create", "tables created per client address"),
    ("bots", "rate_limit_bots", "bots registered per client address"),
)


def _counted(response: Response) -> bool:
    """Whether the request counts against the ``token`` and ``address`` limits: every one
    except a request that answers or brings the caller's decision (a move the game accepted,
    a decisions poll that lists one, a seat's view with legal moves: see
    :func:`~.api.common.answers_decision`). Such requests are as many as the game's own
    pace allows: one decision of a seat at a time. Nor is an answer 5xx (the server's
    failure, not the client's request: and with the store down, counting it would fail too)."""
    return DECISION not in request.environ and response.status_code < 500


def rate_limits(app: Flask, settings: Settings, url: str) -> Limiter:
    """The rate limits (flask-limiter), each announced on every response it applies to by
    the ``RateLimit-Policy`` and ``RateLimit`` header fields (:func:`_announce`).

    Over all routes together, one limit per token (anonymous callers: per address) and one
    per client address whatever the token; neither counts the requests of play itself
    (:func:`_counted`): each is tested before the request and counted after its answer
    (flask-limiter's ``deduct_when``). Reads of a game (:data:`GAME_READS`) count only
    against the address's. Creating a table costs more than any other request
    (it may be played out by the worker), and so does registering a bot: each has its own,
    much lower limit per address, which counts every attempt."""
    limits = {name: getattr(settings, field) for name, field, _ in RATE_LIMITS}
    message = {name: f"{getattr(settings, field)} ({what}, MAYI_{field.upper()})" for name, field, what in RATE_LIMITS}
    policies = policy_names(settings)
    # After-request functions run last-registered first: this one, registered before the
    # limiter's, runs after it (which makes the deductions of the request) and so
    # announces what remains once the request is counted.
    app.after_request(_announce(policies))

    limiter = Limiter(
        _limit_key,
        app=app,
        storage_uri=limiter_uri(url),
        storage_options=limiter_options(url),
        strategy=settings.rate_limit_strategy,
        enabled=settings.rate_limits_enabled,
        application_limits=[
            ApplicationLimit(
                limits["token"],
                key_function=_limit_key,
                scope="token",
                exempt_when=_a_game_read,
                deduct_when=_counted,
                error_message=message["token"],
            ),
            ApplicationLimit(
                limits["address"],
                key_function=_address_key,
                scope="address",
                deduct_when=_counted,
                error_message=message["address"],
            ),
        ],
        # limits tags each counter's keys itself (``{<key>}``): on a cluster they spread over the nodes.
        key_prefix=f"{settings.key_prefix}:ratelimit",
    )
    limiter.exempt(health.blp)
    limiter.exempt(_web_blp)  # the page and its assets: no API work
    for endpoint, name in (("games.Games", "create"), ("bots.BotAccounts", "bots")):
        decorate = limiter.limit(
            limits[name], key_func=_address_key, methods=["POST"], scope=name, error_message=message[name]
        )
        app.view_functions[endpoint] = decorate(app.view_functions[endpoint])

    @app.before_request
    def tested() -> None:
        # The application limits this request was tested against: a route's own limits,
        # tested as its view is called, then take their place in ``current_limits``.
        request.environ[TESTED] = limiter.current_limits

    return limiter


def policy_names(settings: Settings) -> dict[tuple[str, RateLimitItem], str]:
    """The name of each rate limit's window, as the header fields name it: the limit's
    (``token``, ``address``, ``create``, ``bots``), with its window when it has several
    (``create-per-minute``, ``create-per-day``)."""
    names: dict[tuple[str, RateLimitItem], str] = {}
    for name, field, _ in RATE_LIMITS:
        items = parse_many(getattr(settings, field))
        for item in items:
            names[name, item] = name if len(items) == 1 else f"{name}-{_per(item)}"
    return names


def _per(item: RateLimitItem) -> str:
    """``per-minute``, ``per-5-minutes``: the window of a limit item, in a policy's name."""
    unit = item.GRANULARITY.name
    return f"per-{unit}" if item.multiples == 1 else f"per-{item.multiples}-{unit}s"


#: Where the limits a request was tested against before its view are noted (its WSGI environ).
TESTED = "mayi.limits"


def _announce(policies: dict[tuple[str, RateLimitItem], str]) -> Callable[[Response], Response]:
    """The after-request function that announces the rate limits of a response
    (draft-ietf-httpapi-ratelimit-headers-10): ``RateLimit-Policy`` lists every limit the
    request was tested against (``"token";q=600;w=60``), ``RateLimit`` the state of the one
    with the smallest quota (the one exceeded, on a 429): ``"token";r=42;t=17``, the
    requests it has left and the seconds until its window lets more in. The policy list is made
    once per set of limits; the state costs one read of the limit's counters."""
    made: dict[tuple[str, ...], str] = {}

    def name_of(limit: Any) -> str:
        scope = str(limit.request_args[-1]).rsplit(":", 1)[-1]  # route limits: "<endpoint>:<scope>"
        return policies.get((scope, limit.limit)) or scope

    def announce(response: Response) -> Response:
        limiter = problems.limiter()
        if limiter is None:
            return response
        routes = limiter.current_limits
        tested = request.environ.get(TESTED, routes)  # (none noted: refused before the view, by a 429)
        if routes is not tested and routes and routes[0] not in tested:
            tested = [*tested, *routes]  # a route's own limits (table creation, bot registration)
        if not tested:
            return response
        names = tuple(name_of(limit) for limit in tested)
        policy = made.get(names)
        if policy is None:
            policy = ", ".join(
                f'"{name}";q={limit.limit.amount};w={limit.limit.get_expiry()}'
                for name, limit in zip(names, tested, strict=True)
            )
            if len(made) < 64:
                made[names] = policy
        # The limit exceeded (a 429); otherwise the one with the smallest quota.
        first = limiter.current_limit
        if first is None or not first.breached:
            first = min(tested, key=lambda limit: limit.limit.amount)
        response.headers["RateLimit-Policy"] = policy
        if response.status_code >= 500:
            return response  # the store may be down: its counters are not read
        left = response.headers.get("Retry-After") if first.breached else None
        try:
            seconds = int(left) if left is not None and left.isdigit() else problems.reset_seconds(first)
            remaining = first.remaining
        except (redis.RedisError, RedisClusterException):  # the store failed since the request's test
            return response
        response.headers["RateLimit"] = f'"{name_of(first)}";r={remaining};t={seconds}'
        return response

    return announce
