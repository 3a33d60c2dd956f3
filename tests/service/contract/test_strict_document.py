"""The OpenAPI document in the forms strict tools read (OpenAPI 3.0.3 as written), and as
strict as the server: what a generated client or a strict validator relies on."""

from __future__ import annotations

import json
from typing import Any

from documented import PER_OPERATION, Sent, all_problems, component_problems, problems, spec
from http_moves import PATHS, auth

from mayi_engine import VARIANTS

GAME = "/v1/games/{game_id}"


def _walk(node: Any, where: str = "#") -> Any:
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from _walk(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{where}/{i}")


def test_nullable_is_always_beside_a_type() -> None:
    """OpenAPI 3.0.3: ``nullable`` counts only beside a ``type``; strict tools ignore it elsewhere."""
    loose = [where for where, node in _walk(spec()) if node.get("nullable") is True and "type" not in node]
    assert not loose, loose


def _playing_view(client: Any) -> tuple[str, list[str], dict[str, Any]]:
    created = client.post(
        "/v1/games", json={"variant": "may_i", "seats": 3, "players": [{"name": n} for n in ("Ann", "Bob", "Cy")]}
    ).get_json()
    return created["game_id"], [seat["token"] for seat in created["seats"]], created["game"]


def test_a_view_without_a_claim_window_is_valid_and_a_bad_window_is_not(client: Any) -> None:
    game_id, tokens, view = _playing_view(client)
    assert view["status"] == "playing" and view["claim_window"] is not None  # May I's first upcard offer
    assert component_problems("GameView", view) == []
    assert component_problems("GameView", {**view, "claim_window": None}) == []  # as between upcards
    sent = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0]))
    body = sent.get_data()
    assert problems(Sent("get", GAME, 200, "application/json", body, url_path=f"/v1/games/{game_id}")) == []
    assert component_problems("GameView", {**view, "claim_window": {}})  # an object, but no ClaimWindow
    assert component_problems("GameCreate", {"variant": "may_i", "seats": 3, "test": None}) == []


def test_a_legal_entry_is_sent_as_it_is(client: Any) -> None:
    """Each legal entry (with its ``type``) is a valid body of its endpoint, by the document and the server."""
    game_id, tokens, view = _playing_view(client)
    seat = view["actor"]
    mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).get_json()
    assert mine["legal"]
    for entry in mine["legal"]:
        body = spec()["paths"][f"{GAME}/{PATHS[entry['type']]}"]["post"]["requestBody"]["content"]["application/json"]
        name = body["schema"]["$ref"].rsplit("/", 1)[1]
        assert component_problems(name, entry) == [], entry
    entry = mine["legal"][0]
    answer = client.post(f"/v1/games/{game_id}/{PATHS[entry['type']]}", json=entry, headers=auth(tokens[seat]))
    assert answer.status_code == 200, answer.get_json()
    wrong = {**entry, "type": "discard" if entry["type"] != "discard" else "draw"}
    refused = client.post(f"/v1/games/{game_id}/{PATHS[entry['type']]}", json=wrong, headers=auth(tokens[seat]))
    assert refused.status_code == 422 and refused.get_json()["code"] == "validation_error"


def test_a_view_shows_the_options_the_table_plays_by(client: Any) -> None:
    created = client.post("/v1/games", json={"variant": "may_i", "seats": 3, "options": {"turn_seconds": 90}})
    options = created.get_json()["game"]["options"]
    rules = VARIANTS["may_i"]
    assert options == {spec.name: getattr(rules, spec.name) for spec in rules.option_specs} | {"turn_seconds": 90}
    required = spec()["components"]["schemas"]["EffectiveOptions"]["required"]
    assert {"claim_seconds", "turn_seconds"} <= set(required)


def test_the_event_stream_is_declared_as_text() -> None:
    content = spec()["paths"][f"{GAME}/events/stream"]["get"]["responses"]["200"]["content"]
    assert list(content) == ["text/event-stream"]
    assert content["text/event-stream"]["schema"]["type"] == "string"


def test_response_schemas_name_their_types() -> None:
    schemas = spec()["components"]["schemas"]
    variants = sorted(VARIANTS)
    for name, schema in schemas.items():
        variant = schema.get("properties", {}).get("variant")
        if variant is not None:
            assert sorted(variant["enum"]) == variants, name
    assert schemas["Decision"]["properties"]["view"]["allOf"] == [{"$ref": "#/components/schemas/PlayingView"}]
    assert schemas["WentDownData"]["properties"]["contract"] == {"$ref": "#/components/schemas/Contract"}
    assert "PaginationMetadata" not in schemas


def test_servers_and_each_operations_security_are_declared() -> None:
    assert spec()["servers"] == [{"url": "/", "description": "The server that serves this document"}]
    for path, operations in spec()["paths"].items():
        for method, operation in operations.items():
            if method == "parameters":
                continue
            assert "security" in operation, f"{method.upper()} {path}"
    paths = spec()["paths"]
    assert paths[f"{GAME}/turn/draw"]["post"]["security"] == [{"bearer": []}]
    assert paths[GAME]["get"]["security"] == [{}, {"bearer": []}]
    assert paths["/v1/games"]["post"]["security"] == []


def test_the_document_is_as_strict_as_the_server(client: Any) -> None:
    """Where schemathesis found the document looser than the server, it now says what the server checks."""
    schemas = spec()["components"]["schemas"]
    assert component_problems("SeatIn", {})  # the server refuses a seat body of {}
    assert component_problems("PlayerIn", {"name": "Ann\u0007"})  # a control character
    assert component_problems("BotIn", {"name": "b", "webhook_url": ""})  # an empty URL
    assert component_problems("BotIn", {"name": "b", "webhook_url": "https://example.invalid/hook"}) == []
    assert "May I 7" in schemas["TestBlock"]["properties"]["start_round"]["description"]
    events = {p["name"]: p["schema"] for p in spec()["paths"][f"{GAME}/events"]["get"]["parameters"]}
    assert events["after"]["pattern"] == "^[0-9]{1,16}$" and "pattern" in events["wait"]


def test_a_test_s_answers_of_each_shape_are_checked_however_many_it_sent(client: Any) -> None:
    """Of a test's many answers of one operation, each of a new shape is held to the document
    (not only a sample): one view in the middle with a field the document lacks is found."""
    game_id, tokens, _ = _playing_view(client)
    view = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).get_json()
    many = PER_OPERATION * 10

    def sent(body: dict[str, Any]) -> Sent:
        return Sent("get", GAME, 200, "application/json", json.dumps(body).encode(), url_path=f"/v1/games/{game_id}")

    answers = [sent({**view, "version": n}) for n in range(many)]
    assert all_problems(answers) == []
    answers[many // 2 + 1] = sent({**view, "undocumented": 1})
    found = all_problems(answers)
    assert len(found) == 1 and "undocumented" in found[0], found
