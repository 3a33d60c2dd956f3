"""What the rate limits count, and how every limited response announces them.

Play is not counted: a move the game accepts, a decisions poll that lists a decision,
a seat's view with legal moves. Everything else is: reads and polls without a decision,
refused moves, table creation. Every response to a limited request carries the IETF
``RateLimit-Policy`` and ``RateLimit`` header fields (draft-ietf-httpapi-ratelimit-headers-10).
In-process app, real Redis, the limits on.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from http_moves import auth, move_request

from mayi_service.api.app import create_app
from mayi_service.api.limits import policy_names
from mayi_service.config import Settings

DOCS = Path(__file__).resolve().parents[3] / "docs"


def _app(settings: Settings, **limits: Any) -> Any:
    return create_app(dataclasses.replace(settings, rate_limits_enabled=True, **limits)).test_client()


@pytest.fixture
def limited(settings: Settings) -> Any:
    """5 counted requests a minute per token; the address limit far away."""
    return _app(settings, rate_limit_token="5 per minute", rate_limit_address="1000 per minute")


def _game(client: Any, variant: str = "may_i", seats: int = 2) -> dict[str, Any]:
    players = [{"name": f"p{i}"} for i in range(seats)]
    created = client.post("/v1/games", json={"variant": variant, "seats": seats, "players": players})
    assert created.status_code == 201, created.get_json()
    return dict(created.get_json())


def _views(client: Any, game: dict[str, Any]) -> list[dict[str, Any]]:
    return [client.get(f"/v1/games/{game['game_id']}", headers=auth(s["token"])).get_json() for s in game["seats"]]


def _remaining(response: Any, name: str = "token") -> int:
    found = re.fullmatch(rf'"{name}";r=(\d+);t=(\d+)', response.headers["RateLimit"])
    assert found, response.headers["RateLimit"]
    return int(found.group(1))


def test_every_limited_response_announces_its_limits_with_the_default_settings(settings: Settings) -> None:
    client = _app(settings)  # the defaults a user gets
    listed = client.get("/v1/games")
    assert listed.status_code == 200
    assert listed.headers["RateLimit-Policy"] == '"token";q=600;w=60, "address";q=3000;w=60'
    assert re.fullmatch(r'"token";r=599;t=\d+', listed.headers["RateLimit"]), listed.headers["RateLimit"]

    created = client.post("/v1/games", json={"variant": "may_i", "seats": 2})
    assert created.status_code == 201
    policy = created.headers["RateLimit-Policy"]
    for item in ('"create-per-minute";q=10;w=60', '"create-per-day";q=200;w=86400', '"token";q=600;w=60'):
        assert item in policy, policy
    assert re.fullmatch(r'"create-per-minute";r=9;t=\d+', created.headers["RateLimit"]), created.headers["RateLimit"]

    health = client.get("/healthz")  # not limited: nothing announced
    assert "RateLimit" not in health.headers and "RateLimit-Policy" not in health.headers


def test_a_429_announces_the_limit_it_exceeded_and_when_it_lets_requests_in(settings: Settings) -> None:
    client = _app(settings, rate_limit_create="2 per minute")
    statuses = [client.post("/v1/games", json={"variant": "may_i", "seats": 2}).status_code for _ in range(2)]
    assert statuses == [201, 201]
    refused = client.post("/v1/games", json={"variant": "may_i", "seats": 2})
    assert refused.status_code == 429
    retry = int(refused.headers["Retry-After"])
    assert 1 <= retry <= 60, "at most the window"
    assert refused.headers["RateLimit"] == f'"create";r=0;t={retry}'
    assert '"create";q=2;w=60' in refused.headers["RateLimit-Policy"]


def test_accepted_moves_and_reads_of_a_decision_are_not_counted(limited: Any) -> None:
    """Two seats play 40 moves (eight times the limit), each reading its view only when it
    must decide (as a bot told by its decisions poll would), and following each answer."""
    game = _game(limited)
    gid, tokens = game["game_id"], [s["token"] for s in game["seats"]]
    seat = next(i for i, v in enumerate(_views(limited, game)) if v["legal"])
    played = 0
    while played < 40:
        read = limited.get(f"/v1/games/{gid}", headers=auth(tokens[seat]))
        view = read.get_json()
        assert read.status_code == 200 and view["legal"], (played, view)
        while view["legal"] and played < 40:
            path, body = move_request(view["legal"][0])
            answer = limited.post(f"/v1/games/{gid}/{path}", json=body, headers=auth(tokens[seat]))
            assert answer.status_code == 200, (played, answer.get_json())
            played += 1
            view = answer.get_json()
        seat = 1 - seat
    assert _remaining(answer) == 5, "the token's moves were counted"
    assert _remaining(read, "address") >= 990, "the reads of a seat's decisions were counted"


def test_a_token_flooding_refused_moves_is_limited(limited: Any) -> None:
    game = _game(limited)
    views = _views(limited, game)
    idle = next(s for s, v in zip(game["seats"], views, strict=True) if not v["legal"])
    card = next(v for v in views if not v["legal"])["hand"][0]
    path = f"/v1/games/{game['game_id']}/turn/discard"
    statuses = [limited.post(path, json={"card": card}, headers=auth(idle["token"])).status_code for _ in range(7)]
    # Five refused moves are counted; then it is limited.
    assert statuses[:5] == [409] * 5 and statuses[5:] == [429] * 2
    assert (
        "MAYI_RATE_LIMIT_TOKEN"
        in limited.post(path, json={"card": card}, headers=auth(idle["token"])).get_json()["detail"]
    )


def test_reads_of_a_game_count_against_the_address_not_the_token(settings: Settings) -> None:
    """Following a game at full speed (its view after each event, its events) takes as many
    reads as the game makes commits: the token's limit leaves them out, the address's does not."""
    client = _app(settings, rate_limit_token="5 per minute", rate_limit_address="30 per minute")
    game = _game(client)  # counted by the address (1)
    idle = next(s for s, v in zip(game["seats"], _views(client, game), strict=True) if not v["legal"])
    gid, headers = game["game_id"], auth(idle["token"])
    reads = [client.get(f"/v1/games/{gid}", headers=headers) for _ in range(10)]
    reads += [client.get(f"/v1/games/{gid}/events?after=0", headers=headers) for _ in range(10)]
    assert {r.status_code for r in reads} == {200}, "a token's reads of a game were held to its own limit"
    assert reads[-1].headers["RateLimit-Policy"] == '"address";q=30;w=60'
    # The views read and the 20 reads: the idle seat's first view (the other had a decision: free).
    assert _remaining(reads[-1], "address") == 30 - 1 - 1 - 20
    more = [client.get(f"/v1/games/{gid}", headers=headers).status_code for _ in range(10)]
    assert more[:8] == [200] * 8 and more[8:] == [429, 429], more
    assert client.get("/v1/games", headers=auth(game["seats"][0]["token"])).status_code == 429  # the address's


def test_idle_polls_are_counted_and_polls_that_bring_a_decision_are_not(limited: Any) -> None:
    idle_bot = limited.post("/v1/bots", json={"name": "idle"}).get_json()["token"]
    statuses = [limited.get("/v1/bots/me/decisions", headers=auth(idle_bot)).status_code for _ in range(7)]
    assert statuses[:5] == [200] * 5 and statuses[5:] == [429, 429]

    bot = limited.post("/v1/bots", json={"name": "busy"}).get_json()["token"]
    game_id = limited.post("/v1/games", json={"variant": "may_i", "seats": 2}).get_json()["game_id"]
    assert limited.post(f"/v1/games/{game_id}/seats", json={"name": "busy"}, headers=auth(bot)).status_code == 201
    person = limited.post(f"/v1/games/{game_id}/seats", json={"name": "person"}).get_json()["token"]
    for _ in range(20):  # the person plays until the bot must decide
        if limited.get(f"/v1/games/{game_id}", headers=auth(bot)).get_json()["legal"]:
            break
        view = limited.get(f"/v1/games/{game_id}", headers=auth(person)).get_json()
        path, body = move_request(view["legal"][0])
        assert limited.post(f"/v1/games/{game_id}/{path}", json=body, headers=auth(person)).status_code == 200
    polls = [limited.get("/v1/bots/me/decisions", headers=auth(bot)) for _ in range(12)]
    assert {p.status_code for p in polls} == {200} and all(p.get_json()["decisions"] for p in polls)
    assert _remaining(polls[-1]) >= 3, "polls that bring a decision were counted"


def test_a_seats_answer_carries_its_next_decisions_key_which_another_seats_answer_leaves_as_it_is(
    client: Any,
) -> None:
    """Shanghai: the discarder may claim its own discard (lowest priority). The answer to its
    discard lists that claim under a key; a claim sent with that key is applied after another
    seat answered the same upcard, where one sent on the answer's version is refused."""
    game = _game(client, "shanghai", 3)
    gid, tokens = game["game_id"], [s["token"] for s in game["seats"]]
    for _ in range(60):
        views = _views(client, game)
        seat = next(i for i, v in enumerate(views) if v["legal"])
        move = views[seat]["legal"][0]
        discards = [m for m in views[seat]["legal"] if m["type"] == "discard"]
        if discards:
            move = discards[0]
        path, body = move_request(move)
        answer = client.post(f"/v1/games/{gid}/{path}", json=body, headers=auth(tokens[seat]))
        assert answer.status_code == 200, answer.get_json()
        after = answer.get_json()
        if move["type"] == "discard" and any(m["type"] == "claim" for m in after["legal"]):
            break
    else:
        pytest.fail("no discard was followed by the discarder's own claim")
    key, version = after["key"], after["version"]
    assert key and answer.headers["ETag"]
    other = next(
        i for i, v in enumerate(_views(client, game)) if i != seat and any(m["type"] == "claim" for m in v["legal"])
    )
    passed = client.post(f"/v1/games/{gid}/claims", json={"claim": False}, headers=auth(tokens[other]))
    assert passed.status_code == 200, passed.get_json()
    stale = client.post(
        f"/v1/games/{gid}/claims", json={"claim": False}, headers={**auth(tokens[seat]), "If-Match": str(version)}
    )
    assert stale.status_code == 412, "the version moved on with the other seat's answer"
    keyed = client.post(
        f"/v1/games/{gid}/claims", json={"claim": False}, headers={**auth(tokens[seat]), "If-Match": f"key:{key}"}
    )
    assert keyed.status_code == 200, keyed.get_json()


