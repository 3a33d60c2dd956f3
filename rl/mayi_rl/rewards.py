"""The rewards of both environments: at each round's end and at the game's end.

Every reward is zero-sum over the seats (a table's rewards add up to 0):

* at a round's end, each seat gets ``(mean round score - its round score) / SCORE_SCALE``
  (scores are points left in hand: fewer is better);
* at the game's end, each seat also gets its place term,
  ``(seats with a higher total - seats with a lower total) / (players - 1)``, from 1
  (alone in first place) to -1 (alone in last place).

A game's rewards add up to ``(mean total - own total) / SCORE_SCALE`` plus the place term.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Points that make one unit of reward.
SCORE_SCALE = 100.0


def round_rewards(scores: Sequence[int]) -> list[float]:
    """Each seat's reward for a round that ended with these ``scores`` (points, by seat)."""
    mean = sum(scores) / len(scores)
    return [(mean - x) / SCORE_SCALE for x in scores]


def place_rewards(totals: Sequence[int]) -> list[float]:
    """Each seat's reward at the game's end, from its final total (lower is better)."""
    n = len(totals)
    return [(sum(1 for t in totals if t > mine) - sum(1 for t in totals if t < mine)) / (n - 1) for mine in totals]


def utility_bound(round_points: int, rounds: int, players: int) -> float:
    """The largest absolute sum of a seat's rewards over a game, when a round can score at
    most ``round_points`` for one seat."""
    return rounds * round_points * (players - 1) / players / SCORE_SCALE + 1.0
