"""Waiting slots: event streams and waiting long-polls, bounded per client (a lease in Redis,
across processes), per process and per client address in a process."""

from __future__ import annotations

import secrets
import threading

from mayi_service.storage.leases import StreamSlotsFull
from mayi_service.storage.repository import GameRepository

#: Seconds a waiting slot's lease outlives the time its holder said it would wait (or, for
#: an event stream, renew it): the slack for a holder late to renew or give it back.
LEASE_MARGIN_SECONDS = 10.0


class WaitSlot:
    """One waiting slot of a client, held as a lease in Redis (:meth:`GameRepository.take_lease`,
    under :attr:`key`, across processes), and one of this process (:class:`ProcessSlots`,
    overall and per address), taken only while a request waits.

    The lease expires :attr:`lease_ms` after it was taken or last renewed (:meth:`renew`):
    a holder that cannot give it back (its process died, Redis was down when it ended)
    leaves nothing that outlives it for long, and a refused attempt changes nothing.

    :meth:`take` takes both (raising :class:`ProcessSlotsFull`, :class:`AddressSlotsFull` or
    :class:`StreamSlotsFull`) and :meth:`give` gives both back, a round trip each. A caller
    that takes the lease in a script of its own (the decisions poll, in the reads it
    makes anyway) takes this process's slot with :meth:`take_process`, then says what its
    script did with :meth:`counted` and :meth:`counted_down`.
    """

    __slots__ = (
        "address",
        "address_limit",
        "client",
        "full",
        "held",
        "key",
        "lease",
        "lease_ms",
        "limit",
        "process_limit",
        "process_slots",
        "repo",
    )

    def __init__(
        self,
        repo: GameRepository,
        process_slots: ProcessSlots,
        client: str,
        limit: int,
        seconds: float,
        process_limit: int,
        address: str | None = None,
        address_limit: int = 0,
    ) -> None:
        self.repo = repo
        self.process_slots = process_slots
        self.client = client
        self.limit = limit
        #: How long the lease lasts, from its taking or its last renewal, in milliseconds.
        self.lease_ms = int((seconds + LEASE_MARGIN_SECONDS) * 1000)
        self.process_limit = process_limit
        self.address = address
        self.address_limit = address_limit
        #: The client's set of leases in Redis, and this slot's lease in it.
        self.key = repo.lookup_key("leases", client)
        self.lease = secrets.token_hex(8)
        self.held = False
        #: What :meth:`take_process` found full (``None``: nothing).
        self.full: str | None = None

    def take(self) -> None:
        if not self.take_process():
            if self.full == "address":
                raise AddressSlotsFull(str(self.address), self.address_limit)
            raise ProcessSlotsFull(self.process_limit)
        took = False
        try:
            took = self.repo.take_lease(self.key, self.lease, self.limit, self.lease_ms)
        finally:
            self.counted(took)
        if not took:
            raise StreamSlotsFull(self.client, self.limit)

    def take_process(self) -> bool:
        """Take this process's slot alone; ``False`` when it (or the address) holds its limit already."""
        self.full = self.process_slots.take(self.process_limit, self.address, self.address_limit)
        return self.full is None

    def counted(self, took: bool) -> None:
        """After :meth:`take_process`: the client's lease was taken (``took``), or refused
        (this process's slot is given back)."""
        if took:
            self.held = True
        else:
            self.process_slots.give(self.address)

    def counted_down(self) -> None:
        """The client's lease was given back by the caller: give back this process's slot."""
        if self.held:
            self.held = False
            self.process_slots.give(self.address)

    def renew(self) -> bool:
        """Extend the lease by :attr:`lease_ms` from now; ``False`` if it is gone (it expired:
        the holder was too late, or Redis lost it), and the holder should end its wait."""
        return self.repo.renew_lease(self.key, self.lease, self.lease_ms)

    def give(self) -> None:
        if self.held:
            self.counted_down()
            self.repo.drop_lease(self.key, self.lease)


class ProcessSlots:
    """Event streams and waiting long-polls open in this process: all clients together,
    and per client address.

    Under gevent each costs a socket, a greenlet and some memory, not a thread;
    a cap (``MAYI_MAX_WAITING_PER_PROCESS``) keeps their number, and so the
    process's memory and file descriptors, bounded, and a cap per address
    (``MAYI_MAX_WAITING_PER_ADDRESS``), over all of its tokens, keeps a few addresses
    from taking them all.
    """

    def __init__(self) -> None:
        self.count = 0
        self.by_address: dict[str, int] = {}
        self.lock = threading.Lock()

    def take(self, limit: int, address: str | None = None, address_limit: int = 0) -> str | None:
        """Take a slot; ``None`` if taken, else what is full: ``"process"`` or ``"address"``."""
        with self.lock:
            if self.count >= limit:
                return "process"
            if address is not None and address_limit > 0:
                held = self.by_address.get(address, 0)
                if held >= address_limit:
                    return "address"
                self.by_address[address] = held + 1
            self.count += 1
            return None

    def give(self, address: str | None = None) -> None:
        with self.lock:
            self.count -= 1
            if address is not None and address in self.by_address:
                left = self.by_address[address] - 1
                if left > 0:
                    self.by_address[address] = left
                else:
                    del self.by_address[address]


class ProcessSlotsFull(Exception):
    """This process holds as many event streams and waiting long-polls as it may."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"this process holds {limit} waiting requests already")
        self.limit = limit


class AddressSlotsFull(Exception):
    """One client address holds as many event streams and waiting long-polls in this
    process as it may, over all of its tokens."""

    def __init__(self, address: str, limit: int) -> None:
        super().__init__(f"{address} holds {limit} waiting requests in this process already")
        self.address = address
        self.limit = limit
