"""A game of May I or Shanghai in progress, as an OpenSpiel state (:class:`MayIState`).

An engine state, the chance outcomes it waits for (a deal, the cards a move draws:
:mod:`mayi_rl.openspiel_chance`), each seat's record of the game for its information
state, and the round's public record. :mod:`mayi_rl.openspiel` describes the games.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

import pyspiel

from mayi_engine import Move, State, card_code, play
from mayi_engine.events import (
    ClaimWon,
    Dealt,
    Discarded,
    Drew,
    Event,
    LaidOff,
    RoundStarted,
    StockRebuilt,
    TookUpcard,
    WentDown,
)
from mayi_engine.state import FINISHED_PHASE

from .cards import CARDS, card_index, index_card
from .encoding import Layout
from .openspiel_chance import Deal, arranged, card_counts, new_deal
from .rewards import place_rewards, round_rewards

__all__ = ["MayIState", "Table"]


class Table(Protocol):
    """What a state reads of its game (:class:`mayi_rl.openspiel_game.MayIGame`)."""

    lay: Layout
    #: The first round's engine state before its deal.
    initial: State


class _Data:
    """A state's data. Every field is replaced, never changed in place, so a copy of the
    state (OpenSpiel clones by ``copy.deepcopy``) shares them all: a shallow copy."""

    engine: State
    logs: list[tuple[str, ...]]
    history_of_rounds: str
    known: list[list[int]]
    discarded: list[list[int]]
    taken: list[list[int]]
    deal: Deal | None
    pending: tuple[int, Move, list[tuple[list[int], int]], list[int], int] | None
    legal: dict[int, Move] | None

    def __deepcopy__(self, memo: dict[int, Any]) -> _Data:
        new = _Data()
        new.__dict__.update(self.__dict__)
        return new


class MayIState(pyspiel.State):  # type: ignore[misc]
    """A game in progress: an engine state, and the chance outcomes it waits for."""

    def __init__(self, game: Table) -> None:
        super().__init__(game)
        self.lay = game.lay
        self.players = game.lay.players
        self.d = _Data()
        self.d.engine = game.initial
        #: The seat's record of this round (see :mod:`mayi_rl.openspiel`), and earlier rounds' scores.
        self.d.logs: list[tuple[str, ...]] = [()] * self.players
        self.d.history_of_rounds = ""
        #: Cards each seat is known to hold (taken from the pile, not played since), by index.
        self.d.known: list[list[int]] = [[0] * CARDS for _ in range(self.players)]
        #: This round's public record: cards each seat discarded, cards each took from the pile.
        self.d.discarded: list[list[int]] = [[0] * CARDS for _ in range(self.players)]
        self.d.taken: list[list[int]] = [[0] * CARDS for _ in range(self.players)]
        self.d.deal: Deal | None = None
        #: A move waiting for the cards it draws: (seat, move, pools, picks, rebuilt): for each card
        #: drawn its pool (counts by index) and segment (0: the stock, 1: the rebuilt stock), the
        #: cards drawn so far, and how many pile cards a rebuild turns over.
        self.d.pending: tuple[int, Move, list[tuple[list[int], int]], list[int], int] | None = None
        self.d.legal: dict[int, Move] | None = None
        self._start_deal()

    @property
    def rules(self) -> Any:
        return self.lay.rules

    # ------------------------------------------------------------------
    # The OpenSpiel API

    def current_player(self) -> int:
        if self.d.engine.phase is FINISHED_PHASE and self.d.deal is None and self.d.pending is None:
            return pyspiel.PlayerId.TERMINAL
        if self.d.deal is not None or self.d.pending is not None:
            return pyspiel.PlayerId.CHANCE
        return _next_seat(self.d.engine)

    def legal_map(self) -> dict[int, Move]:
        """Each legal move of the seat to act, by its action (computed once per state)."""
        if self.d.legal is None:
            self.d.legal = self.lay.legal_actions(self.d.engine, _next_seat(self.d.engine))
        return self.d.legal

    def _legal_actions(self, player: int) -> list[int]:
        if player != self.current_player():
            return []
        return sorted(self.legal_map())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        pool, upcard = self._chance_pool()
        if upcard and self.d.deal is not None and self.d.deal.bury and any(pool[1:]):
            pool = [0, *pool[1:]]  # a joker turned up goes under the stock: the upcard is a natural
        total = sum(pool)
        return [(i, n / total) for i, n in enumerate(pool) if n]

    def _chance_pool(self) -> tuple[list[int], bool]:
        if self.d.deal is not None:
            return self.d.deal.pool, self.d.deal.targets[0] == -1
        assert self.d.pending is not None
        _, _, pools, picks, _ = self.d.pending
        return pools[len(picks)][0], False

    def _apply_action(self, action: int) -> None:
        if self.d.deal is not None:
            self._deal_card(action)
        elif self.d.pending is not None:
            self._draw_card(action)
        else:
            seat = _next_seat(self.d.engine)
            move = self.legal_map()[action]
            self._play(seat, move)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"card {card_code(index_card(action))}"
        return self.lay.describe_action(action)

    def is_terminal(self) -> bool:
        return self.current_player() == pyspiel.PlayerId.TERMINAL

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self.players
        out = [0.0] * self.players
        for result in self.d.engine.results:
            for i, r in enumerate(round_rewards(result.scores)):
                out[i] += r
        for i, r in enumerate(place_rewards(self.d.engine.totals)):
            out[i] += r
        return out

    def __str__(self) -> str:
        return repr(self.d.engine) + (" (dealing)" if self.d.deal else "") + (" (drawing)" if self.d.pending else "")

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> MayIState:
        """A state ``player_id`` cannot tell from this one: the cards it cannot see dealt anew."""
        if self.d.deal is not None or self.d.pending is not None:
            raise ValueError("resample_from_infostate: a state between chance outcomes (a deal or a draw) has none")
        rng = random.Random(int(probability_sampler() * 2**53))
        s = self.d.engine
        hidden = [c for i, h in enumerate(s.hands) if i != player_id for c in h] + list(s.stock)
        rest = [0] * CARDS
        for c in hidden:
            rest[card_index(c)] += 1
        for i in range(self.players):
            if i != player_id:
                for k, n in enumerate(self.d.known[i]):
                    rest[k] -= n
        pool = [index_card(k) for k, n in enumerate(rest) for _ in range(n)]
        rng.shuffle(pool)
        hands = list(s.hands)
        for i in range(self.players):
            if i == player_id:
                continue
            held = [index_card(k) for k, n in enumerate(self.d.known[i]) for _ in range(n)]
            free = len(s.hands[i]) - len(held)
            hands[i] = tuple(sorted(held + pool[:free]))
            pool = pool[free:]
        new = self.clone()
        world = s.clone()
        world.hands = tuple(hands)
        world.stock = tuple(pool)
        new.d.engine = world
        new.d.legal = None
        return new

    # ------------------------------------------------------------------
    # Deals and draws: each card a chance outcome

    def _start_deal(self) -> None:
        s = self.d.engine
        rules = self.rules
        self.d.deal = new_deal(
            rules.decks_for(self.players),
            self.players,
            s.first_player,
            rules.rounds[s.round - 1].deal,
            rules.bury_joker_upcard,
        )
        self.d.logs = [(f"{self.d.history_of_rounds}round {s.round}",)] * self.players
        self.d.known = [[0] * CARDS for _ in range(self.players)]
        self.d.discarded = [[0] * CARDS for _ in range(self.players)]
        self.d.taken = [[0] * CARDS for _ in range(self.players)]

    def _deal_card(self, index: int) -> None:
        old = self.d.deal
        assert old is not None
        deal = self.d.deal = old.copy()
        deal.pool = pool = list(deal.pool)
        pool[index] -= 1
        target = deal.targets[0]
        deal.targets = deal.targets[1:]
        if target >= 0:
            deal.hands = [list(h) for h in deal.hands]
            deal.hands[target].append(index)
            self._log(target, f"dealt {card_code(index_card(index))}")
            return
        # The upcard: the deal is complete.
        s = self.d.engine.clone()
        s.hands = tuple(tuple(sorted(index_card(k) for k in h)) for h in deal.hands)
        s.discard = (index_card(index),)
        s.stock = tuple(index_card(k) for k, n in enumerate(pool) for _ in range(n))
        self.d.engine = s
        self.d.deal = None
        self.d.legal = None
        self._log_all(f"upcard {card_code(index_card(index))}")

    def _play(self, seat: int, move: Move) -> None:
        state = self.d.engine
        after, events = play(state, seat, move)
        draws = [e for e in events if type(e) is Drew]
        if draws:
            # Wait for the cards: the stock's (as it is), then a rebuilt stock's (the pile turned over).
            cut = next((i for i, e in enumerate(events) if type(e) is StockRebuilt), len(events))
            before = sum(1 for e in events[:cut] if type(e) is Drew)
            stock = card_counts(state.stock)
            pools: list[tuple[list[int], int]] = [(stock, 0)] * before
            turned = 0
            if cut < len(events):
                rebuilt = events[cut]
                assert isinstance(rebuilt, StockRebuilt)
                turned = rebuilt.cards  # the pile but its top at the rebuild: its bottom cards now
                pools += [(card_counts(state.discard[:turned]), 1)] * (len(draws) - before)
            self.d.pending = (seat, move, pools, [], turned)
            return
        self._commit(state, after, events)

    def _draw_card(self, index: int) -> None:
        assert self.d.pending is not None
        seat, move, pools, picks, turned = self.d.pending
        k = len(picks)
        pool, segment = pools[k]
        pool = list(pool)
        pool[index] -= 1
        # The next card from the same pool sees this one gone.
        pools = [(pool, seg) if j > k and seg == segment else (p, seg) for j, (p, seg) in enumerate(pools)]
        pools[k] = (pool, segment)
        picks = [*picks, index]
        if len(picks) < len(pools):
            self.d.pending = (seat, move, pools, picks, turned)
            return
        self.d.pending = None
        state = arranged(self.d.engine, picks, [seg for _, seg in pools], turned)
        after, events = play(state, seat, move)
        drawn = [card_index(e.card) for e in events if type(e) is Drew]
        assert drawn == picks, (drawn, picks)
        self._commit(state, after, events)

    def _commit(self, before: State, after: State, events: list[Event]) -> None:
        """Take the move's result: log what each seat saw, track the public record, deal anew after a round."""
        n = self.players
        new_round = False
        for e in events:
            t = type(e)
            if t is RoundStarted:
                new_round = True
                break
            if t is Dealt:
                continue
            seat = e.seat
            if t is Drew:
                assert seat is not None
                for p in range(n):
                    self._log(p, f"{seat} drew {card_code(e.card)}" if p == seat else f"{seat} drew")  # type: ignore[attr-defined]
                continue
            if t is Discarded:
                k = card_index(e.card)  # type: ignore[attr-defined]
                self.d.discarded = _bumped_row(self.d.discarded, seat, k)  # type: ignore[arg-type]
                self._forget(seat, [k])  # type: ignore[arg-type]
            elif t is TookUpcard or t is ClaimWon:
                k = card_index(e.card)  # type: ignore[attr-defined]
                self.d.taken = _bumped_row(self.d.taken, seat, k)  # type: ignore[arg-type]
                self.d.known = _bumped_row(self.d.known, seat, k)  # type: ignore[arg-type]
            elif t is WentDown:
                self._forget(seat, [card_index(c) for m in e.melds for c in m.cards])  # type: ignore[arg-type, attr-defined]
            elif t is LaidOff:
                self._forget(seat, [card_index(c) for p in e.lay_offs for c in p.cards])  # type: ignore[arg-type, attr-defined]
            self._log_all(_public(e))
        self.d.engine = after
        self.d.legal = None
        if new_round:
            scores = " ".join(map(str, after.results[-1].scores))
            self.d.history_of_rounds += f"round {after.results[-1].round} scores {scores}\n"
            self._start_deal()
        elif after.phase is FINISHED_PHASE:
            self._log_all("game over")

    def _forget(self, seat: int, cards: list[int]) -> None:
        known = self.d.known[seat]
        if any(known[k] for k in cards):
            known = list(known)
            for k in cards:
                if known[k]:
                    known[k] -= 1
            rows = list(self.d.known)
            rows[seat] = known
            self.d.known = rows

    def _log(self, player: int, text: str) -> None:
        self.d.logs = list(self.d.logs)
        self.d.logs[player] = (*self.d.logs[player], text)

    def _log_all(self, text: str) -> None:
        self.d.logs = [(*log, text) for log in self.d.logs]


def _bumped_row(rows: list[list[int]], seat: int, k: int) -> list[list[int]]:
    """``rows`` with one more of card ``k`` in ``seat``'s row (new lists: the old are shared)."""
    row = list(rows[seat])
    row[k] += 1
    out = list(rows)
    out[seat] = row
    return out


def _public(event: Event) -> str:
    data = event.data()
    return f"{event.type} {'' if event.seat is None else event.seat} {data}"


def _next_seat(state: State) -> int:
    from mayi_engine.simulate import next_seat

    return next_seat(state)
