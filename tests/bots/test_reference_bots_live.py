"""``strong`` and ``greedy`` against the real service by polling (a loopback socket, a real
Redis behind it): from a late round to the end of the game, every move accepted; and
``python -m mayi_bots.greedy`` as its own process, registering its own account."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from servers import LiveServer

import mayi_bots
from mayi_sdk import Client, RunStats, run_polling

SLOW = {"claim_seconds": 600, "turn_seconds": 600}
SEED = "5eed" * 8
#: Caps on a loaded CI machine (never timings): a game from a late round; a process's exit.
GAME_CAP = 600.0
#: The last two rounds of each variant: a round ends, the next is dealt and the game ends.
LAST_TWO = {"may_i": 6, "shanghai": 7}


@pytest.fixture
def base(live_server: LiveServer) -> str:
    return live_server.url


def _bot_client(base: str, name: str) -> Client:
    with Client(base) as anon:
        return Client(base, anon.register_bot(name).token)


class _Runners:
    """``run_polling`` threads, stopped however the test ends."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.stats: list[RunStats] = []
        self.crashed: list[BaseException] = []

    def start(self, name: str, client: Client) -> None:
        def run() -> None:
            try:
                self.stats.append(run_polling(mayi_bots.make(name), client, wait=5, stop=self.stop, until_idle=True))
            except BaseException as exc:  # pragma: no cover - reported by the test
                self.crashed.append(exc)

        thread = threading.Thread(target=run, daemon=True)
        self.threads.append(thread)
        thread.start()

    def join(self, cap: float) -> None:
        end = time.monotonic() + cap
        for thread in self.threads:
            thread.join(max(0.1, end - time.monotonic()))
        assert not self.crashed, self.crashed
        assert not any(t.is_alive() for t in self.threads), "the bots did not finish within the cap"


@pytest.fixture
def runners() -> Iterator[_Runners]:
    found = _Runners()
    try:
        yield found
    finally:
        found.stop.set()
        for thread in found.threads:
            thread.join(30)


@pytest.mark.parametrize("variant", ["may_i", "shanghai"])
def test_strong_and_greedy_finish_a_game_against_the_server_by_polling(
    base: str, runners: _Runners, variant: str
) -> None:
    start = LAST_TWO[variant]
    with Client(base) as anon:
        game_id = anon.create_game(variant, 3, options=SLOW, test={"seed": SEED, "start_round": start}).game_id
    names = ["strong", "greedy", "strong"]
    clients = [_bot_client(base, f"{name}{i}") for i, name in enumerate(names)]
    for i, client in enumerate(clients):
        assert client.take_seat(game_id, f"{names[i]}{i}").seat == i
    for name, client in zip(names, clients, strict=True):
        runners.start(name, client)
    runners.join(GAME_CAP)
    final = clients[0].get_game(game_id)
    assert final.status == "finished" and final.places
    assert [r.round for r in final.results] == [start, start + 1]
    assert all(s.moves > 0 for s in runners.stats)
    assert all(s.failures == 0 and s.refused == 0 for s in runners.stats)  # every move legal, no exception


def test_python_m_mayi_bots_registers_and_plays_by_polling(base: str, runners: _Runners) -> None:
    with Client(base) as anon:
        game_id = anon.create_game("shanghai", 3, options=SLOW, test={"seed": SEED, "start_round": 8}).game_id
    others = [_bot_client(base, f"strong{i}") for i in range(2)]
    for i, client in enumerate(others):
        client.take_seat(game_id, f"strong{i}")
    command = [sys.executable, "-m", "mayi_bots.greedy", "--server", base, "--name", "cli-greedy"]
    command += ["--join", game_id, "--until-idle"]
    env = {k: v for k, v in os.environ.items() if k != "MAYI_TOKEN"}
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # Without a token it registers an account and prints the token once, then takes its seat.
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "registered bot" in line and "token, shown only once: mayi_bot_" in line, line
        assert "greedy: seat 2 at " + game_id in process.stderr.readline()
        for client in others:
            runners.start("strong", client)
        runners.join(GAME_CAP)
        _, err = process.communicate(timeout=GAME_CAP)
        assert process.returncode == 0, err
        assert "refused" not in err and "decide failed" not in err, err  # every move accepted
        assert "greedy: 0 moves" not in err and " moves in 1 games" in err, err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)
    final = others[0].get_game(game_id)
    assert final.status == "finished" and final.seats[2].name == "cli-greedy"
