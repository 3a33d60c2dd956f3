"""What a caller sees of a game: its view for a seat or a spectator, and its events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mayi_engine as engine
from mayi_engine.rules import get_rules
from mayi_engine.state import State
from mayi_engine.views import player_view
from mayi_service.bots.decisions import decision_key
from mayi_service.storage import codec
from mayi_service.storage.records import GameRecord


def effective_options(variant: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options a table plays by: every option of its variant, the ``options`` it was
    created with applied over the variant's defaults (those alone, if the variant is gone)."""
    if variant not in engine.VARIANTS:
        return dict(options)
    rules = get_rules(variant, options)
    return {spec.name: getattr(rules, spec.name) for spec in rules.option_specs}


@dataclass
class Viewer:
    """Who is asking: a seat, or nobody (a spectator)."""

    seat: int | None


def game_view(record: GameRecord, viewer: Viewer, now: float, state: State | None = None) -> dict[str, Any]:
    """``viewer``'s view of a game at ``now`` (``state``: the record's state, if already parsed)."""
    meta = record.meta
    base: dict[str, Any] = {
        "id": record.id,
        "version": record.version,
        "status": record.status,
        "variant": meta.variant,
        "options": effective_options(meta.variant, meta.options),
        "rated": meta.rated,
        "created_at": meta.created_at,
        "last_event": record.seq,
    }
    if record.state is None:
        base["seats"] = [{"seat": i, "name": n, "taken": n is not None} for i, n in enumerate(meta.names)]
        base["seat"] = viewer.seat
        return base
    if state is None:
        state = codec.load_state(record.state)
    view = player_view(state, viewer.seat, now)
    view.update(base)
    seat = viewer.seat
    if seat is not None:  # the key of the seat's decision (its legal moves are computed once a state)
        legal = engine.legal_moves(state, seat, now) if view.get("legal") else ()
        view["key"] = decision_key(record.id, state, seat, legal) if legal else None
    return view


def visible(event: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """``event`` as ``seat`` may see it: private data only for its own seat."""
    if "private" not in event:
        return event
    out = {k: v for k, v in event.items() if k != "private"}
    if seat is not None and event.get("seat") == seat:
        out["private"] = event["private"]
    return out
