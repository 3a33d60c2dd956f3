"""Hidden information and tokens (API-SPEC "Auth"; engine ``views.py``).

* Over random games played through the API, at every step: each seat's view,
  its events (long-poll list and SSE), its ETag and every error body hold that
  seat's own hand and nothing of another seat's hand, the stock or the seed
  (checked against the engine state read straight from Redis). Spectators get
  no hand and no private event data. The seed appears only in the replay, once
  the game is over.
* Tokens are never stored in clear: a scan of every key and value in Redis
  after creating games, taking seats and playing finds none of them.
* A token acts only for its own seat of its own game; malformed credentials
  get 401 with ``WWW-Authenticate``; tokens carry at least 128 random bits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import random
import re
import threading
import time
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from http_moves import auth, move_request

from mayi_engine import legal_moves
from mayi_engine.cards import card_codes
from mayi_engine.moves import move_to_json
from mayi_engine.state import State, loads
from mayi_service.api.app import create_app

SLOW = {"claim_seconds": 86400, "turn_seconds": 86400}
PROBLEM = "application/problem+json"
ETAG = re.compile(r'^"[A-Za-z0-9_-]+-\d+-(\d+|p)"$')
TOKEN = re.compile(r"^mayi_seat_(?P<random>[A-Za-z0-9_-]+)$")
#: Keys no view may hold anywhere: they would reveal hidden cards or the shuffle.
HIDDEN_KEYS = {"hands", "stock", "seed", "deck", "private"}


# ---------------------------------------------------------------------------
# Helpers


def create(client: Any, variant: str, seats: int, **extra: Any) -> tuple[str, list[str]]:
    body = {"variant": variant, "seats": seats, "players": [{"name": f"P{i}"} for i in range(seats)], **extra}
    r = client.post("/v1/games", json=body)
    assert r.status_code == 201, r.get_data(as_text=True)
    data = r.get_json()
    return data["game_id"], [s["token"] for s in sorted(data["seats"], key=lambda s: s["seat"])]


def stored_state(redis_client: Any, prefix: str, game_id: str) -> State:
    return loads(redis_client.hget(f"{prefix}:{{{game_id}}}:game", "state"))


def walk(data: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every (path, value) in a JSON document, dict keys included as values of ``path/<key>``."""
    yield path, data
    if isinstance(data, dict):
        for key, value in data.items():
            yield from walk(value, f"{path}/{key}")
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from walk(value, f"{path}[{i}]")


def keys_of(data: Any) -> set[str]:
    return {p.rsplit("/", 1)[-1] for p, _ in walk(data) if "/" in p and not p.endswith("]")}


class Secrets:
    """What a seat must not learn, read from the engine state in Redis."""

    def __init__(self, state: State, seat: int | None) -> None:
        self.state = state
        self.seat = seat
        self.seed = state.seed.hex()
        self.stock = card_codes(state.stock)
        self.others = [card_codes(h) for i, h in enumerate(state.hands) if i != seat]

    def check_text(self, text: str, what: str) -> None:
        """No raw secret in a response (body or header)."""
        assert self.seed not in text.lower(), f"{what}: the seed leaked"
        if len(self.stock) >= 3:
            assert "".join(self.stock) not in text, f"{what}: the stock order leaked"
            assert json.dumps(self.stock) not in text, f"{what}: the stock leaked"
        for hand in self.others:
            if len(hand) >= 3:
                assert "".join(hand) not in text, f"{what}: another seat's hand leaked"

    def check_json(self, data: Any, what: str) -> None:
        """No list in the document is another seat's hand (or the stock)."""
        hands = [sorted(h) for h in self.others if len(h) >= 5]
        stock = sorted(self.stock)
        for path, value in walk(data):
            if isinstance(value, list) and len(value) >= 5 and all(isinstance(v, str) for v in value):
                assert sorted(value) not in hands, f"{what}: another seat's hand at {path}"
                assert sorted(value) != stock, f"{what}: the stock at {path}"


