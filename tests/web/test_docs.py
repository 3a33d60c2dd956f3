"""The API reference at ``/docs/`` shares an origin with the web table, which keeps seat
tokens in ``localStorage``: it has a Content-Security-Policy of its own (scripts of this
origin and its one inline script by nonce; no framing; nosniff; no referrer), and Swagger
UI still works under it in Chromium: it renders the document and tries a request. (The
page had no policy, and could be framed.)"""

from __future__ import annotations

import re
from typing import Any

import requests
from playwright.sync_api import expect


def test_the_api_reference_has_a_policy_and_works_under_it(served: Any, new_page: Any) -> None:
    url = served.url
    first = requests.get(f"{url}/docs/", timeout=60)
    second = requests.get(f"{url}/docs/", timeout=60)
    for answer in (first, second):
        assert answer.status_code == 200
        policy = answer.headers["Content-Security-Policy"]
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy, policy
        assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";", 1)[0], policy
        nonce = re.search(r"'nonce-([^']+)'", policy)
        assert nonce is not None and f'<script nonce="{nonce.group(1)}">' in answer.text, policy
        assert answer.headers["X-Frame-Options"] == "DENY"
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.headers["Referrer-Policy"] == "no-referrer"
    assert first.headers["Content-Security-Policy"] != second.headers["Content-Security-Policy"]  # a nonce each
    bundle = requests.get(f"{url}/docs/swagger-ui-bundle.js", timeout=60)
    assert bundle.headers["X-Content-Type-Options"] == "nosniff" and "Content-Security-Policy" in bundle.headers

    page = new_page()  # (its fixture fails the test on anything the policy refused, or a script error)
    page.goto(f"{url}/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("May I game service")
    health = page.locator(".opblock-summary", has_text="/healthz").first
    health.click()
    page.get_by_role("button", name="Try it out").first.click()
    page.get_by_role("button", name="Execute").first.click()
    expect(page.locator(".responses-table.live-responses-table")).to_contain_text("200")
    expect(page.locator(".live-responses-table")).to_contain_text('"redis"')


def test_every_page_of_the_service_refuses_to_be_framed(served: Any) -> None:
    for path in ("/", "/docs/"):
        answer = requests.get(served.url + path, timeout=60)
        assert answer.headers["X-Frame-Options"] == "DENY", path
        assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"], path
        assert answer.headers["X-Content-Type-Options"] == "nosniff", path
        assert answer.headers["Referrer-Policy"] == "no-referrer", path
