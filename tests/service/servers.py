"""The app served over a real loopback socket, for tests whose contract is HTTP."""

from __future__ import annotations

import threading
from typing import Any

from werkzeug.serving import make_server


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


class Time:
    """A clock that tests move by hand (``time.now += 30``), for the service's ``clock``."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
