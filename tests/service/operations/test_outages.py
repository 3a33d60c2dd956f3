"""Redis killed with SIGKILL in the middle of a game, and back: the service recovers by
itself, every acknowledged action is still there, and a retry with the same
Idempotency-Key across the crash gets the first answer.

Real processes: ``mayi serve`` (API and job worker) and a real ``redis-server``
with AOF persistence, killed and started again on the same port and data
(REDIS_URL), or the embedded one, which ``mayi serve`` restarts itself. Waits poll
for the healthy state, capped at 60 s; nothing asserts on speed.
"""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from serving import (
    RECOVER_SECONDS,
    act,
    create_game,
    healthy,
    mayi_serve,
    next_move,
    redis_process,
    redis_servers_in,
    wait_until,
)

from mayi_service.api.problems import UNAVAILABLE_DETAIL


def _play(url: str, game_id: str, tokens: list[str], moves: int) -> list[tuple[str, str, str, dict[str, Any], Any]]:
    """``moves`` acknowledged actions, each with an Idempotency-Key: (key, token, path, body, answer)."""
    done = []
    for _ in range(moves):
        token, path, body = next_move(url, game_id, tokens)
        key = uuid.uuid4().hex
        answer = act(url, game_id, token, path, body, key)
        assert answer.status_code == 200, answer.text
        done.append((key, token, path, body, answer.json()))
    return done


def _version(url: str, game_id: str) -> int:
    seen = requests.get(f"{url}/v1/games/{game_id}", timeout=30)
    assert seen.status_code == 200, seen.text
    return int(seen.json()["version"])


def _check_recovered(url: str, game_id: str, acked: list[tuple[str, str, str, dict[str, Any], Any]]) -> None:
    """Every acknowledged action is there, and retrying each with its key gets its first answer."""
    assert _version(url, game_id) >= acked[-1][4]["version"]
    for key, token, path, body, first in acked:
        again = act(url, game_id, token, path, body, key)
        assert again.status_code == 200, again.text
        assert again.json() == first, "a retry with the same Idempotency-Key gets the first answer"
    assert _version(url, game_id) >= acked[-1][4]["version"]


def _long_poll_answers(url: str, game_id: str, tokens: list[str]) -> None:
    """A long-poll waiting for the next event gets it (waits work again after the outage)."""
    import threading

    last = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": 0}, timeout=30).json()["last"]
    answers: list[Any] = []

    def poll() -> None:
        answers.append(requests.get(f"{url}/v1/games/{game_id}/events", params={"after": last, "wait": 30}, timeout=90))

    waiting = threading.Thread(target=poll)
    waiting.start()
    try:
        token, path, body = next_move(url, game_id, tokens)
        assert act(url, game_id, token, path, body).status_code == 200
    finally:
        waiting.join(120)
    assert answers and answers[0].status_code == 200, answers and answers[0].text
    assert answers[0].json()["events"] and answers[0].json()["events"][0]["seq"] == last + 1


def _clock_runs(url: str) -> bool:
    """A game with one-second clocks is played by the job worker (nobody else acts on it)."""
    game_id, _ = create_game(url, seats=2, claim_seconds=1, turn_seconds=1)
    start = _version(url, game_id)
    return wait_until(lambda: _version(url, game_id) >= start + 2, RECOVER_SECONDS, step=0.5)


