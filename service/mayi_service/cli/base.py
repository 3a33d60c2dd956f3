"""The ``mayi`` command group, and what its commands share: ``--data-dir`` and the check
that Redis answers."""

from __future__ import annotations

import os
import time
from typing import Any

import click

# Nothing imported here may import requests or redis (the SDK and the bots do): `mayi serve`
# patches ssl for gevent before they take hold of its classes (see serve).
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


def require_redis(settings: Settings, wait_as: str | None = None) -> None:
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


def write_generated(output: str, text: str, check: bool, command: str) -> None:
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
