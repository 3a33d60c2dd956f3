"""Webhook deliveries: each decision waiting for a bot with a ``webhook_url`` is POSTed there
by an RQ job, signed by the Standard Webhooks specification.

* **When.** After every commit of a game with bot seats, :meth:`Webhooks.on_commit` (called
  by :meth:`mayi_service.bots.seats.Bots.after_commit` with the bots the commit woke) enqueues one
  job per seat of a webhook bot that must act. On a single Redis the commit script that wakes
  the bots also reads their ``webhook_url``: a commit that wakes no webhook bot costs nothing
  more. One decision is one ``(game, seat, key)``, the key of
  :func:`mayi_service.bots.decisions.decision_key`: it stays the same while the seat's choices
  do, so another seat's answer to the same upcard (a new version) sends nothing new. A
  Redis ``SET NX`` key makes sure a decision is enqueued once, whatever calls the hook again.
* **What.** The job (:func:`mayi_service.jobs.run_delivery`) loads the game; if it has ended, passed the
  decision's deadline, or the seat's decision has another key now (it was answered, or its
  choices changed: the new decision has its own job), nothing is sent. Otherwise it POSTs
  the decision (the JSON of one entry of ``GET /v1/bots/me/decisions``, at the game's
  present version) with the headers ``webhook-id`` (``msg_<game>_<seat>_<key>``: the same
  for every attempt),
  ``webhook-timestamp`` and ``webhook-signature`` (``v1,<sig>``, and during a secret
  rotation ``v1,<new> v1,<old>``).
* **Retries.** One attempt per job run, with short timeouts (connect, then the whole
  answer); a failure (no connection, a timeout, any status but 2xx, a redirect included)
  makes the next attempt due after 1, 2, 4, 8... seconds (``MAYI_WEBHOOK_RETRY_SECONDS``
  doubled each time, at most 60 s), while it comes before the decision's deadline and
  within ``MAYI_WEBHOOK_MAX_ATTEMPTS``. A job never sleeps.
* **The due-set: at least once.** Every delivery not yet done is a member of one sorted
  set on the jobs Redis (:meth:`Webhooks.due_key`), scored with the time (ms) its
  attempt is due or its *lease* ends. Enqueueing an attempt, and starting it, lease it
  for :attr:`Webhooks.lease_seconds` (its two timeouts and 3 s); its end (sent, given up, or
  nothing to send) removes it or makes the next attempt due, only while the lease is
  still its own (the lease's score is its token). The *dispatcher* of every webhooks
  worker (:func:`start_dispatcher`) enqueues the attempts that fall due, and again any
  attempt whose lease ran out: its worker died, Redis went away under it, or its job
  was lost. RQ's scheduler is not involved, so a Redis restart or a worker's death
  delays a delivery by one lease at most; the repeated attempt keeps its ``webhook-id``.
* **SSRF.** :func:`resolve` resolves the URL's host once and refuses (unless
  ``MAYI_WEBHOOK_ALLOW_PRIVATE``) any address that is not public: loopback, private,
  link-local, CGNAT, multicast, unspecified, reserved, IPv6 unique-local, IPv4-mapped or
  NAT64 IPv6, and the cloud metadata addresses. The connection goes to the very address
  that was checked (with the ``Host`` header and TLS SNI of the URL's host), never through
  a second lookup; redirects are not followed; at most ``MAYI_WEBHOOK_MAX_RESPONSE_BYTES``
  of the answer is read.
* **The log.** Each attempt (and each refused URL) is one entry of the bot's delivery log,
  ``<prefix>:{bot:<id>}:deliveries`` (a list, newest first, trimmed to
  ``MAYI_WEBHOOK_DELIVERIES_KEPT``): ``GET /v1/bots/me/deliveries``.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import logging
import math
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rq import Queue

import mayi_engine as engine
from mayi_engine.state import GameStatus
from mayi_service.api.problems import ServiceError
from mayi_service.bots.decisions import decision_entry, decision_key
from mayi_service.bots.seats import bot_key, sign
from mayi_service.config import Settings
from mayi_service.play.views import Viewer, game_view
from mayi_service.storage import codec
from mayi_service.storage.connections import UNREACHABLE, Outage
from mayi_service.storage.records import GameRecord
from mayi_service.storage.repository import GameRepository

if TYPE_CHECKING:
    from mayi_service.bots.seats import Bots

log = logging.getLogger(__name__)

#: The longest ``webhook_url`` accepted.
MAX_URL_LENGTH = 2048
#: The longest pause between two attempts, in seconds.
MAX_RETRY_DELAY = 60.0
#: How long the "enqueued once" mark of a decision point is kept, in seconds.
DEDUPE_SECONDS = 3600
USER_AGENT = "mayi-webhooks/1"
#: The longest pause of the dispatcher between two looks at the due-set, in seconds.
DISPATCH_SECONDS = 1.0
#: The most attempts the dispatcher enqueues at one look.
DISPATCH_BATCH = 500
#: An attempt's lease beyond its two timeouts (for the lookup and the log), in seconds.
LEASE_MARGIN = 3.0

# The due-set's scripts (on the jobs Redis, never a cluster). A member's score is the time
# (ms) its attempt falls due or its lease ends; a lease is held while the score is its token.
#: Lease every member due at ARGV[1] until ARGV[2] (at most ARGV[3] of them): returns
#: the members, and the first score left (false: none).
_TAKE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], member) end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {due, first[2] or false}
"""
#: If ARGV[1]'s lease is still ARGV[2], renew it until ARGV[3]: returns it (false: not held).
_CLAIM = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return false end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return tonumber(ARGV[3])
"""
#: If ARGV[1]'s lease is still ARGV[2], end it: remove it, and add ARGV[3] due at ARGV[4]
#: if given (the next attempt). Returns 1, or 0 when the lease was not held.
_FINISH = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[3] then redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3]) end
return 1
"""

