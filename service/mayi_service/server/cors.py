"""The CORS headers of the app's answers, for the answers the gunicorn worker writes itself
(its refusals and gunicorn's own errors), so that a browser's script can read them."""

from __future__ import annotations

from typing import Any


class Cors:
    """The CORS headers of the app's answers (flask-cors, configured as ``app._request_hooks``
    configures it, on a Flask app of its own), for the answers the worker writes itself."""

    def __init__(self, origins: tuple[str, ...]) -> None:
        from flask import Flask
        from flask_cors import CORS

        from mayi_service.config import CORS_EXPOSED_HEADERS

        self.app = Flask("mayi-worker-cors")
        CORS(self.app, origins=list(origins), expose_headers=list(CORS_EXPOSED_HEADERS))
        #: The headers of an answer to no request read, when every origin is allowed.
        self.unread: dict[str, str] = {}
        if "*" in origins:
            self.unread = {**self._for("null"), "Access-Control-Allow-Origin": "*"}
            self.unread.pop("Vary", None)

    def headers(self, req: Any) -> dict[str, str]:
        """The CORS headers of an answer to ``req`` (gunicorn's request): like the app's,
        only for a request that carries an ``Origin``. ``None``: no request was read (its
        head was too large, or a connection refused sent none in time): then
        ``Access-Control-Allow-Origin: *`` if every origin is allowed, else none."""
        if req is None:
            return self.unread
        origin = next((value for name, value in req.headers if name == "ORIGIN"), None)
        return {} if origin is None else self._for(origin)

    def _for(self, origin: str) -> dict[str, str]:
        with self.app.test_request_context("/", headers={"Origin": origin}):
            answer = self.app.process_response(self.app.response_class())
        return {
            name: value
            for name, value in answer.headers.items()
            if name.startswith("Access-Control-") or name == "Vary"
        }
