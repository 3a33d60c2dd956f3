"""Helpers for bots that want them: card points, meld checks, the contract solver.

Cards are codes as the API writes them (``"7C"``, ``"TH"``, ``"JK"``). The rules come
from ``mayi_engine`` (one source of truth): :func:`is_meld` and :func:`find_contract`
need it installed (the whole project, ``mayi-game-service``) and raise :class:`EngineMissing` otherwise;
:func:`card_points` falls back to the May I points table without it.

>>> card_points("JK"), card_points("QS"), card_points("4D", "shanghai")
(50, 10, 5)
>>> is_meld(["7C", "7D", "JK"]), is_meld(["7C", "8D", "9H"])
(True, False)
>>> find_contract(["7C", "7D", "7H", "5S", "6S", "JK", "8S", "KD"], books=1, runs=1)
[['7C', '7D', '7H'], ['5S', '6S', 'JK', '8S']]
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

#: The May I points of a card left in hand, by rank ("JK": a joker); others score their number.
MAY_I_POINTS = {"JK": 50, "A": 20, "T": 10, "J": 10, "Q": 10, "K": 10}


class EngineMissing(ImportError):
    """The helper needs the rules engine, ``mayi_engine`` (the whole project, ``mayi-game-service``)."""


def engine() -> ModuleType:
    """The ``mayi_engine`` module, or :class:`EngineMissing` saying how to install it."""
    try:
        import mayi_engine
    except ImportError as exc:
        raise EngineMissing(
            "this needs the rules engine mayi_engine, which is not installed: install the whole project, "
            "mayi-game-service (pip install . in a clone of its repository), not the SDK alone (mayi-game-sdk)"
        ) from exc
    return mayi_engine


def card_points(card: str, variant: str = "may_i") -> int:
    """Points ``card`` scores against its holder at the end of a round in ``variant``."""
    try:
        eng = engine()
    except EngineMissing:
        rank = "JK" if card.upper() == "JK" else card.upper()[:1]
        return MAY_I_POINTS.get(rank, int(rank) if rank.isdigit() else 10)
    rules = eng.get_rules(variant)
    return int(rules.card_score(eng.parse_card(card)))


def hand_points(hand: Sequence[str], variant: str = "may_i") -> int:
    """Points of a whole hand (see :func:`card_points`)."""
    return sum(card_points(c, variant) for c in hand)


def is_meld(cards: Sequence[str], variant: str = "may_i") -> bool:
    """Whether ``cards`` (a run low to high) form a legal book or run in ``variant``."""
    eng = engine()
    try:
        return bool(eng.read_meld(eng.parse_cards(list(cards)), eng.get_rules(variant)))
    except eng.MayIError:
        return False


def meld_problem(cards: Sequence[str], variant: str = "may_i") -> str | None:
    """Why ``cards`` are not a legal meld in ``variant`` (the rule, as the server says it), or ``None``."""
    eng = engine()
    try:
        eng.read_meld(eng.parse_cards(list(cards)), eng.get_rules(variant))
    except eng.MayIError as exc:
        return str(exc)
    return None


def find_contract(
    hand: Sequence[str], books: int, runs: int, variant: str = "may_i", *, all_cards: bool = False
) -> list[list[str]] | None:
    """Melds from ``hand`` meeting a contract of ``books`` books and ``runs`` runs (the exact
    solver of ``mayi_engine``), as card codes ready for ``go_down``; ``None`` if none exists."""
    eng = engine()
    contract: Any = eng.Contract(books=books, runs=runs, all_cards=all_cards)
    plan = eng.find_contract(eng.parse_cards(list(hand)), contract, eng.get_rules(variant))
    if plan is None:
        return None
    return [eng.card_codes(cards) for _, cards in plan]
