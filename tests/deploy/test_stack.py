"""The compose stack (docker-compose.yml) on a real Docker engine, played through nginx.

The stack is the compose file's own, derived for CI (:func:`ci_compose`): every
container on the host's network (the engine has no bridge; the test machines allow
traffic on loopback only), so each listener gets its own loopback port, and the one
``api`` service runs twice (``api`` and ``api-2``) behind nginx, whose configuration is
``deploy/nginx.conf`` with those addresses; the game workers' replicas are services of
their own, each with its own hostname (their healthcheck finds them by it). Against it,
with the settings a user gets:

* Redis has AOF on, its data on the compose volume; two API containers, two game
  workers (``--jobs games,webhooks``) and a ladder worker, each on its own queues;
  every container of every service healthy by its own healthcheck.
* A whole game (every round) of each variant by a polling bot (the SDK's runner with a
  reference bot) against house bots, and by a person-like HTTP client against house
  bots, the four at once; an event stream followed through nginx past nginx's default
  60 s timeouts, never cut.
* Faults mid-game: one API container killed (the game goes on through the other), one
  game worker killed (the clocks and the house bots go on), Redis killed and started
  again (every acknowledged action is there), the other game worker's process ended
  (Docker starts it again: the restart policy; the clocks go on through it); ``down``
  then ``up`` keeps every finished game.

It is one test (the faults build on each other, and one stack serves them all); its
steps say what failed. Every container and the volume are removed at the end, also on
failure; nothing asserts on time (only caps for what otherwise never happens).
"""

from __future__ import annotations

import copy
import resource
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
import yaml
from http_moves import auth, move_request
from rq import Worker
from whole_games import choose

from mayi_bots import make
from mayi_engine.events import Claimed, Discarded, Drew, LaidOff, Passed, TookUpcard, WentDown
from mayi_engine.rules import get_rules
from mayi_sdk import Client
from mayi_sdk.runners import run_polling

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "mayi-ci"
#: Ten-minute clocks: the players' own decisions end these games, not the clock.
SLOW = {"claim_seconds": 600, "turn_seconds": 600}
#: The clocks of the games played through the faults: a house bot's decision whose job was
#: lost with a killed process (or Redis) is left to the turn clock (mayi_service.bots.house).
FAULTY = {"claim_seconds": 5, "turn_seconds": 10}
#: The last two rounds of each variant (the absent seat's game, played by the clock).
LAST_TWO = {"may_i": 6, "shanghai": 7}
#: Caps on a loaded CI machine (never timings).
UP_CAP = 300.0
GAME_CAP = 600.0
FAULT_CAP = 180.0
#: How long the event stream is followed: past nginx's default proxy timeouts (60 s).
STREAM_SECONDS = 75.0
TIMEOUT = 30
#: The events that are a seat's own decisions.
MOVES = {cls.type for cls in (TookUpcard, Claimed, Passed, Drew, WentDown, LaidOff, Discarded)}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Ports:
    redis: int
    api: int
    api_2: int
    proxy: int


