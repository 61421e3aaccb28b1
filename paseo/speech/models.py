"""Wire models of the ``speech.*`` and ``dictation.*`` methods and notifications."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from paseo.rpc.models import StreamEvent, WireModel

SttSiteName = Literal["dictation", "voiceMode"]

AUDIO_FORMATS_HELP = (
    "a MIME type: audio/wav (any PCM WAV; 16 kHz mono needs no conversion), "
    "audio/pcm;rate=16000;channels=1 (raw signed 16-bit little-endian), or another "
    "container the engine accepts (the local engine converts it with sox or ffmpeg)"
)


class EngineInfo(WireModel):
    name: str
    distribution: str | None = None
    builtin: bool


class SpeechEnginesResult(WireModel):
    stt: list[EngineInfo] = Field(description="installed speech-to-text drivers")
    tts: list[EngineInfo] = Field(description="installed text-to-speech drivers")
    sites: dict[str, str] = Field(description="use site (config path) -> engine it uses now")


class TranscribeParams(WireModel):
    audio: str = Field(description="the audio, base64")
    mimeType: str = Field(default="audio/wav", description=AUDIO_FORMATS_HELP)
    language: str | None = Field(default=None, description="overrides the site's language")
    site: SttSiteName = Field(default="dictation", description="whose STT settings to use")
    engine: str | None = Field(
        default=None, description="a driver name instead of the site's provider"
    )


class TranscribeResult(WireModel):
    text: str
    engine: str


class SynthesizeParams(WireModel):
    text: str = Field(min_length=1)
    voice: str | None = None
    engine: str | None = Field(
        default=None, description="a driver name instead of features.voiceMode.tts.provider"
    )


class SynthesizeResult(WireModel):
    audio: str = Field(description="the audio, base64")
    mimeType: str
    engine: str


class DictationStartParams(WireModel):
    dictationId: str | None = Field(
        default=None, description="resume this dictation (after a reconnect) instead of starting"
    )
    mimeType: str = Field(default="audio/pcm;rate=16000;channels=1", description=AUDIO_FORMATS_HELP)
    language: str | None = None
    partials: bool = Field(default=True, description="send dictation.partial while audio arrives")


class DictationState(WireModel):
    dictationId: str
    state: Literal["open", "finishing", "finished"]
    ackedSeq: int = Field(
        description="highest chunk seq stored (0: none); a resuming client sends ackedSeq + 1 next"
    )
    mimeType: str
    engine: str


class DictationChunkParams(WireModel):
    dictationId: str
    seq: int = Field(ge=1, description="1, 2, 3 …; a chunk at or below ackedSeq is ignored")
    audio: str = Field(description="the chunk's bytes, base64")


class DictationAck(WireModel):
    dictationId: str
    ackedSeq: int
    duplicate: bool = Field(description="the chunk had been stored already")


class DictationFinishParams(WireModel):
    dictationId: str
    lastSeq: int | None = Field(
        default=None, description="the client's last chunk; refused if the daemon lacks some"
    )


class DictationFinal(WireModel):
    dictationId: str
    text: str
    ackedSeq: int
    engine: str


class DictationIdParams(WireModel):
    dictationId: str


class DictationCancelResult(WireModel):
    dictationId: str
    canceled: bool


class DictationPartialEvent(StreamEvent):
    dictationId: str
    text: str
    ackedSeq: int = Field(description="the audio the partial covers: chunks 1..ackedSeq")


class DictationFinalEvent(StreamEvent):
    dictationId: str
    text: str
    ackedSeq: int


class DictationErrorEvent(StreamEvent):
    dictationId: str
    code: str
    message: str
