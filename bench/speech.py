"""Speech: local transcription real-time factor and text-to-speech time to first audio.

Each figure is printed next to a baseline measured in the same run:

* transcription — pocketsphinx decoding 16 kHz PCM directly (model loaded, as the engine keeps
  it) against the ``local`` engine (WAV parsing and resampling included) and against
  ``speech.transcribe`` through a real daemon (base64, JSON-RPC, WebSocket included). The
  real-time factor is processing time over audio duration (below 1: faster than speech).
* synthesis — the time until ``espeak-ng --stdout`` writes its first bytes, against the
  ``local`` engine (which returns the whole WAV) and ``speech.synthesize`` through the daemon.

Run: ``.venv/bin/python bench/speech.py [--runs N]`` (needs espeak-ng on PATH).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TEXT = (
    "the daemon supervises coding agents on this machine and speaks to them by voice "
    "while the user keeps working in the terminal"
)


def median_time(action: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def espeak_first_audio(espeak: str) -> float:
    start = time.perf_counter()
    process = subprocess.Popen([espeak, "--stdout", TEXT], stdout=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.read(1)
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

    stt = LocalSpeechToText({})
    tts = LocalTextToSpeech({})
    asyncio.run(stt.transcribe(wav, mime_type="audio/wav"))  # load the model once
    rows: list[tuple[str, str, float, float]] = []
    baseline = median_time(direct_decode, args.runs)
    engine = median_time(lambda: asyncio.run(stt.transcribe(wav, mime_type="audio/wav")), args.runs)
    rows.append(("transcribe", "pocketsphinx direct", baseline, baseline))
    rows.append(("transcribe", "local engine", engine, baseline))

    tts_baseline = statistics.median(espeak_first_audio(espeak) for _ in range(args.runs))
    tts_engine = median_time(lambda: asyncio.run(tts.synthesize(TEXT)), args.runs)
    rows.append(("first audio", "espeak-ng --stdout", tts_baseline, tts_baseline))
    rows.append(("first audio", "local engine", tts_engine, tts_baseline))

    rows += through_daemon(wav, args.runs, baseline, tts_baseline)

    print(f"audio: {seconds:.2f} s of espeak-ng speech ({len(TEXT.split())} words)")
    print(f"{'measure':<13}{'path':<28}{'median ms':>10}{'RTF':>8}{'ratio':>8}")
    for measure, path, value, base in rows:
        rtf = f"{value / seconds:.3f}" if measure == "transcribe" else "-"
        print(f"{measure:<13}{path:<28}{value * 1000:>10.1f}{rtf:>8}{value / base:>8.2f}")
    return 0


def through_daemon(
    wav: bytes, runs: int, stt_base: float, tts_base: float
) -> list[tuple[str, str, float, float]]:
    from paseo.client.sync import SyncClient

    with tempfile.TemporaryDirectory() as root:
        home = Path(root) / "home"
        env = dict(os.environ, PASEO_HOME=str(home), PASEO_LISTEN="127.0.0.1:0")
        paseo = [sys.executable, "-m", "paseo"]
        subprocess.run([*paseo, "daemon", "start"], env=env, check=True, capture_output=True)
        try:
            with SyncClient(home=home) as client:
                audio = base64.b64encode(wav).decode()
                params = {"audio": audio, "mimeType": "audio/wav"}
                client.call("speech.transcribe", params)  # the engine loads on first use
                stt = median_time(lambda: client.call("speech.transcribe", params), runs)
                say = {"text": TEXT}
                client.call("speech.synthesize", say)
                tts = median_time(lambda: client.call("speech.synthesize", say), runs)
        finally:
            subprocess.run([*paseo, "daemon", "stop"], env=env, check=False, capture_output=True)
    return [
        ("transcribe", "speech.transcribe (daemon)", stt, stt_base),
        ("first audio", "speech.synthesize (daemon)", tts, tts_base),
    ]


if __name__ == "__main__":
    raise SystemExit(main())
