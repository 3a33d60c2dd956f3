"""docs/ai.md is true: its Python blocks run as written (in order, in one namespace; a block
after a ``<!-- not run: ... -->`` line needs a server and is only compiled), and its tables
of the observation and the sizes are the code's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mayi_rl.encoding import every_table, layout, table_rules

DOC = Path(__file__).resolve().parents[2] / "docs" / "ai.md"
BLOCK = re.compile(r"(<!-- not run:[^\n]*-->\n)?```python\n(.*?)```", re.S)


def test_the_docs_code_runs_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, object] = {"__name__": "ai_doc"}
    blocks = BLOCK.findall(DOC.read_text())
    assert len(blocks) >= 5
    for skipped, code in blocks:
        compiled = compile(code, str(DOC), "exec")
        if not skipped:
            exec(compiled, namespace)
    out = capsys.readouterr().out
    assert "totals:" in out and "ISMCTS, strong, greedy:" in out and "returns after training:" in out


def test_the_observation_table_is_the_layouts() -> None:
    text = DOC.read_text()
    rows = re.findall(r"^\| `(\w+)` \| [^|]+ \| (.+) \|$", text, re.M)
    lay = layout(table_rules("may_i"), 4)
    assert [name for name, _ in rows] == list(lay.parts)
    assert [what for _, what in rows] == [p.what for p in lay.parts.values()]


def test_the_sizes_table_is_the_layouts() -> None:
    text = DOC.read_text()
    for variant, title in (("may_i", "May I"), ("shanghai", "Shanghai")):
        row = re.search(rf"^\| {title} \|(.*)\|$", text, re.M)
        assert row is not None
        cells = [c.strip() for c in row.group(1).split("|")]
        for v, n in every_table():
            if v == variant:
                lay = layout(table_rules(v), n)
                assert cells[n - 2] == f"{lay.actions}, {lay.size}"
