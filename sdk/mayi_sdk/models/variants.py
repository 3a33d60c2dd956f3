"""The variants the service plays, as ``GET /v1/variants`` serves them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..cards import rank_code
from .base import listed
from .games import Contract


@dataclass(frozen=True)
class VariantRound:
    """One round of a variant: its number (from 1), the cards dealt to each player, its contract."""

    number: int
    deal: int
    contract: Contract

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VariantRound:
        return cls(int(data["number"]), int(data["deal"]), Contract.from_json(data["contract"]))


@dataclass(frozen=True)
class ClaimRules:
    """Claiming the upcard out of turn in a variant: its ``name`` at the table ("May I",
    "Buy"), the stock cards a claimant takes with it (``penalty``), the claims a seat may
    win in one round (``limit``; ``None``: no limit), whether the discarder may claim its own."""

    name: str
    penalty: int
    limit: int | None
    discarder_may_claim: bool

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClaimRules:
        limit = data.get("limit")
        return cls(
            str(data["name"]),
            int(data["penalty"]),
            None if limit is None else int(limit),
            bool(data["discarder_may_claim"]),
        )


@dataclass(frozen=True)
class OptionSpec:
    """A table option a variant accepts: its ``type`` (``"boolean"``, ``"integer"``,
    ``"number"``), range, the variant's ``default``, and whether it is a ``house`` rule."""

    name: str
    type: str
    minimum: float | None
    maximum: float | None
    default: Any
    house: bool
    description: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OptionSpec:
        return cls(
            str(data["name"]),
            str(data["type"]),
            data.get("minimum"),
            data.get("maximum"),
            data.get("default"),
            bool(data.get("house", False)),
            str(data.get("description", "")),
        )


@dataclass(frozen=True)
class Variant:
    """A variant's rules as the server serves them (``GET /v1/variants``): its ``name`` (as
    ``variant`` in requests), ``title``, player range, ``decks`` (``(up_to_players, decks)``
    steps, ascending), ``rounds``, the points of a card left in hand by rank
    (``card_points``: ``"A"``, ``"2"`` .. ``"9"``, ``"T"``, ``"J"``, ``"Q"``, ``"K"``,
    ``"JK"``), the joker limit, the claim and the table options."""

    name: str
    title: str
    min_players: int
    max_players: int
    decks: list[tuple[int, int]]
    rounds: list[VariantRound]
    card_points: dict[str, int]
    joker_limit: int | None
    claim: ClaimRules
    options: list[OptionSpec]
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Variant:
        limit = data.get("joker_limit")
        return cls(
            str(data["name"]),
            str(data["title"]),
            int(data["min_players"]),
            int(data["max_players"]),
            [(int(d["up_to_players"]), int(d["decks"])) for d in listed(data, "decks")],
            [VariantRound.from_json(r) for r in listed(data, "rounds")],
            {str(k): int(v) for k, v in (data.get("card_points") or {}).items()},
            None if limit is None else int(limit),
            ClaimRules.from_json(data["claim"]),
            [OptionSpec.from_json(o) for o in listed(data, "options")],
            data,
        )

    def points(self, card: str) -> int:
        """Points ``card`` (a code: ``"7C"``, ``"TH"``, ``"JK"``) scores against its holder
        when a round ends."""
        return self.card_points[rank_code(card)]
