"""The ``mayi`` command line."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import click

# Nothing imported here may import requests or redis (the SDK and the bots do): `mayi serve`
# patches ssl for gevent before they take hold of its classes (see serve).
from mayi_engine.errors import MayIError
from mayi_engine.rules import VARIANTS, get_rules
from mayi_engine.simulate import simulate as run_simulation
from mayi_service.config import SettingError, Settings


class _Main(click.Group):
    """The ``mayi`` group: a setting that cannot be used ends any command in one line that names it."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SettingError as exc:
            raise click.ClickException(str(exc)) from exc


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mayi-game-service")
def main() -> None:
    """May I and Shanghai: rules engine, game service and tools."""


def _set_data_dir(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    # Through the environment: the processes the command starts read their settings from it.
    if value is not None:
        os.environ[Settings.env_name("data_dir")] = os.path.abspath(value)


#: ``--data-dir``, for the commands that use the embedded Redis.
data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    default=None,
    expose_value=False,
    callback=_set_data_dir,
    help=f"Where the embedded Redis keeps its data, when REDIS_URL is not set "
    f"(default: {Settings.env_name('data_dir')}, else ./{Settings.data_dir}).",
)


def _require_redis(settings: Settings, wait_as: str | None = None) -> None:
    """Fail in one line (a :class:`SettingError` naming it) unless a Redis answers at REDIS_URL
    and MAYI_JOBS_REDIS_URL, those set; with ``wait_as`` (the command's name), wait for one
    that does not answer instead, saying so once."""
    from mayi_service.storage.connections import RedisUnreachable, jobs_url, require_answer

    jobs_url(settings.redis_url, settings.jobs_redis_url)  # a cluster cannot hold the jobs: say so first
    for field in ("redis_url", "jobs_redis_url"):
        url, setting = getattr(settings, field), Settings.env_name(field)
        if not url:
            continue
        delay, said = 0.2, False
        while True:
            try:
                require_answer(url, setting)
                break
            except RedisUnreachable as exc:
                if wait_as is None:
                    raise
                if not said:
                    click.echo(f"{wait_as}: {exc}; waiting for it", err=True)
                    said = True
                time.sleep(delay)
                delay = min(5.0, delay * 2)
        if said:
            click.echo(f"{wait_as}: {setting}: Redis answers; starting", err=True)


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


def _bot_list(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
    from mayi_bots import NAMES as BOT_NAMES

    bots = [b.strip() for b in value.split(",") if b.strip()]
    if not bots:
        raise click.BadParameter(f"name at least one bot; choose from {', '.join(BOT_NAMES)}")
    unknown = [b for b in bots if b not in BOT_NAMES]
    if unknown:
        raise click.BadParameter(f"unknown bot {unknown[0]!r}; choose from {', '.join(BOT_NAMES)}")
    return bots


@main.command()
@click.option("--variant", type=click.Choice(sorted(VARIANTS)), default="may_i", show_default=True)
@click.option("--players", type=click.IntRange(2, 8), default=4, show_default=True, help="Seats at the table.")
@click.option("--games", type=click.IntRange(1, 1_000_000), default=10, show_default=True)
@click.option("--seed", type=int, default=None, help="Make the run reproducible (default: secret random seeds).")
@click.option(
    "--bots",
    callback=_bot_list,
    default="greedy,random",
    show_default=True,
    help="Comma-separated reference bots of mayi_bots (an unknown name lists them), one per seat, "
    "repeated cyclically if fewer than --players.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a machine-readable summary.")
@click.option("--no-check", is_flag=True, help="Skip the invariant checks after every action (faster).")
def simulate(
    variant: str, players: int, games: int, seed: int | None, bots: list[str], as_json: bool, no_check: bool
) -> None:
    """Play complete games in-process with the reference bots and summarise them."""
    rules = get_rules(variant)
    if not rules.min_players <= players <= rules.max_players:
        raise click.BadParameter(
            f"{rules.title} is for {rules.min_players} to {rules.max_players} players, not {players}",
            param_hint="--players",
        )
    if len(bots) > players:
        raise click.BadParameter(f"{len(bots)} bots given for {players} players", param_hint="--bots")
    from mayi_bots import policy_makers

    seats = [bots[i % len(bots)] for i in range(players)]
    makers = policy_makers(sorted(set(seats)))
    start = time.perf_counter()
    try:
        if as_json or games < 20:
            summary = run_simulation(rules, seats, games, seed, check=not no_check, players=makers)
        else:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            with Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                transient=True,
            ) as bar:
                task = bar.add_task(f"{rules.title}, {players} players", total=games)
                summary = run_simulation(
                    rules,
                    seats,
                    games,
                    seed,
                    check=not no_check,
                    players=makers,
                    progress=lambda done: bar.update(task, completed=done),
                )
    except MayIError as exc:
        raise click.ClickException(str(exc)) from exc
    summary.seconds = time.perf_counter() - start
    data = summary.as_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    _print_summary(data)
    if summary.violations:
        raise SystemExit(1)