def check_view(response: Any, secrets: Secrets, seat: int | None) -> dict[str, Any]:
    assert response.status_code == 200, response.get_data(as_text=True)
    text = response.get_data(as_text=True)
    view = json.loads(text)
    what = f"view of seat {seat}"
    secrets.check_text(text, what)
    for name, value in response.headers.items():
        secrets.check_text(f"{name}: {value}", f"{what} header")
    secrets.check_json(view, what)
    assert not keys_of(view) & HIDDEN_KEYS, f"{what}: keys {keys_of(view) & HIDDEN_KEYS}"
    if "ETag" in response.headers:
        assert ETAG.match(response.headers["ETag"]), response.headers["ETag"]
    if seat is None:
        assert "hand" not in view and "legal" not in view and view.get("seat") is None
    else:
        assert view["seat"] == seat
        assert view["hand"] == card_codes(secrets.state.hands[seat])
        counts = [s["hand_count"] for s in view["seats"]]
        assert counts == [len(h) for h in secrets.state.hands]
    return view


def check_events(events: list[dict[str, Any]], raw: list[dict[str, Any]], seat: int | None, what: str) -> None:
    """Events as ``seat`` gets them: its own private data, nobody else's."""
    assert [e["seq"] for e in events] == [e["seq"] for e in raw]
    for event, full in zip(events, raw, strict=True):
        if seat is not None and full.get("seat") == seat and "private" in full:
            assert event["private"] == full["private"], f"{what}: own private data missing at {event['seq']}"
        else:
            assert "private" not in event, f"{what}: event {event['seq']} shows seat {full.get('seat')}'s secret"
        assert {k: v for k, v in event.items() if k != "private"} == {k: v for k, v in full.items() if k != "private"}


def raw_events(redis_client: Any, prefix: str, game_id: str, after: int = 0) -> list[dict[str, Any]]:
    """Stored events after ``after`` (every private detail): the compressed archive (the
    rounds that have ended), then the stream."""
    archived = redis_client.get(f"{prefix}:{{{game_id}}}:archive")
    rows = redis_client.xrange(f"{prefix}:{{{game_id}}}:events", min=f"{after + 1}-0")
    old = [] if archived is None else [e for e in json.loads(zlib.decompress(archived)) if e["seq"] > after]
    return old + [json.loads(fields[b"e"]) for _, fields in rows]


def sse_events(client: Any, url: str, headers: dict[str, str], last: int) -> tuple[list[dict[str, Any]], str]:
    """Read the SSE stream from the start up to event ``last``; return the events and all the text read."""
    response = client.get(f"{url}/events/stream", headers=headers, buffered=False)
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    everything = pending = ""
    events: list[dict[str, Any]] = []
    try:
        for chunk in response.response:
            text = chunk.decode() if isinstance(chunk, bytes) else chunk
            everything += text
            pending += text
            while "\n\n" in pending:
                block, _, pending = pending.partition("\n\n")
                fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
                if "data" in fields:
                    event = json.loads(fields["data"])
                    assert fields["id"] == str(event["seq"]) and fields["event"] == event["type"]
                    events.append(event)
            if events and events[-1]["seq"] >= last:
                break
    finally:
        response.close()
    return events, everything


