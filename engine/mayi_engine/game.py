"""Transitions: start a game, list legal moves, check and apply a move.

The four entry points follow one source of truth for legality: :func:`play`
checks a move while applying it to a copy (raising before anything is kept),
:func:`check_move` and :func:`is_legal` call it, and :func:`legal_moves` is
tested to agree with it on random states.

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
from collections.abc import Sequence
from typing import Any

from .cards import JOKER, build_decks, card_code, card_codes, card_name, counts_of, remove_cards
from .contracts import match_goal
from .errors import ConfigError, IllegalMoveError, MayIError
from .melds import Meld, lay_off_card, meld_json, read_meld
from .moves import Claim, Discard, DrawStock, GoDown, LayOff, LayOffPart, Move, Pass, TakeDiscard, Timeout
from .rng import KeyedRandom, new_seed
from .rules import Rules
from .state import Phase, RoundResult, State

Event = dict[str, Any]


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
        phase=Phase.DRAW,
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
        stacked=stacks,
        start_round=start_round,
    )
    events: list[Event] = []
    _deal(state, now, events)
    return state, events


def _deal(s: State, now: float, events: list[Event]) -> None:
    rules = s.rules
    n = s.players
    spec = rules.rounds[s.round - 1]
    cards = build_decks(rules.decks_for(n))
    stack = s.stacked[s.round - 1] if s.round - 1 < len(s.stacked) else None
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
    events.append(
        _event(
            "round_started",
            None,
            round=s.round,
            dealer=s.dealer,
            first=first,
            contract=spec.contract.as_json(),
            deal=spec.deal,
            upcard=card_code(upcard),
            jokers_buried=len(buried),
        )
    )
    for seat in range(n):
        events.append(_event("dealt", seat, private={"hand": card_codes(s.hands[seat])}))
    if rules.first_upcard_offer:
        s.phase = Phase.FIRST_OFFER
        s.claim_closes_at = None
        _set_turn_deadline(s, now)
    else:
        _open_window(s, now)


def _event(kind: str, seat: int | None, private: dict[str, Any] | None = None, **data: Any) -> Event:
    event: Event = {"type": kind, "seat": seat, "data": data}
    if private is not None:
        event["private"] = private
    return event


# ---------------------------------------------------------------------------
# Public entry points


def apply_move(state: State, seat: int | None, move: Move, now: float = 0.0) -> State:
    """The state after ``seat`` plays ``move`` at time ``now`` (raises if illegal)."""
    return play(state, seat, move, now)[0]


def check_move(state: State, seat: int | None, move: Move, now: float = 0.0) -> None:
    """Raise the :class:`MayIError` that ``move`` would meet, or return if it is legal."""
    play(state, seat, move, now)


def is_legal(state: State, seat: int | None, move: Move, now: float = 0.0) -> bool:
    try:
        play(state, seat, move, now)
    except MayIError:
        return False
    return True


def play(state: State, seat: int | None, move: Move, now: float = 0.0) -> tuple[State, list[Event]]:
    """Apply ``move`` for ``seat`` at ``now``: the new state and the events it made.

    ``seat`` is ``None`` only for :class:`Timeout`, which the service (not a player) plays.
    """
    if state.phase is Phase.FINISHED:
        raise IllegalMoveError("game_over", "The game is over")
    s = state.clone()
    s.moves += 1
    events: list[Event] = []
    if isinstance(move, Timeout):
        from .clocks import play_timeouts  # clocks builds on the moves of this module

        play_timeouts(s, now, events)
        return s, events
    if seat is None or not 0 <= seat < s.players:
        raise IllegalMoveError("not_your_turn", f"seat {seat!r} is not a seat at this table")
    match move:
        case DrawStock():
            _draw_stock(s, seat, now, events)
        case TakeDiscard():
            _take_discard(s, seat, now, events)
        case Claim():
            _claim(s, seat, now, events)
        case Pass():
            _pass(s, seat, now, events)
        case Discard(card):
            _discard(s, seat, card, now, events)
        case GoDown(melds, lay_offs):
            _go_down(s, seat, melds, lay_offs, now, events)
        case LayOff(parts):
            _own_turn(s, seat, "lay off")
            _lay_off(s, seat, parts, now, events)
        case _:
            raise IllegalMoveError("validation_error", f"{move!r} is not a move")
    if s.timeouts[seat] or s.absent[seat]:
        _seat_returns(s, seat, events)
    return s, events


# ---------------------------------------------------------------------------
# Checks shared by the moves


def _own_turn(s: State, seat: int, what: str, *phases: Phase) -> None:
    """Refuse ``what`` unless ``seat`` must act and the phase is one of ``phases`` (default: play)."""
    phases = phases or (Phase.PLAY,)
    if s.phase is Phase.FIRST_OFFER:
        raise IllegalMoveError(
            "wrong_phase",
            f"The first upcard is being offered to seat {s.actor}; it is not time to {what} "
            "(answer the offer with a claim to take it, or a pass)",
        )
    if s.actor != seat:
        raise IllegalMoveError(
            "not_your_turn", f"It is seat {s.actor}'s turn, not seat {seat}'s: you cannot {what} now"
        )
    if s.phase not in phases:
        hint = {
            Phase.DRAW: "draw first (from the stock or the discard pile)",
            Phase.PLAY: "you have drawn already; go down, lay off or discard",
            Phase.FIRST_DISCARD: "you took the first upcard: discard one card now",
        }[s.phase]
        raise IllegalMoveError("wrong_phase", f"You cannot {what} now: {hint}")


def _take_from_hand(s: State, seat: int, cards: Sequence[int]) -> tuple[int, ...]:
    rest = remove_cards(s.hands[seat], cards)
    if rest is None:
        missing = _missing(s.hands[seat], cards)
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
    hand = list(s.hands[seat])
    insort(hand, card)
    _set_hand(s, seat, tuple(hand))


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
# The claim window


def _claim_refusal(s: State, seat: int) -> str | None:
    """Why ``seat`` may not answer the upcard (a key of ``_CLAIM_REFUSALS``), or ``None``.

    The one source of truth for who may claim or pass; the claim window's clock is
    checked by the moves themselves.
    """
    if s.phase is Phase.PLAY:
        return "drawn"
    if s.phase is not Phase.DRAW:
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


def pending_claimants(state: State) -> list[int]:
    """Seats that may still claim or pass the upcard, the clock aside: once its window has
    closed (``claim_closes_at``) they may no longer answer, and the next :class:`Timeout`
    or stock draw records their passes. Memoised on the state: do not change the list."""
    cached: list[int] | None = state._legal.get("pending")
    if cached is None:
        cached = state._legal["pending"] = _pending(state)
    return cached


def _pending(s: State) -> list[int]:
    """:func:`pending_claimants` of a state being built (never memoised)."""
    if s.phase is not Phase.DRAW:
        return []
    return [seat for seat in range(s.players) if is_eligible(s, seat)]


def _open_window(s: State, now: float) -> None:
    s.phase = Phase.DRAW
    s.actor = s.turn
    s.claims = ()
    s.passes = ()
    s.went_down = False
    s.held = -1
    s.claim_closes_at = now + s.rules.claim_seconds
    s.turn_deadline = max(now + s.rules.turn_seconds, s.claim_closes_at)


def _claim(s: State, seat: int, now: float, events: list[Event]) -> None:
    if s.phase is Phase.FIRST_OFFER:
        if seat != s.actor:
            raise IllegalMoveError(
                "not_your_turn", f"The first upcard is offered to seat {s.actor} now, not to seat {seat}"
            )
        card = s.discard[-1]
        s.discard = s.discard[:-1]
        _give(s, seat, card)
        s.held = card
        events.append(_event("took_upcard", seat, card=card_code(card), first_upcard=True))
        s.actor = seat
        _set_turn_deadline(s, now)
        s.phase = Phase.PLAY if seat == s.turn else Phase.FIRST_DISCARD
        return
    _check_claimant(s, seat, "claim", now)
    s.claims = (*s.claims, seat)
    events.append(_event("claimed", seat, card=card_code(s.discard[-1])))


def _check_claimant(s: State, seat: int, what: str, now: float | None) -> None:
    """Refuse a claim or pass by ``seat`` (``now`` is None for the service's timed-out passes)."""
    reason = _claim_refusal(s, seat)
    closes = s.claim_closes_at
    if reason in (None, "answered") and now is not None and closes is not None and now >= closes:
        raise IllegalMoveError(
            "claim_not_allowed",
            f"Claim not allowed: the claim window on the {card_name(s.discard[-1])} closed at {closes:g} "
            f"({now - closes:.1f} s ago): an unanswered claim is a pass",
            closes_at=closes,
        )
    if reason is not None:
        code, text = _CLAIM_REFUSALS[reason]
        raise IllegalMoveError(
            code, text.format(what=what, title=s.rules.title, limit=s.rules.claim_limit, turn=s.turn)
        )


def _pass(s: State, seat: int, now: float, events: list[Event], timeout: bool = False) -> None:
    if s.phase is Phase.FIRST_OFFER:
        if seat != s.actor:
            raise IllegalMoveError(
                "not_your_turn", f"The first upcard is offered to seat {s.actor} now, not to seat {seat}"
            )
        events.append(_mark(_event("passed", seat, card=card_code(s.discard[-1]), first_upcard=True), timeout))
        nxt = (seat + 1) % s.players
        if nxt == s.turn:
            # Nobody wanted it: the first player draws from the stock and plays on.
            s.actor = s.turn
            s.phase = Phase.PLAY
            _set_turn_deadline(s, now)
            _stock_to(s, s.turn, now, events)
        else:
            s.actor = nxt
            _set_turn_deadline(s, now)
        return
    _check_claimant(s, seat, "pass", None if timeout else now)
    s.passes = (*s.passes, seat)
    events.append(_mark(_event("passed", seat, card=card_code(s.discard[-1])), timeout))
    if timeout:  # an unanswered claim is a pass, and a timeout toward absence
        _count_timeout(s, seat, events)


def _mark(event: Event, timeout: bool) -> Event:
    if timeout:
        event["timeout"] = True
    return event


# ---------------------------------------------------------------------------
# Drawing


def _take_discard(s: State, seat: int, now: float, events: list[Event]) -> None:
    _own_turn(s, seat, "draw", Phase.DRAW)
    card = s.discard[-1]
    s.discard = s.discard[:-1]
    _give(s, seat, card)
    voided = list(s.claims)
    s.claims = ()
    s.held = card
    s.phase = Phase.PLAY
    s.claim_closes_at = None
    _set_turn_deadline(s, now)
    events.append(_event("took_upcard", seat, card=card_code(card), voided_claims=voided))


def _draw_stock(s: State, seat: int, now: float, events: list[Event], timeout: bool = False) -> None:
    _own_turn(s, seat, "draw", Phase.DRAW)
    pending = _pending(s)
    if pending:
        closes = s.claim_closes_at
        if closes is None or now < closes:
            wait = max(0.0, (closes or now) - now)
            raise IllegalMoveError(
                "claims_open",
                f"Claims are still open on the {card_name(s.discard[-1])}: "
                f"seat{'s' if len(pending) > 1 else ''} {', '.join(map(str, pending))} may still answer "
                f"(the window closes in {wait:.0f} s)",
                retry_after=wait,
                closes_at=closes,
            )
        for p in pending:
            _pass(s, p, now, events, timeout=True)
    s.phase = Phase.PLAY
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
    events.append(
        _event("claim_won", winner, card=card_code(card), penalty=rules.claim_penalty, claimants=list(s.claims))
    )
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
    event = _event("drew", seat, private={"card": card_code(card)}, source="stock", penalty=penalty)
    events.append(_mark(event, timeout))
    return True


def _rebuild_stock(s: State, events: list[Event]) -> bool:
    if len(s.discard) <= 1 or s.reshuffles >= s.rules.max_reshuffles:
        events.append(
            _event(
                "stock_exhausted",
                None,
                reason="only one discard left"
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
    events.append(_event("stock_rebuilt", None, cards=len(rest), rebuilds=s.reshuffles))
    return True


# ---------------------------------------------------------------------------
# Going down and laying off


def _go_down(
    s: State,
    seat: int,
    melds: tuple[tuple[int, ...], ...],
    lay_offs: tuple[LayOffPart, ...],
    now: float,
    events: list[Event],
) -> None:
    _own_turn(s, seat, "go down")
    rules = s.rules
    if s.down[seat]:
        raise IllegalMoveError("illegal_meld", "You are down already: lay off instead")
    all_cards = [c for m in melds for c in m]
    rest = _take_from_hand(s, seat, all_cards)
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
        Meld(base + i, seat, kind, m, low, suit)
        for i, (m, (kind, low, suit)) in enumerate(zip(melds, chosen, strict=True))
    )
    s.melds = s.melds + new
    s.down = _flag(s.down, seat, True)
    s.went_down = True
    if rules.free_goal_order:
        done = list(s.goals_done)
        done[seat] = (*done[seat], goal)
        s.goals_done = tuple(done)
    _set_hand(s, seat, rest)
    events.append(_event("went_down", seat, melds=[meld_json(m) for m in new], contract=contract.describe()))
    if lay_offs:
        _lay_off(s, seat, lay_offs, now, events, code="illegal_meld")
        return
    _after_play(s, seat, now, events)


def _lay_off(
    s: State, seat: int, parts: tuple[LayOffPart, ...], now: float, events: list[Event], code: str = "illegal_lay_off"
) -> None:
    rules = s.rules
    if not s.down[seat]:
        raise IllegalMoveError("illegal_lay_off", "Only a player who is down may lay off: lay down your contract first")
    if s.went_down and not rules.lay_off_on_go_down_turn:
        raise IllegalMoveError(
            "illegal_lay_off", f"In {rules.title} you may not lay off on the turn you go down; wait for your next turn"
        )
    cards = [c for p in parts for c in p.cards]
    rest = _take_from_hand(s, seat, cards)
    # Hold rule: the card taken from the discard pile this turn stays in hand until next turn.
    if rules.hold_rule and s.held in cards and s.hands[seat].count(s.held) - cards.count(s.held) < 1:
        raise IllegalMoveError(
            "illegal_lay_off",
            f"Hold rule: the {card_name(s.held)} you took from the discard pile this turn "
            "cannot be laid off until your next turn",
        )
    melds = list(s.melds)
    for part in parts:
        if not 0 <= part.meld < len(melds):
            raise IllegalMoveError("illegal_lay_off", f"There is no meld {part.meld} on the table")
        meld = melds[part.meld]
        for card in part.cards:
            meld = lay_off_card(meld, card, part.joker_to, rules)
        melds[part.meld] = meld
    s.melds = tuple(melds)
    _set_hand(s, seat, rest)
    events.append(
        _event(
            "laid_off",
            seat,
            lay_offs=[
                {"meld": p.meld, "cards": card_codes(p.cards), **({"joker_to": p.joker_to} if p.joker_to else {})}
                for p in parts
            ],
            melds=[meld_json(s.melds[i]) for i in sorted({p.meld for p in parts})],
        )
    )
    _after_play(s, seat, now, events, code)


def _after_play(s: State, seat: int, now: float, events: list[Event], code: str = "illegal_meld") -> None:
    """After cards left a hand by melding: go out, or refuse a lone last card where needed
    (with ``code``: ``illegal_meld`` for going down, ``illegal_lay_off`` for lay-offs)."""
    left = len(s.hands[seat])
    if left == 0:
        _end_round(s, seat, now, events)
    elif left == 1 and not s.rules.out_by_discard:
        raise IllegalMoveError(
            code,
            f"In {s.rules.title} you may never discard your last card, so you may not keep just one: "
            "play all your cards in one request to go out",
        )


# ---------------------------------------------------------------------------
# Discarding, going out, the end of a round


def _discard(s: State, seat: int, card: int, now: float, events: list[Event], timeout: bool = False) -> None:
    _own_turn(s, seat, "discard", Phase.PLAY, Phase.FIRST_DISCARD)
    rest = _take_from_hand(s, seat, [card])
    if not rest and not s.rules.out_by_discard:
        raise IllegalMoveError(
            "illegal_discard", f"In {s.rules.title} you may never discard your last card; go out by melding it"
        )
    _set_hand(s, seat, rest)
    s.discard = (*s.discard, card)
    events.append(_mark(_event("discarded", seat, card=card_code(card)), timeout))
    if not rest:
        _end_round(s, seat, now, events)
        return
    if s.phase is not Phase.FIRST_DISCARD:
        s.turn = (seat + 1) % s.players
        s.round_turns += 1
        if s.round_turns >= s.rules.max_turns:
            # A safeguard so that every round ends, even when nobody ever draws from the stock.
            events.append(_event("turn_limit", None, turns=s.round_turns))
            _end_round(s, -1, now, events)
            return
    s.discarder = seat
    _open_window(s, now)


def _end_round(s: State, out: int, now: float, events: list[Event]) -> None:
    rules = s.rules
    scores = tuple(0 if seat == out else rules.hand_score(hand) for seat, hand in enumerate(s.hands))
    s.totals = tuple(t + x for t, x in zip(s.totals, scores, strict=True))
    s.results = (*s.results, RoundResult(s.round, out, scores))
    events.append(
        _event(
            "round_ended",
            out if out >= 0 else None,
            round=s.round,
            out=out if out >= 0 else None,
            scores=list(scores),
            totals=list(s.totals),
            hands=[card_codes(h) for h in s.hands],
        )
    )
    s.claims = ()
    s.passes = ()
    s.claim_closes_at = None
    if s.round >= len(rules.rounds):
        s.phase = Phase.FINISHED
        s.turn_deadline = None
        events.append(_event("game_ended", None, totals=list(s.totals), places=standings(s)))
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
        events.append(_event("seat_absent", seat, timeouts=s.timeouts[seat]))


def _seat_returns(s: State, seat: int, events: list[Event]) -> None:
    if s.absent[seat]:
        events.append(_event("seat_returned", seat))
    s.timeouts = _bump(s.timeouts, seat, -s.timeouts[seat])
    s.absent = _flag(s.absent, seat, False)
