"""The ``speech.*``, ``dictation.*`` and ``voice.*`` RPC methods: wire models in, the
service, models out (the voice group is in :mod:`paseo.speech.voice_rpc`).

Audio travels base64-encoded in JSON. Dictation notifications (``dictation.partial``,
``dictation.final``, ``dictation.error``) go to the connection that made the dictation's
latest call, numbered on that connection's ``dictation`` stream.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup

from paseo.speech.models import (
    DictationAck,
    DictationCancelResult,
    DictationChunkParams,
    DictationErrorEvent,
    DictationFinal,
    DictationFinalEvent,
    DictationFinishParams,
    DictationIdParams,
    DictationPartialEvent,
    DictationStartParams,
    DictationState,
    EngineInfo,
    SpeechEnginesResult,
    SynthesizeParams,
    SynthesizeResult,
    TranscribeParams,
    TranscribeResult,
)
from paseo.speech.voice_rpc import voice_group, voice_notifications

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext
    from pydantic import BaseModel

    from paseo.services import ServiceRef
    from paseo.speech.dictation import Dictation
    from paseo.speech.service import SpeechService


def _decode(text: str, field: str = "audio") -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidParams(f"{field} is not valid base64") from None


def _state(dictation: Dictation) -> DictationState:
    return DictationState(
        dictationId=dictation.id,
        state=dictation.state,
        ackedSeq=dictation.acked_seq,
        mimeType=dictation.mime_type,
        engine=dictation.engine_name,
    )


def method_groups(ref: ServiceRef[SpeechService]) -> list[RpcMethodGroup]:
    """The ``speech`` and ``dictation`` groups, reaching the service through ``ref``."""

    async def engines(ctx: RpcContext, params: None) -> SpeechEnginesResult:
        service = ref.get()
        installed = service.installed()
        return SpeechEnginesResult(
            stt=[EngineInfo(**item) for item in installed["stt"]],
            tts=[EngineInfo(**item) for item in installed["tts"]],
            sites=service.engines.sites(),
        )

    async def transcribe(ctx: RpcContext, params: TranscribeParams) -> TranscribeResult:
        text, engine = await ref.get().transcribe(
            _decode(params.audio),
            mime_type=params.mimeType,
            language=params.language,
            site=params.site,
            engine=params.engine,
        )
        return TranscribeResult(text=text, engine=engine)

    async def synthesize(ctx: RpcContext, params: SynthesizeParams) -> SynthesizeResult:
        audio, mime, engine = await ref.get().synthesize(
            params.text, voice=params.voice, engine=params.engine
        )
        return SynthesizeResult(
            audio=base64.b64encode(audio).decode("ascii"), mimeType=mime, engine=engine
        )

    async def start(ctx: RpcContext, params: DictationStartParams) -> DictationState:
        dictation = await ref.get().dictation_start(
            mime_type=params.mimeType,
            language=params.language,
            resume=params.dictationId,
            notify=ctx.notify,
            partials=params.partials,
        )
        return _state(dictation)

    async def chunk(ctx: RpcContext, params: DictationChunkParams) -> DictationAck:
        dictation, stored = await ref.get().dictation_chunk(
            params.dictationId, params.seq, _decode(params.audio), ctx.notify
        )
        return DictationAck(
            dictationId=dictation.id, ackedSeq=dictation.acked_seq, duplicate=not stored
        )

    async def finish(ctx: RpcContext, params: DictationFinishParams) -> DictationFinal:
        dictation, text = await ref.get().dictation_finish(
            params.dictationId, params.lastSeq, ctx.notify
        )
        return DictationFinal(
            dictationId=dictation.id,
            text=text,
            ackedSeq=dictation.acked_seq,
            engine=dictation.engine_name,
        )

    async def cancel(ctx: RpcContext, params: DictationIdParams) -> DictationCancelResult:
        canceled = await ref.get().dictation_cancel(params.dictationId)
        return DictationCancelResult(dictationId=params.dictationId, canceled=canceled)

    return [
        RpcMethodGroup(
            "speech",
            [
                RpcMethod(
                    "speech.engines",
                    engines,
                    None,
                    SpeechEnginesResult,
                    summary="Installed speech engines and the one each use site uses",
                ),
                RpcMethod(
                    "speech.transcribe",
                    transcribe,
                    TranscribeParams,
                    TranscribeResult,
                    summary="Transcribe one audio file with a site's speech-to-text engine",
                ),
                RpcMethod(
                    "speech.synthesize",
                    synthesize,
                    SynthesizeParams,
                    SynthesizeResult,
                    summary="Speak text with the voice-mode text-to-speech engine",
                ),
            ],
        ),
        RpcMethodGroup(
            "dictation",
            [
                RpcMethod(
                    "dictation.start",
                    start,
                    DictationStartParams,
                    DictationState,
                    summary="Start a dictation, or resume one by id after a reconnect",
                ),
                RpcMethod(
                    "dictation.chunk",
                    chunk,
                    DictationChunkParams,
                    DictationAck,
                    summary="Add chunk seq of a dictation's audio; answered with the ack",
                ),
                RpcMethod(
                    "dictation.finish",
                    finish,
                    DictationFinishParams,
                    DictationFinal,
                    summary="End a dictation's audio and return the final transcript",
                ),
                RpcMethod(
                    "dictation.cancel",
                    cancel,
                    DictationIdParams,
                    DictationCancelResult,
                    summary="Drop a dictation and its audio",
                ),
            ],
        ),
        voice_group(ref),
    ]


def notifications() -> dict[str, type[BaseModel]]:
    """The dictation notifications (method -> params model), for the protocol schema."""
    return {
        "dictation.partial": DictationPartialEvent,
        "dictation.final": DictationFinalEvent,
        "dictation.error": DictationErrorEvent,
        **voice_notifications(),
    }


__all__: list[str] = ["method_groups", "notifications"]
