"""The Flask application: ``create_app()``."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, request
from flask_cors import CORS

from mayi_service.api import actions, events, games, health, problems
from mayi_service.api import bots as bots_api
from mayi_service.api import catalog as catalog_api
from mayi_service.api import ladder as ladder_api
from mayi_service.api.limits import rate_limits
from mayi_service.api.schemas.document import (
    OperationSecurity,
    nullable_ref2properties,
    refine_components,
    register_unions,
    union2properties,
)
from mayi_service.api.spec import API_VERSION, DESCRIPTION, HEADERS, PARAMETERS, ProblemApi
from mayi_service.config import CORS_EXPOSED_HEADERS, Settings
from mayi_service.service import Service
from mayi_service.web import blp as _web_blp
from mayi_service.web import docs_headers as web_docs_headers

#: The modules whose views join the games blueprint as they are imported.
GAME_VIEWS = (actions, events)


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
    app.extensions["mayi"] = service  # what the views use (api.context.services)

    api = ProblemApi(app)
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

    rate_limits(app, settings, service.url)
    _request_hooks(app, settings)
    _docs(app)
    return app


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
