"""A ladder match's game: its table, made on the match's first run, and the loop that plays
its house seats and its timeouts until the game ends.

House seats decide in the match job, through :meth:`Games.play_for_seat` (the table's meta
marks it as a ladder game, so the house-bot jobs leave it alone); external bots play
through the API (decisions or webhooks) under the clocks. A house bot's decision is
seeded by the match's seed, the seat and the game's version, so a run that resumes a
match plays the moves the lost run would have.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from mayi_engine import GameStatus, move_from_json, to_act
from mayi_engine.rules import COMMON_OPTIONS, get_rules
from mayi_service.bots.house import house_answer
from mayi_service.bots.seats import Bots, seat_digest
from mayi_service.config import Settings
from mayi_service.play.games import Games, Viewer
from mayi_service.storage import codec
from mayi_service.storage.records import TableMeta
from mayi_service.storage.repository import GameRecord

if TYPE_CHECKING:
    from mayi_sdk import Bot

#: The ladder's log lines share one logger, whichever of its modules writes them.
log = logging.getLogger("mayi_service.ladder.matches")

#: The longest value the rules allow of each table option (the clocks of house-only tables).
LONGEST_CLOCKS = {option.name: option.high for option in COMMON_OPTIONS}


def decision_seed(seed: str, seat: int, version: int) -> int:
    """The seed of a house bot's decision at ``version`` of a match dealt from ``seed``: the
    same decision gets the same seed, so a resumed match plays the same moves."""
    digest = hashlib.blake2b(f"{seed}:{seat}:{version}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def make_bot(name: str, seed: int, budget: float | None = None) -> Bot:
    """The reference bot ``name`` seeded with ``seed``, a searching bot given ``budget`` CPU
    seconds a decision (a registry without seeds: the bot's own)."""
    import mayi_bots

    try:
        return mayi_bots.make(name, seed=seed, budget=budget)  # type: ignore[call-arg,unused-ignore]
    except TypeError:
        factory: Any = mayi_bots.BOTS[name]
        try:
            return factory(seed=seed)  # type: ignore[no-any-return]
        except TypeError:
            return mayi_bots.make(name)


def deciding_seat(state: Any, seats: set[int], now: float) -> int | None:
    """The first of ``seats`` that must decide now (in the engine's order, :func:`~mayi_engine.to_act`)."""
    return next((seat for seat in to_act(state, now) if seat in seats), None)


class MatchTables:
    """Makes and plays the games of ladder matches on ``games``, seating ``bots``' accounts."""

    def __init__(self, games: Games, bots: Bots, settings: Settings) -> None:
        self.games = games
        self.bots = bots
        self.settings = settings
        self.clock = games.clock

    def table(self, match: dict[str, Any]) -> GameRecord:
        """The match's game: created here on the first run (the game id is the match id)."""
        game_id = match["game_id"]
        found = self.games.repo.load(game_id)
        if found is not None:
            return found
        variant = match["variant"]
        seats = match["seats"]
        names = tuple(s["name"] for s in seats)
        meta = TableMeta(
            variant=variant,
            options=self.options(all(s["house"] for s in seats)),
            seats=len(names),
            names=names,
            rated=True,
            created_at=self.clock(),
            test={"seed": match["seed"], "start_round": self._start_round(variant)},
            bot_seats=tuple(s["seat"] for s in seats if not s["house"]),
            bot_ids=tuple((s["seat"], s["bot_id"]) for s in seats if not s["house"]),
            house_bots=tuple((s["seat"], s["house"]) for s in seats if s["house"]),
            ladder=match["match_id"],
        )
        tokens = {seat_digest(s["bot_id"]): s["seat"] for s in seats if not s["house"]}
        record = self.games.open_table(meta, tokens, game_id=game_id)
        for s in seats:
            if not s["house"]:
                self.bots.took_seat(s["bot_id"], game_id, s["seat"])
        return record

    def _start_round(self, variant: str) -> int:
        return max(1, min(self.settings.ladder_start_round, len(get_rules(variant).rounds)))

    def options(self, house_only: bool = False) -> dict[str, Any]:
        """The ladder's clocks (the same for every variant). A table of house bots only has
        the longest clocks the rules allow: the match job plays all its seats, so none can
        leave a decision unanswered, and a job that dies leaves its match to the next run
        (which plays the moves this one would have), not to the clocks."""
        if house_only:
            return {name: LONGEST_CLOCKS[name] for name in ("claim_seconds", "turn_seconds")}
        return {"claim_seconds": self.settings.ladder_claim_seconds, "turn_seconds": self.settings.ladder_turn_seconds}

    def play(self, match: dict[str, Any], record: GameRecord, keep: Callable[[], None]) -> GameRecord:
        """Play the house seats (and the timeouts that fall due) until the game ends, calling
        ``keep`` every third of the lease."""
        game_id = match["game_id"]
        house = {s["seat"]: s["house"] for s in match["seats"] if s["house"]}
        renew_every = self.settings.ladder_lease_seconds / 3
        renewed = time.monotonic()
        while True:
            if time.monotonic() - renewed >= renew_every:
                keep()
                renewed = time.monotonic()
            if record.status == GameStatus.FINISHED or record.state is None:
                return record
            state = codec.load_state(record.state)
            now = self.clock()
            due = record.deadline
            if due is not None and due <= now:
                self.games.run_clock(game_id)
            else:
                seat = deciding_seat(state, set(house), now)
                if seat is None:  # an external bot's decision: wait for its move, or for the deadline
                    self._wait(record, due, renew_every)
                else:
                    played = self._decide(match, record, state, seat, house[seat], now)
                    if isinstance(played, GameRecord):
                        record = played
                        continue
                    if played == "refused":
                        latest = self.games.load(game_id)
                        if latest.version != record.version:  # the game moved on meanwhile
                            record = latest
                            continue
                        log.warning("house bot %s in match %s: move refused", house[seat], match["match_id"])
                    self._wait(record, due, renew_every)  # the claim window, or the clock, plays on
            record = self.games.load(game_id)

    def _decide(
        self, match: dict[str, Any], record: GameRecord, state: Any, seat: int, name: str, now: float
    ) -> GameRecord | Literal["waits", "failed", "refused"]:
        """The house bot ``name``'s move for ``seat``, committed if the game is still at
        ``record``'s version: the record it made, or why there is none (it waits for the
        claim window; its bot failed; the move was refused, or the game moved on)."""
        view = self.games.view(record, Viewer(seat), now, state)
        bot = make_bot(name, decision_seed(match["seed"], seat, record.version), self.settings.house_bot_seconds)
        try:
            answer = house_answer(bot, view, state, seat)
            move = None if answer is None else move_from_json(answer)
        except Exception:  # a reference bot's bug must not stop the match: the clock plays
            log.exception("house bot %s in match %s seat %d", name, match["match_id"], seat)
            return "failed"
        if move is None:
            return "waits"
        return self.games.play_for_seat(record, seat, move) or "refused"

    def _wait(self, record: GameRecord, due: float | None, most: float) -> None:
        left = most if due is None else min(most, max(0.0, due - self.clock()) + 0.05)
        self.games.repo.wait_events(record.id, record.seq, int(left * 1000))
