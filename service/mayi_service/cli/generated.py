"""``mayi openapi`` and ``mayi view-doc``: the generated documents, written or checked."""

from __future__ import annotations

import click

from mayi_service.cli.base import main, write_generated


@main.command()
@click.option("--output", "-o", default="openapi/openapi.json", show_default=True, type=click.Path(dir_okay=False))
@click.option("--check", is_flag=True, help="Exit 1 if the file differs from what the app generates.")
def openapi(output: str, check: bool) -> None:
    """Write the OpenAPI document generated from the app."""
    from mayi_service.api.openapi import render

    write_generated(output, render(), check, "mayi openapi")


@main.command("view-doc")
@click.option("--output", "-o", default="docs/view.md", show_default=True, type=click.Path(dir_okay=False))
@click.option("--check", is_flag=True, help="Exit 1 if the file differs from what the schemas give.")
def view_doc(output: str, check: bool) -> None:
    """Write docs/view.md, every field of the game view, from the app's schemas."""
    from mayi_service.api.view_doc import render

    write_generated(output, render(), check, "mayi view-doc")


if __name__ == "__main__":  # pragma: no cover
    main()
