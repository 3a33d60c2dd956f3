"""The TypeScript worked example (examples/typescript/) against a real, default ``mayi serve``:
docs/api.md's commands run as written (``npm ci`` from the lock file, the types generated
by openapi-typescript from the committed document, ``tsc --strict --noUncheckedIndexedAccess``,
the count of casts, ``any`` and non-null assertions), then the program plays a whole game of
each variant, following the events by long-poll and by the stream."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving import Served, as_a_user_serves

ROOT = Path(__file__).resolve().parents[3]
API_DOC = ROOT / "docs" / "api.md"
EXAMPLE = ROOT / "examples" / "typescript"
MAYI = shutil.which("mayi", path=str(Path(sys.executable).parent)) or shutil.which("mayi")
#: Caps, never expected durations: npm ci and tsc on a loaded 2-core machine, and two whole games.
STEP_SECONDS = 600
PLAY_SECONDS = 900


def documented_commands() -> list[str]:
    """The lines of docs/api.md's TypeScript block, as written."""
    text = API_DOC.read_text(encoding="utf-8")
    found = re.search(r"<!-- typescript-example:[^\n]*-->\n```sh\n(.*?)```", text, re.S)
    assert found, "docs/api.md has no TypeScript example block"
    return [line for line in found.group(1).splitlines() if line.strip()]


def run(command: str, cwd: Path, seconds: float) -> str:
    done = subprocess.run(
        command, shell=True, cwd=cwd, capture_output=True, text=True, timeout=seconds, env=_node_env(), check=False
    )
    assert done.returncode == 0, f"{command} (in {cwd}) exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _node_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAYI_")}
    env.update({"npm_config_update_notifier": "false", "npm_config_fund": "false", "npm_config_audit": "false"})
    return env


def test_the_documented_commands_build_and_check_the_example() -> None:
    commands = documented_commands()
    assert commands[0] == "cd examples/typescript" and commands[-1].startswith("node dist/play.js ")
    assert "--default-non-nullable false" in " ".join(commands)
    assert "--strict --noUncheckedIndexedAccess" in " ".join(commands)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """``mayi serve`` as a user starts it: no options but the address (its job workers too),
    on an embedded Redis in its own directory; stopped, with all it started, at the end."""
    if MAYI is None:
        pytest.skip("the mayi command is not installed")
    with as_a_user_serves(MAYI, tmp_path) as server:
        yield server


def test_the_typescript_example_plays_a_whole_game_of_each_variant(served: Served) -> None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.fail("node and npm are needed (.ci/run installs Debian's nodejs and npm)")
    *build, play = documented_commands()
    cwd = ROOT
    for command in build:
        if command.startswith("cd "):
            cwd = (cwd / command[3:].strip()).resolve()
            continue
        output = run(command, cwd, STEP_SECONDS)
        if command.startswith("node count-escapes.mjs"):
            assert "0 casts, 0 any, 0 non-null assertions" in output, output
    assert cwd == EXAMPLE
    # Request fields with a default stay optional in the generated types (--default-non-nullable false).
    types = (EXAMPLE / "src" / "api.d.ts").read_text(encoding="utf-8")
    assert re.search(r"\bwebhook_url\?: string \| null;", types) and re.search(r"\bmax_games\?: number;", types)
    assert re.search(r"\bclaim_window: components\[\"schemas\"\]\[\"ClaimWindow\"\] \| \(never \| null\);", types)
    output = run(play.replace("http://127.0.0.1:8000", served.url), cwd, PLAY_SECONDS)
    for variant in ("may_i", "shanghai"):
        assert re.search(rf"^{variant}: game \S+ over after \d+ moves .*; \d+ rounds", output, re.M), output
        assert f"{variant}: " in output and "the same by long-poll and by the stream" in output
    assert "played 2 games" in output
