"""Going down (meeting a goal, with lay-offs in the same request) and laying off."""

from __future__ import annotations

from dataclasses import dataclass

from .cards import card_name
from .contracts import match_goal
from .errors import IllegalMoveError
from .events import Event, LaidOff, WentDown
from .melds import Meld, lay_off_card, read_meld
from .moves import GoDown, LayOff, LayOffPart
from .rounds import end_round
from .rules import Contract, Rules
from .state import State
from .turns import flag, hand_less, last_card_problem, own_turn, set_hand


@dataclass(frozen=True, slots=True)
class MeldPlan:
    """What a verified go-down or lay-off does: the seat's hand after it, the melds on the
    table after it, the melds it lays down (a go-down) and the goal they meet."""

    rest: tuple[int, ...]
    melds: tuple[Meld, ...]
    new: tuple[Meld, ...] = ()
    goal: int = -1
    contract: Contract | None = None


def verify_go_down(s: State, seat: int, move: GoDown, now: float | None) -> MeldPlan:
    """Refuse a go-down that is not ``seat``'s to make or does not meet a goal; else its plan."""
    own_turn(s, seat, "go down")
    melds, lay_offs = move.melds, move.lay_offs
    rules = s.rules
    if s.down[seat]:
        raise IllegalMoveError("illegal_meld", "You are down already: lay off instead")
    rest = hand_less(s.hands[seat], [c for m in melds for c in m])
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


def verify_lay_off(s: State, seat: int, move: LayOff, now: float | None) -> MeldPlan:
    """Refuse a lay-off that is not ``seat``'s to make or does not fit; else its plan."""
    own_turn(s, seat, "lay off")
    if not s.down[seat]:
        raise IllegalMoveError("illegal_lay_off", "Only a player who is down may lay off: lay down your contract first")
    rest, table = _verify_lay_offs(s, seat, move.parts, s.hands[seat], s.melds, s.went_down, "illegal_lay_off")
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
    rest = hand_less(hand, cards)
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


def lay_down(s: State, seat: int, move: GoDown | LayOff, plan: MeldPlan, now: float, events: list[Event]) -> None:
    """Apply a verified go-down (with its lay-offs) or lay-off; go out if the hand is empty."""
    parts = move.parts if isinstance(move, LayOff) else move.lay_offs
    if isinstance(move, GoDown):
        s.down = flag(s.down, seat, True)
        s.went_down = True
        if s.rules.free_goal_order:
            done = list(s.goals_done)
            done[seat] = (*done[seat], plan.goal)
            s.goals_done = tuple(done)
        assert plan.contract is not None  # a go-down's plan names the contract it meets
        events.append(WentDown(seat, plan.new, plan.contract))
    s.melds = plan.melds
    set_hand(s, seat, plan.rest)
    if parts:
        events.append(LaidOff(seat, parts, tuple(s.melds[i] for i in sorted({p.meld for p in parts}))))
    if not plan.rest:
        end_round(s, seat, now, events)
