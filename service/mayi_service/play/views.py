"""What a caller sees of a game: its view for a seat or a spectator, and its events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mayi_engine as engine
from mayi_engine.rules import get_rules
from mayi_engine.state import GameStatus, State
from mayi_engine.views import player_view
from mayi_service.play.decisions import decision_key
from mayi_service.problem_types import Problem, ServiceError
from mayi_service.storage import codec
from mayi_service.storage.records import GameRecord
from mayi_service.storage.repository import GameGone, GameRepository


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


class Reading:
    """Reading games, a part of :class:`~mayi_service.play.games.Games` (whose repository,
    clock and seat look-up these use)."""

    repo: GameRepository
    clock: Callable[[], float]
    load_with_seat: Callable[[str, str], tuple[GameRecord | None, int | None]]

    def load(self, game_id: str) -> GameRecord:
        """The game; :class:`GameGone` if there is none."""
        record = self.repo.load(game_id)
        if record is None:
            raise GameGone(game_id)
        return record

    def viewer(self, game_id: str, token: str | None, *, required: bool = False) -> Viewer:
        """Who holds ``token`` at this game (``required``: a seat token must be given)."""
        return self.load_as(game_id, token, required=required)[1]

    def load_as(self, game_id: str, token: str | None, *, required: bool = False) -> tuple[GameRecord, Viewer]:
        """The game and who is asking (one round trip to Redis).

        No token: a spectator (or 401 when ``required``); a token that holds no seat
        at this game: 403.
        """
        if not token:
            if required:
                raise ServiceError(
                    Problem.UNAUTHORIZED,
                    "This action needs a seat token: send 'Authorization: Bearer <token>'",
                    {"WWW-Authenticate": 'Bearer realm="mayi"'},
                )
            return self.load(game_id), Viewer(None)
        record, seat = self.load_with_seat(game_id, token)  # (a bot token: its bot's seat)
        if record is None:
            raise GameGone(game_id)
        if seat is None:
            raise ServiceError(Problem.FORBIDDEN, f"This token holds no seat at game {game_id}")
        return record, Viewer(seat)

    def view(
        self, record: GameRecord, viewer: Viewer, now: float | None = None, state: State | None = None
    ) -> dict[str, Any]:
        """The caller's view of a game (``state``: the record's state, if already parsed)."""
        return game_view(record, viewer, self.clock() if now is None else now, state)

    def list_games(self, status: str | None, variant: str | None, page: int, size: int) -> dict[str, Any]:
        """One page of tables, newest first, filtered by status and variant."""
        statuses = [status] if status else list(GameStatus)
        ids, total = self.repo.list_ids(statuses, variant, (page - 1) * size, size)
        games = [
            {
                "id": r.id,
                "variant": r.meta.variant,
                "status": r.status,
                "seats": r.meta.seats,
                "names": list(r.meta.names),
                "rated": r.meta.rated,
                "created_at": r.meta.created_at,
                "version": r.version,
            }
            for r in self.repo.load_many(ids)
        ]
        return {"games": games, "page": page, "page_size": size, "total": total}

    def replay(self, game_id: str) -> dict[str, Any]:
        record = self.load(game_id)
        if record.status != GameStatus.FINISHED or record.state is None:
            raise ServiceError(Problem.GAME_NOT_FINISHED, f"Game {game_id} is not over: the replay opens when it ends")
        state = codec.load_state(record.state)
        events = self.repo.events_after(game_id, 0, count=1_000_000)
        return {
            "id": game_id,
            "variant": record.meta.variant,
            "options": record.meta.options,
            "names": list(record.meta.names),
            "seed": state.seed.hex(),
            "totals": list(state.totals),
            "events": events,
        }
