"""Liveness and metrics."""

from __future__ import annotations

import hmac
import time
from typing import Any

from flask import Response, request
from flask.views import MethodView
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily

from mayi_engine import GameStatus
from mayi_service.api.common import StrictBlueprint, document_errors
from mayi_service.api.context import services
from mayi_service.api.schemas import catalog as s
from mayi_service.problem_types import Problem, ServiceError
from mayi_service.storage.connections import reachable

blp = StrictBlueprint("health", __name__, description="Liveness and metrics")

REQUESTS = Counter("mayi_http_requests_total", "HTTP requests", ["method", "endpoint", "status"])
LATENCY = Histogram(
    "mayi_http_request_seconds",
    "HTTP request latency",
    ["endpoint"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
)
ACTIONS = Counter("mayi_actions_total", "Game actions applied", ["action", "outcome"])


@blp.route("/healthz")
class Health(MethodView):
    @blp.response(200, s.HealthSchema)
    @blp.alt_response(
        503,
        schema=s.HealthSchema,
        description="Redis is not reachable (on a Redis Cluster: a primary, or the cluster is down), "
        "or the Redis of the jobs is not",
        headers={"Retry-After": {"$ref": "#/components/headers/RetryAfter"}},
    )
    @blp.doc(operationId="getHealth")
    def get(self) -> Any:
        """Liveness and Redis reachability

        `redis` is true when the game store answers (on a Redis Cluster: every primary answers
        and says the cluster is ok) and so does the Redis of the jobs.
        """
        svc = services()
        ok = reachable(svc.redis)
        jobs = svc.jobs
        if ok and jobs is not svc.redis:
            ok = reachable(jobs)
        body = {"status": "ok" if ok else "unavailable", "redis": ok}
        if ok:
            return body, 200
        return body, 503, {"Retry-After": "2"}


@blp.route("/metrics")
class Metrics(MethodView):
    @blp.response(200, {"type": "string"}, content_type=CONTENT_TYPE_LATEST, description="Prometheus text format")
    @blp.doc(operationId="getMetrics")
    @document_errors(401)
    def get(self) -> Response:
        """Metrics in Prometheus format

        Requests, latency, actions, games by status, and the job queue depth.
        Needs `Authorization: Bearer <MAYI_METRICS_TOKEN>` when the operator set one.
        """
        expected = services().settings.metrics_token
        if expected:
            given = request.headers.get("Authorization", "").partition(" ")[2].strip()
            if not hmac.compare_digest(given.encode(), expected.encode()):
                raise ServiceError(
                    Problem.UNAUTHORIZED,
                    "/metrics needs the operator's metrics token: 'Authorization: Bearer <MAYI_METRICS_TOKEN>'",
                    {"WWW-Authenticate": 'Bearer realm="mayi-metrics"'},
                )
        registry = _registry()
        return Response(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


class _StoreCollector:
    """Gauges read from Redis at scrape time (shared by every API process)."""

    def collect(self) -> Any:
        svc = services()
        games = GaugeMetricFamily("mayi_games", "Games by status", labels=["status"])
        for status in GameStatus:
            games.add_metric([status], svc.games.repo.count(status))
        yield games
        depth = GaugeMetricFamily("mayi_queue_depth", "Jobs waiting in the work queue")
        jobs = svc.jobs  # the Redis of the RQ jobs
        depth.add_metric([], jobs.llen(f"rq:queue:{svc.settings.queue_name}"))
        yield depth


def _registry() -> CollectorRegistry:
    import os

    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = CollectorRegistry()
        for collector in (REQUESTS, LATENCY, ACTIONS):
            registry.register(collector)
    registry.register(_StoreCollector())  # type: ignore[arg-type]
    return registry


#: Where the start of a request is noted in its WSGI environ (by the app's WSGI entry,
#: :func:`mayi_service.api.app.create_app`; by :func:`before_request` where that is not used).
STARTED = "mayi.started"

#: The metric series of each (method, endpoint, status) seen: labels looked up once, not
#: three times a request. (Bounded: beyond this many, looked up each time.)
_SERIES: dict[tuple[str, str, int], tuple[Any, Any, Any]] = {}
_SERIES_MAX = 2000


def before_request() -> None:
    request.environ.setdefault(STARTED, time.perf_counter())


def after_request(response: Response) -> Response:
    """Count the request and its latency (and, for a game action, the action)."""
    req = request._get_current_object()  # type: ignore[attr-defined]
    started = req.environ.get(STARTED)
    status = response.status_code
    rule = req.url_rule
    if rule is None:  # (not kept: whether it counts as an action depends on its path)
        series = _series(req.method, "unmatched", status, req.path)
    else:
        key = (req.method, rule.rule, status)
        series = _SERIES.get(key)
        if series is None:
            series = _series(req.method, rule.rule, status, req.path)
            if len(_SERIES) < _SERIES_MAX:
                _SERIES[key] = series
    latency, count, action = series
    if started is not None:
        latency.observe(time.perf_counter() - started)
    count.inc()
    if action is not None:
        action.inc()
    return response


def _series(method: str, endpoint: str, status: int, path: str) -> tuple[Any, Any, Any]:
    action = None
    if method == "POST" and "/v1/games/" in path and endpoint.rsplit("/", 1)[-1] != "seats":
        name = endpoint.split("<string:game_id>/", 1)[-1]
        action = ACTIONS.labels(name, "ok" if status < 400 else "refused")
    return LATENCY.labels(endpoint), REQUESTS.labels(method, endpoint, str(status)), action


__all__ = ["REGISTRY", "blp"]
