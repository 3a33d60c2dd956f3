"""Play complete games in-process with policies, checking invariants.

The players are policies given by name: the engine's own ``random`` driver by default,
or any others in ``players`` (``mayi simulate`` passes the reference bots of
``mayi_bots``, each seat's bot fresh for every game).

>>> from .rules import MAY_I
>>> summary = simulate(MAY_I, ["random", "random", "random"], games=1, seed=7)
>>> summary.games, summary.violations
(1, 0)
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .cards import build_decks, counts_of
from .claims import pending_claimants, to_act
from .errors import ConfigError
from .game import play
from .legal import legal_moves
from .policies import POLICIES, Policy, PolicyMaker
from .rng import KeyedRandom, new_seed
from .rounds import new_game
from .rules import Rules
from .state import FINISHED_PHASE, State


def invariant_violations(state: State) -> list[str]:
    """What is wrong with ``state``: every physical card in exactly one place, and
    exactly the right seats able to act."""
    problems = []
    placed = [c for h in state.hands for c in h] + list(state.stock) + list(state.discard)
    placed += [c for m in state.melds for c in m.cards]
    if state.phase is not FINISHED_PHASE and counts_of(placed) != counts_of(
        build_decks(state.rules.decks_for(state.players))
    ):
        problems.append(f"round {state.round}: the cards in play are not exactly the decks")
    if state.phase is not FINISHED_PHASE:
        may_act = {seat for seat in range(state.players) if legal_moves(state, seat)}
        expected = {state.actor} | set(pending_claimants(state))
        if may_act != expected:
            problems.append(f"round {state.round}: seats {sorted(may_act)} may act, expected {sorted(expected)}")
    return problems


def next_seat(state: State) -> int:
    """Who acts next in a simulation: the first seat of :func:`~mayi_engine.claims.to_act`
    (the actor once the game is over)."""
    seats = to_act(state)
    return seats[0] if seats else state.actor


@dataclass
class Summary:
    variant: str
    players: int
    bots: list[str]
    games: int = 0
    rounds: int = 0
    actions: int = 0
    seconds: float = 0.0
    safeguard_rounds: int = 0
    violations: int = 0
    violation_examples: list[str] = field(default_factory=list)
    score_sum: list[int] = field(default_factory=list)
    #: Games each seat won: the lowest total, alone or shared.
    wins: list[int] = field(default_factory=list)
    #: Of those, the games whose lowest total another seat shared.
    shared_wins: list[int] = field(default_factory=list)
    #: Games whose lowest total was shared by two seats or more.
    shared_games: int = 0

    def add_totals(self, totals: Sequence[int]) -> None:
        """Count one game's final totals: the lowest total wins, a shared lowest total
        is a win for each seat that has it (and counted in ``shared_wins``)."""
        best = min(totals)
        winners = [i for i, t in enumerate(totals) if t == best]
        shared = len(winners) > 1
        self.shared_games += shared
        for i, total in enumerate(totals):
            self.score_sum[i] += total
            if i in winners:
                self.wins[i] += 1
                self.shared_wins[i] += shared

    def as_dict(self) -> dict[str, Any]:
        seconds = self.seconds or 1e-9
        per_bot: dict[str, dict[str, Any]] = {}
        for seat, name in enumerate(self.bots):
            key = f"{seat}:{name}"
            per_bot[key] = {
                "mean_score": self.score_sum[seat] / self.games if self.games else 0.0,
                "wins": self.wins[seat],
                "shared_wins": self.shared_wins[seat],
            }
        return {
            "variant": self.variant,
            "players": self.players,
            "games": self.games,
            "shared_games": self.shared_games,
            "rounds": self.rounds,
            "actions": self.actions,
            "seconds": round(self.seconds, 3),
            "actions_per_second": round(self.actions / seconds, 1),
            "games_per_second": round(self.games / seconds, 3),
            "safeguard_rounds": self.safeguard_rounds,
            "invariant_violations": self.violations,
            "violation_examples": self.violation_examples[:5],
            "bots": per_bot,
        }


def game_seed(seed: int | None, game: int) -> bytes:
    """The seed of game ``game`` in a run: derived from ``seed``, or fresh and secret."""
    if seed is None:
        return new_seed()
    return hashlib.blake2b(f"simulate/{seed}/{game}".encode(), digest_size=32).digest()


def builtin_players() -> dict[str, PolicyMaker]:
    """The engine's own policies as makers (the same stateless function for every seat)."""
    return {name: _always(policy) for name, policy in POLICIES.items()}


def _always(policy: Policy) -> PolicyMaker:
    def make(seed: bytes, seat: int) -> Policy:
        return policy

    return make


def play_game(
    rules: Rules,
    bots: Sequence[str],
    seed: bytes,
    *,
    check: bool = True,
    players: Mapping[str, PolicyMaker] | None = None,
) -> tuple[State, int, list[str]]:
    """Play one game to the end: the final state, the number of actions, and any violations.

    ``players`` makes each seat's policy by its name in ``bots`` (default: the engine's own).
    """
    makers = builtin_players() if players is None else players
    policies = [makers[b](seed, seat) for seat, b in enumerate(bots)]
    rng = KeyedRandom(seed, "policies")
    state = new_game(rules, [f"{b}{i}" for i, b in enumerate(bots)], seed)
    actions = 0
    problems: list[str] = []
    while state.phase is not FINISHED_PHASE:
        seat = next_seat(state)
        legal = legal_moves(state, seat)
        if not legal:
            problems.append(f"round {state.round}: seat {seat} must act but has no legal move")
            break
        move = policies[seat](state, seat, legal, rng)
        state, _ = play(state, seat, move)
        actions += 1
        if check:
            problems.extend(invariant_violations(state))
    return state, actions, problems


def simulate(
    rules: Rules,
    bots: Sequence[str],
    games: int,
    seed: int | None = None,
    *,
    check: bool = True,
    progress: Callable[[int], None] | None = None,
    players: Mapping[str, PolicyMaker] | None = None,
) -> Summary:
    """Play ``games`` games; ``progress`` is called after each with the number done.
    ``players`` makes the policies named in ``bots`` (default: the engine's own).

    The engine never reads the clock: the caller times the run and sets ``seconds``.
    """
    makers = builtin_players() if players is None else players
    unknown = [b for b in bots if b not in makers]
    if unknown:
        raise ConfigError("validation_error", f"unknown bot {unknown[0]!r} (known: {', '.join(makers)})")
    n = len(bots)
    summary = Summary(rules.name, n, list(bots), score_sum=[0] * n, wins=[0] * n, shared_wins=[0] * n)
    for g in range(games):
        state, actions, problems = play_game(rules, bots, game_seed(seed, g), check=check, players=makers)
        summary.games += 1
        summary.actions += actions
        summary.rounds += len(state.results)
        summary.safeguard_rounds += sum(1 for r in state.results if r.out < 0)
        summary.violations += len(problems)
        summary.violation_examples.extend(problems[:2])
        summary.add_totals(state.totals)
        if progress is not None:
            progress(g + 1)
    return summary
