"""The names of the service's Redis keys of games and of the cross-game indexes (the layout
is in :mod:`mayi_service.storage.repository`)."""

from __future__ import annotations

import zlib

import redis

from mayi_engine import GameStatus

#: Shards of each cross-game index on a Redis Cluster (see :mod:`mayi_service.storage.repository`).
INDEX_SHARDS = 16


class Keys:
    """Key names under one prefix, and the retention of a game's keys."""

    r: redis.Redis
    prefix: str
    #: Shards of each cross-game index (1: the ``{index}`` keys of a single Redis).
    index_shards: int
    #: Retention, in seconds (0: kept for ever): a table waiting for players, a finished game.
    waiting_ttl: int
    finished_ttl: int

    def game_key(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:game"

    def events_key(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:events"

    def tokens_key(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:tokens"

    def archive_key(self, game_id: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:archive"

    def idem_key(self, game_id: str, digest: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:idem:{digest}"

    def index_key(self, name: str, shard: int = 0) -> str:
        """The key of shard ``shard`` of the cross-game index ``name``."""
        if self.index_shards == 1:
            return f"{self.prefix}:{{index}}:{name}"
        return f"{self.prefix}:{{index:{shard}}}:{name}"

    def shard(self, game_id: str) -> int:
        """The index shard that holds ``game_id``'s entries."""
        return 0 if self.index_shards == 1 else zlib.crc32(game_id.encode()) % self.index_shards

    def index_keys(self, name: str) -> list[str]:
        """Every shard of the index ``name``."""
        return [self.index_key(name, n) for n in range(self.index_shards)]

    def lookup_key(self, kind: str, item: str) -> str:
        """The key of one client's or token's ``kind`` of entry: under the ``{index}`` tag on a
        single Redis; under its own tag on a cluster, so that these keys spread over the nodes."""
        if self.index_shards == 1:
            return f"{self.prefix}:{{index}}:{kind}:{item}"
        return f"{self.prefix}:{{{kind}:{item}}}"

    def ttl_for(self, status: str) -> int:
        """How long the keys of a game in ``status`` are kept after its last change (0: for ever).
        A game in play is kept until it ends: its clock plays it out."""
        return {GameStatus.WAITING: self.waiting_ttl, GameStatus.FINISHED: self.finished_ttl}.get(status, 0)
