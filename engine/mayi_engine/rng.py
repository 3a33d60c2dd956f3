"""Keyed deterministic randomness for shuffles.

Every shuffle is a Fisher-Yates shuffle driven by BLAKE2b keyed with the game's
secret seed and labelled with what is being shuffled (round, rebuild). The same
seed always gives the same shuffles, so a game replays exactly; without the seed
nothing can be predicted, and the seed itself comes from :mod:`secrets`, never
from the clock. The engine never uses the global :mod:`random` generator.

>>> a = KeyedRandom(bytes(32), "round-1")
>>> b = KeyedRandom(bytes(32), "round-1")
>>> [a.below(10) for _ in range(5)] == [b.below(10) for _ in range(5)]
True
"""

from __future__ import annotations

import hashlib
import secrets
from typing import TypeVar

T = TypeVar("T")

SEED_BYTES = 32


def new_seed() -> bytes:
    """A fresh secret seed (256 bits from :mod:`secrets`)."""
    return secrets.token_bytes(SEED_BYTES)


class KeyedRandom:
    """A stream of uniform integers from ``BLAKE2b(key=seed, label, counter)``."""

    __slots__ = ("_counter", "_key", "_label", "_left", "_pool")

    def __init__(self, seed: bytes, label: str) -> None:
        self._key = hashlib.blake2b(seed, digest_size=32).digest() if len(seed) > 64 else seed
        self._label = label.encode()
        self._counter = 0
        self._pool = 0
        self._left = 0

    def _bits64(self) -> int:
        if self._left == 0:
            block = hashlib.blake2b(
                self._label + self._counter.to_bytes(8, "big"), key=self._key, digest_size=64
            ).digest()
            self._counter += 1
            self._pool = int.from_bytes(block, "big")
            self._left = 8
        self._left -= 1
        value = self._pool & 0xFFFFFFFFFFFFFFFF
        self._pool >>= 64
        return value

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (rejection sampling, no modulo bias)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            value = self._bits64()
            if value < limit:
                return value % n

    def shuffle(self, items: list[T]) -> None:
        """Shuffle ``items`` in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def choice(self, items: list[T] | tuple[T, ...]) -> T:
        return items[self.below(len(items))]