def _print_summary(data: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(
        f"[bold]{data['games']}[/] games of [bold]{data['variant']}[/] with {data['players']} players: "
        f"{data['rounds']} rounds, {data['actions']:,} actions in {data['seconds']:.2f} s "
        f"([bold]{data['actions_per_second']:,.0f}[/] actions/s, {data['games_per_second']:.2f} games/s)"
    )
    console.print(
        f"Rounds ended by the stock safeguard: {data['safeguard_rounds']}; "
        f"invariant violations: [bold]{data['invariant_violations']}[/]"
    )
    for example in data["violation_examples"]:
        console.print(f"  [red]{example}[/]")
    table = Table("seat", "bot", "mean score", "wins")
    for key, row in data["bots"].items():
        seat, bot = key.split(":", 1)
        table.add_row(seat, bot, f"{row['mean_score']:.1f}", f"{row['wins']:g}")
    console.print(table)


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

    import os
    import signal
    import subprocess
    import sys

    from mayi_service import gunicorn_config as conf
    from mayi_service.config import Settings
    from mayi_service.processes import Supervisor, die_with_parent
    from mayi_service.server.worker import run_api
    from mayi_service.storage.connections import DataDirInUse, check_url, jobs_url, prepare_embedded

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
                supervisor.add(name, start_worker, stop_seconds=settings.worker_stop_seconds, stage=1)
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
        run_api(host, port, workers, connections or conf.worker_connections, on_stop=supervisor.begin_stop)
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
    import os
    import threading

    from redis.exceptions import RedisClusterException

    from mayi_service.bots.webhooks import start_dispatcher
    from mayi_service.config import Settings
    from mayi_service.ladder.matches import start_ticker
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
    _require_redis(settings, wait_as="mayi worker")
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

    _require_redis(settings)
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


@main.group()
def ladder() -> None:
    """The bot ladder (docs/ladder.md)."""


@ladder.command("run")
@click.option("--variant", type=click.Choice(sorted(VARIANTS)), default="may_i", show_default=True)
@click.option("--matches", type=click.IntRange(1, 100_000), default=50, show_default=True, help="Matches to play.")
@click.option("--workers", type=click.IntRange(1, 32), default=1, show_default=True, help="mayi worker processes.")
@click.option(
    "--players", type=click.IntRange(2, 8), default=None, help="Seats per table (default: the variant's counts)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the leaderboard (and the run's figures) as JSON.")
@data_dir_option
def ladder_run(variant: str, matches: int, workers: int, players: int | None, as_json: bool) -> None:
    """Run a local ladder of the house bots: WORKERS job workers play MATCHES matches.

    Without REDIS_URL, on the embedded Redis in ./var (--data-dir, MAYI_DATA_DIR). The ratings are
    kept there: a later run goes on from them, and each game's replay stays readable
    with `mayi replay GAME_ID`.
    """
    from mayi_service.ladder.run import run_local_ladder

    rules = get_rules(variant)
    if players is not None and not rules.min_players <= players <= rules.max_players:
        raise click.BadParameter(
            f"{rules.title} is for {rules.min_players} to {rules.max_players} players, not {players}",
            param_hint="--players",
        )
    _require_redis(Settings.from_env())
    try:
        result = run_local_ladder(variant, matches, workers, players, progress=not as_json)
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    _print_leaderboard(result)


def _print_leaderboard(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        console = Console(width=120)  # piped: no terminal width to fit, so never wrap the names
    console.print(
        f"[bold]{result['matches']}[/] matches of [bold]{result['variant']}[/] with {result['workers']} worker(s) "
        f"in {result['seconds']:.1f} s ([bold]{result['matches_per_minute']:.1f}[/] matches a minute)"
    )
    table = Table("rank", "bot", "rating", "mu", "sigma", "games", "wins", "mean score", "provisional")
    for row in result["leaderboard"]:
        mean = "-" if row["mean_score"] is None else f"{row['mean_score']:.1f}"
        table.add_row(
            str(row["rank"]),
            row["name"],
            f"{row['rating']:.2f}",
            f"{row['mu']:.2f}",
            f"{row['sigma']:.2f}",
            str(row["games"]),
            str(row["wins"]),
            mean,
            "yes" if row["provisional"] else "",
        )
    console.print(table)


@main.command()
@click.argument("game_id")
@click.option("--json", "as_json", is_flag=True, help="Print the replay as the API gives it (JSON).")
@data_dir_option
def replay(game_id: str, as_json: bool) -> None:
    """Print a finished game round by round: hands dealt, claims, melds, lay-offs, discards, scores.

    Reads the game from REDIS_URL (without it, the embedded Redis in ./var: --data-dir,
    MAYI_DATA_DIR)."""
    from mayi_service.api.problems import ServiceError
    from mayi_service.config import Settings
    from mayi_service.play.replay_text import replay_lines
    from mayi_service.service import Service
    from mayi_service.storage.repository import GameGone

    settings = Settings.from_env(schedule_clock_jobs=False)
    if not settings.redis_url and not os.path.isdir(settings.data_dir):
        where = os.path.abspath(settings.data_dir)
        raise click.ClickException(f"MAYI_DATA_DIR (--data-dir): no games are kept in {where}: it does not exist")
    _require_redis(settings)
    games = Service(settings).games
    try:
        found = games.replay(game_id)
    except GameGone as exc:
        raise click.ClickException(f"GAME_ID: no game {game_id!r} (or it has expired)") from exc
    except ServiceError as exc:
        raise click.ClickException(f"GAME_ID: {exc}") from exc
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    for line in replay_lines(found):
        click.echo(line)


def _write_generated(output: str, text: str, check: bool, command: str) -> None:
    """Write ``text`` to ``output``, or with ``check`` exit 1 unless ``output`` holds it already."""
    if check:
        try:
            with open(output, encoding="utf-8") as fh:
                current = fh.read()
        except FileNotFoundError:
            current = ""
        except OSError as exc:
            raise click.ClickException(f"--output: cannot read {output} ({exc.strerror})") from exc
        if current != text:
            raise click.ClickException(f"{output} is stale: run '{command}' and commit the result")
        click.echo(f"{output} is up to date")
        return
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise click.ClickException(f"--output: cannot write {output} ({exc.strerror})") from exc
    click.echo(f"wrote {output}")


@main.command()
@click.option("--output", "-o", default="openapi/openapi.json", show_default=True, type=click.Path(dir_okay=False))
@click.option("--check", is_flag=True, help="Exit 1 if the file differs from what the app generates.")
def openapi(output: str, check: bool) -> None:
    """Write the OpenAPI document generated from the app."""
    from mayi_service.api.openapi import render

    _write_generated(output, render(), check, "mayi openapi")


@main.command("view-doc")
@click.option("--output", "-o", default="docs/view.md", show_default=True, type=click.Path(dir_okay=False))
@click.option("--check", is_flag=True, help="Exit 1 if the file differs from what the schemas give.")
def view_doc(output: str, check: bool) -> None:
    """Write docs/view.md, every field of the game view, from the app's schemas."""
    from mayi_service.api.view_doc import render

    _write_generated(output, render(), check, "mayi view-doc")


if __name__ == "__main__":  # pragma: no cover
    main()
