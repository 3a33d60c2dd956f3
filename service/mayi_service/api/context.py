"""What a request reaches through its app: the :class:`~mayi_service.service.Service`."""

from __future__ import annotations

from flask import current_app

from mayi_service.service import Service


def services() -> Service:
    """The app's :class:`~mayi_service.service.Service` (what the views and fields use)."""
    found: Service = current_app.extensions["mayi"]
    return found
