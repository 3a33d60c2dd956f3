"""``mayi serve`` (the API, its embedded Redis and job workers, supervised) and ``mayi
worker`` (the RQ job workers)."""

from __future__ import annotations

import os
from typing import Any

import click

# Nothing imported here may import requests or redis (the SDK and the bots do): `mayi serve`
# patches ssl for gevent before they take hold of its classes (see serve).
from mayi_service.cli.base import data_dir_option, main, require_redis
from mayi_service.config import Settings


def _check_port(host: str, port: int) -> None:
    """Fail in one line naming ``--host`` or ``--port`` unless this process may listen on
    ``host:port`` now (bound as gunicorn binds, with SO_REUSEADDR, then let go)."""
    import errno
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise click.ClickException(f"--host: {host!r} is not an address to listen on ({exc.strerror})") from exc
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                why = "another program listens there: stop it, or choose another --port"
                raise click.ClickException(f"--port: {host}:{port} is in use ({why})") from exc
            if exc.errno == errno.EADDRNOTAVAIL:
                raise click.ClickException(f"--host: {host} is not an address of this machine") from exc
            raise click.ClickException(f"--port: cannot listen on {host}:{port} ({exc.strerror})") from exc


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True, help="API processes.")
@click.option(
    "--connections",
    type=click.IntRange(1, 100_000),
    default=None,
    help="Connections each API process serves at once (gevent; default MAYI_WORKER_CONNECTIONS or 4000).",
)
@click.option("--no-worker", is_flag=True, help="Do not start the job workers (clocks, house bots, webhooks, ladder).")
@data_dir_option
def serve(host: str, port: int, workers: int, connections: int | None, no_worker: bool) -> None:
    """Run the API and its job workers. Without REDIS_URL, on an embedded Redis in ./var
    (--data-dir, MAYI_DATA_DIR).

    The job workers (MAYI_GAME_WORKERS for clocks and house bots, MAYI_WEBHOOK_WORKERS,
    MAYI_LADDER_WORKERS) and the embedded Redis are children of this process: they are
    started again if they die, and stopped when it stops (even when it is killed).
    """
    # The API's gevent workers are forks of this process, and patch the standard library as
    # they start: ssl is patched here, before redis and requests take hold of its classes
    # (gevent's MonkeyPatchWarning otherwise, and TLS connections that would block a worker).
    from gevent import monkey

    monkey.patch_ssl()

    import signal
    import subprocess
    import sys

    from mayi_service import gunicorn_config as conf
    from mayi_service.config import Settings
    from mayi_service.processes import Supervisor, die_with_parent
    from mayi_service.server.worker import run_api
    from mayi_service.storage.connections import check_url, jobs_url
    from mayi_service.storage.embedded import DataDirInUse, prepare_embedded

    settings = Settings.from_env()
    try:
        if settings.redis_url:
            check_url(settings.redis_url)
        jobs_url(settings.redis_url, settings.jobs_redis_url)  # RQ cannot run on a cluster
        if settings.jobs_redis_url:
            check_url(settings.jobs_redis_url, "MAYI_JOBS_REDIS_URL")
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    _check_port(host, port)  # before anything starts: gunicorn would retry, then fail in ten lines
    gave_up: list[str] = []

    def give_up(name: str) -> None:
        gave_up.append(name)
        os.kill(os.getpid(), signal.SIGTERM)  # gunicorn stops; the exit status says why

    supervisor = Supervisor(give_up)
    if settings.redis_url:
        url, where = settings.redis_url, "Redis at REDIS_URL"
    else:
        try:
            embedded = prepare_embedded(settings.data_dir)
        except DataDirInUse as exc:
            raise click.ClickException(str(exc)) from exc
        url, where = embedded.url, "embedded Redis in " + embedded.dir
        supervisor.add("the embedded redis-server", embedded.launch, stop_seconds=30)
    env = dict(os.environ, REDIS_URL=url)
    if not no_worker:
        sizes = {"games": settings.game_workers, "webhooks": settings.webhook_workers}
        sizes["ladder"] = settings.ladder_workers
        for kind, count in sizes.items():
            for number in range(1, count + 1):

                def start_worker(kind: str = kind) -> subprocess.Popen[bytes]:
                    command = [sys.executable, "-m", "mayi_service.cli", "worker", "--jobs", kind]
                    # SIGKILL: a worker whose parent is gone must not finish a match first (RQ's
                    # warm shutdown would); every job is resumed or played by the clock.
                    return subprocess.Popen(command, env=env, preexec_fn=die_with_parent(signal.SIGKILL))

                name = f"the {kind} job worker" + (f" {number}" if count > 1 else "")
                supervisor.add(
                    name,
                    start_worker,
                    stop_seconds=settings.worker_stop_seconds,
                    stage=1,
                    cut_short="its job in progress is resumed by the next run",
                )
    try:
        supervisor.start()
    except Exception as exc:
        supervisor.stop()
        raise click.ClickException(f"could not start: {exc}") from exc
    os.environ["REDIS_URL"] = url
    click.echo(f"May I game service on http://{host}:{port} ({where})")
    click.echo(f"  Web table: http://{host}:{port}/")
    click.echo(f"  API reference: http://{host}:{port}/docs/   OpenAPI: http://{host}:{port}/openapi.json")
    click.echo("  Stop with Ctrl+C.")
    try:
        # The job workers start stopping when the stop signal arrives, while the API drains.
        run_api(_make_app, host, port, workers, connections or conf.worker_connections, on_stop=supervisor.begin_stop)
    finally:
        supervisor.stop()
        if gave_up:  # gunicorn exits with status 0 on the SIGTERM: say why, and exit with 3
            click.echo(f"mayi serve: {gave_up[0]} keeps dying; stopping (exit status 3)", err=True)
            raise SystemExit(3)


