"""The ladder workers' ticker: queues each variant's matchmaking every
``MAYI_LADDER_EVERY_SECONDS``, and a new run of every match whose lease lapsed (its worker
died or stalled), once per period for all workers together."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Sequence

from mayi_engine.rules import VARIANTS
from mayi_service.ladder.matches import MATCHMAKING_JOB, Ladder
from mayi_service.storage.loops import start_loop

#: The ladder's log lines share one logger, whichever of its modules writes them.
log = logging.getLogger("mayi_service.ladder.matches")

#: How often, as a share of the lease, the workers look for matches whose lease lapsed.
SWEEP_SHARE = 0.2


def schedule_matchmaking(ladder: Ladder, variants: Sequence[str] | None = None) -> int:
    """Queue one matchmaking job per variant whose period has come (for all workers together)."""
    if ladder.queue is None:
        return 0
    count = 0
    every = ladder.settings.ladder_every_seconds
    for variant in variants or ladder.settings.ladder_variants or VARIANTS:
        if ladder.store.tick(variant, "tick", every):
            ladder.queue.enqueue(
                MATCHMAKING_JOB,
                variant,
                job_id=f"matchmaking-{variant}-{math.floor(time.time() / every)}",
                job_timeout=60,
                result_ttl=0,
                failure_ttl=3600,
            )
            count += 1
    return count


def sweep_lapsed(ladder: Ladder, variants: Sequence[str] | None = None) -> list[str]:
    """Queue a new run of every match whose lease lapsed (:meth:`Ladder.sweep`), once per
    :data:`SWEEP_SHARE` of the lease for all workers together, so that a match whose worker
    died resumes about a lease after its last renewal, not at the next matchmaking."""
    if ladder.queue is None:
        return []
    found: list[str] = []
    every = max(0.1, ladder.settings.ladder_lease_seconds * SWEEP_SHARE)
    for variant in variants or ladder.settings.ladder_variants or VARIANTS:
        if ladder.store.tick(variant, "sweep-tick", every):
            found += ladder.sweep(variant)
    return found


def start_ticker(ladder: Ladder, stop: threading.Event) -> threading.Thread:
    """A daemon thread that queues the matchmaking jobs (:func:`schedule_matchmaking`) and
    the new runs of the matches whose worker died (:func:`sweep_lapsed`) until ``stop``."""

    settings = ladder.settings
    every = max(0.1, min(settings.ladder_every_seconds, settings.ladder_lease_seconds * SWEEP_SHARE) / 2)

    def tick() -> None:
        schedule_matchmaking(ladder)
        for match_id in sweep_lapsed(ladder):
            log.warning("ladder: match %s: its lease lapsed (its worker died or stalled); queued again", match_id)

    return start_loop("ladder", tick, every, stop, log, failed="ladder: could not queue the matchmaking")
