"""``Client``: one method per operation of the May I game service's HTTP API.

Every method shows its path; results are typed (:mod:`mayi_sdk.models`) and errors
are the tree of :mod:`mayi_sdk.errors`. How a request is sent, and when it is retried,
is :mod:`mayi_sdk.transport`'s.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

from . import errors
from .models import (
    BotAccount,
    BotProfile,
    CreatedGame,
    DecisionList,
    Delivery,
    Event,
    EventPage,
    GamePage,
    GameView,
    Health,
    LadderBot,
    LadderEntry,
    LadderMatch,
    Leaderboard,
    LegalMove,
    RatingPoint,
    Replay,
    TakenSeat,
    Variant,
    WebhookSecret,
)
from .transport import Transport, parse_sse

F = TypeVar("F", bound=Callable[..., Any])

#: The longest a long-poll waits on the server (the API's cap).
MAX_WAIT = 60.0


def operation(method: str, path: str) -> Callable[[F], F]:
    """Mark a method as the SDK's call of one API operation (``method path`` as in the OpenAPI document)."""

    def mark(func: F) -> F:
        func.__api_operation__ = (method, path)  # type: ignore[attr-defined]
        return func

    return mark


def operations() -> dict[tuple[str, str], str]:
    """Every API operation the :class:`Client` calls, with the name of its method."""
    found = {}
    for name in dir(Client):
        op = getattr(getattr(Client, name), "__api_operation__", None)
        if op is not None:
            found[op] = name
    return found


