"""Turn detection on real speech with noise between the phrases: Silero's detector ends each
utterance in the noise; WebRTC's (the fallback) takes steady noise for speech."""

from __future__ import annotations

import array
import asyncio
import io
import random
import wave

from paseo_speech_local import LocalTextToSpeech

from paseo.speech.turns import ToMono16k, TurnDetector

PHRASES = ["turn on the light", "run the tests again", "cancel the current task"]


def _stream() -> tuple[int, bytes]:
    """The phrases (22.05 kHz, as espeak-ng writes them) with 1.2 s of white noise after each."""
    rng = random.Random(5)
    parts: list[bytes] = []
    rate = 22050
    for text in PHRASES:
        audio, _mime = asyncio.run(LocalTextToSpeech({}).synthesize(text))
        with wave.open(io.BytesIO(audio)) as reader:
            rate = reader.getframerate()
            parts.append(reader.readframes(reader.getnframes()))
        hiss = array.array("h", (int(rng.gauss(0, 1000)) for _ in range(int(1.2 * rate))))
        parts.append(hiss.tobytes())
    return rate, b"".join(parts)


def _utterances(vad: str, rate: int, stream: bytes) -> list[bytes]:
    convert, detector = ToMono16k(rate, 1), TurnDetector(vad=vad)
    found: list[bytes] = []
    for offset in range(0, len(stream), rate * 2):
        found += detector.feed(convert.convert(stream[offset : offset + rate * 2]))
    last = detector.flush()
    return found + ([last] if last else [])


def test_silero_ends_each_utterance_in_noise() -> None:
    rate, stream = _stream()
    silero = _utterances("silero", rate, stream)
    assert len(silero) == len(PHRASES)
    # Each is about one phrase long (a phrase lasts 1-2 s), not phrase plus the noise after it.
    assert all(16000 * 2 * 0.8 < len(pcm) < 16000 * 2 * 2.6 for pcm in silero)
    # The measured difference (bench/speech.py): WebRTC's runs phrases together in this noise.
    assert len(_utterances("webrtc", rate, stream)) < len(PHRASES)
