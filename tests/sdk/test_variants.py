"""The variants and house bots through the SDK, against the real service on a loopback
socket: ``Client.list_variants`` gives each variant's rules as typed data, the helpers score
cards from them with no rules engine installed, and a polling bot is given them before
its first decision; ``Client.list_house_bots`` names the reference bots."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from servers import LiveServer, PollingBots

import mayi_bots
from mayi_engine import VARIANTS, parse_card
from mayi_sdk import Bot, Client, GameView, LegalMove, Variant, Wait, helpers

SEED = "5e" * 32
#: The longest a game's last round may take on a loaded CI machine (a cap, not a timing).
GAME_CAP = 600.0


@pytest.fixture
def base(live_server: LiveServer) -> str:
    return live_server.url


def test_the_client_lists_the_variants_and_house_bots_as_the_server_serves_them(base: str) -> None:
    with Client(base) as client:
        variants = client.list_variants()
        house_bots = client.list_house_bots()
    assert list(variants) == list(VARIANTS)
    for name, rules in VARIANTS.items():
        variant = variants[name]
        assert isinstance(variant, Variant) and variant.title == rules.title
        assert (variant.min_players, variant.max_players, variant.decks) == (
            rules.min_players,
            rules.max_players,
            list(rules.decks),
        )
        assert [(r.number, r.deal, r.contract.books, r.contract.runs) for r in variant.rounds] == [
            (i, spec.deal, spec.contract.books, spec.contract.runs) for i, spec in enumerate(rules.rounds, 1)
        ]
        for code in ("JK", "AS", "4D", "9H", "TC", "10C", "kd"):
            assert variant.points(code) == rules.card_score(parse_card(code)), (name, code)
        assert variant.joker_limit == rules.joker_limit
        assert (variant.claim.name, variant.claim.penalty, variant.claim.limit) == (
            rules.claim_name,
            rules.claim_penalty,
            rules.claim_limit,
        )
        assert {o.name: o.default for o in variant.options} == {
            spec.name: getattr(rules, spec.name) for spec in rules.option_specs
        }
    assert house_bots == list(mayi_bots.NAMES)


def test_the_helpers_score_a_served_variant_without_the_engine(base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with Client(base) as client:
        shanghai = client.list_variants()["shanghai"]
    monkeypatch.setitem(sys.modules, "mayi_engine", None)  # import mayi_engine now raises ImportError
    assert helpers.card_points("4D", shanghai) == 5  # Shanghai's points, not May I's 4
    assert helpers.hand_points(["JK", "AS", "9H", "4D"], shanghai) == 25 + 15 + 10 + 5
    with pytest.raises(helpers.EngineMissing, match=r"Client\.list_variants"):
        helpers.card_points("4D", "shanghai")  # by name: the engine's rules, which are not installed
    with pytest.raises(ValueError, match="'ZZ' is not a card code"):
        shanghai.points("ZZ")


class Noting(Bot):
    """The default bot, noting the variants it knows at each decision."""

    def __init__(self) -> None:
        self.known: list[set[str]] = []

    def decide(self, view: GameView) -> LegalMove | dict[str, Any] | Wait:
        self.known.append(set(self.variants))
        return super().decide(view)


def test_a_polling_bot_is_given_the_variants_before_its_first_decision(base: str, runners: PollingBots) -> None:
    with Client(base) as anon:
        game_id = anon.create_game(
            "shanghai", 3, options={"claim_seconds": 600, "turn_seconds": 600}, test={"seed": SEED, "start_round": 8}
        ).game_id
        clients = []
        for i in range(3):
            account = anon.register_bot(f"noting{i}")
            clients.append(Client(base, account.token))
            clients[-1].take_seat(game_id, f"noting{i}")
    bots = [Noting() for _ in clients]
    assert all(not bot.variants for bot in bots)
    for bot, client in zip(bots, clients, strict=True):
        runners.start(bot, client)
    runners.join(GAME_CAP)
    assert clients[0].get_game(game_id).status == "finished"
    for bot in bots:
        assert bot.known and all(known == set(VARIANTS) for known in bot.known)
        assert bot.variants["shanghai"].points("4D") == 5
    assert all(s.failures == 0 for s in runners.stats)
