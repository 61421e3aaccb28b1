"""The voice room's pushes: the daemon's ``voice.*`` and ``dictation.*`` notifications as the
TypeScript messages the app reads, each frame valid for the outbound models."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from paseo_tswire.envelope import validate_outbound
from paseo_tswire.handlers import voice
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
