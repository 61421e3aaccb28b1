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
    unavailable: str | None = Field(
        None,
        description="set when the extra the engine needs is not installed: why, and the "
        "command that installs it (pip install 'paseo[speech]')",
    )


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


# --- voice mode ---------------------------------------------------------------------------------

VOICE_MIME_HELP = (
    "raw signed 16-bit little-endian PCM: audio/pcm;rate=16000;channels=1 (any rate and channel "
    "count; the daemon converts to 16 kHz mono for turn detection)"
)


class VoiceStartParams(WireModel):
    agentId: str | None = Field(
        default=None, description="the agent to talk to (id, prefix or title); not with voiceId"
    )
    voiceId: str | None = Field(
        default=None, description="resume this voice session (after a reconnect) instead"
    )
    mimeType: str = Field(default="audio/pcm;rate=16000;channels=1", description=VOICE_MIME_HELP)
    instructions: str | None = Field(
        default=None,
        max_length=4000,
        description="what follows each transcribed utterance in the agent's prompt "
        "(default: answer through the speak tool)",
    )
    silenceMs: int = Field(
        default=800, ge=90, le=10000, description="silence that ends an utterance"
    )


class VoiceState(WireModel):
    voiceId: str
    agentId: str
    ackedSeq: int = Field(description="highest audio chunk stored (0: none)")
    mimeType: str
    utterances: int = Field(description="utterances heard so far")
    speaking: bool = Field(description="an utterance is in progress")


class VoiceAudioParams(WireModel):
    voiceId: str
    seq: int = Field(ge=1, description="1, 2, 3 …; a chunk at or below ackedSeq is ignored")
    audio: str = Field(description="the chunk's PCM, base64 (may be empty with endOfTurn)")
    endOfTurn: bool = Field(
        default=False, description="the speaker is done (push-to-talk released, file ended)"
    )


class VoiceAudioAck(WireModel):
    voiceId: str
    ackedSeq: int
    duplicate: bool
    speaking: bool = Field(description="an utterance is in progress after this chunk")
    utterances: int = Field(description="utterances heard so far (each gets voice.transcript)")


class VoiceIdParams(WireModel):
    voiceId: str


class VoiceStopResult(WireModel):
    voiceId: str
    stopped: bool


class VoiceAbortResult(WireModel):
    voiceId: str
    speechCanceled: int = Field(description="speeches cut off (being synthesized or streamed)")
    turnInterrupted: bool = Field(description="the agent's running turn was interrupted")


class VoiceSpeakParams(WireModel):
    agentId: str = Field(description="the agent speaking (the MCP caller itself)")
    text: str = Field(min_length=1, max_length=4000)


class VoiceSpeakResult(WireModel):
    voiceId: str
    speechId: str
    chunks: int = Field(description="voice.output notifications sent")
    mimeType: str


class VoiceTranscriptEvent(StreamEvent):
    voiceId: str
    utterance: int = Field(description="1, 2, 3 … in the order spoken")
    text: str
    prompted: bool = Field(description="the text was sent to the agent (false: heard nothing)")


class VoiceOutputEvent(StreamEvent):
    voiceId: str
    speechId: str = Field(description="one speak call")
    seq: int = Field(description="1, 2, 3 … within the speech")
    final: bool = Field(description="the speech's last piece")
    mimeType: str = Field(description="audio/pcm;rate=…;channels=… (or the engine's container)")
    audio: str = Field(description="the piece, base64")
    text: str | None = Field(default=None, description="what is said (on the first piece)")


class VoiceErrorEvent(StreamEvent):
    voiceId: str
    code: str
    message: str
