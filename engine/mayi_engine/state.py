"""The game state: plain data, and its versioned JSON form.

A :class:`State` is treated as immutable: every engine function returns a new
one and never changes its argument (its fields are tuples, so states share
structure safely). :func:`dumps` and :func:`loads` give the compact, versioned
JSON kept by the service; they round-trip exactly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .cards import CARD_SLOTS, JOKER, NATURALS, card_code, card_codes, parse_card
from .errors import ConfigError
from .melds import Meld
from .rules import MeldKind, Rules, get_rules

STATE_VERSION = 1


class Phase(StrEnum):
    """Who must act, and how. Stored, never inferred."""

    #: May I: the first upcard of a round is offered to ``actor`` (take it or pass).
    FIRST_OFFER = "first_offer"
    #: May I: ``actor`` took the first upcard out of turn and discards at once.
    FIRST_DISCARD = "first_discard"
    #: ``turn`` draws; other eligible seats may claim or pass the upcard.
    DRAW = "draw"
    #: ``turn`` has drawn: goes down, lays off, discards.
    PLAY = "play"
    #: The game is over.
    FINISHED = "finished"


# The phases as module constants: reading a member off the enum class (``Phase.DRAW``) takes
# the enum's class machinery, several times slower than a global, and hot paths read them often
# (the engine's modules import them from here).
OFFER_PHASE, FIRST_DISCARD_PHASE, DRAW_PHASE, PLAY_PHASE, FINISHED_PHASE = (
    Phase.FIRST_OFFER,
    Phase.FIRST_DISCARD,
    Phase.DRAW,
    Phase.PLAY,
    Phase.FINISHED,
)


class GameStatus(StrEnum):
    """Where a game is in its life, as stored and shown: ``waiting`` (seats still open,
    a service state before any deal), ``playing`` and ``finished``."""

    WAITING = "waiting"
    PLAYING = "playing"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class RoundResult:
    round: int
    out: int  # the seat that went out, -1 if the round ended with nobody out
    scores: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Setup:
    """A test table's set-up, held beside the game (``State.setup``) and read only when a
    round is dealt: ``stacked``, the top of each round's stock (top first; index 0 is
    round 1, ``None``: shuffled), and ``start_round``, the round the game starts at.
    A production game has none (``State.setup is None``)."""

    stacked: tuple[tuple[int, ...] | None, ...] = ()
    start_round: int = 1

    @staticmethod
    def of(stacked: tuple[tuple[int, ...] | None, ...], start_round: int) -> Setup | None:
        """The set-up of a table, or ``None`` if it changes nothing (no stacked card, round 1)."""
        if start_round == 1 and all(x is None for x in stacked):
            return None
        return Setup(stacked, start_round)


@dataclass(repr=False)
class State:
    """Everything about a game. Treat as read-only; the engine returns new states.

    Cards are ints (fast to count, index and compare); a state prints them as codes::

        State(may_i, round=1, phase=first_offer, turn=0, actor=0, hands=(('2C', ...), ...), upcard='7D', ...)
    """

    rules: Rules
    seed: bytes
    names: tuple[str, ...]
    round: int
    phase: Phase
    #: The seat whose turn it is (in the first-upcard phases: the round's first player).
    turn: int
    #: The seat that must act now: ``turn``, or the seat offered / discarding the first upcard.
    actor: int
    hands: tuple[tuple[int, ...], ...]
    #: Face-down stock; the top card is the last one.
    stock: tuple[int, ...]
    #: Discard pile; the top card (the upcard) is the last one.
    discard: tuple[int, ...]
    melds: tuple[Meld, ...]
    down: tuple[bool, ...]
    #: The seat whose discard is on offer (-1: the round's turned-up card).
    discarder: int = -1
    claims: tuple[int, ...] = ()
    passes: tuple[int, ...] = ()
    claims_used: tuple[int, ...] = ()
    #: The player on turn went down this turn.
    went_down: bool = False
    #: The card the player on turn took from the discard pile this turn (hold rule), or -1.
    held: int = -1
    reshuffles: int = 0
    #: Turns completed in this round (for the ``max_turns`` safeguard).
    round_turns: int = 0
    #: Free goal order: the goals (indexes into the rules' rounds) each seat has met.
    goals_done: tuple[tuple[int, ...], ...] = ()
    totals: tuple[int, ...] = ()
    results: tuple[RoundResult, ...] = ()
    timeouts: tuple[int, ...] = ()
    absent: tuple[bool, ...] = ()
    claim_closes_at: float | None = None
    turn_deadline: float | None = None
    #: A test table's set-up (stacked decks, a later start round); ``None`` in production.
    setup: Setup | None = None
    #: Moves applied so far (a count, for replays and clocks).
    moves: int = 0
    _legal: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def stacked(self) -> tuple[tuple[int, ...] | None, ...]:
        """A test table's stacked decks (``Setup.stacked``); ``()`` for a production game."""
        return self.setup.stacked if self.setup is not None else ()

    @property
    def start_round(self) -> int:
        """The round the game started at (``Setup.start_round``; 1 for a production game)."""
        return self.setup.start_round if self.setup is not None else 1

    @property
    def players(self) -> int:
        return len(self.names)

    @property
    def dealer(self) -> int:
        return (self.round - 2) % self.players

    @property
    def first_player(self) -> int:
        return (self.round - 1) % self.players

    @property
    def upcard(self) -> int | None:
        """The card on offer, if any."""
        if self.phase in (DRAW_PHASE, OFFER_PHASE) and self.discard:
            return self.discard[-1]
        return None

    @property
    def finished(self) -> bool:
        return self.phase is FINISHED_PHASE

    @property
    def status(self) -> GameStatus:
        """``playing`` or ``finished`` (a dealt game is never ``waiting``)."""
        return GameStatus.FINISHED if self.phase is FINISHED_PHASE else GameStatus.PLAYING

    def __repr__(self) -> str:
        upcard = self.upcard
        melds = ", ".join(m.describe() for m in self.melds)
        return (
            f"State({self.rules.name}, round={self.round}, phase={self.phase.value}, turn={self.turn}, "
            f"actor={self.actor}, hands={tuple(tuple(card_codes(h)) for h in self.hands)!r}, "
            f"upcard={None if upcard is None else card_code(upcard)!r}, stock={len(self.stock)} cards, "
            f"discard={len(self.discard)} cards, melds=[{melds}], down={self.down!r}, totals={self.totals!r}, "
            f"moves={self.moves})"
        )

    def clone(self) -> State:
        """A shallow copy to build the next state from (fields are immutable), without
        the memoised legal moves. (A copy of the ``__dict__``, given to a bare instance: the
        fastest copy there is, about twice as fast as filling the new instance's own.)"""
        new = object.__new__(State)
        new.__dict__ = self.__dict__.copy()
        new._legal = {}
        return new


