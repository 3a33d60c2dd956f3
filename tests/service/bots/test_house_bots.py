"""House bots: a table seats reference bots in its empty seats and the job worker plays them.

The games run against a real ``mayi serve`` with its job worker (a real RQ worker process)
on the suite's Redis; the refusals are checked in-process.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import requests
from http_moves import auth, move_request
from serving import Served, mayi_serve

from mayi_bots import NAMES
from mayi_sdk import Bot, Client, GameView, LegalMove
from mayi_service.api.app import create_app
from mayi_service.config import Settings

SLOW = {"claim_seconds": 600, "turn_seconds": 600}
#: The longest a game's last two rounds may take on a loaded CI machine (a cap, not a timing).
GAME_CAP = 300.0
#: The last two rounds of each variant (the earlier ones add nothing here).
LATE = {"may_i": 6, "shanghai": 7}


@pytest.fixture
def served(tmp_path: Path, redis_url: str) -> Iterator[Served]:
    env = {"MAYI_REDIS_URL": redis_url, "MAYI_SCHEDULE_CLOCK_JOBS": "true", "MAYI_RATE_LIMITS_ENABLED": "false"}
    with mayi_serve(tmp_path, env, worker=True) as server:
        server.wait_ready()
        yield server


def _table(url: str, variant: str, seats: int) -> str:
    body = {"variant": variant, "seats": seats, "options": SLOW, "test": {"start_round": LATE[variant]}}
    created = requests.post(f"{url}/v1/games", json=body, timeout=30)
    assert created.status_code == 201, created.text
    return str(created.json()["game_id"])


def _seat(url: str, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
    taken = requests.post(f"{url}/v1/games/{game_id}/seats", json=body, timeout=30)
    assert taken.status_code == 201, taken.text
    return dict(taken.json())


def _events(url: str, game_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while True:
        page = requests.get(f"{url}/v1/games/{game_id}/events", params={"after": len(found)}, timeout=30).json()
        found += page["events"]
        if not page["events"]:
            return found


def _finished(url: str, game_id: str, cap: float = GAME_CAP) -> dict[str, Any]:
    end = time.monotonic() + cap
    while time.monotonic() < end:
        view = requests.get(f"{url}/v1/games/{game_id}", timeout=30).json()
        if view["status"] == "finished":
            return dict(view)
        time.sleep(0.5)
    pytest.fail(f"game {game_id} did not finish within {cap} s: {view}")


@pytest.mark.parametrize("variant", ["may_i", "shanghai"])
def test_a_table_of_house_bots_plays_itself_to_the_end(served: Served, variant: str) -> None:
    game_id = _table(served.url, variant, 3)
    for name in ("random", "random"):
        taken = _seat(served.url, game_id, {"house_bot": name})
        assert taken["token"] is None
    with Client(served.url) as anon:  # the SDK's way
        last = anon.take_seat(game_id, house_bot="random")
    assert last.token is None and last.seat == 2 and last.game.status == "playing"
    view = _finished(served.url, game_id)
    # Three of one house bot are told apart by their names.
    assert [p["name"] for p in view["seats"]] == ["random (house bot)", "random 2 (house bot)", "random 3 (house bot)"]
    events = _events(served.url, game_id)
    assert events[-1]["type"] == "game_ended"
    # Every decision was the bots' own: with ten-minute clocks, none was played by the clock.
    assert not [e for e in events if e.get("timeout")]
    assert sum(e["type"] == "round_ended" for e in events) == 2


def test_a_person_plays_a_whole_game_with_two_house_bots(served: Served) -> None:
    url = served.url
    game_id = _table(url, "may_i", 3)
    person = _seat(url, game_id, {"name": "Dee", "seat": 1})
    token = person["token"]
    _seat(url, game_id, {"house_bot": "random", "name": "Greta"})
    _seat(url, game_id, {"house_bot": "random"})
    end = time.monotonic() + GAME_CAP
    seen = 0
    moves = 0
    while time.monotonic() < end:
        view = requests.get(f"{url}/v1/games/{game_id}", headers=auth(token), timeout=30).json()
        if view["status"] == "finished":
            break
        legal = view["legal"]
        if not legal:  # the bots' turn: wait for the next event
            page = requests.get(
                f"{url}/v1/games/{game_id}/events", params={"after": seen, "wait": 10}, timeout=30
            ).json()
            seen = page["last"]
            continue
        move = next((m for m in legal if m["type"] == "go_down"), legal[0])
        path, body = move_request(move)
        answer = requests.post(f"{url}/v1/games/{game_id}/{path}", json=body, headers=auth(token), timeout=30)
        # A bot's claim or move can win the race for the same decision: 409 is then fair.
        assert answer.status_code in (200, 409), answer.text
        moves += answer.status_code == 200
    view = _finished(url, game_id, cap=1)
    assert moves > 0
    assert [p["name"] for p in view["seats"]] == ["Greta", "Dee", "random (house bot)"]
    assert not [e for e in _events(url, game_id) if e.get("timeout")]


# -- refusals (in-process, no worker) ---------------------------------------------
def _open_table(client: Any) -> str:
    created = client.post("/v1/games", json={"variant": "may_i", "seats": 3})
    assert created.status_code == 201, created.get_json()
    return str(created.get_json()["game_id"])


def test_a_server_without_a_job_worker_refuses_house_bots_naming_the_setting(settings: Settings) -> None:
    # Clock jobs off: a server that says it runs no job worker (the setting under test).
    client = create_app(replace(settings, schedule_clock_jobs=False)).test_client()
    game_id = _open_table(client)
    refused = client.post(f"/v1/games/{game_id}/seats", json={"house_bot": "random"})
    assert refused.status_code == 409
    problem = refused.get_json()
    assert problem["code"] == "house_bots_unavailable"
    assert "house_bot" in problem["detail"] and "MAYI_SCHEDULE_CLOCK_JOBS" in problem["detail"]


def test_house_bot_names_and_seat_bodies_are_checked(client: Any) -> None:
    game_id = _open_table(client)
    unknown = client.post(f"/v1/games/{game_id}/seats", json={"house_bot": "genius"})
    assert unknown.status_code == 422
    assert "house_bot" in unknown.get_json()["detail"]
    nameless = client.post(f"/v1/games/{game_id}/seats", json={"seat": 1})
    assert nameless.status_code == 422
    assert nameless.get_json()["detail"].startswith("name:")
    person = client.post(f"/v1/games/{game_id}/seats", json={"name": "Dee"}).get_json()
    with_token = client.post(f"/v1/games/{game_id}/seats", json={"house_bot": "random"}, headers=auth(person["token"]))
    assert with_token.status_code == 422
    assert with_token.get_json()["detail"].startswith("house_bot:")


def test_the_document_offers_every_reference_bot_as_a_house_bot(app: Any) -> None:
    from mayi_service.api.app import openapi_document

    body = openapi_document(app)["components"]["schemas"]["SeatIn"]["properties"]["house_bot"]
    assert body["enum"] == list(NAMES)


class _StockBot(Bot):
    """Never wants the upcard: passes every claim, draws from the stock, discards its first card."""

    def decide(self, view: GameView) -> LegalMove | dict[str, Any]:
        for want in ({"type": "claim", "claim": False}, {"type": "draw", "source": "stock"}):
            found = [m for m in view.legal if {"type": m.type, **m.body} == want]
            if found:
                return found[0]
        return view.legal[0]


def _stock_bots_and_a_person(settings: Any) -> tuple[Any, Any, str, str]:
    """An app with a job queue (no worker: the test plays the jobs) and a 3-seat May I table:
    house seats 0 and 1 played by :class:`_StockBot`, a person in seat 2. Returns the
    app's test client, its ``Games``, the game's id and the person's token."""
    from dataclasses import replace

    from mayi_service.api.app import create_app

    app = create_app(replace(settings, schedule_clock_jobs=True))  # a queue; no worker: the test plays the jobs
    client = app.test_client()
    games = app.extensions["mayi"].games
    created = client.post("/v1/games", json={"variant": "may_i", "seats": 3, "options": SLOW}).get_json()
    game_id = created["game_id"]
    for seat in (0, 1):
        assert client.post(f"/v1/games/{game_id}/seats", json={"house_bot": "random", "seat": seat}).status_code == 201
    person = client.post(f"/v1/games/{game_id}/seats", json={"name": "Dee"}).get_json()["token"]
    for seat in (0, 1):
        app.extensions["mayi"].house._bots[(game_id, seat)] = _StockBot()
    return client, games, game_id, person


