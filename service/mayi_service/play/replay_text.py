"""A finished game's replay (``GET /v1/games/{id}/replay``) as text, round by round (``mayi replay``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def _melds(melds: list[dict[str, Any]]) -> str:
    return "  ".join(f"[{' '.join(m['cards'])}]" for m in melds)


def _line(event: dict[str, Any], names: list[str]) -> str | None:
    """One event as a line of text (``None``: an event a reader does not need)."""
    kind = event["type"]
    data = event.get("data") or {}
    private = event.get("private") or {}
    seat = event.get("seat")
    who = names[seat] if seat is not None and seat < len(names) else ""
    late = " (played by the clock)" if event.get("timeout") else ""
    match kind:
        case "dealt":
            return f"  {who} is dealt {' '.join(private.get('hand', []))}"
        case "drew":
            card = private.get("card", "?")
            penalty = " as a penalty card" if data.get("penalty") else ""
            return f"  {who} draws {card} from the {data.get('source', 'stock')}{penalty}{late}"
        case "took_upcard":
            return f"  {who} takes the upcard {data.get('card')}"
        case "claimed":
            return f"  {who}: May I? ({data.get('card')})"
        case "passed":
            return f"  {who} passes on {data.get('card')}{late}" if event.get("timeout") else None
        case "claim_won":
            return f"  {who} gets {data.get('card')} with {data.get('penalty', 0)} penalty card(s)"
        case "went_down":
            return f"  {who} goes down: {_melds(data.get('melds', []))}"
        case "laid_off":
            cards = ", ".join(f"{' '.join(lo['cards'])} on meld {lo['meld']}" for lo in data.get("lay_offs", []))
            return f"  {who} lays off {cards}"
        case "discarded":
            return f"  {who} discards {data.get('card')}{late}"
        case "stock_rebuilt":
            return f"  (the discards are shuffled into a new stock: {data.get('cards')} cards)"
        case "stock_exhausted":
            return f"  (the stock ran out: {data.get('reason', '')})"
        case "seat_absent":
            return f"  {who} is absent (the clock plays for them)"
        case "seat_returned":
            return f"  {who} is back"
        case _:
            return None


def replay_lines(replay: dict[str, Any]) -> Iterator[str]:
    """The lines of ``replay``: each round's contract and deal, every claim, meld, lay-off
    and discard (passes only when the clock made them), and the scores."""
    names = [n or f"seat {i}" for i, n in enumerate(replay["names"])]
    yield f"Game {replay['id']} ({replay['variant']}), seed {replay['seed']}"
    yield "Players: " + ", ".join(f"{i}: {n}" for i, n in enumerate(names))
    for event in replay["events"]:
        data = event.get("data") or {}
        kind = event["type"]
        if kind == "round_started":
            contract = (data.get("contract") or {}).get("text", "")
            yield ""
            dealer = names[data.get("dealer", 0)]
            yield f"Round {data.get('round')}: {contract}; {dealer} deals {data.get('deal')} cards"
            yield f"  upcard {data.get('upcard')}"
        elif kind == "round_ended":
            out = data.get("out")
            ender = f"{names[out]} went out" if out is not None else "nobody went out"
            yield f"  Round {data.get('round')} ends: {ender}"
            for i, name in enumerate(names):
                yield f"    {name:<24} {data['scores'][i]:>5}  (total {data['totals'][i]})"
        elif kind == "game_ended":
            yield ""
            yield "Final standings:"
            order = sorted(range(len(names)), key=lambda i: data["places"][i])
            for i in order:
                yield f"  {data['places'][i]}. {names[i]:<24} {data['totals'][i]:>5}"
        else:
            line = _line(event, names)
            if line is not None:
                yield line
