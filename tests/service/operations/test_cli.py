"""The ``mayi`` command line: simulate (the first thing a user runs) and its errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mayi_service.cli import main


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_simulate_json_summary_has_every_figure():
    code, out = run(
        "simulate", "--variant", "may_i", "--players", "4", "--games", "3", "--seed", "1",
        "--bots", "greedy,greedy,random,random", "--json",
    )  # fmt: skip
    assert code == 0, out
    data = json.loads(out)
    assert data["games"] == 3 and data["rounds"] == 21 and data["players"] == 4
    assert data["actions"] > 0 and data["actions_per_second"] > 0 and data["games_per_second"] > 0
    assert data["invariant_violations"] == 0
    assert 0 <= data["safeguard_rounds"] <= 21
    assert set(data["bots"]) == {"0:greedy", "1:greedy", "2:random", "3:random"}
    assert sum(b["wins"] for b in data["bots"].values()) == pytest.approx(3)
    assert all(b["mean_score"] >= 0 for b in data["bots"].values())


def test_simulate_is_reproducible_with_a_seed():
    args = ("simulate", "--variant", "shanghai", "--players", "3", "--games", "2", "--seed", "7", "--json")
    first, second = json.loads(run(*args)[1]), json.loads(run(*args)[1])
    for key in ("actions", "rounds", "safeguard_rounds", "bots"):
        assert first[key] == second[key]


def test_simulate_prints_a_readable_summary():
    code, out = run("simulate", "--games", "2", "--seed", "3", "--players", "3")
    assert code == 0, out
    assert "2 games of may_i with 3 players" in out
    assert "invariant violations: 0" in out
    assert "mean score" in out


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--players", "9"], "--players"),
        (["--variant", "shanghai", "--players", "2"], "Shanghai is for 3 to 8 players"),
        (["--bots", "greedy,clever"], "unknown bot 'clever'"),
        (["--players", "2", "--bots", "random,random,random"], "3 bots given for 2 players"),
        (["--games", "0"], "--games"),
        (["--variant", "rummy"], "--variant"),
    ],
)
def test_bad_arguments_exit_2_naming_the_problem(args, names):
    code, out = run("simulate", *args)
    assert code == 2
    assert names in out
