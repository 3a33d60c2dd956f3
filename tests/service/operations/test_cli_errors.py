"""Every bad setting a ``mayi`` command meets ends it in one line that names the setting (or
the option, or the path), with a non-zero exit status: never a traceback, never a banner
first. The commands run as real subprocesses of the installed ``mayi``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from serving import MAYI, RedisProcess, clean_env, free_port, kill_all_in, ready_server, run_mayi, wait_until

#: Caps of the waits (not timings): the machine may be loaded.
CAP = 120


def mayi(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_mayi(cwd, env, *args, cap=CAP)


def assert_one_line(ran: subprocess.CompletedProcess[str], *named: str) -> None:
    """Exit status non-zero, nothing on stdout (no banner), one line on stderr naming ``named``."""
    shown = f"exit {ran.returncode}\nstdout:\n{ran.stdout}\nstderr:\n{ran.stderr}"
    assert ran.returncode not in (0, None), shown
    assert "Traceback" not in ran.stderr, shown
    assert ran.stdout == "", shown
    assert len(ran.stderr.splitlines()) == 1, shown
    for name in named:
        assert name in ran.stderr, shown


#: Redis on a port nothing listens on (1 is tcpmux: reserved, never served here).
UNREACHABLE = "redis://127.0.0.1:1/0"


@pytest.mark.parametrize(
    ("env", "args", "named"),
    [
        ({"REDIS_URL": "garbage"}, ["replay", "some-game"], ["REDIS_URL", "garbage"]),
        ({"REDIS_URL": "garbage"}, ["serve", "--no-worker"], ["REDIS_URL", "garbage"]),
        ({"REDIS_URL": "garbage"}, ["ladder", "run", "--matches", "1"], ["REDIS_URL", "garbage"]),
        ({"REDIS_URL": "garbage"}, ["worker"], ["REDIS_URL", "garbage"]),
        ({"MAYI_JOBS_REDIS_URL": "garbage"}, ["serve", "--no-worker"], ["MAYI_JOBS_REDIS_URL", "garbage"]),
        ({"REDIS_URL": UNREACHABLE}, ["replay", "some-game"], ["REDIS_URL", "127.0.0.1:1"]),
        ({"REDIS_URL": UNREACHABLE}, ["ladder", "run", "--matches", "1"], ["REDIS_URL", "127.0.0.1:1"]),
        ({"REDIS_URL": "redis://:hunter2@127.0.0.1:1/0"}, ["replay", "some-game"], ["REDIS_URL", ":***@"]),
        ({"MAYI_SWEEP_SECONDS": "often"}, ["worker"], ["MAYI_SWEEP_SECONDS", "often"]),
        ({"MAYI_MAX_WAIT_SECONDS": "1.5"}, ["serve", "--no-worker"], ["MAYI_MAX_WAIT_SECONDS", "1.5"]),
        ({}, ["openapi", "-o", "/nonexistent/dir/x.json"], ["--output", "/nonexistent/dir/x.json"]),
        ({}, ["serve", "--host", "no-such-host.invalid"], ["--host", "no-such-host.invalid"]),
        ({}, ["replay", "some-game", "--data-dir", "no-such-dir"], ["MAYI_DATA_DIR", "no-such-dir"]),
    ],
)
def test_a_bad_setting_ends_the_command_in_one_line_naming_it(
    tmp_path: Path, env: dict[str, str], args: list[str], named: list[str]
) -> None:
    ran = mayi(tmp_path, clean_env(**env), *args, *(["--port", str(free_port())] if args[0] == "serve" else []))
    assert_one_line(ran, *named)
    if args[0] == "serve":
        assert not (tmp_path / "var").exists()  # nothing started: the check came first


def test_serve_on_a_busy_port_says_so_in_one_line_before_starting_anything(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ran = mayi(tmp_path, clean_env(), "serve", "--port", str(port))
    assert_one_line(ran, "--port", f"127.0.0.1:{port}", "in use")
    assert not (tmp_path / "var").exists()  # no embedded Redis was started, no banner printed


@contextmanager
def _worker(tmp_path: Path, url: str, err: Path, server: RedisProcess) -> Iterator[subprocess.Popen[bytes]]:
    """``mayi worker`` on the Redis at ``url``, its stderr in ``err``; on the way out it is
    killed (its process group) and ``server`` is stopped, also when the test fails."""
    with err.open("wb") as ferr:
        proc = subprocess.Popen(
            [str(MAYI), "worker"], env=clean_env(REDIS_URL=url), cwd=tmp_path,
            stdout=subprocess.DEVNULL, stderr=ferr, start_new_session=True,
        )  # fmt: skip
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(CAP)
        server.stop()
        kill_all_in(tmp_path)


def test_a_worker_waits_for_an_unreachable_redis_in_one_line_then_starts(tmp_path: Path) -> None:
    if MAYI is None:
        pytest.skip("the mayi command is not installed")
    port = free_port()
    server = RedisProcess(tmp_path / "redis", port=port)
    err = tmp_path / "worker.err"
    with _worker(tmp_path, f"redis://127.0.0.1:{port}/0", err, server) as proc:
        assert wait_until(lambda: "waiting for it" in err.read_text(), CAP), err.read_text()
        # The sweeper (every 2 s) and the ladder's ticker (every 2.5 s) would have logged by now.
        wait_until(lambda: proc.poll() is not None, 6.0)
        waiting = err.read_text()
        assert proc.poll() is None, waiting
        assert len(waiting.splitlines()) == 1 and "Traceback" not in waiting, waiting
        assert "REDIS_URL" in waiting and f"127.0.0.1:{port}" in waiting, waiting

        server.start()
        client = server.client()
        try:
            # Up: it starts its RQ worker (registered in Redis) and says so, in one more line.
            assert wait_until(lambda: bool(client.smembers("rq:workers")), CAP), err.read_text()
        finally:
            client.close()
        assert "Redis answers; starting" in err.read_text()
        proc.send_signal(signal.SIGTERM)
        proc.wait(CAP)
        assert "Traceback" not in err.read_text(), err.read_text()


def test_serve_starts_without_gevents_monkey_patch_warning(tmp_path: Path) -> None:
    with ready_server(tmp_path) as served:
        assert served.stop() == 0
    assert "MonkeyPatchWarning" not in served.stderr(), served.stderr()
    assert "Traceback" not in served.stderr(), served.stderr()


def test_gunicorn_with_the_services_config_starts_without_the_warning(tmp_path: Path) -> None:
    """The Dockerfile's and the compose file's command: ``gunicorn -c python:mayi_service.gunicorn_config``."""
    from serving import healthy

    gunicorn = Path(str(MAYI)).parent / "gunicorn" if MAYI else None
    if gunicorn is None or not gunicorn.exists():
        pytest.skip("gunicorn is not installed beside mayi")
    port = free_port()
    err = tmp_path / "gunicorn.err"
    command = [str(gunicorn), "-c", "python:mayi_service.gunicorn_config", "--bind", f"127.0.0.1:{port}"]
    command += ["--workers", "1", "mayi_service.wsgi:app"]
    with err.open("wb") as ferr:
        proc = subprocess.Popen(
            command,
            env=clean_env(MAYI_DATA_DIR=str(tmp_path / "data")),
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=ferr,
            start_new_session=True,
        )
    try:
        assert wait_until(lambda: healthy(f"http://127.0.0.1:{port}") or proc.poll() is not None, CAP)
        assert proc.poll() is None, err.read_text()
        proc.send_signal(signal.SIGTERM)
        proc.wait(CAP)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(CAP)
        kill_all_in(tmp_path)
    assert "MonkeyPatchWarning" not in err.read_text(), err.read_text()


def test_a_running_workers_loops_log_one_line_when_redis_goes_and_one_when_it_is_back(tmp_path: Path) -> None:
    """The clock timer (every 0.1 s), the sweeper (2 s), the ladder's ticker (0.5 s), the
    webhook dispatcher (1 s) and RQ's scheduler each say once that Redis is unreachable,
    however long it is away, and once that it answers again: no line each try, no
    traceback (RQ's scheduler died with two; RQ's worker wrote a line a try). RQ's worker
    may still quit (Redis gone in the middle of a job): the job worker says so, stops its
    scheduler with it (which may not have seen Redis go yet) and starts both again once
    Redis answers; a scheduler that saw Redis go is the one whose successor says it is back."""
    if MAYI is None:
        pytest.skip("the mayi command is not installed")
    server = RedisProcess(tmp_path / "redis")
    server.start()
    err = tmp_path / "worker.err"
    always = ("clock timer", "sweeper", "ladder", "webhook dispatcher")  # threads of the process
    loops = (*always, "RQ scheduler")

    def said(what: str) -> list[str]:
        return [line for line in err.read_text().splitlines() if line.startswith(loops) and what in line]

    def names(what: str) -> list[str]:
        return sorted(line.split(":")[0] for line in said(what))

    def worker_quit() -> bool:
        return "job worker: RQ's worker stopped" in err.read_text()

    with _worker(tmp_path, server.url, err, server) as proc:
        client = server.client()
        try:
            assert wait_until(lambda: bool(client.smembers("rq:workers")), CAP), err.read_text()
        finally:
            client.close()
        server.kill()
        assert wait_until(
            lambda: (
                set(always) <= set(names("unreachable")) and ("RQ scheduler" in names("unreachable") or worker_quit())
            ),
            CAP,
        ), err.read_text()
        # Many more tries of every loop (the timer's 1 s, the sweeper's 2 s, the ticker's
        # 0.5 s) while it stays away: still one line each.
        wait_until(lambda: proc.poll() is not None, 6.0)
        gone = names("unreachable")
        assert gone in (sorted(loops), sorted(always)), err.read_text()
        assert gone == sorted(loops) or worker_quit(), err.read_text()
        server.start()
        assert wait_until(lambda: names("answers again") == gone, CAP), err.read_text()
        assert names("unreachable") == gone, err.read_text()
        # Nothing else of theirs (a failure they log with its traceback starts with their name too).
        theirs = [line for line in err.read_text().splitlines() if line.startswith(loops)]
        assert len(theirs) == 2 * len(gone), err.read_text()
        assert "Traceback" not in err.read_text(), err.read_text()
        assert "could not connect to Redis instance" not in err.read_text(), err.read_text()
