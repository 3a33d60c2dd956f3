"""``--data-dir`` (``MAYI_DATA_DIR``): the commands that use the embedded Redis find its data
wherever they are run from."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from serving import clean_env, kill_all_in, run_mayi

#: A cap (not a timing): the commands run on a loaded machine.
RUN_CAP = 600


def mayi(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_env(MAYI_LADDER_START_ROUND="7")  # the last round only: a short match
    return run_mayi(cwd, env, *args, cap=RUN_CAP)


@pytest.mark.parametrize("command", [["serve"], ["worker"], ["replay"], ["ladder", "run"]])
def test_every_command_on_the_embedded_redis_takes_data_dir(tmp_path: Path, command: list[str]) -> None:
    shown = mayi(tmp_path, *command, "--help")
    assert shown.returncode == 0, shown.stderr
    assert "--data-dir" in shown.stdout and "MAYI_DATA_DIR" in " ".join(shown.stdout.split()), shown.stdout


def test_replay_from_another_folder_reads_the_games_of_data_dir(tmp_path: Path) -> None:
    here, there, store = tmp_path / "here", tmp_path / "there", tmp_path / "store"
    here.mkdir()
    there.mkdir()
    try:
        played = mayi(here, "ladder", "run", "--matches", "1", "--players", "3", "--json", "--data-dir", "../store")
        assert played.returncode == 0, played.stderr
        game_id = json.loads(played.stdout)["match_ids"][0]
        assert (store / "appendonly.aof").exists() or (store / "appendonlydir").exists()
        assert not (here / "var").exists()

        found = mayi(there, "replay", game_id, "--data-dir", "../store")
        assert found.returncode == 0, found.stderr
        assert found.stdout.startswith(f"Game {game_id} (may_i)"), found.stdout
        assert "Final standings:" in found.stdout

        # Without it, the default (./var) of the other folder holds no game: one line says where it looked.
        lost = mayi(there, "replay", game_id)
        assert lost.returncode == 1 and "Traceback" not in lost.stderr, lost.stderr
        assert "MAYI_DATA_DIR" in lost.stderr and str(there / "var") in lost.stderr, lost.stderr
    finally:
        for folder in (here, there, store):
            kill_all_in(folder)