def _job_kinds(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
    from mayi_service.play.clock import JOB_KINDS

    kinds = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in JOB_KINDS]
    if unknown or not kinds:
        raise click.BadParameter(f"{', '.join(unknown) or value!r}: choose among {', '.join(JOB_KINDS)}")
    return kinds


@main.command()
@click.option("--burst", is_flag=True, help="Run the jobs that are due, then exit.")
@click.option("--no-sweeper", is_flag=True, help="Only RQ's clock jobs: no clock timer, no sweep for overdue clocks.")
@click.option(
    "--jobs",
    "kinds",
    default="games,webhooks,ladder",
    show_default=True,
    callback=_job_kinds,
    help="The kinds of job to run, comma-separated: games (clocks, house bots), webhooks, ladder.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Start nothing: exit 0 if this machine's worker of these --jobs is registered in Redis "
    "(its heartbeats keep it there), else 1. For a container's healthcheck.",
)
@data_dir_option
def worker(burst: bool, no_sweeper: bool, kinds: list[str], check: bool) -> None:
    """Run an RQ job worker: games in REDIS_URL, jobs in MAYI_JOBS_REDIS_URL (default: the
    same Redis, unless REDIS_URL is a cluster). Without REDIS_URL, on the embedded Redis in
    ./var (--data-dir, MAYI_DATA_DIR).

    Each kind of job has its queue: games (queue MAYI_QUEUE_NAME: the clock jobs and the
    house-bot decisions; this worker then also runs the clock timer and the sweeper),
    webhooks (MAYI_QUEUE_NAME-webhooks) and ladder (MAYI_QUEUE_NAME-ladder: matchmaking,
    queued every MAYI_LADDER_EVERY_SECONDS, and matches, each holding its worker for a
    whole game). Run the ladder apart (`mayi serve` does): a worker of several kinds takes
    them in that order, but a match it runs makes the others wait. A Redis that does not
    answer yet is waited for; when Redis goes away
    the worker waits for it and carries on; it stops on SIGINT or SIGTERM.
    """
    import threading

    from redis.exceptions import RedisClusterException

    from mayi_service.bots.webhooks import start_dispatcher
    from mayi_service.config import Settings
    from mayi_service.ladder.ticker import start_ticker
    from mayi_service.play.clock import start_sweeper, start_timer
    from mayi_service.play.rq_worker import run_worker
    from mayi_service.processes import die_with_parent
    from mayi_service.service import queue_names, worker_service

    # The RQ scheduler is a fork of this process: it must stop when this process ends.
    on_fork = die_with_parent()
    if on_fork is not None:
        os.register_at_fork(after_in_child=on_fork)
    settings = Settings.from_env()
    if check:
        _check_worker(settings, kinds)
        return
    require_redis(settings, wait_as="mayi worker")
    try:
        service = worker_service()
    except ValueError as exc:  # a setting that is wrong (it is named)
        raise click.ClickException(str(exc)) from exc
    except RedisClusterException as exc:
        raise click.ClickException(f"REDIS_URL: {exc}") from exc
    games, clock = service.games, service.clock
    stop = threading.Event()
    if not no_sweeper and not burst:
        if "games" in kinds:
            start_sweeper(games, clock, settings.sweep_seconds, stop)
            if settings.schedule_clock_jobs:
                start_timer(games, clock, settings.clock_poll_seconds, stop)
        if "ladder" in kinds:
            start_ticker(service.ladder, stop)
    if "webhooks" in kinds:  # the deliveries that fall due: retries, and attempts a dead worker left
        if burst:
            service.webhooks.dispatch()
        else:
            start_dispatcher(service.webhooks, stop)
    try:
        # RQ's scheduler queues the clock jobs (due later); webhooks and the ladder have none.
        scheduler = "games" in kinds
        run_worker(service.jobs, queue_names(settings, kinds), burst=burst, scheduler=scheduler)  # MAYI_JOBS_REDIS_URL
    finally:
        stop.set()


def _check_worker(settings: Settings, kinds: list[str]) -> None:
    """Fail (exit 1, one line) unless an RQ worker of this host, on the queues of ``kinds``,
    is registered in the jobs' Redis by a live ``mayi worker`` process of this machine: RQ
    keeps a worker's key only while it heartbeats (its TTL), so a hung or dead one drops out."""
    import socket

    from rq import Worker

    from mayi_service.service import queue_names, worker_service

    require_redis(settings)
    jobs = worker_service().jobs
    host, wanted = socket.gethostname(), sorted(queue_names(settings, kinds))

    def here(pid: int | None) -> bool:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                return b"worker" in cmdline.read()
        except OSError:
            return False

    if not any(w.hostname == host and sorted(w.queue_names()) == wanted and here(w.pid) for w in Worker.all(jobs)):
        raise click.ClickException(f"no RQ worker of --jobs {','.join(kinds)} on {host} is registered in Redis")


def _make_app() -> Any:
    """The API app, made in each gunicorn worker: the app (and prometheus_client) is imported
    there, after the master has set the metrics' multiprocess directory."""
    from mayi_service.api.app import create_app

    return create_app()
