"""The web table at ``/``: a page (plain ES modules and CSS, no build step) that plays,
watches and replays games through the public HTTP API only, as any other frontend would.

The blueprint serves ``static/index.html`` at ``/``, the rules at ``/rules`` and the assets
under ``/web/`` (gzipped for a client that accepts it, with an ``ETag``: :mod:`.assets`), with a
Content-Security-Policy that allows scripts, styles and connections to this origin only
(the page has no inline script or style); :func:`docs_headers` gives the API reference at
``/docs/``, on the same origin, a policy of its own. docs/web.md describes the page for frontend authors.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from flask import Blueprint, Response

from mayi_service.web.assets import send

STATIC = Path(__file__).resolve().parent / "static"

#: Everything from this origin only; no inline script or style, no frames, no plugins.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

#: The API reference at ``/docs/`` (Swagger UI, served from this origin): its scripts and
#: styles from this origin, its one inline script by the nonce of its page (:func:`docs_headers`);
#: it reads ``/openapi.json`` and tries requests on this origin only. Swagger UI applies
#: inline styles (so styles, not scripts, may be inline) and shows icons as ``data:`` images.
DOCS_CSP = (
    "default-src 'none'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

#: What every page of the service carries besides its policy: no framing (the policy's
#: ``frame-ancestors``, and ``X-Frame-Options`` for browsers before it), no sniffing of
#: types, no referrer (a page's address may name a game).
PAGE_HEADERS = {"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}

#: Every page and asset: a browser keeps its copy and revalidates it on each use (its ``ETag``:
#: a ``304`` without a body while it is current), so a change is seen at the next load.
CACHE_CONTROL = "no-cache"

blp = Blueprint("web", __name__)


@blp.get("/")
def index() -> Response:
    """The page (lobby, table, replay: the fragment after ``#`` says which)."""
    return send(STATIC, "index.html", CACHE_CONTROL)


@blp.get("/rules")
def rules() -> Response:
    """The rules: docs/rules.md rendered (``static/rules.html``, see :mod:`mayi_service.web.rules`)."""
    return send(STATIC, "rules.html", CACHE_CONTROL)


@blp.get("/web/<path:name>")
def asset(name: str) -> Response:
    """A file of ``static/`` (its modules, styles), gzipped for a client that accepts it."""
    return send(STATIC, name, CACHE_CONTROL)


@blp.after_request
def _headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers.update(PAGE_HEADERS)
    return response


def docs_headers(response: Response) -> Response:
    """The after-request function of ``/docs/`` (the Swagger UI blueprint): :data:`DOCS_CSP`
    and :data:`PAGE_HEADERS` on each of its answers; its page's inline script (its
    configuration) gets a nonce of its own, new on each answer."""
    nonce = secrets.token_urlsafe(18)
    if response.mimetype == "text/html" and not response.direct_passthrough:
        page = response.get_data()
        response.set_data(page.replace(b"<script>", f'<script nonce="{nonce}">'.encode()))
    response.headers["Content-Security-Policy"] = DOCS_CSP.format(nonce=nonce)
    response.headers.update(PAGE_HEADERS)
    return response


__all__ = ["CSP", "DOCS_CSP", "PAGE_HEADERS", "blp", "docs_headers"]