def test_with_redis_url_the_api_and_the_worker_reconnect_after_redis_is_killed(tmp_path: Path) -> None:
    with redis_process(tmp_path / "redis") as server:
        env = {"REDIS_URL": server.url, "MAYI_SCHEDULE_CLOCK_JOBS": "true"}
        with mayi_serve(tmp_path, env, worker=True) as served:
            served.wait_ready()
            game_id, tokens = create_game(served.url)
            acked = _play(served.url, game_id, tokens, 4)
            token, path, body = next_move(served.url, game_id, tokens)

            server.kill()
            down = requests.get(f"{served.url}/v1/games/{game_id}", timeout=60)
            assert down.status_code == 503, down.text
            problem = down.json()
            assert problem["code"] == "unavailable" and problem["detail"] == UNAVAILABLE_DETAIL
            assert "may have been applied" in problem["detail"] and "Idempotency-Key" in problem["detail"]
            # An action during the outage: refused with 503 (or, if it got through, acknowledged).
            key = uuid.uuid4().hex
            during = act(served.url, game_id, token, path, body, key)
            assert during.status_code in (200, 503), during.text

            server.start()  # same port, same AOF
            assert wait_until(lambda: healthy(served.url), RECOVER_SECONDS), "the API did not recover by itself"
            _check_recovered(served.url, game_id, acked)
            # The action that got a 503, retried with its key: applied once, whatever happened before.
            retried = act(served.url, game_id, token, path, body, key)
            assert retried.status_code == 200, retried.text
            assert retried.json()["version"] == acked[-1][4]["version"] + 1
            assert act(served.url, game_id, token, path, body, key).json() == retried.json()
            _long_poll_answers(served.url, game_id, tokens)
            assert _clock_runs(served.url), "the job worker did not recover by itself"
            assert served.proc.poll() is None
            assert served.stop() == 0, served.stderr()


def test_the_embedded_redis_killed_mid_game_is_restarted_from_its_aof(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {"MAYI_DATA_DIR": str(data), "MAYI_SCHEDULE_CLOCK_JOBS": "true"}
    with mayi_serve(tmp_path, env, worker=True) as served:
        served.wait_ready()
        game_id, tokens = create_game(served.url)
        acked = _play(served.url, game_id, tokens, 4)
        [first] = redis_servers_in(data)

        os.kill(first, signal.SIGKILL)
        restarted = lambda: [pid for pid in redis_servers_in(data) if pid != first]  # noqa: E731
        assert wait_until(lambda: len(restarted()) == 1 and healthy(served.url), RECOVER_SECONDS), served.stderr()
        assert served.proc.poll() is None, "mayi serve keeps serving"
        _check_recovered(served.url, game_id, acked)
        more = _play(served.url, game_id, tokens, 2)
        assert more[-1][4]["version"] == acked[-1][4]["version"] + 2
        _long_poll_answers(served.url, game_id, tokens)
        assert _clock_runs(served.url), "the job worker did not recover"
        assert served.stop() == 0, served.stderr()
    assert wait_until(lambda: not redis_servers_in(data), RECOVER_SECONDS)


@pytest.mark.parametrize("down", ["at its start", "while it runs"])
def test_mayi_worker_alone_carries_on_after_a_redis_restart(tmp_path: Path, down: str) -> None:
    """``mayi worker`` as deployed beside Redis (no ``mayi serve`` to restart it)."""
    import subprocess
    import sys
    from contextlib import suppress

    with redis_process(tmp_path / "redis") as server:
        env = dict(os.environ, REDIS_URL=server.url, MAYI_SWEEP_SECONDS="0.5", PYTHONUNBUFFERED="1")
        env["MAYI_QUEUE_NAME"] = f"q{uuid.uuid4().hex[:10]}"
        log = tmp_path / "worker.log"
        with log.open("wb") as out:
            worker = subprocess.Popen(
                [sys.executable, "-m", "mayi_service.cli", "worker"],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            from rq import Worker

            if down == "while it runs":
                client = redis.Redis.from_url(server.url)
                assert wait_until(lambda: len(Worker.all(connection=client)) == 1, RECOVER_SECONDS), "no worker"
                client.close()
            server.kill()
            noticed = lambda: "unreachable" in log.read_text(errors="replace")  # noqa: E731
            assert wait_until(noticed, RECOVER_SECONDS), log.read_text(errors="replace")
            server.start()
            with mayi_serve(tmp_path, {"REDIS_URL": server.url, "MAYI_QUEUE_NAME": env["MAYI_QUEUE_NAME"]}) as api:
                api.wait_ready()
                assert _clock_runs(api.url), log.read_text(errors="replace")[-3000:]
                assert worker.poll() is None, "the worker is still the same process"
                assert api.stop() == 0
        finally:
            with suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGTERM)
            try:
                worker.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait(60)
