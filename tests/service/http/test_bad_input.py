"""Bad input gets a 4xx that names the problem, never a 500 (issue 6).

Over a real loopback socket (``live_server``) on a real Redis: odd text, deep JSON,
numbers and booleans sent as strings, card codes, chunked bodies over the limit, and the
Swagger UI's configuration.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from marshmallow import Schema, ValidationError, fields

from mayi_engine.cards import parse_card
from mayi_service.api import schemas
from mayi_service.api.schemas import bots as bot_schemas
from mayi_service.api.schemas import fields as field_types
from mayi_service.api.schemas import ladder as ladder_schemas
from mayi_service.api.schemas import moves as move_schemas

TIMEOUT = 10
JSON = {"Content-Type": "application/json"}
SPEC = Path(__file__).resolve().parents[3] / "openapi" / "openapi.json"


@pytest.fixture
def http(live_server: Any) -> Iterator[tuple[requests.Session, str]]:
    session = requests.Session()
    try:
        yield session, live_server.url
    finally:
        session.close()


def post(http: tuple[requests.Session, str], path: str, raw: str | bytes, **headers: str) -> requests.Response:
    """POST ``raw`` (JSON text as written, escapes and all) to ``path``."""
    session, base = http
    return session.post(base + path, data=raw, headers={**JSON, **headers}, timeout=TIMEOUT)


def problem(response: requests.Response, status: int, code: str, *words: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["code"] == code, body
    for word in words:
        assert word in body["detail"], (word, body["detail"])
    return body


def new_table(http: tuple[requests.Session, str], seats: int = 3) -> str:
    response = post(http, "/v1/games", json.dumps({"variant": "may_i", "seats": seats}))
    assert response.status_code == 201, response.text
    game_id: str = response.json()["game_id"]
    return game_id


def two_seat_game(http: tuple[requests.Session, str]) -> tuple[str, str]:
    body = {"variant": "may_i", "seats": 2, "players": [{"name": "Ann"}, {"name": "Bob"}]}
    created = post(http, "/v1/games", json.dumps(body)).json()
    return created["game_id"], created["seats"][0]["token"]


# ---------------------------------------------------------------------------
# Text: lone surrogates, control characters, names


def test_a_name_with_a_lone_surrogate_is_refused_and_the_table_still_fills(http):
    game_id = new_table(http)
    refused = post(http, f"/v1/games/{game_id}/seats", '{"name": "\\ud800"}')
    problem(refused, 422, "validation_error", "name:", "surrogate")
    for name in ("Bea", "Cy", "Dee"):
        assert post(http, f"/v1/games/{game_id}/seats", json.dumps({"name": name})).status_code == 201
    session, base = http
    view = session.get(f"{base}/v1/games/{game_id}", timeout=TIMEOUT)
    assert view.status_code == 200 and view.json()["status"] == "playing"
    assert [s["name"] for s in view.json()["seats"]] == ["Bea", "Cy", "Dee"]


def test_a_lone_surrogate_is_refused_in_every_place_a_name_goes(http):
    body = '{"variant": "may_i", "seats": 2, "players": [{"name": "Ann"}, {"name": "x\\udc00"}]}'
    problem(post(http, "/v1/games", body), 422, "validation_error", "players[1].name:", "U+DC00")


def test_a_lone_surrogate_is_refused_in_any_text_field(http):
    problem(post(http, "/v1/games", '{"variant": "\\ud83c", "seats": 2}'), 422, "validation_error", "variant:")
    game_id, token = two_seat_game(http)
    auth = {"Authorization": f"Bearer {token}"}
    problem(post(http, f"/v1/games/{game_id}/turn/draw", '{"source": "\\udfff"}', **auth), 422, "validation_error")
    response = post(http, f"/v1/games/{game_id}/turn/discard", '{"card": "\\ud800"}', **auth)
    problem(response, 422, "bad_card", "card: '\\ud800' is not a card")


def test_a_surrogate_pair_is_text_and_plays(http):
    """A JSON escape pair is one character beyond the BMP: a name like any other."""
    body = '{"variant": "may_i", "seats": 2, "players": [{"name": "\\ud83c\\udca1 Ace"}, {"name": "Bob"}]}'
    created = post(http, "/v1/games", body)
    assert created.status_code == 201, created.text
    assert created.json()["game"]["seats"][0]["name"] == "\U0001f0a1 Ace"
    assert created.json()["game"]["status"] == "playing"


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("Ann\nBob", ["name:", "control character U+000A"]),
        ("\x00", ["name:", "U+0000"]),
        ("Bell\x07", ["name:", "U+0007"]),
        ("\x7f", ["name:", "U+007F"]),
        ("Ann\u202egnp.exe", ["name:", "bidirectional", "U+202E"]),
        ("   ", ["name:", "blank"]),
        ("", ["name:", "blank"]),
        ("x" * 41, ["name:", "between 1 and 40"]),
        (" " + "x" * 40, ["name:", "between 1 and 40"]),  # as the document says: 40 before trimming
    ],
)
def test_names_are_refused_naming_the_rule(http, name, words):
    game_id = new_table(http)
    problem(post(http, f"/v1/games/{game_id}/seats", json.dumps({"name": name})), 422, "validation_error", *words)


def test_a_name_is_trimmed_and_may_be_any_40_characters(http):
    game_id = new_table(http, seats=2)
    taken = post(http, f"/v1/games/{game_id}/seats", json.dumps({"name": "  Ann  "}))
    assert taken.status_code == 201, taken.text
    assert taken.json()["game"]["seats"][0]["name"] == "Ann"
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # joiners (format characters) are allowed
    long = ("Zoë " + family + " ") * 5
    name = long[:40].strip()
    taken = post(http, f"/v1/games/{game_id}/seats", json.dumps({"name": name}))
    assert taken.status_code == 201, taken.text
    assert taken.json()["game"]["seats"][1]["name"] == name
    assert taken.json()["game"]["status"] == "playing"


# ---------------------------------------------------------------------------
# JSON that is not JSON the service reads


@pytest.mark.parametrize(
    "raw",
    [
        "[" * 1000 + "]" * 1000,  # 2 KB, deeper than Python's recursion limit
        '{"a":' * 1000 + "1" + "}" * 1000,
        '{"variant": "may_i", "seats": 2, "test": {"stacked_decks": ' + "[" * 17 + "]" * 17 + "}}",
    ],
)
def test_deeply_nested_json_is_a_400_naming_the_depth(http, raw):
    problem(post(http, "/v1/games", raw), 400, "bad_request", "nested more than 16 levels deep")


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ('{"variant": "may_i", "seats": ' + "1" * 5000 + "}", ["a number of more than 40 characters"]),
        ('{"variant": "may_i", "seats": 2, "options": {"turn_seconds": NaN}}', ["NaN is not a JSON number"]),
        ('{"variant": "may_i", "seats": 2, "options": {"turn_seconds": -Infinity}}', ["-Infinity"]),
        (b'{"variant": "may_i", "seats": 2, "players": [{"name": "\xff"}]}', ["not UTF-8"]),
        ('{"variant": "may_i", "seats": 2', ["Invalid JSON body", "line 1"]),
    ],
)
def test_json_the_service_cannot_read_is_a_400_naming_why(http, raw, words):
    problem(post(http, "/v1/games", raw), 400, "bad_request", *words)


# ---------------------------------------------------------------------------
# Strict types


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"variant": "may_i", "seats": "4"}, "seats:"),
        ({"variant": "may_i", "seats": 4.0}, "seats:"),
        ({"variant": "may_i", "seats": True}, "seats:"),
        ({"variant": "may_i", "seats": 4, "options": {"claim_seconds": "15"}}, "options.claim_seconds:"),
        ({"variant": "may_i", "seats": 4, "options": {"turn_seconds": True}}, "options.turn_seconds:"),
        ({"variant": "may_i", "seats": 4, "options": {"max_turns": "500"}}, "options.max_turns:"),
        ({"variant": "may_i", "seats": 4, "options": {"max_reshuffles": 1.5}}, "options.max_reshuffles:"),
        ({"variant": "shanghai", "seats": 4, "options": {"all_out_final": "yes"}}, "options.all_out_final:"),
        ({"variant": "shanghai", "seats": 4, "options": {"free_goal_order": 1}}, "options.free_goal_order:"),
        ({"variant": "shanghai", "seats": 4, "options": {"bury_joker_upcard": "true"}}, "options.bury_joker_upcard:"),
        ({"variant": "may_i", "seats": 2, "test": {"start_round": "2"}}, "test.start_round:"),
        ({"variant": "may_i", "seats": 2, "players": [{"name": 7}]}, "players[0].name:"),
        ({"variant": 1, "seats": 2}, "variant:"),
    ],
)
def test_numbers_and_booleans_sent_as_anything_else_are_refused(http, body, field):
    problem(post(http, "/v1/games", json.dumps(body)), 422, "validation_error", field)


def test_actions_are_strict_too(http):
    game_id = new_table(http, seats=2)
    problem(post(http, f"/v1/games/{game_id}/seats", '{"name": "Ann", "seat": "0"}'), 422, "validation_error", "seat:")
    game_id, token = two_seat_game(http)
    auth = {"Authorization": f"Bearer {token}"}
    for claim in ('"true"', "1", "0", "null"):
        response = post(http, f"/v1/games/{game_id}/claims", f'{{"claim": {claim}}}', **auth)
        problem(response, 422, "validation_error", "claim:")
    body = '{"lay_offs": [{"meld": "0", "cards": ["5H"]}]}'
    problem(post(http, f"/v1/games/{game_id}/lay-offs", body, **auth), 422, "validation_error", "lay_offs[0].meld:")


@pytest.mark.parametrize(
    ("query", "field"),
    [("page=1_0", "page:"), ("page=%D9%A1", "page:"), ("page=+1", "page:"), ("page_size=2.0", "page_size:")],
)
def test_query_numbers_are_ascii_digits(http, query, field):
    session, base = http
    problem(session.get(f"{base}/v1/games?{query}", timeout=TIMEOUT), 422, "validation_error", field)


@pytest.mark.parametrize(
    ("query", "field"), [("after=%C2%B2", "after:"), ("after=1e3", "after:"), ("wait=1e1", "wait:")]
)
def test_event_query_numbers_are_plain_decimals(http, query, field):
    game_id, token = two_seat_game(http)
    session, base = http
    url = f"{base}/v1/games/{game_id}/events?{query}"
    response = session.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)
    problem(response, 422, "validation_error", field)
    ok = session.get(f"{base}/v1/games/{game_id}/events?after=0&wait=0.5", timeout=TIMEOUT)
    assert ok.status_code == 200, ok.text


def _request_schemas() -> list[type[Schema]]:
    """Every request schema of the app (every subclass of StrictSchema, at any depth, in
    every module of the schemas)."""
    for module in pkgutil.iter_modules(schemas.__path__):
        importlib.import_module(f"{schemas.__name__}.{module.name}")
    found, level = [], list(field_types.StrictSchema.__subclasses__())
    while level:
        cls = level.pop()
        found.append(cls)
        level.extend(cls.__subclasses__())
    return found


def _leaves(field: fields.Field) -> Iterator[fields.Field]:
    if isinstance(field, fields.List):
        yield from _leaves(field.inner)
    elif isinstance(field, fields.Nested):
        return  # its schema is checked on its own
    else:
        yield field


def test_every_request_field_is_of_a_strict_type():
    """No request schema uses marshmallow's lenient String, Integer, Float or Boolean."""
    allowed = (field_types.Text, field_types.StrictInteger, field_types.StrictFloat, field_types.StrictBoolean)
    query = (field_types.Text, field_types.QueryInteger, field_types.QueryFloat)
    found = _request_schemas()
    assert {bot_schemas.BotInSchema, ladder_schemas.EntryInSchema, move_schemas.DrawInSchema} <= set(found)
    for cls in found:
        strict = query if cls.__name__.endswith("QuerySchema") else allowed
        for name, field in cls().fields.items():
            for leaf in _leaves(field):
                assert isinstance(leaf, strict), f"{cls.__name__}.{name} is a lenient {type(leaf).__name__}"


