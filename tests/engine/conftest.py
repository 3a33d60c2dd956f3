"""Engine tests: the rule scenarios' helpers live in :mod:`mayi_scenarios` (same folder).

Scenario tests import them by that distinct name; this file only makes sure the
folder is importable whichever way pytest was started (``pytest``, ``pytest
tests/engine tests/service``, or one file).
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