@pytest.mark.parametrize("doc", ["api.md", "bots.md"])
def test_the_docs_state_every_limit_by_its_name_and_setting(doc: str) -> None:
    text = (DOCS / doc).read_text(encoding="utf-8")
    for name in policy_names(Settings()).values():
        assert f"`{name}`" in text, f"docs/{doc} does not name the limit {name}"
    for setting in (
        "rate_limit_token",
        "rate_limit_address",
        "rate_limit_create",
        "rate_limit_bots",
        "max_waits_per_client",
        "max_streams_per_client",
        "max_waiting_per_process",
        "max_open_tables_per_address",
    ):
        assert f"`MAYI_{setting.upper()}`" in text, f"docs/{doc} does not name MAYI_{setting.upper()}"


def _limit_reads(redis_client: Any, request: Any) -> list[str]:
    """The rate-limit commands Redis receives while ``request()`` runs (its MONITOR feed,
    up to an ``ECHO`` sent after the request)."""
    with redis_client.monitor() as feed:
        request()
        redis_client.echo("mayi-test-done")
        seen = []
        for command in feed.listen():
            text = command["command"]
            if "mayi-test-done" in text:
                return seen
            if ":ratelimit" in text and command.get("client_type") != "lua":  # (not a script's own calls)
                seen.append(text.split(" ", 1)[0].upper())
    raise AssertionError("the MONITOR feed ended")


def test_a_request_reads_each_limits_window_once(settings: Settings, redis_client: Any) -> None:
    """An accepted move (not counted) is tested against the token and address limits and
    announces the token's state: two window reads, not three. A counted request reads the
    window it was counted against afresh, so its ``RateLimit`` shows the count."""
    client = _app(settings)  # the defaults
    game = _game(client)
    views = _views(client, game)
    seat = next(i for i, v in enumerate(views) if v["legal"])
    path, body = move_request(views[seat]["legal"][0])
    token = game["seats"][seat]["token"]
    answers: list[Any] = []

    def move() -> None:
        answers.append(client.post(f"/v1/games/{game['game_id']}/{path}", json=body, headers=auth(token)))

    assert _limit_reads(redis_client, move) == ["EVALSHA", "EVALSHA"]
    assert answers[0].status_code == 200 and _remaining(answers[0]) == 600, answers[0].headers

    def listing() -> None:
        answers.append(client.get("/v1/games", headers=auth(token)))

    # Tested twice, counted twice, the token's window read again after its count.
    assert len(_limit_reads(redis_client, listing)) == 5
    assert _remaining(answers[1]) == 599, answers[1].headers
