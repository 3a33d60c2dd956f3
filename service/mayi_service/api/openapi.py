"""The committed OpenAPI document, generated from the app."""

from __future__ import annotations

import json

from mayi_service.api.app import create_app, openapi_document
from mayi_service.config import Settings


def render() -> str:
    """The OpenAPI document as committed in ``openapi/openapi.json``."""
    # The document does not depend on Redis; point at an address that is never used.
    app = create_app(Settings(redis_url="redis://127.0.0.1:1/0", rate_limits_enabled=False))
    return json.dumps(openapi_document(app), indent=2, sort_keys=True) + "\n"