def ci_compose(base: dict[str, Any], ports: Ports, nginx_conf: Path) -> dict[str, Any]:
    """docker-compose.yml on the host's network: its default services (not the cluster
    profile), every listener on its own loopback port, ``api`` twice, nginx in front of both."""
    redis_url = f"redis://127.0.0.1:{ports.redis}/0"
    services = {}
    for name, service in base["services"].items():
        if "profiles" in service:
            continue
        service = copy.deepcopy(service)
        service.pop("build", None)  # the test builds the image
        service.pop("ports", None)  # nothing to publish on the host's network
        service["network_mode"] = "host"
        assert "healthcheck" in service, f"docker-compose.yml: the {name} service has no healthcheck"
        environment = service.get("environment", {})
        if "REDIS_URL" in environment:
            assert environment["REDIS_URL"].startswith("redis://redis:6379/")
            environment["REDIS_URL"] = redis_url
        services[name] = service
    redis_service = services["redis"]
    redis_service["command"] = [*redis_service["command"], "--bind", "127.0.0.1", "--port", str(ports.redis)]
    check = redis_service["healthcheck"]["test"]
    at = check.index("redis-cli") + 1
    check[at:at] = ["-p", str(ports.redis)]
    api = services["api"]
    for name, port in (("api", ports.api), ("api-2", ports.api_2)):
        service = copy.deepcopy(api)
        service["command"] = [part.replace("0.0.0.0:8000", f"127.0.0.1:{port}") for part in api["command"]]
        assert service["command"] != api["command"], "the API's command binds 0.0.0.0:8000"
        check = api["healthcheck"]["test"]
        service["healthcheck"]["test"] = [t.replace("127.0.0.1:8000", f"127.0.0.1:{port}") for t in check]
        # A container cannot raise its open-file hard limit above the engine's (this
        # machine's is 20000, without CAP_SYS_RESOURCE): the compose file's, or that.
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        for kind in ("soft", "hard"):
            limit = service["ulimits"]["nofile"][kind]
            service["ulimits"]["nofile"][kind] = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        services[name] = service
    # The game workers' replicas, each a service of its own with a hostname of its own: on
    # the host's network they would share the host's, and their healthchecks (`mayi worker
    # --check`) find their RQ worker in Redis by hostname.
    worker = services.pop("worker")
    replicas = worker.pop("deploy")["replicas"]
    assert replicas >= 2, "the compose file runs at least two game workers"
    for n in range(1, replicas + 1):
        services[_worker_name(n)] = {**copy.deepcopy(worker), "hostname": _worker_name(n)}
    services["ladder-worker"]["hostname"] = "ladder-worker"
    proxy = services["proxy"]
    proxy["volumes"] = [f"{nginx_conf}:/etc/nginx/conf.d/default.conf:ro"]
    proxy["depends_on"]["api-2"] = proxy["depends_on"]["api"]
    check = proxy["healthcheck"]["test"]
    proxy["healthcheck"]["test"] = [t.replace("127.0.0.1:8000", f"127.0.0.1:{ports.proxy}") for t in check]
    assert proxy["healthcheck"]["test"] != check, "the proxy's healthcheck asks 127.0.0.1:8000"
    return {"services": services, "volumes": {"redis-data": base["volumes"]["redis-data"]}}


def _worker_name(n: int) -> str:
    return "worker" if n == 1 else f"worker-{n}"


def ci_nginx(text: str, ports: Ports) -> str:
    """deploy/nginx.conf listening on loopback, its upstream both API containers."""
    upstream = "server api:8000;"
    assert upstream in text and "listen 8000;" in text
    both = f"server 127.0.0.1:{ports.api};\n    server 127.0.0.1:{ports.api_2};"
    return text.replace(upstream, both).replace("listen 8000;", f"listen 127.0.0.1:{ports.proxy};")


class Stack:
    """The compose project on the engine: its commands, containers and URL."""

    def __init__(self, docker: Any, command: list[str], file: Path, ports: Ports) -> None:
        self.docker = docker
        self.command = [*command, "--project-name", PROJECT, "--file", str(file)]
        self.ports = ports
        self.url = f"http://127.0.0.1:{ports.proxy}"
        self.services = list(yaml.safe_load(file.read_text())["services"])
        self.workers = [s for s in self.services if s == "worker" or s.startswith("worker-")]

    def compose(self, *args: str, timeout: float = UP_CAP, check: bool = True) -> Any:
        return self.docker.run(*self.command, *args, timeout=timeout, check=check)

    def containers(self, service: str) -> list[str]:
        return self.compose("ps", "-q", service).stdout.split()

    def state(self, container: str) -> str:
        template = "{{.State.Status}}{{if .State.Health}}/{{.State.Health.Status}}{{end}}"
        return str(self.docker.docker("inspect", "--format", template, container).stdout.strip())

    def restarts(self, container: str) -> int:
        """How many times the Docker engine has started ``container`` again (its restart policy)."""
        return int(self.docker.docker("inspect", "--format", "{{.RestartCount}}", container).stdout.strip())

    def wait_up(self) -> None:
        """Until every container of every service is healthy (each has a healthcheck) and
        nginx answers /healthz."""
        end = time.monotonic() + UP_CAP
        states: dict[str, str] = {}
        while time.monotonic() < end:
            states = {f"{s}/{c[:6]}": self.state(c) for s in self.services for c in self.containers(s)}
            up = {key.partition("/")[0] for key in states}
            if up == set(self.services) and all(v == "running/healthy" for v in states.values()) and self.healthy():
                return
            time.sleep(1)
        logs = self.compose("logs", "--no-color", "--tail", "30", check=False).stdout
        pytest.fail(f"the stack was not healthy within {UP_CAP:.0f} s: {states}\n{logs}")

    def healthy(self) -> bool:
        try:
            return requests.get(self.url + "/healthz", timeout=10).status_code == 200
        except requests.RequestException:
            return False

    def redis(self) -> redis.Redis:
        return redis.Redis(port=self.ports.redis, socket_timeout=10)


