"""Engines are chosen per use site from the configuration in force, imported only when used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from paseo_hookspecs.interfaces.speech import SpeechToText

from paseo.config import ResolvedConfig, load_config
from paseo.speech.engines import Engines


class _Config:
    def __init__(self, resolved: ResolvedConfig) -> None:
        self.resolved = resolved


def _resolved(tmp_path: Path, document: dict[str, Any]) -> ResolvedConfig:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(document))
    return load_config(path, env={}, home=tmp_path).resolved


class Recorder(SpeechToText):
    async def transcribe(self, audio: bytes, *, mime_type: str, language: str | None = None) -> str:
        return ""


def test_each_site_uses_its_own_provider_and_settings(tmp_path: Path) -> None:
    config = _Config(
        _resolved(
            tmp_path,
            {
                "providers": {"local": {"modelsDir": "models"}},
                "features": {
                    "dictation": {"stt": {"provider": "openai", "model": "whisper-1"}},
                    "voiceMode": {"stt": {"provider": "local", "language": "en"}},
                },
            },
        )
    )
    engines = Engines(config, lambda group, name: Recorder)
    dictation = engines.choose("dictation")
    assert (dictation.group, dictation.name) == ("paseo.speech.stt", "openai")
    assert dictation.settings == {
        "provider": "openai",
        "model": "whisper-1",
        "modelsDir": str(tmp_path / "models"),
    }
    assert engines.choose("voiceMode").settings["language"] == "en"
    assert engines.choose("voiceMode.tts").group == "paseo.speech.tts"
    assert engines.choose("dictation", "my-engine").name == "my-engine"
    assert engines.sites() == {
        "features.dictation.stt": "openai",
        "features.voiceMode.stt": "local",
        "features.voiceMode.tts": "local",
    }


def test_an_engine_is_reused_until_its_settings_change(tmp_path: Path) -> None:
    config = _Config(_resolved(tmp_path, {}))
    built: list[Any] = []

    def load(group: str, name: str) -> Any:
        def build(settings: Any) -> Recorder:
            built.append(settings)
            return Recorder(settings)

        return build

    engines = Engines(config, load)
    first = engines.stt(engines.choose("dictation"))
    assert engines.stt(engines.choose("dictation")) is first
    # What `paseo reload` does: the view now answers with the new configuration.
    config.resolved = _resolved(
        tmp_path, {"features": {"dictation": {"stt": {"provider": "local", "language": "en"}}}}
    )
    assert engines.stt(engines.choose("dictation")) is not first
    assert [s.get("language") for s in built] == [None, "en"]


def test_engines_not_chosen_are_never_imported(tmp_path: Path) -> None:
    script = f"""
import asyncio, sys
from pathlib import Path
from paseo.config import load_config
from paseo.plugins.drivers import load_driver
from paseo.speech.service import SpeechService
resolved = load_config(Path({str(tmp_path / "none.json")!r}), env={{}}).resolved
class View:
    pass
view = View(); view.resolved = resolved
service = SpeechService(view, load_driver)
assert "paseo_speech_local" not in sys.modules
print(asyncio.run(service.transcribe(b"", mime_type="audio/pcm")))
print(sorted(m for m in sys.modules if m.startswith("paseo_speech")))
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.strip().splitlines()[-1]
    assert "paseo_speech_local" in loaded
    assert "paseo_speech_openai" not in loaded
