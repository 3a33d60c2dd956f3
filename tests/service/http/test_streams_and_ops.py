"""Event streams at their limits, conditional actions, and operator-facing behaviour."""

from __future__ import annotations

import dataclasses
import threading

import requests
from http_moves import auth
from servers import LiveServer

from mayi_service.api.app import create_app
from mayi_service.config import Settings

FINISHED_TABLE = {
    "variant": "may_i",
    "seats": 2,
    "players": [{"name": "Ann"}, {"name": "Bob"}],
    "options": {"max_reshuffles": 0, "max_turns": 10},
    "test": {"seed": "ab" * 16, "start_round": 7},
}


def _play_out(client, game_id: str, tokens: list[str]) -> None:
    """Play a short game to its end: the first legal move of whoever must act."""
    for _ in range(200):
        view = client.get(f"/v1/games/{game_id}").get_json()
        if view["status"] == "finished":
            return
        seats = (view["claim_window"] or {}).get("pending") or [view["actor"]]
        seat = seats[0]
        legal = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).get_json()["legal"]
        move = next((m for m in legal if m["type"] in ("claim", "discard")), legal[0])
        path = {"claim": "claims", "discard": "turn/discard", "draw": "turn/draw"}[move["type"]]
        body = {k: v for k, v in move.items() if k != "type"}
        if move["type"] == "claim":
            body = {"claim": False}
        assert client.post(f"/v1/games/{game_id}/{path}", json=body, headers=auth(tokens[seat])).status_code == 200
    raise AssertionError("the game did not end")


def test_a_finished_game_with_nothing_new_answers_the_stream_with_204(client):
    created = client.post("/v1/games", json=FINISHED_TABLE).get_json()
    game_id, tokens = created["game_id"], [s["token"] for s in created["seats"]]
    _play_out(client, game_id, tokens)
    last = client.get(f"/v1/games/{game_id}/events?after=0").get_json()["last"]
    done = client.get(f"/v1/games/{game_id}/events/stream", headers={"Last-Event-ID": str(last)})
    assert done.status_code == 204, "an EventSource stops reconnecting on 204"
    # Reconnecting before the end still gets the last events (read from the archive), then the stream ends.
    tail = client.get(f"/v1/games/{game_id}/events/stream", headers={"Last-Event-ID": str(last - 2)})
    assert tail.status_code == 200
    text = tail.get_data(as_text=True)
    assert f"id: {last}\n" in text and "event: game_ended" in text


def _two_seat_game(server: LiveServer) -> dict:
    body = {"variant": "may_i", "seats": 2, "players": [{"name": "a"}, {"name": "b"}]}
    return requests.post(f"{server.url}/v1/games", json=body, timeout=5).json()


def test_open_streams_are_capped_per_token(settings):
    app = create_app(
        dataclasses.replace(settings, max_streams_per_client=2, sse_max_seconds=3, sse_heartbeat_seconds=1)
    )
    server = LiveServer(app)
    try:
        created = _two_seat_game(server)
        url = f"{server.url}/v1/games/{created['game_id']}/events/stream"
        headers = auth(created["seats"][0]["token"])
        open_streams = [requests.get(url, headers=headers, stream=True, timeout=10) for _ in range(2)]
        assert [r.status_code for r in open_streams] == [200, 200]
        refused = requests.get(url, headers=headers, stream=True, timeout=10)
        assert refused.status_code == 429
        assert refused.json()["code"] == "rate_limited" and "at most 2" in refused.json()["detail"]
        assert "Retry-After" in refused.headers
        other_seat = requests.get(url, headers=auth(created["seats"][1]["token"]), stream=True, timeout=10)
        assert other_seat.status_code == 200, "the cap is per token"
        for r in [*open_streams, other_seat]:
            r.close()
        # A closed stream frees its slot once the server notices (at its next heartbeat).
        for _ in range(50):
            again = requests.get(url, headers=headers, stream=True, timeout=10)
            if again.status_code == 200:
                again.close()
                break
            threading.Event().wait(0.2)
        else:
            raise AssertionError("closed streams never freed their slots")
    finally:
        server.stop()


def test_if_match_star_and_etags_of_another_game(client):
    body = {"variant": "may_i", "seats": 2, "players": [{"name": "a"}, {"name": "b"}]}
    first, second = client.post("/v1/games", json=body).get_json(), client.post("/v1/games", json=body).get_json()
    headers = auth(first["seats"][0]["token"])
    url = f"/v1/games/{first['game_id']}/claims"
    other_etag = client.get(f"/v1/games/{second['game_id']}").headers["ETag"]
    refused = client.post(url, json={"claim": False}, headers={**headers, "If-Match": other_etag})
    assert refused.status_code == 412 and refused.get_json()["code"] == "version_conflict"
    own_etag = client.get(f"/v1/games/{first['game_id']}", headers=headers).headers["ETag"]
    assert client.post(url, json={"claim": False}, headers={**headers, "If-Match": "*"}).status_code == 200
    stale = client.post(url, json={"claim": False}, headers={**headers, "If-Match": own_etag})
    assert stale.status_code == 412, "the ETag names the version before the pass"


