"""``random``: uniform over the legal moves (the floor every other bot must beat)."""

from __future__ import annotations

import random
import secrets

from mayi_sdk import Bot, GameView, LegalMove


class RandomBot(Bot):
    """Picks uniformly among ``view.legal``; ``seed`` makes its choices reproducible."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(secrets.randbits(64) if seed is None else seed)

    def decide(self, view: GameView) -> LegalMove:
        return self._rng.choice(view.legal)


if __name__ == "__main__":
    import sys

    from mayi_bots.cli import main

    sys.exit(main("random"))
