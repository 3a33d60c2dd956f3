"""The ``mayi`` command line (``mayi_service.cli:main``): one module per group of commands."""

from mayi_service.cli import generated, ladder, play, serving
from mayi_service.cli.base import main

__all__ = ["generated", "ladder", "main", "play", "serving"]
