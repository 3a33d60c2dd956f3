"""Connections to Redis: URLs (a single Redis, a cluster, Sentinels), clients whose
blocking reads outlast their block, reachability, and the runner of the Lua scripts.
The embedded Redis is :mod:`.embedded`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.commands.core import Script
from redis.exceptions import NoScriptError, RedisClusterException
from redis.utils import SENTINEL

from mayi_service.config import SettingError
from mayi_service.storage.embedded import start_embedded
from mayi_service.storage.kept import KeptConnections

log = logging.getLogger(__name__)


#: What a client of a Redis that does not answer (or is starting) raises.
UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError)


class Outage:
    """A loop's view of Redis outages: :meth:`failed` logs one line when an outage begins
    (not one each try, and no traceback), :meth:`answered` one when Redis answers again."""

    def __init__(self, what: str, logger: logging.Logger = log) -> None:
        self.what, self.log, self.down = what, logger, False

    def failed(self, exc: BaseException) -> None:
        if not self.down:
            self.down = True
            self.log.warning("%s: Redis is unreachable (%s); trying again until it answers", self.what, exc)

    def answered(self) -> None:
        if self.down:
            self.down = False
            self.log.warning("%s: Redis answers again", self.what)


def redis_url(configured: str, data_dir: str) -> str:
    """The URL to use: the configured one, or that of the embedded server."""
    return configured or start_embedded(data_dir)


#: Seconds an ordinary command may take before the client gives up (redis-py's default, said aloud).
COMMAND_TIMEOUT = 5.0
#: A blocking read may take this much longer than the block it asked for.
BLOCK_MARGIN = 10.0
#: Most connections one client opens: above any number of waits the API admits
#: (``MAYI_MAX_WAITING_PER_PROCESS``) plus its other requests; Redis' own default
#: ``maxclients`` is 10000.
MAX_CONNECTIONS = 10_000


def block_seconds(args: tuple[Any, ...]) -> float | None:
    """How long a command may block on the server, in seconds: ``None`` for a command
    that answers at once, ``0.0`` for one that may block forever.

    >>> block_seconds(("XREAD", "COUNT", 10, "BLOCK", 7000, "STREAMS", "k", "0-0"))
    7.0
    >>> block_seconds(("BLPOP", "a", "b", 30)), block_seconds(("XREAD", "STREAMS", "k", "0"))
    (30.0, None)
    """
    name = _text(args[0]).upper() if args else ""
    if name in ("XREAD", "XREADGROUP"):
        words = [_text(a).upper() if isinstance(a, str | bytes) else "" for a in args]
        if "BLOCK" in words:
            return float(args[words.index("BLOCK") + 1]) / 1000
        return None
    if name in ("BLPOP", "BRPOP", "BRPOPLPUSH", "BLMOVE", "BZPOPMIN", "BZPOPMAX"):
        return float(args[-1])
    if name in ("BLMPOP", "BZMPOP"):
        return float(args[1])
    if name == "WAIT":
        return float(args[2]) / 1000
    if name == "WAITAOF":
        return float(args[3]) / 1000
    return None


def _text(value: Any) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


class _BlockingReads:
    """A Redis connection whose blocking commands (``XREAD BLOCK``, ``BLPOP`` ...) read
    their answer with a socket timeout longer than their block, while every other
    command keeps the short one: redis-py's default socket timeout (5 s) would
    otherwise cut every wait longer than that with a ``TimeoutError``."""

    _read_timeout: Any = SENTINEL
    socket_timeout: float | None

    def send_command(self, *args: Any, **kwargs: Any) -> None:
        block = block_seconds(args)
        super().send_command(*args, **kwargs)  # type: ignore[misc]
        if block is not None:
            # 0 blocks until an answer comes: no read timeout then.
            self._read_timeout = None if block == 0 else max(self.socket_timeout or 0, block + BLOCK_MARGIN)

    def send_packed_command(self, *args: Any, **kwargs: Any) -> None:
        self._read_timeout = SENTINEL
        super().send_packed_command(*args, **kwargs)  # type: ignore[misc]

    def read_response(self, *args: Any, timeout: Any = SENTINEL, **kwargs: Any) -> Any:
        if timeout is SENTINEL and self._read_timeout is not SENTINEL:
            timeout = self._read_timeout
        self._read_timeout = SENTINEL
        return super().read_response(*args, timeout=timeout, **kwargs)  # type: ignore[misc]


class Connection(_BlockingReads, redis.Connection):
    """TCP connection (``redis://``) with long reads for blocking commands."""


class SSLConnection(_BlockingReads, redis.SSLConnection):
    """TLS connection (``rediss://``) with long reads for blocking commands."""


class UnixDomainSocketConnection(_BlockingReads, redis.UnixDomainSocketConnection):
    """Unix socket connection (``unix://``) with long reads for blocking commands."""


_CONNECTION_CLASSES = {"unix": UnixDomainSocketConnection, "rediss": SSLConnection}


#: URL schemes that name a Redis Cluster (its nodes, comma-separated).
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
#: URL schemes that name a Redis watched by Sentinels (the Sentinels, then the service name).
SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")


def is_cluster_url(url: str) -> bool:
    """Does ``url`` name a Redis Cluster (``redis+cluster://host:port,host:port``)?"""
    return url.split(":", 1)[0].lower() in CLUSTER_SCHEMES


def is_cluster(client: Any) -> bool:
    """Is ``client`` a Redis Cluster client?"""
    return isinstance(client, RedisCluster)


@dataclass(frozen=True)
class Nodes:
    """What a ``redis+cluster://`` or ``redis+sentinel://`` URL names."""

    hosts: list[tuple[str, int]]
    tls: bool
    username: str | None
    password: str | None
    #: The path after the hosts, split at ``/`` (a Sentinel URL: the service name, then the db).
    path: list[str]


def parse_nodes(url: str, setting: str = "REDIS_URL") -> Nodes:
    """The hosts and credentials of a ``redis+cluster://[user:password@]host:port,host:port``
    URL (or ``redis+sentinel://...``); a malformed one raises :class:`SettingError` naming ``setting``.

    >>> parse_nodes("redis+cluster://:pw@10.0.0.1:7000,10.0.0.2").hosts
    [('10.0.0.1', 7000), ('10.0.0.2', 6379)]
    """
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in CLUSTER_SCHEMES + SENTINEL_SCHEMES:
        raise SettingError(f"{setting}: {url!r} is not a redis+cluster:// or redis+sentinel:// URL")
    if "?" in rest or "#" in rest:
        raise SettingError(f"{setting}: a {scheme}:// URL takes no query or fragment ({url!r})")
    userinfo, at, hostpart = rest.rpartition("@")
    username = password = None
    if at:
        user, colon, word = userinfo.partition(":")
        username, password = unquote(user) or None, unquote(word) if colon else None
    hostlist, _, path = hostpart.partition("/")
    hosts = []
    for item in hostlist.split(","):
        item = item.strip()
        if item.startswith("["):  # [IPv6]:port
            host, _, port_text = item[1:].partition("]")
            port_text = port_text[1:] if port_text.startswith(":") else port_text
        else:
            host, _, port_text = item.rpartition(":") if ":" in item else (item, "", "")
        if not host:
            raise SettingError(f"{setting}: a node of {scheme}:// has no host in {url!r} (give host:port,host:port)")
        if port_text == "":
            port = 26379 if scheme in SENTINEL_SCHEMES else 6379
        elif port_text.isdigit() and 0 < int(port_text) < 65536:
            port = int(port_text)
        else:
            raise SettingError(f"{setting}: {port_text!r} is not a port number (1 to 65535) in {url!r}")
        hosts.append((host, port))
    return Nodes(hosts, scheme.startswith("rediss"), username, password, [p for p in path.split("/") if p])


def _cluster_nodes(url: str, setting: str) -> Nodes:
    nodes = parse_nodes(url, setting)
    if nodes.path not in ([], ["0"]):
        raise SettingError(f"{setting}: a Redis Cluster has only database 0, not /{'/'.join(nodes.path)} ({url!r})")
    return nodes


def _cluster_client(url: str, options: dict[str, Any], setting: str) -> RedisCluster:
    nodes = _cluster_nodes(url, setting)
    options["connection_class"] = SSLConnection if nodes.tls else Connection
    options.setdefault("socket_keepalive", True)
    if nodes.username is not None:
        options["username"] = nodes.username
    if nodes.password is not None:
        options["password"] = nodes.password
    # Given a URL (of the first node), redis-py builds each node's pool from these options,
    # our connection class included (TLS comes with the class, not from the URL).
    host, port = nodes.hosts[0]
    first = f"redis://[{host}]:{port}" if ":" in host else f"redis://{host}:{port}"
    return RedisCluster(url=first, startup_nodes=[ClusterNode(h, p) for h, p in nodes.hosts[1:]], **options)


def _sentinel_client(url: str, options: dict[str, Any], setting: str) -> redis.Redis:
    from redis.sentinel import Sentinel, SentinelManagedConnection, SentinelManagedSSLConnection

    class _Connection(_BlockingReads, SentinelManagedConnection):
        """A connection to the primary the Sentinels name, with long reads for blocking commands."""

    class _SSLConnection(_BlockingReads, SentinelManagedSSLConnection):
        """The same, over TLS."""

    nodes = parse_nodes(url, setting)
    if not nodes.path or len(nodes.path) > 2 or (len(nodes.path) == 2 and not nodes.path[1].isdigit()):
        raise SettingError(
            f"{setting}: name the service the Sentinels watch, and optionally a database: "
            f"redis+sentinel://host:port,host:port/<service>[/<db>], not {url!r}"
        )
    options.pop("connection_class", None)
    sentinel = Sentinel(
        nodes.hosts,
        # The URL's credentials are the primary's; the Sentinels are asked without any.
        sentinel_kwargs={"socket_timeout": COMMAND_TIMEOUT},
        socket_timeout=COMMAND_TIMEOUT,
    )
    connection_class = _SSLConnection if nodes.tls else _Connection
    options.pop("max_connections", None)
    return sentinel.master_for(
        nodes.path[0],
        connection_class=connection_class,
        db=int(nodes.path[1]) if len(nodes.path) == 2 else 0,
        username=nodes.username,
        password=nodes.password,
        **options,
    )


def connect(url: str, setting: str = "REDIS_URL", **kwargs: Any) -> Any:
    """A client for ``url``: ordinary commands time out after :data:`COMMAND_TIMEOUT`
    seconds, blocking reads after their block plus :data:`BLOCK_MARGIN`.

    ``redis+cluster://host:port,host:port`` (``rediss+cluster://`` with TLS) gives a
    :class:`redis.cluster.RedisCluster`, which follows MOVED and ASK redirections and
    keeps the slot map up to date; ``redis+sentinel://host:port,host:port/<service>[/<db>]``
    gives a client of the primary that the Sentinels name. A malformed URL raises
    :class:`SettingError` (a ``ValueError``) naming ``setting``.

    The pool is a blocking one (a request waits up to 10 s for a connection rather
    than failing) and large: under gevent every waiting long-poll and open event
    stream holds one connection for its ``XREAD BLOCK``, and the number of those is
    capped by the API itself (``MAYI_MAX_WAITING_PER_PROCESS``), not by the pool.
    """
    options: dict[str, Any] = {
        "socket_timeout": COMMAND_TIMEOUT,
        "socket_connect_timeout": 5,
        "health_check_interval": 30,
        "max_connections": MAX_CONNECTIONS,
    }
    options.update(kwargs)
    scheme = url.split(":", 1)[0].lower()
    if scheme in CLUSTER_SCHEMES:
        return _cluster_client(url, options, setting)
    if scheme in SENTINEL_SCHEMES:
        return _sentinel_client(url, options, setting)
    options.setdefault("connection_class", _CONNECTION_CLASSES.get(scheme, Connection))
    if scheme != "unix":
        options.setdefault("socket_keepalive", True)  # notice a Redis that vanished mid-wait
    try:
        pool = redis.BlockingConnectionPool.from_url(url, timeout=10, **options)
    except ValueError as exc:
        raise SettingError(f"{setting}: {shown_url(url)!r}: {exc}") from exc
    return redis.Redis(connection_pool=pool)


def check_url(url: str, setting: str = "REDIS_URL") -> None:
    """Raise :class:`SettingError` naming ``setting`` if :func:`connect` would refuse ``url``;
    no server is contacted."""
    if is_cluster_url(url):
        _cluster_nodes(url, setting)  # a cluster client would contact its nodes at once
    else:
        connect(url, setting).close()  # a pool is made, no connection


class RedisUnreachable(SettingError):
    """No Redis answers at the URL of a setting."""


def shown_url(url: str) -> str:
    """``url`` with its password hidden, for messages.

    >>> shown_url("redis://:secret@db:6379/0"), shown_url("unix:///tmp/r.sock")
    ('redis://:***@db:6379/0', 'unix:///tmp/r.sock')
    """
    scheme, sep, rest = url.partition("://")
    userinfo, at, hosts = rest.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    return f"{scheme}{sep}{userinfo.split(':', 1)[0]}:***@{hosts}"


def require_answer(url: str, setting: str = "REDIS_URL") -> None:
    """Return if a Redis answers a PING at ``url``; else raise :class:`RedisUnreachable`
    naming ``setting`` and ``url`` (its password hidden) and saying why. A URL that
    :func:`connect` refuses raises :class:`SettingError`."""
    check_url(url, setting)
    try:
        client = connect(url, setting)  # (a cluster client asks its nodes for the slots at once)
        try:
            client.ping()
        finally:
            client.close()
    except SettingError:
        raise
    except (redis.RedisError, RedisClusterException, OSError) as exc:
        raise RedisUnreachable(f"{setting}: Redis is unreachable at {shown_url(url)} ({exc})") from exc


class Scripts:
    """Runs the storage's Lua scripts: ``scripts(script, keys, args)`` is redis-py's
    ``script(keys=keys, args=args)`` (``EVALSHA``; on ``NOSCRIPT`` the script is loaded and
    run again). On a single Redis with ``kept`` (the default) the ``EVALSHA`` goes on a
    kept connection (:mod:`.kept`); on a cluster, or without ``kept``, through redis-py."""

    def __init__(self, client: Any, kept: bool = True) -> None:
        self.client = client
        pool = getattr(client, "connection_pool", None)
        #: The kept connections (``None``: every call through redis-py).
        self.kept = KeptConnections(pool) if kept and pool is not None and not is_cluster(client) else None

    def __call__(self, script: Script, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """The reply of ``script`` run over ``keys`` and ``args``."""
        if self.kept is not None:
            with contextlib.suppress(NoScriptError):  # (redis-py loads it and runs it again)
                return self.kept.call("EVALSHA", script.sha, len(keys), *keys, *args)
        return script(keys=keys, args=args)


def jobs_url(url: str, jobs: str) -> str:
    """The URL of the Redis for jobs (RQ): ``jobs`` (``MAYI_JOBS_REDIS_URL``) if set, else
    ``url`` (``REDIS_URL``) when that is not a cluster. RQ does not run on a Redis
    Cluster: a cluster for either is refused with :class:`SettingError` naming the setting."""
    if jobs:
        if is_cluster_url(jobs):
            raise SettingError(
                "MAYI_JOBS_REDIS_URL: RQ jobs cannot run on a Redis Cluster; name a single Redis "
                "(redis://, rediss://, unix://) or one watched by Sentinels (redis+sentinel://)"
            )
        return jobs
    if is_cluster_url(url):
        raise SettingError(
            "MAYI_JOBS_REDIS_URL: REDIS_URL names a Redis Cluster, on which RQ jobs (the turn clocks) "
            "cannot run: set MAYI_JOBS_REDIS_URL to a separate, non-cluster Redis for jobs"
        )
    return url


def reachable(client: Any) -> bool:
    """Does Redis answer? For a cluster: does every primary answer, and say the cluster is ok
    (every slot served)? Never raises."""
    try:
        if not is_cluster(client):
            return bool(client.ping())
        primaries = client.get_primaries()
        if not primaries:
            return False
        for node in primaries:
            info = client.get_redis_connection(node).execute_command("CLUSTER INFO")
            if isinstance(info, dict):
                if info.get("cluster_state") not in ("ok", b"ok"):
                    return False
            elif b"cluster_state:ok" not in (info if isinstance(info, bytes) else str(info).encode()):
                return False
        return True
    except Exception:
        return False
