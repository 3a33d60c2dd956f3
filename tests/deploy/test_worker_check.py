"""``mayi worker --check``, the job workers' container healthcheck: it passes while this
machine's worker of those ``--jobs`` is registered in Redis, and fails once it is gone."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from ladder_workers import _env, ladder_settings, wait_for
from serving import MAYI, kill_all_in

from mayi_service.config import Settings


def _check(settings: Settings, jobs: str) -> subprocess.CompletedProcess[str]:
    argv = [str(MAYI), "worker", "--jobs", jobs, "--check"]
    return subprocess.run(argv, env=_env(settings), capture_output=True, text=True, timeout=60, check=False)


def test_the_check_follows_the_worker_registered_in_redis(redis_url: str, tmp_path: Path) -> None:
    settings = ladder_settings(redis_url)  # queues of its own
    assert _check(settings, "games,webhooks").returncode == 1  # no worker yet
    with (tmp_path / "worker.log").open("wb") as log:
        worker = subprocess.Popen(
            [str(MAYI), "worker", "--jobs", "games,webhooks"],
            env=_env(settings),
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for(lambda: _check(settings, "games,webhooks").returncode == 0, "the check passing", cap=120)
        other = _check(settings, "ladder")  # no worker of the ladder's queue runs
        assert other.returncode == 1
        assert other.stderr.strip().splitlines() == [
            f"Error: no RQ worker of --jobs ladder on {socket.gethostname()} is registered in Redis"
        ]
        worker.kill()  # SIGKILL: its key stays in Redis until its TTL, but no process is left
        worker.wait(60)
        assert _check(settings, "games,webhooks").returncode == 1
    finally:
        worker.kill()
        worker.wait(60)
        kill_all_in(tmp_path)
