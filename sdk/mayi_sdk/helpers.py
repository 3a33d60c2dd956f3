"""Helpers for bots that want them: card points, meld checks, the contract solver.

Cards are codes as the API writes them (``"7C"``, ``"TH"``, ``"JK"``). The rules come
from one source, the engine's variants: :func:`card_points` and :func:`hand_points` read
them from a :class:`~mayi_sdk.models.Variant` the server serves (``Client.list_variants()``),
with no engine; given a variant's name, they and :func:`is_meld`, :func:`meld_problem`
and :func:`find_contract` need ``mayi_engine`` installed (the whole project,
``mayi-game-service``) and raise :class:`EngineMissing` otherwise.

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

from .models import Variant


class EngineMissing(ImportError):
    """The helper needs the rules engine, ``mayi_engine`` (the whole project, ``mayi-game-service``)."""


def engine(needed_for: str = "this") -> ModuleType:
    """The ``mayi_engine`` module, or :class:`EngineMissing` saying how to install it
    (``needed_for``: what needs it, for the message)."""
    try:
        import mayi_engine
    except ImportError as exc:
        raise EngineMissing(
            f"{needed_for} needs the rules engine mayi_engine, which is not installed: install the whole project, "
            "mayi-game-service (pip install . in a clone of its repository), not the SDK alone (mayi-game-sdk)"
        ) from exc
    module: ModuleType = mayi_engine
    return module


def card_points(card: str, variant: Variant | str = "may_i") -> int:
    """Points ``card`` scores against its holder at the end of a round in ``variant``: a
    :class:`~mayi_sdk.models.Variant` (from ``Client.list_variants()``), or a variant's name
    (which needs the engine)."""
    if isinstance(variant, Variant):
        return variant.points(card)
    eng = engine(
        f"card_points of {variant!r} by name (or pass the Variant from Client.list_variants(), which needs no engine)"
    )
    rules = eng.get_rules(variant)
    return int(rules.card_score(eng.parse_card(card)))


def hand_points(hand: Sequence[str], variant: Variant | str = "may_i") -> int:
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
