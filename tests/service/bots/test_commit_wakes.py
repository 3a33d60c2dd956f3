"""A move's Redis calls, and the wake of bots after the commit.

On a single Redis a bot's move is the load script (the game, its token map and the bot
token's lookup), the commit script, which only commits, then its listeners' scripts, sent
together: the clock's claim and the wake of each bot the commit gives a decision (which
reads its ``webhook_url``). A commit refused by its version check tells no listener: it
wakes nobody. On a Redis Cluster the same scripts run, each on its keys' node. Every Redis
here is real (the suite's, a ``MONITOR`` on it, and a 3-primary cluster on loopback).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis
from bot_support import Receiver, allow_loopback_webhooks, register, run_jobs
from clusters import redis_cluster
from http_moves import auth, move_request
from serving import redis_process, wait_until

from mayi_service.api.app import create_app
from mayi_service.config import Settings
from mayi_service.play.steps import Update
from mayi_service.play.tables import token_hash
from mayi_service.storage.records import Change

#: Cap of every wait (a loaded CI machine); nothing asserts on time.
CAP = 120.0


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return allow_loopback_webhooks(settings)


class Monitor:
    """The commands a real Redis runs while a block runs (``MONITOR``, read by a thread),
    between two ``ECHO`` markers sent from another connection."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self.seen: list[dict[str, Any]] = []
        self.mark = uuid.uuid4().hex
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)

    def _read(self) -> None:
        with self.client.monitor() as monitor:
            self.client.echo(f"start-{self.mark}")
            while True:
                found = monitor.next_command()
                with self.lock:
                    self.seen.append(found)
                if found["command"] == f"ECHO end-{self.mark}":
                    return

    def __enter__(self) -> Monitor:
        self.thread.start()
        assert wait_until(lambda: self.saw(f"ECHO start-{self.mark}"), CAP), "MONITOR did not start"
        return self

    def saw(self, text: str) -> bool:
        with self.lock:
            return any(text in c["command"] for c in self.seen)

    def __exit__(self, *exc: object) -> None:
        self.client.echo(f"end-{self.mark}")
        self.thread.join(CAP)
        assert not self.thread.is_alive(), "MONITOR did not see its end marker"

    def commands(self, prefix: str) -> list[dict[str, Any]]:
        """The commands between the markers that name a key under ``prefix``."""
        with self.lock:
            return [c for c in self.seen if f"{prefix}:" in c["command"]]


def _bots(app: Any) -> Any:
    return app.extensions["mayi"].bots


def _decisions(client: Any, token: str) -> list[dict[str, Any]]:
    found = client.get("/v1/bots/me/decisions", headers=auth(token))
    assert found.status_code == 200, found.get_json()
    return list(found.get_json()["decisions"])


