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
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
import pyspiel

from mayi_engine import Move, State, card_code, new_game, play
from mayi_engine.cards import build_decks
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
from mayi_engine.rng import KeyedRandom
from mayi_engine.state import FINISHED_PHASE

from .encoding import CARDS, Layout, card_index, index_card, layout, table_rules
from .rewards import place_rewards, round_rewards, utility_bound

__all__ = [
    "HandEvaluator",
    "MayIGame",
    "MayIState",
    "ShanghaiGame",
    "card_index",
    "play_game",
    "reference_player",
    "spiel_player",
]

#: The seed of every engine state here: the engine shuffles nothing that matters (every
#: card dealt or drawn is a chance outcome), so the seed is fixed and public.
_SEED = bytes(32)
_DEFAULT_PLAYERS = 4


def _game_type(variant: str) -> pyspiel.GameType:
    rules = table_rules(variant)
    return pyspiel.GameType(
        short_name=f"python_{variant}",
        long_name=f"Python {rules.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=rules.max_players,
        min_num_players=rules.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={"players": _DEFAULT_PLAYERS, "rounds": len(rules.rounds)},
    )


class MayIGame(pyspiel.Game):  # type: ignore[misc]
    """One variant's game; ``params``: ``players``, ``rounds``."""

    variant = "may_i"

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        game_type = _GAME_TYPES[self.variant]
        given = dict(params or {})
        players = int(given.get("players", _DEFAULT_PLAYERS))
        rules = table_rules(self.variant, None, int(given.get("rounds", len(table_rules(self.variant).rounds))))
        if not rules.min_players <= players <= rules.max_players:
            raise ValueError(f"players: {rules.title} is for {rules.min_players} to {rules.max_players}, not {players}")
        self.rules = rules
        self.lay: Layout = layout(rules, players)
        #: The first round's engine state before its deal (cards dealt by chance replace the engine's).
        self.initial = new_game(rules, [f"p{i}" for i in range(players)], _SEED)
        decks = rules.decks_for(players)
        most = decks * sum(rules.card_score(c) for c in build_decks(1))
        bound = utility_bound(most, len(rules.rounds), players)
        info = pyspiel.GameInfo(
            num_distinct_actions=self.lay.actions,
            max_chance_outcomes=CARDS,
            num_players=players,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            # Each turn: the claim answers, a draw, melds (one card each at most) and a discard.
            max_game_length=len(rules.rounds) * rules.max_turns * (players + 3 + 3 * rules.rounds[-1].deal),
        )
        super().__init__(game_type, info, {"players": players, "rounds": len(rules.rounds)})

    def new_initial_state(self) -> MayIState:
        return MayIState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Observer:
        perfect = iig_obs_type is not None and iig_obs_type.perfect_recall
        return Observer(self.lay, perfect)


class ShanghaiGame(MayIGame):
    variant = "shanghai"


class _Deal:
    """A deal in progress: the cards still to deal (counts by index) and where each goes."""

    __slots__ = ("bury", "hands", "pool", "targets")

    def __init__(self, decks: int, players: int, first: int, cards: int, bury: bool) -> None:
        self.pool = [0] * CARDS
        for c in build_decks(decks):
            self.pool[card_index(c)] += 1
        self.targets = [(first + k) % players for _ in range(cards) for k in range(players)] + [-1]
        self.hands: list[list[int]] = [[] for _ in range(players)]
        self.bury = bury

    def copy(self) -> _Deal:
        new = _Deal.__new__(_Deal)
        new.pool, new.targets, new.hands, new.bury = self.pool, self.targets, self.hands, self.bury
        return new


class _Data:
    """A state's data. Every field is replaced, never changed in place, so a copy of the
    state (OpenSpiel clones by ``copy.deepcopy``) shares them all: a shallow copy."""

    engine: State
    logs: list[tuple[str, ...]]
    history_of_rounds: str
    known: list[list[int]]
    discarded: list[list[int]]
    taken: list[list[int]]
    deal: _Deal | None
    pending: tuple[int, Move, list[tuple[list[int], int]], list[int], int] | None
    legal: dict[int, Move] | None

    def __deepcopy__(self, memo: dict[int, Any]) -> _Data:
        new = _Data()
        new.__dict__.update(self.__dict__)
        return new


