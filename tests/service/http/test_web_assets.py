"""The web table's files as served (no browser: tests/web drives the page in Chromium):
the page at /, its modules and styles under /web/, a Content-Security-Policy that allows
this origin only, no inline script or style, and nothing loaded from another site."""

from __future__ import annotations

import re
from typing import Any

from mayi_service.web import CSP, STATIC


def test_the_page_and_its_assets_are_served_with_the_policy(client: Any) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert page.headers["Content-Security-Policy"] == CSP
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    html = page.get_data(as_text=True)
    assert 'href="/docs/"' in html  # the API reference, linked from the page
    assert re.search(r"<script[^>]*>(?!</script>)", html) is None, "an inline script"
    assert "<style" not in html and " style=" not in html
    assets = re.findall(r'(?:src|href)="(/web/[^"]+)"', html)
    assert "/web/js/app.js" in assets and "/web/css/table.css" in assets
    for asset in assets:
        answer = client.get(asset)
        assert answer.status_code == 200, asset
        assert answer.headers["Content-Security-Policy"] == CSP
        assert answer.mimetype in ("text/javascript", "application/javascript", "text/css"), answer.mimetype
    assert client.get("/web/js/nothing.js").status_code == 404


def test_every_module_is_served_and_nothing_comes_from_elsewhere(client: Any) -> None:
    files = sorted(p for p in STATIC.rglob("*") if p.is_file())
    assert {p.suffix for p in files} == {".html", ".js", ".css"}
    for path in files:
        text = path.read_text(encoding="utf-8")
        text = text.replace('"http://www.w3.org/2000/svg"', "")  # a namespace's name, not a request
        assert not re.search(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text, re.I), f"{path.name} names another site"
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text and "eval(" not in text, path.name
        for imported in re.findall(r'from "\./([a-z]+\.js)"', text):
            assert (path.parent / imported).is_file(), f"{path.name} imports {imported}"
            assert client.get(f"/web/js/{imported}").status_code == 200
