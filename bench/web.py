"""Web table benchmark: what each page weighs on the wire and how soon the first page is drawn,
on a fresh default ``mayi serve`` (rate limits on, clocks on, its job worker; its embedded
Redis in a temporary folder), in Debian's Chromium driven by Playwright (as tests/web).

Run from the repository root with the project's virtual environment::

    python bench/web.py               # 10 cold loads of the lobby; each page's weight
    python bench/web.py --loads 20 --json

Printed:

* for each page (the lobby, a seat's table, a spectator's, a replay, the ladder, the
  rules): the requests it makes on a cold load, the bytes received (headers and bodies as
  sent, gzipped where the service gzips them) and what the same files weigh uncompressed;
* the first page's load latency: from the navigation's start in a fresh browser context
  (an empty cache) to the lobby drawn (its table list and its house-bot choices filled in),
  median and p95 over ``--loads`` loads; and a load again in the same context (the
  browser revalidating its copies).

Nothing here asserts a timing; the server and the browser are stopped at the end, also on
errors.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import requests
from api import mayi_serve, percentile
from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("MAYI_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def _finished_game(base: str) -> str:
    """A 2-seat May I game played to its end through the API (round 7 only, 10 turns at most)."""
    body = {
        "variant": "may_i",
        "seats": 2,
        "players": [{"name": "Ann"}, {"name": "Bob"}],
        "options": {"max_turns": 10, "claim_seconds": 600, "turn_seconds": 600},
        "test": {"seed": "ab" * 16, "start_round": 7},
    }
    created = requests.post(base + "/v1/games", json=body, timeout=30).json()
    game_id, tokens = created["game_id"], [s["token"] for s in created["seats"]]
    paths = {
        "draw": "turn/draw",
        "claim": "claims",
        "go_down": "melds",
        "lay_off": "lay-offs",
        "discard": "turn/discard",
    }
    for _ in range(500):
        public = requests.get(f"{base}/v1/games/{game_id}", timeout=30).json()
        if public["status"] == "finished":
            return game_id
        window = public["claim_window"] or {}
        pending = [s for s in window.get("pending", []) if s != public["turn"]]
        seat = pending[0] if pending else public["actor"]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        legal = requests.get(f"{base}/v1/games/{game_id}", headers=auth, timeout=30).json()["legal"]
        move = next((m for m in legal if m["type"] in ("go_down", "lay_off")), None)
        move = move or next((m for m in legal if m["type"] == "claim" and not m["claim"]), None)
        move = move or next((m for m in legal if m["type"] == "draw" and m["source"] == "stock"), legal[0])
        kind = move.pop("type")
        while True:
            answer = requests.post(f"{base}/v1/games/{game_id}/{paths[kind]}", json=move, headers=auth, timeout=30)
            if answer.status_code != 429:
                break
            time.sleep(float(answer.headers.get("Retry-After", "1")))
    raise SystemExit("the replay's game did not finish")


def _weigh(browser: Any, base: str, address: str, ready: str, seat: dict[str, Any] | None = None) -> dict[str, Any]:
    """One cold load of ``address`` until ``ready`` (a selector) shows: requests, bytes."""
    context = browser.new_context()
    page = context.new_page()
    if seat is not None:  # the browser holds the seat, as the page keeps it after taking one
        page.goto(base + "/rules")
        page.evaluate("(seats) => localStorage.setItem('mayi.seats.v1', JSON.stringify(seats))", seat)
        context.clear_cookies()
    done: list[Any] = []
    page.on("requestfinished", lambda r: done.append(r))
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.clearBrowserCache")
    page.goto(base + address)
    page.locator(ready).first.wait_for(timeout=60_000)
    if "#/game/" not in address and "#/watch/" not in address:  # (a live table is never idle)
        page.wait_for_load_state("networkidle")
    time.sleep(0.5)  # (a measurement, not a test: late requests of the load counted too)
    wire = 0
    plain = 0
    urls = []
    for request in done:
        if "/events/stream" in request.url:
            continue  # the live stream: not part of the load
        sizes = request.sizes()
        wire += sizes["responseHeadersSize"] + max(0, sizes["responseBodySize"])
        urls.append(request.url)
        if request.method == "GET":
            answer = requests.get(request.url, headers={"Accept-Encoding": "identity"}, timeout=30)
            plain += len(answer.content)
    context.close()
    return {"requests": len(urls), "bytes": wire, "uncompressed_bodies": plain}


def _first_load(browser: Any, base: str) -> tuple[float, float]:
    """Seconds to the lobby drawn: in a fresh context, then loaded again in the same one."""
    context = browser.new_context()
    page = context.new_page()
    started = time.perf_counter()
    page.goto(base + "/")
    page.locator("#bots option[value='random']").wait_for(state="attached", timeout=60_000)
    page.locator("#tables h2").wait_for(timeout=60_000)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    page.reload()
    page.locator("#bots option[value='random']").wait_for(state="attached", timeout=60_000)
    page.locator("#tables h2").wait_for(timeout=60_000)
    warm = time.perf_counter() - started
    context.close()
    return cold, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=10, help="cold loads of the lobby timed")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, mayi_serve(Path(folder)) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            body = {"variant": "may_i", "seats": 4, "players": [{"name": "Ann"}]}
            created = requests.post(base + "/v1/games", json=body, timeout=30).json()
            game_id, token = created["game_id"], created["seats"][0]["token"]
            for _ in range(3):
                requests.post(f"{base}/v1/games/{game_id}/seats", json={"house_bot": "greedy"}, timeout=30)
            replay_id = _finished_game(base)
            seat = {game_id: {"token": token, "seat": 0, "name": "Ann"}}
            pages = [
                ("lobby", "/", "#tables h2", None),
                ("seat's table", f"/#/game/{game_id}", ".hand-cards button.card", seat),
                ("spectator", f"/#/watch/{game_id}", ".seat-list .seat", None),
                ("replay", f"/#/replay/{replay_id}", "#event-text", None),
                ("ladder", "/#/ladder/may_i", "h1", None),
                ("rules", "/rules", "main h2", None),
            ]
            weights = {name: _weigh(browser, base, address, ready, held) for name, address, ready, held in pages}
            loads = [_first_load(browser, base) for _ in range(options.loads)]
        finally:
            browser.close()
    print("page weight (a cold load; bytes received, headers included; bodies uncompressed beside it):")
    for name, w in weights.items():
        plain = w["uncompressed_bodies"] / 1000
        print(f"  {name:14} {w['requests']:3d} requests  {w['bytes'] / 1000:7.1f} KB  ({plain:.1f} KB uncompressed)")
    cold = [c for c, _ in loads]
    warm = [w for _, w in loads]
    print(
        f"first page (the lobby drawn), {len(loads)} loads: cold p50 {statistics.median(cold) * 1000:.0f} ms"
        f" p95 {percentile(sorted(cold), 95) * 1000:.0f} ms; loaded again p50 {statistics.median(warm) * 1000:.0f} ms"
        f" p95 {percentile(sorted(warm), 95) * 1000:.0f} ms"
    )
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if options.json:
        print(json.dumps({"weights": weights, "cold_s": cold, "again_s": warm}, indent=2))


if __name__ == "__main__":
    main()
