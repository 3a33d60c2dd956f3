"""Golden games: two seeded whole games whose every move and final state are pinned.

Each file in ``tests/engine/golden/`` holds one game played by the built-in
policies from a fixed seed (four seats: greedy, greedy, random, random): the
full move list as the API writes moves (``[seat, move]`` with
``moves.move_to_json``), the round results, the final totals and the SHA-256 of
the final state's JSON (``state.dumps``). The tests

* replay the stored moves through ``play`` from ``new_game`` with the same seed,
  each one listed by ``legal_moves``, and reach the same results, totals and
  state hash (replays of stored games keep working);
* play the game again from the policies and get the same move list (the engine
  and the policies are deterministic for a seed).

A failure means the engine's behaviour changed: the deal, a rule, a legal-move
list, a policy, or the state's JSON. If the change is deliberate, regenerate the
files and commit them with the change::

    python tests/engine/test_golden.py --regenerate
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from players import POLICIES

from mayi_engine import legal_moves, new_game, play
from mayi_engine.moves import move_from_json, move_to_json
from mayi_engine.rng import KeyedRandom
from mayi_engine.rules import get_rules
from mayi_engine.simulate import invariant_violations, next_seat
from mayi_engine.state import Phase, State, dumps

GOLDEN = Path(__file__).parent / "golden"
BOTS = ("greedy", "greedy", "random", "random")
SEEDS = {"may_i": bytes(range(32)), "shanghai": bytes(range(32, 64))}
#: A bound on the moves of one game, so that a game that no longer ends fails fast.
MAX_MOVES = 40_000


def path_of(variant: str) -> Path:
    return GOLDEN / f"{variant}_seed.json"


def names() -> list[str]:
    return [f"{bot}{i}" for i, bot in enumerate(BOTS)]


def state_hash(state: State) -> str:
    return hashlib.sha256(dumps(state).encode()).hexdigest()


def record(variant: str) -> dict[str, Any]:
    """Play the golden game of ``variant`` from the policies: the golden record."""
    seed = SEEDS[variant]
    state = new_game(get_rules(variant), names(), seed)
    rng = KeyedRandom(seed, "policies")
    moves: list[list[Any]] = []
    while state.phase is not Phase.FINISHED:
        assert len(moves) < MAX_MOVES, f"the golden {variant} game did not end in {MAX_MOVES} moves"
        seat = next_seat(state)
        move = POLICIES[BOTS[seat]](state, seat, legal_moves(state, seat), rng)
        moves.append([seat, move_to_json(move)])
        state, _ = play(state, seat, move)
    return {
        "variant": variant,
        "seed": seed.hex(),
        "bots": list(BOTS),
        "names": names(),
        "actions": len(moves),
        "results": [[r.round, r.out, list(r.scores)] for r in state.results],
        "totals": list(state.totals),
        "state_sha256": state_hash(state),
        "moves": moves,
    }


def write(data: dict[str, Any], path: Path) -> None:
    """The record as JSON, one field and one move a line (small diffs, readable)."""
    fields = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in data.items() if k != "moves"]
    moves = ",\n".join("    " + json.dumps(m, separators=(",", ":")) for m in data["moves"])
    path.write_text("{\n" + "\n".join(fields) + f'\n  "moves": [\n{moves}\n  ]\n}}\n')


def load(variant: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path_of(variant).read_text())
    return data


@pytest.mark.parametrize("variant", sorted(SEEDS))
def test_stored_moves_replay_to_the_same_end(variant: str) -> None:
    golden = load(variant)
    assert golden["seed"] == SEEDS[variant].hex() and golden["bots"] == list(BOTS)
    state = new_game(get_rules(variant), golden["names"], bytes.fromhex(golden["seed"]))
    for i, (seat, data) in enumerate(golden["moves"]):
        move = move_from_json(data)
        assert move_to_json(move) == data
        assert move in legal_moves(state, seat), f"move {i} ({data}) of seat {seat} is not listed"
        state, _ = play(state, seat, move)
        if i % 97 == 0:
            assert invariant_violations(state) == []
    assert state.phase is Phase.FINISHED
    assert len(golden["moves"]) == golden["actions"]
    assert [[r.round, r.out, list(r.scores)] for r in state.results] == golden["results"]
    assert list(state.totals) == golden["totals"]
    assert state_hash(state) == golden["state_sha256"]


@pytest.mark.parametrize("variant", sorted(SEEDS))
def test_the_policies_play_the_same_game_again(variant: str) -> None:
    golden = load(variant)
    again = record(variant)
    for i, (old, new) in enumerate(zip(golden["moves"], again["moves"], strict=False)):
        assert old == new, f"move {i} differs: stored {old}, played now {new}"
    assert again == golden


def test_the_golden_games_are_real_games() -> None:
    """Someone goes out in most rounds, and both seats of each policy act."""
    for variant in SEEDS:
        golden = load(variant)
        assert len(golden["results"]) == len(get_rules(variant).rounds)
        assert sum(1 for _, out, _ in golden["results"] if out >= 0) >= 2
        assert {seat for seat, _ in golden["moves"]} == set(range(len(BOTS)))
        kinds = {m["type"] for _, m in golden["moves"]}
        assert {"draw", "claim", "discard", "go_down", "lay_off"} <= kinds


def regenerate() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for variant in sorted(SEEDS):
        data = record(variant)
        write(data, path_of(variant))
        print(f"{path_of(variant)}: {data['actions']} moves, totals {data['totals']}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit(__doc__)
    regenerate()
