"""Which bots a commit wakes (``mayi_service.bots.seats.waking_seats``): every seat that has a
decision after the commit is woken, so no decision is lost; a seat the commit gave
nothing to do sleeps on; once the game is over every bot seat is woken."""

from __future__ import annotations

import random

import pytest

from mayi_engine import (
    MAY_I,
    SHANGHAI,
    Discard,
    DrawStock,
    GameStatus,
    GoDown,
    LayOff,
    Move,
    Pass,
    Rules,
    State,
    legal_moves,
    play,
    start_game,
    status,
)
from mayi_engine.state import dumps
from mayi_service.bots.wakes import waking_seats
from mayi_service.play.decisions import decision_key
from mayi_service.storage.records import GameRecord, TableMeta


def _simple(state: State, legal: tuple[Move, ...]) -> Move:
    """Pass claims, draw from the stock, go down and lay off when listed, else discard the
    card scoring most (the policy of bench/api.py's clients: games end)."""
    for wanted in (Pass, DrawStock, GoDown | LayOff):
        found = [m for m in legal if isinstance(m, wanted)]
        if found:
            return found[0]
    discards = [m for m in legal if isinstance(m, Discard)]
    if discards:
        return max(discards, key=lambda m: (state.rules.card_score(m.card), m.card))
    return legal[0]


def _record(state: object, bot_seats: tuple[int, ...], players: int) -> GameRecord:
    meta = TableMeta("may_i", {}, players, tuple(f"b{i}" for i in range(players)), False, 0.0, bot_seats=bot_seats)
    return GameRecord("g", 2, 1, GameStatus(status(state)), meta, dumps(state))  # type: ignore[arg-type]


@pytest.mark.parametrize(("rules", "players", "seed"), [(MAY_I, 4, 1), (MAY_I, 3, 2), (SHANGHAI, 4, 3)])
def test_every_seat_with_a_decision_is_woken_and_the_rest_sleep(rules: Rules, players: int, seed: int) -> None:
    rng = random.Random(seed)
    names = [f"b{i}" for i in range(players)]
    state, _ = start_game(rules, names, bytes([seed]) * 32, now=0.0, start_round=len(rules.rounds) - 1)
    everyone = tuple(range(players))
    slept = 0
    for step in range(20_000):
        now = float(step)
        record = _record(state, everyone, players)
        woken = waking_seats(record)
        deciding = {seat for seat in everyone if legal_moves(state, seat, now)}
        if state.finished:
            assert woken == set(everyone)  # the last commit wakes every bot: it has no game left
            break
        assert deciding <= woken, f"step {step}: a seat with a decision was not woken"
        slept += players - len(woken)
        # Only the bots' own seats are looked at.
        assert waking_seats(_record(state, (0,), players)) == woken & {0}
        seat = rng.choice(sorted(deciding))
        state, _ = play(state, seat, _simple(state, legal_moves(state, seat, now)), now)
    else:
        pytest.fail("the game did not end")
    assert slept > 0  # most commits leave most seats asleep


def test_a_game_without_bots_or_still_waiting_wakes_nobody() -> None:
    state, _ = start_game(MAY_I, ["a", "b", "c"], bytes(32), now=0.0)
    assert waking_seats(_record(state, (), 3)) == set()
    meta = TableMeta("may_i", {}, 3, ("a", None, None), False, 0.0, bot_seats=(0,))
    assert waking_seats(GameRecord("g", 1, 0, GameStatus.WAITING, meta, None)) == set()


@pytest.mark.parametrize(("rules", "players", "seed"), [(MAY_I, 4, 4), (MAY_I, 5, 5), (SHANGHAI, 4, 6)])
def test_a_commit_wakes_exactly_the_seats_whose_decision_it_changed(rules: Rules, players: int, seed: int) -> None:
    """Given the state a commit replaces, a seat sleeps on when its decision key (what the
    decisions long-poll shows and a waiting bot skips) is the same after the commit, and
    is woken when the commit gave it a decision or a new one. Claim windows are answered
    one seat at a time, so the others' decisions mostly stay."""
    rng = random.Random(seed)
    names = [f"b{i}" for i in range(players)]
    state, _ = start_game(rules, names, bytes([seed]) * 32, now=0.0, start_round=len(rules.rounds) - 1)
    everyone = tuple(range(players))
    kept = changed = 0
    for step in range(20_000):
        now = float(step)
        deciding = sorted(seat for seat in everyone if legal_moves(state, seat, now))
        seat = rng.choice(deciding)
        before = state
        state, _ = play(state, seat, _simple(state, legal_moves(state, seat, now)), now)
        woken = waking_seats(_record(state, everyone, players), state, before, now)
        if state.finished:
            assert woken == set(everyone)
            break
        for other in everyone:
            legal = legal_moves(state, other, now)
            if not legal:
                continue
            old = legal_moves(before, other, now)
            same = bool(old) and decision_key("g", before, other, old) == decision_key("g", state, other, legal)
            assert (other in woken) != same, f"step {step}: seat {other}, same decision {same}, woken {other in woken}"
            kept += same
            changed += not same
    else:
        pytest.fail("the game did not end")
    assert kept > 100 and changed > 100  # both cases are seen often
