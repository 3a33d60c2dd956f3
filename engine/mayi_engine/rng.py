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
import struct
from typing import TypeVar

T = TypeVar("T")

SEED_BYTES = 32


def new_seed() -> bytes:
    """A fresh secret seed (256 bits from :mod:`secrets`)."""
    return secrets.token_bytes(SEED_BYTES)


class KeyedRandom:
    """A stream of uniform integers from ``BLAKE2b(key=seed, label, counter)``."""

    __slots__ = ("_counter", "_key", "_label", "_values")

    def __init__(self, seed: bytes, label: str) -> None:
        self._key = hashlib.blake2b(seed, digest_size=32).digest() if len(seed) > 64 else seed
        self._label = label.encode()
        self._counter = 0
        #: The 64-bit values of the current block not used yet, the next one last.
        self._values: list[int] = []

    def _refill(self) -> list[int]:
        block = hashlib.blake2b(self._label + self._counter.to_bytes(8, "big"), key=self._key, digest_size=64).digest()
        self._counter += 1
        # The block read as one big-endian number, used from its low 64 bits up: its last
        # 8 bytes first, so the list (popped from its end) keeps the big-endian order.
        self._values = values = list(_EIGHT_WORDS(block))
        return values

    def _bits64(self) -> int:
        values = self._values or self._refill()
        return values.pop()

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (rejection sampling, no modulo bias)."""
        limit = _LIMITS.get(n)
        if limit is None:
            if n <= 0:
                raise ValueError("n must be positive")
            limit = (1 << 64) - ((1 << 64) % n)
            if n < 4096:
                _LIMITS[n] = limit
        values = self._values
        while True:
            if not values:
                values = self._refill()
            value = values.pop()
            if value < limit:
                return value % n

    def shuffle(self, items: list[T]) -> None:
        """Shuffle ``items`` in place."""
        below = self.below
        for i in range(len(items) - 1, 0, -1):
            j = below(i + 1)
            items[i], items[j] = items[j], items[i]

    def choice(self, items: list[T] | tuple[T, ...]) -> T:
        return items[self.below(len(items))]


_EIGHT_WORDS = struct.Struct(">8Q").unpack
#: The rejection limit of :meth:`KeyedRandom.below` for each small ``n`` met.
_LIMITS: dict[int, int] = {}
