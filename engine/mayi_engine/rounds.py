"""A round from its deal to its end: dealing, the stock, scoring, the next deal or the game's end.

>>> from .rules import MAY_I
>>> state = new_game(MAY_I, ["Ann", "Bob", "Cy"], seed=bytes(32))
>>> state.phase.value, state.actor
('first_offer', 0)
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import JOKER, build_decks, card_codes, counts_of
from .errors import ConfigError
from .events import Dealt, Drew, Event, GameEnded, RoundEnded, RoundStarted, StockExhausted, StockRebuilt
from .rng import KeyedRandom, new_seed
from .rules import Rules
from .state import DRAW_PHASE, FINISHED_PHASE, OFFER_PHASE, RoundResult, Setup, State
from .turns import give, open_window, set_turn_deadline


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
    deal(state, now, events)
    return state, events


def deal(s: State, now: float, events: list[Event]) -> None:
    """Deal round ``s.round`` into the state being built."""
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
        set_turn_deadline(s, now)
    else:
        open_window(s, now)


def stock_to(
    s: State, seat: int, now: float, events: list[Event], penalty: bool = False, timeout: bool = False
) -> bool:
    """Move the top stock card to ``seat``; rebuild the stock if needed. False if the round ended."""
    if not s.stock and not _rebuild_stock(s, events):
        end_round(s, -1, now, events)
        return False
    card = s.stock[-1]
    s.stock = s.stock[:-1]
    give(s, seat, card)
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


def end_round(s: State, out: int, now: float, events: list[Event]) -> None:
    """Score the round (``out``: the seat that went out, -1 for none), then deal the next or end the game."""
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
    deal(s, now, events)


def standings(state: State) -> list[int]:
    """Each seat's place (1 = best); equal totals share the place."""
    return [1 + sum(1 for t in state.totals if t < mine) for mine in state.totals]
