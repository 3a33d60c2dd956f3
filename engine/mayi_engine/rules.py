"""Variants as data: one frozen :class:`Rules` value per variant.

Everything that differs between May I and Shanghai lives here, never in
``if variant == ...`` branches: decks, rounds with their contracts and deal
sizes, joker limits, the claim penalty and limit, who may claim, lay-offs on the
go-down turn, the hold rule, going out by discard, scoring, house options and
clocks. A third contract-rummy game is a new :class:`Rules` value passed to
:func:`register_variant`.

>>> MAY_I.rounds[6].contract.describe()
'3 runs, using all your cards'
>>> SHANGHAI.decks_for(5)
3
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from .errors import ConfigError


class MeldKind(StrEnum):
    """The two kinds of meld: a ``book`` (3+ cards of one rank) and a ``run`` (4+ cards
    of one suit in sequence). Shared by the contracts, the melds and the solver; prints
    as its word."""

    BOOK = "book"
    RUN = "run"

    def __repr__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, slots=True)
class Contract:
    """What a player must lay down to go down: ``books`` books and ``runs`` runs.

    ``all_cards``: the contract is met only by going out, every card of the hand
    in those melds (May I round 7), or all but one that is then discarded where
    the variant lets a player go out by discarding.
    """

    books: int
    runs: int
    all_cards: bool = False

    @property
    def min_cards(self) -> int:
        return 3 * self.books + 4 * self.runs

    def as_json(self) -> dict[str, Any]:
        """The contract as views and events show it."""
        return {"books": self.books, "runs": self.runs, "all_cards": self.all_cards, "text": self.describe()}

    def describe(self) -> str:
        parts = []
        if self.books:
            parts.append(f"{self.books} book{'s' if self.books > 1 else ''}")
        if self.runs:
            parts.append(f"{self.runs} run{'s' if self.runs > 1 else ''}")
        text = " and ".join(parts) if len(parts) < 3 else ", ".join(parts)
        return text + (", using all your cards" if self.all_cards else "")


@dataclass(frozen=True, slots=True)
class RoundSpec:
    contract: Contract
    deal: int


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One table option, declared once: its ``name`` (the :class:`Rules` field it sets,
    whose value in a variant is the option's default), its ``type`` (``bool``, ``int``
    or ``float``), its allowed range (``low`` to ``high``) and, for the API's schema and
    the error messages, a ``unit`` and a ``description``. A variant accepts the options
    listed in its :attr:`Rules.option_specs` (``house``: a house option of that variant)."""

    name: str
    type: type
    description: str
    low: float | None = None
    high: float | None = None
    unit: str = ""
    house: bool = False

    def check(self, value: Any) -> Any:
        """``value`` as this option's type; :class:`ConfigError` naming the option if it is not one."""
        if self.type is bool:
            if not isinstance(value, bool):
                raise ConfigError("validation_error", f"options.{self.name} must be true or false")
            return value
        whole = self.type is int
        ok = isinstance(value, int if whole else int | float) and not isinstance(value, bool)
        if not ok or (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            what = "whole number" if whole else f"number of {self.unit}" if self.unit else "number"
            raise ConfigError(
                "validation_error", f"options.{self.name} must be a {what} from {self.low:g} to {self.high:g}"
            )
        return self.type(value)

    def as_json(self, default: Any) -> dict[str, Any]:
        """The spec as data (for the API's schema and docs), with this variant's ``default``."""
        return {
            "name": self.name,
            "type": {bool: "boolean", int: "integer", float: "number"}[self.type],
            "minimum": self.low,
            "maximum": self.high,
            "default": default,
            "house": self.house,
            "description": self.description,
        }


#: The options every variant has: the clocks and the service safeguards.
COMMON_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("claim_seconds", float, "Claim window length", 1, 86400, "seconds"),
    OptionSpec("turn_seconds", float, "Turn clock", 1, 86400, "seconds"),
    OptionSpec("max_reshuffles", int, "Stock rebuilds allowed in a round", 0, 100),
    OptionSpec("max_turns", int, "Service safeguard: turns after which a round ends with nobody out", 10, 10000),
)


