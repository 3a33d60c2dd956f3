"""The Flask application: ``create_app()``."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable
from typing import Any

import redis
from flask import Flask, Response, request
from flask_cors import CORS
from flask_limiter import ApplicationLimit, Limiter
from flask_smorest import Api
from flask_smorest.utils import prepare_response
from limits import RateLimitItem, parse_many
from redis.exceptions import RedisClusterException

from mayi_service.api import bots as bots_api
from mayi_service.api import catalog as catalog_api
from mayi_service.api import games, health, problems
from mayi_service.api import ladder as ladder_api
from mayi_service.api.common import DECISION, bearer_token
from mayi_service.api.schemas import (
    OperationSecurity,
    ProblemSchema,
    nullable_ref2properties,
    refine_components,
    register_unions,
    union2properties,
)
from mayi_service.config import CORS_EXPOSED_HEADERS, Settings
from mayi_service.play.tables import token_hash
from mayi_service.service import Service
from mayi_service.storage.connections import COMMAND_TIMEOUT, MAX_CONNECTIONS, is_cluster_url
from mayi_service.web import blp as _web_blp
from mayi_service.web import docs_headers as web_docs_headers

API_VERSION = "1.0.0"

DESCRIPTION = """\
The HTTP API of the May I game service: tables, turns, claims, melds and
events for the contract-rummy games **May I** and **Shanghai**.

* Card codes: rank then suit (`TH`, `AS`), `JK` for a joker; input is
  case-insensitive and `10H` is read as `TH`.
* Auth: `Authorization: Bearer <token>`; a seat token acts for one seat. No
  token: the public (spectator) view.
* Errors are `application/problem+json` with a stable `code`; a rule
  violation says which rule, in words a player understands.
* Rate limits count what play does not need: a move the game accepts, a
  decisions poll that lists a decision and a seat's view with legal moves are
  not counted. Each response names its limits in `RateLimit-Policy` and the
  state of the first in `RateLimit` (draft-ietf-httpapi-ratelimit-headers-10);
  a 429 also has `Retry-After`.
* Actions accept `If-Match: <version>` (412 if the game moved on) or
  `If-Match: key:<decision key>` (a seat view's `key`; 412 if the seat's
  choices changed), and
  `Idempotency-Key` (a retry gets the first response again).
"""


#: Request headers (and the stream's ``after``), as components the operations refer to by name.
PARAMETERS: dict[str, dict[str, Any]] = {
    "IfMatch": {
        "name": "If-Match",
        "in": "header",
        "description": "Act only if the game is still at this version (a number, or the view's ETag); "
        "412 `version_conflict` if it has moved on. `*`: any version. `key:<key>` (a decision's `key` "
        "from `GET /v1/bots/me/decisions`, or a seat view's `key`): act only while the seat's decision has "
        "that key, whatever other seats answered to the upcard meanwhile (412 once its choices have changed)",
        "schema": {
            "type": "string",
            "pattern": '^(\\*|(W/)?"*([0-9]{1,15}|[0-9]{1,15}-[^-]*|.*-[0-9]{1,15}-[^-]*|key:[A-Za-z0-9_=-]{1,64})"*)$',
            "example": "12",
        },
    },
    "IdempotencyKey": {
        "name": "Idempotency-Key",
        "in": "header",
        "description": "1 to 255 characters: a retry with the same key and body gets the first answer, "
        "and the action takes effect once; the same key with another body is 422 `idempotency_key_reused`",
        "schema": {"type": "string", "minLength": 1, "maxLength": 255},
    },
    "IfNoneMatch": {
        "name": "If-None-Match",
        "in": "header",
        "description": "The ETag of the view you hold: 304 with no body if it is still current",
        "schema": {"type": "string"},
    },
    "LastEventID": {
        "name": "Last-Event-ID",
        "in": "header",
        "description": "Resume after this event number (an EventSource sends it when it reconnects); "
        "wins over `after`; empty: as if not sent",
        "schema": {"type": "string", "pattern": "^[0-9]{0,15}$"},
    },
    "After": {
        "name": "after",
        "in": "query",
        "description": "Resume after this event number (default 0: from the first event)",
        "schema": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999_999, "default": 0},
    },
}

#: Response headers, as components.
HEADERS: dict[str, dict[str, Any]] = {
    "ETag": {
        "description": 'The view\'s tag: `"<game>-<version>-<seat or p>"`; send it as If-None-Match or If-Match',
        "schema": {"type": "string"},
    },
    "RetryAfter": {"description": "Seconds to wait before trying again", "schema": {"type": "integer", "minimum": 1}},
    # draft-ietf-httpapi-ratelimit-headers-10 (Structured Fields lists of items).
    "RateLimitPolicy": {
        "description": "Every rate limit the request was counted against: its name, `q` the requests it "
        'allows and `w` its window in seconds, e.g. `"token";q=600;w=60, "address";q=3000;w=60` '
        "(draft-ietf-httpapi-ratelimit-headers-10; sent on every response to a rate-limited request)",
        "schema": {"type": "string"},
    },
    "RateLimit": {
        "description": "The state of the limit that applies first (the one exceeded, on a 429): `r` the "
        'requests it has left, `t` the seconds until its window lets more in, e.g. `"token";r=42;t=17`',
        "schema": {"type": "string"},
    },
}


class _Api(Api):  # type: ignore[misc]
    """flask-smorest's ``Api``, with the default error response documented as the
    service sends every error: ``application/problem+json`` (not flask-smorest's own
    error body, which this service never sends)."""

    def _register_responses(self) -> None:
        response = {"description": "Any other error, as problem details", "schema": ProblemSchema}
        prepare_response(response, self.spec, problems.CONTENT_TYPE)
        self.spec.components.response(self.DEFAULT_ERROR_RESPONSE_NAME, response, lazy=True)

    def _register_pagination_header(self) -> None:
        """None: no operation pages with flask-smorest's header (its schema would be an unused component)."""


