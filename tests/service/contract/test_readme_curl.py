"""The README's curl walk-through runs as written against a real ``mayi serve``, and says
what the server does."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import requests
from serving import ready_server

README = Path(__file__).resolve().parents[3] / "README.md"


def walkthrough() -> str:
    """The shell block of "A game over HTTP, with curl", without its last command (a live
    event stream, which never ends by itself)."""
    text = README.read_text(encoding="utf-8").split("## A game over HTTP, with curl", 1)[1]
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block is not None
    lines = block.group(1).splitlines()
    assert lines[-1].startswith("curl -sN ") and "/events/stream" in lines[-1]
    return "\n".join(line for line in lines[:-1] if not line.startswith("API="))


def test_after_three_passes_the_server_draws_for_ann_as_the_readme_says(tmp_path: Path) -> None:
    if shutil.which("curl") is None or shutil.which("bash") is None:
        pytest.skip("needs curl and bash")
    script = walkthrough()
    assert "the server draws Ann's card from the stock for her" in " ".join(
        line.lstrip("# ") for line in script.splitlines() if line.startswith("#")
    )
    with ready_server(tmp_path) as served:
        ran = subprocess.run(
            ["bash", "-c", "set -e\n" + script],
            env={"API": served.url, "PATH": "/usr/bin:/bin"},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert ran.returncode == 0, ran.stderr
        game_id = json.loads((tmp_path / "game.json").read_text())["game_id"]
        events = requests.get(f"{served.url}/v1/games/{game_id}/events", params={"after": 0}, timeout=30).json()
    kinds = [(e["type"], e["seat"]) for e in events["events"]]
    passes = [i for i, kind in enumerate(kinds) if kind[0] == "passed"][:3]
    assert [kinds[i] for i in passes] == [("passed", 0), ("passed", 1), ("passed", 2)], kinds
    drew = events["events"][passes[-1] + 1]
    assert drew["type"] == "drew" and drew["seat"] == 0 and drew["data"]["source"] == "stock", drew
    assert ("went_down", 0) in kinds, kinds  # and her turn went on: she went down