@dataclass(frozen=True, slots=True)
class Rules:
    """The complete rules of one variant, with its table options applied."""

    name: str
    title: str
    min_players: int
    max_players: int
    #: ``(up_to_players, decks)`` steps, ascending.
    decks: tuple[tuple[int, int], ...]
    rounds: tuple[RoundSpec, ...]
    #: Most jokers in one meld, ``None`` for no limit.
    joker_limit: int | None
    #: Fewest natural cards in one meld.
    min_naturals: int
    #: Books of one contract must be of different ranks.
    distinct_book_ranks: bool
    #: Stock cards a claimant takes with the upcard.
    claim_penalty: int
    #: Claims a player may make in one round, ``None`` for no limit.
    claim_limit: int | None
    #: The discarder may claim their own discard (with the lowest priority).
    discarder_may_claim: bool
    #: The claimant's penalty cards come off the stock before the turn player's draw.
    penalty_before_draw: bool
    #: The first upcard of a round is offered to each player in turn (May I).
    first_upcard_offer: bool
    #: A joker turned up at the deal goes to the bottom of the stock.
    bury_joker_upcard: bool
    #: A player may lay off on the turn they went down.
    lay_off_on_go_down_turn: bool
    #: A card taken from the discard pile cannot be laid off that same turn.
    hold_rule: bool
    #: A player may go out by discarding their last card.
    out_by_discard: bool
    #: Points of a card left in hand, indexed by rank (index 0: joker).
    scores: tuple[int, ...]
    claim_seconds: float = 15.0
    turn_seconds: float = 60.0
    max_reshuffles: int = 3
    #: Turns after which a round ends with nobody out (a safeguard against endless rounds).
    max_turns: int = 500
    #: Each player meets the rounds' contracts ("goals") in any order, one per round.
    free_goal_order: bool = False
    #: The last round's contract is met only by going out, every card in the melds.
    all_out_final: bool = False
    #: The table options this variant accepts (each sets the field of its name).
    option_specs: tuple[OptionSpec, ...] = COMMON_OPTIONS
    #: What claiming the upcard out of turn is called at the table ("May I", "Buy").
    claim_name: str = "Claim"

    def __post_init__(self) -> None:
        if self.all_out_final and not self.rounds[-1].contract.all_cards:
            last = self.rounds[-1]
            final = RoundSpec(replace(last.contract, all_cards=True), last.deal)
            object.__setattr__(self, "rounds", (*self.rounds[:-1], final))

    def decks_for(self, players: int) -> int:
        for up_to, decks in self.decks:
            if players <= up_to:
                return decks
        return self.decks[-1][1]

    def card_score(self, card: int) -> int:
        return self.scores[card >> 2]

    def hand_score(self, hand: tuple[int, ...]) -> int:
        scores = self.scores
        return sum(scores[c >> 2] for c in hand)

    def option(self, name: str) -> Any:
        """The value of table option ``name`` in these rules (``None`` if there is no such option)."""
        return getattr(self, name) if any(spec.name == name for spec in self.option_specs) else None

    def option_table(self) -> list[dict[str, Any]]:
        """Every option of this variant as data, with its default here."""
        return [spec.as_json(getattr(self, spec.name)) for spec in self.option_specs]

    def with_options(self, options: dict[str, Any] | None) -> Rules:
        """These rules with table options applied, each checked against its :class:`OptionSpec`;
        unknown options are refused."""
        if not options:
            return self
        specs = {spec.name: spec for spec in self.option_specs}
        changes: dict[str, Any] = {}
        for key, value in options.items():
            spec = specs.get(key)
            if spec is None:
                raise ConfigError(
                    "validation_error",
                    f"options.{key} is not an option of {self.title} (known: {', '.join(specs)})",
                )
            changes[key] = spec.check(value)
        return replace(self, **changes)

    def table_options(self) -> dict[str, Any]:
        """The options that differ from this variant's registered defaults."""
        base = VARIANTS.get(self.name)
        out: dict[str, Any] = {}
        for spec in self.option_specs:
            value = getattr(self, spec.name)
            if base is None or value != getattr(base, spec.name):
                out[spec.name] = value
        return out


