"""The simulation summary behind ``mayi simulate``: counts are whole numbers."""

from __future__ import annotations

import json

from mayi_bots import policy_makers
from mayi_engine.rules import MAY_I
from mayi_engine.simulate import Summary, simulate


def test_wins_are_whole_numbers_and_a_shared_win_is_a_win_for_each_seat():
    summary = Summary("may_i", 3, ["greedy", "greedy", "random"], score_sum=[0] * 3, wins=[0] * 3, shared_wins=[0] * 3)
    summary.games = 3
    summary.add_totals((40, 10, 90))
    summary.add_totals((25, 25, 60))  # seats 0 and 1 share the lowest total
    summary.add_totals((5, 30, 5))
    data = summary.as_dict()
    bots = data["bots"]
    assert [b["wins"] for b in bots.values()] == [2, 2, 1]
    assert [b["shared_wins"] for b in bots.values()] == [2, 1, 1]
    assert data["shared_games"] == 2
    assert all(type(b["wins"]) is int and type(b["shared_wins"]) is int for b in bots.values())
    assert '"wins": 2,' in json.dumps(data)  # never 2.0


def test_a_simulated_run_counts_every_game_once_less_the_shared_extras():
    summary = simulate(MAY_I, ["greedy", "greedy", "random", "random"], games=3, seed=1, players=policy_makers())
    data = summary.as_dict()
    wins = [b["wins"] for b in data["bots"].values()]
    shared = [b["shared_wins"] for b in data["bots"].values()]
    assert all(type(w) is int for w in wins + shared)
    # Each game has one sole winner, or two or more seats sharing it.
    assert sum(w - s for w, s in zip(wins, shared, strict=True)) + data["shared_games"] == data["games"] == 3
