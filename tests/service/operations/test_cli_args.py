"""``mayi simulate`` refuses bad arguments in one line with exit status 2, never a traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from mayi_service.cli import main


@pytest.mark.parametrize("bots", ["", ",", " , ,", "  "])
def test_simulate_without_any_bot_exits_2_in_one_line(bots):
    result = CliRunner().invoke(main, ["simulate", "--games", "1", "--bots", bots])
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)  # not a ZeroDivisionError
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    names = "random, greedy, strong, expert"
    assert errors == [f"Error: Invalid value for '--bots': name at least one bot; choose from {names}"]
    assert "Traceback" not in result.output