@lru_cache(maxsize=256)
def _new_deal(decks: int, players: int, first: int, cards: int, bury: bool) -> _Deal:
    """A deal about to start (shared: a deal in progress is copied before each card)."""
    return _Deal(decks, players, first, cards, bury)


class MayIState(pyspiel.State):  # type: ignore[misc]
    """A game in progress: an engine state, and the chance outcomes it waits for."""

    def __init__(self, game: MayIGame) -> None:
        super().__init__(game)
        self.lay = game.lay
        self.players = game.lay.players
        self.d = _Data()
        self.d.engine = game.initial
        #: The seat's record of this round (see the module's note), and earlier rounds' scores.
        self.d.logs: list[tuple[str, ...]] = [()] * self.players
        self.d.history_of_rounds = ""
        #: Cards each seat is known to hold (taken from the pile, not played since), by index.
        self.d.known: list[list[int]] = [[0] * CARDS for _ in range(self.players)]
        #: This round's public record: cards each seat discarded, cards each took from the pile.
        self.d.discarded: list[list[int]] = [[0] * CARDS for _ in range(self.players)]
        self.d.taken: list[list[int]] = [[0] * CARDS for _ in range(self.players)]
        self.d.deal: _Deal | None = None
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

    def _legal_map(self) -> dict[int, Move]:
        if self.d.legal is None:
            self.d.legal = self.lay.legal_actions(self.d.engine, _next_seat(self.d.engine))
        return self.d.legal

    def _legal_actions(self, player: int) -> list[int]:
        if player != self.current_player():
            return []
        return sorted(self._legal_map())

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
            move = self._legal_map()[action]
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
        self.d.deal = _new_deal(
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
            stock = _counts(state.stock)
            pools: list[tuple[list[int], int]] = [(stock, 0)] * before
            turned = 0
            if cut < len(events):
                rebuilt = events[cut]
                assert isinstance(rebuilt, StockRebuilt)
                turned = rebuilt.cards  # the pile but its top at the rebuild: its bottom cards now
                pools += [(_counts(state.discard[:turned]), 1)] * (len(draws) - before)
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
        state = self._arranged(self.d.engine, picks, [seg for _, seg in pools], turned)
        after, events = play(state, seat, move)
        drawn = [card_index(e.card) for e in events if type(e) is Drew]
        assert drawn == picks, (drawn, picks)
        self._commit(state, after, events)

    def _arranged(self, state: State, picks: list[int], segments: list[int], length: int) -> State:
        """``state`` with its stock (and the pile a rebuild turns over) ordered so that the
        engine draws ``picks`` (the stock's first, then the rebuilt stock's)."""
        s = state.clone()
        first = [index_card(k) for k, seg in zip(picks, segments, strict=True) if seg == 0]
        later = [index_card(k) for k, seg in zip(picks, segments, strict=True) if seg == 1]
        rest = list(s.stock)
        for c in first:
            rest.remove(c)
        s.stock = tuple(rest + first[::-1])  # the top card is the last
        if later:
            # Cards after the rebuild: order the pile's cards under its top so that the engine's
            # shuffle of the rebuild puts them on top of the new stock.
            order = list(range(length))
            KeyedRandom(s.seed, f"rebuild/{s.round}/{s.reshuffles + 1}").shuffle(order)
            cards = list(s.discard[:length])
            for c in later:
                cards.remove(c)
            placed: list[int | None] = [None] * length
            for j, c in enumerate(later):
                placed[order[length - 1 - j]] = c
            it = iter(cards)
            s.discard = tuple(c if c is not None else next(it) for c in placed) + s.discard[length:]
        return s

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


def _counts(cards: tuple[int, ...]) -> list[int]:
    out = [0] * CARDS
    idx = _IDX
    for c in cards:
        out[idx[c]] += 1
    return out


_IDX = [card_index(c) if c == 0 or c >= 4 else 0 for c in range(56)]


def _public(event: Event) -> str:
    data = event.data()
    return f"{event.type} {'' if event.seat is None else event.seat} {data}"


def _next_seat(state: State) -> int:
    from mayi_engine.simulate import next_seat

    return next_seat(state)


class Observer:
    """OpenSpiel's observer of a seat: the observation (``perfect_recall`` false) or the
    information state (true) as a ``tensor`` (with named views in ``dict``) and a string."""

    def __init__(self, lay: Layout, perfect_recall: bool) -> None:
        self.lay = lay
        self.perfect_recall = perfect_recall
        n = lay.players
        size = lay.size + (2 * n * CARDS if perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self.dict = lay.split(self.tensor[: lay.size])
        if perfect_recall:
            self.dict["discarded"] = self.tensor[lay.size : lay.size + n * CARDS].reshape(n, CARDS)
            self.dict["taken"] = self.tensor[lay.size + n * CARDS :].reshape(n, CARDS)

    def set_from(self, state: MayIState, player: int) -> None:
        lay = self.lay
        self.tensor[: lay.size] = lay.observe(_shown(state, player), player)
        if self.perfect_recall:
            n = lay.players
            for k in range(n):
                other = (player + k) % n
                self.dict["discarded"][k] = state.d.discarded[other]
                self.dict["taken"][k] = state.d.taken[other]

    def string_from(self, state: MayIState, player: int) -> str:
        if self.perfect_recall:
            return f"seat {player}\n" + "\n".join(state.d.logs[player])
        s = _shown(state, player)
        upcard = s.upcard
        melds = "; ".join(f"{m.owner}:{m.describe()}" for m in s.melds)
        counts = " ".join(str(len(h)) for h in s.hands)
        return (
            f"seat {player} round {s.round} phase {s.phase.value} turn {s.turn} actor {s.actor} "
            f"hand {' '.join(card_code(c) for c in s.hands[player])} "
            f"upcard {card_code(upcard) if upcard is not None else '-'} "
            f"pile {len(s.discard)} stock {len(s.stock)} counts {counts} melds [{melds}] "
            f"down {''.join('1' if d else '0' for d in s.down)} totals {' '.join(map(str, s.totals))}"
        )


def _shown(state: MayIState, player: int) -> State:
    """The engine state to observe: during a deal, the cards dealt so far (none on the table)."""
    deal = state.d.deal
    if deal is None:
        return state.d.engine
    s = state.d.engine.clone()
    s.hands = tuple(tuple(sorted(index_card(k) for k in h)) for h in deal.hands)
    s.discard = ()
    s.stock = ()
    s.melds = ()
    return s


_GAME_TYPES = {variant: _game_type(variant) for variant in ("may_i", "shanghai")}

pyspiel.register_game(_GAME_TYPES["may_i"], MayIGame)
pyspiel.register_game(_GAME_TYPES["shanghai"], ShanghaiGame)


# ---------------------------------------------------------------------------
# Playing: OpenSpiel's bots and the reference bots at one table

#: A player of these games: chooses an action for the seat to act in a state.
Player = Callable[[MayIState], int]


class HandEvaluator:
    """A leaf evaluator for OpenSpiel's MCTS and ISMCTS bots: the returns as if the round (and
    the game) ended now, every hand scored; uniform priors. Cheap: no rollout."""

    def evaluate(self, state: MayIState) -> np.ndarray:
        if state.is_terminal():
            return np.array(state.returns())
        s = state.d.engine
        rules = state.rules
        points = [rules.hand_score(h) for h in s.hands]
        values = np.array(round_rewards(points))
        for result in s.results:
            values += round_rewards(result.scores)
        values += place_rewards([t + p for t, p in zip(s.totals, points, strict=True)])
        return values

    def prior(self, state: MayIState) -> list[tuple[int, float]]:
        actions = state.legal_actions()
        return [(a, 1.0 / len(actions)) for a in actions]


def reference_player(bot: Any, seed: int = 0) -> Player:
    """A reference bot of ``mayi_bots`` (by name: ``"strong"``, ``"greedy"``...), or any SDK
    ``Bot``, as a player: it sees the seat's view, as on a server."""
    from mayi_sdk.local import bot_policy

    if isinstance(bot, str):
        from mayi_bots import make

        bot = make(bot, seed=seed)
    policy = bot_policy(bot)

    def choose(state: MayIState) -> int:
        seat = state.current_player()
        legal = state._legal_map()
        move = policy(state.d.engine, seat, tuple(legal.values()), None)
        return state.lay.encode(state.d.engine, seat, move)

    return choose


def spiel_player(bot: Any) -> Player:
    """An OpenSpiel bot (``pyspiel.Bot``: ISMCTS, MCTS, uniform random...) as a player."""
    return lambda state: int(bot.step(state))


def play_game(game: MayIGame, players: list[Player], seed: int = 0) -> MayIState:
    """One game, each seat played by its player, chance outcomes drawn with ``seed``: the final state."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(players[state.current_player()](state))
    return state
