"""Audio made whole for engines (kernel) and converted to 16 kHz mono (local engine)."""

from __future__ import annotations

import array
import io
import struct
import wave

import pytest
from paseo_hookspecs.errors import InvalidParams
from paseo_speech_local.audio import to_pcm16k

from paseo.speech.audio import check_format, normalize, pcm_to_wav, repair_wav


def _read(data: bytes) -> tuple[int, int, int, bytes]:
    with wave.open(io.BytesIO(data)) as reader:
        frames = reader.readframes(reader.getnframes())
        return reader.getframerate(), reader.getnchannels(), reader.getsampwidth(), frames


def test_raw_pcm_is_wrapped_with_its_rate_and_channels() -> None:
    pcm = bytes(range(200)) * 4
    audio, mime = normalize(pcm, "audio/pcm;rate=8000;channels=2")
    assert mime == "audio/wav"
    assert _read(audio) == (8000, 2, 2, pcm)


def test_pcm_defaults_to_16k_mono() -> None:
    assert _read(normalize(b"\x01\x00" * 10, "audio/L16")[0])[:2] == (16000, 1)


def test_streamed_wav_with_placeholder_sizes_is_repaired() -> None:
    good = pcm_to_wav(b"\x05\x00" * 1000, rate=22050)
    # What espeak-ng --stdout and recorders write: sizes unknown when the header went out.
    streamed = good[:4] + struct.pack("<I", 0x7FFFFFFF) + good[8:40] + b"\xff\xff\xff\x7f"
    streamed += good[44:]
    assert _read(repair_wav(streamed)) == (22050, 1, 2, b"\x05\x00" * 1000)


def test_truncated_wav_keeps_whole_frames() -> None:
    good = pcm_to_wav(b"\x01\x02\x03\x04" * 100, channels=2)
    assert _read(repair_wav(good[:-3]))[3] == b"\x01\x02\x03\x04" * 99


def test_other_containers_pass_through() -> None:
    assert normalize(b"OggS...", "audio/ogg") == (b"OggS...", "audio/ogg")


@pytest.mark.parametrize("data", [b"", b"RIFF", b"not a wav at all"])
def test_garbage_wav_is_invalid(data: bytes) -> None:
    with pytest.raises(InvalidParams):
        repair_wav(data)


@pytest.mark.parametrize("mime", ["text/plain", "audio/pcm;rate=fast"])
def test_bad_formats_are_refused(mime: str) -> None:
    with pytest.raises(InvalidParams):
        check_format(mime)


def test_local_converter_resamples_and_downmixes() -> None:
    # One second of 44.1 kHz stereo: left 1000, right 3000.
    stereo = array.array("h", [1000, 3000] * 44100).tobytes()
    wav = pcm_to_wav(stereo, rate=44100, channels=2)
    out = array.array("h")
    out.frombytes(to_pcm16k(wav, "audio/wav"))
    assert len(out) == 16000
    assert set(out) == {2000}


def test_local_converter_reads_8_bit_wav() -> None:
    wav = pcm_to_wav(bytes([128 + 10] * 16000), width=1)
    out = array.array("h")
    out.frombytes(to_pcm16k(wav, "audio/wav"))
    assert set(out) == {10 << 8}


def test_local_converter_passes_16k_pcm_through() -> None:
    pcm = array.array("h", range(-500, 500)).tobytes()
    assert to_pcm16k(pcm, "audio/pcm") == pcm
