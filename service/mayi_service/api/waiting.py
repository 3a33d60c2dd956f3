"""Requests that wait (event streams, long-polls of events and decisions): the slots they hold,
per client, per address and per process, and the answers that name a full one."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import redis
from flask import request

from mayi_service.api.context import services
from mayi_service.play.games import token_hash
from mayi_service.play.slots import AddressSlotsFull, ProcessSlotsFull, WaitSlot
from mayi_service.problem_types import Problem, ServiceError
from mayi_service.server.deadlines import address_key
from mayi_service.storage.leases import StreamSlotsFull

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Kind:
    """A kind of waiting request, as its 429 names it."""

    what: str
    setting: str
    advice: str
    retry_after: str


STREAMS = Kind("open event streams", "MAYI_MAX_STREAMS_PER_CLIENT", "; close one, or long-poll the events instead", "5")
WAITS = Kind("long-polls waiting", "MAYI_MAX_WAITS_PER_CLIENT", "", "1")


def waiting_slot(client: str, per_client: int, seconds: float) -> WaitSlot:
    """A waiting slot of ``client`` (a token, or an address) whose lease lasts ``seconds``
    (and a margin), counted against this process and the request's address (not taken yet)."""
    settings = services().settings
    return services().games.wait_slot(
        client,
        per_client,
        seconds,
        settings.max_waiting_per_process,
        address_key((request.remote_addr or "?",)),
        settings.max_waiting_per_address,
    )


def give(slot: WaitSlot) -> None:
    """Give ``slot`` back as a stream ends; with the game store down, its lease is left to expire."""
    try:
        slot.give()
    except redis.RedisError as exc:
        log.warning("a stream's waiting slot is left to expire (%s): %s", slot.key, exc)


@contextmanager
def waiting(kind: Kind, client: str, per_client: int, seconds: float) -> Iterator[None]:
    """Hold one waiting slot of this process, of the request's address and of ``client``
    while the body runs: 503 when the process is full, 429 when the address or the client is."""
    slot = waiting_slot(client, per_client, seconds)
    with slot_errors(kind, per_client):
        slot.take()
    try:
        yield
    finally:
        slot.give()


@contextmanager
def slot_errors(kind: Kind, per_client: int) -> Iterator[None]:
    """The body's refusals of a waiting slot as the answers that name them: 503 when the
    process holds its limit, 429 when the client does."""
    try:
        yield
    except ProcessSlotsFull as exc:
        raise ServiceError(
            Problem.SERVER_BUSY,
            f"This server process already holds {exc.limit} event streams and waiting "
            "long-polls, its limit (MAYI_MAX_WAITING_PER_PROCESS); retry after Retry-After seconds, "
            "or read the events without waiting (wait=0)",
            {"Retry-After": "5"},
        ) from exc
    except AddressSlotsFull as exc:
        raise ServiceError(
            Problem.RATE_LIMITED,
            f"Too many event streams and waiting long-polls from {exc.address} at once: at most {exc.limit} per "
            "address in a server process, over all of its tokens (MAYI_MAX_WAITING_PER_ADDRESS); close one, "
            "or retry after Retry-After seconds",
            {"Retry-After": "5"},
        ) from exc
    except StreamSlotsFull as exc:
        raise ServiceError(
            Problem.RATE_LIMITED,
            f"Too many {kind.what} at once: at most {per_client} per token (or per address without one), "
            f"the limit {kind.setting}{kind.advice}",
            {"Retry-After": kind.retry_after},
        ) from exc


def client_key(token: str | None) -> str:
    """Whom a waiting request counts against: its token, or its address without one."""
    return "t:" + token_hash(token)[:32] if token else "a:" + (request.remote_addr or "?")
