"""Engine tests: the rule scenarios' helpers live in :mod:`mayi_scenarios` (same folder).

Scenario tests import them by that distinct name; this file makes sure the folder is
importable whichever way pytest was started (``pytest``, ``pytest tests/engine
tests/service``, or one file). It loads nothing outside the standard library and pytest.

The tests that play with the reference greedy bot (``test_standalone.BOT_DRIVEN``) need
``mayi_bots``: without it they are not collected, so the rest runs with the engine
alone; under CI (``CI`` set) its absence fails the run instead.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

if importlib.util.find_spec("mayi_bots") is None:
    if os.environ.get("CI"):
        raise pytest.UsageError("tests/engine's whole-game tests need the reference bots (mayi_bots): pip install -e .")
    collect_ignore = [
        p.name
        for p in _HERE.glob("*.py")
        if any(line.startswith(("from players import", "from mayi_bots")) for line in p.read_text().splitlines())
    ]
