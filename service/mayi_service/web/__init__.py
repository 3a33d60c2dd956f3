"""The web table at ``/``: a page (plain ES modules and CSS, no build step) that plays,
watches and replays games through the public HTTP API only, as any other frontend would.

The blueprint serves ``static/index.html`` at ``/``, the rules at ``/rules`` and the assets
under ``/web/``, with a
Content-Security-Policy that allows scripts, styles and connections to this origin only
(the page has no inline script or style). docs/web.md describes the page for frontend authors.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, send_from_directory

STATIC = Path(__file__).resolve().parent / "static"

#: Everything from this origin only; no inline script or style, no frames, no plugins.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

blp = Blueprint("web", __name__, static_folder=str(STATIC), static_url_path="/web")


@blp.get("/")
def index() -> Response:
    """The page (lobby, table, replay: the fragment after ``#`` says which)."""
    response = send_from_directory(STATIC, "index.html", max_age=0)
    response.headers["Cache-Control"] = "no-cache"
    return response


@blp.get("/rules")
def rules() -> Response:
    """The rules: docs/rules.md rendered (``static/rules.html``, see :mod:`mayi_service.web.rules`)."""
    response = send_from_directory(STATIC, "rules.html", max_age=0)
    response.headers["Cache-Control"] = "no-cache"
    return response


@blp.after_request
def _headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


__all__ = ["CSP", "blp"]