_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_ULA = ipaddress.ip_network("fc00::/7")
#: Special-purpose ranges (the IANA registries) that the ``ipaddress`` of some Python
#: versions counts as global, each with what it is.
_SPECIAL: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = (
    (ipaddress.ip_network("192.0.0.0/24"), "an IETF protocol assignment address"),
    (ipaddress.ip_network("192.88.99.0/24"), "a 6to4 relay anycast address"),
    (ipaddress.ip_network("198.18.0.0/15"), "a benchmarking address"),
    (ipaddress.ip_network("64:ff9b:1::/48"), "a NAT64 address"),
    (ipaddress.ip_network("2001::/32"), "a Teredo address"),
    (ipaddress.ip_network("2001:db8::/32"), "an IPv6 documentation address"),
    (ipaddress.ip_network("3fff::/20"), "an IPv6 documentation address"),
    (ipaddress.ip_network("5f00::/16"), "an IPv6 segment routing address"),
    (ipaddress.ip_network("fec0::/10"), "an IPv6 site-local address"),
)
#: IPv4-compatible IPv6 addresses (``::a.b.c.d``, deprecated by RFC 4291).
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
#: IPv6 global unicast: every other range is special.
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")


#: The RQ job of one delivery attempt (:func:`mayi_service.jobs.run_delivery`).
DELIVERY_JOB = "mayi_service.jobs.run_delivery"


def queue_name_for(clock_queue: str) -> str:
    """The RQ queue of the deliveries, beside the clock queue (workers take clock jobs first)."""
    return f"{clock_queue}-webhooks"


class RefusedURL(Exception):
    """A webhook URL the service will not call; the message says why."""


def url_problem(url: str) -> str | None:
    """What is wrong with the form of ``url`` as a webhook URL (``None``: nothing)."""
    if len(url) > MAX_URL_LENGTH:
        return f"at most {MAX_URL_LENGTH} characters"
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "no spaces or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if parts.scheme not in ("https", "http"):
        return "an https:// (or http://) URL"
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "no user name or password in the URL"
    if not parts.hostname:
        return "a URL with a host"
    if port == 0:
        return "a port from 1 to 65535"
    if parts.fragment:
        return "no #fragment"
    return None


#: The setting that lets webhooks reach addresses that are not public.
ALLOW_PRIVATE = Settings.env_name("webhook_allow_private")


def refused_address(shown: str, why: str) -> str:
    """Why a webhook to ``shown`` (a host, or a host and its address) is refused, and the
    setting that would allow it."""
    return f"{shown} is {why}: the service does not call it ({ALLOW_PRIVATE}=true allows it, for local work and tests)"


