"""The contract's :class:`~paseo_hookspecs.voice.VoiceOutput` over the voice sessions: whether
voice mode is attached to an agent, and speaking to its person."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paseo_hookspecs.voice import Spoken

if TYPE_CHECKING:
    from paseo.speech.voice import VoiceSessions


class KernelVoice:
    def __init__(self, sessions: VoiceSessions) -> None:
        self._sessions = sessions

    def attached(self, agent_id: str) -> bool:
        return self._sessions.attached(agent_id)

    async def speak(self, agent_id: str, text: str) -> Spoken:
        session, (speech_id, chunks, mime) = await self._sessions.speak(agent_id, text)
        return Spoken(voiceId=session.id, speechId=speech_id, chunks=chunks, mimeType=mime)
