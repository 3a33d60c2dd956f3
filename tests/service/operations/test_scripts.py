"""The storage's Lua scripts (``connections.Scripts``): on kept connections (the default,
``storage.kept``) and through redis-py alike, the replies of redis-py's ``Script`` objects,
the script loaded again when the server forgot it, a connection the server closed replaced
with the call run once, errors raised; a kept connection is used again."""

from __future__ import annotations

import pytest
import redis

from mayi_service.storage.connections import Scripts, connect

ECHO = "return {KEYS[1], ARGV[1], redis.call('INCR', KEYS[1])}"


@pytest.fixture(params=[True, False], ids=["kept", "redis-py"])
def scripts(redis_url: str, request: pytest.FixtureRequest) -> Scripts:
    return Scripts(connect(redis_url), kept=request.param)


def _client_id(conn: object) -> int:
    conn.send_command("CLIENT", "ID")  # type: ignore[attr-defined]
    return int(conn.read_response())  # type: ignore[attr-defined]


def test_a_script_answers_as_through_redis_py(scripts: Scripts) -> None:
    script = scripts.client.register_script(ECHO)
    key = "scripts-test:{a}:n"
    scripts.client.delete(key)
    assert scripts(script, [key], ["x"]) == [key.encode(), b"x", 1]
    assert script(keys=[key], args=["x"]) == [key.encode(), b"x", 2]
    assert scripts(script, [key], [7]) == [key.encode(), b"7", 3]


def test_a_kept_connection_is_used_again(redis_url: str) -> None:
    scripts = Scripts(connect(redis_url))
    script = scripts.client.register_script(ECHO)
    assert scripts.kept is not None
    scripts(script, ["scripts-test:{k}:n"], ["x"])
    assert len(scripts.kept.idle) == 1
    kept = scripts.kept.idle[0]
    scripts(script, ["scripts-test:{k}:n"], ["x"])
    assert scripts.kept.idle == [kept], "the next call uses the kept connection"


def test_a_script_the_server_forgot_is_loaded_again(scripts: Scripts) -> None:
    script = scripts.client.register_script(ECHO)
    key = "scripts-test:{b}:n"
    scripts.client.delete(key)
    assert scripts(script, [key], ["x"])[2] == 1
    scripts.client.script_flush()
    assert scripts(script, [key], ["y"]) == [key.encode(), b"y", 2]


def test_a_connection_the_server_closed_is_replaced_and_the_call_runs_once(
    scripts: Scripts, redis_client: redis.Redis
) -> None:
    script = scripts.client.register_script(ECHO)
    key = "scripts-test:{c}:n"
    scripts.client.delete(key)
    assert scripts(script, [key], ["x"])[2] == 1
    if scripts.kept is not None:
        redis_client.client_kill_filter(_id=_client_id(scripts.kept.idle[0]))
    else:
        redis_client.client_kill_filter(_type="normal", skipme=True)
    assert scripts(script, [key], ["x"])[2] == 2, "sent again on a fresh connection, once"
    assert redis_client.get(key) == b"2"


def test_an_error_reply_is_raised_and_the_next_call_answers(scripts: Scripts) -> None:
    script = scripts.client.register_script("return redis.error_reply('no such thing')")
    with pytest.raises(redis.ResponseError, match="no such thing"):
        scripts(script, ["scripts-test:{d}:n"], [])
    ok = scripts.client.register_script("return 5")
    assert scripts(ok, ["scripts-test:{d}:n"], []) == 5


@pytest.mark.parametrize("kept", [True, False])
def test_a_dead_server_raises_a_connection_error(kept: bool) -> None:
    scripts = Scripts(connect("redis://127.0.0.1:1", socket_connect_timeout=1), kept=kept)
    script = scripts.client.register_script("return 1")
    with pytest.raises(redis.ConnectionError):
        scripts(script, ["k"], [])
