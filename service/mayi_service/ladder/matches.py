"""The bot ladder of every variant: entries, matchmaking, matches played by RQ workers, and
their results, recorded once.

Bots enter a variant's ladder with a limit of games at once; the reference bots of
:mod:`mayi_bots` are house entrants, entered by the first matchmaking of each variant, so a
ladder always has opponents. Creating a match checks every entrant's limit and counts the
match against it in one script, so no bot ever sits in more games than its limit, however
many matchmakers run. A match is an RQ job holding the match's lease while it plays; a
match whose lease lapsed (its worker died) is queued again by the sweep and resumes where
the game is. A result is recorded once, its ratings applied in the order matches complete
(:mod:`mayi_service.ladder.ratings`). Redis keys: :mod:`mayi_service.storage.ladder`.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mayi_engine import standings
from mayi_engine.rules import VARIANTS
from mayi_service.bots.seats import Bots
from mayi_service.config import Settings
from mayi_service.ladder import ratings
from mayi_service.ladder.matchmaking import Entry, house_id, pick_table, table_sizes
from mayi_service.ladder.tables import MatchTables
from mayi_service.play.games import Games
from mayi_service.play.tables import house_bot_name, new_id
from mayi_service.problem_types import Problem, ServiceError
from mayi_service.storage import codec
from mayi_service.storage.ladder import LadderStore
from mayi_service.storage.repository import GameRecord

if TYPE_CHECKING:
    from rq import Queue

#: The RQ jobs of the ladder (:mod:`mayi_service.jobs`): one match, one matchmaking.
MATCH_JOB = "mayi_service.jobs.run_match_job"
MATCHMAKING_JOB = "mayi_service.jobs.run_matchmaking_job"
#: History entries kept per bot and variant.
HISTORY_KEEP = 1000
#: Finished matches kept per variant (the oldest are dropped; their games expire on their own).
MATCHES_KEEP = 10_000


def ladder_queue_name(settings: Settings) -> str:
    """The RQ queue of the matchmaking and match jobs (the clocks' queue name + ``-ladder``)."""
    return f"{settings.queue_name}-ladder"


class Ladder:
    """The ladders of every variant, over the games of one :class:`Games` (and its Redis) and
    the bot accounts of ``bots``; its jobs go to ``queue``."""

    def __init__(self, games: Games, bots: Bots, settings: Settings, queue: Queue | None = None) -> None:
        self.games = games
        self.bots = bots
        self.settings = settings
        self.queue = queue
        self.clock = games.clock
        self.store = LadderStore(games.repo.r, games.repo.prefix)
        self.tables = MatchTables(games, bots, settings)

    # -- entries --------------------------------------------------------------
    def enter(self, variant: str, entry: Entry) -> Entry:
        """Enter (or update the limit of) ``entry``; a bot keeps its rating and history."""
        _variant(variant)
        self.store.enter(variant, entry.entrant, entry.to_json())
        return entry

    def enter_bot(self, variant: str, bot_id: str, max_games: int) -> Entry:
        """Enter the registered bot ``bot_id`` (its name comes from its account)."""
        name = self.bots.load(bot_id).name
        found = self.entry(variant, bot_id)
        entered_at = found.entered_at if found else self.clock()
        return self.enter(variant, Entry(bot_id, name, max_games, entered_at))

    def enter_house(self, variant: str, copies: int = 1) -> list[Entry]:
        """Enter every reference bot (``copies`` entrants of each) that is not entered yet."""
        import mayi_bots

        made = []
        for name in mayi_bots.NAMES:
            for copy in range(1, copies + 1):
                entrant = house_id(name, copy)
                label = house_bot_name(name, copy)
                entry = Entry(entrant, label, self.settings.ladder_house_games, self.clock(), house=name)
                if self.store.add(variant, entrant, entry.to_json()):
                    made.append(entry)
        return made

    def leave(self, variant: str, entrant: str) -> bool:
        """Leave the ladder (matches in progress are played out). False if not entered.
        The bot's rating and history stay (:meth:`standing`), and so does its entry, under
        ``left``: entering again resumes them."""
        _variant(variant)
        return self.store.leave(variant, entrant)

    def entry(self, variant: str, entrant: str) -> Entry | None:
        found = self.store.entry(variant, entrant)
        return None if found is None else Entry(**found)

    def entries(self, variant: str) -> list[Entry]:
        return sorted((Entry(**e) for e in self.store.entries(variant)), key=lambda e: e.entrant)

    def active(self, variant: str) -> dict[str, int]:
        """Matches in progress per entrant."""
        return self.store.active(variant)

    # -- matchmaking ------------------------------------------------------------
    def matchmake(self, variant: str, rng: random.Random | None = None, most: int | None = None) -> list[str]:
        """Form the tables that the entrants' free capacity allows (at most
        ``MAYI_LADDER_MAX_MATCHES`` matches of the variant in progress, and at most ``most``
        new ones); queue their jobs. Returns the new match ids."""
        rng = rng or random.Random()
        self.enter_house(variant)
        entries = {e.entrant: e for e in self.entries(variant)}
        active = self.active(variant)
        rated = self.ratings(variant)
        last = self.store.last_matched(variant)
        room = {e: entry.max_games - active.get(e, 0) for e, entry in entries.items()}
        sizes = table_sizes(variant, self.settings.ladder_players)
        made: list[str] = []
        while most is None or len(made) < most:
            table = pick_table(entries, room, rated, last, sizes, rng, self.settings.ladder_house_matches)
            if table is None:
                break
            match_id, refused = self._create_match(variant, table, secrets.token_hex(16))
            if match_id is None:
                if refused is None:
                    break  # the variant has its most matches in progress
                room[refused] = 0  # at its limit (another matchmaker seated it meanwhile) or gone
                continue
            made.append(match_id)
            now = self.clock()
            for e in table:
                room[e] -= 1
                last[e] = now
        return made

    def create_match(self, variant: str, entrants: Sequence[str], seed: str) -> str | None:
        """Create a match of ``entrants`` (in seat order) dealt from ``seed`` (hex) and queue its
        job; ``None`` if one of them is at its limit or has left, or the variant has
        ``MAYI_LADDER_MAX_MATCHES`` in progress."""
        return self._create_match(variant, entrants, seed)[0]

    def _create_match(self, variant: str, entrants: Sequence[str], seed: str) -> tuple[str | None, str | None]:
        """The new match's id, or ``None`` and the entrant that was refused (``None``: the
        variant has its most matches in progress)."""
        entries = {e.entrant: e for e in self.entries(variant)}
        match_id = new_id()
        match = {
            "match_id": match_id,
            "variant": variant,
            "game_id": match_id,
            "seed": seed,
            "status": "playing",
            "created_at": self.clock(),
            "finished_at": None,
            "seats": [
                {
                    "seat": seat,
                    "bot_id": e,
                    "name": entries[e].name if e in entries else e,
                    "house": entries[e].house if e in entries else None,
                }
                for seat, e in enumerate(entrants)
            ],
            "standings": None,
        }
        outcome, refused = self.store.create(variant, match, entrants, self.clock(), self.settings.ladder_max_matches)
        if outcome != "created":
            return None, refused
        self.enqueue_run(variant, match_id, 1)
        return match_id, None

    def enqueue_run(self, variant: str, match_id: str, attempt: int) -> None:
        """Queue run ``attempt`` of the match's job (a job id of its own each)."""
        if self.queue is None:
            return
        self.queue.enqueue(
            MATCH_JOB,
            variant,
            match_id,
            job_id=f"match-{match_id}-{attempt}",
            job_timeout=self.settings.ladder_match_timeout,
            result_ttl=0,
            failure_ttl=24 * 3600,
        )

    def sweep(self, variant: str) -> list[str]:
        """Queue a new run of every open match whose lease has lapsed (its worker died) and
        whose last run is not waiting in the queue. Returns their ids."""
        from rq.exceptions import NoSuchJobError
        from rq.job import Job

        found = []
        grace = self.settings.ladder_lease_seconds
        for match_id in self.store.open_ids(variant):
            if self.store.leased(variant, match_id):
                continue
            match = self.match(variant, match_id)
            if match is None or match["status"] == "finished":
                self.store.close(variant, match_id)
                continue
            queued = self.store.queued_at(variant, match_id)
            if self.clock() - (queued or match["created_at"]) < grace:
                continue  # its job may not have started yet
            if self.queue is not None:
                try:
                    job = Job.fetch(
                        f"match-{match_id}-{self.store.runs(variant, match_id)}", connection=self.queue.connection
                    )
                    if job.get_status(refresh=False) in ("queued", "scheduled", "deferred"):
                        continue  # waiting for a free worker
                except NoSuchJobError:
                    pass
            # Counted apart from the match record, which only its creation and its result write.
            self.enqueue_run(variant, match_id, self.store.count_run(variant, match_id, self.clock()))
            found.append(match_id)
        return found

    # -- a match ----------------------------------------------------------------
    def match(self, variant: str, match_id: str) -> dict[str, Any] | None:
        return self.store.match(variant, match_id)

    def run_match(self, variant: str, match_id: str) -> str:
        """Play match ``match_id`` to its end and record its result (the match job).

        Returns what happened: ``"finished"`` (this run recorded the result), ``"done"``
        (it was recorded already), ``"leased"`` (another run holds the match), ``"lost"``
        (another run took the lease over meanwhile) or ``"gone"``."""
        token = secrets.token_hex(8)
        ms = int(self.settings.ladder_lease_seconds * 1000)
        if not self.store.take_lease(variant, match_id, token, ms):
            return "leased"

        def keep() -> None:
            if not self.store.renew_lease(variant, match_id, token, ms):
                raise _LeaseLost

        try:
            match = self.match(variant, match_id)
            if match is None:
                return "gone"
            if match["status"] == "finished":
                return "done"
            started = time.perf_counter()
            record = self.tables.play(match, self.tables.table(match), keep)
            played = time.perf_counter() - started
            keep()
            return "finished" if self.record_result(variant, match_id, record, played) else "done"
        except _LeaseLost:
            return "lost"
        finally:
            self.store.release_lease(variant, match_id, token)

    # -- results ----------------------------------------------------------------
    def record_result(self, variant: str, match_id: str, record: GameRecord, played: float = 0.0) -> bool:
        """Record the finished game's standings and apply the ratings, once. False if the
        match was recorded already. ``played``: the seconds the finishing run spent playing."""
        state = codec.load_state(record.state or "")
        places = standings(state)
        while True:
            match = self.match(variant, match_id)
            if match is None or match["status"] == "finished":
                return False
            rev, rated = self.store.ratings(variant)
            now = self.clock()
            scores = [int(state.totals[s["seat"]]) for s in match["seats"]]
            standing, updates = ratings.rate(match, rated, places, scores, now)
            finished = {
                **match,
                "status": "finished",
                "finished_at": now,
                "standings": standing,
                "play_seconds": round(played, 6),
            }
            outcome, seq = self.store.finish(variant, rev, finished, updates, HISTORY_KEEP)
            if outcome == "stale":
                continue  # another match's ratings were applied meanwhile: read again
            if seq > MATCHES_KEEP:
                self.store.forget_finished(variant, MATCHES_KEEP)
            return outcome == "recorded"

    # -- reading ----------------------------------------------------------------
    def ratings(self, variant: str) -> dict[str, dict[str, Any]]:
        return self.store.ratings(variant)[1]

    def leaderboard(self, variant: str) -> list[dict[str, Any]]:
        """The bots entered now, by their conservative rating, best first (a bot that left
        is not on it; its rating and history stay: :meth:`standing`, :meth:`history`)."""
        _variant(variant)
        rated = self.ratings(variant)
        rows = [_row(entry, rated.get(entry.entrant)) for entry in self.entries(variant)]
        rows.sort(key=lambda row: (-row["rating"], row["bot_id"]))
        for rank, row in enumerate(rows, start=1):
            row["rank"] = rank
        return rows

    def standing(self, variant: str, entrant: str) -> dict[str, Any] | None:
        """The bot's rating now, entered or not: its leaderboard row (``rank`` and
        ``max_games``: ``None`` once it left) and ``entered``. ``None``: it never entered."""
        _variant(variant)
        if self.entry(variant, entrant) is not None:
            row = next(r for r in self.leaderboard(variant) if r["bot_id"] == entrant)
            return {**row, "entered": True}
        left = self.store.entry(variant, entrant, left=True)
        rating = self.store.rating(variant, entrant)
        if left is None and rating is None:
            return None
        entry = Entry(**left) if left is not None else Entry(entrant, entrant, 0, 0.0)
        return {**_row(entry, rating), "rank": None, "max_games": None, "entered": False}

    def matches(self, variant: str, limit: int = 20, status: str = "finished") -> list[dict[str, Any]]:
        """Recent matches, newest first: finished ones by completion, or those in progress."""
        _variant(variant)
        if status == "finished":
            return [_public(m) for m in self.store.matches(variant, self.store.finished_ids(variant, limit))]
        found = [_public(m) for m in self.store.matches(variant, self.store.open_ids(variant))]
        found.sort(key=lambda m: -m["created_at"])
        return found[:limit]

    def history(self, variant: str, entrant: str, limit: int = 100) -> list[dict[str, Any]]:
        """The bot's rating after each of its last ``limit`` matches, oldest first."""
        _variant(variant)
        return self.store.history(variant, entrant, limit)


class _LeaseLost(Exception):
    """Another run of the match holds its lease now (this one was too slow to renew it)."""


def _row(entry: Entry, rating: dict[str, Any] | None) -> dict[str, Any]:
    return ratings.board_row(entry.entrant, entry.name, entry.house is not None, entry.max_games, rating)


def _public(match: dict[str, Any]) -> dict[str, Any]:
    return {
        k: match.get(k)
        for k in ("match_id", "variant", "game_id", "status", "created_at", "finished_at", "seats", "standings")
    }


def _variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ServiceError(
            Problem.VALIDATION_ERROR, f"variant: unknown variant {variant!r} (known: {', '.join(VARIANTS)})"
        )


__all__ = ["MATCHMAKING_JOB", "MATCH_JOB", "Ladder", "ladder_queue_name"]
