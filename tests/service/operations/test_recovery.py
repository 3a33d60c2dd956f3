"""Faults under the job workers, and what the service does about them by itself: Redis
killed with SIGKILL and started again (its scheduled work still comes about: clock
timeouts on time, webhook retries sent), and a webhooks worker killed with SIGKILL in the
middle of a delivery (the delivery is made again, with the same ``webhook-id``).

Real processes: ``mayi serve`` with its job workers, on a real ``redis-server`` with AOF
(REDIS_URL) started again on the same port and data; receivers are real HTTP servers on
loopback. The caps are behavioural, generous for a loaded 2-core machine: the old code
never sent the retry (RQ's scheduler, dead since the outage, is tried again every 10
minutes) nor the delivery cut short (RQ leaves it in its started registry).
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from bot_support import Receiver, allow_loopback_webhooks, register, seated_game
from http_moves import auth
from rq import SimpleWorker
from rq.registry import ScheduledJobRegistry
from serving import (
    RECOVER_SECONDS,
    cmdline,
    create_game,
    healthy,
    mayi_serve,
    parent,
    processes_in,
    redis_process,
    wait_until,
)

from mayi_service.config import Settings

#: Loopback receivers: webhooks may reach them only with this setting (the default refuses
#: every address that is not public).
ALLOW_LOOPBACK = {"MAYI_WEBHOOK_ALLOW_PRIVATE": "true"}
#: Seconds Redis stays down: longer than the client's own retries (about 7 s), so that every
#: process sees it gone.
OUTAGE_SECONDS = 10.0
#: The caps: a clock timeout after its deadline, or after Redis answers again; a retry due 1 s
#: after the failed attempt; an attempt cut short, made again after its lease (8 s, or 15 s
#: with a read timeout of 10 s).
CLOCK_CAP = 4.0
RETRY_CAP = 20.0
REDELIVERY_CAP = 90.0


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return allow_loopback_webhooks(settings)


@contextmanager
def listening(script: list[Any]) -> Iterator[Receiver]:
    found = Receiver(script)
    try:
        yield found
    finally:
        found.stop()
        found.thread.join(10)


def register_bot(url: str, webhook_url: str) -> str:
    """A bot with ``webhook_url``; its token."""
    made = requests.post(f"{url}/v1/bots", json={"name": "hooked", "webhook_url": webhook_url}, timeout=30)
    assert made.status_code == 201, made.text
    return str(made.json()["token"])


def bot_table(url: str, bot_token: str) -> str:
    """A table of two where the bot holds seat 0 (offered the first upcard at once), with slow
    clocks: its decision waits for it, and only the webhook can tell it."""
    created = requests.post(
        f"{url}/v1/games",
        json={"variant": "may_i", "seats": 2, "options": {"claim_seconds": 600, "turn_seconds": 600}},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    game_id = str(created.json()["game_id"])
    seats = f"{url}/v1/games/{game_id}/seats"
    seated = requests.post(seats, json={"name": "hooked"}, headers=auth(bot_token), timeout=30)
    assert seated.status_code == 201 and seated.json()["seat"] == 0, seated.text
    other = requests.post(seats, json={"name": "P1"}, timeout=30)
    assert other.status_code == 201, other.text
    return game_id


def deliveries(url: str, bot_token: str) -> list[dict[str, Any]]:
    log = requests.get(f"{url}/v1/bots/me/deliveries", headers=auth(bot_token), timeout=30)
    assert log.status_code == 200, log.text
    return list(log.json()["deliveries"])


def first_timeout(url: str, game_id: str) -> dict[str, Any] | None:
    events = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": 0}, timeout=30)
    assert events.status_code == 200, events.text
    return next((e for e in events.json()["events"] if e.get("timeout")), None)


def deadline_of(url: str, game_id: str) -> float:
    view = requests.get(f"{url}/v1/games/{game_id}", timeout=30)
    assert view.status_code == 200, view.text
    return float(view.json()["deadline"])


def overdue_clock_jobs(redis_url: str, queue: str) -> list[str]:
    """The RQ jobs of the games queue still scheduled a few seconds after they fell due (RQ's
    scheduler queues each within a second)."""
    client = redis.Redis.from_url(redis_url)
    try:
        return list(ScheduledJobRegistry(queue, connection=client).get_jobs_to_schedule(int(time.time()) - 3))
    finally:
        client.close()


def timed_out(url: str, game_id: str) -> dict[str, Any]:
    """The game's first clock timeout, once it has come (capped at RECOVER_SECONDS)."""
    found: list[dict[str, Any]] = []
    assert wait_until(lambda: bool(found.append(first_timeout(url, game_id)) or found[-1]), RECOVER_SECONDS, 0.1)
    event = found[-1]
    assert event is not None
    return event


