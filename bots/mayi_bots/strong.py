"""placeholder"""

from __future__ import annotations

from .greedy import GreedyBot


class StrongBot(GreedyBot):
    name = "strong"
