"""The code of docs/bots.md and of the README's "Write a bot" runs as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from servers import LiveServer

ROOT = Path(__file__).resolve().parents[2]


def _blocks(path: Path, after: str = "") -> list[str]:
    text = path.read_text(encoding="utf-8")
    text = text[text.index(after) :] if after else text
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_the_local_example_runs() -> None:
    local = next(b for b in _blocks(ROOT / "docs" / "bots.md") if "class Magpie" in b)
    assert "play_local" in local
    exec(compile(local, "docs/bots.md (local)", "exec"), {"__name__": "docs_bots"})


def test_the_waiting_example_runs() -> None:
    waiting = next(b for b in _blocks(ROOT / "docs" / "bots.md") if "WAIT" in b)
    exec(compile(waiting, "docs/bots.md (waiting)", "exec"), {"__name__": "docs_bots"})


def test_the_polling_example_runs_against_a_live_server(
    live_server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    polling = next(b for b in _blocks(ROOT / "docs" / "bots.md") if "run_polling" in b)
    assert "run_polling" in polling
    monkeypatch.setenv("MAYI_URL", live_server.url)
    scope: dict[str, object] = {"__name__": "docs_bots"}
    exec(compile(polling, "docs/bots.md (polling)", "exec"), scope)
    final = scope["bots"][0].get_game(scope["table"].game_id)  # type: ignore[index,attr-defined]
    assert final.status == "finished"


def test_the_readme_bot_runs() -> None:
    code = _blocks(ROOT / "README.md", after="## Write a bot")[0]
    exec(compile(code, "README.md (Write a bot)", "exec"), {"__name__": "readme_bot"})


def test_the_webhook_example_runs_against_a_live_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against ``mayi serve`` with its job worker, which sends the deliveries."""
    from serving import free_port, ready_server, wait_until

    code = next(b for b in _blocks(ROOT / "docs" / "bots.md") if "make_webhook_server" in b)
    env = {"MAYI_WEBHOOK_ALLOW_PRIVATE": "true", "MAYI_RATE_LIMITS_ENABLED": "false"}
    with ready_server(tmp_path, env, worker=True) as served:
        monkeypatch.setenv("MAYI_URL", served.url)
        monkeypatch.setenv("BOT_PORT", str(free_port()))
        scope: dict[str, Any] = {"__name__": "docs_bots"}
        try:
            exec(compile(code, "docs/bots.md (webhook)", "exec"), scope)
            bot = scope["bot"]
            # The bot's decision arrives and it plays it: delivered, and nothing left for it to decide.
            answered = lambda: bool(bot.get_deliveries()) and not bot.get_decisions().decisions  # noqa: E731
            assert wait_until(answered, 120.0), served.stderr()[-3000:]
            assert all(d.delivered for d in bot.get_deliveries())
            assert bot.get_game(scope["table"].game_id).version > bot.get_deliveries()[-1].version  # it moved
        finally:
            if "server" in scope:
                scope["server"].shutdown()
                scope["server"].server_close()
