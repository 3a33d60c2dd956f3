"""A variant registered with the engine for one test, and the app made after it, on a real socket."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from servers import LiveServer

from mayi_engine import VARIANTS, Rules, register_variant
from mayi_service.api.app import create_app
from mayi_service.config import Settings


@contextmanager
def serving_variant(rules: Rules, settings: Settings) -> Iterator[str]:
    """Register ``rules``, serve an app made after it (its URL is yielded), then stop the
    server and take the variant out of the registry again."""
    register_variant(rules)
    server = None
    try:
        server = LiveServer(create_app(settings))
        yield server.url
    finally:
        if server is not None:
            server.stop()
        VARIANTS.pop(rules.name, None)
