"""docs/operations.md lists every setting with its variable and its default."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from mayi_service.config import Settings

DOC = (Path(__file__).resolve().parents[3] / "docs" / "operations.md").read_text()


def test_every_setting_is_documented_with_its_default():
    for f in fields(Settings):
        variable = "REDIS_URL" if f.name == "redis_url" else f"MAYI_{f.name.upper()}"
        row = next((line for line in DOC.splitlines() if line.startswith(f"| `{variable}` |")), None)
        assert row is not None, f"docs/operations.md does not list {variable}"
        default = f.default if f.name != "cors_origins" else "*"
        if isinstance(default, bool):
            default = str(default).lower()
        shown = "(empty)" if default in ("", ()) else f"`{default}`"
        assert shown in row, f"{variable}: the documented default is not {shown}"


def test_settings_are_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("MAYI_MAX_STREAMS_PER_CLIENT", "9")
    monkeypatch.setenv("MAYI_RATE_LIMITS_ENABLED", "false")
    monkeypatch.setenv("MAYI_CORS_ORIGINS", "https://a.example, https://b.example")
    monkeypatch.setenv("REDIS_URL", "redis://example:6379/2")
    settings = Settings.from_env()
    assert settings.max_streams_per_client == 9 and settings.rate_limits_enabled is False
    assert settings.cors_origins == ("https://a.example", "https://b.example")
    assert settings.redis_url == "redis://example:6379/2"
