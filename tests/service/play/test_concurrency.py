"""Concurrency over a real socket: many clients acting on one game at once.

Every test here talks HTTP to the app served on a loopback port (the
``live_server`` fixture), one ``requests`` session per thread, against a real
Redis. What they prove (API-SPEC "Errors, concurrency, limits"):

* concurrent actions on one game are serialised: none is lost, none is applied
  twice, the event log stays contiguous, and replaying the accepted moves one
  by one through the engine gives the stored game exactly;
* the priority of claims, not their arrival order, decides who gets the upcard;
* an ``Idempotency-Key`` retry (even eight at once) has exactly one effect and
  gets the first response again;
* ``If-Match`` with a stale version is refused with 412 and changes nothing.
"""

from __future__ import annotations

import json
import random
import threading
import time
import zlib
from collections import Counter
from typing import Any

import pytest
import requests
from http_moves import auth, move_request

import mayi_engine as engine
from mayi_engine.moves import move_from_json
from mayi_engine.rules import get_rules
from mayi_engine.state import loads, to_json

SLOW = {"claim_seconds": 86400, "turn_seconds": 86400}  # no clock ever runs out during a test
CLOCK_FIELDS = ("claim_closes_at", "turn_deadline")
TIMEOUT = 30


# ---------------------------------------------------------------------------
# Helpers


def create_game(
    base: str, variant: str, seats: int, seed: str | None = None, options: dict[str, Any] | None = None, **test: Any
) -> tuple[str, list[str]]:
    body: dict[str, Any] = {
        "variant": variant,
        "seats": seats,
        "options": SLOW | (options or {}),
        "players": [{"name": f"P{i}"} for i in range(seats)],
    }
    if seed is not None or test:
        body["test"] = ({"seed": seed} if seed else {}) | test
    r = requests.post(f"{base}/v1/games", json=body, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    data = r.json()
    return data["game_id"], [s["token"] for s in sorted(data["seats"], key=lambda s: s["seat"])]


def all_events(base: str, game_id: str, token: str | None = None) -> list[dict[str, Any]]:
    """Every event of a game via the long-poll endpoint (paged by ``last``)."""
    out: list[dict[str, Any]] = []
    after = 0
    while True:
        r = requests.get(
            f"{base}/v1/games/{game_id}/events",
            params={"after": after},
            headers=auth(token) if token else {},
            timeout=TIMEOUT,
        )
        assert r.status_code == 200, r.text
        page = r.json()
        if not page["events"]:
            return out
        out += page["events"]
        after = page["last"]


def raw_events(redis_client: Any, prefix: str, game_id: str) -> list[tuple[str, dict[str, Any]]]:
    """The stored log as (stream entry id, event): the compressed archive (the rounds
    that have ended), then the stream."""
    archived = redis_client.get(f"{prefix}:{{{game_id}}}:archive")
    rows = redis_client.xrange(f"{prefix}:{{{game_id}}}:events")
    old = [] if archived is None else [(f"{e['seq']}-0", e) for e in json.loads(zlib.decompress(archived))]
    return old + [(rid.decode(), json.loads(fields[b"e"])) for rid, fields in rows]


def game_hash(redis_client: Any, prefix: str, game_id: str) -> dict[str, str]:
    raw = redis_client.hgetall(f"{prefix}:{{{game_id}}}:game")
    return {k.decode(): v.decode() for k, v in raw.items()}


def without_clocks(state: Any) -> dict[str, Any]:
    data = to_json(state)
    for key in CLOCK_FIELDS:
        data.pop(key)
    return data


def public_event(event: dict[str, Any]) -> dict[str, Any]:
    """An event without its number and time stamp (what the engine alone decides)."""
    return {k: v for k, v in event.items() if k not in ("seq", "time")}


def assert_contiguous_log(base: str, redis_client: Any, prefix: str, game_id: str) -> list[dict[str, Any]]:
    """The event log, checked from the API and straight from the Redis stream."""
    events = all_events(base, game_id)
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(events) + 1)), "event numbers must run 1..last with no gap or repeat"
    rows = raw_events(redis_client, prefix, game_id)
    assert [rid for rid, _ in rows] == [f"{i}-0" for i in range(1, len(rows) + 1)]
    assert [e["seq"] for _, e in rows] == seqs
    assert int(game_hash(redis_client, prefix, game_id)["seq"]) == len(rows)
    return [e for _, e in rows]


