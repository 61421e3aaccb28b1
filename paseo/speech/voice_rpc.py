"""The ``voice.*`` RPC methods (voice mode, :mod:`paseo.speech.voice`) and notifications.

``voice.transcript``, ``voice.output`` and ``voice.error`` go to the connection that made the
session's latest call, numbered on that connection's ``voice`` stream. ``voice.speak`` is what
the MCP server's ``speak`` tool runs, as the agent that calls it.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup

from paseo.speech.models import (
    VoiceAbortResult,
    VoiceAudioAck,
    VoiceAudioParams,
    VoiceErrorEvent,
    VoiceIdParams,
    VoiceOutputEvent,
    VoiceSpeakParams,
    VoiceSpeakResult,
    VoiceStartParams,
    VoiceState,
    VoiceStopResult,
    VoiceTranscriptEvent,
)

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext
    from pydantic import BaseModel

    from paseo.services import ServiceRef
    from paseo.speech.service import SpeechService
    from paseo.speech.voice import VoiceSession


def _decode(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidParams("audio is not valid base64") from None


def _state(session: VoiceSession) -> VoiceState:
    return VoiceState(
        voiceId=session.id,
        agentId=session.agent_id,
        ackedSeq=session.acked_seq,
        mimeType=session.mime_type,
        utterances=session.utterances,
        speaking=session.speaking,
    )


def voice_group(ref: ServiceRef[SpeechService]) -> RpcMethodGroup:
    async def start(ctx: RpcContext, params: VoiceStartParams) -> VoiceState:
        service = ref.get()
        if (params.agentId is None) == (params.voiceId is None):
            raise InvalidParams("give agentId (a new voice session) or voiceId (resume one)")
        if params.voiceId is not None:
            session = await service.voice.get(params.voiceId)
            session.notify = ctx.notify
        else:
            session = await service.voice_start(
                str(params.agentId),
                mime_type=params.mimeType,
                instructions=params.instructions,
                silence_ms=params.silenceMs,
                notify=ctx.notify,
            )
        return _state(session)

    async def audio(ctx: RpcContext, params: VoiceAudioParams) -> VoiceAudioAck:
        session = await ref.get().voice.get(params.voiceId)
        session.notify = ctx.notify
        stored = session.add(params.seq, _decode(params.audio), end_of_turn=params.endOfTurn)
        if stored:
            await session.caught_up()
        return VoiceAudioAck(
            voiceId=session.id,
            ackedSeq=session.acked_seq,
            duplicate=not stored,
            speaking=session.speaking,
            utterances=session.utterances,
        )

    async def stop(ctx: RpcContext, params: VoiceIdParams) -> VoiceStopResult:
        stopped = await ref.get().voice.stop(params.voiceId)
        return VoiceStopResult(voiceId=params.voiceId, stopped=stopped)

    async def abort(ctx: RpcContext, params: VoiceIdParams) -> VoiceAbortResult:
        session = await ref.get().voice.get(params.voiceId)
        session.notify = ctx.notify
        canceled, interrupted = await session.abort()
        return VoiceAbortResult(
            voiceId=session.id, speechCanceled=canceled, turnInterrupted=interrupted
        )

    async def speak(ctx: RpcContext, params: VoiceSpeakParams) -> VoiceSpeakResult:
        session, (speech_id, chunks, mime) = await ref.get().voice.speak(
            params.agentId, params.text
        )
        return VoiceSpeakResult(
            voiceId=session.id, speechId=speech_id, chunks=chunks, mimeType=mime
        )

    return RpcMethodGroup(
        "voice",
        [
            RpcMethod(
                "voice.start",
                start,
                VoiceStartParams,
                VoiceState,
                summary="Attach voice mode to an agent, or resume a voice session by id",
            ),
            RpcMethod(
                "voice.audio",
                audio,
                VoiceAudioParams,
                VoiceAudioAck,
                summary="Add chunk seq of the microphone's audio; answered with the ack",
            ),
            RpcMethod(
                "voice.stop",
                stop,
                VoiceIdParams,
                VoiceStopResult,
                summary="Detach voice mode (the agent is no longer offered speak)",
            ),
            RpcMethod(
                "voice.abort",
                abort,
                VoiceIdParams,
                VoiceAbortResult,
                summary="Cut off the speech and interrupt the agent's turn",
            ),
            RpcMethod(
                "voice.speak",
                speak,
                VoiceSpeakParams,
                VoiceSpeakResult,
                summary="Say text to the agent's voice session (the MCP speak tool)",
            ),
        ],
    )


def voice_notifications() -> dict[str, type[BaseModel]]:
    return {
        "voice.transcript": VoiceTranscriptEvent,
        "voice.output": VoiceOutputEvent,
        "voice.error": VoiceErrorEvent,
    }
