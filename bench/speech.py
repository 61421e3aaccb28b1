"""Speech: word accuracy and real-time factor of the local speech-to-text engines, turn
detection on phrases with silence and noise between them, and text-to-speech first audio.

* transcription — :data:`PHRASES` (everyday commands) spoken by espeak-ng in several voices
  at ``speech say``'s default rate, through each engine as the daemon runs it (its worker
  process, WAV parsing and resampling included): ``local`` (Whisper tiny.en, the default),
  ``local`` with ``model: pocketsphinx`` (the fallback), and any ``--whisper-dir`` model.
  Word accuracy is 1 - WER after lower-casing and dropping punctuation; the real-time factor
  (RTF) is processing time over audio duration (below 1: faster than speech). The same
  phrases also go through ``speech.transcribe`` of a real daemon (base64, JSON-RPC, WebSocket).
* turn detection — the phrases in one stream (22.05 kHz, as espeak-ng writes it, one-second
  chunks), separated in turn by silence, white noise and low-pass ("fan") noise, through voice
  mode's :class:`~paseo.speech.turns.TurnDetector` with each detector: utterances found
  against spoken, and the word accuracy of the found utterances transcribed by ``local``.
* synthesis — the time until ``espeak-ng --stdout`` has written its first 4 KiB of samples.

The load average is printed: on a shared machine the RTF rises with it.

Run: ``.venv/bin/python bench/speech.py [--voices en-us,en-gb] [--whisper-dir DIR]``
(needs espeak-ng on PATH and the ``speech`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import io
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PHRASES = [
    "turn on the light",
    "show me the last error message",
    "run the tests again",
    "open the readme file",
    "what time is it",
    "stop the build",
    "commit the changes and push them",
    "create a new branch called feature",
    "read the file out loud",
    "list all running agents",
    "cancel the current task",
    "explain what this function does",
    "restart the daemon",
    "send a message to the reviewer",
    "delete the temporary files",
]
"""Everyday commands, fixed before any engine was measured on them."""
VOICES = "en-us,en-gb,en-us+m3,en+f3"
"""espeak-ng's default voice and variants: British, another male, a female one."""


def words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split()


def errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(word edit distance, reference words)."""
    ref, hyp = words(reference), words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, rw in enumerate(ref, 1):
        prev, row[0] = row[:], i
        for j, hw in enumerate(hyp, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (rw != hw))
    return row[len(hyp)], len(ref)


def speak(espeak: str, text: str, voice: str) -> bytes:
    """``text`` as ``speech say`` speaks it by default (its rate), in ``voice``."""
    from paseo_speech_local import LocalTextToSpeech

    command = LocalTextToSpeech({"voice": voice}).command(None)
    return subprocess.run(command, input=text.encode(), capture_output=True, check=True).stdout


def wav_seconds(wav: bytes) -> float:
    """The duration (espeak-ng's streamed WAV header has no true frame count)."""
    from paseo_speech_local.audio import to_pcm16k

    return len(to_pcm16k(wav, "audio/wav")) / 2 / 16000


def worker_cpu(engine: Any) -> float:
    """CPU seconds the engine's worker process has used (all its threads)."""
    import psutil

    times = psutil.Process(engine.worker_pids()[0]).cpu_times()
    return float(times.user + times.system)


def score(engine: Any, clips: list[tuple[str, bytes]]) -> tuple[float, float, float, list[str]]:
    """(word accuracy, RTF, CPU seconds per audio second, mistakes) of ``engine`` on ``clips``.

    The CPU figure does not rise with other load on the machine, the RTF does."""
    wrong = total = 0
    spent = audio = cpu = 0.0
    mistakes: list[str] = []

    async def run() -> None:
        nonlocal wrong, total, spent, audio, cpu
        await engine.transcribe(clips[0][1], mime_type="audio/wav")  # load the model
        cpu = -worker_cpu(engine)
        for text, wav in clips:
            start = time.perf_counter()
            heard = await engine.transcribe(wav, mime_type="audio/wav")
            spent += time.perf_counter() - start
            audio += wav_seconds(wav)
            bad, count = errors(text, heard)
            wrong, total = wrong + bad, total + count
            if bad:
                mistakes.append(f"{text!r} -> {heard!r}")
        cpu += worker_cpu(engine)

    asyncio.run(run())
    return 1 - wrong / total, spent / audio, cpu / audio, mistakes


def noise(kind: str, seconds: float, rate: int, rng: random.Random) -> bytes:
    """16-bit mono noise: ``white`` (RMS ~ -30 dBFS) or ``fan`` (low-passed, ~ -24 dBFS)."""
    import array

    count = int(seconds * rate)
    out = array.array("h", bytes(2 * count))
    level, smooth = (1000.0, 0.0) if kind == "white" else (8000.0, 0.95)
    value = 0.0
    for i in range(count):
        value = smooth * value + (1 - smooth) * rng.gauss(0.0, 1.0)
        sample = value * level * (1.0 if kind == "white" else 3.2)
        out[i] = max(-32768, min(32767, int(sample)))
    return out.tobytes()


def turn_stream(clips: list[tuple[str, bytes]]) -> tuple[int, bytes]:
    """The clips' samples in one stream with silence, white noise and fan noise between."""
    rng = random.Random(7)
    parts: list[bytes] = []
    rate = 22050
    gaps = ["silence", "white", "fan"]
    for index, (_text, wav) in enumerate(clips):
        with wave.open(io.BytesIO(wav)) as reader:
            rate = reader.getframerate()
            parts.append(reader.readframes(reader.getnframes()))
        gap = gaps[index % len(gaps)]
        parts.append(bytes(int(1.2 * rate) * 2) if gap == "silence" else noise(gap, 1.2, rate, rng))
    return rate, bytes(int(0.5 * rate) * 2) + b"".join(parts)


def detect(vad: str, rate: int, stream: bytes) -> tuple[list[bytes], float]:
    """The utterances voice mode's turn detection finds, and its RTF."""
    from paseo.speech.turns import ToMono16k, TurnDetector

    convert, detector = ToMono16k(rate, 1), TurnDetector(vad=vad)
    found: list[bytes] = []
    start = time.perf_counter()
    for offset in range(0, len(stream), rate * 2):
        found += detector.feed(convert.convert(stream[offset : offset + rate * 2]))
    last = detector.flush()
    spent = time.perf_counter() - start
    return found + ([last] if last else []), spent / (len(stream) / 2 / rate)


def transcribe_all(engine: Any, utterances: list[bytes]) -> list[str]:
    async def run() -> list[str]:
        mime = "audio/pcm;rate=16000;channels=1"
        return [await engine.transcribe(pcm, mime_type=mime) for pcm in utterances]

    return asyncio.run(run())


def espeak_first_audio(espeak: str) -> float:
    """Seconds until espeak-ng has written its WAV header and the first 4 KiB of samples."""
    start = time.perf_counter()
    process = subprocess.Popen([espeak, "--stdout", PHRASES[1]], stdout=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.read(44 + 4096)
    first = time.perf_counter() - start
    process.stdout.read()
    process.wait()
    return first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--voices", default=VOICES, help="espeak-ng voices, comma-separated")
    parser.add_argument("--whisper-dir", action="append", default=[], help="another model")
    parser.add_argument("--no-daemon", action="store_true", help="skip speech.transcribe")
    args = parser.parse_args()
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        print("espeak-ng is not installed (scripts/speech-deps installs it)", file=sys.stderr)
        return 1
    from paseo_speech_local import LocalSpeechToText

    voices = [v for v in args.voices.split(",") if v]
    spoken = {v: [(text, speak(espeak, text, v)) for text in PHRASES] for v in voices}
    models_root = Path(tempfile.mkdtemp(prefix="paseo-bench-models-"))
    engines: dict[str, dict[str, Any]] = {
        "local (whisper tiny.en)": {},
        "local model=pocketsphinx": {"model": "pocketsphinx"},
    }
    for directory in args.whisper_dir:
        name = Path(directory).name
        (models_root / "whisper").mkdir(exist_ok=True)
        (models_root / "whisper" / name).symlink_to(Path(directory).resolve())
        engines[f"local model={name}"] = {"model": name, "modelsDir": str(models_root)}

    print(f"{len(PHRASES)} phrases; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")
    print(f"{'engine':<28}{'voice':<11}{'word acc':>9}{'RTF':>7}{'CPU/audio':>10}")
    default_engine: Any = None
    for label, settings in engines.items():
        engine = LocalSpeechToText(settings)
        for voice in voices:
            accuracy, rtf, cpu, mistakes = score(engine, spoken[voice])
            print(f"{label:<28}{voice:<11}{accuracy:>9.3f}{rtf:>7.3f}{cpu:>10.3f}", flush=True)
            for mistake in mistakes:
                print(f"    {mistake}")
        if settings:
            asyncio.run(engine.aclose())
        else:
            default_engine = engine

    if not args.no_daemon:
        with daemon_client() as client:
            clips = spoken[voices[0]]
            heard, spent, audio = [], 0.0, 0.0
            client.call("speech.transcribe", _params(clips[0][1]))  # the engine loads
            for _text, wav in clips:
                start = time.perf_counter()
                heard.append(client.call("speech.transcribe", _params(wav))["text"])
                spent += time.perf_counter() - start
                audio += wav_seconds(wav)
            wrong = sum(errors(t, h)[0] for (t, _), h in zip(clips, heard, strict=True))
            total = sum(len(words(t)) for t, _ in clips)
            label = "speech.transcribe (daemon)"
            print(f"{label:<28}{voices[0]:<11}{1 - wrong / total:>9.3f}{spent / audio:>7.3f}")

    print("\nturn detection: phrases with 1.2 s of silence / white noise / fan noise between")
    print(f"{'detector':<10}{'voice':<11}{'found':>7}{'spoken':>8}{'word acc':>10}{'RTF':>8}")
    for voice in voices[:2]:
        rate, stream = turn_stream(spoken[voice])
        reference = " ".join(text for text, _ in spoken[voice])
        for vad in ("silero", "webrtc"):
            utterances, rtf = detect(vad, rate, stream)
            texts = transcribe_all(default_engine, utterances)
            bad, total = errors(reference, " ".join(texts))
            found = sum(1 for text in texts if text)
            print(
                f"{vad:<10}{voice:<11}{found:>4}+{len(texts) - found:<2}{len(PHRASES):>8}"
                f"{1 - bad / total:>10.3f}{rtf:>8.4f}",
                flush=True,
            )
    print("(found: utterances with words + those that transcribed to nothing)")
    asyncio.run(default_engine.aclose())
    first = min(espeak_first_audio(espeak) for _ in range(3))
    print(f"\nespeak-ng first audio: {first * 1000:.1f} ms")
    shutil.rmtree(models_root, ignore_errors=True)
    return 0


def _params(wav: bytes) -> dict[str, str]:
    return {"audio": base64.b64encode(wav).decode(), "mimeType": "audio/wav"}


@contextlib.contextmanager
def daemon_client() -> Iterator[Any]:
    """A client of a real daemon on a throw-away home (stopped afterwards)."""
    from paseo.client.sync import SyncClient

    with tempfile.TemporaryDirectory() as root:
        home = Path(root) / "home"
        env = dict(os.environ, PASEO_HOME=str(home), PASEO_LISTEN="127.0.0.1:0")
        paseo = [sys.executable, "-m", "paseo"]
        subprocess.run([*paseo, "daemon", "start"], env=env, check=True, capture_output=True)
        try:
            with SyncClient(home=home) as client:
                yield client
        finally:
            subprocess.run([*paseo, "daemon", "stop"], env=env, check=False, capture_output=True)


if __name__ == "__main__":
    raise SystemExit(main())
