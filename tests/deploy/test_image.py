"""The image built from the repository's Dockerfile, on a real Docker engine: its commands
start, the WSGI app imports, and it runs as a user other than root."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.docker


def test_the_image_runs_the_commands_the_compose_file_names(docker_engine: Any, image: str) -> None:
    def run(*argv: str) -> str:
        # No network: importing the app must not need Redis (it connects on first use).
        env = ["--env", "REDIS_URL=redis://127.0.0.1:1/0"]
        return docker_engine.docker("run", "--rm", "--network=none", *env, image, *argv).stdout

    assert "Usage: mayi" in run("mayi", "--help")
    assert "--jobs" in run("mayi", "worker", "--help")
    assert run("python", "-c", "import mayi_service.wsgi as w, mayi_sdk; print(callable(w.app))").strip() == "True"
    assert run("id", "-u").strip() != "0"
    user = docker_engine.docker("image", "inspect", "--format", "{{.Config.User}}", image).stdout.strip()
    assert user and user != "root"
    size = int(docker_engine.docker("image", "inspect", "--format", "{{.Size}}", image).stdout)
    line = f"image {image}: {size / 1e6:.0f} MB (on the CI stand-in base image)"
    print(line)
    (docker_engine.cache / "image-size.txt").write_text(line + "\n")