# ---------------------------------------------------------------------------
# Card codes


def _card_patterns(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if "pattern" in node and "card code" in node.get("description", "").lower():
            yield node["pattern"]
        for value in node.values():
            yield from _card_patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _card_patterns(value)


def test_card_codes_have_a_pattern_in_the_openapi_document_that_the_engine_agrees_with():
    spec = json.loads(SPEC.read_text(encoding="utf-8"))
    patterns = set(_card_patterns(spec))
    assert patterns == {field_types.CARD_PATTERN}
    # discard, melds, lay-offs and stacked decks all say so
    assert json.dumps(spec).count(json.dumps(field_types.CARD_PATTERN)) >= 4
    pattern = re.compile(field_types.CARD_PATTERN)
    ranks, suits = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "10", "J", "Q", "K"], "CDHS"
    codes = [r + s for r in ranks for s in suits] + ["JK"]
    for code in codes:
        for variant in (code, code.lower(), code[0].lower() + code[1:], code.swapcase()):
            assert pattern.fullmatch(variant), variant
            parse_card(variant)
    rng = random.Random(6)
    alphabet = "AKQJT1098765432CDHSZX0ckdjsh \n\u017f\u212a"  # with a long s and a Kelvin sign
    field = field_types.Card()
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4)))
        if pattern.fullmatch(text):  # as JSON Schema reads a pattern: $ is the very end
            assert field.deserialize(text) == text
            parse_card(text)  # everything the pattern takes, the engine reads
        else:  # what the pattern refuses, the schema refuses (even " TH", which the engine would read)
            with pytest.raises(ValidationError, match="is not a card"):
                field.deserialize(text)


