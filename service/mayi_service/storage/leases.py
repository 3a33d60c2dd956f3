"""Waiting slots held as leases: one sorted set per client (one key, so one slot on a cluster)
of lease id -> expiry, in milliseconds of Redis' own clock (``lease.lua``). A holder renews
its lease while it waits and drops it when it ends; one that cannot (its process died, Redis
was down at its end) leaves a lease that expires on its own."""

from __future__ import annotations

import redis

from mayi_service.storage.connections import Scripts
from mayi_service.storage.lua import source


def lease_script(name: str) -> str:
    """The text of the script ``<name>.lua`` over the lease functions (``lease.lua``)."""
    return source("lease") + source(name)


class StreamSlotsFull(Exception):
    """A client holds as many event streams and waiting long-polls as it may."""

    def __init__(self, client: str, limit: int) -> None:
        super().__init__(f"{client} holds {limit} waiting requests already")
        self.client = client
        self.limit = limit


class Leases:
    """The lease operations of :class:`~mayi_service.storage.repository.GameRepository`."""

    r: redis.Redis
    run: Scripts

    def register_leases(self) -> None:
        self._take_lease = self.r.register_script(lease_script("take_lease"))
        self._renew_lease = self.r.register_script(lease_script("renew_lease"))

    def take_lease(self, key: str, lease: str, limit: int, ms: int) -> bool:
        """Take ``lease`` in the client's lease set ``key`` for ``ms`` milliseconds, unless
        the client holds ``limit`` leases that have not expired."""
        return bool(self.run(self._take_lease, [key], [lease, limit, ms]))

    def renew_lease(self, key: str, lease: str, ms: int) -> bool:
        """Extend ``lease`` to ``ms`` milliseconds from now; ``False`` if it is gone (it expired)."""
        return bool(self.run(self._renew_lease, [key], [lease, ms]))

    def drop_lease(self, key: str, lease: str) -> None:
        self.r.zrem(key, lease)
