"""``mayi ladder run`` (a local ladder of the house bots on worker processes) and ``mayi replay``,
run as the real commands on the suite's Redis."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import uuid
from pathlib import Path

import pytest
from ladder_workers import make_ladder, wait_for
from serving import MAYI, kill_all_in, run_mayi

from mayi_service.config import Settings
from mayi_service.ladder.matches import Ladder

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
    return run_mayi(tmp_path, env, *args, cap=RUN_CAP)


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


def _workers_of(pid: int) -> list[int]:
    """The live ``mayi worker`` processes that ``pid`` started."""
    import psutil

    try:
        children = psutil.Process(pid).children()
    except psutil.NoSuchProcess:
        return []
    found = []
    for child in children:
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.status() != psutil.STATUS_ZOMBIE and "worker" in child.cmdline():
                found.append(child.pid)
    return found


def test_ladder_run_replaces_a_killed_worker_and_its_match_resumes_with_no_clock_move(
    tmp_path: Path, env: dict[str, str]
) -> None:
    if MAYI is None:
        pytest.skip("the mayi command is not installed")
    settings = Settings(
        redis_url=env["REDIS_URL"], key_prefix=env["MAYI_KEY_PREFIX"], queue_name=env["MAYI_QUEUE_NAME"]
    )
    ladder = make_ladder(settings)
    out, err = tmp_path / "out.json", tmp_path / "err.txt"
    command = [str(MAYI), "ladder", "run", "--matches", "12", "--workers", "2", "--players", "3", "--json"]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        run = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=stdout, stderr=stderr, start_new_session=True)
    try:
        first = wait_for(lambda: _exactly_two(run.pid), "two workers")
        match_worker = wait_for(lambda: _running_a_match(ladder), "a worker playing a match")
        assert match_worker in first
        os.kill(match_worker, signal.SIGKILL)
        again = wait_for(lambda: match_worker not in (found := _exactly_two(run.pid)) and found, "a new worker")
        assert set(again) - set(first)
        assert run.wait(RUN_CAP) == 0, err.read_text()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        kill_all_in(tmp_path)
    result = json.loads(out.read_text())
    assert result["matches"] == 12 and result["workers_replaced"] == 1
    assert f"worker {match_worker} stopped (killed by SIGKILL)" in err.read_text()
    assert sum(row["games"] for row in result["leaderboard"]) == 12 * 3
    for match_id in result["match_ids"]:  # tables of house bots only: no move of a clock
        assert not [e for e in ladder.games.replay(match_id)["events"] if e.get("timeout")]


def _exactly_two(pid: int) -> list[int]:
    found = _workers_of(pid)
    return found if len(found) == 2 else []


def _running_a_match(ladder: Ladder) -> int | None:
    from rq import Worker as RQWorker

    assert ladder.queue is not None
    for found in RQWorker.all(queue=ladder.queue):
        if (found.get_current_job_id() or "").startswith("match-"):
            return found.pid
    return None