def address_problem(address: str) -> str | None:
    """Why the service must not connect to ``address`` (``None``: a public address): the one
    check of a webhook's address, at registration (of a host written as an address) and at
    each delivery (of every address its host resolves to). An IPv6 address that carries an
    IPv4 one (6to4) is refused if that one is."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip in _METADATA:
        return "a cloud metadata address"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return "an IPv4-mapped IPv6 address"
        if ip in _NAT64:
            return "a NAT64 address"
        if ip in _ULA:
            return "an IPv6 unique local address"
        if ip.sixtofour is not None:
            inner = address_problem(str(ip.sixtofour))
            if inner:
                return f"a 6to4 address of {ip.sixtofour}, {inner}"
        if ip in _IPV4_COMPATIBLE and int(ip) > 1:
            return "an IPv4-compatible IPv6 address"
    for network, what in _SPECIAL:
        if ip.version == network.version and ip in network:
            return what
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return "a carrier-grade NAT address"
    if ip.is_reserved:
        return "a reserved address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global or (isinstance(ip, ipaddress.IPv6Address) and ip not in _GLOBAL_UNICAST):
        return "a reserved address"
    return None


#: One part of an IPv4 address as ``inet_aton`` reads it: hexadecimal after ``0x``, octal
#: after a leading ``0``, else decimal.
_IPV4_PART = re.compile(r"0[xX](?P<hex>[0-9a-fA-F]*)|0(?P<oct>[0-7]+)|(?P<dec>[0-9]+)")


def legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """``host`` read as an IPv4 address the way the system's resolver (``inet_aton``) and
    browsers read one: one to four parts, each decimal, hexadecimal (``0x7f``) or octal
    (``0177``), the last filling the bytes left (``127.1``, ``2130706433``, ``0x7f.1``,
    ``0``: all addresses); ``None`` if it is not one."""
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()  # a final dot
    if not 1 <= len(parts) <= 4:
        return None
    numbers = []
    for part in parts:
        found = _IPV4_PART.fullmatch(part)
        if found is None:
            return None
        if found["hex"] is not None:
            numbers.append(int(found["hex"] or "0", 16))
        elif found["oct"] is not None:
            numbers.append(int(found["oct"], 8))
        else:
            numbers.append(int(found["dec"]))
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    value = last
    for i, n in enumerate(head):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def literal_address(host: str) -> str | None:
    """The address ``host`` is written as (in a URL's form: ``[::1]`` without brackets; an
    IPv4 address in any form the resolver reads, :func:`legacy_ipv4`), normalised; ``None``
    for a host name."""
    try:
        return str(ipaddress.ip_address(host.split("%", 1)[0]))
    except ValueError:
        found = legacy_ipv4(host)
        return None if found is None else str(found)


@dataclass(frozen=True)
class Target:
    """Where one attempt connects: the checked address, and what the URL says."""

    scheme: str
    host: str
    port: int
    address: str
    path: str


def resolve(url: str, allow_private: bool = False) -> Target:
    """Resolve ``url``'s host once and check every address it has; the target is the first.
    :class:`RefusedURL` names the address and why it is refused."""
    problem = url_problem(url)
    if problem:
        raise RefusedURL(f"webhook_url must be {problem}")
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    # An IPv4 address in any form is read as registration reads it (literal_address), not looked up.
    lookup = host if ":" in host else literal_address(host) or host
    try:
        infos = socket.getaddrinfo(lookup, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise RefusedURL(f"the host {host!r} does not resolve ({exc})") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise RefusedURL(f"the host {host!r} has no address")
    if not allow_private:
        for address in addresses:
            why = address_problem(address)
            if why:
                shown = host if host == address else f"{host} ({address})"
                raise RefusedURL(refused_address(shown, why))
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(parts.scheme, host, port, addresses[0], path)


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to a checked address (``host`` is that address)."""

    def __init__(self, address: str, port: int, timeout: float) -> None:
        super().__init__(address, port, timeout=timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection to a checked address, with the URL's host for SNI and the
    certificate check."""

    def __init__(
        self, address: str, port: int, server_name: str, timeout: float, context: ssl.SSLContext | None = None
    ) -> None:
        super().__init__(address, port, timeout=timeout, context=context or ssl.create_default_context())
        self.server_name = server_name

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.server_name)  # type: ignore[attr-defined]


@dataclass
class Outcome:
    """What one POST gave: a status (``None``: no answer), an error, and whether the
    answer's body was cut at the size limit."""

    status: int | None = None
    error: str | None = None
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300 and self.error is None


def post(
    target: Target,
    body: bytes,
    headers: dict[str, str],
    connect_seconds: float,
    read_seconds: float,
    max_bytes: int,
    context: ssl.SSLContext | None = None,
) -> Outcome:
    """POST ``body`` to ``target``: at most ``connect_seconds`` to connect, then at most
    ``read_seconds`` for the whole answer (status, headers and up to ``max_bytes`` of body).
    Redirects are not followed (a 3xx is a failure). ``context``: the TLS settings (default:
    the system's certificate authorities, the certificate checked for the URL's host)."""
    conn: http.client.HTTPConnection
    if target.scheme == "https":
        conn = _PinnedHTTPSConnection(target.address, target.port, target.host, connect_seconds, context)
    else:
        conn = _PinnedHTTPConnection(target.address, target.port, connect_seconds)
    default_port = 443 if target.scheme == "https" else 80
    host = f"[{target.host}]" if ":" in target.host else target.host
    sent = {"Host": host if target.port == default_port else f"{host}:{target.port}", **headers}
    sent["Content-Length"] = str(len(body))
    try:
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as exc:
            return Outcome(error=f"could not connect to {target.address} port {target.port}: {_why(exc)}")
        end = time.monotonic() + read_seconds
        sock = conn.sock  # kept: http.client lets go of it once an answer is read whole
        assert sock is not None
        sock.settimeout(read_seconds)
        try:
            conn.request("POST", target.path, body=body, headers=sent)
            response = conn.getresponse()
            status = response.status
            got = 0
            truncated = False
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    return Outcome(status, f"the answer took more than {read_seconds:g} s")
                sock.settimeout(left)
                chunk = response.read1(min(16384, max_bytes + 1 - got)) if got <= max_bytes else b""
                if not chunk:
                    break
                got += len(chunk)
                if got > max_bytes:
                    truncated = True
                    break
        except TimeoutError:
            return Outcome(error=f"no answer within {read_seconds:g} s")
        except (OSError, http.client.HTTPException) as exc:
            return Outcome(error=f"the connection failed: {_why(exc)}")
        if 300 <= status < 400:
            return Outcome(status, f"a redirect ({status}) is not followed", truncated)
        if not 200 <= status < 300:
            return Outcome(status, f"the receiver answered {status}", truncated)
        return Outcome(status, None, truncated)
    finally:
        conn.close()


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__


def retry_delay(attempt: int, base: float) -> float:
    """Seconds between attempt ``attempt`` and the next: ``base``, doubled each time, at most 60."""
    return float(min(MAX_RETRY_DELAY, base * 2 ** (attempt - 1)))


def webhook_id(game_id: str, seat: int, key: str) -> str:
    """The ``webhook-id`` of a decision (the same for each attempt)."""
    return f"msg_{game_id}_{seat}_{key}"


@dataclass(frozen=True)
class Attempt:
    """One attempt of one delivery: the due-set's member."""

    bot_id: str
    game_id: str
    seat: int
    key: str
    attempt: int

    @property
    def member(self) -> str:
        return json.dumps([self.bot_id, self.game_id, self.seat, self.key, self.attempt], separators=(",", ":"))

    @classmethod
    def of(cls, member: str | bytes) -> Attempt:
        bot_id, game_id, seat, key, attempt = json.loads(member)
        return cls(str(bot_id), str(game_id), int(seat), str(key), int(attempt))

    def next(self) -> Attempt:
        return Attempt(self.bot_id, self.game_id, self.seat, self.key, self.attempt + 1)


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


class Webhooks:
    """Enqueues, sends and logs the webhook deliveries of the bots of one repository."""

    def __init__(
        self, repo: GameRepository, queue: Queue | None, settings: Settings, clock: Callable[[], float] = time.time
    ) -> None:
        self.repo = repo
        self.r = self.repo.r
        self.queue = queue
        self.settings = settings
        self.clock = clock
        #: RQ's bound on one attempt (a receiver dripping its answer a byte at a time cannot
        #: hold a worker for longer): the timeouts, plus time for the lookup and the log.
        self.job_timeout = math.ceil(settings.webhook_connect_seconds + settings.webhook_read_seconds) + 10
        #: An attempt's lease: one that has not ended this long after it was enqueued or
        #: started is enqueued again. Shorter than the job's timeout, so that a decision of
        #: a 15 s claim window is still waiting when it is made again; an attempt slower than
        #: this (a slow lookup) may be sent twice, with the same ``webhook-id``.
        self.lease_seconds = settings.webhook_connect_seconds + settings.webhook_read_seconds + LEASE_MARGIN
        #: The Redis of the jobs (the queue's), which holds the due-set.
        self.jobs = queue.connection if queue is not None else None
        if self.jobs is not None:
            self._take = self.jobs.register_script(_TAKE)
            self._claim = self.jobs.register_script(_CLAIM)
            self._finish = self.jobs.register_script(_FINISH)

    def due_key(self) -> str:
        """The due-set of the deliveries of this queue (on the jobs Redis)."""
        assert self.queue is not None
        return f"{self.queue.name}:due"

    def log_key(self, bot_id: str) -> str:
        return f"{self.repo.prefix}:{{bot:{bot_id}}}:deliveries"

    def mark_key(self, bot_id: str, game_id: str, seat: int, key: str) -> str:
        return f"{self.repo.prefix}:{{bot:{bot_id}}}:delivery:{game_id}:{seat}:{key}"

    # -- after a commit (the API's request path: keep it cheap) -----------------
    def on_commit(
        self,
        record: GameRecord,
        seats: dict[int, str],
        state: engine.State | None = None,
        urls: dict[str, str | None] | None = None,
    ) -> None:
        """Enqueue a delivery for each seat of a webhook bot that must act at ``record``
        (``seats``: the woken seats' bot ids, seat → bot id; ``state``: the record's engine
        state, if the caller has it), unless that decision was enqueued already.

        ``urls``: the bots' ``webhook_url`` as the commit itself read them (on a single Redis
        the commit script that wakes the bots reads them in the same call: see
        :meth:`mayi_service.bots.seats.Bots.plan_wake`), so that a commit after which no woken bot
        has a webhook costs no read here; ``None`` (a cluster, where each bot's hash lives in
        its own slot): read here, one pipeline. The URL is read at each commit, never kept
        (no flag in the table that ``PATCH /v1/bots/me`` could leave stale): a URL set
        mid-game counts from the next commit on, and one cleared stops the deliveries."""
        if self.queue is None or record.status != GameStatus.PLAYING or record.state is None:
            return
        by_seat = dict(seats)
        if urls is None:
            bots = sorted(set(by_seat.values()))
            pipe = self.r.pipeline(transaction=False)
            for bot_id in bots:
                pipe.hget(bot_key(self.repo.prefix, bot_id), "webhook_url")
            urls = dict(zip(bots, pipe.execute(), strict=True))
        hooked = {bot_id for bot_id, url in urls.items() if url}
        if not hooked:
            return
        if state is None:
            state = codec.load_state(record.state)
        now = self.clock()
        for seat, bot_id in sorted(by_seat.items()):
            if bot_id in hooked:
                legal = engine.legal_moves(state, seat, now)
                if legal:
                    self.enqueue(bot_id, record.id, seat, decision_key(record.id, state, seat, legal))

    def enqueue(self, bot_id: str, game_id: str, seat: int, key: str) -> bool:
        """Enqueue the first attempt of a decision, once (``False``: it was already)."""
        if self.queue is None:
            return False
        if not self.r.set(self.mark_key(bot_id, game_id, seat, key), "1", nx=True, ex=DEDUPE_SECONDS):
            return False
        first = Attempt(bot_id, game_id, seat, key, 1)
        lease = _ms(self.clock() + self.lease_seconds)
        assert self.jobs is not None
        self.jobs.zadd(self.due_key(), {first.member: lease})  # first: were the job lost, the lease ends
        self._enqueue(first, lease)
        return True

    def _enqueue(self, attempt: Attempt, lease: int) -> None:
        """Queue the job of ``attempt`` holding ``lease`` (a job per lease: a copy whose lease
        was taken over finds it so and does nothing)."""
        assert self.queue is not None
        self.queue.enqueue(
            DELIVERY_JOB,
            attempt.bot_id,
            attempt.game_id,
            attempt.seat,
            attempt.key,
            attempt.attempt,
            lease,
            job_id=f"webhook-{attempt.game_id}-{attempt.seat}-{attempt.key}-{attempt.attempt}-{lease}",
            job_timeout=self.job_timeout,
            result_ttl=0,
            failure_ttl=3600,
        )

    def dispatch(self) -> float:
        """Enqueue every attempt that is due, or whose lease ran out; return the seconds until
        the next one falls due (at most :data:`DISPATCH_SECONDS`). Several workers'
        dispatchers share the due-set: each attempt is leased by one."""
        if self.jobs is None:
            return DISPATCH_SECONDS
        while True:
            now = self.clock()
            lease = _ms(now + self.lease_seconds)
            members, first = self._take(keys=[self.due_key()], args=[_ms(now), lease, DISPATCH_BATCH])
            for member in members:
                self._enqueue(Attempt.of(member), lease)
            if len(members) < DISPATCH_BATCH:
                break
        if first is None:
            return DISPATCH_SECONDS
        return min(DISPATCH_SECONDS, max(0.01, float(first) / 1000 - self.clock()))

    def due(self) -> int:
        """How many deliveries are not done yet (due, leased or waiting for their next attempt)."""
        return int(self.jobs.zcard(self.due_key())) if self.jobs is not None else 0

    # -- one attempt (in the worker) ----------------------------------------------
    def decision(self, game_id: str, seat: int, key: str) -> dict[str, Any] | None:
        """The seat's decision with ``key`` if it is still waiting (``None``: the game ended
        or the decision's deadline passed; the seat answered, its choices changed, or it
        need not act)."""
        record = self.repo.load(game_id)
        if record is None or record.status != GameStatus.PLAYING:
            return None
        if record.state is None:
            return None
        now = self.clock()
        state = codec.load_state(record.state)
        legal = engine.legal_moves(state, seat, now)
        if not legal or decision_key(game_id, state, seat, legal) != key:
            return None
        view = game_view(record, Viewer(seat), now, state)
        deadline = view.get("deadline")
        if deadline is not None and now >= deadline:
            return None  # the clock plays it
        return decision_entry(view, key)

    def run(self, accounts: Bots, attempt: Attempt, lease: int) -> dict[str, Any] | None:
        """The job of ``attempt`` (to a bot of ``accounts``) holding ``lease``: renew the lease,
        make the attempt, then end the lease (removing the delivery, or making its next attempt due). A lease that is no
        longer this job's (the dispatcher gave the attempt to another job) does nothing."""
        assert self.jobs is not None
        held = self._claim(keys=[self.due_key()], args=[attempt.member, lease, _ms(self.clock() + self.lease_seconds)])
        if held is None:
            return None
        try:
            entry = self.deliver(accounts, attempt.bot_id, attempt.game_id, attempt.seat, attempt.key, attempt.attempt)
        except UNREACHABLE:
            raise  # Redis went away: the lease ends, and the dispatcher enqueues the attempt again
        except Exception:
            self._finish(keys=[self.due_key()], args=[attempt.member, int(held)])  # a bug: not again
            raise
        then = entry["next_retry_at"] if entry is not None else None
        args: list[Any] = [attempt.member, int(held)]
        if then is not None:
            args += [attempt.next().member, _ms(then)]
        self._finish(keys=[self.due_key()], args=args)
        return entry

    def run_job(self, accounts: Bots, attempt: Attempt, lease: int | None) -> None:
        """The RQ job of ``attempt`` holding ``lease`` (:meth:`run`); ``None``: a job queued by an
        earlier version, which had no due-set: it takes a lease first."""
        if lease is None and self.jobs is not None:
            lease = _ms(self.clock() + self.lease_seconds)
            self.jobs.zadd(self.due_key(), {attempt.member: lease})
        if lease is not None:
            self.run(accounts, attempt, lease)

    def deliver(
        self, accounts: Bots, bot_id: str, game_id: str, seat: int, key: str, attempt: int = 1
    ) -> dict[str, Any] | None:
        """One attempt at delivering the seat's decision with ``key`` to bot ``bot_id`` of
        ``accounts``. Returns the delivery log entry (``None``: nothing to send); on failure,
        its ``next_retry_at`` says when the next attempt is due (``None``: no more)."""
        try:
            bot = accounts.load(bot_id)
        except ServiceError:
            return None  # the bot is gone
        if not bot.webhook_url:
            return None
        decision = self.decision(game_id, seat, key)
        if decision is None:
            return None
        settings = self.settings
        msg_id = webhook_id(game_id, seat, key)
        started = self.clock()
        timestamp = int(started)
        body = codec.dump_bytes(decision)
        signatures = [sign(bot.secret, msg_id, timestamp, body)]
        if bot.old_secret:
            signatures.append(sign(bot.old_secret, msg_id, timestamp, body))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "webhook-id": msg_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": " ".join(signatures),
        }
        entry: dict[str, Any] = {
            "webhook_id": msg_id,
            "game_id": game_id,
            "seat": seat,
            "version": decision["version"],
            "key": key,
            "attempt": attempt,
            "at": started,
            "url": bot.webhook_url,
            "status": None,
            "error": None,
            "duration_ms": 0.0,
            "response_truncated": False,
            "next_retry_at": None,
        }
        clock_start = time.monotonic()
        try:
            target = resolve(bot.webhook_url, settings.webhook_allow_private)
        except RefusedURL as exc:
            entry["error"] = f"refused: {exc}"
            entry["duration_ms"] = round((time.monotonic() - clock_start) * 1000, 1)
            self.record(bot_id, entry)
            return entry
        outcome = post(
            target,
            body,
            headers,
            settings.webhook_connect_seconds,
            settings.webhook_read_seconds,
            settings.webhook_max_response_bytes,
        )
        entry.update(
            status=outcome.status,
            error=outcome.error,
            response_truncated=outcome.truncated,
            duration_ms=round((time.monotonic() - clock_start) * 1000, 1),
        )
        if not outcome.ok:
            delay = retry_delay(attempt, settings.webhook_retry_seconds)
            next_at = self.clock() + delay
            deadline = decision["deadline"]
            if attempt >= settings.webhook_max_attempts:
                entry["error"] += f"; no more attempts (MAYI_WEBHOOK_MAX_ATTEMPTS is {settings.webhook_max_attempts})"
            elif deadline is not None and next_at >= deadline:
                entry["error"] += "; no more attempts: the decision's deadline comes first"
            elif self.queue is not None:
                entry["next_retry_at"] = next_at
        self.record(bot_id, entry)
        return entry

    # -- the log --------------------------------------------------------------------
    def record(self, bot_id: str, entry: dict[str, Any]) -> None:
        """Add ``entry`` to the bot's delivery log (newest first, bounded)."""
        key = self.log_key(bot_id)
        pipe = self.r.pipeline()
        pipe.lpush(key, json.dumps(entry))
        pipe.ltrim(key, 0, max(0, self.settings.webhook_deliveries_kept - 1))
        ttl = self.r.ttl(bot_key(self.repo.prefix, bot_id))
        if ttl and ttl > 0:
            pipe.expire(key, ttl)
        pipe.execute()

    def recent(self, bot_id: str) -> list[dict[str, Any]]:
        """The bot's delivery log, newest first."""
        return [json.loads(raw) for raw in self.r.lrange(self.log_key(bot_id), 0, -1)]


def start_dispatcher(hooks: Webhooks, stop: threading.Event) -> threading.Thread:
    """A daemon thread that enqueues the deliveries that fall due (:meth:`Webhooks.dispatch`)
    until ``stop``; it carries on by itself after a Redis outage."""

    def loop() -> None:
        wait, outage = 0.0, Outage("webhook dispatcher", log)
        while not stop.wait(wait):
            try:
                wait = hooks.dispatch()
                outage.answered()
            except UNREACHABLE as exc:
                outage.failed(exc)
                wait = DISPATCH_SECONDS
            except Exception:
                log.exception("webhook dispatcher")
                wait = DISPATCH_SECONDS

    thread = threading.Thread(target=loop, name="mayi-webhook-dispatcher", daemon=True)
    thread.start()
    return thread
