"""The child processes of ``mayi serve`` (the embedded Redis, the job workers): they never
outlive it, and they are restarted when they die.

Each child gets Linux's parent-death signal (SIGTERM when the thread that started it
ends, even by SIGKILL); one supervisor thread starts and polls them, restarts a child
that exits while the service runs and gives up on one that dies more than
:data:`MAX_RESTARTS` times in :data:`RESTART_WINDOW` seconds (``on_give_up``); children
stop by stage, the highest first (SIGTERM, then SIGKILL after their ``stop_seconds``).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
#: A child that dies more often than this within :data:`RESTART_WINDOW` seconds is given up on.
MAX_RESTARTS = 5
RESTART_WINDOW = 60.0
#: How often the supervisor looks at its children, in seconds.
POLL_SECONDS = 0.25


def die_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen`: the child receives ``sig`` when the
    thread that started it ends (Linux only; ``None`` elsewhere)."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved now, not in the forked child
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent died between fork and prctl
            os.kill(os.getpid(), sig)

    return preexec


@dataclass
class Child:
    """One supervised child: ``start`` starts it (and waits until it is ready). The children
    of the highest ``stage`` are stopped first."""

    name: str
    start: Callable[[], subprocess.Popen[bytes]]
    stop_seconds: float = 20.0
    stage: int = 0
    proc: subprocess.Popen[bytes] | None = None
    restarts: deque[float] = field(default_factory=deque)
    #: When it was sent SIGTERM (``time.monotonic()``), if it was.
    termed_at: float | None = None
    #: What becomes of its work when it is killed still busy (said at info: a stop's
    #: expected course); ``None``: such a kill is a warning.
    cut_short: str | None = None


class Supervisor:
    """Starts children from one thread, restarts those that die, stops them stage by stage."""

    def __init__(self, on_give_up: Callable[[str], None]) -> None:
        self.children: list[Child] = []
        self.on_give_up = on_give_up
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._exit = threading.Event()
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="mayi-supervisor", daemon=True)

    def add(
        self,
        name: str,
        start: Callable[[], subprocess.Popen[bytes]],
        stop_seconds: float = 20.0,
        stage: int = 0,
        cut_short: str | None = None,
    ) -> None:
        self.children.append(Child(name, start, stop_seconds, stage, cut_short=cut_short))

    def start(self, seconds: float = 120.0) -> None:
        """Start every child, in order, and return once they are all ready."""
        self._thread.start()
        if not self._started.wait(seconds):
            raise RuntimeError(f"the service's processes did not start within {seconds:.0f} s")
        if self._error is not None:
            raise self._error

    def begin_stop(self) -> None:
        """Restart nothing from now on, and send SIGTERM to the children of the highest stage
        without waiting (safe in a signal handler: it takes no lock)."""
        self._stopping.set()
        stages = [c.stage for c in self.children]
        for child in self.children:
            if child.stage == max(stages) and child.termed_at is None:
                _term(child)

    def stop(self) -> None:
        """Stop the children, stage by stage (the highest first), and the supervising thread."""
        self._stopping.set()
        with self._lock:
            for stage in sorted({c.stage for c in self.children}, reverse=True):
                group = [c for c in self.children if c.stage == stage]
                for child in group:
                    if child.termed_at is None:
                        _term(child)
                for child in group:
                    _reap(child)
        # Only now may the thread end: its end sends the parent-death signal to every child.
        self._exit.set()
        if self._thread.is_alive():
            self._thread.join(10)

    def _run(self) -> None:
        try:
            for child in self.children:
                child.proc = child.start()
        except BaseException as exc:
            self._error = exc
            self._started.set()
            return
        self._started.set()
        while not self._exit.wait(POLL_SECONDS):
            with self._lock:
                for child in self.children:
                    if self._stopping.is_set():
                        break
                    if child.proc is not None and child.proc.poll() is not None:
                        self._restart(child)
        # Leaving this thread sends the parent-death signal to any child still running.

    def _restart(self, child: Child) -> None:
        """Start ``child`` again; a start that fails counts as one more death."""
        assert child.proc is not None
        log.error("%s exited with %s; starting it again", child.name, child.proc.returncode)
        child.proc = None
        while child.proc is None and not self._stopping.is_set():
            now = time.monotonic()
            while child.restarts and child.restarts[0] < now - RESTART_WINDOW:
                child.restarts.popleft()
            if len(child.restarts) >= MAX_RESTARTS:
                log.critical("%s died %d times within %.0f s: giving up", child.name, MAX_RESTARTS, RESTART_WINDOW)
                self.on_give_up(child.name)
                return
            child.restarts.append(now)
            try:
                child.proc = child.start()
            except Exception as exc:
                log.error("starting %s again failed: %s", child.name, exc)


def _term(child: Child) -> None:
    child.termed_at = time.monotonic()
    proc = child.proc
    if proc is not None and proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()


def _reap(child: Child) -> None:
    """Wait for a child sent SIGTERM until its ``stop_seconds`` (from the SIGTERM) are up; then SIGKILL it."""
    proc = child.proc
    if proc is None:
        return
    left = child.stop_seconds - (time.monotonic() - (child.termed_at or time.monotonic()))
    try:
        proc.wait(max(0.0, left))
    except subprocess.TimeoutExpired:
        if child.cut_short is not None:
            seconds = child.stop_seconds
            log.info("%s was still busy %.0f s after SIGTERM: killed (%s)", child.name, seconds, child.cut_short)
        else:
            log.warning("%s did not stop within %.0f s of SIGTERM: killing it", child.name, child.stop_seconds)
        proc.kill()
        proc.wait(10)