def test_metrics_can_require_the_operators_token(settings):
    client = create_app(dataclasses.replace(settings, metrics_token="s3cret")).test_client()
    refused = client.get("/metrics")
    assert refused.status_code == 401 and refused.get_json()["code"] == "unauthorized"
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    allowed = client.get("/metrics", headers={"Authorization": "Bearer s3cret"})
    assert allowed.status_code == 200 and b"mayi_games" in allowed.data


def test_an_unreachable_redis_is_a_503_problem_not_a_500():
    settings = Settings(redis_url="redis://127.0.0.1:1/0", rate_limits_enabled=False, schedule_clock_jobs=False)
    client = create_app(settings).test_client()
    response = client.get("/v1/games")
    assert response.status_code == 503
    assert response.content_type == "application/problem+json"
    assert response.get_json()["code"] == "unavailable" and response.headers["Retry-After"] == "2"
    assert client.get("/healthz").get_json() == {"status": "unavailable", "redis": False}


def test_a_rounds_events_move_to_the_archive_when_it_ends(client, app, redis_client, settings):
    """The stream of a game in play holds only its current round: the rounds that have
    ended are in the compressed archive, and every reader sees one contiguous log."""
    table = dict(FINISHED_TABLE, test={"seed": "cd" * 16, "start_round": 6})
    created = client.post("/v1/games", json=table).get_json()
    game_id, tokens = created["game_id"], [s["token"] for s in created["seats"]]
    repo = app.extensions["mayi"].games.repo
    for _ in range(200):  # play until round 7 starts (round 6 ends at its turn limit)
        view = client.get(f"/v1/games/{game_id}").get_json()
        if view["round"]["number"] == 7:
            break
        seat = ((view["claim_window"] or {}).get("pending") or [view["actor"]])[0]
        legal = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).get_json()["legal"]
        move = next((m for m in legal if m["type"] in ("claim", "discard")), legal[0])
        path = {"claim": "claims", "discard": "turn/discard", "draw": "turn/draw"}[move["type"]]
        body = {"claim": False} if move["type"] == "claim" else {k: v for k, v in move.items() if k != "type"}
        assert client.post(f"/v1/games/{game_id}/{path}", json=body, headers=auth(tokens[seat])).status_code == 200
    archived_to = int(redis_client.hget(repo.game_key(game_id), "archived_to"))
    stream = [int(rid.split(b"-")[0]) for rid, _ in redis_client.xrange(repo.events_key(game_id))]
    assert archived_to > 0 and all(seq > archived_to for seq in stream), "only the current round is streamed"
    everything = client.get(f"/v1/games/{game_id}/events?after=0").get_json()
    seqs = [e["seq"] for e in everything["events"]]
    assert seqs == list(range(1, everything["last"] + 1)), "one contiguous log across archive and stream"
    assert any(e["type"] == "round_ended" for e in everything["events"])
    middle = client.get(f"/v1/games/{game_id}/events?after={archived_to - 3}").get_json()["events"]
    last = everything["last"]
    assert [e["seq"] for e in middle] == list(range(archived_to - 2, last + 1)), "across the archive's edge"
    # Private data stays private in archived events too.
    dealt = [e for e in everything["events"] if e["type"] == "dealt" and e["seq"] <= archived_to]
    assert dealt and all("private" not in e for e in dealt)


def test_waiting_long_polls_are_capped_per_token(settings):
    app = create_app(dataclasses.replace(settings, max_waits_per_client=2))
    server = LiveServer(app)
    try:
        created = _two_seat_game(server)
        game_id = created["game_id"]
        headers = auth(created["seats"][0]["token"])
        last = requests.get(f"{server.url}/v1/games/{game_id}/events", timeout=5).json()["last"]
        url = f"{server.url}/v1/games/{game_id}/events?after={last}&wait=3"
        results: list[int] = []
        waiting = [
            threading.Thread(target=lambda: results.append(requests.get(url, headers=headers, timeout=10).status_code))
            for _ in range(2)
        ]
        for t in waiting:
            t.start()
        threading.Event().wait(0.5)  # both are waiting now
        refused = requests.get(url, headers=headers, timeout=10)
        assert refused.status_code == 429 and "at most 2" in refused.json()["detail"]
        # A request that need not wait is never refused.
        assert requests.get(url.replace("wait=3", "wait=0"), headers=headers, timeout=10).status_code == 200
        for t in waiting:
            t.join(10)
        assert results == [200, 200]
        assert requests.get(url.replace("wait=3", "wait=0.2"), headers=headers, timeout=10).status_code == 200
    finally:
        server.stop()