def count_commits(app: Any) -> Counter[str]:
    """Count the outcomes of the repository's commit script (instrumentation only: the
    commit still runs on the real Redis)."""
    repo = app.extensions["mayi"].games.repo
    original = repo.commit
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()

    def commit(game_id: str, expected_version: int, change: Any) -> int:
        version = original(game_id, expected_version, change)  # a refusal raises: not counted
        with lock:
            outcomes["ok"] += 1
        return version

    repo.commit = commit
    return outcomes


# ---------------------------------------------------------------------------
# Many threads on one game


HAMMER_THREADS = 32
ACCEPTED_REFUSALS = {
    409: {"not_your_turn", "wrong_phase", "claims_open", "claim_not_allowed", "game_over"},
    422: {"card_not_in_hand", "illegal_meld", "illegal_lay_off"},
}


def _conflicting_move(rnd: random.Random, view: dict[str, Any]) -> dict[str, Any]:
    """A move the seat probably may not make now (a stale or doubled action)."""
    options: list[dict[str, Any]] = [
        {"type": "draw", "source": "stock"},
        {"type": "draw", "source": "discard"},
        {"type": "claim", "claim": True},
        {"type": "claim", "claim": False},
    ]
    if view.get("hand"):
        options.append({"type": "discard", "card": rnd.choice(view["hand"])})
    return rnd.choice(options)


STOCK = {"type": "draw", "source": "stock"}


