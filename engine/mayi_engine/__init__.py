"""Pure-Python rules engine for May I and Shanghai (contract rummy).

One namespace for bots, the service and tools: ``from mayi_engine import ...``
never needs to reach into a module.

>>> from mayi_engine import MAY_I, Pass, new_game, play
>>> state = new_game(MAY_I, ["Ann", "Bob", "Cy"], seed=bytes(32))
>>> state, events = play(state, 0, Pass())
>>> state.actor
1
"""

from .cards import JOKER, card_code, card_codes, card_name, parse_card, parse_cards
from .claims import is_eligible, pending_claimants, to_act
from .clocks import deadline, seat_returns, timeout_discard
from .contracts import goals_for
from .errors import ConfigError, ErrorCode, IllegalMoveError, InvalidMoveError, MayIError
from .events import EVENT_TYPES, Event, event_to_json
from .game import apply_move, check_move, is_legal, play
from .legal import legal_moves
from .melds import Meld, Reading, meld_json, read_meld
from .moves import (
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
    move_from_json,
    move_to_json,
)
from .policies import POLICIES
from .rounds import new_game, standings, start_game
from .rules import (
    MAY_I,
    SHANGHAI,
    VARIANTS,
    Contract,
    MeldKind,
    OptionSpec,
    RoundSpec,
    Rules,
    get_rules,
    register_variant,
)
from .solver import find_contract
from .state import GameStatus, Phase, RoundResult, Setup, State, dumps, from_json, loads, to_json
from .views import player_view, status

__all__ = [
    "EVENT_TYPES",
    "JOKER",
    "MAY_I",
    "POLICIES",
    "SHANGHAI",
    "VARIANTS",
    "Claim",
    "ConfigError",
    "Contract",
    "Discard",
    "DrawStock",
    "ErrorCode",
    "Event",
    "GameStatus",
    "GoDown",
    "IllegalMoveError",
    "InvalidMoveError",
    "LayOff",
    "LayOffPart",
    "MayIError",
    "Meld",
    "MeldKind",
    "Move",
    "OptionSpec",
    "Pass",
    "Phase",
    "Reading",
    "RoundResult",
    "RoundSpec",
    "Rules",
    "Setup",
    "State",
    "TakeDiscard",
    "Timeout",
    "apply_move",
    "card_code",
    "card_codes",
    "card_name",
    "check_move",
    "deadline",
    "dumps",
    "event_to_json",
    "find_contract",
    "from_json",
    "get_rules",
    "goals_for",
    "is_eligible",
    "is_legal",
    "legal_moves",
    "loads",
    "meld_json",
    "move_from_json",
    "move_to_json",
    "new_game",
    "parse_card",
    "parse_cards",
    "pending_claimants",
    "play",
    "player_view",
    "read_meld",
    "register_variant",
    "seat_returns",
    "standings",
    "start_game",
    "status",
    "timeout_discard",
    "to_act",
    "to_json",
]
