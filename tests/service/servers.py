"""The app served over a real loopback socket, for tests whose contract is HTTP."""

from __future__ import annotations

import subprocess
import threading
import time
from typing import Any

from werkzeug.serving import make_server

from mayi_sdk import Bot, Client, RunStats, run_polling


class LiveServer:
    """The app served by a real HTTP server on a loopback socket."""

    def __init__(self, app: Any) -> None:
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(5)


def terminate(process: subprocess.Popen[Any], seconds: float = 30) -> None:
    """Stop a process a test started: SIGTERM, then SIGKILL if it is still there after ``seconds``."""
    process.terminate()
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(seconds)


class Time:
    """A clock that tests move by hand (``time.now += 30``), for the service's ``clock``."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


#: The runners' long-poll wait: long, so that a poll the service should answer at once
#: (a decision, the last game's end) and does not would hold a test up to its cap.
WAIT = 60.0


class PollingBots:
    """``run_polling`` threads, one per bot client (the ``runners`` fixture stops them however the test ends)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.stats: list[RunStats] = []
        self.crashed: list[BaseException] = []

    def start(self, bot: Bot, client: Client) -> None:
        def run() -> None:
            try:
                self.stats.append(run_polling(bot, client, wait=WAIT, stop=self.stop, until_idle=True))
            except BaseException as exc:  # pragma: no cover - reported by the test
                self.crashed.append(exc)

        thread = threading.Thread(target=run, daemon=True)
        self.threads.append(thread)
        thread.start()

    def join(self, cap: float) -> None:
        end = time.monotonic() + cap
        for thread in self.threads:
            thread.join(max(0.1, end - time.monotonic()))
        assert not self.crashed, self.crashed
        assert not any(t.is_alive() for t in self.threads), "the bots did not finish within the cap"