def test_a_bad_card_is_refused_in_the_engines_words_naming_the_field(http):
    game_id, token = two_seat_game(http)
    auth = {"Authorization": f"Bearer {token}"}
    body = problem(
        post(http, f"/v1/games/{game_id}/melds", '{"melds": [["7H", "ZZ", "7D"]]}', **auth),
        422,
        "bad_card",
        "melds[0][1]: 'ZZ' is not a card: write rank then suit",
    )
    assert body["errors"] == [body["detail"]]
    problem(post(http, f"/v1/games/{game_id}/turn/discard", '{"card": "Tſ"}', **auth), 422, "bad_card", "card: 'Tſ'")
    for padded in ('"TH\\n"', '" TH"'):  # the pattern's $ is the end of the code, as in JSON Schema
        problem(post(http, f"/v1/games/{game_id}/turn/discard", f'{{"card": {padded}}}', **auth), 422, "bad_card")
    body = '{"lay_offs": [{"meld": 0, "cards": ["1H"]}], "melds": [["AC"], ["XX"]]}'
    problem(post(http, f"/v1/games/{game_id}/melds", body, **auth), 422, "bad_card", "melds[1][0]: 'XX'", "'1H'")


def test_a_bad_card_in_a_stacked_deck_is_named_with_its_place(http):
    body = '{"variant": "may_i", "seats": 3, "test": {"stacked_decks": [null, ["AS", "ZZ"]]}}'
    problem(post(http, "/v1/games", body), 422, "bad_card", "test.stacked_decks[1][1]: 'ZZ' is not a card")