def test_after_redis_is_killed_and_back_clocks_come_on_time_and_webhook_retries_are_sent(tmp_path: Path) -> None:
    queue = {"MAYI_QUEUE_NAME": f"q{uuid.uuid4().hex[:10]}"}
    with (
        redis_process(tmp_path / "redis") as server,
        listening([500, 204, 500, 204]) as hooks,
        mayi_serve(tmp_path, {"REDIS_URL": server.url, **queue, **ALLOW_LOOPBACK}, worker=True) as served,
    ):
        served.wait_ready()
        url = served.url
        bot = register_bot(url, hooks.url)
        # A game whose first deadline falls while Redis is down.
        mid_game, _ = create_game(url, seats=2, claim_seconds=5, turn_seconds=5)
        # A delivery answered 500 just before Redis goes: its retry falls due while it is down.
        bot_table(url, bot)
        assert wait_until(lambda: hooks.count() == 1, RECOVER_SECONDS), "the webhooks worker delivers"

        server.kill()
        time.sleep(OUTAGE_SECONDS)
        server.start()  # same port, same AOF
        back = time.time()
        assert wait_until(lambda: healthy(url), RECOVER_SECONDS), served.stderr()[-3000:]

        # The clock of the game in play when Redis went away: played soon after it is back.
        overdue = timed_out(url, mid_game)
        assert overdue["time"] - back < CLOCK_CAP, overdue
        # A clock started after the outage: played at its deadline.
        fresh, _ = create_game(url, seats=2, claim_seconds=1, turn_seconds=1)
        deadline = deadline_of(url, fresh)
        assert timed_out(url, fresh)["time"] - deadline < CLOCK_CAP

        # The retry that fell due during the outage is sent once Redis is back.
        assert wait_until(lambda: hooks.count() >= 2, RETRY_CAP), "the retry was not sent: " + served.stderr()[-3000:]
        (failed, _), (resent, _) = hooks.requests[0], hooks.requests[1]
        resent_at = hooks.arrivals[1]
        assert resent_at - back < RETRY_CAP and resent["webhook-id"] == failed["webhook-id"]

        # RQ's scheduler runs again: the games' RQ clock jobs that fell due are queued.
        assert wait_until(lambda: not overdue_clock_jobs(server.url, queue["MAYI_QUEUE_NAME"]), RETRY_CAP), (
            "RQ's scheduler did not start again: " + served.stderr()[-3000:]
        )

        # A delivery after the outage, answered 500: its retry, due 1 s later, is sent.
        bot_table(url, bot)
        assert wait_until(lambda: hooks.count() >= 3, RECOVER_SECONDS), "the delivery after the outage"
        assert wait_until(lambda: hooks.count() >= 4, RETRY_CAP + 5), (
            "the retry was not sent: " + served.stderr()[-3000:]
        )
        (failed, _), (retried, _) = hooks.requests[2], hooks.requests[3]
        failed_at, retried_at = hooks.arrivals[2], hooks.arrivals[3]
        assert retried_at - failed_at < RETRY_CAP
        assert retried["webhook-id"] == failed["webhook-id"]
        log = deliveries(url, bot)
        assert [(e["attempt"], e["status"]) for e in log[:2]] == [(2, 204), (1, 500)]
        assert served.stop() == 0, served.stderr()[-3000:]