def _legal_move(rnd: random.Random, legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A random legal move, leaning towards melding and the stock (so rounds end).

    While claims are open the player on turn mostly tries the stock anyway (refused
    with claims_open until every seat has answered) rather than take the upcard."""
    melds = [m for m in legal if m["type"] in ("go_down", "lay_off")]
    if melds and rnd.random() < 0.8:
        return rnd.choice(melds)
    if legal == [{"type": "draw", "source": "discard"}] and rnd.random() < 0.8:
        return STOCK
    if STOCK in legal and rnd.random() < 0.8:
        return STOCK
    return rnd.choice(legal)


@pytest.mark.parametrize(
    ("variant", "seats", "options", "test_block", "threads", "target", "seconds"),
    [
        # Six seats, five or six threads each, until 150 actions are applied.
        ("may_i", 6, {}, {}, HAMMER_THREADS, 150, 180.0),
        # The last round with no stock rebuilds: played to the end of the game under fire.
        ("shanghai", 3, {"max_reshuffles": 0}, {"start_round": 8}, 12, 10_000, 240.0),
    ],
    ids=["may_i-6", "shanghai-3-to-the-end"],
)
def test_hammer_threads_on_one_game_serialise_every_action(
    live_server: Any,
    app: Any,
    settings: Any,
    redis_client: Any,
    variant: str,
    seats: int,
    options: dict[str, Any],
    test_block: dict[str, Any],
    threads: int,
    target: int,
    seconds: float,
) -> None:
    """Threads for every seat (several per seat) fetch their view and send a legal move or
    a conflicting one (a stale or doubled draw, a claim out of turn, a card they lack),
    some with an Idempotency-Key they then resend, until ``target`` actions are applied or the
    game ends (``seconds`` only bounds a hung run: a loaded machine is slower, never a
    failure). Afterwards: each success made one
    version, the log is contiguous, and a serial replay of the successes through the
    engine gives the stored state and the stored log exactly."""
    base, prefix = live_server.url, settings.key_prefix
    seed = "5eed" * 8
    game_id, tokens = create_game(base, variant, seats, seed, options, **test_block)
    initial = loads(game_hash(redis_client, prefix, game_id)["state"])
    initial_events = [public_event(e) for _, e in raw_events(redis_client, prefix, game_id)]

    # The stored start is what the engine deals from the seed alone.
    dealt, deal_events = engine.start_game(
        get_rules(variant, SLOW | options),
        [f"P{i}" for i in range(seats)],
        bytes.fromhex(seed),
        now=time.time(),
        start_round=test_block.get("start_round", 1),
    )
    assert without_clocks(dealt) == without_clocks(initial)
    assert [engine.event_to_json(e) for e in deal_events] == initial_events

    outcomes = count_commits(app)
    stop = threading.Event()
    lock = threading.Lock()
    accepted: list[tuple[int, int, dict[str, Any]]] = []  # (version, seat, move)
    refused: Counter[tuple[int, str]] = Counter()
    replays = [0]
    unexpected: list[str] = []
    start = threading.Barrier(threads)
    ends_at = time.monotonic() + seconds

    def worker(index: int) -> None:
        seat = index % seats
        rnd = random.Random(1000 + index)
        session = requests.Session()
        session.headers.update(auth(tokens[seat]))
        url = f"{base}/v1/games/{game_id}"
        start.wait()
        try:
            while not stop.is_set() and time.monotonic() < ends_at:
                view = session.get(url, timeout=TIMEOUT).json()
                if view["status"] == "finished":
                    stop.set()
                    return
                legal = view["legal"]
                if legal and rnd.random() < 0.8:
                    move = _legal_move(rnd, legal)
                elif legal or rnd.random() < 0.5:
                    move = _conflicting_move(rnd, view)
                else:
                    time.sleep(0.005)
                    continue
                path, body = move_request(move)
                headers = {}
                idempotent = rnd.random() < 0.2
                if idempotent:
                    headers["Idempotency-Key"] = f"hammer-{index}-{rnd.getrandbits(64):x}"
                r = session.post(f"{url}/{path}", json=body, headers=headers, timeout=TIMEOUT)
                if r.status_code == 200:
                    version = r.json()["version"]
                    with lock:
                        accepted.append((version, seat, move))
                        if len(accepted) >= target:
                            stop.set()
                    if idempotent:  # the retry of a success gets the same response, and no effect
                        again = session.post(f"{url}/{path}", json=body, headers=headers, timeout=TIMEOUT)
                        with lock:
                            replays[0] += 1
                            if again.status_code != 200 or again.content != r.content:
                                unexpected.append(f"replay differs: {again.status_code} {again.text[:200]}")
                    continue
                problem = r.json()
                code = problem.get("code", "")
                with lock:
                    refused[(r.status_code, code)] += 1
                    if code not in ACCEPTED_REFUSALS.get(r.status_code, ()):
                        unexpected.append(f"{r.status_code} {code}: {problem.get('detail')}")
                    elif r.headers.get("Content-Type") != "application/problem+json":
                        unexpected.append(f"{r.status_code} without problem+json")
        except Exception as exc:  # pragma: no cover - reported below
            with lock:
                unexpected.append(f"thread {index}: {exc!r}")
        finally:
            session.close()

    workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    began = time.monotonic()
    for t in workers:
        t.start()
    for t in workers:
        t.join(seconds + 30)
    elapsed = time.monotonic() - began
    assert not any(t.is_alive() for t in workers)
    assert not unexpected, unexpected[:10]

    print(
        f"\nhammer {variant}: {len(accepted)} actions applied in {elapsed:.1f} s by {threads} threads; "
        f"{sum(refused.values())} refused {dict(refused)}; {replays[0]} idempotent replays; "
        f"commit outcomes {dict(outcomes)}"
    )
    assert sum(refused.values()) > 0, "the threads never conflicted"

    # Every success made exactly one new version: 2, 3, ... with none shared or lost.
    record = game_hash(redis_client, prefix, game_id)
    final_version = int(record["version"])
    versions = sorted(v for v, _, _ in accepted)
    assert versions == list(range(2, final_version + 1))
    assert final_version == 1 + len(accepted)
    assert outcomes["ok"] == len(accepted)  # a replay never reaches the commit

    # The log is contiguous, from the API and straight from the stream.
    stored_events = assert_contiguous_log(base, redis_client, prefix, game_id)

    # Serially replaying the accepted moves in version order gives the stored game and log.
    state = initial
    replayed_events = list(initial_events)
    now = time.time()
    for _version, seat, move in sorted(accepted, key=lambda a: a[0]):
        state, events = engine.play(state, seat, move_from_json(move), now)
        replayed_events += [engine.event_to_json(e) for e in events]
    stored = loads(record["state"])
    assert without_clocks(state) == without_clocks(stored)
    assert replayed_events == [public_event(e) for e in stored_events]

    # The public view agrees too.
    view = requests.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT).json()
    assert view["version"] == final_version and view["last_event"] == len(stored_events)
    assert [s["hand_count"] for s in view["seats"]] == [len(h) for h in stored.hands]
    assert view["stock_count"] == len(stored.stock)

    if stored.finished:  # the game ended under fire: once, and the indexes followed
        assert [e["type"] for e in stored_events].count("game_ended") == 1
        assert view["status"] == "finished" and record["status"] == "finished"
        listed = {
            status: {g["id"] for g in requests.get(f"{base}/v1/games", params={"status": status}).json()["games"]}
            for status in ("playing", "finished")
        }
        assert game_id in listed["finished"] and game_id not in listed["playing"]
    else:
        assert len(accepted) >= target, f"only {len(accepted)} of {target} actions applied in {seconds:.0f} s"


# ---------------------------------------------------------------------------
# Claims: priority, not arrival order


def _post(session: requests.Session, url: str, body: dict[str, Any]) -> requests.Response:
    return session.post(url, json=body, timeout=TIMEOUT)


def _open_window(base: str, game_id: str, sessions: list[requests.Session]) -> dict[str, Any]:
    """Bring the game to an ordinary claim window (May I: past the first-upcard offer)."""
    url = f"{base}/v1/games/{game_id}"
    view = requests.get(url, timeout=TIMEOUT).json()
    while view["phase"] == "first_offer":
        r = _post(sessions[view["actor"]], f"{url}/claims", {"claim": False})
        assert r.status_code == 200, r.text
        view = r.json()
    if view["phase"] == "play":
        seat = view["turn"]
        hand = sessions[seat].get(url, timeout=TIMEOUT).json()["hand"]
        r = _post(sessions[seat], f"{url}/turn/discard", {"card": hand[-1]})
        assert r.status_code == 200, r.text
        view = r.json()
    assert view["phase"] == "draw" and view["claim_window"]["pending"]
    return view


def _race(
    url: str, sessions: list[requests.Session], turn: int, answers: list[tuple[int, bool]]
) -> tuple[dict[int, int], list[tuple[int, str]]]:
    """Send the claims and passes at once (each a little after the one before), while the
    player on turn keeps trying to draw from the stock. Returns the answers' statuses and
    the draw attempts' (status, code)."""
    barrier = threading.Barrier(len(answers) + 1)
    results: dict[int, int] = {}
    draws: list[tuple[int, str]] = []

    def answer(seat: int, claim: bool, delay: float) -> None:
        barrier.wait()
        time.sleep(delay)
        results[seat] = _post(sessions[seat], f"{url}/claims", {"claim": claim}).status_code

    def draw() -> None:
        barrier.wait()
        for _ in range(500):
            r = _post(sessions[turn], f"{url}/turn/draw", {"source": "stock"})
            if r.status_code == 200:
                draws.append((200, ""))
                return
            problem = r.json()
            ok = problem["code"] == "claims_open" and "retry_after" in problem and "Retry-After" in r.headers
            draws.append((r.status_code, problem["code"] if ok else f"unexpected: {r.text}"))
            time.sleep(0.002)

    threads = [
        threading.Thread(target=answer, args=(seat, claim, 0.003 * i)) for i, (seat, claim) in enumerate(answers)
    ]
    threads.append(threading.Thread(target=draw))
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    return results, draws


@pytest.mark.parametrize(("variant", "seats"), [("shanghai", 5), ("may_i", 6)])
def test_claims_race_priority_beats_arrival_order(
    live_server: Any, settings: Any, redis_client: Any, variant: str, seats: int
) -> None:
    base = live_server.url
    game_id, tokens = create_game(base, variant, seats, seed=f"{seats:02x}" * 16)
    url = f"{base}/v1/games/{game_id}"
    sessions = []
    for token in tokens:
        session = requests.Session()
        session.headers.update(auth(token))
        sessions.append(session)
    rnd = random.Random(seats)
    out_of_order = refused_draws = 0
    winners = []
    reps = 8
    for rep in range(reps):
        view = _open_window(base, game_id, sessions)
        turn = view["turn"]
        pending = view["claim_window"]["pending"]
        if len(pending) < 2:
            break  # (Shanghai) the claim limit has used everybody up
        claimants = rnd.sample(pending, rnd.randint(2, len(pending)))
        priority = [(turn + k) % seats for k in range(1, seats)]
        expected = next(seat for seat in priority if seat in claimants)
        answers = [(seat, seat in claimants) for seat in pending]
        # Arrival order: random, but every other repetition the winner answers last.
        rnd.shuffle(answers)
        if rep % 2 == 0:
            answers.sort(key=lambda a: a[0] == expected)
        before = view["last_event"]
        results, draw_results = _race(url, sessions, turn, answers)
        assert set(results.values()) == {200}, results
        assert draw_results[-1] == (200, ""), draw_results
        assert {c for _, c in draw_results[:-1]} <= {"claims_open"}, draw_results
        refused_draws += len(draw_results) - 1

        events = [e for e in all_events(base, game_id) if e["seq"] > before]
        arrived = [e["seat"] for e in events if e["type"] == "claimed"]
        assert sorted(arrived) == sorted(claimants)
        won = [e for e in events if e["type"] == "claim_won"]
        assert len(won) == 1, events
        assert won[0]["seat"] == expected, (turn, arrived, won[0])
        assert won[0]["data"]["claimants"] == arrived
        winners.append(expected)
        if arrived[0] != expected:
            out_of_order += 1
        # The player on turn got the stock card; the winner has the upcard.
        state = loads(game_hash(redis_client, settings.key_prefix, game_id)["state"])
        assert state.phase.value == "play" and state.turn == turn

    assert len(winners) >= 4
    assert out_of_order >= 2, "the winner should often have arrived after other claimants"
    print(
        f"\nclaims race {variant}: {len(winners)} windows, {out_of_order} won by a later arrival, "
        f"{refused_draws} early stock draws refused with claims_open"
    )
    for session in sessions:
        session.close()


# ---------------------------------------------------------------------------
# Idempotency-Key

IDEMPOTENT_TURNS = 12


def _concurrently(n: int, call: Any) -> list[requests.Response]:
    barrier = threading.Barrier(n)
    out: list[requests.Response | None] = [None] * n

    def run(i: int) -> None:
        with requests.Session() as session:
            barrier.wait()
            out[i] = call(session)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert all(r is not None for r in out)
    return [r for r in out if r is not None]


def test_idempotency_key_one_effect_same_response(live_server: Any, settings: Any, redis_client: Any) -> None:
    base, prefix = live_server.url, settings.key_prefix
    game_id, tokens = create_game(base, "shanghai", 3, seed="1d" * 16)
    url = f"{base}/v1/games/{game_id}"

    def version() -> int:
        return int(game_hash(redis_client, prefix, game_id)["version"])

    def events_of(kind: str) -> list[dict[str, Any]]:
        return [e for e in all_events(base, game_id) if e["type"] == kind]

    # Sent twice, one after the other: the first response again, one claim.
    key = {"Idempotency-Key": "claim-1"}
    first = requests.post(f"{url}/claims", json={"claim": True}, headers=auth(tokens[1]) | key, timeout=TIMEOUT)
    second = requests.post(f"{url}/claims", json={"claim": True}, headers=auth(tokens[1]) | key, timeout=TIMEOUT)
    assert first.status_code == second.status_code == 200
    assert first.content == second.content
    assert [e["seat"] for e in events_of("claimed")] == [1]
    assert version() == 2
    # A retry carrying the If-Match of its first sending still gets the first response, not 412.
    third = requests.post(
        f"{url}/claims", json={"claim": True}, headers=auth(tokens[1]) | key | {"If-Match": "1"}, timeout=TIMEOUT
    )
    assert third.status_code == 200 and third.content == first.content
    assert version() == 2

    # A key belongs to its seat: seat 2 with the same key and body acts for itself,
    # and never gets seat 1's response (with seat 1's hand).
    other = requests.post(f"{url}/claims", json={"claim": True}, headers=auth(tokens[2]) | key, timeout=TIMEOUT)
    assert other.status_code == 200
    assert other.json()["seat"] == 2 and other.json()["hand"] != first.json()["hand"]
    assert [e["seat"] for e in events_of("claimed")] == [1, 2]
    assert version() == 3

    # Eight at once with one key, turn after turn: each draw and each discard has one
    # effect, and all eight get the same answer (none sees the game already moved on).
    for turn in range(IDEMPOTENT_TURNS):
        view = requests.get(url, timeout=TIMEOUT).json()
        seat = view["turn"]
        for other in view["claim_window"]["pending"]:
            r = requests.post(f"{url}/claims", json={"claim": turn % 2 == 0}, headers=auth(tokens[other]))
            assert r.status_code == 200, r.text
        key = {"Idempotency-Key": f"draw-{turn}"} | auth(tokens[seat])
        before, drew_before = version(), len(events_of("drew"))
        responses = _concurrently(
            8, lambda s, key=key: s.post(f"{url}/turn/draw", json={"source": "stock"}, headers=key, timeout=TIMEOUT)
        )
        assert [r.status_code for r in responses] == [200] * 8, [r.text for r in responses]
        assert len({r.content for r in responses}) == 1
        assert version() == before + 1
        assert len(events_of("claim_won")) <= turn + 1
        assert len(events_of("drew")) - drew_before in (1, 3)  # its draw, and a claim's two penalty cards

        card = responses[0].json()["hand"][0]
        key = {"Idempotency-Key": f"discard-{turn}"} | auth(tokens[seat])
        before, discarded_before = version(), events_of("discarded")
        responses = _concurrently(
            8,
            lambda s, key=key, card=card: s.post(
                f"{url}/turn/discard", json={"card": card}, headers=key, timeout=TIMEOUT
            ),
        )
        assert [r.status_code for r in responses] == [200] * 8, [r.text for r in responses]
        assert len({r.content for r in responses}) == 1
        assert version() == before + 1
        assert [e["data"]["card"] for e in events_of("discarded")] == [e["data"]["card"] for e in discarded_before] + [
            card
        ]
    events_before = all_events(base, game_id)

    # The same key with another body: 422, and nothing happens.
    other_card = next(c for c in responses[0].json()["hand"] if c != card)
    r = requests.post(f"{url}/turn/discard", json={"card": other_card}, headers=key, timeout=TIMEOUT)
    assert r.status_code == 422
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.json()["code"] == "idempotency_key_reused"
    # ... also when sent to another endpoint
    r = requests.post(f"{url}/turn/draw", json={"source": "discard"}, headers=key, timeout=TIMEOUT)
    assert r.status_code == 422 and r.json()["code"] == "idempotency_key_reused"
    assert version() == before + 1
    assert all_events(base, game_id) == events_before
    assert_contiguous_log(base, redis_client, prefix, game_id)


# ---------------------------------------------------------------------------
# If-Match


def test_if_match_stale_version_is_refused_and_changes_nothing(
    live_server: Any, settings: Any, redis_client: Any
) -> None:
    base, prefix = live_server.url, settings.key_prefix
    game_id, tokens = create_game(base, "shanghai", 5, seed="1f" * 16)
    url = f"{base}/v1/games/{game_id}"
    view = requests.get(url, headers=auth(tokens[1]), timeout=TIMEOUT)
    etag = view.headers["ETag"]
    assert view.json()["version"] == 1

    # The current version: accepted.
    r = requests.post(f"{url}/claims", json={"claim": False}, headers=auth(tokens[1]) | {"If-Match": "1"})
    assert r.status_code == 200 and r.json()["version"] == 2

    # A stale version (a number, or the ETag seen before): 412, nothing applied.
    events_before = all_events(base, game_id)
    for stale in ("1", '"1"', etag, f"W/{etag}"):
        r = requests.post(f"{url}/claims", json={"claim": True}, headers=auth(tokens[2]) | {"If-Match": stale})
        assert r.status_code == 412, (stale, r.text)
        assert r.headers["Content-Type"] == "application/problem+json"
        problem = r.json()
        assert problem["code"] == "version_conflict" and problem["status"] == 412
        assert problem["current_version"] == 2
    assert int(game_hash(redis_client, prefix, game_id)["version"]) == 2
    assert all_events(base, game_id) == events_before

    # The ETag of the current view works as If-Match.
    etag = requests.get(url, headers=auth(tokens[2]), timeout=TIMEOUT).headers["ETag"]
    r = requests.post(f"{url}/claims", json={"claim": True}, headers=auth(tokens[2]) | {"If-Match": etag})
    assert r.status_code == 200 and r.json()["version"] == 3

    # Three seats answer at once, all from version 3: exactly one is applied.
    sessions = {seat: auth(tokens[seat]) | {"If-Match": "3"} for seat in (3, 4)}
    barrier = threading.Barrier(3)
    codes: dict[str, int] = {}

    def answer(name: str, path: str, body: dict[str, Any], headers: dict[str, str]) -> None:
        barrier.wait()
        codes[name] = requests.post(f"{url}/{path}", json=body, headers=headers, timeout=TIMEOUT).status_code

    threads = [
        threading.Thread(target=answer, args=("3", "claims", {"claim": True}, sessions[3])),
        threading.Thread(target=answer, args=("4", "claims", {"claim": False}, sessions[4])),
        threading.Thread(
            target=answer, args=("0", "turn/draw", {"source": "discard"}, auth(tokens[0]) | {"If-Match": "3"})
        ),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert sorted(codes.values()) == [200, 412, 412], codes
    assert int(game_hash(redis_client, prefix, game_id)["version"]) == 4
    assert len(all_events(base, game_id)) == len(events_before) + 2
    assert_contiguous_log(base, redis_client, prefix, game_id)

    # A malformed If-Match is a validation error, not a conflict.
    r = requests.post(f"{url}/claims", json={"claim": False}, headers=auth(tokens[4]) | {"If-Match": "soon"})
    assert r.status_code == 422 and r.json()["code"] == "validation_error"


# ---------------------------------------------------------------------------
# Taking seats


def test_concurrent_seat_taking_fills_each_seat_once(live_server: Any, settings: Any, redis_client: Any) -> None:
    base, prefix = live_server.url, settings.key_prefix
    r = requests.post(f"{base}/v1/games", json={"variant": "may_i", "seats": 6, "options": SLOW}, timeout=TIMEOUT)
    game_id = r.json()["game_id"]
    url = f"{base}/v1/games/{game_id}"
    # Ten players at once for six seats; some ask for a seat, some take the lowest open one.
    asks: list[dict[str, Any]] = [{"name": f"N{i}"} | ({"seat": i % 6} if i % 2 else {}) for i in range(10)]
    barrier = threading.Barrier(len(asks))
    results: list[requests.Response | None] = [None] * len(asks)

    def take(i: int) -> None:
        barrier.wait()
        results[i] = requests.post(f"{url}/seats", json=asks[i], timeout=TIMEOUT)

    threads = [threading.Thread(target=take, args=(i,)) for i in range(len(asks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    taken = [r for r in results if r is not None and r.status_code == 201]
    refused = [r for r in results if r is not None and r.status_code != 201]
    assert len(taken) == 6 and len(refused) == 4
    assert {r.json()["code"] for r in refused} <= {"seat_taken", "game_started"}
    assert sorted(r.json()["seat"] for r in taken) == list(range(6))
    for i, r in enumerate(results):
        assert r is not None
        if r.status_code == 201 and "seat" in asks[i]:
            assert r.json()["seat"] == asks[i]["seat"]

    # Each token holds the seat it was given; the game started once, with one deal.
    names = {}
    for r in taken:
        view = requests.get(url, headers=auth(r.json()["token"]), timeout=TIMEOUT).json()
        assert view["seat"] == r.json()["seat"] and view["status"] == "playing"
        names[view["seat"]] = view["seats"][view["seat"]]["name"]
    assert sorted(names.values()) == sorted(a["name"] for a, r in zip(asks, results, strict=True) if r in taken)
    events = assert_contiguous_log(base, redis_client, prefix, game_id)
    assert [e["type"] for e in events].count("round_started") == 1
    assert sorted(e["seat"] for e in events if e["type"] == "dealt") == list(range(6))
    assert int(game_hash(redis_client, prefix, game_id)["version"]) == 1 + 6
