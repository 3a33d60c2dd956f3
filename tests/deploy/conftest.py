"""A real Docker engine for the ``docker`` tests, and the project's image built on it.

The engine is this machine's ``dockerd`` (Debian's ``docker.io``), started here with no
bridge network and no iptables rules (every container runs on the host's network, all
traffic on loopback), its own socket, pidfile and data under ``.ci/cache/docker`` (so
the base images and the image's layers are kept between runs). Test processes share
one engine (pytest-xdist runs two): each registers its pid in a file under a lock, and
the last one to leave stops the engine, also when a test failed.

No registry is reachable, so the base images the Dockerfile and the compose file name
are stand-ins built from Debian's packages (``deploy/ci-images/build.sh``), and the
wheels are built on the host (``deploy/wheels``) and installed in the image with
``--no-index``. Under CI (``CI`` set) a Docker that cannot start fails the tests; elsewhere
it skips them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

import pytest
import service_fixtures
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".ci" / "cache"
WHEELS = ROOT / "deploy" / "wheels"
#: The image the compose file runs (its ``image:``), built from the repository's Dockerfile.
IMAGE = "mayi-service"
#: The engine's run folder (socket, pidfile, runtime state): one per worktree.
RUN = Path("/run") / f"mayi-ci-docker-{hashlib.sha256(str(ROOT).encode()).hexdigest()[:8]}"
SOCKET = RUN / "docker.sock"
#: Caps on a loaded CI machine (never timings): the engine answering; a build.
START_CAP = 90.0
BUILD_CAP = 900.0


def pytest_configure(config: pytest.Config) -> None:
    service_fixtures.register(config)  # the tests of the worker check use the service's fixtures


@dataclass(frozen=True)
class Docker:
    """A running engine: the environment that points the ``docker`` commands at it."""

    env: dict[str, str]
    #: CI's cache folder (kept between runs, not committed).
    cache: Path = CACHE

    def run(self, *argv: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout, check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited with {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done

    def docker(self, *args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run("docker", *args, timeout=timeout, check=check)


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"Docker is needed under CI and {why}")
    pytest.skip(f"no Docker engine: {why}")


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    RUN.mkdir(parents=True, exist_ok=True)
    with open(RUN / name, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs: an engine this process started and that has exited stays a
    zombie (its child, not waited for) until it is reaped here."""
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _users() -> list[int]:
    path = RUN / "users.json"
    pids = json.loads(path.read_text()) if path.exists() else []
    return [pid for pid in pids if _alive(pid)]


def _set_users(pids: list[int]) -> None:
    (RUN / "users.json").write_text(json.dumps(pids))


def _answers(env: dict[str, str]) -> bool:
    done = subprocess.run(["docker", "version"], env=env, capture_output=True, timeout=30, check=False)
    return done.returncode == 0


