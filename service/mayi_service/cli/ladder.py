"""``mayi ladder``: the bots' ladder, run locally."""

from __future__ import annotations

import json

import click

# Nothing imported here may import requests or redis (the SDK and the bots do): `mayi serve`
# patches ssl for gevent before they take hold of its classes (see serve).
from mayi_engine.rules import VARIANTS, get_rules
from mayi_service.cli.base import data_dir_option, main, require_redis
from mayi_service.config import Settings


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
    from mayi_service.cli.local_ladder import run_local_ladder

    rules = get_rules(variant)
    if players is not None and not rules.min_players <= players <= rules.max_players:
        raise click.BadParameter(
            f"{rules.title} is for {rules.min_players} to {rules.max_players} players, not {players}",
            param_hint="--players",
        )
    require_redis(Settings.from_env())
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