def _webhooks_worker(served: Any, workdir: Path) -> int:
    """The pid of the webhooks job worker of ``served`` (a child of ``mayi serve``)."""
    found = [
        pid
        for pid in processes_in(workdir)
        if parent(pid) == served.proc.pid and "worker --jobs webhooks" in cmdline(pid)
    ]
    assert len(found) == 1, [cmdline(pid) for pid in processes_in(workdir)]
    return found[0]


def test_a_delivery_cut_short_by_its_workers_death_is_made_again_with_the_same_webhook_id(tmp_path: Path) -> None:
    # Relaxed: the attempt waits 10 s for its answer (not 3 s), so that the kill surely comes
    # in the middle of it on a loaded machine; its lease is then 15 s.
    patient = {"MAYI_WEBHOOK_READ_SECONDS": "10"}
    with (
        redis_process(tmp_path / "redis") as server,
        listening(["hold", 204]) as hooks,
        mayi_serve(tmp_path, {"REDIS_URL": server.url, **patient, **ALLOW_LOOPBACK}, worker=True) as served,
    ):
        served.wait_ready()
        url = served.url
        bot = register_bot(url, hooks.url)
        game_id = bot_table(url, bot)
        assert hooks.arrived.wait(RECOVER_SECONDS), "the first attempt reaches the receiver"
        # The worker dies while the receiver holds the request (well within the 10 s it would wait).
        killed = _webhooks_worker(served, tmp_path / "run")
        os.kill(killed, signal.SIGKILL)
        hooks.release.set()

        assert wait_until(lambda: hooks.count() >= 2, REDELIVERY_CAP), (
            "the delivery was not made again: " + served.stderr()[-3000:]
        )
        (cut, _), (again, _) = hooks.requests[0], hooks.requests[1]
        assert again["webhook-id"] == cut["webhook-id"]
        assert again["webhook-id"].startswith(f"msg_{game_id}_0_")
        assert _webhooks_worker(served, tmp_path / "run") != killed, "mayi serve started another worker"
        # The attempt cut short left no entry (it never ended); the one made again did.
        assert wait_until(lambda: len(deliveries(url, bot)) == 1, RECOVER_SECONDS)
        [entry] = deliveries(url, bot)
        assert entry["attempt"] == 1 and entry["status"] == 204 and entry["webhook_id"] == cut["webhook-id"]
        time.sleep(2)
        assert hooks.count() == 2, "made once more, not again and again"
        assert served.stop() == 0, served.stderr()[-3000:]


def test_an_attempt_queued_again_when_its_lease_ran_out_is_sent_once(
    app: Any, client: Any, receiver: Any, worker_env: None
) -> None:
    """The dispatcher queues an attempt again once its lease has run out (its job seemed
    lost); when both jobs run, the one whose lease was taken over sends nothing."""
    hooks = app.extensions["mayi"].webhooks
    bot = register(client, receiver.url)
    seated_game(client, bot["token"])
    assert hooks.due() == 1 and hooks.queue.count == 1  # attempt 1, leased, queued
    now = hooks.clock
    hooks.clock = lambda: now() + hooks.lease_seconds + 1  # the lease has run out, the job still waits
    hooks.dispatch()
    hooks.clock = now
    assert hooks.queue.count == 2 and hooks.due() == 1
    SimpleWorker([hooks.queue], connection=hooks.queue.connection).work(burst=True)
    assert len(receiver.requests) == 1, "sent once, by the job holding the lease"
    assert hooks.due() == 0 and hooks.queue.count == 0
    [entry] = deliveries_of(client, bot["token"])
    assert entry["attempt"] == 1 and entry["status"] == 204


def deliveries_of(client: Any, token: str) -> list[dict[str, Any]]:
    log = client.get("/v1/bots/me/deliveries", headers=auth(token))
    assert log.status_code == 200, log.get_json()
    return list(log.get_json()["deliveries"])
