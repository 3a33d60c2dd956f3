"""``mayi serve`` over a real socket: the command as an operator runs it.

Each test starts ``mayi serve --no-worker`` as a subprocess (its own process
group, so a hung server can be killed without touching anything else), waits for
``/healthz``, plays a little over HTTP, then stops it with SIGINT and checks that
it exits and leaves no embedded ``redis-server`` behind. Whatever happens, the
helpers of ``serving.py`` kill what the test started.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import redis
import requests
from serving import mayi_serve, redis_servers_in, wait_until


def assert_no_cdn(html: str) -> None:
    """Every script and style of the docs page is served by the service itself."""
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets, html
    assert all(a.startswith("/docs/") for a in assets), assets
    assert "https://" not in html
    assert not re.search(r"unpkg|jsdelivr|cdnjs|googleapis", html)


def play_a_little(url: str) -> str:
    """Create a full table, make a move, read the docs; return the game id."""
    with requests.Session() as http:
        created = http.post(
            url + "/v1/games",
            json={
                "variant": "may_i",
                "seats": 3,
                "options": {"claim_seconds": 600, "turn_seconds": 600},
                "players": [{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}],
            },
            timeout=60,
        )
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        tokens = [s["token"] for s in created.json()["seats"]]
        game = created.json()["game"]
        assert game["status"] == "playing" and game["phase"] == "first_offer" and game["actor"] == 0

        # Seat 0 passes the first upcard; the offer moves on to seat 1.
        moved = http.post(
            f"{url}/v1/games/{game_id}/claims",
            json={"claim": False},
            headers={"Authorization": f"Bearer {tokens[0]}"},
            timeout=60,
        )
        assert moved.status_code == 200, moved.text
        assert moved.json()["version"] == 2 and moved.json()["actor"] == 1

        seen = http.get(f"{url}/v1/games/{game_id}", timeout=60)
        assert seen.status_code == 200 and seen.json()["actor"] == 1
        assert "hand" not in seen.json()

        docs = http.get(url + "/docs/", timeout=60)
        assert docs.status_code == 200 and "swagger" in docs.text.lower()
        assert_no_cdn(docs.text)
        assert http.get(url + "/docs/swagger-ui-bundle.js", timeout=60).status_code == 200
        spec = http.get(url + "/openapi.json", timeout=60)
        assert spec.status_code == 200
        assert "/v1/games/{game_id}/claims" in spec.json()["paths"]
        return str(game_id)


def test_serve_on_embedded_redis(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with mayi_serve(tmp_path, {"MAYI_DATA_DIR": str(data)}) as served:
        served.wait_ready()
        servers = redis_servers_in(data)
        assert len(servers) == 1, f"expected one embedded redis-server in {data}, found {servers}"
        game_id = play_a_little(served.url)
        code = served.stop()
        assert code == 0, served.stderr()
        assert served.proc.poll() is not None
        assert wait_until(lambda: not redis_servers_in(data), 60), "the embedded redis-server outlived mayi serve"

    port = served.url.rsplit(":", 1)[1]
    text = served.stdout()
    assert f"http://127.0.0.1:{port}" in text
    assert f"Web table: http://127.0.0.1:{port}/\n" in text
    assert f"http://127.0.0.1:{port}/docs/" in text
    assert f"http://127.0.0.1:{port}/openapi.json" in text
    assert "embedded Redis in " + str(data.resolve()) in text
    assert (data / "mayi.rdb").exists() or (data / "appendonly.aof").exists()

    # The data survives a restart on the same data directory.
    with mayi_serve(tmp_path, {"MAYI_DATA_DIR": str(data)}) as again:
        again.wait_ready()
        seen = requests.get(f"{again.url}/v1/games/{game_id}", timeout=60)
        assert seen.status_code == 200, seen.text
        assert seen.json()["version"] == 2 and seen.json()["actor"] == 1
        assert again.stop() == 0, again.stderr()
        assert wait_until(lambda: not redis_servers_in(data), 60)


def test_serve_on_redis_url(tmp_path: Path, redis_url: str) -> None:
    data = tmp_path / "data"
    prefix = f"s{uuid.uuid4().hex[:10]}"
    env = {"REDIS_URL": redis_url, "MAYI_DATA_DIR": str(data), "MAYI_KEY_PREFIX": prefix}
    with mayi_serve(tmp_path, env) as served:
        served.wait_ready()
        game_id = play_a_little(served.url)
        assert redis_servers_in(data) == [] and not data.exists(), "REDIS_URL is set: no embedded Redis"
        client = redis.Redis.from_url(redis_url)
        assert client.hget(f"{prefix}:{{{game_id}}}:game", "version") == b"2"
        code = served.stop()
        assert code == 0, served.stderr()
    text = served.stdout()
    port = served.url.rsplit(":", 1)[1]
    assert f"http://127.0.0.1:{port}/docs/" in text
    assert "Redis at REDIS_URL" in text
    assert client.ping()  # stopping the service leaves the shared Redis alone
