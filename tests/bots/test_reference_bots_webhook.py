"""``python -m mayi_bots.strong --webhook`` end to end: it registers an account with its
webhook URL, takes a seat, and plays every decision the live ``mayi serve`` (its job
worker sending the deliveries) posts to it, until the game ends."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers import terminate
from serving import READY_SECONDS, Served, free_port, ready_server

import mayi_bots
from mayi_sdk import Client, run_polling

SLOW = {"claim_seconds": 600, "turn_seconds": 600}
#: The longest the game may take on a loaded CI machine (a cap, not a timing).
GAME_CAP = 300.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    env = {"MAYI_WEBHOOK_ALLOW_PRIVATE": "true"}  # the receivers are on loopback
    with ready_server(tmp_path, env, worker=True) as server:
        yield server


def _lines(path: Path, count: int, process: subprocess.Popen[bytes]) -> list[str]:
    """The first ``count`` lines the process wrote to ``path`` (waiting for them, with a cap)."""
    end = time.monotonic() + READY_SECONDS
    while True:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return lines[:count]
        assert process.poll() is None and time.monotonic() < end, path.read_text() if path.exists() else ""
        time.sleep(0.1)


def test_the_strong_bot_plays_a_game_by_webhook_from_its_command_line(served: Served, tmp_path: Path) -> None:
    base = served.url
    with Client(base) as anon:
        game_id = anon.create_game("shanghai", 3, options=SLOW, test={"seed": "beef" * 16, "start_round": 8}).game_id
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("MAYI_TOKEN", "MAYI_WEBHOOK_SECRET")}
    command = [sys.executable, "-m", "mayi_bots.strong", "--server", base, "--webhook", str(port)]
    command += ["--name", "hooked", f"--join={game_id}"]  # an id may start with "-"
    errors = tmp_path / "bot.err"
    with errors.open("wb") as sink:
        process = subprocess.Popen(command, stderr=sink, env=env)
    stop = threading.Event()
    pollers: list[threading.Thread] = []
    try:
        lines = _lines(errors, 3, process)
        assert "token, shown only once: mayi_bot_" in lines[0], lines
        assert "webhook secret, shown only once: whsec_" in lines[1] and f"http://127.0.0.1:{port}/" in lines[1]
        assert f"strong: seat 0 at {game_id}" in lines[2], lines
        for i in (1, 2):  # two greedy bots by polling fill the table
            with Client(base) as anon:
                client = Client(base, anon.register_bot(f"greedy{i}").token)
            assert client.take_seat(game_id, f"greedy{i}").seat == i
            thread = threading.Thread(
                target=run_polling,
                args=(mayi_bots.make("greedy"), client),
                kwargs={"wait": 5, "stop": stop, "until_idle": True},
                daemon=True,
            )
            thread.start()
            pollers.append(thread)
        end = time.monotonic() + GAME_CAP
        with Client(base) as watcher:
            while watcher.get_game(game_id).status != "finished" and time.monotonic() < end:
                time.sleep(0.5)
            final = watcher.get_game(game_id)
        assert final.status == "finished", f"not finished within the cap:\n{errors.read_text()[-3000:]}"
        assert final.seats[0].name == "hooked" and [r.round for r in final.results] == [8]
    finally:
        stop.set()
        terminate(process)
        for thread in pollers:
            thread.join(30)
    err = errors.read_text()
    assert "refused" not in err and "decide failed" not in err, err  # every delivered decision played
