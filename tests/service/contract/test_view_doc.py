"""docs/view.md, the game view's fields for bot authors, is what ``mayi view-doc`` writes from
the schemas, and it names every field a real view carries."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mayi_service.api.view_doc import render
from mayi_service.cli import main

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "view.md"


def test_the_committed_view_doc_is_what_the_schemas_give() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), "docs/view.md is stale: run 'mayi view-doc' and commit it"
    checked = CliRunner().invoke(main, ["view-doc", "--check", "-o", str(DOC)])
    assert checked.exit_code == 0 and "up to date" in checked.output, checked.output


def test_view_doc_check_fails_on_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "view.md"
    stale.write_text("# old\n", encoding="utf-8")
    checked = CliRunner().invoke(main, ["view-doc", "--check", "-o", str(stale)])
    assert checked.exit_code == 1 and "is stale: run 'mayi view-doc'" in checked.output, checked.output


def paths(value: Any, prefix: str = "") -> set[str]:
    """The dotted paths of ``value``'s fields, as docs/view.md writes them (``seats[].down``);
    the entries of ``legal`` (each move's body) are the "Legal moves" section's."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            found.add(path)
            if path != "legal":
                found |= paths(item, path)
    elif isinstance(value, list):
        for item in value:
            found |= paths(item, prefix + "[]")
    return found


def documented_paths(text: str) -> set[str]:
    return set(re.findall(r"^\| `([^`]+)` \|", text, re.M))


def test_every_field_of_real_views_is_documented(client: Any) -> None:
    created = client.post(
        "/v1/games", json={"variant": "may_i", "seats": 3, "players": [{"name": n} for n in ("Ann", "Bob")]}
    ).get_json()
    waiting = client.get(f"/v1/games/{created['game_id']}").get_json()
    assert waiting["status"] == "waiting"
    client.post(f"/v1/games/{created['game_id']}/seats", json={"name": "Cy"})
    ann = {"Authorization": f"Bearer {created['seats'][0]['token']}"}
    playing = client.get(f"/v1/games/{created['game_id']}", headers=ann).get_json()
    assert playing["status"] == "playing" and playing["legal"], playing

    text = DOC.read_text(encoding="utf-8")
    documented = documented_paths(text)
    for view in (waiting, playing):
        missing = paths(view) - documented
        assert not missing, f"docs/view.md does not name {sorted(missing)}"
    for move in playing["legal"]:
        section = text.split(f"### `{move['type']}`", 1)[1].split("\n### ", 1)[0]
        assert set(move) - {"type"} <= documented_paths(section), (move, section)


def test_the_bot_guide_links_to_the_view_doc() -> None:
    assert "(view.md)" in (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
