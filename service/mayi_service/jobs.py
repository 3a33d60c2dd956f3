"""The RQ jobs of the service: each runs a part of the worker's :class:`~mayi_service.service.Service`.

The parts queue them by these functions' dotted paths (``CLOCK_JOB``, ``HOUSE_JOB``,
``DELIVERY_JOB``, ``MATCH_JOB`` and ``MATCHMAKING_JOB`` of their modules).
"""

from __future__ import annotations

import logging

from mayi_engine import MayIError
from mayi_service.bots.webhooks import Attempt
from mayi_service.service import worker_service

#: The jobs log as the parts they run (their messages keep their loggers' names).
house_log = logging.getLogger("mayi_service.bots.house")
ladder_log = logging.getLogger("mayi_service.ladder.matches")


def run_clock_job(game_id: str, at: int | None = None) -> None:
    """Play the decisions of ``game_id`` whose deadline has passed (:meth:`~mayi_service.play.clock.Clock.run`)."""
    service = worker_service()
    service.clock.run(service.games, game_id, at)


def run_house_job(game_id: str, version: int) -> None:
    """One decision of a house seat of ``game_id`` at ``version`` (see
    :class:`~mayi_service.bots.house.HouseBots`)."""
    service = worker_service()
    try:
        service.house.play(service.games, game_id, version)
    except MayIError:  # the game moved on under the bot: the next commit's job plays
        house_log.info("house job for game %s at version %s: the game moved on", game_id, version)


def run_delivery(bot_id: str, game_id: str, seat: int, key: str, attempt: int, lease: int) -> None:
    """Attempt ``attempt`` at delivering the decision of ``seat`` at ``game_id`` with ``key``,
    holding the due-set's ``lease`` (:meth:`~mayi_service.bots.webhooks.Webhooks.run`)."""
    service = worker_service()
    service.webhooks.run(service.bots, Attempt(bot_id, game_id, seat, key, attempt), lease)


def run_match_job(variant: str, match_id: str) -> str:
    """Play ladder match ``match_id`` to its end (see :meth:`~mayi_service.ladder.matches.Ladder.run_match`);
    then form new tables at once, so that its players need not wait for the next matchmaking."""
    ladder = worker_service().ladder
    outcome = ladder.run_match(variant, match_id)
    if outcome == "finished":
        try:
            ladder.matchmake(variant)
        except Exception:  # the periodic matchmaking tries again
            ladder_log.warning("ladder: matchmaking after match %s", match_id, exc_info=True)
    return outcome


def run_matchmaking_job(variant: str) -> list[str]:
    """Queue new runs of abandoned matches, then form new tables (:meth:`.Ladder.matchmake`)."""
    ladder = worker_service().ladder
    ladder.sweep(variant)
    return ladder.matchmake(variant)
