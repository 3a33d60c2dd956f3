"""``mayi simulate`` and ``mayi replay``: games played or shown in the terminal."""

from __future__ import annotations

import json
import os
import time

import click

# Nothing imported here may import requests or redis (the SDK and the bots do): `mayi serve`
# patches ssl for gevent before they take hold of its classes (see serve).
from mayi_engine.errors import MayIError
from mayi_engine.rules import VARIANTS, get_rules
from mayi_engine.simulate import simulate as run_simulation
from mayi_service.cli.base import data_dir_option, main, require_redis


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
@click.argument("game_id")
@click.option("--json", "as_json", is_flag=True, help="Print the replay as the API gives it (JSON).")
@data_dir_option
def replay(game_id: str, as_json: bool) -> None:
    """Print a finished game round by round: hands dealt, claims, melds, lay-offs, discards, scores.

    Reads the game from REDIS_URL (without it, the embedded Redis in ./var: --data-dir,
    MAYI_DATA_DIR)."""
    from mayi_service.config import Settings
    from mayi_service.play.replay_text import replay_lines
    from mayi_service.problem_types import ServiceError
    from mayi_service.service import Service
    from mayi_service.storage.repository import GameGone

    settings = Settings.from_env(schedule_clock_jobs=False)
    if not settings.redis_url and not os.path.isdir(settings.data_dir):
        where = os.path.abspath(settings.data_dir)
        raise click.ClickException(f"MAYI_DATA_DIR (--data-dir): no games are kept in {where}: it does not exist")
    require_redis(settings)
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
