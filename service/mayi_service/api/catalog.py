"""What the service plays: ``/v1/variants`` (each variant's rules as data, from the
engine's registry) and ``/v1/house-bots`` (the reference bots a table can seat)."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from mayi_bots import NAMES as HOUSE_BOTS
from mayi_engine import VARIANTS, Rules, parse_card
from mayi_engine.cards import RANKS
from mayi_service.api.common import StrictBlueprint, document_errors
from mayi_service.api.schemas import catalog as s

blp = StrictBlueprint("catalog", __name__, url_prefix="/v1", description="Variants and house bots")


def variant_json(rules: Rules) -> dict[str, Any]:
    """One variant's rules as ``GET /v1/variants`` lists them (:class:`~.schemas.catalog.VariantSchema`)."""
    points = {code: rules.card_score(parse_card(code if code == "JK" else code + "C")) for code in ("JK", *RANKS)}
    return {
        "name": rules.name,
        "title": rules.title,
        "min_players": rules.min_players,
        "max_players": rules.max_players,
        "decks": [{"up_to_players": up_to, "decks": decks} for up_to, decks in rules.decks],
        "rounds": [
            {"number": i, "deal": spec.deal, "contract": spec.contract.as_json()}
            for i, spec in enumerate(rules.rounds, 1)
        ],
        "card_points": points,
        "joker_limit": rules.joker_limit,
        "distinct_book_ranks": rules.distinct_book_ranks,
        "claim": {
            "name": rules.claim_name,
            "penalty": rules.claim_penalty,
            "limit": rules.claim_limit,
            "discarder_may_claim": rules.discarder_may_claim,
        },
        "options": rules.option_table(),
    }


@blp.route("/variants")
class Variants(MethodView):
    @blp.response(200, s.VariantListSchema)
    @blp.doc(operationId="listVariants")
    @document_errors(429, 503)
    def get(self) -> dict[str, Any]:
        """The variants and their rules

        Each variant the service plays, as data: its title, player range, decks,
        rounds with their contracts, the points of the cards left in hand, the joker
        limit, the claim (its name at the table, penalty and limit) and the table
        options it accepts with their defaults.
        """
        return {"variants": [variant_json(rules) for rules in VARIANTS.values()]}


@blp.route("/house-bots")
class HouseBots(MethodView):
    @blp.response(200, s.HouseBotListSchema)
    @blp.doc(operationId="listHouseBots")
    @document_errors(429, 503)
    def get(self) -> dict[str, Any]:
        """The house bots

        The reference bots a table can seat with `POST /v1/games/{game_id}/seats` and
        `{"house_bot": <name>}` (the service plays them), weakest first.
        """
        return {"house_bots": list(HOUSE_BOTS)}
