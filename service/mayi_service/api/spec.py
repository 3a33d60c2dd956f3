"""What the OpenAPI document says of the API as a whole: its version and description, the
request and response headers operations refer to, and its default error response."""

from __future__ import annotations

from typing import Any

from flask_smorest import Api
from flask_smorest.utils import prepare_response

from mayi_service.api import problems
from mayi_service.api.schemas.problem import ProblemSchema

API_VERSION = "1.0.0"

DESCRIPTION = """\
The HTTP API of the May I game service: tables, turns, claims, melds and
events for the contract-rummy games **May I** and **Shanghai**.

* Card codes: rank then suit (`TH`, `AS`), `JK` for a joker; input is
  case-insensitive and `10H` is read as `TH`.
* Auth: `Authorization: Bearer <token>`; a seat token acts for one seat. No
  token: the public (spectator) view.
* Errors are `application/problem+json` with a stable `code`; a rule
  violation says which rule, in words a player understands.
* Rate limits count what play does not need: a move the game accepts, a
  decisions poll that lists a decision and a seat's view with legal moves are
  not counted. Each response names its limits in `RateLimit-Policy` and the
  state of the first in `RateLimit` (draft-ietf-httpapi-ratelimit-headers-10);
  a 429 also has `Retry-After`.
* Actions accept `If-Match: <version>` (412 if the game moved on) or
  `If-Match: key:<decision key>` (a seat view's `key`; 412 if the seat's
  choices changed), and
  `Idempotency-Key` (a retry gets the first response again).
"""


#: Request headers (and the stream's ``after``), as components the operations refer to by name.
PARAMETERS: dict[str, dict[str, Any]] = {
    "IfMatch": {
        "name": "If-Match",
        "in": "header",
        "description": "Act only if the game is still at this version (a number, or the view's ETag); "
        "412 `version_conflict` if it has moved on. `*`: any version. `key:<key>` (a decision's `key` "
        "from `GET /v1/bots/me/decisions`, or a seat view's `key`): act only while the seat's decision has "
        "that key, whatever other seats answered to the upcard meanwhile (412 once its choices have changed)",
        "schema": {
            "type": "string",
            "pattern": '^(\\*|(W/)?"*([0-9]{1,15}|[0-9]{1,15}-[^-]*|.*-[0-9]{1,15}-[^-]*|key:[A-Za-z0-9_=-]{1,64})"*)$',
            "example": "12",
        },
    },
    "IdempotencyKey": {
        "name": "Idempotency-Key",
        "in": "header",
        "description": "1 to 255 characters: a retry with the same key and body gets the first answer, "
        "and the action takes effect once; the same key with another body is 422 `idempotency_key_reused`",
        "schema": {"type": "string", "minLength": 1, "maxLength": 255},
    },
    "IfNoneMatch": {
        "name": "If-None-Match",
        "in": "header",
        "description": "The ETag of the view you hold: 304 with no body if it is still current",
        "schema": {"type": "string"},
    },
    "LastEventID": {
        "name": "Last-Event-ID",
        "in": "header",
        "description": "Resume after this event number (an EventSource sends it when it reconnects); "
        "wins over `after`; empty: as if not sent",
        "schema": {"type": "string", "pattern": "^[0-9]{0,15}$"},
    },
    "After": {
        "name": "after",
        "in": "query",
        "description": "Resume after this event number (default 0: from the first event)",
        "schema": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999_999, "default": 0},
    },
}

#: Response headers, as components.
HEADERS: dict[str, dict[str, Any]] = {
    "ETag": {
        "description": 'The view\'s tag: `"<game>-<version>-<seat or p>"`; send it as If-None-Match or If-Match',
        "schema": {"type": "string"},
    },
    "RetryAfter": {"description": "Seconds to wait before trying again", "schema": {"type": "integer", "minimum": 1}},
    # draft-ietf-httpapi-ratelimit-headers-10 (Structured Fields lists of items).
    "RateLimitPolicy": {
        "description": "Every rate limit the request was counted against: its name, `q` the requests it "
        'allows and `w` its window in seconds, e.g. `"token";q=600;w=60, "address";q=3000;w=60` '
        "(draft-ietf-httpapi-ratelimit-headers-10; sent on every response to a rate-limited request)",
        "schema": {"type": "string"},
    },
    "RateLimit": {
        "description": "The state of the limit that applies first (the one exceeded, on a 429): `r` the "
        'requests it has left, `t` the seconds until its window lets more in, e.g. `"token";r=42;t=17`',
        "schema": {"type": "string"},
    },
}


class ProblemApi(Api):  # type: ignore[misc]
    """flask-smorest's ``Api``, with the default error response documented as the
    service sends every error: ``application/problem+json`` (not flask-smorest's own
    error body, which this service never sends)."""

    def _register_responses(self) -> None:
        response = {"description": "Any other error, as problem details", "schema": ProblemSchema}
        prepare_response(response, self.spec, problems.CONTENT_TYPE)
        self.spec.components.response(self.DEFAULT_ERROR_RESPONSE_NAME, response, lazy=True)

    def _register_pagination_header(self) -> None:
        """None: no operation pages with flask-smorest's header (its schema would be an unused component)."""
