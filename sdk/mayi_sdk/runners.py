"""Runners: play a :class:`~mayi_sdk.bot.Bot` in every game it sits in on a server.

:func:`run_polling` long-polls the bot's decisions (``GET /v1/bots/me/decisions``): one
request tells it every game and seat where it must act, with the seat's view and legal
moves; it answers with the bot's move, sent with ``If-Match: key:<the decision's key>``
(so that another seat's answer to the same upcard, which leaves the bot's choices as they
were, does not refuse it) and an automatic Idempotency-Key. When the answer is a view where the same seat must act
again (draw, then discard; in Shanghai, a claim on its own discard), it decides on it at
once, without polling, and sends that move under the key the answer carries (``GameView.key``).

A bot that answers :data:`~mayi_sdk.bot.WAIT` makes no move: the runner gives the
decision's ``key`` as ``skip`` to its next polls, so the server leaves that decision out
and the poll waits until the seat's legal moves change (a new key) or another decision
comes. The bot is not asked the same decision twice.

It survives the bot and the server: a ``decide`` that raises, or answers a move the
server refuses, is logged (and counted: :class:`RunStats`) and that decision is left to the clock (it is skipped in the
same way, until it changes); a server that stops answering (a restart) is retried with
a growing pause until it is back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from . import errors
from .bot import Bot, as_legal_move, is_wait
from .client import Client
from .models import GameView

log = logging.getLogger("mayi_sdk.runners")

#: Longest pause between attempts while the server does not answer.
MAX_PAUSE = 5.0


@dataclass
class RunStats:
    """What a run did. Each counter counts:

    * ``moves``: moves the server accepted;
    * ``sent``: moves sent (accepted, refused, or without an answer), not the polls;
    * ``refused``: moves the server refused (any 4xx answer to a move: the rules forbid it
      now (409), the seat's decision changed first (412), the move is malformed (422)...),
      each logged as a warning; the decision is left to the next poll, or to the clock;
    * ``too_late``: of the refused moves, the claims and passes refused with 412 because
      the claim window they answered had closed when they arrived (the seat on turn took
      the upcard or drew first, or the clock closed it). The rules make these: an answer
      to the upcard can always lose that race to the seat on turn;
    * ``version_conflicts``: the other moves refused with 412: the seat's choices had
      changed since the decision the move answered;
    * ``failures``: decisions where ``decide`` raised or answered something not a move (the
      clock plays them);
    * ``waits``: decisions the bot waited on (:data:`~mayi_sdk.bot.WAIT`);
    * ``polls``: decisions polls sent (``GET /v1/bots/me/decisions``);
    * ``outages``: polls the server did not answer (no answer, 503, 5xx, or still 429 after
      the client's retries);
    * ``rate_limited``: answers 429 the client waited out (``Retry-After``) and then sent
      again, polls and moves alike, each logged as a warning naming the limit;
    * ``games``: the games the bot was asked a decision in.
    """

    moves: int = 0
    failures: int = 0
    refused: int = 0
    too_late: int = 0
    version_conflicts: int = 0
    polls: int = 0
    outages: int = 0
    waits: int = 0
    sent: int = 0
    rate_limited: int = 0
    games: set[str] = field(default_factory=set)


def run_polling(
    bot: Bot,
    client: Client,
    *,
    wait: float = 30.0,
    stop: threading.Event | None = None,
    until_idle: bool = False,
) -> RunStats:
    """Play every game ``client``'s bot token sits in, until ``stop`` is set (or, with
    ``until_idle``, until the bot sits in no game that has not ended)."""
    stop = stop or threading.Event()
    stats = RunStats()
    limited = client.rate_limited  # the client's 429s waited out before this run
    skip: set[str] = set()  # keys of the decisions the bot waits on, or left to the clock
    passed: set[tuple[str, int, int]] = set()  # (game, seat, version) left so, seen without a key
    pause = 0.2
    while not stop.is_set():
        try:
            stats.polls += 1
            page = client.get_decisions(wait=wait, skip=skip)
            pause = 0.2
        except (errors.TransportError, errors.Unavailable, errors.ServerError, errors.RateLimited) as exc:
            stats.rate_limited = client.rate_limited - limited
            stats.outages += 1
            log.warning("the server did not answer (%s); trying again in %.1f s", exc, pause)
            stop.wait(pause)
            pause = min(MAX_PAUSE, pause * 2)
            continue
        fresh = []
        ignored = []  # listed although skipped (a server that does not know skip)
        left = []  # left at this version already, from a move's answer
        for decision in page.decisions:
            if decision.key in skip:
                ignored.append(decision.key)
            elif (decision.game_id, decision.seat, decision.version) in passed:
                left.append(decision.key)
            else:
                fresh.append(decision)
        skip.intersection_update(page.skipped)  # the others changed or were played
        skip.update(ignored, left)
        passed.clear()
        stats.rate_limited = client.rate_limited - limited
        if not fresh:
            if until_idle and page.games == 0:
                return stats
            if ignored:
                stop.wait(0.5)  # the server listed them anyway: do not spin
            continue
        for decision in fresh:
            stats.games.add(decision.game_id)
            undecided = play_decision(bot, client, decision.game_id, decision.view, stats, decision.key)
            if undecided is decision.view:
                skip.add(decision.key)
            elif undecided is not None and undecided.seat is not None:
                passed.add((decision.game_id, undecided.seat, undecided.version))
        stats.rate_limited = client.rate_limited - limited
    return stats


def play_decision(
    bot: Bot,
    client: Client,
    game_id: str,
    view: GameView,
    stats: RunStats,
    key: str | None = None,
    take: Callable[[str], bool] | None = None,
) -> GameView | None:
    """Decide and play; while the answer is a view where the seat must act again, go on.
    Every move is sent with ``If-Match: key:<key>``, the key of the decision it answers
    (``key``, else the view's own: a move's answer carries the seat's next decision's key),
    so that another seat's answer to the same upcard does not refuse it; only a view without
    a key (a server that sends none) is played on its version.

    ``take(key)``, if given, is asked before the bot decides on a move's answer: whether
    this runner is the one to answer the decision with that key (a webhook receiver, also
    sent that decision by the service, plays it only once); ``False`` ends the turn here.

    Returns the view the bot waited on or left to the clock (its ``decide`` failed or the
    server refused its move), or ``None`` when nothing is left undecided (a move committed,
    or the game moved on first)."""
    for _ in range(50):  # one turn is a handful of moves; a bound keeps a bad bot from looping
        seat = view.seat if view.seat is not None else -1
        if view.variant not in bot.variants:
            _learn_variants(bot, client)
        try:
            answer = bot.decide(view)
            if is_wait(answer):
                stats.waits += 1
                return view
            move = as_legal_move(answer)
            move.path  # noqa: B018  (a type that is no move's is the bot's bug too)
        except Exception as exc:  # a bot's bug must not stop the runner: the clock plays
            stats.failures += 1
            log.warning("game %s seat %d: decide failed, the clock plays: %s", game_id, seat, exc, exc_info=True)
            return view
        decision = key or view.key or None
        try:
            stats.sent += 1
            after = client.play(game_id, move, if_match=None if decision else view.version, if_key=decision)
        except errors.VersionConflict as exc:
            stats.refused += 1
            if decision and move.type == "claim":
                # Under its key, a claim (or pass) is refused only once the claim window it
                # answered has closed: the seat on turn took the upcard or drew, or the clock.
                stats.too_late += 1
                log.info("game %s seat %d: %r came too late (its claim window closed): %s", game_id, seat, move, exc)
            elif decision and exc.current_key is not None:
                # The seat still decides, under a new key: its choices changed while it decided
                # (the last answer to the upcard made the stock draw legal). The next poll has it.
                stats.version_conflicts += 1
                log.info("game %s seat %d: %r was for choices that changed meanwhile: %s", game_id, seat, move, exc)
            else:
                stats.version_conflicts += 1
                log.warning("game %s seat %d: %r came too late (the game moved on): %s", game_id, seat, move, exc)
            return None  # the next poll has the news
        except (errors.Conflict, errors.Invalid, errors.Forbidden, errors.NotFound, errors.BadRequest) as exc:
            stats.refused += 1
            log.warning("game %s seat %d: the server refused %r: %s", game_id, seat, move, exc)
            return view
        except (errors.TransportError, errors.Unavailable, errors.ServerError, errors.RateLimited) as exc:
            log.warning("game %s: no answer to the move (%s); the next poll shows where it stands", game_id, exc)
            return None
        stats.moves += 1
        key = None  # the next moves of the turn: under the key the answer carries
        view = after
        if not view.legal or view.status != "playing":
            return None
        if take is not None and view.key and not take(view.key):
            return None  # another thread answers this decision (its delivery came)
    return view


def _learn_variants(bot: Bot, client: Client) -> None:
    """Give ``bot`` the server's variants (:attr:`Bot.variants`); a server that does not
    answer is logged, and the bot decides without them."""
    try:
        bot.variants = {**bot.variants, **client.list_variants()}
    except errors.ApiError as exc:
        log.warning("GET /v1/variants: %s; the bot decides without the variants' rules", exc)
