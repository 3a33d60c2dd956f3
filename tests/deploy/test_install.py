"""The distributions as a user installs them: each built as a wheel, installed with no
extras and not editable in a fresh virtualenv, outside the repository.

``mayi-game-service`` (the repository's root) gives a ``mayi serve`` that serves
``/healthz`` and the SDK; ``mayi-game-sdk`` (``sdk/``) gives the SDK alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from serving import as_a_user_serves

ROOT = Path(__file__).resolve().parents[2]
#: Caps on a loaded CI machine (never timings): building a wheel; installing it with its dependencies.
BUILD_CAP = 300
INSTALL_CAP = 600


def _installed(tmp_path: Path, project: Path) -> Path:
    """A fresh virtualenv with ``project``'s wheel installed in it; its ``bin`` folder."""
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), str(project)]
    subprocess.run(build, check=True, timeout=BUILD_CAP, cwd=tmp_path)
    (wheel,) = wheels.glob("*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=BUILD_CAP)
    install = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)]
    subprocess.run(install, check=True, timeout=INSTALL_CAP, cwd=tmp_path)
    return venv / "bin"


def _python(bin_dir: Path, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "REDIS_URL") and not k.startswith("MAYI_")}
    return subprocess.run(
        [str(bin_dir / "python"), "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_service_wheel_gives_a_working_mayi_serve_and_the_sdk(tmp_path: Path) -> None:
    bin_dir = _installed(tmp_path, ROOT)
    sdk = _python(bin_dir, "from mayi_sdk import Client; import mayi_bots, mayi_service.wsgi", tmp_path)
    assert sdk.returncode == 0, sdk.stderr
    # The defaults a user gets: the embedded Redis (in ./var), a job worker beside the API.
    with as_a_user_serves(bin_dir / "mayi", tmp_path) as served:
        assert served.stop() == 0, served.stderr()


def test_the_sdk_wheel_alone_gives_the_client(tmp_path: Path) -> None:
    bin_dir = _installed(tmp_path, ROOT / "sdk")
    alone = _python(
        bin_dir,
        "from mayi_sdk import Client\n"
        "import importlib.util as u\n"
        "print([m for m in ('mayi_service', 'mayi_engine', 'mayi_bots', 'flask') if u.find_spec(m)])",
        tmp_path,
    )
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout.strip() == "[]", "the SDK's distribution installs the SDK and requests only"
