"""The default ``local`` speech-to-text engine for real: espeak-ng speaks everyday commands,
Whisper tiny.en transcribes them free-form (no grammar) in its worker process.

One engine per module: its worker loads the model once. The phrases are a part of the bench's
phrase set (bench/speech.py), spoken as ``speech say`` speaks them by default.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
import struct
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from paseo_hookspecs.errors import Unavailable
from paseo_speech_local import LocalSpeechToText, LocalTextToSpeech
from paseo_speech_local.models import bundled_whisper

PHRASES = [
    "turn on the light",
    "run the tests again",
    "what time is it",
    "list all running agents",
    "cancel the current task",
    "explain what this function does",
    "send a message to the reviewer",
]


def words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split()


def word_errors(reference: str, hypothesis: str) -> int:
    ref, hyp = words(reference), words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, rw in enumerate(ref, 1):
        prev, row[0] = row[:], i
        for j, hw in enumerate(hyp, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (rw != hw))
    return row[len(hyp)]


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def engine(loop: asyncio.AbstractEventLoop) -> Iterator[LocalSpeechToText]:
    engine = LocalSpeechToText({})
    yield engine
    loop.run_until_complete(engine.aclose())


def say(text: str, voice: str) -> bytes:
    audio, _mime = asyncio.run(LocalTextToSpeech({"voice": voice}).synthesize(text))
    return audio


def hear(loop: asyncio.AbstractEventLoop, engine: LocalSpeechToText, audio: bytes) -> str:
    return loop.run_until_complete(
        asyncio.wait_for(engine.transcribe(audio, mime_type="audio/wav"), 120)
    )


def test_the_default_model_is_whisper_from_its_package(engine: LocalSpeechToText) -> None:
    assert engine.model_kind == "whisper"
    directory = bundled_whisper()
    assert directory is not None
    assert (directory / "model.bin").stat().st_size > 50_000_000


@pytest.mark.parametrize(("voice", "floor"), [("en-us", 0.9), ("en-gb", 0.85)])
def test_everyday_commands_are_transcribed_word_for_word(
    loop: asyncio.AbstractEventLoop, engine: LocalSpeechToText, voice: str, floor: float
) -> None:
    heard = {text: hear(loop, engine, say(text, voice)) for text in PHRASES}
    errors = sum(word_errors(text, got) for text, got in heard.items())
    total = sum(len(text.split()) for text in PHRASES)
    assert 1 - errors / total >= floor, heard
    # Most phrases come back exactly (case and punctuation aside), not merely most words.
    exact = [text for text, got in heard.items() if words(got) == text.split()]
    assert len(exact) >= len(PHRASES) - 2, heard


def _pcm_wav(samples: list[int], rate: int = 16000) -> bytes:
    data = struct.pack(f"<{len(samples)}h", *samples)
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF", 36 + len(data), b"WAVE", b"fmt ", 16, 1, 1, rate, rate * 2, 2, 16,
        b"data", len(data),
    )  # fmt: skip
    return header + data


def test_silence_and_noise_transcribe_to_nothing(
    loop: asyncio.AbstractEventLoop, engine: LocalSpeechToText
) -> None:
    """Whisper alone invents words for audio without speech; Silero's gate keeps it quiet."""
    rng = random.Random(3)
    silence = _pcm_wav([0] * 32000)
    hiss = _pcm_wav([int(rng.gauss(0, 600)) for _ in range(32000)])
    hum = _pcm_wav([int(3000 * math.sin(2 * math.pi * 50 * i / 16000)) for i in range(32000)])
    for audio in (silence, hiss, hum):
        assert hear(loop, engine, audio) == ""


def test_decoding_runs_in_the_worker_with_ctranslate2(
    loop: asyncio.AbstractEventLoop, engine: LocalSpeechToText
) -> None:
    hear(loop, engine, say("stop", "en-us"))
    (pid,) = engine.worker_pids()
    mapped = [m.path for m in psutil.Process(pid).memory_maps()]
    assert any("ctranslate2" in path for path in mapped)
    assert not any("ctranslate2" in m.path for m in psutil.Process().memory_maps())


def test_a_whisper_directory_under_models_dir_is_a_model(tmp_path: Path) -> None:
    bundled = bundled_whisper()
    assert bundled is not None
    (tmp_path / "whisper").mkdir()
    (tmp_path / "whisper" / "mine").symlink_to(bundled)
    engine = LocalSpeechToText({"model": "mine", "modelsDir": str(tmp_path)})
    assert engine.model_kind == "whisper"
    # An English-only vocabulary: another language is refused, not mistranscribed.
    with pytest.raises(Unavailable, match="English-only"):
        LocalSpeechToText({"model": "mine", "modelsDir": str(tmp_path), "language": "fr"})


def test_the_bundled_whisper_model_is_english(tmp_path: Path) -> None:
    with pytest.raises(Unavailable, match="English"):
        LocalSpeechToText({"language": "de"})
    assert LocalSpeechToText({"model": "tiny.en", "language": "en-GB"}).model_kind == "whisper"
