"""The request and response schemas, by domain: a module each (``fields``, ``games``,
``views``, ``moves``, ``events``, ``catalog``, ``problem``, ``document``, ``bots``,
``ladder``), which the views import (``from mayi_service.api.schemas import moves as s``).
They check shape only; the engine checks rules.

Request fields are strict (:mod:`.fields`); response schemas document exactly what the
service sends.
"""