# ---------------------------------------------------------------------------
# JSON


def _cards_str(cards: tuple[int, ...]) -> str:
    codes = _CARD_CODES
    return "".join([codes[c] for c in cards])


def _cards_from(text: str) -> tuple[int, ...]:
    try:
        return tuple([_CODE_TO_CARD[text[i : i + 2]] for i in range(0, len(text), 2)])
    except KeyError:  # not canonical: let parse_card name the bad code
        return tuple(parse_card(text[i : i + 2]) for i in range(0, len(text), 2))


_CODE_TO_CARD = {card_code(c): c for c in (JOKER, *NATURALS)}
_CARD_CODES = [card_code(c) if c == JOKER or c in NATURALS else "??" for c in range(CARD_SLOTS)]


def to_json(state: State) -> dict[str, Any]:
    """The state as JSON-ready data (versioned, compact: cards as concatenated codes)."""
    s = state
    data: dict[str, Any] = {
        "v": STATE_VERSION,
        "variant": s.rules.name,
        "options": s.rules.table_options(),
        "seed": s.seed.hex(),
        "names": list(s.names),
        "round": s.round,
        "phase": s.phase.value,
        "turn": s.turn,
        "actor": s.actor,
        "hands": [_cards_str(h) for h in s.hands],
        "stock": _cards_str(s.stock),
        "discard": _cards_str(s.discard),
        "melds": [[m.owner, m.kind[0], _cards_str(m.cards), m.low, m.suit] for m in s.melds],
        "down": [int(d) for d in s.down],
        "discarder": s.discarder,
        "claims": list(s.claims),
        "passes": list(s.passes),
        "claims_used": list(s.claims_used),
        "went_down": int(s.went_down),
        "held": s.held,
        "reshuffles": s.reshuffles,
        "round_turns": s.round_turns,
        "totals": list(s.totals),
        "results": [[r.round, r.out, list(r.scores)] for r in s.results],
        "timeouts": list(s.timeouts),
        "absent": [int(a) for a in s.absent],
        "claim_closes_at": s.claim_closes_at,
        "turn_deadline": s.turn_deadline,
        "start_round": s.start_round,
        "moves": s.moves,
    }
    if s.rules.free_goal_order:
        data["goals_done"] = [list(g) for g in s.goals_done]
    if any(x is not None for x in s.stacked):
        data["stacked"] = [None if x is None else _cards_str(x) for x in s.stacked]
    return data


