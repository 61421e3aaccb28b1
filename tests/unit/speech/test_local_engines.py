"""The ``local`` engines for real: espeak-ng speaks, pocketsphinx transcribes."""

from __future__ import annotations

import asyncio
import io
import os
import wave
from pathlib import Path

import psutil
import pytest
from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_speech_local import LocalSpeechToText, LocalTextToSpeech
from paseo_speech_local.audio import to_pcm16k

from .conftest import PHRASE, TTS_SETTINGS


def test_espeak_speaks_a_phrase_to_wav() -> None:
    audio, mime = asyncio.run(LocalTextToSpeech({}).synthesize(PHRASE))
    assert mime == "audio/wav"
    with wave.open(io.BytesIO(audio)) as reader:
        assert reader.getnchannels() == 1
        assert reader.getsampwidth() == 2
        frames = len(reader.readframes(10**7)) // 2
        # A four-word phrase lasts longer than half a second.
        assert frames > reader.getframerate() // 2


def test_speed_and_voice_reach_espeak() -> None:
    command = LocalTextToSpeech({"voice": "en+f3", "speed": 1.5}).command(None)
    assert command[-4:] == ["-v", "en+f3", "-s", "262"]
    assert LocalTextToSpeech({}).command("en-gb")[-2:] == ["-v", "en-gb"]


def test_empty_text_is_refused() -> None:
    with pytest.raises(InvalidParams):
        asyncio.run(LocalTextToSpeech({}).synthesize("  "))


def test_grammar_model_transcribes_the_spoken_phrase(spoken: bytes, models_dir: Path) -> None:
    engine = LocalSpeechToText({"model": "commands", "modelsDir": str(models_dir)})
    assert asyncio.run(engine.transcribe(spoken, mime_type="audio/wav")) == PHRASE


def test_espeak_output_transcribes_through_both_local_engines(models_dir: Path) -> None:
    async def round_trip() -> str:
        audio, mime = await LocalTextToSpeech(TTS_SETTINGS).synthesize("open the gate now")
        engine = LocalSpeechToText({"model": "commands", "modelsDir": str(models_dir)})
        return await engine.transcribe(audio, mime_type=mime)

    assert asyncio.run(round_trip()) == "open the gate now"


def test_bundled_pocketsphinx_model_hears_a_keyword(spoken: bytes) -> None:
    # The fallback engine: free-form accuracy on synthetic speech is poor, assert one keyword.
    engine = LocalSpeechToText({"model": "pocketsphinx"})
    assert engine.model_kind == "pocketsphinx"
    text = asyncio.run(engine.transcribe(spoken, mime_type="audio/wav"))
    assert "please" in text.split()


def test_raw_pcm_is_accepted(spoken: bytes, models_dir: Path) -> None:
    pcm = to_pcm16k(spoken, "audio/wav")
    engine = LocalSpeechToText({"model": "commands", "modelsDir": str(models_dir)})
    text = asyncio.run(engine.transcribe(pcm, mime_type="audio/pcm;rate=16000"))
    assert text == PHRASE


def test_silence_transcribes_to_nothing() -> None:
    assert asyncio.run(LocalSpeechToText({}).transcribe(b"", mime_type="audio/pcm")) == ""


def test_missing_model_is_unavailable_and_names_its_path(tmp_path: Path) -> None:
    with pytest.raises(Unavailable) as caught:
        LocalSpeechToText({"model": "whisper-tiny", "modelsDir": str(tmp_path)})
    assert str(tmp_path / "pocketsphinx" / "whisper-tiny") in caught.value.message
    assert "never downloaded" in caught.value.message


def test_bundled_model_refuses_other_languages() -> None:
    with pytest.raises(Unavailable, match="English"):
        LocalSpeechToText({"language": "fr"})
    LocalSpeechToText({"language": "en-US"})  # English is fine


def test_espeak_data_directory_comes_from_models_dir(tmp_path: Path) -> None:
    (tmp_path / "espeak-ng" / "mine").mkdir(parents=True)
    engine = LocalTextToSpeech({"model": "mine", "modelsDir": str(tmp_path)})
    assert f"--path={tmp_path / 'espeak-ng' / 'mine'}" in engine.command(None)


def test_decoding_runs_in_a_worker_process_that_aclose_reaps(
    spoken: bytes, models_dir: Path
) -> None:
    """pocketsphinx holds the interpreter lock for a whole utterance: it must not run in the
    daemon's process. A worker that dies fails one call; the next starts a new worker."""
    engine = LocalSpeechToText({"model": "commands", "modelsDir": str(models_dir)})

    async def run() -> None:
        assert await engine.transcribe(spoken, mime_type="audio/wav") == PHRASE
        (pid,) = engine.worker_pids()
        assert pid != os.getpid()
        worker = psutil.Process(pid)
        assert any("pocketsphinx" in m.path for m in worker.memory_maps())
        assert not any("pocketsphinx" in m.path for m in psutil.Process().memory_maps())
        worker.kill()
        worker.wait(timeout=30)
        with pytest.raises(Unavailable, match="worker process died"):
            await engine.transcribe(spoken, mime_type="audio/wav")
        assert await engine.transcribe(spoken, mime_type="audio/wav") == PHRASE
        (fresh,) = engine.worker_pids()
        assert fresh != pid
        await engine.aclose()
        assert not psutil.pid_exists(fresh)
        assert engine.worker_pids() == []

    asyncio.run(asyncio.wait_for(run(), 120))
