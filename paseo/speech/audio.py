"""Audio as the daemon receives it, made whole for an engine.

Clients send ``audio/wav`` or raw ``audio/pcm`` (signed 16-bit little-endian, ``rate=`` and
``channels=`` parameters, 16 kHz mono by default). Raw PCM is wrapped in a WAV container and a
WAV whose header sizes are wrong — a streamed one, as espeak-ng or a recorder writes it, or a
dictation cut short — gets a correct header, so every engine receives a complete WAV file.
Other containers pass through untouched: the engine decides (the OpenAI API takes mp3, ogg,
webm, …; the local engine converts them with sox or ffmpeg).
"""

from __future__ import annotations

import io
import struct
import wave

from paseo_hookspecs.errors import InvalidParams

WAV = "audio/wav"
_WAV_TYPES = frozenset({"audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"})
_PCM_TYPES = frozenset({"audio/pcm", "audio/l16", "audio/raw"})


def parse_mime(mime_type: str) -> tuple[str, dict[str, str]]:
    """``"audio/pcm;rate=8000"`` -> ``("audio/pcm", {"rate": "8000"})``."""
    base, *rest = (part.strip() for part in mime_type.split(";"))
    params: dict[str, str] = {}
    for item in rest:
        key, _, value = item.partition("=")
        if key:
            params[key.strip().lower()] = value.strip()
    return base.lower(), params


def check_format(mime_type: str) -> None:
    """Refuse what is not an audio MIME type, or raw PCM with unreadable parameters."""
    base, params = parse_mime(mime_type)
    if not base.startswith("audio/"):
        raise InvalidParams(f"not an audio format: {mime_type!r}")
    if base in _PCM_TYPES:
        try:
            int(params.get("rate", 16000)), int(params.get("channels", 1))
        except ValueError:
            raise InvalidParams(f"bad PCM parameters in {mime_type!r}") from None


def normalize(audio: bytes, mime_type: str) -> tuple[bytes, str]:
    """``(audio, mime type)`` ready for an engine (see the module docstring)."""
    base, params = parse_mime(mime_type)
    if base in _PCM_TYPES:
        try:
            rate = int(params.get("rate", 16000))
            channels = int(params.get("channels", 1))
        except ValueError:
            raise InvalidParams(f"bad PCM parameters in {mime_type!r}") from None
        return pcm_to_wav(audio, rate=rate, channels=channels), WAV
    if base in _WAV_TYPES:
        return repair_wav(audio), WAV
    return audio, mime_type


def pcm_to_wav(pcm: bytes, *, rate: int = 16000, channels: int = 1, width: int = 2) -> bytes:
    frame = channels * width
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(channels)
        writer.setsampwidth(width)
        writer.setframerate(rate)
        writer.writeframes(pcm[: len(pcm) - len(pcm) % frame])
    return buffer.getvalue()


def repair_wav(data: bytes) -> bytes:
    """``data`` (a PCM WAV, perhaps with wrong sizes or cut short) with a correct header."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise InvalidParams("not a WAV file (no RIFF/WAVE header)")
    offset = 12
    fmt: tuple[int, int, int, int] | None = None
    while offset + 8 <= len(data):
        kind = data[offset : offset + 4]
        (size,) = struct.unpack_from("<I", data, offset + 4)
        body = offset + 8
        if kind == b"fmt " and body + 16 <= len(data):
            tag, channels, rate = struct.unpack_from("<HHI", data, body)
            (bits,) = struct.unpack_from("<H", data, body + 14)
            fmt = (tag, channels, rate, bits)
        elif kind == b"data":
            if fmt is None:
                raise InvalidParams("WAV data before its fmt chunk")
            tag, channels, rate, bits = fmt
            if tag not in (1, 0xFFFE) or bits not in (8, 16, 24, 32):
                raise InvalidParams("only integer PCM WAV is supported")
            # A streamed WAV's size field is a placeholder: trust it only when it fits.
            end = body + size if body + size <= len(data) else len(data)
            return pcm_to_wav(data[body:end], rate=rate, channels=channels, width=bits // 8)
        offset = body + size + (size & 1)
    raise InvalidParams("WAV file without a data chunk")