def _house(client: Any) -> Any:
    """The house bots of the app of ``client``."""
    return client.application.extensions["mayi"].house


def test_a_house_bot_on_turn_waits_for_a_person_answering_the_upcard(settings: Any) -> None:
    """While a person may still call May I, the house bot on turn is not made to take the upcard:
    it is offered the stock too, and choosing it waits until the person has answered."""
    client, games, game_id, person = _stock_bots_and_a_person(settings)

    def run_house() -> None:
        while _house(client).play(games, game_id, games.load(game_id).version):
            pass

    def person_view() -> dict[str, Any]:
        return dict(client.get(f"/v1/games/{game_id}", headers=auth(person)).get_json())

    run_house()
    # The person is offered the first upcard; it passes, and seat 0 draws and discards.
    assert {m["type"] for m in person_view()["legal"]} == {"claim"}
    assert client.post(f"/v1/games/{game_id}/claims", json={"claim": False}, headers=auth(person)).status_code == 200
    run_house()
    view = person_view()
    assert view["turn"] == 1 and view["claim_window"] and 2 in view["claim_window"]["pending"]
    upcard = view["upcard"]
    version = view["version"]
    # Seat 1 may only take the upcard while the window is open; its bot would rather draw: it waits.
    assert not _house(client).play(games, game_id, version)
    assert person_view()["version"] == version and person_view()["upcard"] == upcard
    # The person passes: now seat 1 draws from the stock, and the upcard stays on the pile.
    assert client.post(f"/v1/games/{game_id}/claims", json={"claim": False}, headers=auth(person)).status_code == 200
    assert _house(client).play(games, game_id, games.load(game_id).version)
    events = client.get(f"/v1/games/{game_id}/events?after=0").get_json()["events"]
    drew = [e for e in events if e["type"] in ("drew", "took_upcard")][-1]
    assert drew["seat"] == 1 and drew["type"] == "drew", drew


def test_no_house_job_is_queued_while_only_a_person_can_act(settings: Any) -> None:
    """A commit after which no house seat has a decision queues no house job (it would only
    load the game to find nothing to do); the commit that gives a house seat its turn does."""
    from rq.job import Job

    from mayi_service.bots.house import job_id

    client, games, game_id, person = _stock_bots_and_a_person(settings)
    queue = _house(client).queue

    def queued(version: int) -> bool:
        return bool(Job.exists(job_id(game_id, version), connection=queue.connection))

    start = games.load(game_id).version
    assert queued(start), "the deal gives a house seat the first upcard: its job is queued"
    while _house(client).play(games, game_id, games.load(game_id).version):
        pass
    version = games.load(game_id).version
    view = client.get(f"/v1/games/{game_id}", headers=auth(person)).get_json()
    assert {m["type"] for m in view["legal"]} == {"claim"}, "only the person may act: the first upcard is theirs"
    assert not queued(version), "nothing for a house seat to decide: no job"
    # The person passes: the house seat on turn has a decision now, and its job is queued.
    answered = client.post(f"/v1/games/{game_id}/claims", json={"claim": False}, headers=auth(person))
    assert answered.status_code == 200, answered.get_json()
    assert queued(answered.get_json()["version"])
