"""``GET /v1/variants`` and ``GET /v1/house-bots`` over a real socket: each variant's rules
as the engine's registry holds them (a variant registered before the app is made is listed
too), and the house bots ``house_bot`` accepts. Every answer is checked against
openapi/openapi.json by the ``app`` fixture."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import requests
from registered_variants import serving_variant
from servers import LiveServer

import mayi_bots
from mayi_engine import MAY_I, VARIANTS, Contract, RoundSpec, parse_card
from mayi_service.config import Settings

TIMEOUT = 30
OPENAPI = Path(__file__).resolve().parents[3] / "openapi" / "openapi.json"
CODES = ["JK", *(r + s for r in "A23456789TJQK" for s in "CDHS")]


def test_every_variant_is_served_as_the_engine_declares_it(live_server: LiveServer) -> None:
    answer = requests.get(f"{live_server.url}/v1/variants", timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    served = {v["name"]: v for v in answer.json()["variants"]}
    assert list(served) == list(VARIANTS)
    for name, rules in VARIANTS.items():
        variant = served[name]
        assert (variant["title"], variant["min_players"], variant["max_players"]) == (
            rules.title,
            rules.min_players,
            rules.max_players,
        )
        assert [(d["up_to_players"], d["decks"]) for d in variant["decks"]] == list(rules.decks)
        assert [(r["number"], r["deal"], r["contract"]) for r in variant["rounds"]] == [
            (i, spec.deal, spec.contract.as_json()) for i, spec in enumerate(rules.rounds, 1)
        ]
        points = variant["card_points"]
        for code in CODES:
            assert points[code if code == "JK" else code[0]] == rules.card_score(parse_card(code)), (name, code)
        assert variant["joker_limit"] == rules.joker_limit
        assert variant["distinct_book_ranks"] is rules.distinct_book_ranks
        assert variant["claim"] == {
            "name": rules.claim_name,
            "penalty": rules.claim_penalty,
            "limit": rules.claim_limit,
            "discarder_may_claim": rules.discarder_may_claim,
        }
        assert variant["options"] == rules.option_table()
    # The two games differ where their rules do (Shanghai's points are not May I's).
    assert served["shanghai"]["card_points"]["4"] == 5 and served["may_i"]["card_points"]["4"] == 4
    assert (served["may_i"]["claim"]["name"], served["shanghai"]["claim"]["name"]) == ("May I", "Buy")


@pytest.fixture
def short_variant_server(settings: Settings) -> Iterator[str]:
    """The app, made after a short variant is registered, on a real socket (the registry is restored after)."""
    short = replace(MAY_I, name="short_test", title="Short", rounds=(RoundSpec(Contract(books=1, runs=0), 7),))
    with serving_variant(short, settings) as url:
        yield url


def test_a_registered_variant_is_served_too(short_variant_server: str) -> None:
    answer = requests.get(f"{short_variant_server}/v1/variants", timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    short = next(v for v in answer.json()["variants"] if v["name"] == "short_test")
    assert short["title"] == "Short" and [r["deal"] for r in short["rounds"]] == [7]


def test_the_house_bots_are_the_reference_bots_a_seat_accepts(live_server: LiveServer) -> None:
    answer = requests.get(f"{live_server.url}/v1/house-bots", timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"house_bots": list(mayi_bots.NAMES)}
    document = json.loads(OPENAPI.read_text())
    seat_in = document["components"]["schemas"]["SeatIn"]["properties"]["house_bot"]
    assert seat_in["enum"] == answer.json()["house_bots"]
