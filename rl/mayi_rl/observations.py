"""The observation arrays of a table: one flat ``float32`` array per seat, its parts named.

:class:`Layout` is a table's :class:`~mayi_rl.actions.ActionSpace` and its observation
layout: every observation's parts are named and documented (:attr:`Layout.parts`;
docs/ai.md lists them). The observation of a seat is built only from what that seat is
shown: its hand, the public table (the upcard, the discard pile's face-up cards, the
melds, the seats' counts) and the round; never another seat's hand, the stock's cards or
the seed.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from mayi_engine import State
from mayi_engine.cards import JOKER, card_code
from mayi_engine.melds import Meld
from mayi_engine.state import DRAW_PHASE, Phase

from .actions import ActionSpace
from .cards import CARDS, INDEX_OF, index_card

#: The phases, in the order of the observation's ``phase`` part.
PHASE_ORDER: tuple[Phase, ...] = (Phase.FIRST_OFFER, Phase.FIRST_DISCARD, Phase.DRAW, Phase.PLAY, Phase.FINISHED)
_PHASE_INDEX = {p: i for i, p in enumerate(PHASE_ORDER)}
_PARSE = {card_code(index_card(i)): i for i in range(CARDS)}


@dataclass(frozen=True)
class Part:
    """One named part of the flat observation: ``name``, where it starts, its ``shape``, what it holds."""

    name: str
    start: int
    shape: tuple[int, ...]
    what: str

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def stop(self) -> int:
        return self.start + self.size


@dataclass
class Layout(ActionSpace):
    """The action space and observation layout of one table: ``rules`` with ``players`` seats."""

    parts: dict[str, Part] = field(default_factory=dict)
    size: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        n = self.players
        r = self.goals
        specs: list[tuple[str, tuple[int, ...], str]] = [
            ("hand", (CARDS,), "count of each card in the seat's hand"),
            ("upcard", (CARDS,), "the upcard on offer (one-hot; zeros: none)"),
            ("discard_pile", (CARDS,), "count of each card in the discard pile (every discard seen, not taken)"),
            ("seat_melds", (n, CARDS), "count of each card in the melds each seat laid down (row 0: this seat)"),
            (
                "melds",
                (self.melds, 2 + n + CARDS + CARDS),
                "each meld slot by meld id: present, is a run, owner (one-hot, relative seat), "
                "count of each card in it, what its jokers stand for",
            ),
            (
                "seats",
                (n, 6),
                "each seat (row 0: this seat, then clockwise): hand count, down, total score, "
                "claims used this round, claimed this upcard, passed this upcard",
            ),
            ("table", (3,), "stock count, discard count, stock rebuilds this round"),
            ("round", (r,), "the round being played (one-hot)"),
            ("contract", (3,), "the round's contract: books, runs, all cards"),
            ("goals_done", (r,), "free goal order: the goals this seat has met (else zeros)"),
            ("phase", (len(PHASE_ORDER),), "first_offer, first_discard, draw, play, finished (one-hot)"),
            ("turn", (n,), "the seat on turn (one-hot, relative)"),
            ("actor", (n,), "the seat that must act (one-hot, relative)"),
            ("discarder", (n + 1,), "who discarded the upcard (one-hot, relative; last: the round's first upcard)"),
        ]
        start = 0
        for name, shape, what in specs:
            part = Part(name, start, shape, what)
            self.parts[name] = part
            start = part.stop
        self.size = start
        self._offsets = {name: p.start for name, p in self.parts.items()}
        self._pile_memo: tuple[Any, int, np.ndarray] = (None, 0, np.zeros(0, np.int64))
        #: Per seat: the last melds seen, and their entries.
        self._meld_memo: dict[int, tuple[Any, np.ndarray]] = {}
        self._meld_width = self.parts["melds"].shape[1]

    def observe(self, state: State, seat: int) -> np.ndarray:
        """The flat observation of ``seat`` (``float32``, :attr:`size` long)."""
        units, where, values, kept = self.entries(state, seat)
        if kept:
            index = np.concatenate([np.frombuffer(array("q", units), np.int64), *kept])
        else:
            index = np.frombuffer(array("q", units), np.int64)
        obs = np.bincount(index, minlength=self.size).astype(np.float32)
        cells = memoryview(obs)  # (item writes through a memoryview: several times faster than numpy's)
        for i, v in zip(where, values, strict=True):
            cells[i] = v
        return obs

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """The named parts of a flat observation (views into it, shaped as :attr:`parts` says)."""
        return {name: obs[p.start : p.stop].reshape(p.shape) for name, p in self.parts.items()}

    def entries(self, s: State, seat: int) -> tuple[list[int], list[int], list[float], list[np.ndarray]]:
        """The observation as entries: indexes that each add 1 (card counts, one-hot flags;
        a list, and arrays kept from earlier steps), and indexes set to values (counts and
        scores); every other element is 0."""
        o = self._offsets
        n = self.players
        idx = INDEX_OF
        hand = o["hand"]
        units = [hand + idx[c] for c in s.hands[seat]]
        add = units.append
        upcard = s.upcard
        discard = s.discard
        if upcard is not None:
            add(o["upcard"] + idx[upcard])
            pile = discard[:-1]
        else:
            pile = discard
        kept: list[np.ndarray] = []
        if pile:
            # The pile and the melds stay the same for many steps (the claim window's answers,
            # a turn): their entries are kept, as arrays, for the last ones seen.
            known = self._pile_memo
            if known[0] is discard and known[1] == len(pile):
                kept.append(known[2])
            else:
                p0 = o["discard_pile"]
                entries = np.array([p0 + idx[c] for c in pile], np.int64)
                self._pile_memo = (discard, len(pile), entries)
                kept.append(entries)
        melds = s.melds
        if melds:
            memo = self._meld_memo
            seen = memo.get(seat)
            if seen is not None and seen[0] is melds:
                kept.append(seen[1])
            else:
                made = np.array(self._meld_units(melds, seat), np.int64)
                memo[seat] = (melds, made)
                kept.append(made)
        where: list[int] = []
        values: list[float] = []
        seats = o["seats"]
        claims, passes = (s.claims, s.passes) if s.phase is DRAW_PHASE else ((), ())
        hands, down, totals, used = s.hands, s.down, s.totals, s.claims_used
        for k in range(n):
            other = (seat + k) % n
            base = seats + 6 * k
            where += (base, base + 2, base + 3)
            values += (len(hands[other]), totals[other], used[other])
            if down[other]:
                add(base + 1)
            if other in claims:
                add(base + 4)
            if other in passes:
                add(base + 5)
        table = o["table"]
        where += (table, table + 1, table + 2)
        values += (len(s.stock), len(discard), s.reshuffles)
        add(o["round"] + s.round - 1)
        contract = self.rules.rounds[s.round - 1].contract
        c0 = o["contract"]
        where += (c0, c0 + 1, c0 + 2)
        values += (contract.books, contract.runs, contract.all_cards)
        if self.rules.free_goal_order:
            g0 = o["goals_done"]
            units.extend([g0 + g for g in s.goals_done[seat]])
        add(o["phase"] + _PHASE_INDEX[s.phase])
        add(o["turn"] + (s.turn - seat) % n)
        add(o["actor"] + (s.actor - seat) % n)
        if upcard is not None:
            d = s.discarder
            add(o["discarder"] + ((d - seat) % n if d >= 0 else n))
        return units, where, values, kept

    def _meld_units(self, melds: tuple[Meld, ...], seat: int) -> list[int]:
        o = self._offsets
        n = self.players
        seat_melds = o["seat_melds"]
        base = o["melds"]
        width = self._meld_width
        out: list[int] = []
        for m in melds:
            rel = (m.owner - seat) % n
            a = seat_melds + rel * CARDS
            b = base + m.id * width
            cards, row = _meld_entries(m, rel, n)
            out.extend([a + i for i in cards])
            out.extend([b + i for i in row])
        return out

    def observe_view(self, view: dict[str, Any], pile: list[str] | tuple[str, ...]) -> np.ndarray:
        """The same observation from a seat's view (``player_view``, or a bot's ``view.raw``)
        and the discard pile's cards, bottom to top (``pile``: the view shows only its top;
        :class:`mayi_rl.bot.PileTracker` keeps it from the views a bot sees)."""
        o = self._offsets
        n = self.players
        seat = view["seat"]
        parse = _PARSE
        obs = np.zeros(self.size, np.float32)
        for code in view["hand"]:
            obs[o["hand"] + parse[code]] += 1
        upcard = view["upcard"]
        cards = list(pile)
        if upcard is not None:
            obs[o["upcard"] + parse[upcard]] = 1
            cards = cards[:-1]
        for code in cards:
            obs[o["discard_pile"] + parse[code]] += 1
        width = self._meld_width
        for m in view["melds"]:
            rel = (m["owner"] - seat) % n
            b = o["melds"] + m["id"] * width
            obs[b] = 1
            obs[b + 1] = m["type"] == "run"
            obs[b + 2 + rel] = 1
            for code in m["cards"]:
                obs[o["seat_melds"] + rel * CARDS + parse[code]] += 1
                obs[b + 2 + n + parse[code]] += 1
            for joker in m["jokers"]:
                stood = joker["stands_for"]
                obs[b + 2 + n + CARDS + parse[stood if len(stood) == 2 else stood + "C"]] += 1
        window = view["claim_window"] or {}
        claims = window.get("claims", []) if view["phase"] == "draw" else []
        passes = window.get("passes", []) if view["phase"] == "draw" else []
        seats = view["seats"]
        for k in range(n):
            other = (seat + k) % n
            info = seats[other]
            base = o["seats"] + 6 * k
            obs[base : base + 6] = (
                info["hand_count"],
                info["down"],
                info["total"],
                info["claims_used"],
                other in claims,
                other in passes,
            )
        obs[o["table"] : o["table"] + 3] = (view["stock_count"], view["discard_count"], view["reshuffles"])
        number = view["round"]["number"]
        obs[o["round"] + number - 1] = 1
        contract = view["round"]["contract"]
        obs[o["contract"] : o["contract"] + 3] = (contract["books"], contract["runs"], contract["all_cards"])
        for goal in (view.get("goals_done") or [[]] * n)[seat]:
            obs[o["goals_done"] + goal - 1] = 1
        obs[o["phase"] + _PHASE_INDEX[Phase(view["phase"])]] = 1
        obs[o["turn"] + (view["turn"] - seat) % n] = 1
        obs[o["actor"] + (view["actor"] - seat) % n] = 1
        if upcard is not None:
            d = window.get("discarder")
            obs[o["discarder"] + ((d - seat) % n if d is not None else n)] = 1
        return obs

    def high(self) -> np.ndarray:
        """The largest value of each element (for a ``Box``): card counts up to every copy
        of the decks, scores up to every card's points in every round."""
        decks = self.rules.decks_for(self.players)
        cards = decks * 54
        top = np.full(self.size, float(cards), np.float32)
        top[self.parts["seats"].start : self.parts["seats"].stop] = float(
            cards * max(self.rules.scores) * len(self.rules.rounds)
        )
        return top


@lru_cache(maxsize=16384)
def _meld_entries(meld: Meld, rel: int, players: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A meld's card indexes, and the unit entries of its row of the ``melds`` part (from the
    row's start: present, is a run, owner, its cards, what its jokers stand for), seen from
    ``rel`` seats before its owner."""
    cards = tuple(INDEX_OF[c] for c in meld.cards)
    row = [0, 1] if meld.kind == "run" else [0]
    row.append(2 + rel)
    base = 2 + players
    row.extend(base + i for i in cards)
    row.extend(base + CARDS + INDEX_OF[meld.stands_for(i)] for i, c in enumerate(meld.cards) if c == JOKER)
    return cards, tuple(row)
