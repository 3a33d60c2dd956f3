"""docker-compose.yml and the Dockerfile: they parse and name commands that exist.

These checks need no Docker; tests/deploy builds the image and runs the stack on a
real Docker engine (``pytest -m docker``).
"""

from __future__ import annotations

import importlib
import shlex
from pathlib import Path

import yaml
from click.testing import CliRunner

from mayi_service.cli import main
from mayi_service.storage.embedded import APPENDFSYNC

ROOT = Path(__file__).resolve().parents[3]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _check_command(argv: list[str]) -> None:
    program = argv[0]
    if program == "mayi":
        result = CliRunner().invoke(main, [*argv[1:], "--help"])
        assert result.exit_code == 0, f"'mayi {' '.join(argv[1:])}' is not a command: {result.output}"
    elif program == "gunicorn":
        target = argv[-1]
        module, _, attr = target.partition(":")
        assert hasattr(importlib.import_module(module), attr), f"gunicorn target {target} does not exist"
        config = argv[argv.index("-c") + 1]
        assert config.startswith("python:"), "gunicorn reads the project's config module"
        conf = importlib.import_module(config[len("python:") :])
        worker = importlib.import_module(conf.worker_class.rpartition(".")[0])
        worker_class = getattr(worker, conf.worker_class.rpartition(".")[2])
        from gunicorn.workers.ggevent import GeventWorker

        assert issubclass(worker_class, GeventWorker), "long-polls and SSE must not cost a thread each: gevent"
    elif program.startswith("redis-server"):
        assert "--appendonly" in argv and argv[argv.index("--appendonly") + 1] == "yes", "Redis must persist (AOF)"
        # Written before each answer, as the embedded Redis is: a killed Redis loses no acknowledged action.
        assert argv[argv.index("--appendfsync") + 1] == APPENDFSYNC, "--appendfsync is not the embedded Redis' policy"
    else:
        raise AssertionError(f"unexpected program {program}")


def test_compose_services_and_commands(monkeypatch, tmp_path):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")  # importing the WSGI app must not start Redis
    compose = _compose()
    services = compose["services"]
    assert {"redis", "api", "worker"} <= set(services)
    for name in ("redis", "api", "worker"):
        _check_command(services[name]["command"])
    _check_command(services["redis-node-1"]["command"])  # the cluster's nodes (one anchor)
    assert services["api"]["environment"]["REDIS_URL"].startswith("redis://redis:")
    assert services["worker"]["environment"]["REDIS_URL"] == services["api"]["environment"]["REDIS_URL"]
    assert "healthcheck" in services["redis"] and "healthcheck" in services["api"]
    assert "/healthz" in " ".join(services["api"]["healthcheck"]["test"])
    assert "redis-data" in compose["volumes"]
    # The proxy's config exists and points at the api service.
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "server api:8000" in nginx


def test_dockerfile_command_matches_compose(monkeypatch):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    text = (ROOT / "Dockerfile").read_text()
    cmd_line = text[text.index("CMD [") :]
    cmd_line = cmd_line[: cmd_line.index("]") + 1].replace("\\\n", " ")
    argv = yaml.safe_load(cmd_line[len("CMD ") :])
    _check_command(argv)
    assert argv == _compose()["services"]["api"]["command"]
    assert shlex.join(argv)
