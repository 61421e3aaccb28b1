"""The voice room's pushes: the daemon's ``voice.*`` and ``dictation.*`` notifications as the
TypeScript messages the app reads, each frame valid for the outbound models."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from paseo_tswire.connection import ClientSession
from paseo_tswire.envelope import validate_outbound
from paseo_tswire.handlers import voice
from paseo_tswire.models import voice as vm
from unit.tswire.harness import client_session


def _pushes(notifications: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        session = client_session()
        sent: list[str | bytes] = []

        async def send(frame: str | bytes) -> None:
            sent.append(frame)

        async def close() -> None:
            return None

        session.attach(send, close)
        try:
            room = voice.room(session)
            assert voice.room(session) is room  # one room per session, one listener
            assert session.listeners == [room.on_notification]
            room.voice_id = "vc_1"
            room.dictations["theirs"] = voice._Dictation("dct_ours")
            room.by_ours["dct_ours"] = "theirs"
            for method, params in notifications:
                await session.listeners[0](method, params)
            await session.flush(2.0)
        finally:
            await session.aclose()
        frames = [json.loads(f) for f in sent if isinstance(f, str)]
        for frame in frames:
            validate_outbound(frame)
        return [f["message"] for f in frames]

    return asyncio.run(run())


def test_speech_transcripts_and_dictation_partials_become_typescript_messages() -> None:
    messages = _pushes(
        [
            (
                "voice.transcript",
                {"voiceId": "vc_1", "utterance": 2, "text": "hi", "prompted": True},
            ),
            (
                "voice.output",
                {
                    "voiceId": "vc_1",
                    "speechId": "sp_1",
                    "seq": 1,
                    "final": True,
                    "mimeType": "audio/pcm;rate=22050;channels=1",
                    "audio": "AAAA",
                },
            ),
            ("voice.output", {"voiceId": "vc_other", "speechId": "sp_2", "seq": 1, "audio": ""}),
            ("dictation.partial", {"dictationId": "dct_ours", "text": "close the", "ackedSeq": 3}),
            ("dictation.partial", {"dictationId": "dct_unknown", "text": "x", "ackedSeq": 1}),
            ("dictation.error", {"dictationId": "dct_ours", "code": "unavailable", "message": "m"}),
        ]
    )
    assert messages == [
        {"type": "transcription_result", "payload": {"text": "hi", "requestId": "vc_1:2"}},
        {
            "type": "audio_output",
            "payload": {
                "audio": "AAAA",
                "format": "audio/pcm;rate=22050;channels=1",
                "id": "sp_1:1",
                "isVoiceMode": True,
                "groupId": "sp_1",
                "chunkIndex": 0,
                "isLastChunk": True,
            },
        },
        {
            "type": "dictation_stream_partial",
            "payload": {"dictationId": "theirs", "text": "close the"},
        },
        {
            "type": "dictation_stream_error",
            "payload": {
                "dictationId": "theirs",
                "error": "m",
                "retryable": True,
                "reasonCode": "unavailable",
            },
        },
    ]


def test_audio_past_the_session_bound_ends_the_dictation_without_reaching_the_daemon() -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    class Recording(ClientSession):
        async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
            calls.append((method, params or {}))
            return {}

    async def run() -> list[dict[str, Any]]:
        session = client_session(Recording)
        sent: list[str | bytes] = []

        async def send(frame: str | bytes) -> None:
            sent.append(frame)

        async def close() -> None:
            return None

        session.attach(send, close)
        try:
            room = voice.room(session)
            room.dictations["d1"] = voice._Dictation("dct_1", size=voice.MAX_SESSION_AUDIO_BYTES)
            room.by_ours["dct_1"] = "d1"
            chunk = vm.DictationChunk(dictationId="d1", seq=7, audio="AAAA", format="audio/pcm")
            await voice.dictation_chunk(session, chunk)
            await session.flush(2.0)
            assert "d1" not in room.dictations
        finally:
            await session.aclose()
        return [json.loads(f)["message"] for f in sent if isinstance(f, str)]

    messages = asyncio.run(run())
    assert calls == [("dictation.cancel", {"dictationId": "dct_1"})]
    assert [m["type"] for m in messages] == ["dictation_stream_error"]
    assert messages[0]["payload"]["reasonCode"] == "audio_too_large"
    assert messages[0]["payload"]["retryable"] is False
