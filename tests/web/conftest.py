"""Fixtures of the web table's tests: a real ``mayi serve`` and Debian's Chromium, driven by
Playwright for Python (``playwright`` ships its driver; the browser is ``/usr/bin/chromium``,
installed with ``apt-get install chromium``; Playwright's own browser download is never used).

Accessibility: axe-core (pinned in ``tests/web/axe/package-lock.json``; the suite runs
``npm ci`` there when it is missing) runs in every page a test visits, at each screenshot
and when the test ends: a critical or serious violation fails the test.

Screenshots go to ``artifacts/web/`` (git-ignored; ``MAYI_WEB_ARTIFACTS`` moves it).
Waits are Playwright's auto-waiting ``expect`` with a generous timeout (a loaded 2-core
machine), never sleeps.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright import sync_api as playwright_api

sys.path.insert(0, str(Path(__file__).resolve().parent))  # web_helpers, next to this file

CHROMIUM = Path(os.environ.get("MAYI_CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Playwright's waits (ms): generous, for a loaded machine; they end as soon as the state shows.
TIMEOUT_MS = 30_000
ARTIFACTS = Path(os.environ.get("MAYI_WEB_ARTIFACTS", Path(__file__).resolve().parents[2] / "artifacts" / "web"))
AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
#: The impacts of an axe-core violation that fail a test.
BLOCKING = ("critical", "serious")


def _install_axe() -> None:
    """``npm ci`` of the pinned axe-core, once for every test process (a file lock: under
    xdist each worker would run it)."""
    npm = shutil.which("npm")
    if npm is None:
        return
    folder = AXE.parents[2]
    with open(folder / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not AXE.exists():
            subprocess.run(
                [npm, "ci", "--prefix", str(folder), "--no-audit", "--no-fund"],
                check=False,
                capture_output=True,
                timeout=600,
            )


@pytest.fixture(scope="session", autouse=True)
def _chromium() -> None:
    """Skip (before starting anything) where Debian's Chromium is not installed; under CI
    (``CI`` set, where ``.ci/run`` installs it) a missing Chromium fails instead."""
    if not CHROMIUM.exists():
        message = f"no Chromium at {CHROMIUM}: apt-get install chromium (or set MAYI_CHROMIUM)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    if not AXE.exists():
        _install_axe()
    if not AXE.exists():
        message = f"no axe-core at {AXE}: run npm ci --prefix {AXE.parents[2]}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def accessibility_problems(page: Any, impacts: tuple[str, ...] = BLOCKING) -> list[str]:
    """The axe-core violations of what ``page`` shows now (of ``impacts``: critical and serious
    unless told), one line each.
    (axe-core is evaluated through the browser's DevTools protocol, which the page's
    Content-Security-Policy does not govern: the page itself still runs no inline script.)
    The API reference at ``/docs/`` is Swagger UI's own page, served as its release ships
    it: it is not checked (its violations are Swagger UI's, not the table's)."""
    if urlsplit(page.url).path.startswith("/docs"):
        return []
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text())
    result = page.evaluate("() => axe.run(document, { resultTypes: ['violations'] })")
    return [
        f"{page.url}: {v['impact']} {v['id']} ({v['help']}): {[n['target'] for n in v['nodes'][:3]]}"
        for v in result["violations"]
        if v["impact"] in impacts
    ]


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One ``mayi serve`` (API and job worker: house bots and clocks) for the web tests.

    One setting is not the default: the open tables one address may have (20). The web
    tests are some forty people at one address, each leaving a table open, on one server;
    the limit itself is tested in tests/service/play/test_creation_limits.py."""
    from serving import ready_server
    from web_helpers import SERVER_ENV

    with ready_server(
        tmp_path_factory.mktemp("web"),
        {**SERVER_ENV, "MAYI_MAX_OPEN_TABLES_PER_ADDRESS": "200"},
        worker=True,
    ) as server:
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Note each phase's report on the test item (``new_page`` saves the pages of a failed test)."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    setattr(item, f"report_{report.when}", report)


@pytest.fixture
def new_page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """``new_page(width=1280, height=900)``: a page in a fresh browser context (its own
    localStorage, like another person's browser); every page's script errors, and anything
    its Content-Security-Policy refused, fail the test."""
    contexts = []
    errors: list[str] = []
    inaccessible: list[str] = []

    def make(width: int = 1280, height: int = 900) -> Any:
        context = browser.new_context(viewport={"width": width, "height": height})
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.append(message.text) if _refused(message) else None)
        return page

    playwright_api.expect.set_options(timeout=TIMEOUT_MS)
    try:
        yield make
    finally:
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:  # what each page showed, as artefacts
            folder = ARTIFACTS / request.node.name
            folder.mkdir(parents=True, exist_ok=True)
            for number, context in enumerate(contexts):
                for page in context.pages:
                    with suppress(Exception):
                        page.screenshot(path=str(folder / f"failed-{number}.png"), full_page=True)
                        (folder / f"failed-{number}.txt").write_text(page.url + "\n\n" + page.inner_text("body"))
        elif report is not None and report.passed:  # axe-core on what each page shows at the end
            for context in contexts:
                for page in context.pages:
                    inaccessible.extend(accessibility_problems(page))
        for context in contexts:
            context.close()
    assert not errors, f"errors in the page: {errors}"
    assert not inaccessible, "axe-core: " + "\n".join(inaccessible)


def _refused(message: Any) -> bool:
    """A console message of something the Content-Security-Policy refused (an inline script or
    style, a request to another origin): the page must need none."""
    return message.type == "error" and ("Content Security Policy" in message.text or "Refused to" in message.text)


@pytest.fixture
def shots(request: pytest.FixtureRequest) -> Any:
    """``shots(page, "name")`` saves a full-page screenshot as a test artefact; returns its path."""
    folder = ARTIFACTS / request.node.name
    folder.mkdir(parents=True, exist_ok=True)

    def save(page: Any, name: str) -> Path:
        path = folder / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        problems = accessibility_problems(page)
        assert not problems, f"axe-core at {name}: " + "\n".join(problems)
        return path

    return save