MAY_I = Rules(
    name="may_i",
    title="May I",
    min_players=2,
    max_players=6,
    decks=((3, 2), (6, 3)),
    rounds=(
        RoundSpec(Contract(books=2, runs=0), 10),
        RoundSpec(Contract(books=1, runs=1), 10),
        RoundSpec(Contract(books=0, runs=2), 10),
        RoundSpec(Contract(books=3, runs=0), 10),
        RoundSpec(Contract(books=2, runs=1), 12),
        RoundSpec(Contract(books=1, runs=2), 12),
        RoundSpec(Contract(books=0, runs=3, all_cards=True), 12),
    ),
    joker_limit=1,
    min_naturals=1,
    distinct_book_ranks=False,
    claim_penalty=1,
    claim_limit=None,
    discarder_may_claim=False,
    penalty_before_draw=True,
    first_upcard_offer=True,
    bury_joker_upcard=True,
    lay_off_on_go_down_turn=False,
    hold_rule=True,
    out_by_discard=True,
    # joker 50; A 20; 2-9 face value; 10, J, Q, K 10.
    scores=(50, 20, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10),
    claim_name="May I",
)

SHANGHAI = Rules(
    name="shanghai",
    title="Shanghai",
    min_players=3,
    max_players=8,
    decks=((4, 2), (6, 3), (8, 4)),
    rounds=(
        RoundSpec(Contract(books=2, runs=0), 10),
        RoundSpec(Contract(books=1, runs=1), 10),
        RoundSpec(Contract(books=0, runs=2), 10),
        RoundSpec(Contract(books=3, runs=0), 10),
        RoundSpec(Contract(books=2, runs=1), 10),
        RoundSpec(Contract(books=1, runs=2), 10),
        RoundSpec(Contract(books=4, runs=0), 10),
        RoundSpec(Contract(books=0, runs=3), 10),
    ),
    joker_limit=None,
    min_naturals=1,
    distinct_book_ranks=True,
    claim_penalty=2,
    claim_limit=2,
    discarder_may_claim=True,
    penalty_before_draw=False,
    first_upcard_offer=False,
    bury_joker_upcard=True,
    lay_off_on_go_down_turn=True,
    hold_rule=False,
    out_by_discard=False,
    # joker 25; A 15; 2-8 5; 9-K 10.
    scores=(25, 15, 5, 5, 5, 5, 5, 5, 5, 10, 10, 10, 10, 10),
    claim_name="Buy",
    option_specs=(
        *COMMON_OPTIONS,
        OptionSpec("all_out_final", bool, "Shanghai house option: the final hand must go all out", house=True),
        OptionSpec("bury_joker_upcard", bool, "Shanghai house option: bury a joker upcard", house=True),
        OptionSpec(
            "free_goal_order",
            bool,
            "Shanghai house option: meet the goals (rounds' contracts) in any order",
            house=True,
        ),
    ),
)

VARIANTS: dict[str, Rules] = {MAY_I.name: MAY_I, SHANGHAI.name: SHANGHAI}


def register_variant(rules: Rules) -> Rules:
    """Make a variant known by name (states name their variant when serialised)."""
    VARIANTS[rules.name] = rules
    return rules


def get_rules(variant: str, options: dict[str, Any] | None = None) -> Rules:
    """The rules of a registered variant with table options applied."""
    try:
        base = VARIANTS[variant]
    except KeyError:
        known = ", ".join(sorted(VARIANTS))
        raise ConfigError("validation_error", f"variant {variant!r} is not known (known: {known})") from None
    if not options:
        return base
    try:
        key = (variant, tuple(sorted(options.items())))
        cached = _WITH_OPTIONS.get(key)
    except TypeError:  # an unhashable option value: with_options will name it
        return base.with_options(options)
    if cached is None or cached[0] is not base:
        cached = (base, base.with_options(options))
        if len(_WITH_OPTIONS) < 1024:
            _WITH_OPTIONS[key] = cached
    return cached[1]


#: Rules with table options, by variant and options (with the base rules they were made from).
_WITH_OPTIONS: dict[tuple[Any, ...], tuple[Rules, Rules]] = {}
