"""Speech: local transcription real-time factor and text-to-speech time to first audio.

Each figure is printed next to a baseline measured in the same run:

* transcription — pocketsphinx decoding 16 kHz PCM directly (model loaded, as the engine keeps
  it) against the ``local`` engine (WAV parsing and resampling included, in its worker
  process, so the hand-over is counted too) and against
  ``speech.transcribe`` through a real daemon (base64, JSON-RPC, WebSocket included). The
  real-time factor is processing time over audio duration (below 1: faster than speech).
* turn detection — voice mode's streaming conversion to 16 kHz mono and WebRTC VAD over the
  same speech (22.05 kHz, as espeak-ng writes it, in one-second chunks), as a real-time factor
  and against the pocketsphinx decode above.
* synthesis — the time until ``espeak-ng --stdout`` has written its header and first 4 KiB
  of samples, against the ``local`` engine and ``speech.synthesize`` through the daemon (both
  return the whole WAV: their first audio is all of it).

Rounds interleave the paths so that load on the machine affects them alike.

Run: ``.venv/bin/python bench/speech.py [--runs N]`` (needs espeak-ng on PATH).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

TEXT = (
    "the daemon supervises coding agents on this machine and speaks to them by voice "
    "while the user keeps working in the terminal"
)


def interleaved(cases: dict[str, Callable[[], float]], runs: int) -> dict[str, float]:
    """Median seconds of each case; rounds interleave the cases so machine noise hits all."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, case in cases.items():
            samples[name].append(case())
    return {name: statistics.median(values) for name, values in samples.items()}


def timed(action: Callable[[], object]) -> Callable[[], float]:
    def case() -> float:
        start = time.perf_counter()
        action()
        return time.perf_counter() - start

    return case


def espeak_first_audio(espeak: str) -> float:
    """Seconds until espeak-ng has written its WAV header and the first 4 KiB of samples."""
    start = time.perf_counter()
    process = subprocess.Popen([espeak, "--stdout", TEXT], stdout=subprocess.PIPE)
    assert process.stdout is not None
    wanted = 44 + 4096
    got = 0
    while got < wanted:
        data = process.stdout.read(wanted - got)
        if not data:
            break
        got += len(data)
    first = time.perf_counter() - start
    process.stdout.read()
    process.wait()
    return first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        print("espeak-ng is not installed (scripts/speech-deps installs it)", file=sys.stderr)
        return 1
    from paseo_speech_local import LocalSpeechToText, LocalTextToSpeech
    from paseo_speech_local.audio import to_pcm16k
    from pocketsphinx import Decoder

    wav = subprocess.run([espeak, "--stdout", TEXT], capture_output=True, check=True).stdout
    pcm = to_pcm16k(wav, "audio/wav")
    seconds = len(pcm) / 2 / 16000

    decoder = Decoder(samprate=16000, loglevel="FATAL")

    def direct_decode() -> None:
        decoder.start_utt()
        decoder.process_raw(pcm, full_utt=True)
        decoder.end_utt()

    import io
    import wave

    from paseo.speech.turns import ToMono16k, TurnDetector

    with wave.open(io.BytesIO(wav)) as reader:
        rate = reader.getframerate()
        raw = reader.readframes(reader.getnframes())

    def detect_turns() -> None:
        convert, detector = ToMono16k(rate, 1), TurnDetector()
        for start in range(0, len(raw), rate * 2):
            detector.feed(convert.convert(raw[start : start + rate * 2]))
        detector.flush()

    stt = LocalSpeechToText({})
    tts = LocalTextToSpeech({})
    asyncio.run(stt.transcribe(wav, mime_type="audio/wav"))  # load the model once
    with daemon_client() as client:
        params = {"audio": base64.b64encode(wav).decode(), "mimeType": "audio/wav"}
        say = {"text": TEXT}
        client.call("speech.transcribe", params)  # the engines load on first use
        client.call("speech.synthesize", say)
        heard = interleaved(
            {
                "pocketsphinx direct": timed(direct_decode),
                "local engine": timed(
                    lambda: asyncio.run(stt.transcribe(wav, mime_type="audio/wav"))
                ),
                "speech.transcribe (daemon)": timed(
                    lambda: client.call("speech.transcribe", params)
                ),
                "turn detection (voice)": timed(detect_turns),
            },
            args.runs,
        )
        spoken = interleaved(
            {
                "espeak-ng --stdout": lambda: espeak_first_audio(espeak),
                "local engine": timed(lambda: asyncio.run(tts.synthesize(TEXT))),
                "speech.synthesize (daemon)": timed(
                    lambda: client.call("speech.synthesize", say)
                ),
            },
            args.runs,
        )
    stt_base, tts_base = heard["pocketsphinx direct"], spoken["espeak-ng --stdout"]
    rows = [("transcribe", path, value, stt_base) for path, value in heard.items()]
    rows += [("first audio", path, value, tts_base) for path, value in spoken.items()]

    print(f"audio: {seconds:.2f} s of espeak-ng speech ({len(TEXT.split())} words)")
    print(f"{'measure':<13}{'path':<28}{'median ms':>10}{'RTF':>8}{'ratio':>8}")
    for group, path, value, base in rows:
        rtf = f"{value / seconds:.3f}" if group == "transcribe" else "-"
        measure = "turns" if path.startswith("turn") else group
        print(f"{measure:<13}{path:<28}{value * 1000:>10.1f}{rtf:>8}{value / base:>8.2f}")
    return 0


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
