"""The SDK against the real service on a loopback socket (real Redis behind it)."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from proxies import ThreadedListener, read_http_message
from servers import LiveServer

from mayi_sdk import Client, GameView, LegalMove, errors, operations
from mayi_service.api.app import create_app
from mayi_service.config import Settings

ROOT = Path(__file__).resolve().parents[2]
SLOW = {"claim_seconds": 600, "turn_seconds": 600}
SEED = "5eed" * 8


@pytest.fixture
def base(live_server: LiveServer) -> str:
    return live_server.url


def _new_game(base: str, seats: int = 2, variant: str = "may_i", **test: Any) -> tuple[str, list[Client]]:
    with Client(base) as anon:
        created = anon.create_game(
            variant, seats, options=SLOW, players=[f"P{i}" for i in range(seats)], test={"seed": SEED, **test}
        )
    return created.game_id, [Client(base, s.token) for s in created.seats]


def _choose(view: GameView) -> LegalMove:
    """A simple policy: go down and lay off when listed, draw from the stock, pass, discard."""
    for kind in ("go_down", "lay_off"):
        if view.legal_of(kind):
            return view.legal_of(kind)[0]
    draws = [m for m in view.legal_of("draw") if m.body["source"] == "stock"]
    passes = [m for m in view.legal_of("claim") if not m.body["claim"]]
    return (draws or passes or view.legal)[0]


def _play_to_the_end(game_id: str, seats: list[Client], limit: int = 5000) -> GameView:
    view = seats[0].get_game(game_id)
    for _ in range(limit):
        if view.status == "finished":
            return view
        pending = view.claim_window.pending if view.claim_window else []
        actor = pending[0] if pending else view.actor
        assert actor is not None
        mine = seats[actor].get_game(game_id)
        if mine.legal:
            view = seats[actor].play(game_id, _choose(mine))
        else:  # pragma: no cover - every decision belongs to some seat
            raise AssertionError(f"seat {actor} has no legal move in phase {mine.phase}")
    raise AssertionError("the game did not end")


def test_every_api_operation_has_one_sdk_method_and_no_method_calls_an_unknown_path() -> None:
    spec = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    in_spec = {
        (method.upper(), path) for path, item in spec["paths"].items() for method in item if method != "parameters"
    }
    in_sdk = set(operations())
    assert in_sdk == in_spec, f"no SDK method: {sorted(in_spec - in_sdk)}; not in the spec: {sorted(in_sdk - in_spec)}"


def test_sdk_method_names_are_the_operation_ids_in_snake_case() -> None:
    spec = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    for (method, path), name in operations().items():
        operation_id = spec["paths"][path][method.lower()]["operationId"]
        assert re.sub(r"(?<!^)([A-Z])", r"_\1", operation_id).lower() == name, (operation_id, name)


def test_a_whole_game_through_the_sdk_with_typed_results(base: str) -> None:
    game_id, seats = _new_game(base, start_round=7)
    first = seats[0].get_game(game_id)
    assert first.status == "playing" and first.round is not None and first.round.number == 7
    assert first.round.contract.runs == 3 and len(first.hand) == 12
    assert all(isinstance(m, LegalMove) for m in first.legal)
    final = _play_to_the_end(game_id, seats)
    assert final.status == "finished" and final.places
    replay = Client(base).get_replay(game_id)
    assert replay.seed == SEED and replay.events[0].seq == 1
    assert [e.seq for e in replay.events] == list(range(1, len(replay.events) + 1))
    listed = Client(base).list_games(status="finished")
    assert game_id in [g.id for g in listed.games]


def test_errors_are_the_documented_exceptions_with_the_servers_detail(base: str) -> None:
    game_id, seats = _new_game(base)
    view = seats[0].get_game(game_id)
    waiting = seats[1] if view.actor == 0 else seats[0]
    with pytest.raises(errors.NotYourTurn) as caught:  # the first upcard is offered to another seat
        waiting.pass_upcard(game_id)
    assert caught.value.status_code == 409 and caught.value.code == "not_your_turn"
    assert str(caught.value) == caught.value.detail and "seat" in caught.value.detail
    with pytest.raises(errors.NotFound):
        Client(base).get_game("no-such-game")
    with pytest.raises(errors.Forbidden):
        Client(base, "mayi_seat_not-a-real-token").get_game(game_id)
    with pytest.raises(errors.ValidationError) as invalid:
        Client(base).create_game("may_i", seats=9)
    assert any("seats" in e for e in invalid.value.errors)
    with pytest.raises(errors.GameNotFinished):
        Client(base).get_replay(game_id)


def test_the_stock_draw_while_claims_are_open_raises_claims_open_with_retry_after(base: str) -> None:
    # Shanghai: the first player chooses between the upcard and the stock; a stock draw must
    # wait for the other seats' answers to the upcard.
    game_id, seats = _new_game(base, seats=3, variant="shanghai")
    view = seats[0].get_game(game_id)
    assert view.actor is not None
    with pytest.raises(errors.ClaimsOpen) as caught:
        seats[view.actor].draw_card(game_id, "stock")
    assert caught.value.retry_after is not None and caught.value.retry_after > 0
    assert caught.value.closes_at is not None


def test_an_idempotency_key_sent_twice_applies_once(base: str) -> None:
    game_id, seats = _new_game(base, seats=3, variant="shanghai")
    view = seats[0].get_game(game_id)
    actor = seats[view.actor or 0]
    first = actor.draw_card(game_id, "discard", idempotency_key="draw-once")
    again = actor.draw_card(game_id, "discard", idempotency_key="draw-once")
    assert again.version == first.version == view.version + 1
    assert again.hand == first.hand


class _DroppingProxy(ThreadedListener):
    """A TCP proxy that forwards each request to ``target`` but, for the first ``drops``
    connections, closes the client's connection instead of returning the answer: the
    server has applied the request, the client never hears of it."""

    def __init__(self, target_port: int, drops: int) -> None:
        self.target_port = target_port
        self.drops = drops
        self.forwarded = 0
        super().__init__()

    def handle(self, conn: socket.socket) -> None:
        with conn, socket.create_connection(("127.0.0.1", self.target_port)) as upstream:
            request = read_http_message(conn)
            if not request:
                return
            upstream.sendall(request)
            answer = read_http_message(upstream)
            self.forwarded += 1
            if self.drops > 0:
                self.drops -= 1
                conn.shutdown(socket.SHUT_RDWR)  # the answer is lost
                return
            conn.sendall(answer)


@pytest.fixture
def proxy(live_server: LiveServer) -> Iterator[_DroppingProxy]:
    port = int(live_server.url.rsplit(":", 1)[1])
    found = _DroppingProxy(port, drops=1)
    yield found
    found.close()


def test_an_action_whose_answer_is_lost_is_retried_and_applied_once(base: str, proxy: _DroppingProxy) -> None:
    game_id, seats = _new_game(base, seats=3, variant="shanghai")
    view = seats[0].get_game(game_id)
    token = seats[view.actor or 0].token
    through_proxy = Client(f"http://127.0.0.1:{proxy.port}", token, backoff=0.01)
    after = through_proxy.draw_card(game_id, "discard")
    assert proxy.forwarded == 2  # the first answer was lost; the retry got the stored one
    assert after.version == view.version + 1  # applied once
    events = Client(base).get_events(game_id, 0).events
    assert [e.type for e in events].count("took_upcard") == 1, [e.type for e in events]


def test_a_rate_limited_call_is_retried_after_retry_after(settings: Settings) -> None:
    limited = create_app(
        Settings(
            **{
                **settings.__dict__,
                "rate_limits_enabled": True,
                "rate_limit_address": "3 per second",
                "rate_limit_token": "100 per second",
            }
        )
    )
    server = LiveServer(limited)
    try:
        with Client(server.url, max_retries=5) as client:
            created = client.create_game("may_i", 2, options=SLOW, players=["A", "B"])
            pages = [client.get_game(created.game_id).version for _ in range(6)]  # over 3 per second
        assert pages == [created.game.version] * 6
        with Client(server.url, max_retries=0) as impatient:
            with pytest.raises(errors.RateLimited) as caught:
                for _ in range(10):
                    impatient.get_game(created.game_id)
            assert caught.value.status_code == 429
    finally:
        server.stop()


@pytest.mark.parametrize("sse", [True, False], ids=["sse", "long-poll"])
def test_follow_events_sees_every_event_to_the_end(base: str, sse: bool) -> None:
    game_id, seats = _new_game(base, start_round=7)
    seen: list[int] = []

    def follow() -> None:
        seen.extend(e.seq for e in Client(base).follow_events(game_id, sse=sse, wait=5))

    follower = threading.Thread(target=follow)
    follower.start()
    _play_to_the_end(game_id, seats)
    follower.join(120)
    assert not follower.is_alive()
    total = Client(base).get_game(game_id).last_event
    assert seen == list(range(1, total + 1))


def test_the_readme_sdk_example_runs_as_written(base: str, capsys: pytest.CaptureFixture[str]) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## The Python SDK", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code.replace("http://127.0.0.1:8000", base), "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "round_started" in printed and "dealt" in printed