def _start_engine(env: dict[str, str]) -> None:
    (CACHE / "docker").mkdir(parents=True, exist_ok=True)
    log = open(CACHE / "dockerd.log", "ab")  # noqa: SIM115 - the engine's, kept open by it
    # Its own session: the engine outlives the test process that started it while another
    # test process still uses it (the last user stops it).
    subprocess.Popen(
        [
            "dockerd",
            "--bridge=none",
            "--iptables=false",
            "--ip6tables=false",
            f"--data-root={CACHE / 'docker'}",
            f"--exec-root={RUN / 'exec'}",
            f"--pidfile={RUN / 'dockerd.pid'}",
            f"--host=unix://{SOCKET}",
        ],
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    log.close()
    end = time.monotonic() + START_CAP
    while time.monotonic() < end:
        if _answers(env):
            return
        time.sleep(0.5)
    tail = (CACHE / "dockerd.log").read_text(errors="replace")[-2000:]
    _stop_engine(env)
    _unavailable(f"dockerd did not answer within {START_CAP:.0f} s:\n{tail}")


def _stop_engine(env: dict[str, str]) -> None:
    """Remove every container of this engine (a test cut short may leave some), stop the
    engine (it stops its containerd), then kill whatever of it is still left."""
    with contextlib.suppress(subprocess.SubprocessError, OSError):
        if _answers(env):
            ids = subprocess.run(["docker", "ps", "-aq"], env=env, capture_output=True, text=True, timeout=60).stdout
            if ids.split():
                subprocess.run(["docker", "rm", "-f", *ids.split()], env=env, capture_output=True, timeout=120)
    pidfile = RUN / "dockerd.pid"
    pid = int(pidfile.read_text().strip() or 0) if pidfile.exists() else 0
    if pid and _alive(pid):
        os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + 60
        while _alive(pid) and time.monotonic() < end:
            time.sleep(0.2)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    _kill_leftovers()


def _kill_leftovers() -> None:
    """SIGKILL what a killed engine leaves running: the processes of its containers (found
    by their cgroups: this engine's container ids only) and its containerd and shims (their
    command lines name this engine's run folder); unmount its mounts under its data root.
    Another engine's are never touched."""
    pids: set[int] = set()
    containers = CACHE / "docker" / "containers"
    for cid in os.listdir(containers) if containers.is_dir() else []:
        for group in (f"pids/docker/{cid}", f"system.slice/docker-{cid}.scope", f"docker/{cid}"):
            with contextlib.suppress(OSError, ValueError):
                pids |= {int(p) for p in Path("/sys/fs/cgroup", group, "cgroup.procs").read_text().split()}
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if entry.isdigit() and str(RUN).encode() in Path("/proc", entry, "cmdline").read_bytes():
                pids.add(int(entry))
    for pid in pids - {os.getpid()}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    # Its mounts (the data root bound on itself, the containers' layers), deepest first:
    # else the cache folder cannot be deleted.
    data = str(CACHE / "docker")
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for mount in sorted((m for m in mounts if m == data or m.startswith(data + "/")), reverse=True):
        subprocess.run(["umount", "--lazy", mount], capture_output=True, timeout=30, check=False)


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[Docker]:
    """The engine, started if no test process has yet; stopped when the last one is done."""
    if os.geteuid() != 0:
        _unavailable("dockerd must run as root here")
    missing = [tool for tool in ("dockerd", "docker", "debootstrap") if shutil.which(tool) is None]
    if missing:
        _unavailable(f"{', '.join(missing)} not installed (apt-get install docker.io debootstrap docker-compose)")
    env = {**os.environ, "DOCKER_HOST": f"unix://{SOCKET}", "DOCKER_BUILDKIT": "0", "DOCKER_CLI_HINTS": "false"}
    with _locked("engine.lock"):
        users = _users()
        if not _answers(env):
            _start_engine(env)
        _set_users([*users, os.getpid()])
    try:
        yield Docker(env)
    finally:
        with _locked("engine.lock"):
            users = [pid for pid in _users() if pid != os.getpid()]
            _set_users(users)
            if not users:
                _stop_engine(env)


def _marker_environment(docker: Docker) -> dict[str, str]:
    """The image's Python's environment markers (its version may not be the host's)."""
    code = (
        "import json, os, platform, sys; v = sys.version_info; print(json.dumps({"
        "'implementation_name': sys.implementation.name, 'os_name': os.name, 'sys_platform': sys.platform,"
        "'platform_machine': platform.machine(), 'platform_python_implementation': platform.python_implementation(),"
        "'platform_system': platform.system(), 'platform_release': platform.release(),"
        "'platform_version': platform.version(), 'python_full_version': platform.python_version(),"
        "'implementation_version': platform.python_version(), 'python_version': f'{v[0]}.{v[1]}'}))"
    )
    done = docker.docker("run", "--rm", "--network=none", "python:3.11-slim", "python3", "-c", code)
    return dict(json.loads(done.stdout))


def _required(wheelhouse: Path, markers: dict[str, str]) -> set[str]:
    """The requirements of the wheels in ``wheelhouse`` that apply on the image's Python."""
    wanted: set[str] = set()
    for wheel in wheelhouse.glob("*.whl"):
        with zipfile.ZipFile(wheel) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            metadata = Parser().parsestr(archive.read(name).decode())
        for line in metadata.get_all("Requires-Dist") or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({**markers, "extra": ""}):
                wanted.add(str(Requirement(f"{req.name}{req.specifier}")))
    return wanted


def _wheelhouse(docker: Docker) -> None:
    """Every wheel the image installs, built on the host into deploy/wheels (setuptools too:
    the image builds the project from its sources, with no index)."""
    markers = _marker_environment(docker)
    # The wheels depend on the declared dependencies and on both Pythons, not on the code
    # (the project itself is built in the image): kept while those are unchanged.
    key = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + json.dumps([markers, sys.version]).encode())
    stamp = CACHE / "wheels.key"
    if stamp.exists() and stamp.read_text() == key.hexdigest() and any(WHEELS.glob("*.whl")):
        return
    stamp.unlink(missing_ok=True)
    for old in WHEELS.glob("*.whl"):
        old.unlink()
    pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(WHEELS)]
    docker.run(*pip, str(ROOT), "setuptools>=77", timeout=BUILD_CAP)
    for own in WHEELS.glob("mayi_game_service-*.whl"):
        own.unlink()
    # The host's pip resolves for the host's Python: add what the image's Python needs beyond it.
    for _ in range(5):
        have = {canonicalize_name(w.name.split("-")[0]) for w in WHEELS.glob("*.whl")}
        missing = sorted(r for r in _required(WHEELS, markers) if canonicalize_name(Requirement(r).name) not in have)
        if not missing:
            stamp.write_text(key.hexdigest())
            return
        docker.run(*pip, *missing, timeout=BUILD_CAP)
    raise AssertionError(f"the wheels for the image still miss {missing}")


@pytest.fixture(scope="session")
def image(docker_engine: Docker) -> Iterator[str]:
    """The project's image, built from the repository's Dockerfile with no network."""
    with _locked("build.lock"):
        docker_engine.run(str(ROOT / "deploy" / "ci-images" / "build.sh"), str(CACHE), timeout=BUILD_CAP)
        _wheelhouse(docker_engine)
        docker_engine.docker(
            "build",
            "--network=none",
            "--build-arg",
            "PIP_NO_INDEX=1",
            "--tag",
            IMAGE,
            str(ROOT),
            timeout=BUILD_CAP,
        )
        docker_engine.docker("image", "prune", "--force")  # the layers of earlier builds
    yield IMAGE
