"""What a commit's listeners write once it is made, sent together in one round trip."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import redis
from redis.commands.core import Script
from redis.exceptions import NoScriptError

from mayi_service.storage.connections import Scripts, is_cluster
from mayi_service.storage.lua import outcome


class Reply:
    """A script's answer, once :meth:`FollowUps.send` has run (``value``, decoded)."""

    __slots__ = ("decode", "value")

    def __init__(self, decode: Callable[[Any], Any]) -> None:
        self.decode = decode
        self.value: Any = None


class FollowUps:
    """The scripts the listeners of one commit run after it, sent in one pipeline (a single
    script: one call), on a single Redis and on a cluster alike (there redis-py sends each
    script to its keys' node)."""

    def __init__(self, client: redis.Redis, run: Scripts, scripts: dict[str, Script]) -> None:
        self.client = client
        self.run = run
        self.scripts = scripts
        self.cluster = is_cluster(client)
        #: (script, keys, args, reply); a plain command has no script, and its words as keys.
        self.calls: list[tuple[Script | None, Sequence[Any], Sequence[Any], Reply]] = []

    def call(self, name: str, keys: Sequence[str], args: Sequence[Any], decode: Callable[[Any], Any]) -> Reply:
        """Run the script ``name`` over ``keys`` and ``args`` at :meth:`send`; its answer, decoded."""
        reply = Reply(decode)
        self.calls.append((self.scripts[name], keys, args, reply))
        return reply

    def command(self, *words: Any) -> Reply:
        """Send the Redis command ``words`` at :meth:`send`; its answer."""
        reply = Reply(_same)
        self.calls.append((None, words, (), reply))
        return reply

    def claim_clock(self, game_key: str, want: int, now: float, grace: float) -> Reply:
        """``clock_claim.lua``: ``(at, previous)`` when the game's clock moved to ``want``
        (``previous``: the replaced job's time, or ``None``), else ``None``."""
        return self.call("clock_claim", [game_key], [want, repr(now), repr(grace)], _claimed)

    def wake(self, keys: Sequence[str], game_id: str, keep: int, url: bool) -> Reply:
        """``wake.lua`` for one bot (``keys``: its wake number, wake stream and account hash):
        its ``webhook_url`` when ``url`` (else ``None``)."""
        return self.call("wake", keys, [game_id, keep, "1" if url else ""], _url)

    def send(self) -> None:
        """Run every call, in order, in one round trip; then each :class:`Reply` holds its answer."""
        calls, self.calls = self.calls, []
        if len(calls) == 1:
            script, keys, args, reply = calls[0]
            found = self.client.execute_command(*keys) if script is None else self.run(script, keys, args)
            reply.value = reply.decode(found)
            return
        if not calls:
            return
        pipe = self.client.pipeline(transaction=False)
        for script, keys, args, _ in calls:
            if script is None:
                pipe.execute_command(*keys)
            elif self.cluster:  # a cluster pipeline refuses EVALSHA: the script goes as its text
                pipe.execute_command("EVAL", script.script, len(keys), *keys, *args)
            else:
                pipe.evalsha(script.sha, len(keys), *keys, *args)
        for (script, keys, args, reply), found in zip(calls, pipe.execute(raise_on_error=False), strict=True):
            if script is not None and isinstance(found, NoScriptError):  # Redis lost its scripts: load, again
                found = self.run(script, keys, args)
            elif isinstance(found, Exception):
                raise found
            reply.value = reply.decode(found)


def _claimed(reply: Any) -> tuple[int, int | None] | None:
    tag, rest = outcome(reply)
    if tag != "claimed":
        return None
    return int(rest[0]), int(rest[1]) if rest[1] else None


def _url(reply: Any) -> str | None:
    url = reply[1]
    return url.decode() if isinstance(url, bytes) else None


def _same(reply: Any) -> Any:
    return reply
