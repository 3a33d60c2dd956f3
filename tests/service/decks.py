"""Stacked decks and table options the play tests share."""

from __future__ import annotations

SEED = "5eed" * 8  # 16 bytes as hex


BIG_CLOCKS = {"claim_seconds": 3600, "turn_seconds": 3600}


def stack(hands: list[list[str]], upcard: str, stock: list[str], first: int = 0) -> list[str]:
    """The top of a stacked deck that deals ``hands`` (by seat), then ``upcard``, then ``stock``."""
    n = len(hands)
    size = len(hands[0])
    assert all(len(h) == size for h in hands)
    order = [hands[(first + k) % n][i] for i in range(size) for k in range(n)]
    return [*order, upcard, *stock]


# May I, 3 seats, round 7 (3 runs, all cards): seat 0 first, holding three runs.
MAYI_FINAL_HANDS = [
    ["3C", "4C", "5C", "6C", "8D", "9D", "TD", "JD", "2H", "3H", "4H", "5H"],
    ["AS", "2S", "3S", "7S", "8S", "9S", "JS", "QS", "KS", "7H", "8H", "9H"],
    ["2C", "2D", "5S", "6S", "6D", "7D", "KC", "QC", "JC", "KH", "QH", "JH"],
]


MAYI_FINAL_DECK = stack(MAYI_FINAL_HANDS, "KD", ["AD", "AH"])
