"""A real daemon per test, real engines (espeak-ng, pocketsphinx) and the fake audio routes."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon

from paseo.testing.fake_audio import FakeAudioServer

PHRASE = "close the window please"
ESPEAK_VOICE = ("-v", "en-us", "-s", "140")
"""A voice and rate pocketsphinx follows reliably (espeak-ng output is deterministic)."""
GRAMMAR = """#JSGF V1.0;
grammar commands;
public <command> = (open | close | lock) the (door | window | gate) [please | now];
"""


@pytest.fixture(scope="session")
def spoken(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """:data:`PHRASE` spoken by espeak-ng as a WAV."""
    binary = shutil.which("espeak-ng")
    if binary is None:
        pytest.fail("espeak-ng is not installed: run scripts/test (it installs it)")
    target = tmp_path_factory.mktemp("spoken") / "phrase.wav"
    subprocess.run([binary, *ESPEAK_VOICE, "-w", str(target), PHRASE], check=True, timeout=60)
    return target.read_bytes()


@pytest.fixture
def models_dir(tmp_path: Path) -> Path:
    root = tmp_path / "models"
    model = root / "pocketsphinx" / "commands"
    model.mkdir(parents=True)
    (model / "commands.gram").write_text(GRAMMAR)
    return root


@pytest.fixture
def local_config(models_dir: Path) -> dict[str, Any]:
    """Dictation and voice-mode STT on the local engine with the ``commands`` grammar."""
    site = {"provider": "local", "model": "commands"}
    return {
        "providers": {"local": {"modelsDir": str(models_dir)}},
        "features": {
            "dictation": {"stt": site},
            "voiceMode": {"stt": site, "tts": {"provider": "local", "voice": "en-us"}},
        },
    }


@pytest.fixture
def fake_audio() -> Iterator[FakeAudioServer]:
    with FakeAudioServer() as server:
        yield server


@pytest.fixture
def openai_config(fake_audio: FakeAudioServer) -> dict[str, Any]:
    stt = {"provider": "openai", "baseUrl": fake_audio.url, "apiKey": "sk-test", "language": "en"}
    return {
        "features": {
            "dictation": {"stt": {**stt, "model": "whisper-large"}},
            "voiceMode": {
                "tts": {"provider": "openai", "baseUrl": fake_audio.url, "apiKey": "sk-test"}
            },
        }
    }


@pytest.fixture
def daemon_factory(paseo_home: Path) -> Iterator[Callable[..., LiveDaemon]]:
    started: list[LiveDaemon] = []

    def start(config: dict[str, Any] | None = None) -> LiveDaemon:
        paseo_home.mkdir(parents=True, exist_ok=True)
        if config is not None:
            (paseo_home / "config.json").write_text(json.dumps(config))
        live = start_daemon(paseo_home, {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""})
        started.append(live)
        return live

    try:
        yield start
    finally:
        for live in started:
            stop_daemon(live.home)
            kill_leftover(live.pid)
