"""The real ``paseo speech`` and ``paseo dictate`` commands against the real daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import RunPaseo

from paseo.testing.fake_audio import FakeAudioServer

from .conftest import PHRASE


def test_engines_lists_both_builtins_and_the_sites(
    daemon_factory: Callable[..., Any], run_paseo: RunPaseo
) -> None:
    daemon_factory()
    result = run_paseo("speech", "engines", "-o", "json", check=True)
    listing = json.loads(result.stdout)
    assert {e["name"] for e in listing["stt"]} >= {"local", "openai"}
    assert {e["name"] for e in listing["tts"]} >= {"local", "openai"}
    assert listing["sites"] == {
        "features.dictation.stt": "local",
        "features.voiceMode.stt": "local",
        "features.voiceMode.tts": "local",
    }
    table = run_paseo("speech", "engines", check=True).stdout
    assert "features.dictation.stt, features.voiceMode.stt" in table


def test_say_then_transcribe_round_trips_through_the_local_engines(
    daemon_factory: Callable[..., Any],
    local_config: dict[str, Any],
    run_paseo: RunPaseo,
    tmp_path: Path,
) -> None:
    local_config["features"]["voiceMode"]["tts"]["speed"] = 0.8
    daemon_factory(local_config)
    out = tmp_path / "said.wav"
    said = run_paseo("speech", "say", *PHRASE.split(), "--save", str(out), check=True)
    assert str(out) in said.stdout
    assert out.read_bytes()[:4] == b"RIFF"
    heard = run_paseo("speech", "transcribe", str(out), check=True)
    assert heard.stdout.strip() == PHRASE


def test_transcribe_a_missing_file_is_a_clean_error(
    daemon_factory: Callable[..., Any], run_paseo: RunPaseo, tmp_path: Path
) -> None:
    daemon_factory()
    result = run_paseo("speech", "transcribe", str(tmp_path / "nope.wav"))
    assert result.returncode != 0
    assert "cannot read" in result.stderr
    assert "Traceback" not in result.stderr


def test_dictate_a_file_prints_the_final_text(
    daemon_factory: Callable[..., Any],
    local_config: dict[str, Any],
    run_paseo: RunPaseo,
    spoken: bytes,
    tmp_path: Path,
) -> None:
    daemon_factory(local_config)
    source = tmp_path / "phrase.wav"
    source.write_bytes(spoken)
    result = run_paseo("dictate", str(source), check=True)
    assert result.stdout.strip() == PHRASE


def test_dictate_stdin_streams_chunks_and_prints_the_final(
    daemon_factory: Callable[..., Any],
    openai_config: dict[str, Any],
    fake_audio: FakeAudioServer,
    spoken: bytes,
) -> None:
    fake_audio.transcript = "streamed words"
    daemon_factory(openai_config)
    # Several seconds of audio: more than one chunk.
    audio = spoken + spoken[44:] + spoken[44:]
    result = subprocess.run(
        [sys.executable, "-m", "paseo", "dictate", "-", "-o", "json"],
        input=audio,
        capture_output=True,
        timeout=120,
        env=dict(os.environ),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    final = json.loads(result.stdout)
    assert final["text"] == "streamed words"
    assert final["ackedSeq"] >= 2
    uploads = [r for r in fake_audio.requests if r.path == "/v1/audio/transcriptions"]
    assert all(r.files["file"].content_type == "audio/wav" for r in uploads)


def test_say_through_openai_writes_the_server_audio(
    daemon_factory: Callable[..., Any],
    openai_config: dict[str, Any],
    fake_audio: FakeAudioServer,
    run_paseo: RunPaseo,
    tmp_path: Path,
) -> None:
    daemon_factory(openai_config)
    out = tmp_path / "o.wav"
    run_paseo("speech", "say", "hello", "--save", str(out), "--voice", "echo", check=True)
    assert out.read_bytes() == fake_audio.speech_audio
    (request,) = fake_audio.requests
    assert request.json["voice"] == "echo"
    assert request.json["input"] == "hello"


def test_transcribe_sends_a_large_file_in_chunks(
    daemon_factory: Callable[..., Any],
    openai_config: dict[str, Any],
    fake_audio: FakeAudioServer,
    run_paseo: RunPaseo,
    tmp_path: Path,
) -> None:
    # Over a minute of 16 kHz audio: more than one request can carry in the daemon's frames.
    pcm = bytes(range(256)) * 8192
    source = tmp_path / "long.pcm"
    source.write_bytes(pcm)
    fake_audio.transcript = "long speech"
    daemon_factory(openai_config)
    result = run_paseo(
        "speech",
        "transcribe",
        str(source),
        "--format",
        "audio/pcm;rate=16000",
        "-o",
        "json",
        check=True,
    )
    assert json.loads(result.stdout) == {"text": "long speech", "engine": "openai"}
    # No partials were asked for: one upload, the whole audio.
    (upload,) = [r.files["file"].data for r in fake_audio.requests]
    assert upload[44:] == pcm


def test_non_audio_input_is_an_error_not_an_empty_transcript(
    daemon_factory: Callable[..., Any], run_paseo: RunPaseo, tmp_path: Path
) -> None:
    """Issue 27, item 7: a text file was "transcribed" to an empty line with exit status 0."""
    daemon_factory()
    inputs = {
        "notes.txt": b"Meeting notes: ship it on Friday.\n" * 50,
        "picture.png": b"\x89PNG\r\n\x1a\n" + bytes(100),
        "empty.wav": b"",
    }
    for name, content in inputs.items():
        path = tmp_path / name
        path.write_bytes(content)
        for command in (("speech", "transcribe"), ("dictate",)):
            result = run_paseo(*command, str(path))
            assert result.returncode == 2, (name, command, result.stdout, result.stderr)
            assert "not audio" in result.stderr
            assert result.stdout == ""