def pick_move(rnd: random.Random, legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A random legal move, leaning towards melding (so rounds end) and the stock."""
    for kind in ("go_down", "lay_off"):
        found = [m for m in legal if m["type"] == kind]
        if found and rnd.random() < 0.9:
            return rnd.choice(found)
    if any(m.get("source") == "stock" for m in legal) and rnd.random() < 0.7:
        return {"type": "draw", "source": "stock"}
    claims = [m for m in legal if m["type"] == "claim"]
    if claims and len(claims) == len(legal):
        return claims[0] if rnd.random() < 0.25 else claims[1]
    return rnd.choice(legal)


class Probe:
    """Plays a game through the test client, checking every response for leaks."""

    def __init__(self, client: Any, redis_client: Any, prefix: str, game_id: str, tokens: list[str]) -> None:
        self.client = client
        self.redis = redis_client
        self.prefix = prefix
        self.game_id = game_id
        self.tokens = tokens
        self.url = f"/v1/games/{game_id}"
        self.seed = stored_state(redis_client, prefix, game_id).seed.hex()
        self.after: dict[int | None, int] = {}
        self.checked = {"views": 0, "events": 0, "sse": 0, "errors": 0}

    def headers(self, seat: int | None) -> dict[str, str]:
        return {} if seat is None else auth(self.tokens[seat])

    def state(self) -> State:
        return stored_state(self.redis, self.prefix, self.game_id)

    def views(self, state: State) -> dict[int | None, dict[str, Any]]:
        out = {}
        for seat in [None, *range(state.players)]:
            response = self.client.get(self.url, headers=self.headers(seat))
            out[seat] = check_view(response, Secrets(state, seat), seat)
            self.checked["views"] += 1
        return out

    def events(self, state: State) -> None:
        """Each seat's (and a spectator's) new events, long-poll style."""
        seats = [None, *range(state.players)]
        start = min(self.after.get(seat, 0) for seat in seats)
        raw = raw_events(self.redis, self.prefix, self.game_id, start)
        for seat in seats:
            after = self.after.get(seat, 0)
            r = self.client.get(f"{self.url}/events", query_string={"after": after}, headers=self.headers(seat))
            assert r.status_code == 200
            text = r.get_data(as_text=True)
            Secrets(state, seat).check_text(text, f"events of seat {seat}")
            events = json.loads(text)["events"]
            check_events(events, [e for e in raw if e["seq"] > after][:1000], seat, "events")
            if events:
                self.after[seat] = events[-1]["seq"]
            self.checked["events"] += len(events)

    def sse(self, state: State) -> None:
        raw = raw_events(self.redis, self.prefix, self.game_id)
        for seat in [None, *range(state.players)]:
            events, text = sse_events(self.client, self.url, self.headers(seat), raw[-1]["seq"])
            check_events(events, raw, seat, "SSE")
            Secrets(state, seat).check_text(text, f"SSE of seat {seat}")
            self.checked["sse"] += len(events)

    def errors(self, rnd: random.Random, state: State) -> None:
        """Moves each seat may never make now; the refusals must not leak either."""
        for seat in range(state.players):
            others = [c for i, h in enumerate(state.hands) if i != seat for c in card_codes(h)]
            mine = set(card_codes(state.hands[seat]))
            foreign = [c for c in others if c not in mine]
            probes: list[tuple[str, dict[str, Any]]] = []
            if foreign:
                probes.append(("turn/discard", {"card": rnd.choice(foreign)}))
                probes.append(("melds", {"melds": [foreign[:3], foreign[3:6] or foreign[:3]]}))
                probes.append(("lay-offs", {"lay_offs": [{"meld": 0, "cards": foreign[:2]}]}))
            if seat != state.turn:
                probes.append(("turn/draw", {"source": "stock"}))
            elif state.phase.value == "draw":
                probes.append(("claims", {"claim": True}))
            secrets = Secrets(state, seat)
            for path, body in probes:
                r = self.client.post(f"{self.url}/{path}", json=body, headers=self.headers(seat))
                assert r.status_code in (409, 422), (path, body, r.get_data(as_text=True))
                assert r.mimetype == PROBLEM
                problem = r.get_json()
                assert {"type", "title", "status", "detail", "code"} <= problem.keys()
                secrets.check_text(r.get_data(as_text=True), f"error {problem['code']}")
                for name, value in r.headers.items():
                    secrets.check_text(f"{name}: {value}", "error header")
                assert not keys_of(problem) & HIDDEN_KEYS
                self.checked["errors"] += 1
        assert self.state().moves == state.moves, "a refused probe changed the game"

    def play(self, rnd: random.Random, steps: int, every: int = 1, more_rounds: int = 0) -> int:
        """Up to ``steps`` random legal moves. Every ``every`` steps: every seat's view and
        its new events; every fourth of those, a set of refused moves; every sixteenth,
        the SSE streams. Each action's response is checked too (between the full checks
        the moves come from the engine state). With ``more_rounds``, stop a few checks
        into that many rounds beyond the first. Returns the moves made."""
        done = extra = 0
        state = self.state()
        first_round = state.round
        for step in range(steps):
            if state.finished:
                break
            if more_rounds and state.round >= first_round + more_rounds:
                extra += 1
                if extra > 4 * every:
                    break
            if step % every == 0:
                views = self.views(state)
                legal = {seat: view["legal"] for seat, view in views.items() if seat is not None}
                self.events(state)
                if step % (every * 4) == 0:
                    self.errors(rnd, state)
                if step % (every * 16) == 0:
                    self.sse(state)
            else:
                now = time.time()
                legal = {
                    seat: [move_to_json(m) for m in legal_moves(state, seat, now)] for seat in range(state.players)
                }
            answering = [seat for seat, moves in legal.items() if moves and moves[0]["type"] == "claim"]
            if answering and state.phase.value == "draw" and rnd.random() < 0.9:
                seat = rnd.choice(answering)  # settle the claim window, so the stock is drawn from
            else:
                seat = rnd.choice([seat for seat, moves in legal.items() if moves])
            path, body = move_request(pick_move(rnd, legal[seat]))
            r = self.client.post(f"{self.url}/{path}", json=body, headers=self.headers(seat))
            state = self.state()
            check_view(r, Secrets(state, seat), seat)
            done += 1
        self.views(state)
        self.events(state)
        self.sse(state)
        return done


# ---------------------------------------------------------------------------
# Hidden information


@pytest.mark.parametrize(
    ("variant", "seats", "seed", "options", "steps", "every"),
    [
        ("may_i", 4, 11, SLOW, 80, 1),
        ("shanghai", 5, 12, SLOW, 80, 1),
        # No stock rebuilds: round 1 ends (its hands are shown) and round 2 is dealt while we check.
        ("shanghai", 4, 13, SLOW | {"max_reshuffles": 0}, 600, 3),
    ],
)
def test_views_events_and_errors_never_show_hidden_cards(
    client: Any,
    settings: Any,
    redis_client: Any,
    variant: str,
    seats: int,
    seed: int,
    options: dict[str, Any],
    steps: int,
    every: int,
) -> None:
    # A rated table: its seed is secret, drawn by the service.
    game_id, tokens = create(client, variant, seats, options=options)
    probe = Probe(client, redis_client, settings.key_prefix, game_id, tokens)
    next_round = 1 if options.get("max_reshuffles") == 0 else 0
    moves = probe.play(random.Random(seed), steps=steps, every=every, more_rounds=next_round)
    checks = moves // every
    assert checks >= 30
    assert probe.checked["views"] >= checks * (seats + 1)
    assert probe.checked["errors"] > checks and probe.checked["sse"] > 0
    # the game moved on: several seats drew from the stock (private cards the others must not see)
    raw = raw_events(redis_client, settings.key_prefix, game_id)
    assert len({e["seat"] for e in raw if e["type"] == "drew"}) >= 2
    if next_round:
        assert probe.state().round == 2 and moves < steps
        assert [e["type"] for e in raw].count("dealt") == 2 * seats


def test_seed_only_in_the_replay_after_the_game_ends(client: Any, settings: Any, redis_client: Any) -> None:
    # The last round, no stock rebuilds: the game ends soon (somebody goes out or the stock runs dry).
    # The test block has no seed, so the service draws a secret one.
    game_id, tokens = create(client, "may_i", 3, options=SLOW | {"max_reshuffles": 0}, test={"start_round": 7})
    probe = Probe(client, redis_client, settings.key_prefix, game_id, tokens)
    r = client.get(f"/v1/games/{game_id}/replay")
    assert r.status_code == 409 and probe.seed not in r.get_data(as_text=True)
    probe.play(random.Random(7), steps=400, every=6)
    state = probe.state()
    assert state.finished, "the game should have ended"
    for path in ("/v1/games", "/v1/games?status=playing&variant=may_i", f"/v1/games/{game_id}"):
        assert probe.seed not in client.get(path).get_data(as_text=True)

    replay = client.get(f"/v1/games/{game_id}/replay")
    assert replay.status_code == 200
    data = replay.get_json()
    assert data["seed"] == probe.seed  # the positive control: the seed is what the checks looked for
    dealt = [e for e in data["events"] if e["type"] == "dealt"]
    assert len(dealt) == 3 and all("private" in e for e in dealt)


def test_spectators_and_seats_see_only_their_own_private_events(client: Any, settings: Any, redis_client: Any) -> None:
    game_id, tokens = create(client, "shanghai", 3, options=SLOW)
    probe = Probe(client, redis_client, settings.key_prefix, game_id, tokens)
    probe.play(random.Random(3), steps=30, every=1)
    raw = raw_events(redis_client, settings.key_prefix, game_id)
    secret = [e for e in raw if "private" in e]
    assert {e["seat"] for e in secret} == {0, 1, 2}  # each seat has secrets the others must not see
    for seat in (None, 0, 1, 2):
        r = client.get(f"/v1/games/{game_id}/events", headers=probe.headers(seat), query_string={"after": 0})
        events = r.get_json()["events"]
        shown = [e for e in events if "private" in e]
        if seat is None:
            assert shown == []
        else:
            assert shown and all(e["seat"] == seat for e in shown)
            assert len(shown) == len([e for e in secret if e["seat"] == seat])
        # and long-polling (waiting for the next event) filters the same way
        r = client.get(
            f"/v1/games/{game_id}/events",
            headers=probe.headers(seat),
            query_string={"after": raw[-1]["seq"], "wait": 0.05},
        )
        assert r.status_code == 200 and r.get_json()["events"] == []


def test_a_long_poll_woken_by_a_move_gets_only_what_it_may_see(
    live_server: Any, settings: Any, redis_client: Any
) -> None:
    base = live_server.url
    r = requests.post(
        f"{base}/v1/games",
        json={"variant": "shanghai", "seats": 3, "options": SLOW, "players": [{"name": n} for n in "ABC"]},
        timeout=30,
    )
    game_id = r.json()["game_id"]
    tokens = [s["token"] for s in sorted(r.json()["seats"], key=lambda s: s["seat"])]
    url = f"{base}/v1/games/{game_id}"
    for seat in (1, 2):
        assert requests.post(f"{url}/claims", json={"claim": False}, headers=auth(tokens[seat])).status_code == 200
    last = requests.get(url, timeout=30).json()["last_event"]
    seed = stored_state(redis_client, settings.key_prefix, game_id).seed.hex()

    got: dict[int | None, Any] = {}

    def poll(seat: int | None) -> None:
        headers = {} if seat is None else auth(tokens[seat])
        got[seat] = requests.get(f"{url}/events", params={"after": last, "wait": 10}, headers=headers, timeout=30)

    pollers = [threading.Thread(target=poll, args=(seat,)) for seat in (None, 0, 1, 2)]
    for t in pollers:
        t.start()
    time.sleep(0.3)  # let them wait
    drew = requests.post(f"{url}/turn/draw", json={"source": "stock"}, headers=auth(tokens[0]), timeout=30)
    assert drew.status_code == 200
    for t in pollers:
        t.join(30)
    state = stored_state(redis_client, settings.key_prefix, game_id)
    for seat, response in got.items():
        assert response.status_code == 200 and seed not in response.text
        events = response.json()["events"]
        assert [e["type"] for e in events] == ["drew"] and events[0]["seat"] == 0
        if seat == 0:
            card = events[0]["private"]["card"]
            assert card in drew.json()["hand"]
        else:
            assert "private" not in events[0]
        Secrets(state, seat).check_text(response.text, f"long poll of seat {seat}")


# ---------------------------------------------------------------------------
# Tokens


def _dump_redis(redis_client: Any) -> list[bytes]:
    """Every key name and every value in the whole Redis database."""
    out: list[bytes] = []
    for key in redis_client.scan_iter(count=1000):
        out.append(key)
        kind = redis_client.type(key).decode()
        if kind == "none":  # expired (a rate-limit counter, say) between the scan and this read
            continue
        if kind == "string":
            value = redis_client.get(key) or b""
            out.append(value)
            with contextlib.suppress(zlib.error):  # a finished game's archived log is compressed: look inside
                out.append(zlib.decompress(value))
        elif kind == "hash":
            for k, v in redis_client.hgetall(key).items():
                out += [k, v]
        elif kind == "list":
            out += redis_client.lrange(key, 0, -1)
        elif kind == "set":
            out += list(redis_client.smembers(key))
        elif kind == "zset":
            out += [m for m, _ in redis_client.zrange(key, 0, -1, withscores=True)]
        elif kind == "stream":
            for entry_id, fields in redis_client.xrange(key):
                out.append(entry_id)
                for k, v in fields.items():
                    out += [k, v]
        else:  # pragma: no cover - no other types are used
            raise AssertionError(f"unexpected Redis type {kind} at {key!r}")
    return out


def test_tokens_are_never_stored_in_clear(settings: Any, redis_client: Any) -> None:
    # With rate limits on, so the limiter's keys are scanned too.
    app = create_app(dataclasses.replace(settings, rate_limits_enabled=True))
    client = app.test_client()
    issued: list[str] = []
    game_id, tokens = create(client, "shanghai", 3, options=SLOW)
    issued += tokens
    # A table filled seat by seat.
    r = client.post("/v1/games", json={"variant": "may_i", "seats": 3, "options": SLOW})
    open_game = r.get_json()["game_id"]
    for name in ("Ann", "Bob", "Cy"):
        r = client.post(f"/v1/games/{open_game}/seats", json={"name": name})
        assert r.status_code == 201
        issued.append(r.get_json()["token"])
    # Use them: views, events, actions with and without an Idempotency-Key, refusals.
    for gid, toks in ((game_id, tokens), (open_game, issued[3:])):
        for seat, token in enumerate(toks):
            assert client.get(f"/v1/games/{gid}", headers=auth(token)).status_code == 200
            assert client.get(f"/v1/games/{gid}/events", headers=auth(token)).status_code == 200
            headers = auth(token) | {"Idempotency-Key": f"k{seat}"}
            client.post(f"/v1/games/{gid}/claims", json={"claim": False}, headers=headers)
            client.post(f"/v1/games/{gid}/turn/draw", json={"source": "stock"}, headers=auth(token))
    assert any(k.startswith(b"LIMIT") or b"ratelimit" in k for k in redis_client.scan_iter(count=1000))

    blob = b"\n".join(_dump_redis(redis_client))
    for token in issued:
        assert token.encode() not in blob, "a token is stored in clear"
        assert TOKEN.match(token)
        assert TOKEN.match(token)["random"].encode() not in blob, "a token's secret part is stored"
    # What is stored is a hash of each token.
    for gid, toks in ((game_id, tokens), (open_game, issued[3:])):
        stored = redis_client.hgetall(f"{settings.key_prefix}:{{{gid}}}:tokens")
        assert {k.decode(): int(v) for k, v in stored.items()} == {
            hashlib.sha256(t.encode()).hexdigest(): seat for seat, t in enumerate(toks)
        }


def test_tokens_have_at_least_128_random_bits(client: Any) -> None:
    tokens = []
    for _ in range(5):
        tokens += create(client, "shanghai", 4)[1]
    r = client.post("/v1/games", json={"variant": "may_i", "seats": 2})
    game_id = r.get_json()["game_id"]
    tokens += [client.post(f"/v1/games/{game_id}/seats", json={"name": n}).get_json()["token"] for n in "AB"]
    assert len(set(tokens)) == len(tokens)
    alphabet = set()
    for token in tokens:
        match = TOKEN.match(token)
        assert match, token
        secret = match["random"]
        assert len(secret) * 6 >= 128, f"{len(secret)} base64url characters carry fewer than 128 bits"
        alphabet |= set(secret)
    assert len(alphabet) > 40  # the secret parts really use the whole base64url alphabet


def test_a_token_acts_only_for_its_own_seat_of_its_own_game(client: Any, redis_client: Any, settings: Any) -> None:
    game_id, tokens = create(client, "shanghai", 3, options=SLOW)
    other_game, other_tokens = create(client, "shanghai", 3, options=SLOW)
    url = f"/v1/games/{game_id}"
    state = stored_state(redis_client, settings.key_prefix, game_id)
    assert state.turn == 0 and state.phase.value == "draw"

    def version() -> int:
        return int(redis_client.hget(f"{settings.key_prefix}:{{{game_id}}}:game", "version"))

    # Seat 1's token trying seat 0's draw: it is the action of seat 1, not on turn.
    for body in ({"source": "stock"}, {"source": "discard"}):
        r = client.post(f"{url}/turn/draw", json=body, headers=auth(tokens[1]))
        assert r.status_code == 409 and r.get_json()["code"] == "not_your_turn"
        assert "seat 1" in r.get_json()["detail"]
    assert version() == 1
    # Seat 1's token claiming: recorded for seat 1, and the response is seat 1's view.
    r = client.post(f"{url}/claims", json={"claim": True}, headers=auth(tokens[1]))
    assert r.status_code == 200 and r.get_json()["seat"] == 1
    assert r.get_json()["hand"] == card_codes(state.hands[1])
    claimed = [e for e in raw_events(redis_client, settings.key_prefix, game_id) if e["type"] == "claimed"]
    assert [e["seat"] for e in claimed] == [1]
    # Seat 0's token cannot claim (it is on turn): the claim is seat 0's, not anyone else's.
    r = client.post(f"{url}/claims", json={"claim": True}, headers=auth(tokens[0]))
    assert r.status_code == 409 and r.get_json()["code"] == "claim_not_allowed"

    # A token of another game: 403 for actions, views and events alike.
    for method, path, body in (
        ("post", "/claims", {"claim": False}),
        ("post", "/turn/draw", {"source": "stock"}),
        ("get", "", None),
        ("get", "/events", None),
        ("get", "/events/stream", None),
    ):
        r = getattr(client, method)(f"{url}{path}", json=body, headers=auth(other_tokens[2]))
        assert r.status_code == 403, (path, r.status_code)
        assert r.mimetype == PROBLEM and r.get_json()["code"] == "forbidden"
    # Unknown tokens, and the stored hash of a real token, are no tokens either.
    digest = hashlib.sha256(tokens[2].encode()).hexdigest()
    for fake in ("nope", digest, tokens[2] + "x", tokens[2][:-1], tokens[2].upper()):
        r = client.post(f"{url}/claims", json={"claim": False}, headers=auth(fake))
        assert r.status_code == 403 and r.get_json()["code"] == "forbidden", fake
    assert version() == 2
    assert client.get(f"/v1/games/{other_game}", headers=auth(other_tokens[2])).status_code == 200

    # Malformed credentials: 401 problem+json with a WWW-Authenticate challenge.
    for header in ("Basic YWxhZGRpbjpvcGVu", "Bearer", "Bearer    ", "Token abc", tokens[2], "bearer"):
        for method, path, body in (("post", "/claims", {"claim": False}), ("get", "", None)):
            r = getattr(client, method)(f"{url}{path}", json=body, headers={"Authorization": header})
            assert r.status_code == 401, (header, path, r.status_code)
            assert r.mimetype == PROBLEM and r.get_json()["code"] == "unauthorized"
            assert r.headers["WWW-Authenticate"].startswith("Bearer")
    # No token at all: the public view to read, 401 (with the challenge) to act.
    assert "hand" not in client.get(url).get_json()
    r = client.post(f"{url}/claims", json={"claim": False})
    assert r.status_code == 401 and r.headers["WWW-Authenticate"].startswith("Bearer")
    # The scheme is case-insensitive.
    r = client.post(f"{url}/claims", json={"claim": False}, headers={"Authorization": f"bearer {tokens[2]}"})
    assert r.status_code == 200 and r.get_json()["seat"] == 2
    assert version() == 3
