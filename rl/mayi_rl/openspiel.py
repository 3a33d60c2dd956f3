"""May I and Shanghai as OpenSpiel Python games: ``python_may_i`` and ``python_shanghai``.

Importing this module registers both::

    import pyspiel
    import mayi_rl.openspiel  # noqa: F401  (registers the games)
    game = pyspiel.load_game("python_shanghai(players=5)")

Parameters: ``players`` (default 4) and ``rounds`` (play only the first rounds; default
all). Imperfect information with explicit chance nodes: each card of a deal (hand by
hand, card by card, then the upcard) and each card that comes off the stock is one
chance outcome (a card index 0..52, :func:`mayi_rl.encoding.card_index`; the stock is a
multiset, never an order, so no hidden order needs sampling). A rebuilt stock (the
discard pile turned over) is that pile's cards. The players' actions are the fixed
action space of :mod:`mayi_rl.encoding`; the claim window's answers come one seat after
the other, as in the PettingZoo environments. Returns come at the end: each seat's
rewards of :mod:`mayi_rl.rewards` added up (zero-sum).

Information states: the string is the player's record of the game (earlier rounds'
scores; this round's public actions and its own cards dealt and drawn); the tensor is
the observation tensor and this round's public record as counts (cards each seat
discarded, cards each seat took from the pile). Observations: the string and tensor of
:mod:`mayi_rl.encoding` (what the seat's view shows). ``resample_from_infostate`` deals
the cards the player cannot see anew (the other hands, keeping the cards each is known to
hold from the pile; the stock), so that OpenSpiel's ISMCTS bot can search.

This module gathers the games' API: the games (:mod:`mayi_rl.openspiel_game`), their
state (:mod:`mayi_rl.openspiel_state`, its chance outcomes in
:mod:`mayi_rl.openspiel_chance`), the observer (:mod:`mayi_rl.openspiel_observer`) and
the players and evaluator that play them (:mod:`mayi_rl.openspiel_play`).
"""

from __future__ import annotations

from .cards import card_index
from .openspiel_game import MayIGame, ShanghaiGame
from .openspiel_observer import Observer
from .openspiel_play import HandEvaluator, Player, play_game, reference_player, spiel_player
from .openspiel_state import MayIState

__all__ = [
    "HandEvaluator",
    "MayIGame",
    "MayIState",
    "Observer",
    "Player",
    "ShanghaiGame",
    "card_index",
    "play_game",
    "reference_player",
    "spiel_player",
]