def _address_key() -> str:
    return "a:" + (request.remote_addr or "?")


def _limit_key() -> str:
    try:
        token = bearer_token()
    except Exception:
        token = None
    return "t:" + token_hash(token)[:32] if token else "a:" + (request.remote_addr or "?")


class _App(Flask):
    """Flask, asking once per function (not on every request, for every hook and view)
    whether it is a coroutine function."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._is_async: dict[Any, bool] = {}

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        target = getattr(func, "__func__", func)  # a view class's method is bound anew each request
        found = self._is_async.get(target)
        if found is None:
            found = self._is_async[target] = inspect.iscoroutinefunction(target)
        return self.async_to_sync(func) if found else func


def create_app(settings: Settings | None = None, **overrides: Any) -> Flask:
    """Build the API app. Settings come from the environment unless given."""
    settings = settings or Settings.from_env(**overrides)
    service = Service(settings)

    app = _App("mayi_service")
    app.config.update(
        API_TITLE="May I game service",
        API_VERSION=API_VERSION,
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        API_SPEC_OPTIONS={
            "info": {
                "description": DESCRIPTION,
                "license": {"name": "MIT", "url": "https://opensource.org/licenses/MIT"},
            },
            "components": {
                "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "A seat token"}},
                "parameters": PARAMETERS,
                "headers": HEADERS,
            },
            "servers": [{"url": "/", "description": "The server that serves this document"}],
        },
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        JSON_SORT_KEYS=False,
    )
    if settings.trusted_proxies:
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies)  # type: ignore[method-assign]
    app.extensions["mayi"] = service  # what the views use (api.common.services)

    api = _Api(app)
    api.ma_plugin.converter.add_attribute_function(union2properties)
    api.ma_plugin.converter.add_attribute_function(nullable_ref2properties)
    register_unions(api.spec)  # before the blueprints, whose schemas refer to them
    api.spec.plugins.append(OperationSecurity())
    api.register_blueprint(health.blp)
    api.register_blueprint(games.blp)
    api.register_blueprint(bots_api.blp)  # bot platform
    api.register_blueprint(ladder_api.blp)  # the bot ladder
    api.register_blueprint(catalog_api.blp)  # variants and house bots
    refine_components(api.spec)
    problems.register(app)

    _rate_limits(app, settings, service.url)
    _request_hooks(app, settings)
    _docs(app)
    return app


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


def _rate_limits(app: Flask, settings: Settings, url: str) -> Limiter:
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
        storage_uri=_limiter_uri(url),
        storage_options=_limiter_options(url),
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


def _request_hooks(app: Flask, settings: Settings) -> None:
    """The metrics and the CORS headers, in one after-request hook; the request's start is
    noted as it enters the app (in its WSGI environ), with no before-request hook.

    CORS headers (flask-cors) are only worked out for requests that carry an ``Origin``:
    a browser always sends one on a cross-origin request, and the work costs about a tenth
    of a millisecond that bots and servers would pay for nothing."""
    CORS(app, origins=list(settings.cors_origins), expose_headers=list(CORS_EXPOSED_HEADERS))
    cors_headers = app.after_request_funcs[None].pop()  # the after-request function CORS() just added
    metrics = health.after_request

    def after_request(response: Response) -> Response:
        response = metrics(response)
        if "HTTP_ORIGIN" in request.environ:
            response = cors_headers(response)
        return response

    app.after_request(after_request)
    wsgi_app = app.wsgi_app
    started, clock = health.STARTED, time.perf_counter

    def timed(environ: dict[str, Any], start_response: Any) -> Any:
        environ[started] = clock()
        return wsgi_app(environ, start_response)

    app.wsgi_app = timed  # type: ignore[method-assign]


def _limiter_uri(url: str) -> str:
    """The limits storage URI of the Redis at ``url``: on a cluster, limits' own cluster
    storage (``redis+cluster://``, TLS through :func:`_limiter_options`)."""
    if url.startswith("unix://"):
        return "redis+unix://" + url[len("unix://") :]
    if is_cluster_url(url):
        return "redis+cluster://" + url.split("://", 1)[1]
    return url


#: Connections the rate limits' storage may hold at once, per process: each request holds
#: one for a moment, in turn, for each of its limit calls, and a gevent worker serves at
#: most ``MAYI_WORKER_CONNECTIONS`` requests at once (4,000 by default).
LIMITER_CONNECTIONS = MAX_CONNECTIONS


def _limiter_options(url: str) -> dict[str, Any]:
    """Options of the limits storage: on a single Redis, a pool of its own as large as the
    service's (redis-py's default pool refuses a 101st connection at once, and a gevent
    worker may have more requests than that in their limit calls together: each was a
    500); on a cluster,
    the service's own timeouts (redis-py's cluster client has none by default) and TLS for
    ``rediss+cluster://``."""
    if not is_cluster_url(url):
        if url.split(":", 1)[0].lower() not in ("redis", "rediss", "unix"):
            return {}  # (Sentinels: limits' own client)
        pool = redis.ConnectionPool.from_url(
            url,
            max_connections=LIMITER_CONNECTIONS,
            socket_timeout=COMMAND_TIMEOUT,
            socket_connect_timeout=5,
        )
        return {"connection_pool": pool}
    options: dict[str, Any] = {"socket_timeout": COMMAND_TIMEOUT, "socket_connect_timeout": 5}
    if url.lower().startswith("rediss+"):
        options["ssl"] = True
    return options


def _docs(app: Flask) -> None:
    """``/docs``: Swagger UI with its assets served from this package (no CDN), and without
    its online validator (``validatorUrl: null``), so the page calls no outside site."""
    from flask_swagger_ui import get_swaggerui_blueprint

    config = {"app_name": "May I game service", "validatorUrl": None}
    ui = get_swaggerui_blueprint("/docs", "/openapi.json", config=config)
    ui.after_request(web_docs_headers)  # its Content-Security-Policy, no framing, nosniff
    app.register_blueprint(ui)

    app.register_blueprint(_web_blp)  # the web table at / (links to /docs/)


def openapi_document(app: Flask) -> dict[str, Any]:
    """The OpenAPI document of ``app`` as data (what ``mayi openapi`` writes)."""
    with app.test_request_context():
        spec: dict[str, Any] = app.extensions["flask-smorest"]["apis"][""]["ext_obj"].spec.to_dict()
    return json.loads(json.dumps(spec))
