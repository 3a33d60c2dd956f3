"""What the pages load is light: the page and every module and style it loads come gzipped
(to a client that accepts it) with a strong ``ETag`` and ``Cache-Control: no-cache``, so a
browser that loads the page again revalidates its copies of the assets (``304``, no body), and the page
reads no ``/openapi.json``."""

from __future__ import annotations

import gzip
from typing import Any

import requests
from playwright.sync_api import expect


def test_the_page_and_its_assets_are_gzipped_with_an_etag(served: Any) -> None:
    for path in ("/", "/rules", "/web/js/table.js", "/web/css/table.css"):
        plain = requests.get(served.url + path, headers={"Accept-Encoding": "identity"}, timeout=30)
        answer = requests.get(served.url + path, headers={"Accept-Encoding": "gzip"}, timeout=30, stream=True)
        raw = answer.raw.read(decode_content=False)
        assert answer.status_code == 200 and plain.status_code == 200, path
        assert answer.headers["Content-Encoding"] == "gzip", path
        assert "Content-Encoding" not in plain.headers, path
        assert gzip.decompress(raw) == plain.content, path
        assert len(raw) < len(plain.content) / 2, (path, len(raw), len(plain.content))
        assert answer.headers["Vary"] == "Accept-Encoding", path
        assert answer.headers["Cache-Control"] == "no-cache", path
        assert answer.headers["ETag"] != plain.headers["ETag"], path  # one tag a form of the file
        assert "Content-Security-Policy" in answer.headers, path
        for form, tag in (("gzip", answer.headers["ETag"]), ("identity", plain.headers["ETag"])):
            again = requests.get(served.url + path, headers={"Accept-Encoding": form, "If-None-Match": tag}, timeout=30)
            assert again.status_code == 304 and again.content == b"", (path, form)
            assert again.headers["ETag"] == tag, (path, form)
    missing = requests.get(served.url + "/web/js/nothing.js", timeout=30)
    assert missing.status_code == 404


def test_a_page_loaded_again_revalidates_and_loads_no_openapi(served: Any, new_page: Any) -> None:
    page = new_page()
    answers: list[Any] = []
    page.on("response", lambda r: answers.append(r))
    page.goto(served.url + "/")
    expect(page.get_by_label("Fill the other seats with house bots", exact=True).locator("option")).not_to_have_count(1)
    first = [r for r in answers if "/v1/" not in r.url]
    assert first and all(r.status == 200 for r in first), [(r.url, r.status) for r in first]
    assert all(r.all_headers().get("content-encoding") == "gzip" for r in first), [r.url for r in first]
    assert not [r.url for r in answers if "openapi" in r.url]
    answers.clear()
    page.reload()
    expect(page.locator("h1")).to_have_text("Lobby")
    again = [r for r in answers if "/web/" in r.url]  # (the page itself: as the browser's reload decides)
    assert again and all(r.status == 304 for r in again), [(r.url, r.status) for r in again]
