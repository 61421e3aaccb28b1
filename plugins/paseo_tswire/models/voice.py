"""Voice mode and dictation messages (``messages.ts``: ``SetVoiceModeMessageSchema``,
``VoiceAudioChunkMessageSchema``, ``Dictation*MessageSchema``, ``AudioOutputMessageSchema``,
``TranscriptionResultMessageSchema``, ``ServerCapabilitiesSchema``)."""

from __future__ import annotations

from pydantic import Field

from paseo_tswire.models.wire import Inbound, Wire

# --- inbound ----------------------------------------------------------------------------------


class SetVoiceMode(Inbound):
    enabled: bool
    agentId: str | None = None
    requestId: str | None = None


class VoiceAudioChunk(Inbound):
    audio: str
    format: str
    isLast: bool


class AbortRequest(Inbound):
    pass


class AudioPlayed(Inbound):
    id: str


class DictationStart(Inbound):
    dictationId: str
    format: str


class DictationChunk(Inbound):
    dictationId: str
    seq: int = Field(ge=0)
    audio: str
    format: str


class DictationFinish(Inbound):
    dictationId: str
    finalSeq: int = Field(ge=0)


class DictationCancel(Inbound):
    dictationId: str


# --- outbound ---------------------------------------------------------------------------------


class CapabilityState(Wire):
    enabled: bool
    reason: str


class VoiceCapabilities(Wire):
    dictation: CapabilityState
    voice: CapabilityState


class ServerCapabilities(Wire):
    """``server_info.capabilities``: ``voice`` is what makes the app show its voice controls
    (``app/src/utils/server-info-capabilities.ts``)."""

    voice: VoiceCapabilities


class SetVoiceModeReply(Wire):
    requestId: str
    enabled: bool
    agentId: str | None
    accepted: bool
    error: str | None
    reasonCode: str | None = None
    retryable: bool | None = None


class DictationAck(Wire):
    dictationId: str
    ackSeq: int


class DictationFinishAccepted(Wire):
    dictationId: str
    timeoutMs: int = Field(gt=0)


class DictationText(Wire):
    """``dictation_stream_partial`` and ``dictation_stream_final``."""

    dictationId: str
    text: str


class DictationError(Wire):
    dictationId: str
    error: str
    retryable: bool
    reasonCode: str | None = None


class AudioOutput(Wire):
    audio: str
    format: str
    id: str
    isVoiceMode: bool
    groupId: str | None = None
    chunkIndex: int | None = Field(default=None, ge=0)
    isLastChunk: bool | None = None


class TranscriptionResult(Wire):
    text: str
    requestId: str
    format: str | None = None
    byteLength: int | None = None


class VoiceInputState(Wire):
    isSpeaking: bool


VOICE_OUTBOUND: dict[str, type[Wire]] = {
    "set_voice_mode_response": SetVoiceModeReply,
    "dictation_stream_ack": DictationAck,
    "dictation_stream_finish_accepted": DictationFinishAccepted,
    "dictation_stream_partial": DictationText,
    "dictation_stream_final": DictationText,
    "dictation_stream_error": DictationError,
    "audio_output": AudioOutput,
    "transcription_result": TranscriptionResult,
    "voice_input_state": VoiceInputState,
}
