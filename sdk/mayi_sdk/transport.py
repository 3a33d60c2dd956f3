"""How the :class:`~mayi_sdk.Client` sends a request: through its ``requests.Session``, with
the bearer token, retried only where that is safe, and an error answer raised as the
exception of :mod:`mayi_sdk.errors` its problem names.

* A request that got no answer (connection refused or reset, a timeout) is retried
  when repeating it cannot do anything twice: reads, and actions, which always carry
  an ``Idempotency-Key`` (a retry of an action that was applied gets the first
  answer again, and never plays twice);
* 429 (rate limited) is retried after its ``Retry-After`` for every request: the
  server did nothing with it. Each wait is logged as a warning (the ``mayi_sdk.client``
  logger) naming the limit and the wait, and counted in :attr:`Transport.rate_limited`;
* 503 is retried after its ``Retry-After`` for reads and actions only: a 503 may
  come after the action was applied, and the Idempotency-Key makes that safe.

Table creation and seat taking carry no idempotency key in the API, so they are
retried only on 429.

Every request goes through ``Session.request`` (its headers, cookies, proxies, CA bundle,
redirects, hooks and transport adapters, as ``requests`` documents them). The client's own
session reads the environment's proxies for the server (``HTTP_PROXY``, ``HTTPS_PROXY``,
``ALL_PROXY``, ``NO_PROXY``) and CA bundle (``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE``) once,
when the client is made, rather than on every request (:func:`settled_session`). A bot that
wants another transport passes a session of its own (``session=``), used as it is: for
example one with a transport adapter mounted for the server's URL.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import requests
import requests.utils

from . import errors
from .models import Event

log = logging.getLogger("mayi_sdk.client")

DEFAULT_TIMEOUT = 10.0
#: What the client sends as ``User-Agent`` (unless its session has one of its own).
USER_AGENT = "mayi-sdk/0.1"
#: The longest the SDK sleeps on one ``Retry-After`` before trying again.
MAX_RETRY_SLEEP = 30.0


def settled_session(url: str) -> requests.Session:
    """A ``requests.Session`` for the server at ``url`` that took from the environment what
    ``requests`` would take on every request (the proxies for ``url``, the CA bundle) and then
    stops reading it (``trust_env`` off): one read instead of a scan of the environment per
    request. It sends no ``.netrc`` credentials, which would replace the bearer token."""
    session = requests.Session()
    session.proxies.update(requests.utils.get_environ_proxies(url))
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if bundle:
        session.verify = bundle
    session.trust_env = False
    return session


class Transport:
    """Requests to the service at ``base_url`` with ``token``, sent and retried as the
    module says: ``timeout`` bounds every request (long-polls get their wait on top);
    ``max_retries`` bounds the retries of one call, ``backoff`` the first pause between
    them (doubled each time); ``session``: the ``requests.Session`` that sends every request
    (default: a new one)."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        backoff: float = 0.5,
        session: requests.Session | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.session = session or settled_session(self.base_url)
        if self.session.headers.get("User-Agent") in (None, requests.utils.default_user_agent()):
            self.session.headers["User-Agent"] = USER_AGENT  # a session's own User-Agent is kept
        #: 429 answers this client waited out (and then tried again), each logged as a warning.
        self.rate_limited = 0
        self._counting = threading.Lock()

    def close(self) -> None:
        self.session.close()

    def _call(self, method: str, path: str, *, retry_safe: bool | None = None, **options: Any) -> Any:
        """The JSON answer of :meth:`_send` (``retry_safe`` by default for a GET only)."""
        safe = method == "GET" if retry_safe is None else retry_safe
        return self._send(method, path, retry_safe=safe, **options).json()

    def _send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        retry_safe: bool,
        stream: bool = False,
        timeout: float | tuple[float, float] | None = None,
    ) -> requests.Response:
        """Send one request, retrying where it is safe; raise the error tree's exception for an error."""
        all_headers = dict(headers or {})
        if self.token:
            all_headers["Authorization"] = f"Bearer {self.token}"
        url = self.base_url + path
        attempt = 0
        while True:
            try:
                response = self.session.request(
                    method,
                    url,
                    json=json,
                    params=params,
                    headers=all_headers,
                    timeout=timeout or self.timeout,
                    stream=stream,
                )
            except (requests.ConnectionError, requests.Timeout) as exc:
                if retry_safe and attempt < self.max_retries:
                    attempt += 1
                    time.sleep(self.backoff * 2 ** (attempt - 1))
                    continue
                raise errors.TransportError(f"{method} {path}: no answer from {self.base_url} ({exc})") from exc
            if response.status_code < 400:
                return response
            error = errors.error_for(response.status_code, _problem(response))
            limited = isinstance(error, errors.RateLimited)
            retryable = limited or (retry_safe and isinstance(error, errors.Unavailable))
            if retryable and attempt < self.max_retries:
                attempt += 1
                response.close()
                pause = _retry_after(response, self.backoff * 2 ** (attempt - 1))
                if limited:
                    self._count_rate_limited()
                    log.warning(
                        "%s %s: rate limited by the server's %s limit; waiting %.1f s (Retry-After), then again",
                        method,
                        path,
                        _limit_name(response),
                        pause,
                    )
                time.sleep(pause)
                continue
            response.close()
            raise error

    def _count_rate_limited(self) -> None:
        with self._counting:
            self.rate_limited += 1


def _problem(response: requests.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict):
        return data
    return {"detail": f"HTTP {response.status_code}: {response.text[:200]}".strip()}


def _limit_name(response: requests.Response) -> str:
    """The name of the limit a 429 names in its ``RateLimit`` header field (``"token";r=0;t=17``),
    else its problem's detail."""
    field = response.headers.get("RateLimit", "")
    if field.startswith('"') and '"' in field[1:]:
        return repr(field[1:].split('"', 1)[0])
    detail = _problem(response).get("detail")
    return f"({detail})" if detail else "(unnamed)"


def _retry_after(response: requests.Response, default: float) -> float:
    raw = response.headers.get("Retry-After", "")
    try:
        seconds = float(raw)
    except ValueError:
        seconds = default
    return max(0.0, min(seconds, MAX_RETRY_SLEEP))


def parse_sse(lines: Iterable[str]) -> Iterator[Event]:
    """Events out of a Server-Sent Events stream (comments and ``retry:`` lines skipped)."""
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield Event.from_json(json.loads("\n".join(data)))
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
