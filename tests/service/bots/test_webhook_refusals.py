"""A webhook URL refused for its address names the setting that allows such addresses."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from mayi_service.api.app import create_app
from mayi_service.bots.addresses import RefusedURL, resolve
from mayi_service.config import Settings


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/hook", "http://[::1]/hook", "http://192.168.1.20/hook"])
def test_the_422_for_a_loopback_or_private_webhook_url_names_the_setting(settings: Settings, url: str) -> None:
    strict: Any = create_app(replace(settings, webhook_allow_private=False)).test_client()
    response = strict.post("/v1/bots", json={"name": "local", "webhook_url": url})
    assert response.status_code == 422, response.get_json()
    detail = response.get_json()["detail"]
    assert "webhook_url: " in detail and "MAYI_WEBHOOK_ALLOW_PRIVATE=true" in detail, detail


def test_a_delivery_refused_for_its_address_names_the_setting_too() -> None:
    with pytest.raises(
        RefusedURL, match=r"localhost \((127\.0\.0\.1|::1)\) is a loopback address: .*MAYI_WEBHOOK_ALLOW_PRIVATE"
    ):
        resolve("http://localhost:9/hook")