class Client(Transport):
    """A client of the May I game service at ``base_url``, acting with ``token`` (a seat's
    or a bot's bearer token; none: a spectator).

    ``timeout``, ``max_retries``, ``backoff`` and ``session`` are the
    :class:`~mayi_sdk.transport.Transport`'s; clients made by :meth:`with_token` share the
    session. Use it as a context manager, or call :meth:`close`.
    """

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def with_token(self, token: str | None) -> Client:
        """A client for the same server acting with another token (sharing the connection pool)."""
        return Client(
            self.base_url,
            token,
            timeout=self.timeout,
            max_retries=self.max_retries,
            backoff=self.backoff,
            session=self.session,
        )

    # -- service ----------------------------------------------------------
    @operation("GET", "/healthz")
    def get_health(self) -> Health:
        """Liveness and Redis reachability (a 503 raises :class:`~mayi_sdk.errors.Unavailable`)."""
        return Health.from_json(self._call("GET", "/healthz"))

    @operation("GET", "/metrics")
    def get_metrics(self) -> str:
        """The service's metrics in Prometheus text format."""
        response = self._send("GET", "/metrics", retry_safe=True)
        return response.text

    # -- what the service plays ------------------------------------------------
    @operation("GET", "/v1/variants")
    def list_variants(self) -> dict[str, Variant]:
        """Every variant the server plays, by name, with its rules as data (contracts, card
        points, the claim, table options)."""
        data = self._call("GET", "/v1/variants")
        found = (Variant.from_json(v) for v in data.get("variants", []))
        return {variant.name: variant for variant in found}

    @operation("GET", "/v1/house-bots")
    def list_house_bots(self) -> list[str]:
        """The names of the house bots a table can seat (:meth:`take_seat`'s ``house_bot``), weakest first."""
        return [str(name) for name in self._call("GET", "/v1/house-bots").get("house_bots", [])]

    # -- tables -----------------------------------------------------------
    @operation("GET", "/v1/games")
    def list_games(
        self, status: str | None = None, variant: str | None = None, page: int = 1, page_size: int = 20
    ) -> GamePage:
        """One page of tables, newest first, filtered by ``status`` and ``variant``."""
        params: dict[str, Any] = {"page": page, "page_size": page_size}
        if status is not None:
            params["status"] = status
        if variant is not None:
            params["variant"] = variant
        return GamePage.from_json(self._call("GET", "/v1/games", params=params))

    @operation("POST", "/v1/games")
    def create_game(
        self,
        variant: str,
        seats: int,
        *,
        options: Mapping[str, Any] | None = None,
        players: Sequence[str] = (),
        test: Mapping[str, Any] | None = None,
    ) -> CreatedGame:
        """Create a table; ``players`` (names) take the first seats at once and get their tokens.

        A ``test`` block (``seed``, ``stacked_decks``, ``start_round``) makes the table unrated.
        """
        body: dict[str, Any] = {"variant": variant, "seats": seats, "players": [{"name": n} for n in players]}
        if options:
            body["options"] = dict(options)
        if test is not None:
            body["test"] = dict(test)
        return CreatedGame.from_json(self._call("POST", "/v1/games", json=body, retry_safe=False))

    @operation("POST", "/v1/games/{game_id}/seats")
    def take_seat(
        self, game_id: str, name: str | None = None, seat: int | None = None, *, house_bot: str | None = None
    ) -> TakenSeat:
        """Take the lowest open seat (or ``seat``); the game starts when every seat is taken.

        ``house_bot`` (e.g. ``"greedy"``, with a client that has no token): seat one of the
        service's reference bots instead, which the service plays (the answer's ``token`` is ``None``)."""
        body: dict[str, Any] = {}
        if name is not None:
            body["name"] = name
        if seat is not None:
            body["seat"] = seat
        if house_bot is not None:
            body["house_bot"] = house_bot
        path = f"/v1/games/{_id(game_id)}/seats"
        return TakenSeat.from_json(self._call("POST", path, json=body, retry_safe=False))

    @operation("GET", "/v1/games/{game_id}")
    def get_game(self, game_id: str) -> GameView:
        """The caller's view: with a seat token, its hand and legal moves."""
        return GameView.from_json(self._call("GET", f"/v1/games/{_id(game_id)}"))

    @operation("GET", "/v1/games/{game_id}/replay")
    def get_replay(self, game_id: str) -> Replay:
        """A finished game: every event with every hand, and the seed."""
        return Replay.from_json(self._call("GET", f"/v1/games/{_id(game_id)}/replay"))

    # -- actions ----------------------------------------------------------
    @operation("POST", "/v1/games/{game_id}/turn/draw")
    def draw_card(
        self, game_id: str, source: str = "stock", *, if_match: int | None = None, idempotency_key: str | None = None
    ) -> GameView:
        """Draw from the ``stock`` or take the ``discard``; returns the seat's new view."""
        path = f"/v1/games/{_id(game_id)}/turn/draw"
        return self._act(path, {"source": source}, if_match, idempotency_key)

    @operation("POST", "/v1/games/{game_id}/turn/discard")
    def discard_card(
        self, game_id: str, card: str, *, if_match: int | None = None, idempotency_key: str | None = None
    ) -> GameView:
        """Discard ``card`` (a code such as ``"QS"``), ending the turn."""
        path = f"/v1/games/{_id(game_id)}/turn/discard"
        return self._act(path, {"card": card}, if_match, idempotency_key)

    @operation("POST", "/v1/games/{game_id}/claims")
    def claim_upcard(
        self, game_id: str, claim: bool = True, *, if_match: int | None = None, idempotency_key: str | None = None
    ) -> GameView:
        """Call "May I" (buy, in Shanghai) on the upcard, or pass with ``claim=False``."""
        path = f"/v1/games/{_id(game_id)}/claims"
        return self._act(path, {"claim": claim}, if_match, idempotency_key)

    def pass_upcard(self, game_id: str, *, if_match: int | None = None) -> GameView:
        """Pass on the upcard (``claim_upcard(game_id, False)``)."""
        return self.claim_upcard(game_id, False, if_match=if_match)

    @operation("POST", "/v1/games/{game_id}/melds")
    def go_down(
        self,
        game_id: str,
        melds: Sequence[Sequence[str]],
        lay_offs: Iterable[Mapping[str, Any]] = (),
        *,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> GameView:
        """Lay down the round's contract (runs low to high), with optional lay-offs, all or nothing."""
        body = {"melds": [list(m) for m in melds], "lay_offs": [dict(p) for p in lay_offs]}
        return self._act(f"/v1/games/{_id(game_id)}/melds", body, if_match, idempotency_key)

    @operation("POST", "/v1/games/{game_id}/lay-offs")
    def lay_off(
        self,
        game_id: str,
        lay_offs: Iterable[Mapping[str, Any]],
        *,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> GameView:
        """Lay off cards on melds: ``[{"meld": 3, "cards": ["8C"], "joker_to": "high"}]``, all or nothing."""
        body = {"lay_offs": [dict(p) for p in lay_offs]}
        return self._act(f"/v1/games/{_id(game_id)}/lay-offs", body, if_match, idempotency_key)

    def play(
        self, game_id: str, move: LegalMove, *, if_match: int | None = None, if_key: str | None = None
    ) -> GameView:
        """Send one of the view's legal moves to its endpoint (its body as it is).

        ``if_match``: only if the game is still at that version; ``if_key``: only while the
        seat's decision has that :attr:`~mayi_sdk.models.Decision.key` (another seat's
        answer to the upcard meanwhile does not refuse it). Either refuses with
        :class:`~mayi_sdk.errors.VersionConflict` (412) once the game has moved on."""
        precondition = f"key:{if_key}" if if_key is not None else if_match
        return self._act(f"/v1/games/{_id(game_id)}/{move.path}", dict(move.body), precondition, None)

    # -- events -----------------------------------------------------------
    @operation("GET", "/v1/games/{game_id}/events")
    def get_events(self, game_id: str, after: int = 0, wait: float = 0) -> EventPage:
        """The events after ``after`` the caller may see; with none, wait up to ``wait`` s (≤ 60) for one."""
        wait = max(0.0, min(float(wait), MAX_WAIT))
        path = f"/v1/games/{_id(game_id)}/events"
        data = self._call("GET", path, params={"after": after, "wait": wait}, timeout=self.timeout + wait)
        return EventPage.from_json(data)

    @operation("GET", "/v1/games/{game_id}/events/stream")
    def stream_events(self, game_id: str, after: int = 0) -> Iterator[Event]:
        """The events after ``after`` as the server streams them (Server-Sent Events), for as long
        as this one connection lasts (the server closes it after a few minutes). Use
        :meth:`follow_events` to follow a game to its end across reconnections."""
        path = f"/v1/games/{_id(game_id)}/events/stream"
        headers = {"Accept": "text/event-stream", "Last-Event-ID": str(after)}
        response = self._send("GET", path, headers=headers, retry_safe=True, stream=True, timeout=(self.timeout, 90.0))
        with response:
            if response.status_code == 204:
                return
            yield from parse_sse(line.decode() if isinstance(line, bytes) else line for line in response.iter_lines())

    def follow_events(self, game_id: str, after: int = 0, *, sse: bool = True, wait: float = 30) -> Iterator[Event]:
        """Every event after ``after`` until the game is over, reconnecting and resuming
        after the last event seen (by SSE, or by long-polls with ``sse=False``)."""
        while True:
            got = False
            try:
                if sse:
                    for event in self.stream_events(game_id, after):
                        got, after = True, event.seq
                        yield event
                else:
                    page = self.get_events(game_id, after, wait)
                    for event in page.events:
                        got, after = True, event.seq
                        yield event
            except errors.TransportError:
                time.sleep(self.backoff)
                continue
            # Nothing new and the game is over: done, once a last read finds nothing (the last
            # events may have landed just before the game ended).
            if not got and self.get_game(game_id).status == "finished" and not self.get_events(game_id, after).events:
                return

    # -- bots -------------------------------------------------------------
    @operation("POST", "/v1/bots")
    def register_bot(self, name: str, webhook_url: str | None = None) -> BotAccount:
        """Register a bot: its id, bearer token and webhook secret (shown only once). Use the
        token as this client's (``client.with_token(account.token)``) to take seats and act as
        the bot. With ``webhook_url``, each decision waiting for it is POSTed there too."""
        body: dict[str, Any] = {"name": name}
        if webhook_url is not None:
            body["webhook_url"] = webhook_url
        return BotAccount.from_json(self._call("POST", "/v1/bots", json=body, retry_safe=False))

    @operation("GET", "/v1/bots/me")
    def get_my_bot(self) -> BotProfile:
        """The bot's profile and the games it sits in (needs a bot token)."""
        return BotProfile.from_json(self._call("GET", "/v1/bots/me"))

    @operation("PATCH", "/v1/bots/me")
    def update_my_bot(self, webhook_url: str | None) -> BotProfile:
        """Set the bot's webhook URL (``None``: no more deliveries; the bot polls)."""
        return BotProfile.from_json(
            self._call("PATCH", "/v1/bots/me", json={"webhook_url": webhook_url}, retry_safe=True)
        )

    @operation("POST", "/v1/bots/me/webhook-secret")
    def rotate_webhook_secret(self) -> WebhookSecret:
        """A new webhook secret (shown only once); for a while deliveries carry signatures by
        the new and the previous one, so the receiver can switch without losing any."""
        return WebhookSecret.from_json(self._call("POST", "/v1/bots/me/webhook-secret", retry_safe=False))

    @operation("GET", "/v1/bots/me/deliveries")
    def get_deliveries(self) -> list[Delivery]:
        """The bot's webhook delivery log, newest first."""
        data = self._call("GET", "/v1/bots/me/deliveries")
        return [Delivery.from_json(d) for d in data.get("deliveries", [])]

    @operation("POST", "/v1/bots/me/token")
    def rotate_bot_token(self) -> BotAccount:
        """A new bot token; the old one stops working at once. This client uses the new one from now on."""
        account = BotAccount.from_json(self._call("POST", "/v1/bots/me/token", retry_safe=False))
        self.token = account.token
        return account

    @operation("GET", "/v1/bots/me/decisions")
    def get_decisions(self, wait: float = 0, skip: Iterable[str] = ()) -> DecisionList:
        """Every decision waiting for the bot (each with the seat's view and legal moves);
        with none, wait up to ``wait`` s (≤ 60) for one, or until the bot's last game ends.
        ``skip``: keys of decisions the bot waits on (:attr:`Decision.key`), left out until
        they change."""
        wait = max(0.0, min(float(wait), MAX_WAIT))
        params: dict[str, Any] = {"wait": wait}
        keys = sorted(set(skip))
        if keys:
            params["skip"] = keys
        data = self._call("GET", "/v1/bots/me/decisions", params=params, timeout=self.timeout + wait)
        return DecisionList.from_json(data)

    # -- the bot ladder -----------------------------------------------------
    @operation("POST", "/v1/ladder/entries")
    def enter_ladder(self, variant: str, max_games: int = 1) -> LadderEntry:
        """Enter the bot in ``variant``'s ladder, playing up to ``max_games`` ladder games at
        once (needs a bot token; entering again changes the limit)."""
        body = {"variant": variant, "max_games": max_games}
        return LadderEntry.from_json(self._call("POST", "/v1/ladder/entries", json=body, retry_safe=True))

    @operation("DELETE", "/v1/ladder/entries/{variant}")
    def leave_ladder(self, variant: str) -> None:
        """Leave ``variant``'s ladder (matches in progress are played out). The bot leaves the
        leaderboard; its rating and history stay (:meth:`get_ladder_bot`)."""
        self._send("DELETE", f"/v1/ladder/entries/{_id(variant)}", retry_safe=False)

    @operation("GET", "/v1/ladder")
    def get_leaderboard(self, variant: str) -> Leaderboard:
        """``variant``'s leaderboard, best conservative rating first."""
        return Leaderboard.from_json(self._call("GET", "/v1/ladder", params={"variant": variant}))

    @operation("GET", "/v1/ladder/matches")
    def list_ladder_matches(self, variant: str, status: str = "finished", limit: int = 20) -> list[LadderMatch]:
        """Recent finished ladder matches, newest first (``status="playing"``: those in progress)."""
        params = {"variant": variant, "status": status, "limit": limit}
        data = self._call("GET", "/v1/ladder/matches", params=params)
        return [LadderMatch.from_json(m) for m in data.get("matches", [])]

    @operation("GET", "/v1/ladder/bots/{bot_id}")
    def get_ladder_bot(self, bot_id: str, variant: str) -> LadderBot:
        """The bot's rating in ``variant``'s ladder, also once it left (``entered`` false)."""
        data = self._call("GET", f"/v1/ladder/bots/{_id(bot_id)}", params={"variant": variant})
        return LadderBot.from_json(data)

    @operation("GET", "/v1/ladder/bots/{bot_id}/history")
    def get_rating_history(self, bot_id: str, variant: str, limit: int = 100) -> list[RatingPoint]:
        """The bot's rating after each of its last ``limit`` ladder matches of ``variant``, oldest first."""
        params = {"variant": variant, "limit": limit}
        data = self._call("GET", f"/v1/ladder/bots/{_id(bot_id)}/history", params=params)
        return [RatingPoint.from_json(h) for h in data.get("history", [])]

    # -- plumbing ---------------------------------------------------------
    def _act(self, path: str, body: dict[str, Any], if_match: int | str | None, key: str | None) -> GameView:
        headers = {"Idempotency-Key": key or uuid.uuid4().hex}
        if if_match is not None:
            headers["If-Match"] = str(if_match)
        return GameView.from_json(self._call("POST", path, json=body, headers=headers, retry_safe=True))


def _id(game_id: str) -> str:
    return quote(game_id, safe="")
