"""Dealing and the moves: verify, then apply.

Each move has one verify function that only raises (:func:`verify_draw_stock`,
:func:`verify_take_discard`, :func:`verify_claim`, :func:`verify_pass`,
:func:`verify_discard`, :func:`verify_go_down`, :func:`verify_lay_off`; the
:class:`Timeout` move's is :func:`clocks.verify_timeout`) and one apply function
that checks nothing. :func:`play` calls both, :func:`check_move` and
:func:`is_legal` only verify, and :func:`legal.legal_moves` is built on the same
checks (and tested to agree with them on random states). Rules used by several
moves are written once, as predicates the errors are worded from:
:func:`turn_problem`, :func:`claim_problem`, :func:`claims_still_open`,
:func:`may_lay_off_now`, :func:`last_card_problem` (the last-card rule) and
:func:`window_closed` (the claim window's clock).

>>> from .rules import MAY_I
>>> state = new_game(MAY_I, ["Ann", "Bob", "Cy"], seed=bytes(32))
>>> state.phase.value, state.actor
('first_offer', 0)
>>> state = apply_move(state, 0, Pass())
>>> state.actor
1
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .cards import JOKER, build_decks, card_codes, card_name, counts_of, remove_cards
from .contracts import match_goal
from .errors import ConfigError, IllegalMoveError, InvalidMoveError, MayIError
from .events import (
    Claimed,
    ClaimWon,
    Dealt,
    Discarded,
    Drew,
    Event,
    GameEnded,
    LaidOff,
    Passed,
    RoundEnded,
    RoundStarted,
    SeatAbsent,
    SeatReturned,
    StockExhausted,
    StockRebuilt,
    TookUpcard,
    TurnLimit,
    WentDown,
)
from .melds import Meld, lay_off_card, read_meld
from .moves import Claim, Discard, DrawStock, GoDown, LayOff, LayOffPart, Move, Pass, TakeDiscard, Timeout
from .rng import KeyedRandom, new_seed
from .rules import Contract, Rules
from .state import (
    DRAW_PHASE,
    FINISHED_PHASE,
    FIRST_DISCARD_PHASE,
    OFFER_PHASE,
    PLAY_PHASE,
    Phase,
    RoundResult,
    Setup,
    State,
)

# ---------------------------------------------------------------------------
# Starting a game


def new_game(
    rules: Rules,
    names: Sequence[str],
    seed: bytes | None = None,
    *,
    now: float = 0.0,
    stacked: Sequence[Sequence[int] | None] | None = None,
    start_round: int = 1,
) -> State:
    """Deal the first round of a new game.

    ``seed`` defaults to a fresh secret one. Test tables may give ``stacked``, the
    top of the stock of each round (top first; the rest of the decks is shuffled
    below), and a ``start_round``.
    """
    return start_game(rules, names, seed, now=now, stacked=stacked, start_round=start_round)[0]


def start_game(
    rules: Rules,
    names: Sequence[str],
    seed: bytes | None = None,
    *,
    now: float = 0.0,
    stacked: Sequence[Sequence[int] | None] | None = None,
    start_round: int = 1,
) -> tuple[State, list[Event]]:
    """:func:`new_game`, also returning the events of the deal."""
    n = len(names)
    if not rules.min_players <= n <= rules.max_players:
        raise ConfigError(
            "validation_error", f"{rules.title} is for {rules.min_players} to {rules.max_players} players, not {n}"
        )
    if not 1 <= start_round <= len(rules.rounds):
        raise ConfigError("validation_error", f"start_round must be 1 to {len(rules.rounds)}, not {start_round}")
    stacks = tuple(None if x is None else tuple(x) for x in (stacked or ()))
    if len(stacks) > len(rules.rounds):
        raise ConfigError(
            "validation_error", f"stacked_decks has {len(stacks)} rounds; {rules.title} has {len(rules.rounds)}"
        )
    decks = rules.decks_for(n)
    full = counts_of(build_decks(decks))
    for i, stack in enumerate(stacks):
        if stack is None:
            continue
        counts = counts_of(stack)
        extra = [c for c in set(stack) if counts[c] > full[c]]
        if extra:
            raise ConfigError(
                "validation_error",
                f"stacked_decks[{i}] holds more of {', '.join(card_codes(sorted(extra)))} than {decks} decks have",
            )
    state = State(
        rules=rules,
        seed=seed if seed is not None else new_seed(),
        names=tuple(names),
        round=start_round,
        phase=DRAW_PHASE,
        turn=0,
        actor=0,
        hands=((),) * n,
        stock=(),
        discard=(),
        melds=(),
        down=(False,) * n,
        claims_used=(0,) * n,
        totals=(0,) * n,
        timeouts=(0,) * n,
        goals_done=((),) * n,
        absent=(False,) * n,
        setup=Setup.of(stacks, start_round),
    )
    events: list[Event] = []
    _deal(state, now, events)
    return state, events


def _deal(s: State, now: float, events: list[Event]) -> None:
    rules = s.rules
    n = s.players
    spec = rules.rounds[s.round - 1]
    cards = build_decks(rules.decks_for(n))
    stacked = s.stacked
    stack = stacked[s.round - 1] if s.round - 1 < len(stacked) else None
    top: list[int] = []
    if stack:
        top = list(stack)
        for c in top:
            cards.remove(c)
    KeyedRandom(s.seed, f"deal/{s.round}").shuffle(cards)
    order = top + cards  # top first
    first = s.first_player
    hands: list[list[int]] = [[] for _ in range(n)]
    pos = 0
    for _ in range(spec.deal):
        for k in range(n):
            hands[(first + k) % n].append(order[pos])
            pos += 1
    rest = order[pos:]
    upcard = rest.pop(0)
    buried = []
    while upcard == JOKER and rules.bury_joker_upcard and any(c != JOKER for c in rest):
        rest.append(upcard)
        buried.append(upcard)
        upcard = rest.pop(0)
    rest.reverse()  # stored with the top card last
    s.hands = tuple(tuple(sorted(h)) for h in hands)
    s.stock = tuple(rest)
    s.discard = (upcard,)
    s.melds = ()
    s.down = (False,) * n
    s.claims_used = (0,) * n
    s.claims = ()
    s.passes = ()
    s.went_down = False
    s.held = -1
    s.reshuffles = 0
    s.round_turns = 0
    s.turn = first
    s.actor = first
    s.discarder = -1
    events.append(RoundStarted(None, s.round, s.dealer, first, spec.contract, spec.deal, upcard, len(buried)))
    for seat in range(n):
        events.append(Dealt(seat, s.hands[seat]))
    if rules.first_upcard_offer:
        s.phase = OFFER_PHASE
        s.claim_closes_at = None
        _set_turn_deadline(s, now)
    else:
        _open_window(s, now)


# ---------------------------------------------------------------------------
# Public entry points: verify, then apply


def apply_move(state: State, seat: int | None, move: Move, now: float = 0.0) -> State:
    """The state after ``seat`` plays ``move`` at time ``now`` (raises if illegal)."""
    return play(state, seat, move, now)[0]


def check_move(state: State, seat: int | None, move: Move, now: float = 0.0) -> None:
    """Raise the :class:`MayIError` that ``move`` would meet, or return if it is legal.

    Only verifies: nothing is applied (no card moves, no next round is dealt).
    """
    verify_move(state, seat, move, now)


def is_legal(state: State, seat: int | None, move: Move, now: float = 0.0) -> bool:
    """Whether :func:`check_move` accepts ``move``."""
    try:
        verify_move(state, seat, move, now)
    except MayIError:
        return False
    return True


def play(state: State, seat: int | None, move: Move, now: float = 0.0) -> tuple[State, list[Event]]:
    """Apply ``move`` for ``seat`` at ``now``: the new state and the events it made.

    ``seat`` is ``None`` only for :class:`Timeout`, which the service (not a player) plays.
    The move is verified first (its verify function only raises), then applied to a copy
    of the state with no further checks.
    """
    if state.phase is FINISHED_PHASE or type(seat) is not int or not 0 <= seat < len(state.names):
        verify, apply = _step(state, seat, move)  # (refuses; or a Timeout, which has no seat)
    else:
        step = _STEPS.get(type(move))
        if step is None:
            raise InvalidMoveError("validation_error", f"{move!r} is not a move")
        verify, apply = step
    plan = verify(state, seat, move, now)  # type: ignore[arg-type]
    s = state.clone()
    s.moves += 1
    events: list[Event] = []
    apply(state, s, seat, move, plan, now, events)  # type: ignore[arg-type]
    if seat is not None and (s.timeouts[seat] or s.absent[seat]):
        _seat_returns(s, seat, events)
    return s, events


def verify_move(state: State, seat: int | None, move: Move, now: float = 0.0) -> Plan:
    """Raise the :class:`MayIError` that ``move`` meets, or return what applying it needs
    (the melds and hand after a go-down or lay-off, the hand after a discard). Changes nothing."""
    verify, _ = _step(state, seat, move)
    return verify(state, seat, move, now)  # type: ignore[arg-type]


def _step(state: State, seat: int | None, move: Move) -> tuple[Verify, Apply]:
    """The verify and apply steps of ``move`` (the one dispatch on the kind of move)."""
    if state.phase is FINISHED_PHASE:
        raise IllegalMoveError("game_over", "The game is over")
    step = _STEPS.get(type(move))
    if step is None:
        raise InvalidMoveError("validation_error", f"{move!r} is not a move")
    if (seat is None or not 0 <= seat < len(state.names)) and type(move) is not Timeout:
        raise IllegalMoveError("not_your_turn", f"seat {seat!r} is not a seat at this table")
    return step


# ---------------------------------------------------------------------------
# Rules shared by the moves (each written once)


_PHASE_HINTS = {
    DRAW_PHASE: "draw first (from the stock or the discard pile)",
    PLAY_PHASE: "you have drawn already; go down, lay off or discard",
    FIRST_DISCARD_PHASE: "you took the first upcard: discard one card now",
}


def turn_problem(s: State, seat: int, phases: tuple[Phase, ...] = (PLAY_PHASE,)) -> str | None:
    """Why ``seat`` may not act on its turn now (``"offer"``: the May I first upcard is
    being offered; ``"not_actor"``; ``"phase"``: not one of ``phases``), or ``None``.
    The one place the turn is checked: :func:`turn_error` words it."""
    if s.phase is OFFER_PHASE:
        return "offer"
    if s.actor != seat:
        return "not_actor"
    if s.phase not in phases:
        return "phase"
    return None


def turn_error(s: State, seat: int, what: str, phases: tuple[Phase, ...] = (PLAY_PHASE,)) -> IllegalMoveError | None:
    """Why ``seat`` may not ``what`` now (it must be the actor, in one of ``phases``), or ``None``."""
    problem = turn_problem(s, seat, phases)
    if problem is None:
        return None
    if problem == "offer":
        return IllegalMoveError(
            "wrong_phase",
            f"The first upcard is being offered to seat {s.actor}; it is not time to {what} "
            "(answer the offer with a claim to take it, or a pass)",
        )
    if problem == "not_actor":
        return IllegalMoveError(
            "not_your_turn", f"It is seat {s.actor}'s turn, not seat {seat}'s: you cannot {what} now"
        )
    return IllegalMoveError("wrong_phase", f"You cannot {what} now: {_PHASE_HINTS[s.phase]}")


def _own_turn(s: State, seat: int, what: str, phases: tuple[Phase, ...] = (PLAY_PHASE,)) -> None:
    if turn_problem(s, seat, phases) is not None:  # (the error is worded only when there is one)
        raise turn_error(s, seat, what, phases)  # type: ignore[misc]


def last_card_problem(rules: Rules, left: int, discarding: bool) -> str | None:
    """The last-card rule, the one place it is written: where a player may not go out by
    discarding (Shanghai), a discard may not empty the hand, and a go-down or lay-off may
    not keep a single card (it could never be discarded). The problem, or ``None``."""
    if rules.out_by_discard:
        return None
    if discarding and left == 0:
        return f"In {rules.title} you may never discard your last card; go out by melding it"
    if not discarding and left == 1:
        return (
            f"In {rules.title} you may never discard your last card, so you may not keep just one: "
            "play all your cards in one request to go out"
        )
    return None


def window_closed(s: State, now: float | None) -> bool:
    """Whether the claim window on the upcard has closed at ``now`` (the one place its clock
    is read; ``None``: no time given, the window is taken as open)."""
    closes = s.claim_closes_at
    return now is not None and closes is not None and now >= closes


def _hand_less(hand: tuple[int, ...], cards: Sequence[int]) -> tuple[int, ...]:
    """``hand`` less ``cards``; ``card_not_in_hand`` naming the missing ones."""
    rest = remove_cards(hand, cards)
    if rest is None:
        missing = _missing(hand, cards)
        raise IllegalMoveError(
            "card_not_in_hand", f"You do not hold {' '.join(card_codes(missing))}", cards=card_codes(missing)
        )
    return rest


def _missing(hand: tuple[int, ...], cards: Sequence[int]) -> list[int]:
    counts = counts_of(hand)
    missing = []
    for c in cards:
        if counts[c]:
            counts[c] -= 1
        else:
            missing.append(c)
    return missing


def _set_hand(s: State, seat: int, hand: tuple[int, ...]) -> None:
    hands = list(s.hands)
    hands[seat] = hand
    s.hands = tuple(hands)


def _give(s: State, seat: int, card: int) -> None:
    hands = list(s.hands)
    hand = list(hands[seat])
    insort(hand, card)
    hands[seat] = tuple(hand)
    s.hands = tuple(hands)


def _bump(values: tuple[int, ...], seat: int, by: int = 1) -> tuple[int, ...]:
    out = list(values)
    out[seat] += by
    return tuple(out)


def _flag(values: tuple[bool, ...], seat: int, value: bool) -> tuple[bool, ...]:
    out = list(values)
    out[seat] = value
    return tuple(out)


def _set_turn_deadline(s: State, now: float) -> None:
    s.turn_deadline = now + s.rules.turn_seconds


# ---------------------------------------------------------------------------
# The claim window (and the May I first-upcard offer)


def _claim_refusal(s: State, seat: int) -> str | None:
    """Why ``seat`` may not answer the upcard (a key of ``_CLAIM_REFUSALS``), or ``None``.

    The one source of truth for who may claim or pass; the window's clock is
    :func:`window_closed`.
    """
    if s.phase is PLAY_PHASE:
        return "drawn"
    if s.phase is not DRAW_PHASE:
        return "no_upcard"
    if seat == s.turn:
        return "on_turn"
    if seat in s.claims or seat in s.passes:
        return "answered"
    if seat == s.discarder and not s.rules.discarder_may_claim:
        return "own_discard"
    limit = s.rules.claim_limit
    if limit is not None and s.claims_used[seat] >= limit:
        return "no_buys_left"
    return None


_CLAIM_REFUSALS = {
    "no_upcard": ("wrong_phase", "There is no upcard on offer to {what} now"),
    "drawn": (
        "claim_not_allowed",
        "Claim not allowed: the claim window closed when seat {turn} drew, so there is no upcard to {what} "
        "(an unanswered claim is a pass); the next upcard comes with seat {turn}'s discard",
    ),
    "on_turn": (
        "claim_not_allowed",
        "You are on turn: take the upcard with a draw from the discard pile instead of a {what}",
    ),
    "answered": ("claim_not_allowed", "You have already answered this upcard"),
    "own_discard": ("claim_not_allowed", "In {title} you may not claim your own discard"),
    "no_buys_left": (
        "claim_not_allowed",
        "{title} allows {limit} buys per player in a round; you have used them, so you have no upcard to {what}",
    ),
}


def is_eligible(s: State, seat: int) -> bool:
    """Whether ``seat`` may claim or pass the upcard now (having not answered yet)."""
    return _claim_refusal(s, seat) is None


def pending_claimants(state: State) -> tuple[int, ...]:
    """Seats that may still claim or pass the upcard, the clock aside: once its window has
    closed (``claim_closes_at``) they may no longer answer, and the next :class:`Timeout`
    or stock draw records their passes. Memoised on the state (a tuple: no caller can change it)."""
    memo = state._legal
    cached: tuple[int, ...] | None = memo.get("pending")
    if cached is None:
        cached = memo["pending"] = _pending(state)
    return cached


def _pending(s: State) -> tuple[int, ...]:
    """:func:`pending_claimants` of a state being built (never memoised): the seats
    :func:`_claim_refusal` refuses nothing in the claim window, its checks read once for
    all the seats (a property test holds the two equal)."""
    if s.phase is not DRAW_PHASE:
        return ()
    rules = s.rules
    turn = s.turn
    answered = s.claims + s.passes
    own = -1 if rules.discarder_may_claim else s.discarder
    limit = rules.claim_limit
    used = s.claims_used
    out = []
    for seat in range(len(used)):
        if seat != turn and seat != own and seat not in answered and (limit is None or used[seat] < limit):
            out.append(seat)
    return tuple(out)


def claim_problem(s: State, seat: int, now: float | None) -> str | None:
    """Why ``seat`` may not claim or pass now (``"offer_seat"``: the first upcard is offered
    to another seat; ``"closed"``: the window's clock ran out; or a reason of the claim
    window's eligibility), or ``None``. The one place this is decided: :func:`claim_error`
    words it and :func:`legal.legal_moves` lists a claim and a pass when it is ``None``."""
    if s.phase is OFFER_PHASE:
        return "offer_seat" if seat != s.actor else None
    reason = _claim_refusal(s, seat)
    if (reason is None or reason == "answered") and window_closed(s, now):
        return "closed"
    return reason


def claim_error(s: State, seat: int, what: str, now: float | None) -> IllegalMoveError | None:
    """Why ``seat`` may not claim or pass (``what``) now, or ``None``: the first-upcard
    offer's seat, the claim window's eligibility, and its clock."""
    reason = claim_problem(s, seat, now)
    if reason is None:
        return None
    if reason == "offer_seat":
        return IllegalMoveError(
            "not_your_turn", f"The first upcard is offered to seat {s.actor} now, not to seat {seat}"
        )
    if reason == "closed":
        closes = s.claim_closes_at or 0.0
        return IllegalMoveError(
            "claim_not_allowed",
            f"Claim not allowed: the claim window on the {card_name(s.discard[-1])} closed at {closes:g} "
            f"({(now or 0.0) - closes:.1f} s ago): an unanswered claim is a pass",
            closes_at=closes,
        )
    code, text = _CLAIM_REFUSALS[reason]
    return IllegalMoveError(code, text.format(what=what, title=s.rules.title, limit=s.rules.claim_limit, turn=s.turn))


def verify_claim(s: State, seat: int, now: float | None) -> None:
    """Refuse a claim ("May I", a buy, or taking the first upcard offered) by ``seat``."""
    if claim_problem(s, seat, now) is not None:  # (the error is worded only when there is one)
        raise claim_error(s, seat, "claim", now)  # type: ignore[misc]


def verify_pass(s: State, seat: int, now: float | None) -> None:
    """Refuse a pass on the upcard (or on the first upcard offered) by ``seat``."""
    if claim_problem(s, seat, now) is not None:
        raise claim_error(s, seat, "pass", now)  # type: ignore[misc]


def _open_window(s: State, now: float) -> None:
    s.phase = DRAW_PHASE
    s.actor = s.turn
    s.claims = ()
    s.passes = ()
    s.went_down = False
    s.held = -1
    s.claim_closes_at = now + s.rules.claim_seconds
    s.turn_deadline = max(now + s.rules.turn_seconds, s.claim_closes_at)


def _apply_claim(s: State, seat: int, now: float, events: list[Event]) -> None:
    if s.phase is OFFER_PHASE:
        card = s.discard[-1]
        s.discard = s.discard[:-1]
        _give(s, seat, card)
        s.held = card
        events.append(TookUpcard(seat, card, first_upcard=True))
        s.actor = seat
        _set_turn_deadline(s, now)
        s.phase = PLAY_PHASE if seat == s.turn else FIRST_DISCARD_PHASE
        return
    s.claims = (*s.claims, seat)
    events.append(Claimed(seat, s.discard[-1]))


def _apply_pass(s: State, seat: int, now: float, events: list[Event], timeout: bool = False) -> None:
    """Record a pass; ``timeout``: the service passes for a seat out of time (a timeout
    toward absence: an unanswered claim is a pass)."""
    if s.phase is OFFER_PHASE:
        events.append(Passed(seat, s.discard[-1], first_upcard=True, timeout=timeout))
        nxt = (seat + 1) % s.players
        if nxt == s.turn:
            # Nobody wanted it: the first player draws from the stock and plays on.
            s.actor = s.turn
            s.phase = PLAY_PHASE
            _set_turn_deadline(s, now)
            _stock_to(s, s.turn, now, events)
        else:
            s.actor = nxt
            _set_turn_deadline(s, now)
        return
    s.passes = (*s.passes, seat)
    events.append(Passed(seat, s.discard[-1], timeout=timeout))
    if timeout:
        _count_timeout(s, seat, events)


# ---------------------------------------------------------------------------
# Drawing


def verify_take_discard(s: State, seat: int) -> None:
    """Refuse taking the upcard as the draw unless ``seat`` is on turn to draw."""
    _own_turn(s, seat, "draw", (DRAW_PHASE,))


def draw_stock_error(s: State, seat: int, now: float | None) -> IllegalMoveError | None:
    """Why ``seat`` may not draw from the stock now, or ``None``: its turn to draw, and the
    claim window closed or answered by every eligible seat."""
    error = turn_error(s, seat, "draw", (DRAW_PHASE,))
    if error is not None:
        return error
    if claims_still_open(s, now):
        pending = pending_claimants(s)
        closes = s.claim_closes_at
        at = now if now is not None else 0.0
        wait = max(0.0, (closes if closes is not None else at) - at)
        return IllegalMoveError(
            "claims_open",
            f"Claims are still open on the {card_name(s.discard[-1])}: "
            f"seat{'s' if len(pending) > 1 else ''} {', '.join(map(str, pending))} may still answer "
            f"(the window closes in {wait:.0f} s)",
            retry_after=wait,
            closes_at=closes,
        )
    return None


def claims_still_open(s: State, now: float | None) -> bool:
    """Whether the stock draw must wait: a seat may still answer the upcard, and the
    window's clock has not run out."""
    return bool(pending_claimants(s)) and not window_closed(s, now)


def verify_draw_stock(s: State, seat: int, now: float | None) -> None:
    """Refuse a stock draw by ``seat`` (not its turn to draw, or claims still open)."""
    error = draw_stock_error(s, seat, now)
    if error is not None:
        raise error


def _apply_take_discard(s: State, seat: int, now: float, events: list[Event]) -> None:
    card = s.discard[-1]
    s.discard = s.discard[:-1]
    _give(s, seat, card)
    voided = s.claims
    s.claims = ()
    s.held = card
    s.phase = PLAY_PHASE
    s.claim_closes_at = None
    _set_turn_deadline(s, now)
    events.append(TookUpcard(seat, card, voided_claims=voided))


def _apply_draw_stock(
    s: State, seat: int, now: float, events: list[Event], pending: Sequence[int], timeout: bool = False
) -> None:
    """The stock draw: the seats still ``pending`` are passed (the window has closed), the
    winning claim is served, then the draw."""
    for p in pending:
        _apply_pass(s, p, now, events, timeout=True)
    s.phase = PLAY_PHASE
    s.claim_closes_at = None
    _set_turn_deadline(s, now)
    winner = next((c for c in _clockwise_from(s.turn, s.players) if c in s.claims), None)
    if winner is None:
        _stock_to(s, seat, now, events, timeout=timeout)
        return
    rules = s.rules
    card = s.discard[-1]
    s.discard = s.discard[:-1]
    _give(s, winner, card)
    s.claims_used = _bump(s.claims_used, winner)
    events.append(ClaimWon(winner, card, rules.claim_penalty, s.claims))
    if rules.penalty_before_draw:
        order = [winner] * rules.claim_penalty + [seat]
    else:
        order = [seat] + [winner] * rules.claim_penalty
    for taker in order:
        if not _stock_to(s, taker, now, events, penalty=taker == winner, timeout=timeout and taker == seat):
            return
    s.claims = ()


def _clockwise_from(seat: int, n: int) -> list[int]:
    return [(seat + k) % n for k in range(1, n)]


def _stock_to(
    s: State, seat: int, now: float, events: list[Event], penalty: bool = False, timeout: bool = False
) -> bool:
    """Move the top stock card to ``seat``; rebuild the stock if needed. False if the round ended."""
    if not s.stock and not _rebuild_stock(s, events):
        _end_round(s, -1, now, events)
        return False
    card = s.stock[-1]
    s.stock = s.stock[:-1]
    _give(s, seat, card)
    events.append(Drew(seat, card, penalty, timeout))
    return True


def _rebuild_stock(s: State, events: list[Event]) -> bool:
    if len(s.discard) <= 1 or s.reshuffles >= s.rules.max_reshuffles:
        events.append(
            StockExhausted(
                None,
                "only one discard left"
                if len(s.discard) <= 1
                else f"the stock may be rebuilt at most max_reshuffles={s.rules.max_reshuffles} times in a round",
            )
        )
        return False
    rest = list(s.discard[:-1])
    s.reshuffles += 1
    KeyedRandom(s.seed, f"rebuild/{s.round}/{s.reshuffles}").shuffle(rest)
    s.stock = tuple(rest)
    s.discard = s.discard[-1:]
    events.append(StockRebuilt(None, len(rest), s.reshuffles))
    return True


# ---------------------------------------------------------------------------
# Going down and laying off


@dataclass(frozen=True, slots=True)
class MeldPlan:
    """What a verified go-down or lay-off does: the seat's hand after it, the melds on the
    table after it, the melds it lays down (a go-down) and the goal they meet."""

    rest: tuple[int, ...]
    melds: tuple[Meld, ...]
    new: tuple[Meld, ...] = ()
    goal: int = -1
    contract: Contract | None = None


def verify_go_down(
    s: State, seat: int, melds: tuple[tuple[int, ...], ...], lay_offs: tuple[LayOffPart, ...] = ()
) -> MeldPlan:
    """Refuse a go-down that is not ``seat``'s to make or does not meet a goal; else its plan."""
    _own_turn(s, seat, "go down")
    rules = s.rules
    if s.down[seat]:
        raise IllegalMoveError("illegal_meld", "You are down already: lay off instead")
    rest = _hand_less(s.hands[seat], [c for m in melds for c in m])
    readings = [read_meld(m, rules) for m in melds]
    goal, contract, chosen = match_goal(s, seat, readings, melds)
    if contract.all_cards:
        spare = 1 if rules.out_by_discard else 0
        if len(rest) - sum(len(p.cards) for p in lay_offs) > spare:
            extra = "or all but one, which you then discard" if spare else "with none left over"
            raise IllegalMoveError(
                "illegal_meld",
                f"Round {s.round}'s contract is {contract.describe()}: you may go down only by going out, "
                f"every card of your hand in the melds {extra}; you would keep {len(rest)} cards",
            )
    base = len(s.melds)
    new = tuple(
        Meld(base + i, seat, r.kind, m, r.low, r.suit) for i, (m, r) in enumerate(zip(melds, chosen, strict=True))
    )
    table = s.melds + new
    if lay_offs:
        rest, table = _verify_lay_offs(s, seat, lay_offs, rest, table, went_down=True, code="illegal_meld")
    else:
        _verify_left(rules, rest, "illegal_meld")
    return MeldPlan(rest, table, new, goal, contract)


def verify_lay_off(s: State, seat: int, parts: tuple[LayOffPart, ...]) -> MeldPlan:
    """Refuse a lay-off that is not ``seat``'s to make or does not fit; else its plan."""
    _own_turn(s, seat, "lay off")
    if not s.down[seat]:
        raise IllegalMoveError("illegal_lay_off", "Only a player who is down may lay off: lay down your contract first")
    rest, table = _verify_lay_offs(s, seat, parts, s.hands[seat], s.melds, s.went_down, "illegal_lay_off")
    return MeldPlan(rest, table)


def may_lay_off_now(s: State) -> bool:
    """Whether the seat on turn (down) may lay off this turn: not on the turn it went
    down where the variant forbids that (May I). :func:`lay_off_error` words it."""
    return _may_lay_off(s.rules, s.went_down)


def _may_lay_off(rules: Rules, went_down: bool) -> bool:
    return not went_down or rules.lay_off_on_go_down_turn


def lay_off_error(s: State, seat: int) -> IllegalMoveError | None:
    """Why ``seat`` (down, on its turn) may not lay off at all this turn, or ``None``."""
    return None if may_lay_off_now(s) else _go_down_turn_error(s.rules)


def _go_down_turn_error(rules: Rules) -> IllegalMoveError:
    return IllegalMoveError(
        "illegal_lay_off", f"In {rules.title} you may not lay off on the turn you go down; wait for your next turn"
    )


def _verify_lay_offs(
    s: State,
    seat: int,
    parts: tuple[LayOffPart, ...],
    hand: tuple[int, ...],
    table: tuple[Meld, ...],
    went_down: bool,
    code: str,
) -> tuple[tuple[int, ...], tuple[Meld, ...]]:
    """The hand and the table after ``parts`` are laid off from ``hand`` on ``table``."""
    rules = s.rules
    if not _may_lay_off(rules, went_down):
        raise _go_down_turn_error(rules)
    cards = [c for p in parts for c in p.cards]
    rest = _hand_less(hand, cards)
    # Hold rule: the card taken from the discard pile this turn stays in hand until next turn.
    if rules.hold_rule and s.held in cards and hand.count(s.held) - cards.count(s.held) < 1:
        raise IllegalMoveError(
            "illegal_lay_off",
            f"Hold rule: the {card_name(s.held)} you took from the discard pile this turn "
            "cannot be laid off until your next turn",
        )
    melds = list(table)
    for part in parts:
        if not 0 <= part.meld < len(melds):
            raise IllegalMoveError("illegal_lay_off", f"There is no meld {part.meld} on the table")
        meld = melds[part.meld]
        for card in part.cards:
            meld = lay_off_card(meld, card, part.joker_to, rules)
        melds[part.meld] = meld
    _verify_left(rules, rest, code)
    return rest, tuple(melds)


def _verify_left(rules: Rules, rest: tuple[int, ...], code: str) -> None:
    problem = last_card_problem(rules, len(rest), discarding=False)
    if problem is not None:
        raise IllegalMoveError(code, problem)


def _apply_melds(s: State, seat: int, move: GoDown | LayOff, plan: MeldPlan, now: float, events: list[Event]) -> None:
    """Apply a verified go-down (with its lay-offs) or lay-off; go out if the hand is empty."""
    parts = move.parts if isinstance(move, LayOff) else move.lay_offs
    if isinstance(move, GoDown):
        s.down = _flag(s.down, seat, True)
        s.went_down = True
        if s.rules.free_goal_order:
            done = list(s.goals_done)
            done[seat] = (*done[seat], plan.goal)
            s.goals_done = tuple(done)
        assert plan.contract is not None  # a go-down's plan names the contract it meets
        events.append(WentDown(seat, plan.new, plan.contract))
    s.melds = plan.melds
    _set_hand(s, seat, plan.rest)
    if parts:
        events.append(LaidOff(seat, parts, tuple(s.melds[i] for i in sorted({p.meld for p in parts}))))
    if not plan.rest:
        _end_round(s, seat, now, events)


# ---------------------------------------------------------------------------
# Discarding, going out, the end of a round


def verify_discard(s: State, seat: int, card: int) -> tuple[int, ...]:
    """Refuse a discard that is not ``seat``'s to make, of a card it lacks, or of the last
    card where the variant forbids that; else the hand it leaves (for the apply step)."""
    _own_turn(s, seat, "discard", (PLAY_PHASE, FIRST_DISCARD_PHASE))
    rest = _hand_less(s.hands[seat], [card])
    problem = last_card_problem(s.rules, len(rest), discarding=True)
    if problem is not None:
        raise IllegalMoveError("illegal_discard", problem)
    return rest


def _apply_discard(
    s: State, seat: int, card: int, now: float, events: list[Event], rest: tuple[int, ...], timeout: bool = False
) -> None:
    _set_hand(s, seat, rest)
    s.discard = (*s.discard, card)
    events.append(Discarded(seat, card, timeout))
    if not rest:
        _end_round(s, seat, now, events)
        return
    if s.phase is not FIRST_DISCARD_PHASE:
        s.turn = (seat + 1) % s.players
        s.round_turns += 1
        if s.round_turns >= s.rules.max_turns:
            # A service safeguard so that every round ends, even when nobody ever draws from the stock.
            events.append(TurnLimit(None, s.round_turns))
            _end_round(s, -1, now, events)
            return
    s.discarder = seat
    _open_window(s, now)


def _end_round(s: State, out: int, now: float, events: list[Event]) -> None:
    rules = s.rules
    scores = tuple(0 if seat == out else rules.hand_score(hand) for seat, hand in enumerate(s.hands))
    s.totals = tuple(t + x for t, x in zip(s.totals, scores, strict=True))
    s.results = (*s.results, RoundResult(s.round, out, scores))
    gone_out = out if out >= 0 else None
    events.append(RoundEnded(gone_out, s.round, gone_out, scores, s.totals, s.hands))
    s.claims = ()
    s.passes = ()
    s.claim_closes_at = None
    if s.round >= len(rules.rounds):
        s.phase = FINISHED_PHASE
        s.turn_deadline = None
        events.append(GameEnded(None, s.totals, tuple(standings(s))))
        return
    s.round += 1
    _deal(s, now, events)


def standings(state: State) -> list[int]:
    """Each seat's place (1 = best); equal totals share the place."""
    return [1 + sum(1 for t in state.totals if t < mine) for mine in state.totals]


# ---------------------------------------------------------------------------
# Timeouts and absence, counted as moves are played


def _count_timeout(s: State, seat: int, events: list[Event]) -> None:
    s.timeouts = _bump(s.timeouts, seat)
    if s.timeouts[seat] >= 3 and not s.absent[seat]:
        s.absent = _flag(s.absent, seat, True)
        events.append(SeatAbsent(seat, s.timeouts[seat]))


def _seat_returns(s: State, seat: int, events: list[Event]) -> None:
    if s.absent[seat]:
        events.append(SeatReturned(seat))
    s.timeouts = _bump(s.timeouts, seat, -s.timeouts[seat])
    s.absent = _flag(s.absent, seat, False)


# ---------------------------------------------------------------------------
# The dispatch table: each kind of move, its verify step and its apply step

#: What a verify step hands to its apply step.
Plan = MeldPlan | tuple[int, ...] | None
Verify = Callable[[State, int, Any, float], Plan]
Apply = Callable[[State, State, int, Any, Any, float, list[Event]], None]


def _verify_timeout(state: State, seat: int, move: Timeout, now: float) -> Plan:
    from .clocks import verify_timeout  # clocks builds on the moves of this module

    verify_timeout(state, now)
    return None


def _apply_timeout(state: State, s: State, seat: int, move: Timeout, plan: Any, now: float, ev: list[Event]) -> None:
    from .clocks import play_timeouts

    play_timeouts(s, now, ev)


def _verify_draw_stock(state: State, seat: int, move: DrawStock, now: float) -> Plan:
    verify_draw_stock(state, seat, now)
    return None


def _verify_take_discard(state: State, seat: int, move: TakeDiscard, now: float) -> Plan:
    verify_take_discard(state, seat)
    return None


def _verify_claim(state: State, seat: int, move: Claim, now: float) -> Plan:
    if claim_problem(state, seat, now) is not None:  # (verify_claim, one call less)
        raise claim_error(state, seat, "claim", now)  # type: ignore[misc]
    return None


def _verify_pass(state: State, seat: int, move: Pass, now: float) -> Plan:
    if claim_problem(state, seat, now) is not None:  # (verify_pass, one call less)
        raise claim_error(state, seat, "pass", now)  # type: ignore[misc]
    return None


def _apply_draw_stock_move(
    state: State, s: State, seat: int, move: DrawStock, plan: Any, now: float, ev: list[Event]
) -> None:
    _apply_draw_stock(s, seat, now, ev, pending_claimants(state))


def _apply_take_discard_move(
    state: State, s: State, seat: int, move: TakeDiscard, plan: Any, now: float, ev: list[Event]
) -> None:
    _apply_take_discard(s, seat, now, ev)


def _apply_claim_move(state: State, s: State, seat: int, move: Claim, plan: Any, now: float, ev: list[Event]) -> None:
    _apply_claim(s, seat, now, ev)
    _answered(state, s, seat)


def _apply_pass_move(state: State, s: State, seat: int, move: Pass, plan: Any, now: float, ev: list[Event]) -> None:
    _apply_pass(s, seat, now, ev)
    _answered(state, s, seat)


def _answered(state: State, s: State, seat: int) -> None:
    """``seat`` answered the upcard in the claim window of ``state``: where ``state``'s
    pending claimants are known, those of ``s`` are they less ``seat`` (nothing else that
    decides them changed; memoised on ``s`` for :func:`pending_claimants`)."""
    known: tuple[int, ...] | None = state._legal.get("pending")
    if known is not None and s.phase is DRAW_PHASE:
        s._legal["pending"] = tuple([p for p in known if p != seat])


def _verify_discard_move(state: State, seat: int, move: Discard, now: float) -> Plan:
    return verify_discard(state, seat, move.card)


def _apply_discard_move(
    state: State, s: State, seat: int, move: Discard, plan: Any, now: float, ev: list[Event]
) -> None:
    _apply_discard(s, seat, move.card, now, ev, plan)


def _verify_go_down_move(state: State, seat: int, move: GoDown, now: float) -> Plan:
    return verify_go_down(state, seat, move.melds, move.lay_offs)


def _verify_lay_off_move(state: State, seat: int, move: LayOff, now: float) -> Plan:
    return verify_lay_off(state, seat, move.parts)


def _apply_melds_move(
    state: State, s: State, seat: int, move: GoDown | LayOff, plan: Any, now: float, ev: list[Event]
) -> None:
    _apply_melds(s, seat, move, plan, now, ev)


_STEPS: dict[type, tuple[Verify, Apply]] = {
    DrawStock: (_verify_draw_stock, _apply_draw_stock_move),
    TakeDiscard: (_verify_take_discard, _apply_take_discard_move),
    Claim: (_verify_claim, _apply_claim_move),
    Pass: (_verify_pass, _apply_pass_move),
    Discard: (_verify_discard_move, _apply_discard_move),
    GoDown: (_verify_go_down_move, _apply_melds_move),
    LayOff: (_verify_lay_off_move, _apply_melds_move),
    Timeout: (_verify_timeout, _apply_timeout),
}
