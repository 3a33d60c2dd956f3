"""The committed OpenAPI document: up to date, complete, and what the app serves.

``openapi/openapi.json`` is the contract frontends, bots and the SDK are built
against (API-SPEC.md), so it is generated from the app (``mayi openapi``) and
committed; these tests fail when the two drift apart, when an operation lacks
a summary or an example, and when an operation can answer an error status it
does not document as problem+json.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from click.testing import CliRunner

from mayi_service.api.openapi import render
from mayi_service.cli import main as cli

SPEC_PATH = Path(__file__).resolve().parents[3] / "openapi" / "openapi.json"
PROBLEM = "application/problem+json"

GAME = "/v1/games/{game_id}"
ACTIONS = [f"{GAME}/turn/draw", f"{GAME}/turn/discard", f"{GAME}/claims", f"{GAME}/melds", f"{GAME}/lay-offs"]
BODY_ERRORS = {400, 413, 422}  # not JSON, too large, not the documented shape

#: Every operation, and the error statuses it can answer (429: rate limited, where limits apply).
EXPECTED_ERRORS: dict[tuple[str, str], set[int]] = {
    ("get", "/healthz"): {503},
    ("get", "/metrics"): set(),
    ("get", "/v1/games"): {422, 429},
    ("post", "/v1/games"): BODY_ERRORS | {429},
    ("get", GAME): {401, 403, 404, 429},
    ("post", f"{GAME}/seats"): BODY_ERRORS | {401, 404, 409, 429},
    **{("post", path): BODY_ERRORS | {401, 403, 404, 409, 412, 429, 503} for path in ACTIONS},
    ("get", f"{GAME}/events"): {401, 403, 404, 422, 429, 503},
    ("get", f"{GAME}/events/stream"): {401, 403, 404, 422, 429, 503},
    ("get", f"{GAME}/replay"): {404, 409, 429},
    # The bot platform (401: no bot token, or one rotated since).
    ("post", "/v1/bots"): BODY_ERRORS | {429},
    ("get", "/v1/bots/me"): {401, 429},
    ("post", "/v1/bots/me/token"): {401, 429},
    ("get", "/v1/bots/me/decisions"): {401, 422, 429, 503},
    ("patch", "/v1/bots/me"): BODY_ERRORS | {401, 429},
    ("post", "/v1/bots/me/webhook-secret"): {401, 429},
    ("get", "/v1/bots/me/deliveries"): {401, 429},
    # The bot ladder.
    ("get", "/v1/ladder"): {422, 429},
    ("post", "/v1/ladder/entries"): BODY_ERRORS | {401, 429},
    ("delete", "/v1/ladder/entries/{variant}"): {401, 404, 429},
    ("get", "/v1/ladder/matches"): {422, 429},
    ("get", "/v1/ladder/bots/{bot_id}"): {404, 422, 429},
    ("get", "/v1/ladder/bots/{bot_id}/history"): {404, 422, 429},
    # What the service plays.
    ("get", "/v1/variants"): {429},
    ("get", "/v1/house-bots"): {429},
}


#: Operations that are POSTs (they change something) but take no body.
BODYLESS_POSTS = {"/v1/bots/me/token", "/v1/bots/me/webhook-secret"}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
    return document


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if method in ("get", "put", "post", "delete", "patch")
    ]


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        *_, kind, name = node["$ref"].split("/")
        node = spec["components"][kind][name]
    return node


def _validator(spec: dict[str, Any], schema: dict[str, Any]) -> Any:
    """A JSON Schema validator for ``schema`` whose ``$ref``s resolve within the document."""
    return jsonschema_rs.Draft7Validator({"allOf": [schema], "components": spec["components"]})


# -- the document is current ----------------------------------------------------


def test_committed_document_is_what_the_app_generates() -> None:
    committed = SPEC_PATH.read_text(encoding="utf-8")
    generated = render()
    if committed != generated:
        diff = "".join(
            list(
                difflib.unified_diff(
                    committed.splitlines(keepends=True),
                    generated.splitlines(keepends=True),
                    "openapi/openapi.json (committed)",
                    "generated from the app",
                )
            )[:60]
        )
        pytest.fail("openapi/openapi.json is stale: run `mayi openapi` and commit the result.\n" + diff, pytrace=False)


def test_mayi_openapi_check_passes_on_the_committed_document() -> None:
    result = CliRunner().invoke(cli, ["openapi", "--check", "--output", str(SPEC_PATH)])
    assert result.exit_code == 0, result.output
    assert "up to date" in result.output


def test_mayi_openapi_check_fails_on_a_stale_document_and_writing_fixes_it(tmp_path: Path) -> None:
    stale = tmp_path / "openapi.json"
    stale.write_text(SPEC_PATH.read_text(encoding="utf-8").replace('"summary"', '"old_summary"', 1))
    runner = CliRunner()
    result = runner.invoke(cli, ["openapi", "--check", "--output", str(stale)])
    assert result.exit_code == 1
    assert "mayi openapi" in result.output
    assert runner.invoke(cli, ["openapi", "--output", str(stale)]).exit_code == 0
    assert runner.invoke(cli, ["openapi", "--check", "--output", str(stale)]).exit_code == 0
    assert stale.read_text(encoding="utf-8") == SPEC_PATH.read_text(encoding="utf-8")


def test_served_document_equals_the_committed_one(client: Any, spec: dict[str, Any]) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    served = response.get_json()
    assert sorted(served["paths"]) == sorted(spec["paths"])
    assert served["paths"] == spec["paths"]
    assert served == spec


# -- the document is complete ---------------------------------------------------------


def test_every_operation_is_known_here(spec: dict[str, Any]) -> None:
    """A new operation must be added to EXPECTED_ERRORS (and so thought about) here."""
    found = {(method, path) for method, path, _ in _operations(spec)}
    assert found == set(EXPECTED_ERRORS)


@pytest.mark.parametrize(("method", "path"), sorted(EXPECTED_ERRORS))
def test_operation_has_a_summary_and_documents_its_errors(spec: dict[str, Any], method: str, path: str) -> None:
    operation = spec["paths"][path][method]
    assert operation.get("summary", "").strip(), f"{method.upper()} {path} has no summary (the docstring's first line)"
    responses = operation["responses"]
    assert any(code.startswith("2") for code in responses), f"{method.upper()} {path} documents no success"
    missing = {str(s) for s in EXPECTED_ERRORS[(method, path)]} - set(responses)
    assert not missing, f"{method.upper()} {path} does not document {sorted(missing)}"
    for code, response in responses.items():
        if code.startswith(("4", "5")) and (method, path, code) != ("get", "/healthz", "503"):
            content = _resolve(spec, response)["content"]
            assert list(content) == [PROBLEM], f"{method.upper()} {path} {code} is not {PROBLEM}"
            assert _resolve(spec, content[PROBLEM]["schema"]) is spec["components"]["schemas"]["Problem"]
            example = content[PROBLEM].get("example")
            if example is not None:
                assert example["status"] == int(code)
                _validator(spec, content[PROBLEM]["schema"]).validate(example)
    default = _resolve(spec, responses["default"])
    assert list(default["content"]) == [PROBLEM], "the default (any other) error must be problem+json"


def test_problem_schema_has_the_error_model_of_the_api(spec: dict[str, Any]) -> None:
    problem = spec["components"]["schemas"]["Problem"]
    assert set(problem["required"]) == {"type", "title", "status", "detail", "code"}
    # Closed, so that a generated client knows every member: each extension member is declared.
    assert problem["additionalProperties"] is False
    extensions = {"errors", "retry_after", "closes_at", "current_version", "cards", "limit"}
    assert extensions <= set(problem["properties"])
    assert problem["properties"]["code"]["enum"] == sorted(problem["properties"]["code"]["enum"])


@pytest.mark.parametrize(
    ("method", "path"), [(m, p) for m, p in sorted(EXPECTED_ERRORS) if m == "post"], ids=lambda x: str(x)
)
def test_request_body_has_a_valid_example(spec: dict[str, Any], method: str, path: str) -> None:
    if path in BODYLESS_POSTS:
        assert "requestBody" not in spec["paths"][path][method]
        return
    body = spec["paths"][path][method]["requestBody"]
    media = body["content"]["application/json"]
    assert "example" in media, f"{method.upper()} {path}: the request body has no example"
    validator = _validator(spec, media["schema"])
    errors = [e.message for e in validator.iter_errors(media["example"])]
    assert not errors, f"{method.upper()} {path}: the example does not match its schema: {errors}"


# -- the errors the app really answers are documented ------------------------------------


def _create(client: Any, **extra: Any) -> dict[str, Any]:
    body = {"variant": "may_i", "seats": 2, "players": [{"name": "Ann"}, {"name": "Bob"}], **extra}
    response = client.post("/v1/games", json=body)
    assert response.status_code == 201, response.get_json()
    created: dict[str, Any] = response.get_json()
    return created


def test_provoked_errors_are_documented_as_sent(client: Any, spec: dict[str, Any]) -> None:
    """Provoke each error an operation can answer (all but 429) and check the answer's status
    is documented explicitly for that operation, as problem+json matching the Problem schema."""
    game = _create(client)
    other = _create(client)
    waiting = client.post("/v1/games", json={"variant": "may_i", "seats": 2}).get_json()
    game_id = game["game_id"]
    actor = game["game"]["actor"]
    idle = {"Authorization": f"Bearer {game['seats'][1 - actor]['token']}"}  # a seat that may not act now
    foreign = {"Authorization": f"Bearer {other['seats'][0]['token']}"}
    malformed = {"Authorization": "Basic YTpi"}
    examples = {
        path: spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]["example"]
        for path in [*ACTIONS, f"{GAME}/seats", "/v1/games", "/v1/bots", "/v1/ladder/entries"]
    }
    problem = _validator(spec, {"$ref": "#/components/schemas/Problem"})
    seen: dict[tuple[str, str], set[int]] = {key: set() for key in EXPECTED_ERRORS}

    def send(method: str, path: str, url: str, *, expect: int, **kwargs: Any) -> None:
        response = client.open(url, method=method.upper(), **kwargs)
        assert response.status_code == expect, (method, url, response.status_code, response.get_json())
        assert response.mimetype == PROBLEM, (method, url, response.mimetype)
        problem.validate(response.get_json())
        assert str(expect) in spec["paths"][path][method]["responses"], f"{method.upper()} {path} {expect}"
        seen[(method, path)].add(expect)

    not_json = {"data": "{not json", "content_type": "application/json"}
    too_large = {"data": "[" * 70_000, "content_type": "application/json"}
    for path, example in examples.items():
        url = path.replace("{game_id}", game_id)
        send("post", path, url, expect=400, **not_json, headers=idle)
        send("post", path, url, expect=413, **too_large, headers=idle)
        send("post", path, url, expect=422, json={**example, "bogus": 1}, headers=idle)
        if "{game_id}" in path:
            send("post", path, path.replace("{game_id}", "no-such-game"), expect=404, json=example, headers=idle)
    for path in ACTIONS:
        url = path.replace("{game_id}", game_id)
        send("post", path, url, expect=401, json=examples[path])
        send("post", path, url, expect=401, json=examples[path], headers=malformed)
        send("post", path, url, expect=403, json=examples[path], headers=foreign)
        send("post", path, url, expect=409, json=examples[path], headers=idle)
        send("post", path, url, expect=412, json=examples[path], headers={**idle, "If-Match": "999"})
    send("post", f"{GAME}/seats", f"/v1/games/{game_id}/seats", expect=409, json={"name": "Dee"})
    send("get", "/v1/games", "/v1/games?page=0", expect=422)
    for path in (GAME, f"{GAME}/events", f"{GAME}/events/stream"):
        url = path.replace("{game_id}", game_id)
        send("get", path, url, expect=401, headers=malformed)
        send("get", path, url, expect=403, headers=foreign)
        send("get", path, path.replace("{game_id}", "no-such-game"), expect=404)
    send("get", f"{GAME}/events", f"/v1/games/{game_id}/events?after=-1", expect=422)
    send(
        "get", f"{GAME}/events/stream", f"/v1/games/{game_id}/events/stream", expect=422, headers={"Last-Event-ID": "x"}
    )
    send("get", f"{GAME}/replay", f"/v1/games/{game_id}/replay", expect=409)
    send("get", f"{GAME}/replay", f"/v1/games/{waiting['game_id']}/replay", expect=409)
    send("get", f"{GAME}/replay", "/v1/games/no-such-game/replay", expect=404)
    # The bot platform: a bot token that is not (or no longer) valid, a seat token, a bad wait.
    gone_bot = {"Authorization": "Bearer mayi_bot_rotated-away"}
    seats_url = f"/v1/games/{waiting['game_id']}/seats"
    send("post", f"{GAME}/seats", seats_url, expect=401, json={"name": "Dee"}, headers=gone_bot)
    for path in ("/v1/bots/me", "/v1/bots/me/decisions"):
        send("get", path, path, expect=401, headers=foreign)
    send("post", "/v1/bots/me/token", "/v1/bots/me/token", expect=401, headers=gone_bot)
    send("get", "/v1/bots/me/decisions", "/v1/bots/me/decisions?wait=99", expect=422)
    # Webhooks: the bot's URL (a body), its secret, its delivery log.
    me = "/v1/bots/me"
    send("patch", me, me, expect=400, **not_json, headers=gone_bot)
    send("patch", me, me, expect=413, **too_large, headers=gone_bot)
    send("patch", me, me, expect=422, json={"webhook_url": "ftp://x"}, headers=gone_bot)
    send("patch", me, me, expect=401, json={"webhook_url": None}, headers=gone_bot)
    send("post", "/v1/bots/me/webhook-secret", "/v1/bots/me/webhook-secret", expect=401, headers=gone_bot)
    send("get", "/v1/bots/me/deliveries", "/v1/bots/me/deliveries", expect=401, headers=foreign)
    # The ladder: no bot token, a bot that never entered, unknown variants and bots.
    entry = examples["/v1/ladder/entries"]
    send("post", "/v1/ladder/entries", "/v1/ladder/entries", expect=401, json=entry, headers=gone_bot)
    bot = {"Authorization": f"Bearer {client.post('/v1/bots', json={'name': 'Robo'}).get_json()['token']}"}
    leave = "/v1/ladder/entries/{variant}"
    send("delete", leave, "/v1/ladder/entries/may_i", expect=401, headers=foreign)
    send("delete", leave, "/v1/ladder/entries/may_i", expect=404, headers=bot)
    send("get", "/v1/ladder", "/v1/ladder?variant=chess", expect=422)
    send("get", "/v1/ladder/matches", "/v1/ladder/matches?variant=may_i&limit=0", expect=422)
    page = "/v1/ladder/bots/{bot_id}"
    send("get", page, "/v1/ladder/bots/b_nobody?variant=may_i", expect=404)
    send("get", page, "/v1/ladder/bots/b_nobody", expect=422)
    history = "/v1/ladder/bots/{bot_id}/history"
    send("get", history, "/v1/ladder/bots/b_nobody/history?variant=may_i", expect=404)
    send("get", history, "/v1/ladder/bots/b_nobody/history", expect=422)

    # Every expected status but the rate limit (and /healthz's Redis outage) was provoked.
    for key, statuses in EXPECTED_ERRORS.items():
        assert statuses - {429, 503} <= seen[key], f"{key}: not provoked {sorted(statuses - {429, 503} - seen[key])}"


def test_not_modified_is_documented(client: Any, spec: dict[str, Any]) -> None:
    game = _create(client)
    url = f"/v1/games/{game['game_id']}"
    headers = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
    etag = client.get(url, headers=headers).headers["ETag"]
    response = client.get(url, headers={**headers, "If-None-Match": etag})
    assert response.status_code == 304
    assert "304" in spec["paths"][GAME]["get"]["responses"]
    assert "ETag" in spec["paths"][GAME]["get"]["responses"]["200"]["headers"]
