"""Moves: a closed set of small typed values, and their JSON form.

>>> move_from_json({"type": "discard", "card": "qs"})
Discard(card='QS')
>>> move_from_json({"type": "go_down", "melds": [["7C", "7D", "7H"], ["4S", "5S", "JK", "7S"]]})
GoDown(melds=(('7C', '7D', '7H'), ('4S', '5S', 'JK', '7S')), lay_offs=())
>>> move_from_json({"type": "lay_off", "lay_offs": [{"meld": 0, "cards": ["7S"]}]})
LayOff(parts=(LayOffPart(meld=0, cards=('7S',), joker_to=None),))
>>> move_to_json(Discard(51))
{'type': 'discard', 'card': 'QS'}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cards import card_code, card_codes, parse_card, parse_cards
from .errors import InvalidMoveError


@dataclass(frozen=True, slots=True)
class DrawStock:
    """Draw the top card of the stock (closes the claim window on the upcard)."""


@dataclass(frozen=True, slots=True)
class TakeDiscard:
    """Take the upcard as your draw (voids every claim on it)."""


@dataclass(frozen=True, slots=True)
class Claim:
    """Call "May I" / buy the upcard out of turn; also takes the first-upcard offer."""


@dataclass(frozen=True, slots=True)
class Pass:
    """Decline the upcard (a claim window answer or the first-upcard offer)."""


@dataclass(frozen=True, slots=True, repr=False)
class LayOffPart:
    """Cards laid off on one meld, in order; ``joker_to`` says where a moving joker goes."""

    meld: int
    cards: tuple[int, ...]
    joker_to: str | None = None

    def __repr__(self) -> str:
        return f"LayOffPart(meld={self.meld!r}, cards={_codes(self.cards)}, joker_to={self.joker_to!r})"


@dataclass(frozen=True, slots=True, repr=False)
class GoDown:
    """Lay down the contract (``melds``, runs low to high), then optional lay-offs."""

    melds: tuple[tuple[int, ...], ...]
    lay_offs: tuple[LayOffPart, ...] = ()

    def __repr__(self) -> str:
        melds = ", ".join(_codes(m) for m in self.melds) + ("," if len(self.melds) == 1 else "")
        return f"GoDown(melds=({melds}), lay_offs={self.lay_offs!r})"


@dataclass(frozen=True, slots=True)
class LayOff:
    """Lay off cards on melds on the table, all or nothing."""

    parts: tuple[LayOffPart, ...]


@dataclass(frozen=True, slots=True, repr=False)
class Discard:
    """Discard one card, ending the turn. Prints with its card's code: ``Discard(card='QS')``."""

    card: int

    def __repr__(self) -> str:
        return f"Discard(card={card_code(self.card)!r})"


@dataclass(frozen=True, slots=True)
class Timeout:
    """Play every decision whose deadline has passed (the service clocks, docs/rules.md §14)."""


def _codes(cards: tuple[int, ...]) -> str:
    """Cards as a tuple of their codes, as Python prints it: ``('7C', 'JK')``."""
    return repr(tuple(card_codes(cards)))


Move = DrawStock | TakeDiscard | Claim | Pass | GoDown | LayOff | Discard | Timeout


def _parts_to_json(parts: tuple[LayOffPart, ...]) -> list[dict[str, Any]]:
    out = []
    for p in parts:
        item: dict[str, Any] = {"meld": p.meld, "cards": card_codes(p.cards)}
        if p.joker_to is not None:
            item["joker_to"] = p.joker_to
        out.append(item)
    return out


def move_to_json(move: Move) -> dict[str, Any]:
    """The JSON form of a move (``type`` plus its fields, cards as codes)."""
    match move:
        case DrawStock():
            return {"type": "draw", "source": "stock"}
        case TakeDiscard():
            return {"type": "draw", "source": "discard"}
        case Claim():
            return {"type": "claim", "claim": True}
        case Pass():
            return {"type": "claim", "claim": False}
        case Discard(card):
            return {"type": "discard", "card": card_code(card)}
        case GoDown(melds, lay_offs):
            out: dict[str, Any] = {"type": "go_down", "melds": [card_codes(m) for m in melds]}
            if lay_offs:
                out["lay_offs"] = _parts_to_json(lay_offs)
            return out
        case LayOff(parts):
            return {"type": "lay_off", "lay_offs": _parts_to_json(parts)}
        case Timeout():
            return {"type": "timeout"}
    raise TypeError(f"not a move: {move!r}")


def _parts_from_json(items: object) -> tuple[LayOffPart, ...]:
    if not isinstance(items, list):
        raise InvalidMoveError("validation_error", "lay_offs must be a list of {meld, cards, joker_to}")
    parts = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("meld"), int) or isinstance(item.get("meld"), bool):
            raise InvalidMoveError("validation_error", f"lay_offs[{i}] needs a meld id (a whole number) and cards")
        cards = parse_cards(item.get("cards"), f"lay_offs[{i}].cards")
        if not cards:
            raise InvalidMoveError("validation_error", f"lay_offs[{i}].cards is empty")
        joker_to = item.get("joker_to")
        if joker_to not in (None, "high", "low"):
            raise InvalidMoveError("validation_error", f"lay_offs[{i}].joker_to must be 'high' or 'low'")
        parts.append(LayOffPart(item["meld"], cards, joker_to))
    return tuple(parts)


def move_from_json(data: dict[str, Any]) -> Move:
    """Read a move from its JSON form; :class:`InvalidMoveError` names what is wrong."""
    kind = data.get("type")
    if kind == "draw":
        source = data.get("source")
        if source == "stock":
            return DrawStock()
        if source == "discard":
            return TakeDiscard()
        raise InvalidMoveError("validation_error", "source must be 'stock' or 'discard'")
    if kind == "claim":
        claim = data.get("claim")
        if not isinstance(claim, bool):
            raise InvalidMoveError("validation_error", "claim must be true (May I / buy) or false (pass)")
        return Claim() if claim else Pass()
    if kind == "discard":
        return Discard(parse_card(data.get("card")))
    if kind == "go_down":
        melds = data.get("melds")
        if not isinstance(melds, list) or not melds:
            raise InvalidMoveError("validation_error", "melds must be a non-empty list of melds (lists of card codes)")
        return GoDown(
            tuple(parse_cards(m, f"melds[{i}]") for i, m in enumerate(melds)),
            _parts_from_json(data.get("lay_offs") or []),
        )
    if kind == "lay_off":
        parts = _parts_from_json(data.get("lay_offs"))
        if not parts:
            raise InvalidMoveError("validation_error", "lay_offs must not be empty")
        return LayOff(parts)
    if kind == "timeout":
        return Timeout()
    raise InvalidMoveError(
        "validation_error", f"unknown move type {kind!r} (draw, claim, discard, go_down, lay_off, timeout)"
    )