def _choose(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A discard if listed, else the stock draw, else a pass, else the first move listed."""
    for wanted in ({"type": "discard"}, {"type": "draw", "source": "stock"}, {"type": "claim", "claim": False}):
        found = [m for m in legal if all(m.get(k) == v for k, v in wanted.items())]
        if found:
            return found[0]
    return legal[0]


def _play(client: Any, game_id: str, token: str, move: dict[str, Any]) -> dict[str, Any]:
    path, body = move_request(move)
    moved = client.post(f"/v1/games/{game_id}/{path}", json=body, headers=auth(token))
    assert moved.status_code == 200, moved.get_json()
    return dict(moved.get_json())


def _two_bot_game(client: Any, first: dict[str, Any], second: dict[str, Any]) -> str:
    body = {
        "variant": "may_i",
        "seats": 2,
        "options": {"claim_seconds": 600, "turn_seconds": 600},
        "test": {"seed": "ab" * 16},
    }
    created = client.post("/v1/games", json=body)
    assert created.status_code == 201, created.get_json()
    game_id = str(created.get_json()["game_id"])
    for seat, bot in enumerate((first, second)):
        taken = client.post(f"/v1/games/{game_id}/seats", json={"name": bot["name"]}, headers=auth(bot["token"]))
        assert taken.status_code == 201 and taken.get_json()["seat"] == seat, taken.get_json()
    return game_id


def _until_a_discard(client: Any, game_id: str, bots: tuple[dict[str, Any], ...]) -> tuple[dict, dict, dict]:
    """Play until one bot's decision lists a discard: (that bot, the other, the discard)."""
    for _ in range(50):
        for bot in bots:
            for decision in _decisions(client, bot["token"]):
                if decision["game_id"] != game_id:
                    continue
                move = _choose(decision["view"]["legal"])
                if move["type"] == "discard":
                    other = next(b for b in bots if b is not bot)
                    return bot, other, move
                _play(client, game_id, bot["token"], move)
    raise AssertionError("no discard came")


# -- a single Redis ----------------------------------------------------------------------------


def _play_until_it_decides(client: Any, game_id: str, bot: dict[str, Any], other: dict[str, Any]) -> None:
    """Play ``other``'s decisions until ``bot`` (the webhook bot) has one at ``game_id``."""
    for _ in range(50):
        if [d for d in _decisions(client, bot["token"]) if d["game_id"] == game_id]:
            return
        decision = _decisions(client, other["token"])[0]
        _play(client, game_id, other["token"], _choose(decision["view"]["legal"]))
    raise AssertionError("the webhook bot never had to decide")


@pytest.fixture
def uncounted(settings: Settings) -> tuple[Any, Any]:
    """The app and its test client with the rate limits off: the limiter's own Redis calls
    (what each limit costs is tested in test_rate_limit_policy.py) would be counted here as
    the move's, which these tests count."""
    app = create_app(replace(settings, rate_limits_enabled=False))
    return app, app.test_client()


def test_a_bots_move_is_its_load_its_commit_and_the_listeners_scripts_which_wake_the_waiting_bot(
    uncounted: tuple[Any, Any], settings: Settings, redis_url: str
) -> None:
    """The discard that gives the other bot its draw: the load script (with the bot token's
    look-up), the commit script, then the wake of the other bot's waiting poll; nothing else
    (the clock's claim is not sent: the pending clock job comes before the new deadline)."""
    app, client = uncounted
    bots = _bots(app)
    first, second = register(client, None, "first"), register(client, None, "second")
    game_id = _two_bot_game(client, first, second)
    mover, waiter, discard = _until_a_discard(client, game_id, (first, second))
    assert not [d for d in _decisions(client, waiter["token"]) if d["game_id"] == game_id]

    wake_key = bots.store.wake_key(waiter["bot_id"])
    seen = bots.wake_seq(waiter["bot_id"])
    woken: list[bool] = []
    waiting = threading.Thread(target=lambda: woken.append(bots.repo.hub.wait(wake_key, seen, CAP)), daemon=True)
    monitored = redis.Redis.from_url(redis_url)
    try:
        with Monitor(monitored) as monitor:
            waiting.start()
            assert wait_until(lambda: monitor.saw(wake_key), CAP), "the poll did not start waiting"
            _play(client, game_id, mover["token"], discard)
            waiting.join(CAP)
    finally:
        monitored.close()
    assert woken == [True], "the waiting poll was not woken"
    assert [d["seat"] for d in _decisions(client, waiter["token"]) if d["game_id"] == game_id]

    found = [c for c in monitor.commands(settings.key_prefix) if not c["command"].startswith("XREAD")]
    sent = [c for c in found if c["client_type"] != "lua"]
    assert [c["command"].split()[0] for c in sent] == ["EVALSHA"] * 3, [c["command"][:120] for c in sent]
    load, commit, wake = sent
    assert ":bot-token:" in load["command"] and ":tokens" in load["command"]
    assert f"{{{game_id}}}:events" in commit["command"]
    # The commit only commits: no key of a bot, and nothing of the clock's in its script.
    inside_commit = [c["command"] for c in found[found.index(commit) + 1 : found.index(wake)]]
    assert not [c for c in inside_commit if "{bot:" in c or "clock_at" in c], inside_commit
    assert not [c for c in found if "clock_at" in c["command"]], "the clock was claimed"
    # The wake (and the webhook URL's read) ran in the wake script, after the commit.
    inside = [c["command"].split()[:2] for c in found[found.index(wake) + 1 :]]
    assert ["INCR", f"{bots.store.wake_seq_key(waiter['bot_id'])}"] in inside, inside
    assert ["XADD", wake_key] in inside
    assert ["HGET", bots.store.bot_key(waiter["bot_id"])] in inside
    entry = bots.store.r.xrevrange(wake_key, count=1)[0]
    assert entry[1] == {b"g": game_id.encode()} and int(entry[0].split(b"-")[0]) == seen + 1


def test_a_move_in_a_game_without_bots_names_no_bot(
    uncounted: tuple[Any, Any], settings: Settings, redis_url: str
) -> None:
    """People's moves: the load and the commit, with no key of any bot (and no claim of the
    clock: the pending job, at the first move's deadline, comes before the new one)."""
    _, client = uncounted
    body = {
        "variant": "may_i",
        "seats": 2,
        "options": {"claim_seconds": 600, "turn_seconds": 600},
        "players": [{"name": "A"}, {"name": "B"}],
    }
    created = client.post("/v1/games", json=body).get_json()
    game_id, tokens = created["game_id"], [s["token"] for s in created["seats"]]

    def actor_and_view() -> tuple[int, dict[str, Any]]:
        actor = client.get(f"/v1/games/{game_id}").get_json()["actor"]
        return actor, client.get(f"/v1/games/{game_id}", headers=auth(tokens[actor])).get_json()

    # A first move, not watched, loads the scripts into Redis (a fresh one in a test run alone).
    actor, view = actor_and_view()
    _play(client, game_id, tokens[actor], _choose(view["legal"]))
    actor, view = actor_and_view()
    monitored = redis.Redis.from_url(redis_url)
    try:
        with Monitor(monitored) as monitor:
            _play(client, game_id, tokens[actor], _choose(view["legal"]))
    finally:
        monitored.close()
    sent = [c for c in monitor.commands(settings.key_prefix) if c["client_type"] != "lua"]
    assert [c["command"].split()[0] for c in sent] == ["EVALSHA"] * 2, [c["command"][:120] for c in sent]
    assert not [c for c in monitor.commands(settings.key_prefix) if "{bot:" in c["command"]]


def test_a_commit_that_fails_its_version_check_wakes_nobody(app: Any, client: Any) -> None:
    """A commit over a record read before the game moved on is refused (the update then finds
    nothing to do): no listener runs, so no bot is woken and nothing is written."""
    bots = _bots(app)
    games = app.extensions["mayi"].games
    first, second = register(client, None, "first"), register(client, None, "second")
    game_id = _two_bot_game(client, first, second)
    stale = bots.repo.load(game_id)
    ids = (first["bot_id"], second["bot_id"])
    tries: list[int] = []

    def step(record: Any, now: float) -> Any:
        tries.append(record.version)
        if record.version != stale.version - 1:
            return None  # the fresh load after the refusal: nothing to do
        return Update(Change(fields={"x": "1"}), replace(record, version=record.version + 1), True)

    before = [bots.wake_seq(b) for b in ids]
    older = replace(stale, version=stale.version - 1)  # what a reader saw before the last commit
    assert games.update(game_id, step, first=older) is None
    assert tries == [stale.version - 1, stale.version]
    assert [bots.wake_seq(b) for b in ids] == before
    assert bots.store.r.hget(bots.repo.game_key(game_id), "x") is None


def test_a_webhook_url_set_mid_game_gets_the_next_decision(
    app: Any, client: Any, receiver: Receiver, worker_env: None
) -> None:
    """The URL is read at each commit (never a flag kept in the table): set by PATCH while the
    bot plays, the next decision is delivered; cleared, none is."""
    first, second = register(client, None, "first"), register(client, None, "second")
    game_id = _two_bot_game(client, first, second)

    def first_plays_until_it_waits() -> None:
        for _ in range(50):
            mine = [d for d in _decisions(client, first["token"]) if d["game_id"] == game_id]
            if not mine:
                return
            _play(client, game_id, first["token"], _choose(mine[0]["view"]["legal"]))
        raise AssertionError("the first bot never stopped deciding")

    first_plays_until_it_waits()
    changed = client.patch("/v1/bots/me", json={"webhook_url": receiver.url}, headers=auth(first["token"]))
    assert changed.status_code == 200, changed.get_json()
    _play_until_it_decides(client, game_id, first, second)
    run_jobs(app)
    assert len(receiver.requests) == 1
    assert json.loads(receiver.requests[0][1])["version"] == _bots(app).repo.load(game_id).version

    first_plays_until_it_waits()
    cleared = client.patch("/v1/bots/me", json={"webhook_url": None}, headers=auth(first["token"]))
    assert cleared.status_code == 200, cleared.get_json()
    _play_until_it_decides(client, game_id, first, second)
    run_jobs(app)
    assert len(receiver.requests) == 1, "a decision was delivered after the URL was cleared"


@pytest.mark.parametrize("idle_ttl", [90 * 86400, 0])
def test_a_move_with_a_bot_token_keeps_the_token_alive(settings: Settings, idle_ttl: int) -> None:
    """The load script's look-up pushes the token's expiry back (``GETEX``) when bots expire
    when idle, and leaves it alone when they never do."""
    app = create_app(replace(settings, bot_idle_ttl=idle_ttl))
    client = app.test_client()
    first, second = register(client, None, "first"), register(client, None, "second")
    game_id = _two_bot_game(client, first, second)
    bots = _bots(app)
    mover, _, discard = _until_a_discard(client, game_id, (first, second))
    key = bots.store.token_key(token_hash(mover["token"]))
    if idle_ttl:
        bots.store.r.expire(key, 100)
    _play(client, game_id, mover["token"], discard)
    assert bots.store.r.ttl(key) > 89 * 86400 if idle_ttl else bots.store.r.ttl(key) == -1


# -- a Redis Cluster -------------------------------------------------------------------------


@pytest.fixture
def cluster_app(tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch, worker_env: None) -> Iterator[Any]:
    """The app on a 3-primary cluster, its jobs on a single Redis (both stopped at the end);
    the webhook worker reads the same from the environment."""
    with redis_cluster(tmp_path / "cluster") as cluster, redis_process(tmp_path / "jobs") as jobs:
        monkeypatch.setenv("REDIS_URL", cluster.url)
        monkeypatch.setenv("MAYI_JOBS_REDIS_URL", jobs.url)
        yield create_app(replace(settings, redis_url=cluster.url, jobs_redis_url=jobs.url))


def test_on_a_cluster_commits_still_wake_bots_and_deliver_webhooks(cluster_app: Any, receiver: Receiver) -> None:
    """The bots' keys live in their own slots: the wake and the webhook look-up are calls
    after the commit, and happen, as do the deliveries; a bot token's look-up is its own call."""
    client = cluster_app.test_client()
    bots = _bots(cluster_app)
    assert not bots.repo.single
    first, second = register(client, receiver.url, "first"), register(client, None, "second")
    game_id = _two_bot_game(client, first, second)
    mover, waiter, discard = _until_a_discard(client, game_id, (first, second))
    seen = bots.wake_seq(waiter["bot_id"])
    woken: list[bool] = []
    waiting = threading.Thread(
        target=lambda: woken.append(bots.repo.hub.wait(bots.store.wake_key(waiter["bot_id"]), seen, CAP)), daemon=True
    )
    waiting.start()
    _play(client, game_id, mover["token"], discard)
    waiting.join(CAP)
    assert woken == [True] and bots.wake_seq(waiter["bot_id"]) == seen + 1
    # Every decision of the webhook bot reaches its receiver, as on a single Redis.
    _play_until_it_decides(client, game_id, first, second)
    version = bots.repo.load(game_id).version
    run_jobs(cluster_app, until=lambda: any(json.loads(b)["version"] == version for _, b in receiver.requests))