def test_a_card_error_beside_another_error_is_a_validation_error(http):
    game_id, token = two_seat_game(http)
    body = '{"lay_offs": [{"meld": -1, "cards": ["XX"]}]}'
    response = post(http, f"/v1/games/{game_id}/lay-offs", body, Authorization=f"Bearer {token}")
    problem(response, 422, "validation_error", "lay_offs[0].meld:", "lay_offs[0].cards[0]: 'XX' is not a card")


def test_card_codes_in_any_case_and_10_are_still_read(http):
    """Seat 0 may not discard during the first-upcard offer: the card was read, the rules refused it."""
    game_id, token = two_seat_game(http)
    for spelled in ("10h", "10H", "th", "Jk", "aS"):
        response = post(
            http, f"/v1/games/{game_id}/turn/discard", json.dumps({"card": spelled}), Authorization=f"Bearer {token}"
        )
        assert response.status_code == 409, response.text
        assert response.json()["code"] == "wrong_phase"


# ---------------------------------------------------------------------------
# Chunked bodies


def _chunks(pieces: int, size: int = 1024) -> Iterator[bytes]:
    yield b'{"variant": "may_i", "seats": 2, "players": [{"name": "Ann"}, {"name": "Bob"}], "test": {"seed": "'
    for _ in range(pieces):
        yield b"a" * size
    yield b'"}}'


def test_a_chunked_body_over_the_limit_is_413(http, settings):
    session, base = http
    pieces = settings.max_body_bytes // 1024 + 4
    response = session.post(f"{base}/v1/games", data=_chunks(pieces), headers=JSON, timeout=TIMEOUT)
    problem(response, 413, "request_too_large", f"at most {settings.max_body_bytes:,} bytes")


def test_a_chunked_body_within_the_limit_is_read_whole(http):
    """A chunked body under the limit is read as sent (here: a seed of the wrong shape, named)."""
    session, base = http
    response = session.post(f"{base}/v1/games", data=_chunks(2), headers=JSON, timeout=TIMEOUT)
    problem(response, 422, "validation_error", "test.seed:")


def test_a_chunked_body_of_exactly_the_limit_is_not_too_large(http, settings):
    head = b'{"variant": "may_i", "seats": 2, "test": {"seed": "'
    tail = b'"}}'
    body = head + b"a" * (settings.max_body_bytes - len(head) - len(tail)) + tail
    assert len(body) == settings.max_body_bytes
    session, base = http
    response = session.post(f"{base}/v1/games", data=iter([body[:1000], body[1000:]]), headers=JSON, timeout=TIMEOUT)
    problem(response, 422, "validation_error", "test.seed:")


# ---------------------------------------------------------------------------
# Swagger UI


def test_the_swagger_ui_calls_no_outside_validator(http):
    session, base = http
    page = session.get(f"{base}/docs/", timeout=TIMEOUT)
    assert page.status_code == 200
    config = re.search(r"var user_config = (\{.*?\});", page.text)
    assert config is not None, page.text
    settings = json.loads(config.group(1))
    assert "validatorUrl" in settings and settings["validatorUrl"] is None
    assert settings["url"] == "/openapi.json"
    assert "validator.swagger.io" not in page.text
