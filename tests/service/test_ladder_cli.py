"""``mayi ladder run`` (a local ladder of the house bots on worker processes) and ``mayi replay``,
run as the real commands on the suite's Redis."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest
from serving import MAYI, kill_all_in

#: Caps (not timings): the commands run on a loaded machine.
RUN_CAP = 600


@pytest.fixture
def env(redis_url: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("MAYI_")}
    return {
        **base,
        "REDIS_URL": redis_url,
        "MAYI_KEY_PREFIX": f"t{uuid.uuid4().hex[:10]}",
        "MAYI_QUEUE_NAME": f"q{uuid.uuid4().hex[:10]}",
        "MAYI_LADDER_START_ROUND": "7",  # the last round only: short matches
        "PYTHONUNBUFFERED": "1",
    }


def mayi(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    if MAYI is None:
        pytest.skip("the mayi command is not installed")
    try:
        return subprocess.run(
            [str(MAYI), *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=RUN_CAP, check=False
        )
    finally:
        kill_all_in(tmp_path)


def test_ladder_run_plays_the_matches_on_workers_and_prints_the_board_then_replays_read(
    tmp_path: Path, env: dict[str, str]
) -> None:
    done = mayi(tmp_path, env, "ladder", "run", "--matches", "3", "--workers", "2", "--players", "3", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["matches"] == 3 and result["workers"] == 2 and result["variant"] == "may_i"
    assert result["matches_per_minute"] > 0 and 0 <= result["overhead_share"] < 1
    board = result["leaderboard"]
    assert sum(row["games"] for row in board) == 3 * 3
    assert [row["rank"] for row in board] == list(range(1, len(board) + 1))
    game_id = result["match_ids"][0]

    text = mayi(tmp_path, env, "replay", game_id)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"Game {game_id} (may_i)")
    assert any(line.startswith("Round 7: ") for line in lines)
    assert sum(" is dealt " in line for line in lines) == 3
    assert any(" discards " in line for line in lines)
    assert "Final standings:" in lines
    replay = json.loads(mayi(tmp_path, env, "replay", game_id, "--json").stdout)
    assert replay["id"] == game_id and replay["events"][-1]["type"] == "game_ended"
    for place, line in zip(sorted(replay["totals"]), lines[-3:], strict=True):
        assert line.rstrip().endswith(str(place))

    table = mayi(tmp_path, env, "ladder", "run", "--matches", "1", "--players", "3")
    assert table.returncode == 0, table.stderr
    assert "1 matches of may_i with 1 worker(s)" in table.stdout and "rank" in table.stdout


def test_replay_names_the_game_it_cannot_find(tmp_path: Path, env: dict[str, str]) -> None:
    missing = mayi(tmp_path, env, "replay", "no-such-game")
    assert missing.returncode == 1
    assert "GAME_ID" in missing.stderr and "no-such-game" in missing.stderr


def test_ladder_run_refuses_a_table_size_the_variant_does_not_have(tmp_path: Path, env: dict[str, str]) -> None:
    refused = mayi(tmp_path, env, "ladder", "run", "--players", "7")
    assert refused.returncode == 2 and "--players" in refused.stderr and "2 to 6 players" in refused.stderr