def _compose_command(docker: Any) -> list[str]:
    if docker.docker("compose", "version", check=False).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.fail("neither `docker compose` nor `docker-compose` is installed")


@pytest.fixture
def stack(docker_engine: Any, image: str, tmp_path: Path) -> Iterator[Stack]:
    ports = Ports(*(_free_port() for _ in range(4)))
    conf = tmp_path / "nginx.conf"
    conf.write_text(ci_nginx((ROOT / "deploy" / "nginx.conf").read_text(), ports))
    file = tmp_path / "docker-compose.ci.yml"
    base = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    file.write_text(yaml.safe_dump(ci_compose(base, ports, conf), sort_keys=False))
    stack = Stack(docker_engine, _compose_command(docker_engine), file, ports)
    stack.compose("down", "--volumes", "--remove-orphans", check=False)  # a run that was cut short
    try:
        stack.compose("up", "--detach", "--no-build")
        stack.wait_up()
        yield stack
    finally:
        logs = stack.compose("logs", "--no-color", "--timestamps", check=False)
        (docker_engine.cache / "stack.log").write_text(logs.stdout + logs.stderr)
        stack.compose("down", "--volumes", "--remove-orphans", "--timeout", "5", check=False)


# --- players --------------------------------------------------------------------------


def _retrying(call: Callable[[], requests.Response], stop: threading.Event) -> requests.Response | None:
    """``call`` until it is answered by the API (not a refused connection, a 502 or a 503:
    a container or Redis being down), waiting out 429s; ``None`` once ``stop`` is set."""
    while not stop.is_set():
        try:
            response = call()
        except requests.RequestException:
            stop.wait(0.5)
            continue
        if response.status_code in (502, 503):
            stop.wait(0.5)
            continue
        if response.status_code == 429:
            stop.wait(float(response.headers.get("Retry-After", "1")))
            continue
        return response
    return None


@dataclass
class Person:
    """A person-like HTTP client playing one seat against house bots, through nginx: it
    reads its view, makes one of its legal moves, waits for the others by long-polling."""

    url: str
    variant: str
    game_id: str
    token: str
    stop: threading.Event = field(default_factory=threading.Event)
    #: The game versions the service acknowledged (a 200 to one of this seat's actions).
    acknowledged: list[int] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    seat: int = -1
    finished: bool = False
    crashed: list[BaseException] = field(default_factory=list)
    thread: threading.Thread | None = None

    def start(self) -> Person:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            self._play()
        except BaseException as exc:  # reported by the test
            self.crashed.append(exc)

    def _play(self) -> None:
        rules = get_rules(self.variant, SLOW)
        base = f"{self.url}/v1/games/{self.game_id}"
        seen = 0
        while not self.stop.is_set():
            view = _retrying(lambda: requests.get(base, headers=auth(self.token), timeout=TIMEOUT), self.stop)
            if view is None:
                return
            assert view.status_code == 200, view.text
            game = view.json()
            if game["status"] == "finished":
                self.finished = True
                return
            if not game["legal"]:
                wait = {"after": seen, "wait": 10}
                page = _retrying(
                    lambda wait=wait: requests.get(f"{base}/events", params=wait, timeout=TIMEOUT),  # type: ignore[misc]
                    self.stop,
                )
                if page is not None and page.status_code == 200:
                    seen = page.json()["last"]
                continue
            path, body = move_request(choose(game, rules))
            target = f"{base}/{path}"
            # One key per move: a retry after a 503 (the commit may have landed) is answered once.
            headers = {**auth(self.token), "Idempotency-Key": uuid.uuid4().hex}
            answer = _retrying(
                lambda target=target, body=body, headers=headers: requests.post(  # type: ignore[misc]
                    target, json=body, headers=headers, timeout=TIMEOUT
                ),
                self.stop,
            )
            if answer is None:
                return
            self.statuses.append(answer.status_code)
            # A house bot's claim can win the race for the same decision: 409 is then fair.
            assert answer.status_code in (200, 409, 412), answer.text
            if answer.status_code == 200:
                self.acknowledged.append(answer.json()["version"])

    def wait_for_moves(self, count: int, cap: float = FAULT_CAP) -> None:
        goal = len(self.acknowledged) + count
        end = time.monotonic() + cap
        while len(self.acknowledged) < goal and time.monotonic() < end and not self.finished and not self.crashed:
            time.sleep(0.2)
        assert not self.crashed, self.crashed
        assert len(self.acknowledged) >= goal or self.finished, f"{count} more moves not made within {cap} s"

    def join(self, cap: float) -> None:
        assert self.thread is not None
        self.thread.join(cap)
        self.stop.set()
        assert not self.crashed, self.crashed
        assert not self.thread.is_alive(), f"game {self.game_id} did not end within {cap} s"


