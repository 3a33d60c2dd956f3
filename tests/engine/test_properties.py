"""Property-based tests of the engine over random reachable states (STYLE 3, 8, 10).

A reachable state is made by dealing a game (random seed, variant, table size,
options and starting round) and playing a random number of steps with the
built-in policies, now and then letting the clock run out (a ``Timeout``).
Over such states these tests check that:

(a) every physical card is in exactly one place, and exactly the right seats may
    act, after every move (``simulate.invariant_violations``);
(b) ``legal_moves`` lists exactly the moves ``check_move`` accepts, for every
    seat, over a universe of candidate moves (see :func:`candidates`);
(c) a view leaks nothing: it is unchanged when the cards it must not show
    (other hands, the stock and its order, the discard pile under the upcard,
    the seed) are changed, and it never holds the seed;
(d) a state survives ``dumps``/``loads`` exactly, and the copy plays on the same;
(e) every game terminates within a bound, with one result per round played and
    totals equal to the sum of the round scores;
and that ``deadline`` never announces a timeout that ``Timeout`` then refuses.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from itertools import product
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import Phase as Phase_
from hypothesis import strategies as st
from players import POLICIES

from mayi_engine import apply_move, check_move, deadline, event_to_json, legal_moves, new_game, play, to_act
from mayi_engine.cards import JOKER, NATURALS
from mayi_engine.claims import is_eligible, pending_claimants
from mayi_engine.errors import MayIError
from mayi_engine.melds import HIGH, LOW, RUN, Meld, lay_off_card
from mayi_engine.moves import (
    Claim,
    Discard,
    DrawStock,
    GoDown,
    LayOff,
    LayOffPart,
    Move,
    Pass,
    TakeDiscard,
    Timeout,
)
from mayi_engine.rng import KeyedRandom
from mayi_engine.rules import Rules, get_rules
from mayi_engine.simulate import invariant_violations, next_seat
from mayi_engine.solver import find_contract
from mayi_engine.state import Phase, State, dumps, loads, to_json
from mayi_engine.views import player_view

ALL_CARDS: tuple[int, ...] = (JOKER, *NATURALS)
SETTINGS: dict[str, Any] = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
#: ``MAYI_PROPERTY_SCALE=20`` runs twenty times the examples (a soak; the default takes ~20 s).
SCALE = int(os.environ.get("MAYI_PROPERTY_SCALE", "1"))

# --------------------------------------------------------------------------- #
# Reachable states
# --------------------------------------------------------------------------- #


@dataclass
class Table:
    """How a random game was set up, for a readable falsifying example."""

    rules: Rules
    players: int
    seed: bytes
    start_round: int
    bots: tuple[str, ...]
    #: One step in ``timeouts`` lets the clock run out (0: never).
    timeouts: int = 0

    def new(self) -> State:
        return new_game(self.rules, [f"p{i}" for i in range(self.players)], self.seed, start_round=self.start_round)


@st.composite
def rules_values(draw: st.DrawFn) -> Rules:
    """A variant with some table options."""
    variant = draw(st.sampled_from(["may_i", "shanghai"]))
    options: dict[str, Any] = {}
    if draw(st.booleans()):
        options["max_reshuffles"] = draw(st.integers(0, 3))
    if draw(st.integers(0, 3)) == 0:
        options["max_turns"] = draw(st.sampled_from([10, 40]))
    if variant == "shanghai":
        if draw(st.booleans()):
            options["all_out_final"] = True
        if draw(st.booleans()):
            options["bury_joker_upcard"] = False
        if draw(st.booleans()):
            options["free_goal_order"] = True
    return get_rules(variant, options)


@st.composite
def tables(draw: st.DrawFn, timeouts: bool = True) -> Table:
    rules = draw(rules_values())
    players = draw(st.integers(rules.min_players, rules.max_players))
    return Table(
        rules=rules,
        players=players,
        seed=draw(st.binary(min_size=32, max_size=32)),
        start_round=draw(st.integers(1, len(rules.rounds))),
        bots=tuple(draw(st.sampled_from(["random", "greedy"])) for _ in range(players)),
        timeouts=draw(st.sampled_from([0, 3, 25])) if timeouts else 0,
    )


#: Where a walk stops once it has made its steps: the first state that is ...
TARGETS: dict[str, Callable[[State], bool]] = {
    "any": lambda s: True,
    "playing": lambda s: s.phase is Phase.PLAY,
    "laying off": lambda s: s.phase is Phase.PLAY and s.down[s.actor] and bool(s.melds),
    "going out": lambda s: s.phase is Phase.PLAY and s.down[s.actor] and len(s.hands[s.actor]) <= 3,
    "two cards": lambda s: s.phase is Phase.PLAY and s.down[s.actor] and len(s.hands[s.actor]) == 2,
    "claimed": lambda s: s.phase is Phase.DRAW and bool(s.claims),
    "new round": lambda s: s.phase is not Phase.FINISHED and s.round > s.start_round and s.moves > 0,
}


def walk(table: Table, steps: int, target: str = "any", *, check: bool = False) -> tuple[list[State], float]:
    """The states of ``steps`` random steps from the deal, then more until ``target``
    holds (fewer if the game ends), and the clock at the end."""
    state = table.new()
    states = [state]
    rng = KeyedRandom(table.seed, "walk")
    now = 0.0
    done = TARGETS[target]
    for step in range(steps + 3000):
        if state.phase is Phase.FINISHED or (step >= steps and done(state)):
            break
        due = deadline(state)
        if due is not None and table.timeouts and rng.below(table.timeouts) == 0:
            now = max(now, due)
            state = apply_move(state, None, Timeout(), now)
        else:
            now += rng.below(4)
            seat = next_seat(state)
            legal = legal_moves(state, seat, now)
            if not legal:  # the claim window has closed on this claimant
                seat = state.actor
                legal = legal_moves(state, seat, now)
            assert legal, f"seat {seat} must act but has no legal move"
            move = POLICIES[table.bots[seat]](state, seat, legal, rng)
            state = apply_move(state, seat, move, now)
        if check:
            assert invariant_violations(state) == []
        states.append(state)
    return states, now


@st.composite
def reachable(draw: st.DrawFn, max_steps: int = 600) -> tuple[Table, State, float]:
    table = draw(tables())
    steps = draw(st.one_of(st.integers(0, 40), st.integers(40, max_steps)))
    states, now = walk(table, steps, draw(st.sampled_from([*TARGETS, "laying off", "two cards"])))
    return table, states[-1], now


# --------------------------------------------------------------------------- #
# (a) every card in exactly one place, the right seats may act
# --------------------------------------------------------------------------- #


@settings(max_examples=50 * SCALE, **SETTINGS)
@given(tables(), st.integers(0, 600), st.sampled_from(sorted(TARGETS)))
def test_invariants_hold_after_every_move(table: Table, steps: int, target: str) -> None:
    walk(table, steps, target, check=True)


# --------------------------------------------------------------------------- #
# (b) legal_moves agrees with check_move
# --------------------------------------------------------------------------- #


def accepted(state: State, seat: int, move: Move, now: float) -> bool:
    try:
        check_move(state, seat, move, now)
    except MayIError:
        return False
    return True


def moves_joker(meld: Meld, card: int) -> bool:
    """Whether laying ``card`` off on ``meld`` sends a joker to an end of a run
    (a joker laid off on a run, or a natural card displacing a run's joker)."""
    if meld.kind != RUN:
        return False
    if card == JOKER:
        return True
    if card & 3 != meld.suit:
        return False
    rank = card >> 2
    ranks = {rank, 14} if rank == 1 else {rank}
    if len(meld.cards) < 13 and (max(ranks) == meld.high + 1 or rank == meld.low - 1):
        return False  # it extends the run
    return any(meld.low <= r <= meld.high and meld.cards[r - meld.low] == JOKER for r in ranks)


def open_ends(meld: Meld) -> list[str]:
    """Ends of a run that can take one more card (no wrap, ace high or low)."""
    if len(meld.cards) >= 13:
        return []
    return [end for end, ok in ((HIGH, meld.high < 14), (LOW, meld.low > 1)) if ok]


def canonical(state: State, move: Move) -> Move | str:
    """A move with its documented equivalences removed.

    A lay-off that moves no joker ignores ``joker_to`` (canonically ``None``); one
    that moves a joker to the only open end may leave ``joker_to`` out
    (canonically that end). Every going down is one class: the engine lists one
    arrangement of the contract, not all of them.
    """
    if isinstance(move, GoDown):
        return "go_down"
    if not isinstance(move, LayOff):
        return move
    melds = list(state.melds)
    parts = []
    for part in move.parts:
        if len(part.cards) != 1 or not 0 <= part.meld < len(melds):
            parts.append(part)
            continue
        meld, card, end = melds[part.meld], part.cards[0], part.joker_to
        if not moves_joker(meld, card):
            end = None
        elif end is None and len(open_ends(meld)) == 1:
            end = open_ends(meld)[0]
        parts.append(LayOffPart(part.meld, part.cards, end))
        with contextlib.suppress(MayIError):
            melds[part.meld] = lay_off_card(meld, card, part.joker_to, state.rules)
    return LayOff(tuple(parts))


def candidates(state: State, seat: int, listed: list[Move], rng: KeyedRandom) -> list[Move]:
    """The universe of candidate moves for ``seat``: every draw and claim answer,
    a discard of every card (held or not), single-card lay-offs on every meld and
    one id past the end with each ``joker_to``, the two-card lay-offs that go out
    where a single card may not be kept, and the contract as the solver finds it."""
    out: list[Move] = [DrawStock(), TakeDiscard(), Claim(), Pass(), *listed]
    out += [Discard(c) for c in ALL_CARDS]
    hand = state.hands[seat]
    acting = state.phase is Phase.PLAY and seat == state.actor
    # Every card for the seat that may lay off; its cards and a few others for the rest.
    pool = list(ALL_CARDS) if acting else sorted(set(hand)) + [rng.choice(ALL_CARDS) for _ in range(3)]
    meld_ids = range(len(state.melds) + 1)
    ends = (None, HIGH, LOW)
    out += [LayOff((LayOffPart(m, (c,), e),)) for m, c, e in product(meld_ids, pool, ends)]
    if acting and state.down[seat] and len(hand) == 2 and not state.rules.out_by_discard:
        a, b = hand
        for first, second in ((a, b), (b, a)):
            for m1, e1, m2, e2 in product(meld_ids, ends, meld_ids, ends):
                out.append(LayOff((LayOffPart(m1, (first,), e1), LayOffPart(m2, (second,), e2))))
    if acting and not state.down[seat]:
        contract = state.rules.rounds[state.round - 1].contract
        plan = find_contract(hand, contract, state.rules)
        if plan is not None:
            out.append(GoDown(tuple(cards for _, cards in plan)))
    return out


def spoilt(state: State, seat: int, move: GoDown) -> list[GoDown]:
    """Goings down that must fail: the listed one with a meld missing (unless the goals
    may be met in any order: fewer melds can be another goal), a meld twice, a card the
    seat does not hold, or a lay-off on a meld that does not exist."""
    melds = move.melds
    foreign = next(c for c in ALL_CARDS if c not in state.hands[seat])
    return [
        *([] if state.rules.free_goal_order else [GoDown(melds[:-1])]),
        GoDown((*melds, melds[0])),
        GoDown(((*melds[0], foreign), *melds[1:])),
        GoDown(melds, (LayOffPart(len(state.melds) + len(melds), (JOKER,)),)),
    ]


def check_agreement(state: State, now: float) -> None:
    rng = KeyedRandom(state.seed, f"candidates/{state.moves}")
    for seat in range(state.players):
        listed = legal_moves(state, seat, now)
        assert len(listed) == len(set(listed)), f"seat {seat}: duplicates in {listed}"
        for move in listed:
            assert accepted(state, seat, move, now), f"seat {seat}: listed {move} is refused"
            assert canonical(state, move) in (move, "go_down"), f"seat {seat}: {move} is not in canonical form"
        universe = candidates(state, seat, listed, rng)
        for move in (m for other in range(state.players) for m in legal_moves(state, other, now)):
            if isinstance(move, GoDown):
                for bad in spoilt(state, seat, move):
                    assert not accepted(state, seat, bad, now), f"seat {seat}: {bad} is accepted"
                universe.append(move)  # another seat's going down is refused
        ok = {canonical(state, m) for m in universe if accepted(state, seat, m, now)}
        want = {canonical(state, m) for m in listed}
        assert ok == want, (
            f"seat {seat} in {state.phase.value}: accepted but not listed {ok - want}; "
            f"listed but not accepted {want - ok}"
        )


@settings(max_examples=150 * SCALE, **SETTINGS)
@given(reachable(), st.sampled_from([0.0, 10.0, 1e6]))
def test_legal_moves_are_exactly_the_accepted_moves(case: tuple[Table, State, float], later: float) -> None:
    """``later``: how long after the last move the seats ask."""
    _, state, now = case
    check_agreement(state, now + later)
    # The pending claimants are the seats the claim rules let answer.
    assert list(pending_claimants(state)) == [s for s in range(state.players) if is_eligible(state, s)]
    # Asked without a time, the moves are those of a time before the claim window closes.
    if state.claim_closes_at is None or now < state.claim_closes_at:
        for seat in range(state.players):
            assert legal_moves(state, seat) == legal_moves(state, seat, now)


@settings(max_examples=100 * SCALE, **SETTINGS)
@given(reachable(), st.sampled_from([None, 0.0, 10.0, 1e6]))
def test_the_seats_to_act_are_those_with_a_legal_move_in_table_order(
    case: tuple[Table, State, float], later: float | None
) -> None:
    """``to_act`` (who must decide next, for every driver of a table): exactly the seats
    with a legal move at that time, the claimants clockwise from the turn, then the actor."""
    _, state, now = case
    at = None if later is None else now + later
    seats = to_act(state, at)
    assert set(seats) == {seat for seat in range(state.players) if legal_moves(state, seat, at)}
    assert len(set(seats)) == len(seats)
    if seats:
        assert seats[-1] == state.actor
        clockwise = [(seat - state.turn) % state.players for seat in seats[:-1]]
        assert clockwise == sorted(clockwise)
        assert next_seat(state) == to_act(state)[0]


# --------------------------------------------------------------------------- #
# (c) views leak nothing
# --------------------------------------------------------------------------- #


def hide_differently(state: State, viewer: int | None, rng: KeyedRandom) -> State:
    """``state`` with everything ``viewer`` may not see changed: cards swapped between
    the other hands and the stock (keeping every count), the stock and the discard
    pile under the upcard reordered, another seed."""
    s = state.clone()
    hands = [list(h) for h in s.hands]
    stock = list(s.stock)
    others = [j for j in range(s.players) if j != viewer]
    for _ in range(12):
        j = rng.choice(others)
        keep = s.held if j == s.turn and s.held >= 0 else None
        choices = [i for i, c in enumerate(hands[j]) if c != keep]
        if not choices or not stock:
            continue
        i, k = rng.choice(choices), rng.below(len(stock))
        hands[j][i], stock[k] = stock[k], hands[j][i]
    rng.shuffle(stock)
    under = list(s.discard[:-1])
    rng.shuffle(under)
    s.hands = tuple(tuple(sorted(h)) for h in hands)
    s.stock = tuple(stock)
    s.discard = (*under, *s.discard[-1:])
    s.seed = bytes(b ^ 0x5A for b in s.seed)
    return s


@settings(max_examples=80 * SCALE, **SETTINGS)
@given(reachable())
def test_views_leak_nothing(case: tuple[Table, State, float]) -> None:
    _, state, now = case
    rng = KeyedRandom(state.seed, "hide")
    for viewer in [None, *range(state.players)]:
        view = json.dumps(player_view(state, viewer, now), sort_keys=True)
        assert state.seed.hex() not in view
        for _ in range(2):
            other = hide_differently(state, viewer, rng)
            assert json.dumps(player_view(other, viewer, now), sort_keys=True) == view, f"the view of {viewer} leaks"
        if viewer is None:
            assert not {"hand", "legal", "held", "seat"} & set(json.loads(view))


# --------------------------------------------------------------------------- #
# (d) serialisation round-trips
# --------------------------------------------------------------------------- #


@settings(max_examples=50 * SCALE, **SETTINGS)
@given(tables(), st.integers(0, 600), st.integers(1, 40))
def test_serialisation_round_trips(table: Table, steps: int, every: int) -> None:
    states, _ = walk(table, steps)
    for state in states[::every] + states[-1:]:
        text = dumps(state)
        copy = loads(text)
        assert copy == state
        assert to_json(copy) == to_json(state)
        assert dumps(copy) == text
        assert loads(text.encode()) == state
    # The copy plays on exactly like the original.
    last = states[-1]
    if last.phase is not Phase.FINISHED:
        for seat in range(last.players):
            assert legal_moves(loads(dumps(last)), seat) == legal_moves(last, seat)
        tail = Table(table.rules, table.players, last.seed, table.start_round, table.bots)
        a, b = last, loads(dumps(last))
        rng_a, rng_b = KeyedRandom(tail.seed, "tail"), KeyedRandom(tail.seed, "tail")
        for _ in range(50):
            if a.phase is Phase.FINISHED:
                break
            seat = next_seat(a)
            move = POLICIES["random"](a, seat, legal_moves(a, seat), rng_a)
            assert move == POLICIES["random"](b, seat, legal_moves(b, seat), rng_b)
            a, b = apply_move(a, seat, move), apply_move(b, seat, move)
        assert dumps(a) == dumps(b)


# --------------------------------------------------------------------------- #
# (e) every game terminates
# --------------------------------------------------------------------------- #

#: Most actions in one round. Random play needs about 1,300 at most (2 players);
#: the bound is generous, but a game that cycles for ever hits it at once (since
#: ``Rules.max_turns`` ends a round after 500 turns, only an engine bug can).
MAX_ACTIONS_PER_ROUND = 5000


def play_out(table: Table) -> tuple[State, int, list[str]]:
    """Play a game to the end (or to the bound): the last state, the number of
    actions and the kinds of the events."""
    state = table.new()
    rng = KeyedRandom(table.seed, "policies")
    bound = MAX_ACTIONS_PER_ROUND * (len(table.rules.rounds) - table.start_round + 1)
    actions = 0
    kinds: list[str] = []
    while state.phase is not Phase.FINISHED and actions < bound:
        seat = next_seat(state)
        state, events = play(state, seat, POLICIES[table.bots[seat]](state, seat, legal_moves(state, seat), rng))
        kinds += [event_to_json(e)["type"] for e in events]
        actions += 1
    return state, actions, kinds


def assert_finished_properly(table: Table, state: State, actions: int) -> None:
    assert state.phase is Phase.FINISHED, f"no end after {actions} actions (round {state.round})"
    rounds = len(table.rules.rounds) - table.start_round + 1
    assert len(state.results) == rounds
    assert [r.round for r in state.results] == list(range(table.start_round, len(table.rules.rounds) + 1))
    assert list(state.totals) == [sum(r.scores[seat] for r in state.results) for seat in range(table.players)]
    for result in state.results:
        if result.out >= 0:
            assert result.scores[result.out] == 0
    assert all(legal_moves(state, seat) == () for seat in range(table.players))


# Shrinking a seed teaches nothing, and a game that never ends is slow to shrink.
@settings(max_examples=20 * SCALE, phases=[Phase_.explicit, Phase_.reuse, Phase_.generate], **SETTINGS)
@given(tables(timeouts=False))
def test_every_game_terminates(table: Table) -> None:
    state, actions, _ = play_out(table)
    assert_finished_properly(table, state, actions)


@pytest.mark.parametrize(
    ("variant", "bots"),
    [
        # Both used to go round the table for ever: each greedy player took the
        # upcard (it fitted a meld) and, unable to use it that turn, threw it back.
        ("may_i", ("greedy", "greedy")),
        ("shanghai", ("greedy",) * 4),
    ],
)
def test_greedy_players_do_not_pass_a_card_round_for_ever(variant: str, bots: tuple[str, ...]) -> None:
    table = Table(get_rules(variant), len(bots), bytes(32), 1, bots)
    state, actions, events = play_out(table)
    assert_finished_properly(table, state, actions)
    assert "turn_limit" not in events  # the rounds end by play, not by the safeguard


# --------------------------------------------------------------------------- #
# Clocks: a due deadline is honoured
# --------------------------------------------------------------------------- #


@settings(max_examples=80 * SCALE, **SETTINGS)
@given(reachable())
def test_a_timeout_is_accepted_at_its_deadline(case: tuple[Table, State, float]) -> None:
    _, state, now = case
    due = deadline(state)
    if due is None:
        assert state.phase is Phase.FINISHED
        return
    at = max(now, due)
    after = apply_move(state, None, Timeout(), at)
    assert invariant_violations(after) == []
    assert after.moves == state.moves + 1


def test_a_seat_out_of_buys_may_not_pass_either() -> None:
    """Found by the agreement property: Shanghai accepted a Pass from a seat that had
    used its two buys, though it is not asked about the upcard (and none is listed)."""
    state = new_game(get_rules("shanghai"), ["a", "b", "c"], bytes(32))
    state = state.clone()
    state.claims_used = (0, 2, 0)
    assert legal_moves(state, 1) == ()
    for move in (Pass(), Claim()):
        with pytest.raises(MayIError) as info:
            check_move(state, 1, move)
        assert info.value.code == "claim_not_allowed"
        assert "2 buys per player" in info.value.message
    assert accepted(state, 2, Pass(), 0.0)
