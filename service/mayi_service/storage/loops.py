"""The background loops of a process (clock timer, sweeper, dispatcher, ladder ticker, RQ
scheduler watch), kept running through Redis outages."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from mayi_service.storage.connections import UNREACHABLE, Outage


def start_loop(
    what: str,
    step: Callable[[], float | None],
    every: float,
    stop: threading.Event,
    logger: logging.Logger,
    *,
    first: float | None = None,
    failed: str | None = None,
) -> threading.Thread:
    """A daemon thread that runs ``step`` every ``every`` seconds (or after the seconds it
    returns), the first time after ``first`` seconds (default ``every``), until ``stop`` is set.
    An unreachable Redis is logged once when it goes and once when it answers again
    (:class:`Outage`, naming the loop ``what``); any other error with its traceback, under
    ``failed`` (default ``what``); after either the loop waits ``every`` seconds, at least one."""

    def loop() -> None:
        wait, outage = every if first is None else first, Outage(what, logger)
        while not stop.wait(wait):
            try:
                found = step()
                outage.answered()
                wait = every if found is None else found
            except UNREACHABLE as exc:
                outage.failed(exc)
                wait = max(every, 1.0)
            except Exception:
                logger.exception(failed or what)
                wait = max(every, 1.0)

    thread = threading.Thread(target=loop, name="mayi-" + what.lower().replace(" ", "-"), daemon=True)
    thread.start()
    return thread
