"""A ladder match never makes the games' jobs wait: on a default ``mayi serve`` (its own job
workers, rate limits and clocks on), a person's table of house bots gets every house-bot move
within seconds while a match holds a worker for a whole game.

The match seats an outside bot, entered on the ladder through the API, that never answers:
its match job then waits on the bot's 30-second clocks, holding its worker for minutes (as a
slow outside bot would). One worker for every job, as before, left the house bots waiting
for the whole match.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import requests
from http_moves import auth, move_request
from serving import READY_SECONDS, mayi_serve, wait_until

from mayi_sdk import Client

#: The longest a house bot may take to answer (a cap for something that takes milliseconds
#: when its job does not wait behind a match; a loaded CI machine has room in it).
ANSWER_CAP = 15.0
#: House-bot answers looked at (a few rounds of the table).
ANSWERS = 12


def _send(method: str, url: str, **options: Any) -> requests.Response:
    """One request as a person's browser would send it: a 429 is waited out (Retry-After)."""
    while True:
        response = requests.request(method, url, timeout=60, **options)
        if response.status_code != 429:
            return response
        time.sleep(float(response.headers.get("Retry-After", "1")))


def _match_in_progress(url: str, anon: Client) -> str:
    """The game id of a ladder match whose job has created the table (the job runs)."""
    found: list[str] = []

    def started() -> bool:
        for match in anon.list_ladder_matches("may_i", status="playing"):
            if requests.get(f"{url}/v1/games/{match.game_id}", timeout=30).status_code == 200:
                found.append(match.game_id)
                return True
        return False

    assert wait_until(started, READY_SECONDS, step=0.5), "no ladder match started"
    return found[0]


def _table_with_house_bots(url: str) -> tuple[str, str]:
    body: dict[str, Any] = {
        "variant": "may_i",
        "seats": 3,
        "options": {"claim_seconds": 600, "turn_seconds": 600},  # only the bots' answers move it
    }
    created = requests.post(f"{url}/v1/games", json=body, timeout=30)
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    person = requests.post(f"{url}/v1/games/{game_id}/seats", json={"name": "Dee"}, timeout=30)
    assert person.status_code == 201, person.text
    for _ in range(2):
        house = requests.post(f"{url}/v1/games/{game_id}/seats", json={"house_bot": "random"}, timeout=30)
        assert house.status_code == 201, house.text
    return game_id, person.json()["token"]


def test_house_bots_answer_within_seconds_while_a_ladder_match_holds_a_worker(tmp_path: Path) -> None:
    env = {"MAYI_DATA_DIR": str(tmp_path / "data"), "MAYI_SCHEDULE_CLOCK_JOBS": "true"}  # the defaults
    with mayi_serve(tmp_path, env, worker=True) as served:
        served.wait_ready()
        url = served.url
        with Client(url) as anon:
            account = anon.register_bot("Silent")
            anon.with_token(account.token).enter_ladder("may_i", max_games=1)  # it never answers
            match_game = _match_in_progress(url, anon)

        game_id, token = _table_with_house_bots(url)
        answers = 0
        match_status = []
        while answers < ANSWERS:
            time.sleep(0.3)  # a person's pace (and within the rate limits of a person's token)
            view = _send("GET", f"{url}/v1/games/{game_id}", headers=auth(token)).json()
            if view["status"] == "finished":
                break
            if not view["legal"]:  # the bots' turn, before this view: wait for the person's next decision
                _send("GET", f"{url}/v1/games/{game_id}/events", params={"after": view["last_event"], "wait": 5})
                continue
            move = next((m for m in view["legal"] if m["type"] == "go_down"), view["legal"][0])
            path, body = move_request(move)
            moved = _send("POST", f"{url}/v1/games/{game_id}/{path}", json=body, headers=auth(token))
            if moved.status_code == 409:  # a bot won the race for the same decision: fair
                continue
            assert moved.status_code == 200, moved.text
            after = moved.json()
            if after["legal"] or after["status"] != "playing":
                continue
            # The house bots must act now: their next event comes within the cap.
            events = f"{url}/v1/games/{game_id}/events"
            page = _send("GET", events, params={"after": after["last_event"], "wait": ANSWER_CAP}).json()
            assert page["events"], (
                f"no house-bot move within {ANSWER_CAP:.0f} s (after event {after['last_event']}) while ladder "
                f"match {match_game} is playing:\n{served.stderr()[-3000:]}"
            )
            answers += 1
            if not match_status:
                match_status.append(requests.get(f"{url}/v1/games/{match_game}", timeout=30).json()["status"])
        assert answers == ANSWERS or view["status"] == "finished"
        assert match_status == ["playing"], "the house bots answered while the match was in progress"
        assert served.stop() == 0, served.stderr()
