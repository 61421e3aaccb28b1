"""Audio in, 16 kHz mono 16-bit PCM out: what pocketsphinx decodes.

``audioop`` left the standard library in Python 3.13, so down-mixing and resampling are done
here with :mod:`array` (``wave`` remains and parses the container). Resampling is linear
interpolation: good enough for speech recognition, which low-passes far below 8 kHz anyway.
Formats other than WAV and raw PCM are handed to ``sox`` (or ``ffmpeg``) when one is on PATH;
without either they are refused with :class:`~paseo_hookspecs.errors.Unavailable`.
"""

from __future__ import annotations

import array
import io
import shutil
import subprocess
import sys
import wave

from paseo_hookspecs.errors import InvalidParams, Unavailable

TARGET_RATE = 16000
_CONVERT_TIMEOUT = 60.0


def to_pcm16k(audio: bytes, mime_type: str) -> bytes:
    """``audio`` (of ``mime_type``) as raw little-endian 16-bit mono samples at 16 kHz.

    Accepted without external tools: ``audio/wav`` (``audio/x-wav``, ``audio/wave``) holding
    8/16/32-bit integer PCM at any rate and channel count, and raw signed 16-bit little-endian
    PCM as ``audio/pcm`` or ``audio/l16`` with optional ``rate=`` and ``channels=`` parameters
    (default 16000 Hz, mono).
    """
    base, params = _parse_mime(mime_type)
    if base in ("audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"):
        return _from_wav(audio)
    if base in ("audio/pcm", "audio/l16", "audio/raw"):
        rate = int(params.get("rate", TARGET_RATE))
        channels = int(params.get("channels", 1))
        return _resample(_mono(_samples(audio, 2), channels), rate)
    return _from_wav(_external_to_wav(audio, base))


def _parse_mime(mime_type: str) -> tuple[str, dict[str, str]]:
    base, *rest = (part.strip() for part in mime_type.split(";"))
    params: dict[str, str] = {}
    for item in rest:
        key, _, value = item.partition("=")
        if key:
            params[key.strip().lower()] = value.strip()
    return base.lower(), params


def _from_wav(audio: bytes) -> bytes:
    try:
        with wave.open(io.BytesIO(audio)) as reader:
            width, channels, rate = (
                reader.getsampwidth(),
                reader.getnchannels(),
                reader.getframerate(),
            )
            frames = reader.readframes(reader.getnframes())
    except (wave.Error, EOFError) as exc:
        raise InvalidParams(f"not a PCM WAV file: {exc}") from None
    return _resample(_mono(_samples(frames, width), channels), rate)


def _samples(data: bytes, width: int) -> array.array[int]:
    """Signed 16-bit samples from ``width``-byte little-endian PCM (8-bit WAV is unsigned)."""
    data = data[: len(data) - len(data) % width]
    if width == 2:
        samples = array.array("h")
        samples.frombytes(data)
        if sys.byteorder == "big":
            samples.byteswap()
        return samples
    if width == 1:
        return array.array("h", ((byte - 128) << 8 for byte in data))
    if width == 4:
        wide = array.array("i")
        wide.frombytes(data)
        if sys.byteorder == "big":
            wide.byteswap()
        return array.array("h", (value >> 16 for value in wide))
    raise InvalidParams(f"unsupported PCM sample width: {width * 8} bits")


def _mono(samples: array.array[int], channels: int) -> array.array[int]:
    if channels <= 1:
        return samples
    frames = len(samples) // channels
    return array.array(
        "h",
        (sum(samples[i * channels : (i + 1) * channels]) // channels for i in range(frames)),
    )


def _resample(samples: array.array[int], rate: int) -> bytes:
    if rate == TARGET_RATE or not samples:
        out = samples
    else:
        count = len(samples) * TARGET_RATE // rate
        step = rate / TARGET_RATE
        last = len(samples) - 1
        out = array.array("h", bytes(2 * count))
        for i in range(count):
            position = i * step
            j = int(position)
            a = samples[j]
            b = samples[j + 1] if j < last else a
            out[i] = int(a + (b - a) * (position - j))
    if sys.byteorder == "big":
        out = array.array("h", out)
        out.byteswap()
    return out.tobytes()


def _external_to_wav(audio: bytes, mime_type: str) -> bytes:
    """Convert with sox or ffmpeg (reading stdin, writing a 16 kHz mono WAV to stdout)."""
    kind = mime_type.rsplit("/", 1)[-1].removeprefix("x-")
    if shutil.which("sox"):
        command = ["sox", "-t", kind, "-", "-t", "wav", "-r", "16000", "-c", "1", "-b", "16", "-"]
    elif shutil.which("ffmpeg"):
        command = ["ffmpeg", "-loglevel", "error", "-i", "pipe:0"]
        command += ["-ac", "1", "-ar", "16000", "-f", "wav", "pipe:1"]
    else:
        raise Unavailable(
            f"cannot convert {mime_type}: send 16 kHz mono PCM or WAV, or install sox or ffmpeg"
        )
    try:
        result = subprocess.run(
            command, input=audio, capture_output=True, timeout=_CONVERT_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        raise Unavailable(f"converting {mime_type} with {command[0]} timed out") from None
    if result.returncode != 0:
        detail = result.stderr.decode(errors="replace").strip()[-300:]
        raise InvalidParams(f"{command[0]} could not convert {mime_type}: {detail}")
    return result.stdout
