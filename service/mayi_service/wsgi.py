"""WSGI entry point for gunicorn and other servers: ``mayi_service.wsgi:app``.

Reads its settings from the environment (``REDIS_URL`` and ``MAYI_*``).
"""

from mayi_service.api.app import create_app

app = create_app()
