"""Test helpers for the ladder: ``mayi worker`` processes on the suite's Redis, and the
in-process :class:`Ladder` sharing their key prefix and queues.

Every worker a test starts runs in its own process group, in a directory of its own,
and is killed when the test ends, also when it fails.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from serving import MAYI, STOP_SECONDS, kill_all_in

from mayi_service.config import Settings
from mayi_service.ladder.matches import Ladder
from mayi_service.service import Service

#: Caps of the waits for a state (generous: CI runs on a loaded 2-core machine); never timings.
MATCH_CAP = 300.0


def ladder_settings(redis_url: str, **changes: Any) -> Settings:
    """Settings with a key prefix and queues of their own, and a ladder quick to react."""
    base = {
        "redis_url": redis_url,
        "key_prefix": f"t{uuid.uuid4().hex[:10]}",
        "queue_name": f"q{uuid.uuid4().hex[:10]}",
        "rate_limits_enabled": False,
        "schedule_clock_jobs": True,
        "ladder_every_seconds": 1.0,
        "ladder_lease_seconds": 3.0,
        "ladder_variants": ("may_i",),
        "ladder_start_round": 7,
        "ladder_turn_seconds": 600.0,
        "ladder_claim_seconds": 600.0,
    }
    base.update(changes)
    return Settings(**base)


def make_ladder(settings: Settings) -> Ladder:
    return Service(settings).ladder


def _env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("MAYI_")}
    env["REDIS_URL"] = settings.redis_url
    env["PYTHONUNBUFFERED"] = "1"
    defaults = Settings()
    for name, value in vars(settings).items():
        if name == "redis_url" or value == getattr(defaults, name):
            continue
        text = (
            ",".join(value)
            if isinstance(value, tuple)
            else str(value).lower()
            if isinstance(value, bool)
            else str(value)
        )
        env[f"MAYI_{name.upper()}"] = text
    return env


class Worker:
    """One ``mayi worker`` process (its own process group)."""

    def __init__(self, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.proc = proc
        self.log = log

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL the worker and its RQ scheduler, as a crash would."""
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with suppress(subprocess.TimeoutExpired):
            self.proc.wait(STOP_SECONDS)


@contextmanager
def workers(tmp_path: Path, settings: Settings) -> Iterator[Callable[[], Worker]]:
    """A factory of ``mayi worker`` processes on ``settings``; all are killed on exit."""
    if MAYI is None:
        pytest.skip("the mayi command is not installed")
    started: list[tuple[Worker, Path]] = []

    def start() -> Worker:
        workdir = tmp_path / f"worker{len(started)}"
        workdir.mkdir()
        log = tmp_path / f"worker{len(started)}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [str(MAYI), "worker"],
                env=_env(settings),
                cwd=workdir,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        worker = Worker(proc, log)
        started.append((worker, workdir))
        return worker

    try:
        yield start
    finally:
        for worker, workdir in started:
            worker.kill()
            kill_all_in(workdir)


def wait_for(predicate: Callable[[], Any], what: str, cap: float = MATCH_CAP, logs: Sequence[Worker] = ()) -> Any:
    """Poll ``predicate`` until it is true; fail naming ``what`` after ``cap`` seconds."""
    end = time.monotonic() + cap
    while time.monotonic() < end:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    found = predicate()
    if not found:
        pytest.fail(f"{what}: not within {cap} s\n" + "\n".join(w.output()[-3000:] for w in logs))
    return found
