"""``strong`` and ``greedy`` against the real service by polling (a loopback socket, a real
Redis behind it): from a late round to the end of the game, every move accepted;
``python -m mayi_bots.greedy`` (and ``mayi_bots.expert``) as its own process, registering its own account; and
``python -m mayi_bots.strong --webhook`` (and ``mayi_bots.expert``) playing a signed delivery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest
import requests
from servers import LiveServer, PollingBots, terminate
from serving import READY_SECONDS, free_port

import mayi_bots
from mayi_sdk import Client
from mayi_sdk.webhooks import sign
from mayi_service.bots import seats as service_bots

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


@pytest.mark.parametrize("variant", ["may_i", "shanghai"])
def test_strong_and_greedy_finish_a_game_against_the_server_by_polling(
    base: str, runners: PollingBots, variant: str
) -> None:
    start = LAST_TWO[variant]
    with Client(base) as anon:
        game_id = anon.create_game(variant, 3, options=SLOW, test={"seed": SEED, "start_round": start}).game_id
    names = ["strong", "greedy", "strong"]
    clients = [_bot_client(base, f"{name}{i}") for i, name in enumerate(names)]
    for i, client in enumerate(clients):
        assert client.take_seat(game_id, f"{names[i]}{i}").seat == i
    for name, client in zip(names, clients, strict=True):
        runners.start(mayi_bots.make(name), client)
    runners.join(GAME_CAP)
    final = clients[0].get_game(game_id)
    assert final.status == "finished" and final.places
    assert [r.round for r in final.results] == [start, start + 1]
    assert all(s.moves > 0 for s in runners.stats)
    # Every move legal, no exception: the only refusals are 412s of the game's own races (a
    # claim the seat on turn beat by taking the upcard; a take of the upcard sent as the
    # last answer to it made the stock legal too: RunStats.too_late, .version_conflicts).
    assert all(s.failures == 0 and s.refused == s.too_late + s.version_conflicts for s in runners.stats), runners.stats


@pytest.mark.parametrize("name", ["greedy", "expert"])
def test_python_m_mayi_bots_registers_and_plays_by_polling(base: str, runners: PollingBots, name: str) -> None:
    with Client(base) as anon:
        game_id = anon.create_game("shanghai", 3, options=SLOW, test={"seed": SEED, "start_round": 8}).game_id
    others = [_bot_client(base, f"strong{i}") for i in range(2)]
    for i, client in enumerate(others):
        client.take_seat(game_id, f"strong{i}")
    command = [sys.executable, "-m", f"mayi_bots.{name}", "--server", base, "--name", f"cli-{name}"]
    command += [f"--join={game_id}", "--until-idle"]  # an id may start with "-"
    env = {k: v for k, v in os.environ.items() if k != "MAYI_TOKEN"}
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # Without a token it registers an account and prints the token once, then takes its seat.
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "registered bot" in line and "token, shown only once: mayi_bot_" in line, line
        assert f"{name}: seat 2 at " + game_id in process.stderr.readline()
        for client in others:
            runners.start(mayi_bots.make("strong"), client)
        runners.join(GAME_CAP)
        _, err = process.communicate(timeout=GAME_CAP)
        assert process.returncode == 0, err
        assert "refused" not in err and "decide failed" not in err, err  # every move accepted
        assert f"{name}: 0 moves" not in err and " moves in 1 games" in err, err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)
    final = others[0].get_game(game_id)
    assert final.status == "finished" and final.seats[2].name == f"cli-{name}"


@pytest.mark.parametrize("name", ["strong", "expert"])
def test_python_m_mayi_bots_plays_a_signed_webhook_delivery(base: str, name: str) -> None:
    secret = service_bots.new_secret()
    with Client(base) as anon:
        account = anon.register_bot(f"hooked-{name}")
        game_id = anon.create_game("may_i", 2, options=SLOW, test={"seed": SEED}).game_id
        person = anon.take_seat(game_id, "person")
    bot = Client(base, account.token)
    assert bot.take_seat(game_id, f"hooked-{name}").seat == 1
    port = free_port()
    env = {**os.environ, "MAYI_TOKEN": account.token, "MAYI_WEBHOOK_SECRET": secret}
    command = [sys.executable, "-m", f"mayi_bots.{name}", "--server", base, "--webhook", str(port)]
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}/"
    try:
        end = time.monotonic() + READY_SECONDS
        while True:  # ready when it answers (an unsigned POST is refused)
            try:
                assert requests.post(url, data=b"{}", timeout=10).status_code == 401
                break
            except requests.ConnectionError:
                assert process.poll() is None and time.monotonic() < end, "the receiver did not start"
                time.sleep(0.2)
        # The person answers the first upcard's offer until the bot (seat 1) must decide.
        raw = _decision_of(base, bot, Client(base, person.token), game_id)
        body = json.dumps(raw).encode()
        stamp = int(time.time())
        headers = {"webhook-id": "msg_strong", "webhook-timestamp": str(stamp)}
        headers["webhook-signature"] = sign(secret, "msg_strong", stamp, body)
        assert requests.post(url, data=body, headers=headers, timeout=30).status_code == 204
        end = time.monotonic() + GAME_CAP
        while bot.get_game(game_id).version == raw["version"] and time.monotonic() < end:
            time.sleep(0.05)
        assert bot.get_game(game_id).version > raw["version"], f"the {name} bot played the delivered decision"
    finally:
        terminate(process)


def _decision_of(base: str, bot: Client, person: Client, game_id: str) -> dict[str, Any]:
    """The person plays simply until the bot has a decision; that decision as JSON."""
    end = time.monotonic() + GAME_CAP
    while time.monotonic() < end:
        raw = requests.get(
            f"{base}/v1/bots/me/decisions", headers={"Authorization": f"Bearer {bot.token}"}, timeout=60
        ).json()
        if raw["decisions"]:
            return dict(raw["decisions"][0])
        person.play(game_id, mayi_bots.make("greedy").decide(person.get_game(game_id)))
    raise AssertionError("the bot never had a decision")