def from_json(data: dict[str, Any]) -> State:
    """Rebuild a state from :func:`to_json` output."""
    if data.get("v") != STATE_VERSION:
        raise ConfigError("state_version", f"state version {data.get('v')!r} is not {STATE_VERSION}")
    rules = get_rules(data["variant"], data.get("options") or None)
    kinds = {"b": MeldKind.BOOK, "r": MeldKind.RUN}
    return State(
        rules=rules,
        seed=bytes.fromhex(data["seed"]),
        names=tuple(data["names"]),
        round=data["round"],
        phase=Phase(data["phase"]),
        turn=data["turn"],
        actor=data["actor"],
        hands=tuple(_cards_from(h) for h in data["hands"]),
        stock=_cards_from(data["stock"]),
        discard=_cards_from(data["discard"]),
        melds=tuple(
            Meld(i, owner, kinds[kind], _cards_from(cards), low, suit)
            for i, (owner, kind, cards, low, suit) in enumerate(data["melds"])
        ),
        down=tuple(bool(d) for d in data["down"]),
        discarder=data["discarder"],
        claims=tuple(data["claims"]),
        passes=tuple(data["passes"]),
        claims_used=tuple(data["claims_used"]),
        went_down=bool(data["went_down"]),
        held=data["held"],
        reshuffles=data["reshuffles"],
        round_turns=data["round_turns"],
        goals_done=tuple(tuple(g) for g in data.get("goals_done", [[] for _ in data["names"]])),
        totals=tuple(data["totals"]),
        results=tuple(RoundResult(r, out, tuple(scores)) for r, out, scores in data["results"]),
        timeouts=tuple(data["timeouts"]),
        absent=tuple(bool(a) for a in data["absent"]),
        claim_closes_at=data["claim_closes_at"],
        turn_deadline=data["turn_deadline"],
        setup=Setup.of(
            tuple(None if x is None else _cards_from(x) for x in data.get("stacked", ())), data["start_round"]
        ),
        moves=data["moves"],
    )


def dumps(state: State) -> str:
    """Compact JSON text of a state."""
    return json.dumps(to_json(state), separators=(",", ":"), ensure_ascii=False)


def loads(text: str | bytes) -> State:
    return from_json(json.loads(text))


__all__ = ["JOKER", "GameStatus", "Phase", "RoundResult", "Setup", "State", "dumps", "from_json", "loads", "to_json"]