def _table(url: str, variant: str, options: dict[str, Any], start_round: int, seed: str = "") -> str:
    body: dict[str, Any] = {"variant": variant, "seats": 3, "options": options, "test": {"start_round": start_round}}
    if seed:
        body["test"]["seed"] = seed
    created = requests.post(f"{url}/v1/games", json=body, timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    return str(created.json()["game_id"])


def _seat(url: str, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
    taken = requests.post(f"{url}/v1/games/{game_id}/seats", json=body, timeout=TIMEOUT)
    assert taken.status_code == 201, taken.text
    return dict(taken.json())


def _person_table(url: str, variant: str, options: dict[str, Any], start_round: int) -> Person:
    game_id = _table(url, variant, options, start_round)
    taken = _seat(url, game_id, {"name": "Dee"})
    for _ in range(2):
        _seat(url, game_id, {"house_bot": "greedy"})
    return Person(url, variant, game_id, taken["token"], seat=int(taken["seat"]))


def _events(url: str, game_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while True:
        page = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": len(found)}, timeout=TIMEOUT)
        assert page.status_code == 200, page.text
        found += page.json()["events"]
        if not page.json()["events"]:
            return found


@dataclass
class Followed:
    """An event stream read through nginx: what arrived, when, and how it ended."""

    status: int = 0
    lines: list[tuple[float, str]] = field(default_factory=list)
    ended_by: str = ""


def _follow(url: str, game_id: str, seconds: float, out: Followed) -> None:
    start = time.monotonic()
    try:
        # A read timeout well under nginx's 60 s: a stream nginx held back would show as one.
        with requests.get(f"{url}/v1/games/{game_id}/events/stream", stream=True, timeout=(10, 40)) as response:
            out.status = response.status_code
            for line in response.iter_lines(decode_unicode=True):
                out.lines.append((time.monotonic() - start, line))
                if time.monotonic() - start > seconds:
                    out.ended_by = "us"
                    return
            out.ended_by = "the server (end of stream)"
    except requests.RequestException as exc:
        out.ended_by = f"an error: {exc}"


def _wait_for_events(
    stack: Stack, game_id: str, since: int, wanted: dict[str, Callable[[dict[str, Any]], bool]]
) -> None:
    """Until, for each of ``wanted``, one event after the first ``since`` matches it (else
    fail with the last events and the workers' last log lines)."""
    end = time.monotonic() + FAULT_CAP
    missing = list(wanted)
    later: list[dict[str, Any]] = []
    while missing and time.monotonic() < end:
        later = _events(stack.url, game_id)[since:]
        missing = [what for what, match in wanted.items() if not any(match(e) for e in later)]
        time.sleep(1)
    if missing:
        logs = stack.compose("logs", "--no-color", "--tail", "60", *stack.workers, check=False).stdout
        pytest.fail(
            f"game {game_id}: within {FAULT_CAP:.0f} s, no {' and no '.join(missing)}\n"
            f"last events: {later[-12:]}\nworkers' log:\n{logs}"
        )


def _clocks_go_on(absent: int, when: str) -> dict[str, Callable[[dict[str, Any]], bool]]:
    """The events that show a game's jobs are run: the clock plays the ``absent`` seat, and a
    house bot moves."""
    return {
        f"clock ran out for the absent seat {when}": lambda e: bool(e.get("timeout") and e.get("seat") == absent),
        f"house bot moved {when}": lambda e: e["type"] in MOVES and e.get("seat") != absent,
    }


def _finished_games(url: str, ids: list[str]) -> dict[str, Any]:
    games = {}
    for game_id in ids:
        view = requests.get(f"{url}/v1/games/{game_id}", timeout=TIMEOUT)
        assert view.status_code == 200, view.text
        game = view.json()
        assert game["status"] == "finished", game
        games[game_id] = {"places": game["places"], "results": game["results"], "version": game["version"]}
    return games


# --- the test -------------------------------------------------------------------------


def test_the_compose_stack_plays_through_nginx_and_survives_its_faults(stack: Stack) -> None:
    url = stack.url
    store = stack.redis()
    started = time.monotonic()
    steps: list[str] = []

    def done(step: str) -> None:
        steps.append(f"{time.monotonic() - started:6.1f} s  {step}")

    # 1. The stack as composed: AOF on the volume, the API twice, workers by kind.
    assert store.config_get("appendonly")["appendonly"] == "yes"
    (redis_id,) = stack.containers("redis")
    mounts = stack.docker.docker("inspect", "--format", "{{json .Mounts}}", redis_id).stdout
    assert f'"Name":"{PROJECT}_redis-data"' in mounts.replace(" ", "") and '"Destination":"/data"' in mounts
    assert store.config_get("dir")["dir"] == "/data"
    assert len(stack.workers) >= 2 and len(stack.containers("ladder-worker")) >= 1
    queues: list[list[str]] = []
    end = time.monotonic() + UP_CAP
    while time.monotonic() < end:
        queues = sorted(sorted(w.queue_names()) for w in Worker.all(connection=store))
        if len(queues) >= 3:
            break
        time.sleep(1)
    games_queues = ["mayi", "mayi-webhooks"]
    assert queues.count(games_queues) >= 2 and queues.count(["mayi-ladder"]) >= 1, queues
    assert all(q in (games_queues, ["mayi-ladder"]) for q in queues), (
        f"a worker mixes the ladder and the clocks: {queues}"
    )

    done("the stack checked")

    # 2. Whole games through nginx, and an event stream followed past 60 s meanwhile.
    waiting = _table(url, "may_i", SLOW, 1)  # a table no one joins: its stream only keeps alive
    followed = Followed()
    follower = threading.Thread(target=_follow, args=(url, waiting, STREAM_SECONDS, followed), daemon=True)
    follower.start()
    stop_bots = threading.Event()
    bot_games: list[str] = []
    crashed: list[BaseException] = []
    bot_threads = []
    for variant in ("may_i", "shanghai"):
        game_id = _table(url, variant, SLOW, 1)
        with Client(url) as anon:
            account = anon.register_bot(f"poller-{variant}")
        client = Client(url, account.token)
        client.take_seat(game_id, "poller")
        for _ in range(2):
            _seat(url, game_id, {"house_bot": "greedy"})
        bot_games.append(game_id)

        def poll(client: Client = client) -> None:
            try:
                run_polling(make("strong"), client, wait=20, stop=stop_bots, until_idle=True)
            except BaseException as exc:  # reported below
                crashed.append(exc)

        bot_threads.append(threading.Thread(target=poll, daemon=True))
        bot_threads[-1].start()
    people = [_person_table(url, v, SLOW, 1).start() for v in ("may_i", "shanghai")]
    try:
        end = time.monotonic() + GAME_CAP
        for thread in bot_threads:
            thread.join(max(0.1, end - time.monotonic()))
        assert not crashed, crashed
        assert not any(t.is_alive() for t in bot_threads), "the polling bots did not finish within the cap"
        for person in people:
            person.join(max(0.1, end - time.monotonic()))
            assert person.finished and person.acknowledged
    finally:
        stop_bots.set()
        for person in people:
            person.stop.set()
    finished = _finished_games(url, bot_games + [p.game_id for p in people])
    follower.join(STREAM_SECONDS + 60)
    assert followed.status == 200
    assert followed.ended_by == "us", f"the stream was cut by {followed.ended_by} after {followed.lines[-1:]}"
    assert followed.lines[0][1] == "retry: 2000"
    late = [at for at, line in followed.lines if line.startswith(": keep-alive") and at > 60]
    assert late, f"no keep-alive came through nginx after 60 s: {followed.lines}"

    done("whole games played, the stream followed")

    # 3. Faults mid-game. A person's game from round 1 goes on throughout.
    long_game = _person_table(url, "may_i", FAULTY, 1).start()
    try:
        long_game.wait_for_moves(3)

        # 3a. One API container killed: the game goes on through the other.
        (api_2,) = stack.containers("api-2")
        stack.docker.docker("kill", api_2)
        long_game.wait_for_moves(3)
        assert stack.healthy()
        done("an API container killed: the game went on")

        # 3b. One game worker killed: clocks and house bots go on (on the other).
        # The person of this table never acts: the clock plays that seat.
        absent = _person_table(url, "shanghai", {"claim_seconds": 2, "turn_seconds": 2}, LAST_TWO["shanghai"])
        (worker,) = stack.containers(stack.workers[0])
        stack.docker.docker("kill", worker)
        assert stack.state(worker).startswith("exited")
        since = len(_events(url, absent.game_id))
        _wait_for_events(stack, absent.game_id, since, _clocks_go_on(absent.seat, "after a worker was killed"))
        done("a worker killed: clocks and house bots went on")

        # 3c. Redis killed, then started again: every acknowledged action is there.
        long_game.wait_for_moves(2)
        stack.docker.docker("kill", redis_id)
        outage = requests.get(f"{url}/v1/games/{long_game.game_id}", timeout=TIMEOUT)
        assert outage.status_code == 503 and int(outage.headers["Retry-After"]) >= 1, outage.text
        stack.compose("start", "redis")
        end = time.monotonic() + FAULT_CAP
        while time.monotonic() < end and not stack.healthy():
            time.sleep(1)
        assert stack.healthy(), "the API did not answer again after Redis came back"
        since = len(_events(url, long_game.game_id))
        long_game.wait_for_moves(3)
        # The job worker runs again: a house bot decides (not the clock for it).
        house = {
            "house bot's own move after Redis came back": lambda e: (
                e["type"] in MOVES and e.get("seat") != long_game.seat and not e.get("timeout")
            )
        }
        _wait_for_events(stack, long_game.game_id, since, house)
        acknowledged = list(long_game.acknowledged)
    finally:
        long_game.stop.set()
    game = requests.get(f"{url}/v1/games/{long_game.game_id}", timeout=TIMEOUT).json()
    assert game["version"] >= max(acknowledged)
    events = _events(url, long_game.game_id)
    assert len(events) >= len(acknowledged)
    assert 500 not in long_game.statuses

    done("Redis killed and started: every acknowledged action there")

    # 3d. The other game worker's process ends (SIGTERM from inside, as a crash would
    # end it): Docker starts the container again (its restart policy), and the clocks
    # go on through it, the only game worker left.
    (other,) = stack.containers(stack.workers[1])
    stack.docker.docker("exec", other, "sh", "-c", "kill -TERM 1")
    end = time.monotonic() + FAULT_CAP
    while time.monotonic() < end and not (stack.restarts(other) >= 1 and stack.state(other) == "running/healthy"):
        time.sleep(1)
    assert stack.restarts(other) >= 1, f"the worker was not started again: {stack.state(other)}"
    assert stack.state(other) == "running/healthy", stack.state(other)
    absent = _person_table(url, "shanghai", {"claim_seconds": 2, "turn_seconds": 2}, LAST_TWO["shanghai"])
    _wait_for_events(stack, absent.game_id, 0, _clocks_go_on(absent.seat, "after the worker was started again"))
    done("a worker's process ended: Docker started it again, the clocks went on")

    # 4. `down` then `up`: every finished game is still there (the volume).
    stack.compose("down", "--timeout", "5")
    stack.compose("up", "--detach", "--no-build")
    stack.wait_up()
    assert _finished_games(url, list(finished)) == finished
    done("down and up: the finished games kept")
    print("\n".join(steps))
